//! The one error type of the command line: a message, a hint and an exit code, and the one
//! place where each error of the core becomes one. A refusal keeps its kind (the exit code) and
//! its hint; a failure names what failed and, where there is one, what to do about it.

use anvil_core::claude::install::InstallError;
use anvil_core::error::{DebateError, Kind};
use anvil_core::line::remote::RemoteError;
use anvil_core::model::config::ConfigError;
use anvil_core::model::prompt::PromptError;
use anvil_core::model::state::StateError;
use anvil_core::record::git::GitError;
use anvil_core::record::store::RecordError;
use anvil_core::review::context::ContextError;
use anvil_core::review::history::HistoryError;

/// An error for the user: what went wrong, what to do, and the exit code.
#[derive(Debug)]
pub struct CliError {
    pub(crate) message: String,
    hint: Option<String>,
    pub(crate) code: u8,
}

impl CliError {
    pub fn new(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            hint: None,
            code: 1,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> CliError {
        self.hint = Some(hint.into());
        self
    }

    fn maybe_hint(mut self, hint: Option<String>) -> CliError {
        self.hint = hint.or(self.hint);
        self
    }

    pub fn usage(mut self) -> CliError {
        self.code = 2;
        self
    }

    pub fn from_display(e: impl std::fmt::Display) -> CliError {
        CliError::new(e.to_string())
    }

    /// The error as `!` lines of slash commands show it: they must always exit 0, or Claude
    /// Code drops the whole command without a word.
    pub fn to_text(&self) -> String {
        match &self.hint {
            Some(h) => format!("error: {}\nhint: {h}\n", self.message),
            None => format!("error: {}\n", self.message),
        }
    }
}

/// A hint for the live files of a line that cannot be read: the record has them all.
const LIVE_FILES_HINT: &str = "the record holds every line: `anvil resume DEBATE@LINE` rebuilds its live files, and \
     `anvil doctor` checks the rest";

const DOCTOR_HINT: &str = "`anvil doctor` checks the record";

impl From<DebateError> for CliError {
    fn from(e: DebateError) -> CliError {
        match e {
            DebateError::Refused(refusal) => {
                let error = CliError::new(refusal.to_string()).maybe_hint(refusal.hint());
                match refusal.kind() {
                    Kind::BadInput => error.usage(),
                    Kind::NotFound | Kind::Conflict => error,
                }
            }
            DebateError::State(e) => e.into(),
            DebateError::Record(e) => e.into(),
            DebateError::History(e) => e.into(),
            DebateError::Prompt(e) => e.into(),
            other @ (DebateError::Machine(_) | DebateError::Io { .. }) => {
                CliError::from_display(other)
            }
        }
    }
}

impl From<RecordError> for CliError {
    fn from(e: RecordError) -> CliError {
        let hint = match &e {
            RecordError::Open { .. } => {
                Some("`anvil init` makes a record; `anvil doctor` checks one")
            }
            RecordError::Locked { .. } => Some(
                "another program is writing the line (git?); try again when it is done, or \
                 `anvil doctor` if nothing runs",
            ),
            RecordError::Read { .. } | RecordError::Missing { .. } => Some(DOCTOR_HINT),
            // The message says what to do about a failed write already.
            _ => None,
        };
        CliError::new(e.to_string()).maybe_hint(hint.map(str::to_owned))
    }
}

impl From<HistoryError> for CliError {
    fn from(e: HistoryError) -> CliError {
        match e {
            HistoryError::NoLine(_) => {
                CliError::new(e.to_string()).hint("`anvil status --all` lists the debates here")
            }
            HistoryError::Record(e) => e.into(),
            HistoryError::State(e) => e.into(),
            HistoryError::Damaged(..) => CliError::new(e.to_string()).hint(DOCTOR_HINT),
        }
    }
}

impl From<StateError> for CliError {
    fn from(e: StateError) -> CliError {
        CliError::new(e.to_string()).hint(LIVE_FILES_HINT)
    }
}

impl From<PromptError> for CliError {
    fn from(e: PromptError) -> CliError {
        CliError::new(e.to_string()).hint(
            "`anvil prompts list` shows where each prompt comes from; a file under \
             .anvil/prompts/ overrides the built-in one",
        )
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> CliError {
        CliError::new(e.to_string()).hint("docs/options.md lists every key of .anvil/config.toml")
    }
}

impl From<ContextError> for CliError {
    fn from(e: ContextError) -> CliError {
        CliError::new(e.to_string())
    }
}

impl From<InstallError> for CliError {
    fn from(e: InstallError) -> CliError {
        CliError::new(e.to_string())
    }
}

impl From<GitError> for CliError {
    fn from(e: GitError) -> CliError {
        let hint = matches!(e, GitError::NotFound)
            .then(|| "install git, or name one with ANVIL_GIT".to_owned());
        CliError::new(e.to_string()).maybe_hint(hint)
    }
}

impl From<RemoteError> for CliError {
    fn from(e: RemoteError) -> CliError {
        match e {
            RemoteError::Record(e) => e.into(),
            RemoteError::Secret { .. } => CliError::new(e.to_string()).hint(
                "if it is no secret (or no longer valid), `anvil push --allow-secrets` sends it; \
                 else keep that line to yourself: branch from before it and push the branch",
            ),
            RemoteError::Git(GitError::NotFound) => {
                CliError::new(e.to_string()).hint("install git, or name one with ANVIL_GIT")
            }
            RemoteError::Lock { .. } => CliError::new(e.to_string())
                .hint("a debate is recording on that line; pull again when it is done"),
            other => CliError::from_display(other),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        CliError::new(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anvil_core::error::Refusal;
    use anvil_core::home::LineRef;
    use anvil_core::model::state::Status;

    fn line() -> LineRef {
        LineRef::new("20261122-q-3f2a", "main")
    }

    #[test]
    fn a_refusal_keeps_its_message_its_hint_and_its_kind() {
        let too_late: CliError = DebateError::from(Refusal::SteerTooLate {
            line: line(),
            round: 2,
        })
        .into();
        assert_eq!(too_late.code, 1);
        let text = too_late.to_text();
        assert!(
            text.starts_with("error: 20261122-q-3f2a@main is writing its synthesis"),
            "{text}"
        );
        assert!(
            text.contains("hint: branch from a round instead: `anvil branch --from main:round-2"),
            "{text}"
        );
        let empty: CliError = DebateError::from(Refusal::EmptySteering).into();
        assert_eq!(
            (empty.code, empty.to_text()),
            (2, "error: nothing to steer with\n".into())
        );
        let over: CliError = DebateError::from(Refusal::AlreadyOver {
            line: line(),
            status: Status::Cancelled,
        })
        .into();
        assert_eq!(over.message, "20261122-q-3f2a@main is already cancelled");
    }

    #[test]
    fn failures_name_what_failed_and_keep_their_hint() {
        let missing: CliError = HistoryError::NoLine(line()).into();
        assert!(missing.to_text().contains("hint: `anvil status --all`"));
        let no_git: CliError = RemoteError::Git(GitError::NotFound).into();
        let text = no_git.to_text();
        assert!(text.contains("for the transport"), "{text}");
        assert!(text.contains("hint: install git"), "{text}");
    }
}
