//! `anvil branch --from REV --steer TEXT`: an alternative future from a past round.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::view;

/// Start a new line of a debate from a past round, as if you had steered it with TEXT at the
/// pause after that round. The line you branch from is left as it is.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to branch from: round-N (round-0 is the start), LINE:round-N,
    /// DEBATE@LINE:round-N, round-N/ROLE, LINE~K, or a commit id prefix.
    #[arg(long)]
    from: String,

    /// The steering the new line starts with ("synthesize" goes straight to the synthesis).
    #[arg(long)]
    steer: String,

    /// The new line's name (default: from the first words of the steering).
    #[arg(long)]
    name: Option<String>,

    /// Bind the new line to this Claude Code session (default: $CLAUDE_CODE_SESSION_ID, else
    /// the next session that stops in this project).
    #[arg(long)]
    session: Option<String>,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let from = view::resolve(ctx, &home, &record, &args.from)?;
    let session = ctx.session_or(args.session)?;
    let restored = anvil_core::line::restore::branch(
        &home,
        &record,
        anvil_core::line::restore::Branch {
            from: &from,
            steer: &args.steer,
            name: args.name.as_deref(),
            session: session.as_deref(),
        },
    )?;
    if args.json {
        return out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&view::restored_json(&restored)).expect("JSON")
        ));
    }
    say(&format!(
        "anvil: new line {} from {} (commit {}), steering: {}",
        restored.line,
        from.canonical(),
        view::short(&restored.commit),
        // As recorded: cleaned of credentials.
        restored
            .state
            .progress
            .steering
            .first()
            .map_or(args.steer.trim(), String::as_str)
    ));
    say(&view::how_to_continue(&restored));
    out(&crate::term::visible(&restored.prompt))
}
