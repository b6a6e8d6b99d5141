//! The one error type of the command line: a message, a hint and an exit code.

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

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> CliError {
        CliError::new(e.to_string())
    }
}
