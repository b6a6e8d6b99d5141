//! One module per subcommand (its `Args`, the `--help` text, and its `run`), in four rooms by
//! what a person does with it: `debate/` runs and steers a debate, `review/` reads the record,
//! `project/` looks after the project around it, `client/` is what Claude Code runs. Each is
//! named here too, so a command is `commands::NAME` wherever it is used.

mod client;
mod debate;
mod project;
mod review;

pub use client::{hook, mcp, slash};
pub use debate::{ask, branch, cancel, resume, run, seats, start, status, steer};
pub use project::{completions, doctor, gc, init, install, prompts, push};
pub use review::{adr, diff, log, replay, report, search, show};
