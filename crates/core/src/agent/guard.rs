//! The seat's guard: a small process between anvil and the agent, so that the agent and
//! everything it started die with the anvil process that runs it, however that one ends.
//!
//! A seat's turn can take minutes, and the process that waits for it may be killed meanwhile:
//! Claude Code kills its Stop hook at the hook's timeout or when the person presses Ctrl+C,
//! with SIGTERM and then SIGKILL. Nothing of anvil's runs after a SIGKILL, and an agent CLI is
//! often a launcher (node) with the real agent and its tools below it, which a signal to the
//! launcher alone would leave behind. So anvil starts the guard — its own binary, `anvil-hook
//! seat-guard PROGRAM ARGS…` or `anvil seat-guard …` — as the leader of a new process group,
//! with a pipe on its stdin. Down that pipe anvil sends the agent's prompt, behind its length
//! in bytes on a line of its own ([`send`]), and nothing more. The guard reads the prompt,
//! starts the agent in that group with the prompt for its stdin, and waits for it. When anvil ends, the system closes the pipe, the guard's read returns,
//! and the guard kills its whole group: agent, tools and itself. When the agent ends first,
//! the guard exits as the agent did. No signal handler and no platform-specific call is
//! needed: only a pipe's end, which every Unix closes when its holder dies.

use std::ffi::OsString;
use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};

/// The word that starts the guard: `anvil-hook seat-guard PROGRAM ARGS…`, `anvil seat-guard …`.
pub const GUARD_WORD: &str = "seat-guard";

/// How the guard says that the agent's program could not be started, on stderr before exiting
/// with [`MISSING_EXIT`]: the runner tells a missing agent from a failing one by it.
pub(crate) const MISSING_MARK: &str = "anvil seat-guard: cannot run the agent: ";
pub(crate) const MISSING_EXIT: i32 = 127;

/// Sends `prompt` down the guard's stdin, as [`guard`] reads it.
pub(crate) fn send(pipe: &mut impl Write, prompt: &[u8]) -> std::io::Result<()> {
    writeln!(pipe, "{}", prompt.len())?;
    pipe.write_all(prompt)?;
    pipe.flush()
}

/// Reads what [`send`] sent: the length's line, then the prompt.
fn receive(stdin: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut line = String::new();
    stdin.read_line(&mut line)?;
    let len: usize = line.trim().parse().map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "no prompt's length on stdin",
        )
    })?;
    let mut prompt = vec![0; len];
    stdin.read_exact(&mut prompt)?;
    Ok(prompt)
}

/// Runs the guard: `args` are the agent's program and its arguments. Returns the exit code
/// to leave with, when the agent did not die of a signal (the guard then dies of the same).
#[cold]
#[inline(never)]
pub fn guard(mut args: impl Iterator<Item = OsString>) -> i32 {
    let Some(program) = args.next() else {
        eprintln!("usage: {GUARD_WORD} PROGRAM [ARGS…] (anvil runs it; not for typing)");
        return 2;
    };
    let prompt = match receive(&mut std::io::stdin().lock()) {
        Ok(prompt) => prompt,
        Err(e) => {
            eprintln!("anvil seat-guard: cannot read the agent's prompt: {e}");
            return 2;
        }
    };
    let mut child = match Command::new(&program)
        .args(args)
        .stdin(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("{MISSING_MARK}{e}");
            return MISSING_EXIT;
        }
    };
    // The agent reads its prompt while the guard watches its lifeline (an agent that never
    // reads it ends the write).
    if let Some(mut to_agent) = child.stdin.take() {
        std::thread::spawn(move || {
            let _ = to_agent.write_all(&prompt);
        });
    }
    // anvil's end, whichever way it comes, closes the pipe on stdin.
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        let mut stdin = std::io::stdin().lock();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        let _ = rustix::process::kill_current_process_group(rustix::process::Signal::KILL);
    });
    let status = match child.wait() {
        Ok(status) => status,
        Err(e) => {
            eprintln!("anvil seat-guard: cannot wait for the agent: {e}");
            let _ = rustix::process::kill_current_process_group(rustix::process::Signal::KILL);
            return 1;
        }
    };
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => {
            // Dies of the agent's signal, so that the runner reports it as the agent's.
            if let Some(signal) = rustix::process::Signal::from_named_raw(signal) {
                let _ = rustix::process::kill_process(rustix::process::getpid(), signal);
            }
            128 + signal
        }
        _ => 1,
    }
}
