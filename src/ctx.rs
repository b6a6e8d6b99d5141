//! What every command gets: where it runs, anvil's home and the session it runs in. The line
//! it is about is chosen by name in [`crate::naming`] (`Ctx::resolve_line`).

use std::path::PathBuf;

use anvil_core::home::Home;

use crate::error::CliError;

/// What every command gets: where it runs, and anvil's home if there is one.
pub struct Ctx {
    pub cwd: PathBuf,
}

impl Ctx {
    /// The `.anvil` of this project, or an error that says how to make one.
    pub fn home(&self) -> Result<Home, CliError> {
        Home::find(&self.cwd).ok_or_else(|| {
            CliError::new("no .anvil here or in any parent directory")
                .hint("run `anvil init` in your project first")
        })
    }

    /// The Claude Code session this command runs in, if it runs inside one.
    pub fn session(&self) -> Option<String> {
        std::env::var("CLAUDE_CODE_SESSION_ID")
            .ok()
            .filter(|s| anvil_core::home::valid_session(s))
    }

    /// The session a command binds to: the one given (checked), else the one it runs in.
    pub fn session_or(&self, given: Option<String>) -> Result<Option<String>, CliError> {
        match given {
            Some(s) if anvil_core::home::valid_session(&s) => Ok(Some(s)),
            Some(s) => Err(CliError::new(format!("'{s}' is not a Claude Code session id")).usage()),
            None => Ok(self.session()),
        }
    }
}
