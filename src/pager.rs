//! Long output through a pager, as `git log` does: on a terminal only, with `$ANVIL_PAGER`,
//! else `$PAGER`, else `less` (with `LESS=FRX` unless set: quit when the text fits on one
//! screen, keep colour, leave the screen as it was). An empty pager or `cat` means none.
//!
//! Text is written as it is produced, so the first screen shows before the rest is read and a
//! pager that quits early stops the work.

use std::io::{IsTerminal, Write};
use std::process::{Child, Command, Stdio};

use crate::error::CliError;

/// Where a command's long output goes.
pub struct Output {
    pager: Option<Child>,
    closed: bool,
}

impl Output {
    /// A pager when stdout is a terminal and `paging` is allowed, else stdout itself.
    pub fn start(paging: bool) -> Output {
        let pager = (paging && std::io::stdout().is_terminal())
            .then(pager_command)
            .flatten()
            .and_then(|command| {
                let mut shell = Command::new("sh");
                shell.arg("-c").arg(&command).stdin(Stdio::piped());
                if std::env::var_os("LESS").is_none() {
                    shell.env("LESS", "FRX");
                }
                shell.spawn().ok()
            });
        Output {
            pager,
            closed: false,
        }
    }

    /// Writes `text`; once the reader has gone (the pager quit, `| head` closed the pipe),
    /// this and every later write report `false` so that the caller can stop.
    pub fn write(&mut self, text: &str) -> Result<bool, CliError> {
        if self.closed {
            return Ok(false);
        }
        let written = match self.pager.as_mut().and_then(|p| p.stdin.as_mut()) {
            Some(stdin) => stdin.write_all(text.as_bytes()),
            None => {
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush())
            }
        };
        match written {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(false)
            }
            Err(e) => Err(CliError::from_display(e)),
        }
    }

    /// Waits for the pager, if there is one, so that the prompt comes back after it.
    pub fn finish(mut self) -> Result<(), CliError> {
        if let Some(mut pager) = self.pager.take() {
            drop(pager.stdin.take());
            pager.wait().map_err(CliError::from_display)?;
        }
        Ok(())
    }
}

/// The pager to run through `sh -c`, or `None` for no pager.
fn pager_command() -> Option<String> {
    let chosen = std::env::var("ANVIL_PAGER")
        .or_else(|_| std::env::var("PAGER"))
        .unwrap_or_else(|_| "less".to_owned());
    let chosen = chosen.trim();
    (!chosen.is_empty() && chosen != "cat").then(|| chosen.to_owned())
}
