//! `anvil replay`: a recorded line played back phase by phase, as it happened.

use std::io::{BufRead, IsTerminal};

use anvil_core::review::history::LineHistory;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::view::{self, Paint};

/// Play a recorded line back phase by phase.
///
/// Responses, pauses and steering (and the prompts with --prompts). On a terminal it waits for
/// Enter between phases unless --delay is given.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil replay
  anvil replay graphql --delay 2 --prompts")]
pub struct Args {
    /// The line, as NAME[@LINE]: any name of its debate (see `anvil log --help`).
    ///
    /// Default: this session's line, else the only active one, else the one last active (said
    /// on stderr).
    line: Option<String>,

    /// Show the prompt injected before each phase too.
    #[arg(long)]
    prompts: bool,

    /// Seconds to wait between phases (0: no waiting).
    #[arg(long)]
    delay: Option<f64>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let chosen = crate::naming::line(ctx, &home, &record, args.line.as_deref())?;
    chosen.tell("replay of", "anvil replay NAME[@LINE]");
    let line = chosen.line;
    let history = LineHistory::load(&record, &line)?;
    let paint = Paint::stdout();
    let step_with_enter =
        args.delay.is_none() && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let count = history.entries.len();
    for (i, entry) in history.entries.iter().enumerate() {
        let mut text = String::new();
        if i > 0 {
            text.push('\n');
        }
        if args.prompts && entry.role.is_some() {
            text.push_str(&view::render_entry(&record, &history, entry, true, paint)?);
            text.push('\n');
        }
        text.push_str(&view::render_entry(&record, &history, entry, false, paint)?);
        out(&text)?;
        if i + 1 == count {
            break;
        }
        if step_with_enter {
            crate::output::say(
                &paint.dim(&format!("[{}/{count}] Enter for the next phase", i + 1)),
            );
            let mut buf = String::new();
            if std::io::stdin().lock().read_line(&mut buf).unwrap_or(0) == 0 {
                break;
            }
        } else if let Some(delay) = args.delay.filter(|d| *d > 0.0) {
            std::thread::sleep(std::time::Duration::from_secs_f64(delay));
        }
    }
    Ok(())
}
