//! The error of every change to a line: what the line transactions, and the commands built on
//! them, can fail with. Shared by `line/` and `claude/`, below both, so that neither has to
//! reach into the other for it.

use std::path::PathBuf;

use crate::model::machine::MachineError;
use crate::model::prompt::PromptError;
use crate::model::state::StateError;
use crate::record::store::RecordError;

#[derive(Debug, thiserror::Error)]
pub enum DebateError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

/// Turns an I/O error into [`DebateError::Io`], saying what was being done to which file.
pub(crate) fn io(
    what: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> DebateError {
    let path = path.into();
    move |source| DebateError::Io { what, path, source }
}
