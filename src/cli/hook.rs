//! `anvil hook …`: the entry points Claude Code calls (installed by `anvil install`).

use std::io::Read;
use std::path::Path;

use anvil::hook::Answer;

use super::{CliError, Ctx, out};

/// Claude Code hooks; `anvil install` wires them into .claude/settings.json.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Claude Code's Stop hook: record the phase that just ended and hand out the next one.
    ///
    /// Reads the hook's JSON on stdin and prints only the hook's JSON answer on stdout.
    Stop,
    /// Claude Code's SessionStart hook: after a compaction or /clear, the next phase's prompt
    /// brings the session up to date in full.
    SessionStart,
}

/// `anvil hook stop` / `anvil hook session-start` exactly, recognised without clap.
pub fn fast_path() -> Option<Command> {
    let mut args = std::env::args_os().skip(1);
    let (Some(first), Some(second), None) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    if first != "hook" {
        return None;
    }
    match second.to_str()? {
        "stop" => Some(Command::Stop),
        "session-start" => Some(Command::SessionStart),
        _ => None,
    }
}

pub fn run(ctx: &Ctx, command: Command) -> Result<(), CliError> {
    match command {
        Command::Stop => answer(ctx, anvil::hook::stop),
        Command::SessionStart => answer(ctx, anvil::hook::session_start),
    }
}

/// Runs one hook handler on stdin. Whatever happens, the exit is 0 and stdout carries only the
/// hook's JSON: a failing hook must not break the user's session.
fn answer(ctx: &Ctx, handler: fn(&[u8], &Path) -> Answer) -> Result<(), CliError> {
    // Sized for a long turn's text at once: growing from empty costs a read call per doubling.
    let mut input = Vec::with_capacity(64 * 1024);
    let answer = match std::io::stdin().read_to_end(&mut input) {
        Ok(_) => std::panic::catch_unwind(|| handler(&input, &ctx.cwd)).unwrap_or_else(|_| {
            Answer::Message(
                "anvil: the hook failed unexpectedly (a bug; please report it). \
                 Every phase received so far is on disk: see `anvil status`."
                    .into(),
            )
        }),
        Err(e) => Answer::Message(format!("anvil: cannot read hook input: {e}")),
    };
    if let Some(json) = answer.to_json() {
        out(&format!("{json}\n"))?;
    }
    Ok(())
}
