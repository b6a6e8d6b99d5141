//! The errors of every change to a line: what the line transactions, and the commands built on
//! them, can fail with. Shared by `line/` and `claude/`, below both.
//!
//! A [`Refusal`] is the line (or the input) saying no: the request was understood and the
//! line's state does not allow it. Everything else in [`DebateError`] is a failure (a file, the
//! record, a template), with its cause kept as its source. Each refusal is a kind of its own,
//! with its [`Kind`] and its hint, so that the command line and the web room each map it once,
//! to an exit code or an HTTP status, instead of reading messages.

use std::path::PathBuf;

use crate::home::LineRef;
use crate::model::machine::MachineError;
use crate::model::prompt::PromptError;
use crate::model::state::{StateError, Status};
use crate::record::store::RecordError;
use crate::review::history::HistoryError;

#[derive(Debug, thiserror::Error)]
pub enum DebateError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    History(HistoryError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error("{what} {path}: {source}{}", crate::fsutil::advice_after(source.kind()))]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// `error` with every cause below it, each once: "cannot write X: No space left on device".
/// A cause whose words the text holds already (a message that quotes its source) is not
/// repeated, so an error reads the same whether or not its message names its cause.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    for cause in causes(error) {
        text.push_str(": ");
        text.push_str(&cause);
    }
    text
}

/// The causes of `error` that its own message (and those before them) do not already say,
/// outermost first.
pub fn causes(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut said = error.to_string();
    let mut out = Vec::new();
    let mut next = error.source();
    while let Some(cause) = next {
        let words = cause.to_string();
        if !words.is_empty() && !said.contains(&words) {
            said.push('\n');
            said.push_str(&words);
            out.push(words);
        }
        next = cause.source();
    }
    out
}

impl DebateError {
    /// The refusal this error is, if it is one.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            DebateError::Refused(r) => Some(r),
            _ => None,
        }
    }
}

impl From<HistoryError> for DebateError {
    /// A line the record does not have is the person's mistake; the rest is the record's.
    fn from(e: HistoryError) -> DebateError {
        match e {
            HistoryError::NoLine(line) => Refusal::NoLine(line).into(),
            HistoryError::Record(e) => DebateError::Record(e),
            HistoryError::State(e) => DebateError::State(e),
            other => DebateError::History(other),
        }
    }
}

/// What kind of no a [`Refusal`] is: what the command line's exit code and the web room's
/// HTTP status are made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// What was named does not exist.
    NotFound,
    /// The input says nothing (an empty text) or cannot be used (a name git refuses).
    BadInput,
    /// The line's state does not allow it now (over, waiting, taken).
    Conflict,
}

/// Why a change to a line was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("there is no line {0} in the record")]
    NoLine(LineRef),
    #[error("{0} exists already; try again")]
    IdTaken(LineRef),
    #[error("{0} exists already; pick another --name")]
    NameTaken(LineRef),
    #[error("'{0}' cannot name a line (letters, digits, '-', '_' and '.')")]
    BadName(String),
    #[error("{line} is already {status}")]
    AlreadyOver { line: LineRef, status: Status },
    #[error("nothing to steer with")]
    EmptySteering,
    #[error("--steer needs some text")]
    EmptyBranchSteering,
    #[error("{line} is {status}; there is nothing to steer")]
    SteerOver { line: LineRef, status: Status },
    #[error("{line} is writing its synthesis; steering can no longer reach it")]
    SteerTooLate { line: LineRef, round: u32 },
    #[error("the question is empty")]
    EmptyQuestion,
    #[error("{line} already waits for an answer to: {question}")]
    AlreadyAsking { line: LineRef, question: String },
    #[error("{line} is {status}; there is nobody to ask")]
    NobodyToAsk { line: LineRef, status: Status },
    #[error("{line} was {status} while waiting for the answer")]
    EndedWhileAsking { line: LineRef, status: Status },
    #[error("the answer is empty")]
    EmptyAnswer,
    #[error("{line} has no open question (it is {status})")]
    NoQuestion { line: LineRef, status: Status },
    #[error("{line} is {status}; the answer cannot reach it")]
    AnswerTooLate { line: LineRef, status: Status },
    #[error("{line} is {status}; nothing to resume")]
    NothingToResume { line: LineRef, status: Status },
    #[error("{at} is where {line} ended ({status})")]
    BranchFromEnd {
        at: String,
        line: LineRef,
        status: Status,
        round: u32,
    },
    #[error("{line} is {status}; nothing to run")]
    NothingToRun { line: LineRef, status: Status },
    #[error("{line} is already running headless{}", pid.map(|p| format!(" (process {p})")).unwrap_or_default())]
    AlreadyRunning { line: LineRef, pid: Option<u32> },
}

impl Refusal {
    pub fn kind(&self) -> Kind {
        use Refusal::*;
        match self {
            NoLine(_) => Kind::NotFound,
            BadName(_) | EmptySteering | EmptyBranchSteering | EmptyQuestion | EmptyAnswer => {
                Kind::BadInput
            }
            IdTaken(_)
            | NameTaken(_)
            | AlreadyOver { .. }
            | SteerOver { .. }
            | SteerTooLate { .. }
            | AlreadyAsking { .. }
            | NobodyToAsk { .. }
            | EndedWhileAsking { .. }
            | NoQuestion { .. }
            | AnswerTooLate { .. }
            | NothingToResume { .. }
            | BranchFromEnd { .. }
            | NothingToRun { .. }
            | AlreadyRunning { .. } => Kind::Conflict,
        }
    }

    /// What the person can do instead, when there is something.
    pub fn hint(&self) -> Option<String> {
        use Refusal::*;
        match self {
            NoLine(_) => Some("`anvil status --all` lists the debates here".into()),
            SteerTooLate { line, round } => Some(format!(
                "branch from a round instead: `anvil branch --from {}:round-{round} --steer \"…\"`",
                line.line
            )),
            NothingToResume { line, .. } => Some(format!(
                "branch from it with `anvil branch --from {}:round-N`",
                line.line
            )),
            BranchFromEnd { line, round, .. } => Some(format!(
                "branch from a round before it, e.g. {}:round-{round}",
                line.line
            )),
            NothingToRun { .. } => Some("branch from one of its rounds instead".into()),
            AlreadyRunning { .. } => {
                Some("wait for it to end, or stop it (its process group)".into())
            }
            NoQuestion { .. } | EndedWhileAsking { .. } => {
                Some("`anvil status` says where the line stands".into())
            }
            _ => None,
        }
    }
}

/// Turns an I/O error into [`DebateError::Io`], saying what was being done to which file.
pub(crate) fn io(
    what: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> DebateError {
    let path = path.into();
    move |source| DebateError::Io { what, path, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot save the state")]
    struct Outer {
        #[source]
        source: DebateError,
    }

    fn disk_full(path: &str) -> DebateError {
        DebateError::Io {
            what: "cannot write",
            path: path.into(),
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
        }
    }

    #[test]
    fn the_chain_names_every_cause_once() {
        // A message that quotes its cause is not made to repeat it...
        let quoting = disk_full("state.md");
        assert_eq!(chain(&quoting), quoting.to_string());
        assert!(causes(&quoting).is_empty());
        // ...and one that does not gets it below.
        let outer = Outer {
            source: disk_full("state.md"),
        };
        assert_eq!(causes(&outer), [disk_full("state.md").to_string()]);
        let text = chain(&outer);
        assert!(
            text.starts_with("cannot save the state: cannot write state.md: "),
            "{text}"
        );
        assert_eq!(text.matches("no storage space").count(), 1, "{text}");
    }
}
