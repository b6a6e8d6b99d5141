//! The npm package's node launcher, seen from the native program it starts.
//!
//! Where npm ran no install scripts, `anvil` and `anvil-hook` on PATH are a node script
//! (`npm/anvil-debate/lib/launch.js`) that starts the native program and passes on the signals
//! it can. A signal it cannot catch (`SIGKILL`: a hook timeout, an out-of-memory kill) ends
//! the launcher alone, and its native child would run on, orphaned. So the launcher names its
//! process in `ANVIL_NPM_LAUNCHER_PID`, and on Linux the program it started asks the kernel to
//! end it when that process ends (`PR_SET_PDEATHSIG`).
//!
//! The variable is inherited by everything the program starts (a seat's agent, a hook under
//! `anvil run`'s claude): only a direct child of the launcher acts on it. The npm install test
//! kills a launcher outright and checks that its native program ends too
//! (`tests/it/npm_dist.rs`).

/// The variable a launcher names its own process in.
pub const PID_VAR: &str = "ANVIL_NPM_LAUNCHER_PID";

/// Ends this process with `SIGTERM` when the launcher that started it ends, where the system
/// can (Linux); a no-op for a process further down, while its launcher lives.
pub fn die_with_launcher() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Pid, Signal, getppid, set_parent_process_death_signal};
        let Some(launcher) = std::env::var(PID_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            return;
        };
        let end = || {
            let _ = rustix::process::kill_process(rustix::process::getpid(), Signal::TERM);
        };
        if getppid() != Some(launcher) {
            // Not the launcher's child: either a process further down that inherited the
            // variable, or its child orphaned before it could ask (the launcher killed while
            // this program was still starting). The launcher is gone only in the second case,
            // and then this ends as it would have ended with it.
            if rustix::process::test_kill_process(launcher) == Err(rustix::io::Errno::SRCH) {
                end();
            }
            return;
        }
        if set_parent_process_death_signal(Some(Signal::TERM)).is_err() {
            return;
        }
        // The launcher may have ended between the look and the request: then nothing would
        // send the signal, so it is sent now.
        if getppid() != Some(launcher) {
            end();
        }
    }
}
