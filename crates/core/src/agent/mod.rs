//! Other agents: everything anvil knows of an agent CLI (Claude Code, OpenAI's Codex CLI and
//! the others of [`AGENTS`]), one file per agent behind one small trait, [`Agent`].
//!
//! An agent's file says who it is (its name and title, how its binary is found), how to run a
//! headless, read-only turn of it and resume one, how to read back what the turn said and
//! cost (reply, tokens, price, model, version: from its JSON, its events or its own session
//! files), whether it is installed and signed in here, and what it may do in a seat. Nothing
//! outside its file knows any of that: [`play`] runs any agent the same way (a process group
//! of its own, killed whole after a timeout, its failures told apart with the agent's own last
//! words), and the rest of anvil asks only [`AGENTS`], the list written once below, from which
//! `--seat`'s help, `anvil seats`, the error messages and `docs/agents.md` are made.
//!
//! The trait is the seat side of an agent. What else an agent can do fits beside it, in the
//! same file, as an optional capability the runner and the hosts ask for (a default method
//! answering `None`), so that none of the trait's users changes when one arrives. An agent
//! whose output is a stream of events says what each line holds ([`Agent::live`]); the runner
//! hands it, as the turn runs, to whoever watches ([`Turn::watch`]: `anvil run` showing a
//! phase live). An agent that hosts a debate says, the same way ([`Agent::host`], [`host`]),
//! how its stop is recognised, where its turn's text and figures are, its cap and its install. An agent whose
//! turn anvil plays itself (a model behind an OpenAI-compatible endpoint, no CLI:
//! [`endpoint`]) is an agent whose [`Agent::program`] is the `anvil` binary with a subcommand
//! that reads the turn and prints JSON: the runner treats it like any other program, and its
//! HTTP client stays out of the hook's binary. The presets are files and lines of the list
//! like the CLIs; an endpoint named in the config is resolved against it when a seat names it
//! ([`endpoint::resolve`]), not listed a second time.
//!
//! anvil never writes another agent's configuration: each runs as the person configured it
//! (login, provider, base URL), with only what a headless, read-only turn needs on its
//! command line. A seat's process carries `ANVIL_SEAT` in its environment, so that anvil's own
//! hooks, if the project has them, leave its sessions alone.

pub mod argv;
pub mod endpoint;
pub mod env;
mod guard;
pub mod host;
mod ready;
mod run;
pub mod text;

use std::path::PathBuf;
use std::time::Duration;

use crate::record::usage::Usd;

pub use guard::{GUARD_WORD, guard};
pub use ready::{Readiness, check, check_all};
pub use run::{Ran, known_version, play, version};

// The agents, one file each. (Declared here, not by a macro that also lists them: rustfmt
// formats only the modules it sees declared.)
mod claude;
mod codex;
mod copilot;
mod gemini;
mod lmstudio;
mod ollama;
mod openai;
mod opencode;
mod openrouter;
mod qwen;

/// Every agent anvil can seat, in the order of `--help`, `anvil seats` and the docs: the one
/// list. Adding an agent is its file, its `mod` line above and its line here (an endpoint
/// preset: a `static` [`Endpoint`] of its file).
pub static AGENTS: &[&dyn Agent] = &[
    &claude::Claude,
    &codex::Codex,
    &copilot::Copilot,
    &qwen::Qwen,
    &gemini::Gemini,
    &opencode::OpenCode,
    &openai::OPENAI,
    &openrouter::OPENROUTER,
    &ollama::OLLAMA,
    &lmstudio::LMSTUDIO,
];

/// The agent `anvil run` hosts a debate in (`claude -p`), which also drafts a blind opening for
/// a role without a seat.
pub static RUN_HOST: &dyn Agent = &claude::Claude;

/// The environment variable a seat's process carries: anvil's hooks do nothing in it.
pub const SEAT_VAR: &str = "ANVIL_SEAT";

/// How long a seat's turn may take unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest a seat's turn may be given, in seconds: a day. A longer timeout, from a
/// committed config or the environment, is no timeout a person meant, and sums of durations
/// built on it must not overflow.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// The agent named `name` (`codex`).
pub fn find(name: &str) -> Option<&'static dyn Agent> {
    AGENTS.iter().copied().find(|a| a.name() == name)
}

/// The agents' names, for people: `claude, codex, copilot, …, ollama or lmstudio`.
pub fn names() -> String {
    let names: Vec<&str> = AGENTS.iter().map(|a| a.name()).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// One agent CLI: who it is, how a headless, read-only turn of it runs, and how to read what
/// the turn left. Implementations build the command line and read the result; [`play`] does
/// the running. Each lives in the agent's own file.
pub trait Agent: Sync + Send {
    /// Who it is and what it may do in a seat: the facts of its file.
    fn about(&self) -> &'static About;

    /// Its name on the command line and in the record (`codex`).
    fn name(&self) -> &'static str {
        self.about().name
    }

    /// The product, for people (`Codex CLI`).
    fn title(&self) -> &'static str {
        self.about().title
    }

    /// What it may do in a seat, for people: its read-only or plan mode.
    fn allowed(&self) -> &'static str {
        self.about().allowed
    }

    /// The variable that names its binary (`ANVIL_CODEX_BIN`); else it is found on `PATH` by
    /// its name.
    fn bin_var(&self) -> String {
        format!("ANVIL_{}_BIN", self.name().to_uppercase())
    }

    /// The binary to run: `$ANVIL_<AGENT>_BIN`, else its name (looked up on `PATH`).
    fn program(&self) -> PathBuf {
        std::env::var_os(self.bin_var())
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from(self.name()), PathBuf::from)
    }

    /// The arguments of one read-only, headless turn, without its prompt: the prompt reaches
    /// the agent on its stdin, never in its arguments (where `ps` would show it to every
    /// user, and an argument is capped at 128 KiB). `session` is the id of a new session when
    /// the agent lets its caller choose one (see [`Agent::names_sessions`]), else the one
    /// resumed. The turn's model and session were checked ([`Agent::check_model`],
    /// [`Agent::check_session`]); the arguments still pass each glued to its flag or after
    /// `--`, where nothing can read it as an option.
    fn args(&self, turn: &Turn<'_>, session: Option<&str>) -> Vec<String>;

    /// The prompt as the agent must be handed it on stdin to take all of it as text: some
    /// read an `@path` in a prompt as a file to inline, or a leading `/` as a command of
    /// theirs ([`text`]). A debater's text, quoted in the next prompt, must not make the next
    /// agent read a file and send it to its provider.
    fn prompt_as_text<'p>(&self, prompt: &'p str) -> std::borrow::Cow<'p, str> {
        prompt.into()
    }

    /// Whether anvil names a new session (`--session-id`), or the agent does (Codex).
    fn names_sessions(&self) -> bool {
        true
    }

    /// Refuses a model's name that its command line could read as anything but a model.
    fn check_model(&self, model: &str) -> Result<(), String> {
        argv::check_model(model)
    }

    /// Refuses a session id (made by anvil, or reported by the agent and read back from the
    /// record) that is not of the agent's shape.
    fn check_session(&self, id: &str) -> Result<(), String> {
        argv::check_uuid(id)
    }

    /// The environment variables it reads for a turn with `model`, beside those any program
    /// needs ([`env::BASE`]): its own settings, its provider's key. A seat's process is given
    /// these and no others (see [`env`]).
    fn env(&self, _model: Option<&str>) -> Vec<String> {
        self.about().env.iter().map(|v| (*v).to_owned()).collect()
    }

    /// The model a turn that names none plays with, from the agent's own settings, for an
    /// agent whose output does not say which model answered (the runner records the turn's
    /// model, else this one).
    fn default_model(&self) -> Option<String> {
        None
    }

    /// Variables anvil sets for its turn whatever the environment holds: what keeps it
    /// headless, read-only and quiet where no flag does.
    fn sets(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// What one line of its output says of the turn, read as it arrives, for an agent whose
    /// output is a stream of events: `anvil run` can show a phase while it is played. `None`
    /// for a line that says nothing a person would read, and for an agent that prints its
    /// result once, at the end.
    fn live(&self, _line: &str) -> Option<Live> {
        None
    }

    /// Reads the turn's result from what the agent printed and wrote. `session` is the one
    /// named or resumed, if known before the run. `Err` carries the agent's last words when
    /// its output says the turn failed.
    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String>;

    /// How it would reach a model headless here (`Ok`: signed in, a key or a provider set),
    /// or what seems to be missing (`Err`), told from its own files and the environment
    /// without sending a request anywhere.
    fn signed_in(&self) -> Result<String, String>;

    /// What to say when its program `program` cannot be started, for `reason`.
    fn missing(&self, program: &str, reason: &str) -> String {
        format!(
            "{} is not installed: cannot run `{program}` ({reason}); install it, or name its \
             binary in ${}",
            self.name(),
            self.bin_var()
        )
    }

    /// The endpoint behind it, when anvil plays its turns itself over HTTP
    /// ([`endpoint::Endpoint`]).
    fn endpoint(&self) -> Option<&endpoint::Endpoint> {
        None
    }

    /// Its host side, when a debate can run in its sessions through a Stop hook of its own
    /// ([`host`]; Claude Code's is the rest of anvil).
    fn host(&self) -> Option<&'static dyn host::Host> {
        None
    }
}

/// What an agent's file says of it, beside how it runs.
#[derive(Debug)]
pub struct About {
    /// Its name on the command line and in the record (`codex`); also its binary's name.
    pub name: &'static str,
    /// The product, for people (`Codex CLI`).
    pub title: &'static str,
    /// What it may do in a seat, for people: its read-only or plan mode.
    pub allowed: &'static str,
    /// The environment variables it reads ([`Agent::env`]): names, or prefixes ending in
    /// `*`.
    pub env: &'static [&'static str],
    /// What else it is given, for people, when its file finds more in the agent's own
    /// settings (the variable its provider's key is read from); empty when nothing.
    pub env_more: &'static str,
}

impl std::fmt::Debug for dyn Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for dyn Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Agents are the same when their names are.
impl PartialEq for dyn Agent {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for dyn Agent {}

impl std::hash::Hash for dyn Agent {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

/// What an agent said while its turn runs ([`Agent::live`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Live {
    /// A piece of its reply: a message it finished, whole (the agents whose events say each
    /// message once it is written). It does not run on from the text before it.
    Text(String),
    /// A message begins, to be written a few words at a time ([`Live::More`]); the model
    /// that writes it, when the agent names it.
    Begins { model: Option<String> },
    /// More of the message begun, as it is written.
    More(String),
    /// The agent's version, as it says it at its start.
    Version(String),
}

/// One turn to play.
#[derive(Clone)]
pub struct Turn<'a> {
    /// The project: the agent reads it, never changes it.
    pub cwd: &'a std::path::Path,
    pub prompt: &'a str,
    /// The session to resume, or `None` for a new one.
    pub resume: Option<&'a str>,
    pub model: Option<&'a str>,
    pub timeout: Duration,
    /// The role, for the seat's environment (`ANVIL_SEAT`).
    pub role: &'a str,
    /// What the config passes to a seat beside what its agent reads (`[seats] env`).
    pub pass_env: &'a [String],
    /// Handed what the agent says while its turn runs ([`Agent::live`]), when someone shows
    /// it.
    pub watch: Option<&'a (dyn Fn(Live) + Sync)>,
    /// The program that guards the agent ([`guard`]): the running anvil binary, whose
    /// `seat-guard` mode kills the agent's whole process group when this process ends, however
    /// it ends. `None` runs the agent directly (it then outlives a killed caller).
    pub guard: Option<&'a std::path::Path>,
}

/// Tokens of a turn, as the agent counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// Input served from the provider's cache.
    pub cache_read: u64,
    /// Input written to it (Claude only).
    pub cache_write: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input + self.output
    }
}

/// What a seat's turn said and cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Played {
    pub agent: &'static dyn Agent,
    pub text: String,
    /// The session, to resume for the seat's next turn.
    pub session: String,
    pub agent_version: Option<String>,
    pub model: Option<String>,
    pub tokens: Tokens,
    /// The price, where the agent reports one in dollars (Claude Code).
    pub cost: Option<Usd>,
    pub duration_ms: u64,
}

/// How a seat failed. Each says what the agent said last, when it said anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeatError {
    #[error("{}", agent.missing(program, reason))]
    Missing {
        agent: &'static dyn Agent,
        program: String,
        reason: String,
    },
    #[error("{agent} failed ({status}){}", words(last_words))]
    Failed {
        agent: &'static dyn Agent,
        status: String,
        last_words: String,
    },
    #[error("{agent} did not answer within {} s and was stopped{}", after.as_secs(), words(last_words))]
    TimedOut {
        agent: &'static dyn Agent,
        after: Duration,
        last_words: String,
    },
    #[error("{agent} ended its turn without a reply{}", words(last_words))]
    Empty {
        agent: &'static dyn Agent,
        last_words: String,
    },
    #[error("{agent} was not run: {reason}")]
    Refused {
        agent: &'static dyn Agent,
        reason: String,
    },
}

fn words(last_words: &str) -> String {
    if last_words.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", last_words.trim())
    }
}

impl SeatError {
    pub fn agent(&self) -> &'static dyn Agent {
        match self {
            SeatError::Missing { agent, .. }
            | SeatError::Failed { agent, .. }
            | SeatError::TimedOut { agent, .. }
            | SeatError::Empty { agent, .. }
            | SeatError::Refused { agent, .. } => *agent,
        }
    }
}

/// The arguments of a headless turn as most agents take them: `flags`, then `--resume=ID` for
/// a session resumed or `--session-id=ID` for a new one that anvil names, and
/// `--model=MODEL`. Each value is glued to its flag, where no agent reads it as an option.
pub(crate) fn headless_args(flags: &[&str], turn: &Turn<'_>, session: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = flags.iter().map(|f| (*f).to_owned()).collect();
    match (turn.resume, session) {
        (Some(id), _) => args.push(format!("--resume={id}")),
        (None, Some(id)) => args.push(format!("--session-id={id}")),
        (None, None) => {}
    }
    if let Some(model) = turn.model {
        args.push(format!("--model={model}"));
    }
    args
}

/// The last few non-empty lines of `text`, at most 600 characters: what an agent said last.
pub(crate) fn last_words(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(4)..].join(" · ");
    if tail.chars().count() > 600 {
        let skip = tail.chars().count() - 600;
        format!("…{}", tail.chars().skip(skip).collect::<String>())
    } else {
        tail
    }
}

/// The home of an agent's files: `$VAR` when set, else `~/DIR`.
pub(crate) fn agent_home(var: &str, dir: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(dir)))
}

/// The lines of a JSONL text that parse.
/// What a line of the `stream-json` events that Claude Code and Qwen Code print (with
/// `--include-partial-messages`) says while their turn runs: `system`'s `init` names the
/// version (under `version_key`), a `stream_event` a message's start (with its model) or a
/// piece of its text. A subagent's events (those with a `parent_tool_use_id`) are its own.
pub(crate) fn stream_json_live(line: &str, version_key: &str) -> Option<Live> {
    let event: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    if !event["parent_tool_use_id"].is_null() {
        return None;
    }
    let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
    match event["type"].as_str()? {
        "system" if event["subtype"] == "init" => text(&event[version_key]).map(Live::Version),
        "stream_event" => {
            let inner = &event["event"];
            match inner["type"].as_str()? {
                "message_start" => Some(Live::Begins {
                    model: text(&inner["message"]["model"]),
                }),
                "content_block_delta" if inner["delta"]["type"] == "text_delta" => {
                    text(&inner["delta"]["text"]).map(Live::More)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The JSON events of an agent's output: one array (`-o json`), one object, or JSON lines.
pub(crate) fn events(stdout: &str) -> Vec<serde_json::Value> {
    match serde_json::from_str::<serde_json::Value>(stdout.trim()) {
        Ok(serde_json::Value::Array(events)) => events,
        Ok(one @ serde_json::Value::Object(_)) => vec![one],
        _ => jsonl(stdout).collect(),
    }
}

pub(crate) fn jsonl(text: &str) -> impl Iterator<Item = serde_json::Value> + '_ {
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
}

/// A new random session id (a version-4 UUID).
pub fn new_session_id() -> String {
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

    #[test]
    fn agents_are_found_by_name_and_listed_once() {
        assert_eq!(find("codex").map(|a| a.title()), Some("Codex CLI"));
        assert!(find("gemini-pro").is_none());
        let names = names();
        assert!(names.starts_with("claude, codex, "), "{names}");
        let last = AGENTS.last().unwrap().name();
        assert!(names.ends_with(&format!(" or {last}")), "{names}");
        let mut seen: Vec<&str> = AGENTS.iter().map(|a| a.name()).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), AGENTS.len(), "each agent once");
    }

    /// Adding an agent is its file and its two lines in this one: each file of this room that
    /// implements [`Agent`] (or makes an endpoint preset) is named for its agent and is in
    /// [`AGENTS`], and each agent of the list has its file. `endpoint.rs` is what the presets
    /// share, no agent.
    #[test]
    fn each_agent_is_its_file_and_its_line_in_the_list() {
        let room = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/agent");
        let mut files: Vec<String> = std::fs::read_dir(&room)
            .unwrap()
            .flatten()
            .filter(|e| {
                // An agent outside the file's tests.
                std::fs::read_to_string(e.path()).is_ok_and(|t| {
                    let code = t.split("#[cfg(test)]").next().unwrap_or_default();
                    code.contains("impl Agent for ") || code.contains("Endpoint::preset(")
                })
            })
            .map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_owned()
            })
            .filter(|stem| stem != "mod" && stem != "endpoint")
            .collect();
        files.sort();
        let mut listed: Vec<String> = AGENTS.iter().map(|a| a.name().to_owned()).collect();
        listed.sort();
        assert_eq!(
            files, listed,
            "the agents' files and the list in agent/mod.rs"
        );
    }

    #[test]
    fn last_words_are_the_end_of_what_was_said() {
        assert_eq!(last_words("a\n\n b \nc\nd\ne\n"), "b · c · d · e");
        assert_eq!(last_words(""), "");
        assert!(last_words(&"x".repeat(700)).starts_with('…'));
    }
}

/// What each agent's file hears in its agent's own output, captured from the pinned CLIs
/// (`testdata/`: one turn answering "Hello **there** my friend,\n\n# A heading\n\nsome more
/// words here " through a model server that streams it a few words at a time).
#[cfg(test)]
mod live {
    use super::*;

    const SAID: &str = "Hello **there** my friend,\n\n# A heading\n\nsome more words here ";

    /// Everything `agent` says live in `output`: the text (each message's start as `¶`), the
    /// models and the versions named.
    fn heard(agent: &str, output: &str) -> (String, Vec<String>, Vec<String>) {
        let agent = find(agent).unwrap();
        let (mut text, mut models, mut versions) = (String::new(), Vec::new(), Vec::new());
        for line in output.lines() {
            match agent.live(line) {
                Some(Live::Text(t)) => {
                    text.push('¶');
                    text.push_str(&t);
                }
                Some(Live::Begins { model }) => {
                    text.push('¶');
                    models.extend(model);
                }
                Some(Live::More(t)) => text.push_str(&t),
                Some(Live::Version(v)) => versions.push(v),
                None => {}
            }
        }
        (text, models, versions)
    }

    #[test]
    fn claude_code_is_heard_word_by_word_on_both_pinned_clients() {
        for (output, version) in [
            (
                include_str!("testdata/claude-2.1.197-stream.jsonl"),
                "2.1.197",
            ),
            (
                include_str!("testdata/claude-2.1.332-stream.jsonl"),
                "2.1.332",
            ),
        ] {
            let (text, models, versions) = heard("claude", output);
            assert_eq!(text, format!("¶{SAID}"), "{version}");
            assert_eq!(models.len(), 1, "{version}: {models:?}");
            assert_eq!(versions, [version]);
        }
    }

    #[test]
    fn copilot_and_qwen_code_are_heard_word_by_word() {
        let copilot = include_str!("testdata/copilot-1.0.102.jsonl");
        assert_eq!(
            heard("copilot", copilot),
            (format!("¶{SAID}"), vec![], vec![])
        );
        let qwen = include_str!("testdata/qwen-0.24.4-stream.jsonl");
        assert_eq!(
            heard("qwen", qwen),
            (
                format!("¶{SAID}"),
                vec!["m1".to_owned()],
                vec!["0.24.4".to_owned()]
            )
        );
    }

    #[test]
    fn gemini_cli_is_heard_word_by_word() {
        let gemini = include_str!("testdata/gemini-0.61.0-stream.jsonl");
        assert_eq!(
            heard("gemini", gemini),
            (format!("¶{SAID}"), vec!["m1".to_owned()], vec![])
        );
    }

    #[test]
    fn codex_is_heard_a_message_at_a_time() {
        let output = include_str!("testdata/codex-0.169.0-exec.jsonl");
        assert_eq!(heard("codex", output), (format!("¶{SAID}"), vec![], vec![]));
    }

    /// The turn's result is read from the same output the turn was heard in.
    #[test]
    fn a_streamed_turn_is_read_back_whole() {
        use std::os::unix::process::ExitStatusExt;
        for (agent, output, version) in [
            (
                "claude",
                include_str!("testdata/claude-2.1.332-stream.jsonl"),
                Some("2.1.332"),
            ),
            (
                "qwen",
                include_str!("testdata/qwen-0.24.4-stream.jsonl"),
                Some("0.24.4"),
            ),
            (
                "gemini",
                include_str!("testdata/gemini-0.61.0-stream.jsonl"),
                None,
            ),
        ] {
            let ran = Ran {
                status: std::process::ExitStatus::from_raw(0),
                stdout: output.to_owned(),
                stderr: String::new(),
                duration: Duration::ZERO,
            };
            let played = find(agent).unwrap().read(&ran, None).unwrap();
            assert_eq!(played.text, SAID, "{agent}");
            assert_eq!(played.agent_version.as_deref(), version, "{agent}");
            assert!(!played.session.is_empty(), "{agent}");
        }
    }
}
