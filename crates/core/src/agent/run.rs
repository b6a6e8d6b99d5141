//! Running an agent's turn: a process group of its own, stdin closed, stdout and stderr read
//! to the end, and the whole group killed at the timeout (an agent's tools and helpers go with
//! it) or once the agent has exited (nothing it started outlives its turn). Through the
//! [guard](super::guard), the group also dies with the process that runs it, killed or not.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{Agent, Played, SeatError, Turn, last_words};

/// What one run of an agent left.
#[derive(Debug, Clone)]
pub struct Ran {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
}

/// Plays one turn of `agent`.
pub fn play(agent: &'static dyn Agent, turn: &Turn<'_>) -> Result<Played, SeatError> {
    let named = match (turn.resume, agent.names_sessions()) {
        (Some(id), _) => Some(id.to_owned()),
        (None, true) => Some(super::new_session_id()),
        (None, false) => None,
    };
    let mut command = Command::new(agent.program());
    command
        .args(agent.args(turn, named.as_deref()))
        .current_dir(turn.cwd)
        .env(super::SEAT_VAR, turn.role)
        // A seat is a session of its own, whichever session started anvil.
        .env_remove("CLAUDE_CODE_SESSION_ID");
    // A program that reads its prompt on stdin (an endpoint's turn, played by `anvil`, one
    // process that watches its own stdin and timeout) runs without the guard.
    let (stdin, guard) = match agent.prompt_on_stdin() {
        true => (Some(turn.prompt.as_bytes()), None),
        false => (None, turn.guard),
    };
    let ran = match run(command, turn.timeout, guard, stdin) {
        Ok(ran) => ran,
        Err(Spawn(reason)) => {
            return Err(SeatError::Missing {
                agent,
                program: agent.program().display().to_string(),
                reason,
            });
        }
        Err(TimedOut(stdout, stderr)) => {
            return Err(SeatError::TimedOut {
                agent,
                after: turn.timeout,
                last_words: last_words(if stderr.trim().is_empty() {
                    &stdout
                } else {
                    &stderr
                }),
            });
        }
    };
    let read = agent.read(&ran, named.as_deref());
    if !ran.status.success() {
        let said = match &read {
            Err(words) if !words.is_empty() => words.clone(),
            _ if !ran.stderr.trim().is_empty() => last_words(&ran.stderr),
            _ => last_words(&ran.stdout),
        };
        return Err(SeatError::Failed {
            agent,
            status: describe(ran.status),
            last_words: said,
        });
    }
    match read {
        Ok(played) if !played.text.trim().is_empty() => Ok(Played {
            agent_version: played.agent_version.or_else(|| cached_version(agent)),
            duration_ms: if played.duration_ms == 0 {
                ran.duration.as_millis() as u64
            } else {
                played.duration_ms
            },
            ..played
        }),
        Ok(_) => Err(SeatError::Empty {
            agent,
            last_words: last_words(&ran.stderr),
        }),
        Err(words) => Err(SeatError::Failed {
            agent,
            status: "it reported an error".to_owned(),
            last_words: if words.is_empty() {
                last_words(&ran.stderr)
            } else {
                words
            },
        }),
    }
}

/// The agent's version from `--version`, asked once per process.
fn cached_version(agent: &'static dyn Agent) -> Option<String> {
    static SEEN: std::sync::Mutex<Vec<(&'static str, String)>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, v)) = seen.iter().find(|(a, _)| *a == agent.name()) {
        return Some(v.clone());
    }
    let version = version(agent).ok()?;
    seen.push((agent.name(), version.clone()));
    Some(version)
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

enum RunError {
    Spawn(String),
    /// Killed at the timeout, with what it had printed.
    TimedOut(String, String),
}
use RunError::{Spawn, TimedOut};

/// Runs `command` in a process group of its own, to its end or its timeout; through the
/// guard program `guard` (this binary, in its `seat-guard` mode) when given; with `input` as
/// its whole stdin when given (without a guard).
fn run(
    command: Command,
    timeout: Duration,
    guard: Option<&Path>,
    input: Option<&[u8]>,
) -> Result<Ran, RunError> {
    use std::os::unix::process::CommandExt;
    let mut command = match guard {
        Some(guard) => guarded(&command, guard),
        None => command,
    };
    command
        .stdin(if guard.is_some() || input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let began = Instant::now();
    let mut child = command.spawn().map_err(|e| Spawn(e.to_string()))?;
    let group = rustix::process::Pid::from_child(&child);
    // The guard's end of the pipe: held until the agent is done, closed when this process
    // ends in any way. Or the program's input, written while it runs, then closed.
    let _lifeline = match input {
        Some(input) => {
            let mut pipe = child.stdin.take().expect("piped");
            let input = input.to_vec();
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = pipe.write_all(&input);
            });
            None
        }
        None => child.stdin.take(),
    };
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = reader(Box::new(child.stdout.take().expect("piped")));
    let stderr = reader(Box::new(child.stderr.take().expect("piped")));
    let deadline = began + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    let duration = began.elapsed();
    // The whole group goes: at the timeout the agent and its tools, after an exit whatever it
    // left running (which would otherwise hold the pipes open).
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    let status = match status {
        Some(status) => status,
        None => {
            let _ = child.wait();
            let out = stdout.join().unwrap_or_default();
            let err = stderr.join().unwrap_or_default();
            return Err(TimedOut(out, err));
        }
    };
    let stderr = stderr.join().unwrap_or_default();
    if guard.is_some()
        && status.code() == Some(super::guard::MISSING_EXIT)
        && let Some(reason) = stderr
            .lines()
            .find_map(|l| l.strip_prefix(super::guard::MISSING_MARK))
    {
        return Err(Spawn(reason.to_owned()));
    }
    Ok(Ran {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr,
        duration,
    })
}

/// `command` (program, arguments, directory, environment), run by the guard `guard`.
fn guarded(command: &Command, guard: &Path) -> Command {
    let mut through = Command::new(guard);
    through
        .arg(super::guard::GUARD_WORD)
        .arg(command.get_program())
        .args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        through.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => through.env(key, value),
            None => through.env_remove(key),
        };
    }
    through
}

/// `AGENT --version`, made short: the first word that looks like a version number.
pub fn version(agent: &'static dyn Agent) -> Result<String, SeatError> {
    let mut command = Command::new(agent.program());
    command.arg("--version").env(super::SEAT_VAR, "version");
    let ran = match run(command, Duration::from_secs(60), None, None) {
        Ok(ran) => ran,
        Err(TimedOut(..)) => {
            return Err(SeatError::TimedOut {
                agent,
                after: Duration::from_secs(60),
                last_words: String::new(),
            });
        }
        Err(Spawn(reason)) => {
            return Err(SeatError::Missing {
                agent,
                program: agent.program().display().to_string(),
                reason,
            });
        }
    };
    if !ran.status.success() {
        return Err(SeatError::Failed {
            agent,
            status: describe(ran.status),
            last_words: last_words(&format!("{}\n{}", ran.stdout, ran.stderr)),
        });
    }
    short_version(&ran.stdout).ok_or_else(|| SeatError::Empty {
        agent,
        last_words: last_words(&ran.stdout),
    })
}

/// `2.1.197 (Claude Code)`, `codex-cli 0.169.0`, `GitHub Copilot CLI 1.0.102.` → the number.
pub(crate) fn short_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_each_agent_prints_them() {
        for (text, version) in [
            ("2.1.197 (Claude Code)\n", "2.1.197"),
            ("codex-cli 0.169.0\n", "0.169.0"),
            (
                "GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.\n",
                "1.0.102",
            ),
            ("0.24.4\n", "0.24.4"),
        ] {
            assert_eq!(short_version(text).as_deref(), Some(version), "{text}");
        }
        assert_eq!(short_version("no version here"), None);
    }

    #[test]
    fn a_run_past_its_timeout_is_killed_with_its_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("child-alive");
        let mut command = Command::new("sh");
        // A child that would outlive its parent, and a parent that hangs.
        command.arg("-c").arg(format!(
            "(sleep 2; touch {}) & echo started; sleep 30",
            marker.display()
        ));
        let began = Instant::now();
        match run(command, Duration::from_millis(500), None, None) {
            Err(TimedOut(out, _)) => assert_eq!(out.trim(), "started"),
            _ => panic!("expected a timeout"),
        }
        assert!(began.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "the group's other process survived");
    }

    #[test]
    fn a_missing_program_is_told_apart() {
        let command = Command::new("/nonexistent/agent-binary");
        assert!(matches!(
            run(command, Duration::from_secs(5), None, None),
            Err(Spawn(_))
        ));
    }
}
