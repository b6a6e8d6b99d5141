//! The host's turns of `anvil run`: a `claude -p` session allowed exactly what the debate
//! needs, followed to its end.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anvil_core::error::DebateError;
use anvil_core::home::{Home, LineRef};
use anvil_core::model::provenance::RunCost;

use super::terminal::{Input, Progress};
use crate::error::CliError;
use crate::output::say;

/// What the headless session may do without asking, which `claude -p` cannot: exactly what
/// the debate needs. The project's own `permissions.allow` is no help here, since Claude Code
/// ignores it in a workspace the user has not trusted (a fresh checkout, a CI run).
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
    command.args(["-p", "--output-format", "json"]);
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
        .stderr(Stdio::inherit());
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

/// Follows one claude run to its end: progress on stderr, a debater's questions asked at the
/// terminal and answered from there or from elsewhere, whichever comes first. What the run
/// cost (its JSON result) is added to `cost`, even when it failed.
pub(super) fn watch(
    mut child: Child,
    home: &Home,
    line: &LineRef,
    began: Instant,
    input: &mut Input,
    cost: &mut RunCost,
) -> Result<(), CliError> {
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let mut progress = Progress::new(home, line, began);
    // The question shown and not yet answered.
    let mut asked: Option<String> = None;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if let Some(state) = progress.look(home, line) {
            let open = state
                .question
                .as_ref()
                .filter(|q| q.answer.is_none())
                .map(|q| q.text.clone());
            match (&asked, open) {
                (None, Some(question)) => {
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
                    say(&format!("\nanvil: the question was {how}"));
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
                                say(&format!("anvil: not sent ({why})"));
                            }
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
                (None, None) => {}
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // Phases that ended after the last look are shown too.
    progress.look(home, line);
    let text = reader.join().unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if let Some(run) = RunCost::from_result(&json) {
        cost.add(&run);
    }
    if !status.success() || json["is_error"].as_bool() == Some(true) {
        return Err(CliError::new(format!(
            "claude failed ({status}): {}",
            json["result"].as_str().unwrap_or(text.trim())
        ))
        .hint(format!(
            "the debate is saved; continue it with `anvil run --line {line}`"
        )));
    }
    Ok(())
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
