//! Running an agent's turn: a process group of its own, the prompt on its stdin (never in its
//! arguments), only the environment its agent reads ([`super::env`]), stdout and stderr read
//! to the end, and the whole group killed at the timeout (an agent's tools and helpers go with
//! it) or once the agent has exited (nothing it started outlives its turn). Through the
//! [guard](super::guard), the group also dies with the process that runs it, killed or not.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{Agent, Played, SeatError, Turn, last_words};

/// One program to run: what the runner and the guard both need to start it.
struct Launch {
    program: PathBuf,
    args: Vec<String>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    /// Written to its stdin, which is then closed.
    stdin: Vec<u8>,
}

impl Launch {
    /// The command, with exactly `env` for environment.
    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).env_clear().envs(self.env.clone());
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        command
    }
}

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
    let refused = |reason: String| SeatError::Refused { agent, reason };
    if let Some(model) = turn.model {
        agent.check_model(model).map_err(refused)?;
    }
    if let Some(id) = turn.resume {
        agent.check_session(id).map_err(refused)?;
    }
    let named = match (turn.resume, agent.names_sessions()) {
        (Some(id), _) => Some(id.to_owned()),
        (None, true) => Some(super::new_session_id()),
        (None, false) => None,
    };
    let mut env = super::env::for_seat(agent, turn.model, turn.pass_env, std::env::vars_os());
    env.extend(
        agent
            .sets()
            .into_iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env.push((super::SEAT_VAR.into(), turn.role.into()));
    let launch = Launch {
        program: agent.program(),
        args: agent.args(turn, named.as_deref()),
        cwd: Some(turn.cwd.to_owned()),
        env,
        stdin: agent.prompt_as_text(turn.prompt).as_bytes().to_vec(),
    };
    let live = turn.watch.map(|watch| {
        move |line: &str| {
            if let Some(said) = agent.live(line) {
                watch(said);
            }
        }
    });
    let ran = match run(
        &launch,
        turn.timeout,
        turn.guard,
        live.as_ref().map(|f| f as &dyn Fn(&str)),
    ) {
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
    if turn.resume.is_some() && !ran.status.success() && agent.lost_session(&ran) {
        return play(
            agent,
            &Turn {
                resume: None,
                ..turn.clone()
            },
        );
    }
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
            // What the agent says answered, else what was asked for.
            model: played
                .model
                .or_else(|| turn.model.map(str::to_owned))
                .or_else(|| agent.default_model()),
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

/// The agent's version from `--version`, asked once per process (whoever asks first waits for
/// it): what a phase's header names before the agent has said anything.
pub fn known_version(agent: &'static dyn Agent) -> Option<String> {
    cached_version(agent)
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

/// Runs `launch` in a process group of its own, to its end or its timeout; through the
/// guard program `guard` (this binary, in its `seat-guard` mode) when given. `watch` is
/// handed each line of its stdout as it arrives.
fn run(
    launch: &Launch,
    timeout: Duration,
    guard: Option<&Path>,
    watch: Option<&dyn Fn(&str)>,
) -> Result<Ran, RunError> {
    use std::os::unix::process::CommandExt;
    let mut command = match guard {
        Some(guard) => guarded(launch, guard),
        None => launch.command(),
    };
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let began = Instant::now();
    let mut child = command.spawn().map_err(|e| Spawn(e.to_string()))?;
    let group = rustix::process::Pid::from_child(&child);
    let mut stdin = child.stdin.take().expect("piped");
    // Through the guard, the prompt goes first, behind its length; the pipe then stays open
    // as the guard's lifeline until the agent is done, and closes when this process ends in
    // any way. Without it, the prompt is the agent's whole stdin.
    let _lifeline = match guard {
        Some(_) => {
            let _ = super::guard::send(&mut stdin, &launch.stdin);
            Some(stdin)
        }
        None => {
            let prompt = launch.stdin.clone();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&prompt);
            });
            None
        }
    };
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let (lines, heard) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().expect("piped");
    // Line by line, each handed on while the turn runs, when someone watches it.
    let stdout = match watch {
        Some(_) => std::thread::spawn(move || {
            let mut all = Vec::new();
            let mut stdout = std::io::BufReader::new(stdout);
            let mut line = Vec::new();
            while matches!(std::io::BufRead::read_until(&mut stdout, b'\n', &mut line), Ok(n) if n > 0)
            {
                let _ = lines.send(String::from_utf8_lossy(&line).into_owned());
                all.append(&mut line);
            }
            String::from_utf8_lossy(&all).into_owned()
        }),
        None => reader(Box::new(stdout)),
    };
    let stderr = reader(Box::new(child.stderr.take().expect("piped")));
    let hand_on = || {
        if let Some(watch) = watch {
            heard.try_iter().for_each(|line| watch(&line));
        }
    };
    let deadline = began + timeout;
    let status = loop {
        hand_on();
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
    let stdout = stdout.join().unwrap_or_default();
    // What came after the last look.
    hand_on();
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
        stdout,
        stderr,
        duration,
    })
}

/// `launch` (program, arguments, directory, environment), run by the guard `guard`, which is
/// given nothing of the environment but `launch`'s.
fn guarded(launch: &Launch, guard: &Path) -> Command {
    let mut through = Command::new(guard);
    through
        .arg(super::guard::GUARD_WORD)
        .arg(&launch.program)
        .args(&launch.args)
        .env_clear()
        .envs(launch.env.clone());
    if let Some(dir) = &launch.cwd {
        through.current_dir(dir);
    }
    through
}

/// `AGENT --version`, made short: the first word that looks like a version number.
pub fn version(agent: &'static dyn Agent) -> Result<String, SeatError> {
    let mut env = super::env::for_seat(agent, None, &[], std::env::vars_os());
    env.push((super::SEAT_VAR.into(), "version".into()));
    let launch = Launch {
        program: agent.program(),
        args: vec!["--version".into()],
        cwd: None,
        env,
        stdin: Vec::new(),
    };
    let ran = match run(&launch, Duration::from_secs(60), None, None) {
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
        // A child that would outlive its parent, and a parent that hangs.
        let launch = sh(&format!(
            "(sleep 2; touch {}) & echo started; sleep 30",
            marker.display()
        ));
        let began = Instant::now();
        match run(&launch, Duration::from_millis(500), None, None) {
            Err(TimedOut(out, _)) => assert_eq!(out.trim(), "started"),
            _ => panic!("expected a timeout"),
        }
        assert!(began.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "the group's other process survived");
    }

    #[test]
    fn a_missing_program_is_told_apart() {
        let launch = Launch {
            program: "/nonexistent/agent-binary".into(),
            ..sh("")
        };
        assert!(matches!(
            run(&launch, Duration::from_secs(5), None, None),
            Err(Spawn(_))
        ));
    }

    #[test]
    fn the_prompt_is_the_programs_stdin_and_nothing_else_is_passed() {
        let prompt = "a prompt\n".repeat(20_000);
        let launch = Launch {
            stdin: prompt.clone().into_bytes(),
            ..sh("cat; echo \"ONLY=$ONLY HOME=${HOME-unset}\"")
        };
        let launch = Launch {
            env: [launch.env, vec![("ONLY".into(), "this".into())]].concat(),
            ..launch
        };
        let ran = run(&launch, Duration::from_secs(20), None, None)
            .ok()
            .unwrap();
        assert_eq!(ran.stdout, format!("{prompt}ONLY=this HOME=unset\n"));
    }

    /// An agent whose turn is a shell script, each line of its output said as it comes.
    struct Lines;

    impl Agent for Lines {
        fn about(&self) -> &'static crate::agent::About {
            &crate::agent::About {
                name: "lines",
                title: "Lines",
                allowed: "",
                env: &["ANVIL_TEST_FLAG"],
                env_more: "",
            }
        }
        fn program(&self) -> std::path::PathBuf {
            "sh".into()
        }
        fn names_sessions(&self) -> bool {
            false
        }
        fn args(&self, turn: &Turn<'_>, _: Option<&str>) -> Vec<String> {
            vec!["-c".into(), turn.prompt.into()]
        }
        fn signed_in(&self) -> Result<String, String> {
            Ok(String::new())
        }
        fn live(&self, line: &str) -> Option<crate::agent::Live> {
            Some(crate::agent::Live::Text(line.trim().to_owned()))
        }
        fn read(&self, ran: &Ran, _: Option<&str>) -> Result<Played, String> {
            Ok(Played {
                agent: &Lines,
                text: ran.stdout.clone(),
                session: "s".into(),
                agent_version: Some("1".into()),
                model: None,
                tokens: Default::default(),
                cost: None,
                duration_ms: 1,
            })
        }
    }

    #[test]
    fn what_an_agent_says_is_handed_on_while_its_turn_runs() {
        let dir = tempfile::tempdir().unwrap();
        let flag = dir.path().join("heard");
        // The second line comes only once the first was heard: handed on at the end, the
        // turn would never end.
        let script = format!(
            "echo one; while [ ! -e '{}' ]; do sleep 0.02; done; echo two",
            flag.display()
        );
        let heard = std::sync::Mutex::new(Vec::new());
        let watch = |said: crate::agent::Live| {
            let crate::agent::Live::Text(text) = said else {
                panic!("{said:?}")
            };
            if text == "one" {
                std::fs::write(&flag, "").unwrap();
            }
            heard.lock().unwrap().push(text);
        };
        let turn = Turn {
            cwd: dir.path(),
            prompt: &script,
            resume: None,
            model: None,
            timeout: Duration::from_secs(20),
            role: "critic",
            pass_env: &[],
            watch: Some(&watch),
            guard: None,
        };
        let played = play(&Lines, &turn).unwrap();
        assert_eq!(played.text, "one\ntwo\n");
        assert_eq!(*heard.lock().unwrap(), ["one", "two"]);
    }

    /// `sh -c SCRIPT`, with an empty stdin.
    fn sh(script: &str) -> Launch {
        Launch {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: None,
            env: vec![("PATH".into(), std::env::var_os("PATH").unwrap())],
            stdin: Vec::new(),
        }
    }
}
