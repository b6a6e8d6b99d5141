//! The host's turns of `anvil run`: a `claude -p` session given everything it needs on its
//! own command line, followed to its end, its words shown as it writes them.
//!
//! The session reads the user's settings and none of the project's (`--setting-sources
//! user`): in a workspace the person never trusted, Claude Code ignores the project's
//! `permissions.allow` and says so on stderr at every start ("Ignoring 8 permissions.allow
//! entries from .claude/settings.json: this workspace has not been trusted…"), right after
//! `anvil install` wrote them, three times in a seated run. What the debate needs comes on the
//! command line instead: anvil's Stop hook (`--settings`, unless the user's own settings or
//! plugin run it already), the tools it may use without asking (`--allowedTools`; anything
//! else is refused, not asked about: `--permission-mode dontAsk`), the record's MCP server
//! (`--mcp-config`), the block cap (its environment). `anvil doctor` still says when the
//! workspace is not trusted, for the person's own sessions.
//!
//! Its output is `stream-json` (`--verbose`, which `-p` needs for it, and
//! `--include-partial-messages`): the text as it is written, read by Claude Code's file of
//! the agent room ([`anvil_core::agent::Agent::hear`]) for the run's [`Show`], and the run's
//! `result` at the end, what it cost.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anvil_core::error::DebateError;
use anvil_core::home::{Home, LineRef};
use anvil_core::model::provenance::RunTally;

use super::show::Show;
use super::terminal::Input;
use crate::error::CliError;
use crate::output::say;

/// What the headless session may do without asking, which `claude -p` cannot: exactly what
/// the debate needs. The project's own `permissions.allow` is no help here: Claude Code
/// ignores it in a workspace the user has not trusted (a fresh checkout, a CI run), and the
/// session does not read it (see the module's doc).
///
/// Claude Code matches a `Bash(PREFIX:*)` rule against the start of each command (each part
/// of a command line joined with `&&`, `;` or `|` separately), so `Bash(anvil ask:*)` lets a
/// debater run `anvil ask "…"` and nothing else. The prompts name the command `anvil`; the
/// rule for the path this binary was started by covers a debater that copies it from a
/// message, and `PATH` (see [`spawn_claude`]) makes `anvil` this very binary.
pub(super) fn allowed_tools(setup: &anvil_core::model::state::Setup) -> Vec<String> {
    // Debaters may consult earlier debates through `anvil mcp` (passed with --mcp-config).
    let mut allowed = vec![anvil_core::claude::install::MCP_PERMISSION.to_owned()];
    if setup.autonomy > 0 {
        // The prompts tell debaters to run `anvil ask` by name (on the PATH, as installed).
        allowed.push("Bash(anvil ask:*)".to_owned());
    }
    if setup.research {
        allowed.extend(["WebSearch".to_owned(), "WebFetch".to_owned()]);
    }
    allowed
}

#[allow(clippy::too_many_arguments)]
pub(super) fn spawn_claude(
    claude: &Path,
    cwd: &Path,
    prompt: &str,
    session: &str,
    resume: bool,
    settings: Option<&Path>,
    allowed: &[String],
    extra: &[String],
) -> Result<Child, CliError> {
    let mut command = Command::new(claude);
    // The prompt goes on stdin: in the arguments it would show in `ps`, and Linux caps one
    // argument at 128 KiB, which `--context` material alone may fill.
    command.args([
        "-p",
        "--output-format=stream-json",
        "--verbose",
        "--include-partial-messages",
        "--setting-sources=user",
        "--permission-mode=dontAsk",
    ]);
    command
        .arg(if resume { "--resume" } else { "--session-id" })
        .arg(session);
    if let Some(settings) = settings {
        command.arg("--settings").arg(settings);
    }
    for rule in allowed {
        // The flag once per rule: a rule holds spaces, and the flag takes a list of values.
        command.arg("--allowedTools").arg(rule);
    }
    // The record as MCP tools, served by this binary: a workspace nobody trusted, or one
    // where `anvil install` never ran, still has them.
    if let Some(exe) = std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_owned))
    {
        let config = serde_json::json!({ "mcpServers": {
            anvil_core::claude::install::MCP_SERVER: anvil_core::claude::install::mcp_server(&exe)
        }});
        command.arg(format!("--mcp-config={config}"));
    }
    // `anvil` in a debater's command is this binary, wherever it was started from.
    if let Some(path) = path_with_this_binary() {
        command.env("PATH", path);
    }
    command
        .args(extra)
        .current_dir(cwd)
        .env(
            anvil_core::claude::install::BLOCK_CAP_VAR,
            anvil_core::claude::install::BLOCK_CAP,
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|e| {
        let error = CliError::new(format!("cannot run {}: {e}", claude.display()));
        match e.kind() {
            std::io::ErrorKind::NotFound => {
                error.hint("install Claude Code, or point --claude (or $ANVIL_CLAUDE_BIN) at it")
            }
            std::io::ErrorKind::PermissionDenied => error.hint(format!(
                "{} is there but cannot be run: is it executable?",
                claude.display()
            )),
            _ => error,
        }
    })?;
    let mut stdin = child.stdin.take().expect("piped");
    // Kept text: an `@path` that a debater or a file quoted is not a file for claude to read.
    let prompt = anvil_core::agent::RUN_HOST
        .prompt_as_text(prompt)
        .into_owned();
    // Written beside the run: claude reads it while its output is followed.
    std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(prompt.as_bytes());
    });
    Ok(child)
}

/// `PATH` with the directory of the running binary first, or `None` when it cannot be told.
fn path_with_this_binary() -> Option<std::ffi::OsString> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.to_owned();
    let mut dirs = vec![dir];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).ok()
}

/// Follows one claude run to its end: its words shown as they come (`show`), a debater's
/// questions asked at the terminal and answered from there or from elsewhere, whichever comes
/// first. What the run cost (its `result`) is added to `cost`, even when it failed.
pub(super) fn watch(
    mut child: Child,
    home: &Home,
    line: &LineRef,
    input: &mut Input,
    show: &mut Show,
    cost: &mut RunTally,
) -> Result<(), CliError> {
    show.host_begins(home, line);
    let lines = read_lines(child.stdout.take().expect("piped"));
    let stderr = child.stderr.take().expect("piped");
    let said_aside = relay_stderr(stderr, anvil_core::model::secrets::Intake::new(home.root()));
    let mut text = String::new();
    let take = |said: String, show: &mut Show, text: &mut String| {
        if let Some(live) = anvil_core::agent::RUN_HOST.live(&said) {
            show.host_heard(live, home, line);
        }
        text.push_str(&said);
    };
    // The question shown and not yet answered.
    let mut asked: Option<String> = None;
    let mut looked: Option<Instant> = None;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(said) => take(said, show, &mut text),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // What claude says on stderr is shown between rows, never inside the one being written.
        for aside in said_aside.try_iter() {
            show.note(&aside);
        }
        // The line's state is looked at ten times a second, however fast words come.
        if looked.is_some_and(|at| at.elapsed() < Duration::from_millis(100)) {
            continue;
        }
        looked = Some(Instant::now());
        if let Some(state) = show.look(home, line) {
            let open = state
                .question
                .as_ref()
                .filter(|q| q.answer.is_none())
                .map(|q| q.text.clone());
            match (&asked, open) {
                (None, Some(question)) => {
                    show.question(&question);
                    input.prompt(&format!(
                        "The debater asks: {}\n> ",
                        crate::term::visible(&question)
                    ));
                    asked = Some(question);
                }
                (Some(shown), open) if open.as_ref() != Some(shown) => {
                    let how = match state.question.as_ref().and_then(|q| q.answer.as_deref()) {
                        Some(answer) => {
                            format!("answered elsewhere: {}", crate::term::visible(answer))
                        }
                        None => "closed without an answer".to_owned(),
                    };
                    show.note(&format!("\nanvil: the question was {how}"));
                    asked = None;
                }
                (Some(_), _) => {
                    if let Some(typed) = input.poll() {
                        asked = None;
                        let answer = if typed.trim().is_empty() {
                            "(no answer; state your assumption)"
                        } else {
                            typed.trim()
                        };
                        match anvil_core::line::ask::answer(home, line, answer) {
                            Ok(_) => {}
                            // Answered (or closed) elsewhere first: the first answer won.
                            Err(DebateError::Refused(why)) => {
                                show.note(&format!("anvil: not sent ({why})"));
                            }
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
                (None, None) => {}
            }
        }
    };
    // What it printed last, and the phases that ended after the last look.
    for said in lines.iter() {
        take(said, show, &mut text);
    }
    for aside in said_aside.iter() {
        show.note(&aside);
    }
    show.look(home, line);
    let json = result(&text);
    cost.add_result(&json);
    if !status.success() || json["is_error"].as_bool() == Some(true) {
        // Claude's last words are outside text: cleaned of credentials before they are shown
        // (the error itself is made visible where it is printed).
        let mut intake = anvil_core::model::secrets::Intake::new(home.root());
        let said = intake.clean(
            "claude's last words",
            json["result"].as_str().unwrap_or(text.trim()),
        );
        if let Some(note) = intake.note() {
            say(&format!("anvil: note: {note}"));
        }
        return Err(
            CliError::new(format!("claude failed ({status}): {said}")).hint(format!(
                "the debate is saved; continue it with `anvil run --line {line}`"
            )),
        );
    }
    Ok(())
}

/// Claude's own stderr, line by line, for this terminal as `anvil run`'s other notes go (the
/// caller shows them, so a line never lands in the middle of a row being written): cleaned of
/// credentials (through `intake`, whose note follows) and made visible, since what an agent
/// prints is outside text like any other. The lines end when claude's stderr does.
fn relay_stderr(
    stderr: std::process::ChildStderr,
    mut intake: anvil_core::model::secrets::Intake,
) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        // Read to the end whatever it holds (bytes that are not UTF-8 too): a pipe left full
        // would stall claude.
        for line in std::io::BufReader::new(stderr).split(b'\n') {
            let Ok(line) = line else { break };
            let line = String::from_utf8_lossy(&line);
            let line = intake.clean("claude's output", line.trim_end_matches('\r'));
            // Kept reading after the caller has gone: a pipe left full would stall claude.
            let _ = tx.send(crate::term::visible(&line).into_owned());
        }
        if let Some(note) = intake.note() {
            let _ = tx.send(format!("anvil: note: {note}"));
        }
    });
    rx
}

/// The lines of `pipe` as they come, read by a thread of their own (a pipe left full would
/// stall claude).
fn read_lines(pipe: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut pipe = std::io::BufReader::new(pipe);
        let mut line = Vec::new();
        loop {
            line.clear();
            match std::io::BufRead::read_until(&mut pipe, b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx
                        .send(String::from_utf8_lossy(&line).into_owned())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    rx
}

/// The run's `result` event, the last of its output (what `--output-format json` prints
/// alone); `Null` when there is none.
fn result(output: &str) -> serde_json::Value {
    output
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .find(|e| e["type"] == "result")
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(autonomy: u8, research: bool) -> anvil_core::model::state::Setup {
        let mut setup: anvil_core::model::state::Setup = serde_json::from_value(
            serde_json::json!({ "question": "Q?", "mode": "analyst", "rounds": 1 }),
        )
        .unwrap();
        setup.autonomy = autonomy;
        setup.research = research;
        setup
    }

    #[test]
    fn the_headless_session_may_run_only_what_the_debate_needs() {
        assert_eq!(allowed_tools(&setup(0, false)), ["mcp__anvil"]);
        assert_eq!(
            allowed_tools(&setup(5, false)),
            ["mcp__anvil", "Bash(anvil ask:*)"]
        );
        assert_eq!(
            allowed_tools(&setup(1, true)),
            ["mcp__anvil", "Bash(anvil ask:*)", "WebSearch", "WebFetch"]
        );
    }
}
