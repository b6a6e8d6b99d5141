//! anvil's core: structured AI debates inside Claude Code, every phase recorded in git.
//!
//! The folders are the architecture, each depending only on those listed before it:
//!
//! - [`record`]: the git repository under `.anvil/record` (the store, the commit schema, packing);
//! - [`agent`]: other agent CLIs (Claude Code, Codex, …), one file each: how a
//!   headless, read-only turn of each runs and what it left;
//! - [`home`]: `.anvil/` in a project (live files, session bindings, the steering queue, locks);
//! - [`model`]: the debate as data and a pure state machine (state, options, prompts, markers);
//! - [`review`]: reading the record back (history, revisions, compare, report, context);
//! - [`line`]: every change to a line, each one transaction under the line's lock;
//! - [`seat`]: a role played by another agent: a line's seats played, recorded, taken over;
//! - [`claude`]: Claude Code's side (the hook protocol, the hooks, slash commands, install);
//! - [`doctor`]: `anvil doctor`'s checks of the installation and of the record.
//!
//! Beneath them, the ground floor any of them uses: [`clock`], [`fault`], [`fsutil`] and
//! [`term`] (text on its way to a terminal, made harmless).
//!
//! The `anvil` and `anvil-hook` binaries are thin shells over this library; the hook binary
//! links nothing else.

pub mod agent;
pub mod clock;
pub mod doctor;
pub mod error;
pub mod fault;
pub mod fsutil;
pub mod home;
pub mod launcher;
pub mod term;
#[cfg(test)]
mod testkit;

pub mod claude;
pub mod line;
pub mod model;
pub mod record;
pub mod review;
pub mod seat;
