//! Seats: a role of a debate played by another agent — Claude Code, OpenAI's Codex CLI,
//! GitHub's Copilot CLI or Qwen Code — run headless in a session of its own.
//!
//! One small trait, [`Adapter`], says how to run a turn of one agent (a prompt, in a session
//! it creates or resumes, read-only) and how to read back what it said and what it cost, from
//! the agent's own JSON output or transcript. [`play`] runs any adapter the same way: in a
//! process group of its own, killed whole after a timeout, its failures told apart (missing
//! binary, exit status, timeout, empty reply) with the agent's own last words. The rest of
//! anvil never asks which agent played.
//!
//! anvil never writes another agent's configuration: each runs as the person configured it
//! (login, provider, base URL), with only what a headless, read-only turn needs on its
//! command line. A seat's process carries `ANVIL_SEAT` in its environment, so that anvil's own
//! hooks, if the project has them, leave its sessions alone.

mod claude;
mod codex;
mod copilot;
mod guard;
mod qwen;
mod ready;
mod run;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::record::usage::Usd;

pub use guard::{GUARD_WORD, guard};
pub use ready::{Readiness, check, check_all};
pub use run::{Ran, play};

/// The environment variable a seat's process carries: anvil's hooks do nothing in it.
pub const SEAT_VAR: &str = "ANVIL_SEAT";

/// How long a seat's turn may take unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// An agent that can take a seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    Claude,
    Codex,
    Copilot,
    Qwen,
}

impl Agent {
    pub const ALL: [Agent; 4] = [Agent::Claude, Agent::Codex, Agent::Copilot, Agent::Qwen];

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
        }
    }

    /// The product, for people.
    pub fn title(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex CLI",
            Agent::Copilot => "Copilot CLI",
            Agent::Qwen => "Qwen Code",
        }
    }

    pub fn parse(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The variable that names its binary (`ANVIL_CODEX_BIN`, …); else it is found on `PATH`
    /// by its name.
    pub fn bin_var(self) -> &'static str {
        match self {
            Agent::Claude => "ANVIL_CLAUDE_BIN",
            Agent::Codex => "ANVIL_CODEX_BIN",
            Agent::Copilot => "ANVIL_COPILOT_BIN",
            Agent::Qwen => "ANVIL_QWEN_BIN",
        }
    }

    /// The binary to run: `$ANVIL_<AGENT>_BIN`, else its name (looked up on `PATH`).
    pub fn program(self) -> PathBuf {
        std::env::var_os(self.bin_var())
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from(self.name()), PathBuf::from)
    }

    /// What the agent may do in a seat, for people (the README says the same).
    pub fn allowed(self) -> &'static str {
        match self {
            Agent::Claude => "plan mode (`--permission-mode plan`): reads, searches, no edits",
            Agent::Codex => "`--sandbox read-only`: commands run, nothing written",
            Agent::Copilot => {
                "plan mode (`--mode plan`): reads and searches, no change outside its session folder"
            }
            Agent::Qwen => {
                "plan mode (`--approval-mode plan`): reads and searches, no edits or shell"
            }
        }
    }

    /// Its adapter.
    pub fn adapter(self) -> &'static dyn Adapter {
        match self {
            Agent::Claude => &claude::Claude,
            Agent::Codex => &codex::Codex,
            Agent::Copilot => &copilot::Copilot,
            Agent::Qwen => &qwen::Qwen,
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `AGENT[:MODEL]`: who plays a seat, and with which model (else the agent's own default).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Seat {
    pub agent: Agent,
    pub model: Option<String>,
}

impl Seat {
    pub fn parse(text: &str) -> Result<Seat, String> {
        let (agent, model) = match text.split_once(':') {
            Some((agent, model)) => (agent.trim(), Some(model.trim())),
            None => (text.trim(), None),
        };
        let agent = Agent::parse(agent).ok_or_else(|| {
            format!(
                "unknown agent `{agent}` (expected one of: {})",
                Agent::ALL.map(Agent::name).join(", ")
            )
        })?;
        if model.is_some_and(str::is_empty) {
            return Err(format!("`{text}` names no model after the colon"));
        }
        Ok(Seat {
            agent,
            model: model.map(str::to_owned),
        })
    }
}

impl std::fmt::Display for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.model {
            Some(model) => write!(f, "{}:{model}", self.agent),
            None => write!(f, "{}", self.agent),
        }
    }
}

impl TryFrom<String> for Seat {
    type Error = String;
    fn try_from(text: String) -> Result<Seat, String> {
        Seat::parse(&text)
    }
}

impl From<Seat> for String {
    fn from(seat: Seat) -> String {
        seat.to_string()
    }
}

/// One turn to play.
#[derive(Debug, Clone)]
pub struct Turn<'a> {
    /// The project: the agent reads it, never changes it.
    pub cwd: &'a Path,
    pub prompt: &'a str,
    /// The session to resume, or `None` for a new one.
    pub resume: Option<&'a str>,
    pub model: Option<&'a str>,
    pub timeout: Duration,
    /// The role, for the seat's environment (`ANVIL_SEAT`).
    pub role: &'a str,
    /// The program that guards the agent ([`guard`]): the running anvil binary, whose
    /// `seat-guard` mode kills the agent's whole process group when this process ends, however
    /// it ends. `None` runs the agent directly (it then outlives a killed caller).
    pub guard: Option<&'a Path>,
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
    pub agent: Agent,
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
    #[error("{agent} is not installed: cannot run `{program}` ({reason}); install it, or name its binary in ${var}", var = agent.bin_var())]
    Missing {
        agent: Agent,
        program: String,
        reason: String,
    },
    #[error("{agent} failed ({status}){}", words(last_words))]
    Failed {
        agent: Agent,
        status: String,
        last_words: String,
    },
    #[error("{agent} did not answer within {} s and was stopped{}", after.as_secs(), words(last_words))]
    TimedOut {
        agent: Agent,
        after: Duration,
        last_words: String,
    },
    #[error("{agent} ended its turn without a reply{}", words(last_words))]
    Empty { agent: Agent, last_words: String },
}

fn words(last_words: &str) -> String {
    if last_words.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", last_words.trim())
    }
}

impl SeatError {
    pub fn agent(&self) -> Agent {
        match self {
            SeatError::Missing { agent, .. }
            | SeatError::Failed { agent, .. }
            | SeatError::TimedOut { agent, .. }
            | SeatError::Empty { agent, .. } => *agent,
        }
    }
}

/// One agent CLI, run headless. Implementations build the command line and read the result;
/// [`play`] does the running.
pub trait Adapter: Sync {
    fn agent(&self) -> Agent;

    /// The arguments of one read-only, headless turn. `session` is the id of a new session
    /// when the agent lets its caller choose one (see [`Adapter::names_sessions`]).
    fn args(&self, turn: &Turn<'_>, session: Option<&str>) -> Vec<String>;

    /// Whether anvil names a new session (`--session-id`), or the agent does (Codex).
    fn names_sessions(&self) -> bool {
        true
    }

    /// Reads the turn's result from what the agent printed and wrote. `session` is the one
    /// named or resumed, if known before the run. `Err` carries the agent's last words when
    /// its output says the turn failed.
    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String>;

    /// `--version`'s output, made short (`0.169.0`).
    fn version(&self) -> Result<String, SeatError> {
        run::version(self.agent())
    }
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
    fn a_seat_is_an_agent_and_maybe_a_model() {
        assert_eq!(
            Seat::parse("codex:gpt-5.4").unwrap(),
            Seat {
                agent: Agent::Codex,
                model: Some("gpt-5.4".into())
            }
        );
        assert_eq!(Seat::parse("qwen").unwrap().model, None);
        assert_eq!(
            Seat::parse("claude:opus").unwrap().to_string(),
            "claude:opus"
        );
        assert!(
            Seat::parse("gemini")
                .unwrap_err()
                .contains("unknown agent `gemini`")
        );
        assert!(Seat::parse("codex:").unwrap_err().contains("no model"));
    }

    #[test]
    fn last_words_are_the_end_of_what_was_said() {
        assert_eq!(last_words("a\n\n b \nc\nd\ne\n"), "b · c · d · e");
        assert_eq!(last_words(""), "");
        assert!(last_words(&"x".repeat(700)).starts_with('…'));
    }
}
