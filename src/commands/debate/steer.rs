//! `anvil steer`: queue steering for the next phase of a running debate.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::output::slash_safe;

/// Queue steering for the next phase of a running debate.
///
/// It is delivered, with anything else queued, in the prompt of the next phase. `anvil steer
/// synthesize` ends the debate at the next stop.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil steer \"focus on migration cost\"
  anvil steer --line graphql \"ask what the clients need\"
  anvil steer synthesize")]
pub struct Args {
    /// What the debaters should do next, e.g. "focus on migration cost".
    text: Vec<String>,

    /// The line to steer, as NAME[@LINE] (default: this session's, or the only active one).
    #[arg(long)]
    line: Option<String>,

    #[arg(long, hide = true)]
    slash: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let slash = args.slash;
    slash_safe(slash, || {
        let text = args.text.join(" ");
        if text.trim().is_empty() {
            return Err(CliError::new("nothing to steer with")
                .hint("anvil steer \"focus on cost\"")
                .usage());
        }
        let home = ctx.home()?;
        let line = ctx.resolve_line(&home, args.line.as_deref())?;
        // Refused here, under the line's lock, when the steering could no longer be delivered.
        anvil_core::line::control::steer(&home, &line, &text)?;
        let message = format!("anvil: steering queued for {line}; it reaches the next phase\n");
        if slash {
            out(&message)
        } else {
            say(message.trim_end());
            Ok(())
        }
    })
}
