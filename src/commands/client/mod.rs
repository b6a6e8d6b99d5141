//! What Claude Code runs: the hooks, the MCP server and the slash commands.

pub mod hook;
pub mod mcp;
pub mod slash;
