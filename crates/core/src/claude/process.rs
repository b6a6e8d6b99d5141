//! A hook as a whole process: hook JSON on stdin, one handler, the answer on stdout.
//!
//! Shared by the small `anvil-hook` binary (what `anvil install` wires) and by `anvil hook …`
//! (kept for installations made before `anvil-hook` existed). Whatever happens, the process
//! exits 0 and stdout carries nothing but the hook's JSON: a failing hook must not break the
//! user's session.

use std::io::{Read, Write};
use std::path::Path;

use crate::claude::protocol::HookOutput;

/// What one hook does with its input: the raw stdin and the process's directory.
pub type Handler = fn(&[u8], &Path) -> HookOutput;

/// The hooks Claude Code calls, by the word that names them on the command line
/// (`anvil-hook WORD`, `anvil hook WORD`).
pub fn handler(word: &str) -> Option<Handler> {
    match word {
        "stop" => Some(crate::claude::hooks::stop),
        "session-start" => Some(crate::claude::hooks::session_start),
        "prompt-expansion" => Some(crate::claude::slash::prompt_expansion),
        _ => None,
    }
}

/// Runs `handler` on this process's stdin and prints its answer. A closed stdout (Claude Code
/// gave up waiting) is not an error worth reporting.
pub fn run(handler: Handler) {
    if std::env::var_os(crate::agent::SEAT_VAR).is_some() {
        // A seat's own session (Claude Code playing one role for `anvil run`): anvil's hooks,
        // if the project has them, drive no debate there.
        return;
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    // Sized for a long turn's text at once: growing from empty costs a read call per doubling.
    let mut input = Vec::with_capacity(64 * 1024);
    let answer = match std::io::stdin().read_to_end(&mut input) {
        Ok(_) => std::panic::catch_unwind(|| handler(&input, &cwd)).unwrap_or_else(|_| {
            HookOutput::Message(
                "anvil: the hook failed unexpectedly (a bug; please report it). \
                 Every phase received so far is on disk: see `anvil status`."
                    .into(),
            )
        }),
        Err(e) => HookOutput::Message(format!("anvil: cannot read hook input: {e}")),
    };
    if let Some(json) = answer.to_json() {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout
            .write_all(json.as_bytes())
            .and_then(|()| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush());
    }
}
