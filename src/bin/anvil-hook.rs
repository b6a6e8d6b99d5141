//! `anvil-hook`: the hooks Claude Code runs, as their own small binary.
//!
//! Claude Code starts the Stop hook at the end of every turn of every session, so its start-up
//! is paid constantly. This binary links only what a hook needs (the state machine, the record
//! writer, prompt rendering); the command line, its parser and everything else stay in `anvil`.
//!
//! Usage: `anvil-hook stop | session-start | prompt-expansion`, hook JSON on stdin. The Stop
//! hook runs a seat's agent through this binary too: `anvil-hook seat-guard PROGRAM ARGS…`
//! (see `anvil_core::agent::guard`).

//!
//! ## Its own entry point
//!
//! The hook starts at a C `main` of its own (`#![no_main]`) instead of the standard library's
//! start, which prepares things a hook has no use for: it reads `/proc/self/maps` to find the
//! main thread's stack, and maps and installs an alternate signal stack to report a stack
//! overflow by name; that is about 20 system calls and, measured on a static build, about a
//! tenth of a bare process start (`python3 benches/hook-ab.py`). What of that start the hook
//! does need, it does here: standard input, output and error are opened on `/dev/null` when the
//! client started the hook without them (or the first file the hook opens would take their
//! place, and what it prints would go into that file), `SIGPIPE` is ignored (a seat's agent
//! that exits without reading its prompt must not kill the hook that writes it), a panic ends
//! the process with status 101 and buffered output is flushed at exit. A stack overflow still
//! ends the process, by `SIGSEGV`, without the standard library's message.

// On Linux with glibc, where the standard library reads the arguments before any `main` runs
// (elsewhere it may need its own start for them, and the hook keeps it).
#![cfg_attr(all(target_os = "linux", target_env = "gnu"), no_main)]
// The C entry point and the few libc calls below; unsafe code is denied everywhere else.
#![allow(unsafe_code)]

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    prepare_process();
    // A panic's message is printed by the panic hook, as under the standard start.
    let code = std::panic::catch_unwind(hook).unwrap_or(101);
    // `exit` flushes standard output, as the standard start does when `main` returns.
    std::process::exit(code)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(hook() as u8)
}

/// What the standard library's start does for every Rust program and the hook needs: standard
/// input, output and error open, and `SIGPIPE` ignored (see the module's documentation).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn prepare_process() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: `fds` is three valid `pollfd`s, and a timeout of 0 does not block.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } != -1;
    for pollfd in fds {
        let closed = if polled {
            pollfd.revents & libc::POLLNVAL != 0
        } else {
            // SAFETY: asks for a descriptor's flags; nothing is read or written.
            let failed = unsafe { libc::fcntl(pollfd.fd, libc::F_GETFD) } == -1;
            failed && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
        };
        // The lowest free descriptor is the closed one: /dev/null takes its place for the life
        // of the process, inherited by what it starts (as the standard start opens it).
        if closed {
            // SAFETY: opens a file by a NUL-terminated name; the descriptor is kept on purpose.
            unsafe {
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
    // SAFETY: sets one signal's disposition, before the hook starts any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

fn hook() -> i32 {
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
            0
        }
        None if word == "--version" => {
            println!("anvil-hook {}", env!("CARGO_PKG_VERSION"));
            0
        }
        None => usage(),
    }
}

fn usage() -> i32 {
    eprintln!(
        "usage: anvil-hook stop|session-start|prompt-expansion  (Claude Code runs it with the \
         hook's JSON on stdin; `anvil install` wires it)"
    );
    2
}
