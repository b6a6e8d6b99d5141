//! anvil's core: structured AI debates inside Claude Code, every phase recorded in git.
//!
//! The folders are the architecture, each depending only on those listed before it:
//!
//! - [`record`]: the git repository under `.anvil/record` (the store, the commit schema, packing);
//! - [`home`]: `.anvil/` in a project (live files, session bindings, the steering queue, locks);
//! - [`model`]: the debate as data and a pure state machine (state, options, prompts, markers);
//! - [`review`]: reading the record back (history, revisions, compare, report, context);
//! - [`line`]: every change to a line, each one transaction under the line's lock;
//! - [`claude`]: Claude Code's side (the hook protocol, the hooks, slash commands, install);
//! - [`doctor`]: `anvil doctor`'s checks of the installation and of the record;
//! - [`seat`]: other agents (Claude Code, Codex, Copilot, Qwen Code) playing a role headless.
//!
//! Beside them, the ground floor every layer uses: [`clock`], [`fault`], [`fsutil`], [`error`],
//! and [`term`] (text on its way to a terminal, made harmless).
//!
//! The `anvil` and `anvil-hook` binaries are thin shells over this library; the hook binary
//! links nothing else.

pub mod clock;
pub mod doctor;
pub mod error;
pub mod fault;
pub mod fsutil;
pub mod home;
pub mod term;
#[cfg(test)]
mod testkit;

pub mod claude;
pub mod line;
pub mod model;
pub mod record;
pub mod review;
pub mod seat;
