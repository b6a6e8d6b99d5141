//! anvil: structured AI debates inside Claude Code, every phase recorded in git.
//!
//! The core is a pure state machine ([`machine`]) over a line's state ([`state`]); files, git
//! and Claude Code's hook protocol are adapters around it ([`home`], [`record`], [`hook`]).
//! [`debate`] carries out what the machine decides, every change to a line going through
//! [`transaction`]; [`commit`] is what each commit says about itself. The binary in `src/main.rs` and `src/cli/`
//! is a thin shell over this library.

pub mod active;
pub mod ask;
pub mod commit;
pub mod compare;
pub mod config;
pub mod context;
pub mod debate;
pub mod delta;
pub mod doctor;
pub mod earlier;
pub mod fault;
pub mod feedback;
pub mod fsutil;
pub mod graph;
pub mod headless;
pub mod history;
pub mod home;
pub mod hook;
pub mod hook_process;
pub mod install;
pub mod machine;
pub mod maintenance;
pub mod markers;
pub mod options;
pub mod prompt;
pub mod provenance;
pub mod recent;
pub mod record;
pub mod remote;
pub mod report;
pub mod restore;
pub mod revision;
pub mod slash;
pub mod state;
pub mod term;
#[cfg(test)]
mod testkit;
pub mod transaction;
pub mod transcript;
