//! `anvil-hook`: the hooks Claude Code runs, as their own small binary.
//!
//! Claude Code starts the Stop hook at the end of every turn of every session, so its start-up
//! is paid constantly. This binary links only what a hook needs (the state machine, the record
//! writer, prompt rendering); the command line, its parser and everything else stay in `anvil`.
//!
//! Usage: `anvil-hook stop | session-start | prompt-expansion`, hook JSON on stdin. The Stop
//! hook runs a seat's agent through this binary too: `anvil-hook seat-guard PROGRAM ARGS…`
//! (see `anvil_core::agent::guard`).

use std::process::ExitCode;

fn main() -> ExitCode {
    anvil_core::launcher::die_with_launcher();
    let mut args = std::env::args_os().skip(1);
    let Some(first) = args.next() else {
        return usage();
    };
    if first == anvil_core::agent::GUARD_WORD {
        std::process::exit(anvil_core::agent::guard(args));
    }
    if args.next().is_some() {
        return usage();
    }
    let word = first;
    match word.to_str().and_then(anvil_core::claude::process::handler) {
        Some(handler) => {
            anvil_core::claude::process::run(handler);
            ExitCode::SUCCESS
        }
        None if word == "--version" => {
            println!("anvil-hook {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        None => usage(),
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: anvil-hook stop|session-start|prompt-expansion  (Claude Code runs it with the \
         hook's JSON on stdin; `anvil install` wires it)"
    );
    ExitCode::from(2)
}
