//! A team's memory of its decisions, read back from the record: the full-text index every
//! search, the MCP server and the web room use, and the earlier conclusions a new debate is
//! given. Both live in the command line's binary only; the Stop hook never links them.

pub mod index;
pub mod recall;
