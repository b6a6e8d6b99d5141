//! anvil: structured AI debates inside Claude Code, every phase recorded in git.
//!
//! The core is a pure state machine ([`machine`]) over a line's state ([`state`]); files, git
//! and Claude Code's hook protocol are adapters around it. The binary in `src/main.rs` and
//! `src/cli/` is a thin shell over this library.

pub mod fsutil;
pub mod machine;
pub mod markers;
pub mod state;
