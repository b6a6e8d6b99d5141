//! `anvil run`: a whole debate, headless, with `claude -p`; the human is asked at the terminal.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anvil::debate::Reply;
use anvil::home::{Home, LineRef};
use anvil::state::{Role, State, Status};

use super::start::DebateArgs;
use super::{CliError, Ctx, out, say};

/// Run a whole debate headless with `claude -p`, showing its progress.
///
/// Takes the options of `anvil start`. With --interactive, each pause asks you at the terminal
/// how to steer the next round (a line of text; Enter continues, `synthesize` concludes); a
/// debater's `anvil ask` question is asked here too. Without a terminal, answers are read from
/// stdin, one line each. The report's path is printed on stdout at the end.
///
///   anvil run "Should we adopt GraphQL?" --rounds 2 --interactive
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    debate: DebateArgs,

    /// The Claude Code CLI to run [default: $ANVIL_CLAUDE_BIN, else `claude` on PATH].
    #[arg(long, value_name = "PATH")]
    claude: Option<PathBuf>,

    /// An extra argument for claude, e.g. --claude-arg=--model --claude-arg=sonnet (repeat).
    #[arg(long = "claude-arg", value_name = "ARG", allow_hyphen_values = true)]
    claude_args: Vec<String>,
}

/// What one `claude -p` run reported.
#[derive(Default)]
struct Usage {
    input: u64,
    output: u64,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let claude = args
        .claude
        .or_else(|| std::env::var_os("ANVIL_CLAUDE_BIN").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("claude"));
    let session = new_session_id();
    let started = super::start::create(ctx, &home, args.debate, Some(&session))?;
    let line = started.line.clone();
    let state = started.state;
    anvil::debate::drive_headless(&home, &line)?;

    // Claude needs anvil's Stop hook: the project's own if installed, else one for this run.
    let settings = if anvil::install::has_stop_hook(&home.project().join(".claude")) {
        None
    } else {
        let mut file = tempfile::Builder::new()
            .prefix("anvil-run-settings")
            .suffix(".json")
            .tempfile()?;
        let json = anvil::install::hook_settings(&anvil::install::local_hook_program());
        std::io::Write::write_all(&mut file, json.to_string().as_bytes())?;
        Some(file)
    };

    say(&format!("anvil: running {line} with {}", claude.display()));
    let began = Instant::now();
    let mut usage = Usage::default();
    let mut prompt = started.prompt;
    let mut resume = false;
    let allowed = allowed_tools(&state.setup);
    loop {
        let child = spawn_claude(
            &claude,
            home.project(),
            &prompt,
            &session,
            resume,
            settings.as_ref().map(|f| f.path()),
            &allowed,
            &args.claude_args,
        )?;
        let segment = watch(child, &home, &line, began)?;
        usage.input += segment.input;
        usage.output += segment.output;
        let state = State::load(&home.state_path(&line))?;
        match (state.progress.status, state.progress.phase) {
            (Status::Done, _) => break,
            (Status::Active, Role::InteractivePause) => {
                let steering = read_line(&format!(
                    "Round {} is over. Steer round {} (Enter: continue, `synthesize`: conclude now): ",
                    state.progress.round,
                    state.progress.round + 1
                ))?;
                let steering = if steering.trim().is_empty() {
                    "continue".to_owned()
                } else {
                    steering
                };
                let text = format!(
                    "Steered at the terminal by the human.\n\n<anvil-steering>{}</anvil-steering>",
                    steering.trim()
                );
                match anvil::debate::record_turn(&home, &line, &session, &text)? {
                    Reply::Block { prompt: next, .. } => {
                        prompt = next;
                        resume = true;
                    }
                    _ => break,
                }
            }
            (status, phase) => {
                return Err(CliError::new(format!(
                    "claude stopped before the debate finished ({} at round {}, {})",
                    status.name(),
                    state.progress.round,
                    phase.name()
                ))
                .hint(format!("continue it with `anvil resume {line}`")));
            }
        }
    }
    let state = State::load(&home.state_path(&line))?;
    let report = anvil::report::output_path(&home, &state);
    say(&format!(
        "anvil: {line} done in {:.0?} · {} phases · tokens in {} out {}",
        began.elapsed(),
        state.progress.step,
        usage.input,
        usage.output
    ));
    out(&format!("{}\n", report.display()))
}

/// What the headless session may do without asking, which `claude -p` cannot: exactly what
/// the debate needs. The project's own `permissions.allow` is no help here, since Claude Code
/// ignores it in a workspace the user has not trusted (a fresh checkout, a CI run).
///
/// Claude Code matches a `Bash(PREFIX:*)` rule against the start of each command (each part
/// of a command line joined with `&&`, `;` or `|` separately), so `Bash(anvil ask:*)` lets a
/// debater run `anvil ask "…"` and nothing else. The prompts name the command `anvil`; the
/// rule for the path this binary was started by covers a debater that copies it from a
/// message, and `PATH` (see [`spawn_claude`]) makes `anvil` this very binary.
fn allowed_tools(setup: &anvil::state::Setup) -> Vec<String> {
    let mut allowed = Vec::new();
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
fn spawn_claude(
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
    command
        .arg("-p")
        .arg(prompt)
        .args(["--output-format", "json"]);
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
    // `anvil` in a debater's command is this binary, wherever it was started from.
    if let Some(path) = path_with_this_binary() {
        command.env("PATH", path);
    }
    command
        .args(extra)
        .current_dir(cwd)
        .env(anvil::install::BLOCK_CAP_VAR, anvil::install::BLOCK_CAP)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    command.spawn().map_err(|e| {
        CliError::new(format!("cannot run {}: {e}", claude.display()))
            .hint("install Claude Code, or point --claude (or $ANVIL_CLAUDE_BIN) at it")
    })
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

/// Follows one claude run to its end: progress on stderr, questions asked at the terminal.
fn watch(mut child: Child, home: &Home, line: &LineRef, began: Instant) -> Result<Usage, CliError> {
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let mut progress = Progress::new(home, line, began);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if let Some(state) = progress.look(home, line)
            && let Some(question) = state.question.as_ref().filter(|q| q.answer.is_none())
        {
            let answer = read_line(&format!(
                "The debater asks: {}\n> ",
                anvil::term::visible(&question.text)
            ))?;
            let answer = if answer.trim().is_empty() {
                "(no answer; state your assumption)".to_owned()
            } else {
                answer
            };
            anvil::ask::answer(home, line, &answer)?;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // Phases that ended after the last look are shown too.
    progress.look(home, line);
    let text = reader.join().unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if !status.success() || json["is_error"].as_bool() == Some(true) {
        return Err(CliError::new(format!(
            "claude failed ({status}): {}",
            json["result"].as_str().unwrap_or(text.trim())
        ))
        .hint(format!(
            "the debate is saved; continue it with `anvil resume {line}`"
        )));
    }
    Ok(Usage {
        input: json["usage"]["input_tokens"].as_u64().unwrap_or(0),
        output: json["usage"]["output_tokens"].as_u64().unwrap_or(0),
    })
}

/// Progress lines on stderr: one per phase, even for a phase that began and ended between two
/// looks at the state file (those are read from the record).
struct Progress {
    began: Instant,
    /// The last phase shown (phases are numbered from 1).
    shown: u32,
    last: String,
}

impl Progress {
    fn new(home: &Home, line: &LineRef, began: Instant) -> Progress {
        let shown = State::load(&home.state_path(line)).map_or(0, |s| s.progress.step);
        Progress {
            began,
            shown,
            last: String::new(),
        }
    }

    /// Shows what happened since the last look; returns the state it saw.
    fn look(&mut self, home: &Home, line: &LineRef) -> Option<State> {
        let state = State::load(&home.state_path(line)).ok()?;
        let planned = anvil::machine::planned_phases(&state.setup);
        let stamp = format!("[{:>5.1}s]", self.began.elapsed().as_secs_f64());
        for (step, label) in phases_between(home, &state, self.shown) {
            let label = anvil::term::visible(&label);
            say(&format!("{stamp} {label} (phase {step} of {planned})"));
            self.shown = step;
        }
        let current = state.progress.step + 1;
        let now = format!(
            "{} (phase {current} of {planned})",
            anvil::term::visible(&state.standing())
        );
        if !state.progress.status.is_over() && (current > self.shown || now != self.last) {
            say(&format!("{stamp} {now}"));
            self.shown = self.shown.max(current);
            self.last = now;
        }
        Some(state)
    }
}

/// The phases recorded after phase `after` up to where `state` stands, as progress labels.
fn phases_between(home: &Home, state: &State, after: u32) -> Vec<(u32, String)> {
    if state.progress.step <= after {
        return Vec::new();
    }
    let Ok(record) = anvil::record::Record::open(&home.record_dir()) else {
        return Vec::new();
    };
    let line = LineRef::new(&state.debate, &state.line);
    let Ok(history) = anvil::history::LineHistory::load(&record, &line) else {
        return Vec::new();
    };
    history
        .entries
        .iter()
        .filter(|e| e.step > after && e.step <= state.progress.step)
        .filter_map(|e| {
            e.role.map(|role| {
                (
                    e.step,
                    anvil::state::phase_label(role, e.round, state.setup.rounds),
                )
            })
        })
        .collect()
}

/// Asks on stderr and reads one line of stdin; end of input counts as an empty answer.
fn read_line(question: &str) -> Result<String, CliError> {
    eprint!("{question}");
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer.trim_end_matches(['\n', '\r']).to_owned())
}

/// A random version-4 UUID for the Claude Code session anvil runs.
fn new_session_id() -> String {
    use std::hash::BuildHasher;
    let random = |salt: u64| {
        std::collections::hash_map::RandomState::new().hash_one((
            salt,
            std::process::id(),
            std::time::SystemTime::now(),
        ))
    };
    let (a, b) = (random(1), random(2));
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        0x8000 | (b >> 48 & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(autonomy: u8, research: bool) -> anvil::state::Setup {
        let mut setup: anvil::state::Setup = serde_json::from_value(
            serde_json::json!({ "question": "Q?", "mode": "analyst", "rounds": 1 }),
        )
        .unwrap();
        setup.autonomy = autonomy;
        setup.research = research;
        setup
    }

    #[test]
    fn the_headless_session_may_run_only_what_the_debate_needs() {
        assert!(allowed_tools(&setup(0, false)).is_empty());
        assert_eq!(allowed_tools(&setup(5, false)), ["Bash(anvil ask:*)"]);
        assert_eq!(
            allowed_tools(&setup(1, true)),
            ["Bash(anvil ask:*)", "WebSearch", "WebFetch"]
        );
    }
}
