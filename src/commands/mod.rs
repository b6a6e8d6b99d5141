//! One module per subcommand: its `Args` (the `--help` text) and its `run`.

pub mod adr;
pub mod ask;
pub mod branch;
pub mod cancel;
pub mod completions;
pub mod diff;
pub mod doctor;
pub mod gc;
pub mod hook;
pub mod init;
pub mod install;
pub mod log;
pub mod mcp;
pub mod prompts;
pub mod push;
pub mod replay;
pub mod report;
pub mod resume;
pub mod run;
pub mod search;
pub mod seats;
pub mod show;
pub mod slash;
pub mod start;
pub mod status;
pub mod steer;
