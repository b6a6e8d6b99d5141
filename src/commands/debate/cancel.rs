//! `anvil cancel`: stop a debate for good.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::output::slash_safe;

/// Cancel a debate; its session stops debating at its next stop.
///
/// The line is recorded as cancelled. Without a name: this session's debate, or the only
/// active one.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil cancel
  anvil cancel graphql --reason \"decided elsewhere\"")]
pub struct Args {
    /// The line to cancel, as NAME[@LINE]: any name of its debate (see `anvil log --help`).
    line: Option<String>,

    /// Why, for the record.
    #[arg(long, default_value = "")]
    reason: String,

    #[arg(long, hide = true)]
    slash: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let slash = args.slash;
    slash_safe(slash, || {
        let home = ctx.home()?;
        let line = ctx.resolve_line(&home, args.line.as_deref())?;
        let state = anvil_core::line::control::cancel(&home, &line, &args.reason)?;
        let message = format!(
            "anvil: cancelled {line} at round {} ({})\n",
            state.progress.round,
            state.progress.phase.name()
        );
        if slash {
            out(&message)
        } else {
            say(message.trim_end());
            Ok(())
        }
    })
}
