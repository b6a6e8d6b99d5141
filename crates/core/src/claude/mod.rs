//! Claude Code's side: the hooks it runs (and the seats its Stop hook plays), the slash
//! commands, feedback to its sessions, and what `anvil install` writes into its settings.

pub mod client;
pub mod feedback;
pub mod hooks;
pub mod install;
pub mod process;
pub mod protocol;
pub mod session_log;
pub(crate) mod signals;
pub mod slash;
