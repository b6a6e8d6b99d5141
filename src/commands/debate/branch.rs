//! `anvil branch --from REV --steer TEXT`: an alternative future from a past round.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::view;

/// Start a new line of a debate from a past round, with other steering.
///
/// As if you had steered it with TEXT at the pause after that round. The line you branch from
/// is left as it is. Says how to go on with the new line: headless with `anvil run --line`, or
/// in Claude Code.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil branch --from round-2 --steer \"focus on migration cost\"
  anvil branch --from billing@main:round-1 --steer synthesize --name early
  anvil run --line billing@focus-migration-cost")]
pub struct Args {
    /// Where to branch from: round-N (round-0 is the start), LINE:round-N,
    /// NAME@LINE:round-N, round-N/ROLE, LINE~K, or a commit id prefix.
    #[arg(long)]
    from: String,

    /// The steering the new line starts with ("synthesize" goes straight to the synthesis).
    #[arg(long)]
    steer: String,

    /// The new line's name (default: from the first words of the steering).
    #[arg(long)]
    name: Option<String>,

    /// Bind the new line to this Claude Code session.
    ///
    /// Default: $CLAUDE_CODE_SESSION_ID, else the next session that stops in this project.
    #[arg(long)]
    session: Option<String>,

    /// Print the prompt the new line continues with on stdout (to hand to a Claude Code
    /// session yourself: `claude "$(anvil branch … --prompt)"`).
    #[arg(long, conflicts_with = "json")]
    prompt: bool,

    /// Print JSON for scripts (the prompt included).
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let picked = crate::naming::resolve(ctx, &home, &record, &args.from)?;
    picked.chosen.tell(
        &format!("branching from {} of", args.from.trim()),
        "--from NAME@LINE:REV",
    );
    let from = picked.resolved;
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
    say(&next_steps(&restored));
    if args.prompt {
        return out(&crate::term::visible(&restored.prompt));
    }
    say("anvil: `--prompt` prints the prompt it goes on with");
    Ok(())
}

/// The two ways on with a new line: `anvil run` here, or a Claude Code session.
fn next_steps(restored: &anvil_core::line::restore::Restored) -> String {
    let line = &restored.line;
    let claude = match &restored.session {
        Some(s) => (
            format!("claude --resume {s} \"$(anvil resume {line} --session {s})\""),
            format!("in Claude Code session {s}, which it is bound to"),
        ),
        None => (
            format!("claude \"$(anvil resume {line})\""),
            "in Claude Code (or the next session that stops here picks it up)".to_owned(),
        ),
    };
    let run = format!("anvil run --line {line}");
    let width = run.chars().count().max(claude.0.chars().count());
    format!(
        "anvil: go on with it, either\n  {run:<width$}  headless, here\n  {:<width$}  {}",
        claude.0, claude.1
    )
}
