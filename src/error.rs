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

/// An error for the user: what went wrong, what caused it, what to do, and the exit code.
#[derive(Debug)]
pub struct CliError {
    pub(crate) message: String,
    hint: Option<String>,
    pub(crate) code: u8,
    /// The error of the core this one is, kept whole: its causes are printed below the
    /// message, each once (see [`anvil_core::error::causes`]).
    error: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl CliError {
    pub fn new(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            hint: None,
            code: 1,
            error: None,
        }
    }

    /// `error` itself, its message first and its causes after.
    pub fn of(error: impl std::error::Error + Send + Sync + 'static) -> CliError {
        CliError {
            error: Some(Box::new(error)),
            ..CliError::new("")
        }
        .with_message()
    }

    fn with_message(mut self) -> CliError {
        if let Some(error) = &self.error {
            self.message = error.to_string();
        }
        self
    }

    /// What caused it, outermost first, each once.
    pub fn causes(&self) -> Vec<String> {
        match &self.error {
            Some(error) => anvil_core::error::causes(error.as_ref()),
            None => Vec::new(),
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

    /// The error as it is printed (and as `!` lines of slash commands show it: they must always
    /// exit 0, or Claude Code drops the whole command without a word): the message, each cause
    /// it does not already say, and the hint. An error may quote anything (an agent's last
    /// words, a file's name, a model's text), so all of it is made [`visible`] here, where
    /// every error is printed.
    ///
    /// [`visible`]: crate::term::visible
    pub fn to_text(&self) -> String {
        let mut text = format!("error: {}\n", self.message);
        for cause in self.causes() {
            text.push_str(&format!("caused by: {cause}\n"));
        }
        if let Some(h) = &self.hint {
            text.push_str(&format!("hint: {h}\n"));
        }
        crate::term::visible(&text).into_owned()
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
                let hint = refusal.hint();
                let kind = refusal.kind();
                let error = CliError::of(refusal).maybe_hint(hint);
                match kind {
                    Kind::BadInput => error.usage(),
                    Kind::NotFound | Kind::Conflict => error,
                }
            }
            DebateError::State(e) => e.into(),
            DebateError::Record(e) => e.into(),
            DebateError::History(e) => e.into(),
            DebateError::Prompt(e) => e.into(),
            other @ (DebateError::Machine(_) | DebateError::Io { .. }) => CliError::of(other),
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
        CliError::of(e).maybe_hint(hint.map(str::to_owned))
    }
}

impl From<HistoryError> for CliError {
    fn from(e: HistoryError) -> CliError {
        match e {
            HistoryError::NoLine(_) => {
                CliError::of(e).hint("`anvil status --all` lists the debates here")
            }
            HistoryError::Record(e) => e.into(),
            HistoryError::State(e) => e.into(),
            HistoryError::Damaged(..) => CliError::of(e).hint(DOCTOR_HINT),
        }
    }
}

impl From<StateError> for CliError {
    fn from(e: StateError) -> CliError {
        CliError::of(e).hint(LIVE_FILES_HINT)
    }
}

impl From<PromptError> for CliError {
    fn from(e: PromptError) -> CliError {
        CliError::of(e).hint(
            "`anvil prompts list` shows where each prompt comes from; a file under \
             .anvil/prompts/ overrides the built-in one",
        )
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> CliError {
        CliError::of(e).hint("docs/options.md lists every key of .anvil/config.toml")
    }
}

impl From<ContextError> for CliError {
    fn from(e: ContextError) -> CliError {
        CliError::of(e)
    }
}

impl From<InstallError> for CliError {
    fn from(e: InstallError) -> CliError {
        CliError::of(e)
    }
}

impl From<GitError> for CliError {
    fn from(e: GitError) -> CliError {
        let hint = matches!(e, GitError::NotFound)
            .then(|| "install git, or name one with ANVIL_GIT".to_owned());
        CliError::of(e).maybe_hint(hint)
    }
}

impl From<RemoteError> for CliError {
    fn from(e: RemoteError) -> CliError {
        match e {
            RemoteError::Record(e) => e.into(),
            RemoteError::Secret { .. } => CliError::of(e).hint(
                "if it is no secret (or no longer valid), `anvil push --allow-secrets` sends it; \
                 else keep that line to yourself: branch from before it and push the branch",
            ),
            RemoteError::Git(GitError::NotFound) => {
                CliError::of(e).hint("install git, or name one with ANVIL_GIT")
            }
            RemoteError::Lock { .. } => CliError::of(e)
                .hint("a debate is recording on that line; pull again when it is done"),
            other => CliError::of(other),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        CliError::of(e)
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
        insta::assert_snapshot!("refusal_with_its_hint", too_late.to_text());
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
    fn an_error_of_the_core_keeps_its_cause_below_its_message() {
        let e: CliError = StateError::Read {
            path: "debates/d/main/state.md".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        }
        .into();
        assert_eq!(e.message, "cannot read debates/d/main/state.md");
        assert_eq!(e.causes(), ["permission denied"]);
        // The message, then its cause, then the hint.
        insta::assert_snapshot!("error_with_its_cause_and_hint", e.to_text());
        // A message that already says its cause does not say it twice.
        let said: CliError = DebateError::Io {
            what: "cannot write",
            path: "state.md".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        }
        .into();
        assert!(said.causes().is_empty(), "{}", said.to_text());
        assert!(!said.to_text().contains("caused by"), "{}", said.to_text());
    }

    #[test]
    fn failures_name_what_failed_and_keep_their_hint() {
        let missing: CliError = HistoryError::NoLine(line()).into();
        let no_git: CliError = RemoteError::Git(GitError::NotFound).into();
        insta::assert_snapshot!(
            "failures_with_their_hints",
            format!("{}\n{}", missing.to_text(), no_git.to_text())
        );
    }
}
