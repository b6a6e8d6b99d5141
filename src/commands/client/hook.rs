//! `anvil hook …`: the hooks Claude Code calls, as subcommands of `anvil`.
//!
//! `anvil install` wires the small `anvil-hook` binary instead; these stay so that settings
//! written by older versions (`anvil hook stop`) keep working. Both run the same library code.

use crate::ctx::Ctx;
use crate::error::CliError;

/// Claude Code hooks (`anvil install` wires `anvil-hook`, which runs the same code).
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Claude Code's Stop hook: record the phase that just ended and hand out the next one.
    ///
    /// Reads the hook's JSON on stdin and prints only the hook's JSON answer on stdout.
    Stop,
    /// Claude Code's SessionStart hook: after a compaction or /clear, the next phase's prompt
    /// brings the session up to date in full.
    SessionStart,
    /// Claude Code's UserPromptExpansion hook: hands the arguments of /anvil, /anvil-steer and
    /// /anvil-cancel to the command, untouched by any shell.
    PromptExpansion,
}

impl Command {
    fn word(&self) -> &'static str {
        match self {
            Command::Stop => "stop",
            Command::SessionStart => "session-start",
            Command::PromptExpansion => "prompt-expansion",
        }
    }
}

/// `anvil hook WORD` exactly, recognised without clap: building the whole command line costs
/// more than everything an idle hook does.
pub fn fast_path() -> Option<anvil_core::claude::process::Handler> {
    let mut args = std::env::args_os().skip(1);
    let (Some(first), Some(second), None) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    if first != "hook" {
        return None;
    }
    anvil_core::claude::process::handler(second.to_str()?)
}

pub fn run(_ctx: &Ctx, command: Command) -> Result<(), CliError> {
    let handler = anvil_core::claude::process::handler(command.word())
        .expect("every hook subcommand has a handler");
    anvil_core::claude::process::run(handler);
    Ok(())
}
