//! Where a command's words go: data to stdout, progress and chatter to stderr.

use std::io::Write;

use crate::error::CliError;

/// Writes to stdout; a closed pipe (`anvil status | head`) is not an error.
pub fn out(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::from_display(e)),
        _ => Ok(()),
    }
}

/// Progress and chatter go to stderr.
pub fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Runs a slash-command-facing body: with `slash`, errors go to stdout and the exit is 0.
pub fn slash_safe(
    slash: bool,
    body: impl FnOnce() -> Result<(), CliError>,
) -> Result<(), CliError> {
    match body() {
        Err(e) if slash => out(&e.to_text()),
        other => other,
    }
}
