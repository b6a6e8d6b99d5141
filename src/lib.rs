//! anvil: structured AI debates inside Claude Code, every phase recorded in git.
//!
//! The core is a pure state machine ([`machine`]) over a line's state ([`state`]); files, git
//! and Claude Code's hook protocol are adapters around it ([`home`], [`record`], [`hook`]).
//! [`debate`] carries out what the machine decides. The binary in `src/main.rs` and `src/cli/`
//! is a thin shell over this library.

pub mod ask;
pub mod compare;
pub mod config;
pub mod context;
pub mod debate;
pub mod feedback;
pub mod fsutil;
pub mod graph;
pub mod history;
pub mod home;
pub mod hook;
pub mod install;
pub mod machine;
pub mod markers;
pub mod options;
pub mod prompt;
pub mod record;
pub mod report;
pub mod restore;
pub mod revision;
pub mod state;
pub mod transcript;
