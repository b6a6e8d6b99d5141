//! `anvil resume`: pick up a line that stopped, from the record.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::view;

/// Pick up a line that stopped, and print the prompt to go on with.
///
/// For a line that stopped for any reason (Claude Code closed, Ctrl+C, the block cap, a
/// crash): restores its live files from the record, binds it to a Claude Code session, and
/// prints the prompt to continue with — in full, since a new session has not seen the debate.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  claude \"$(anvil resume)\"              the current line, in a new Claude Code session
  claude \"$(anvil resume billing@cost)\"
  anvil run --line billing@cost          or headless, from the terminal")]
pub struct Args {
    /// The line, as NAME[@LINE]: any name of its debate (see `anvil log --help`).
    ///
    /// Default: this session's line, else the only active one, else the one last active (said
    /// on stderr).
    line: Option<String>,

    /// Bind to this Claude Code session.
    ///
    /// Default: $CLAUDE_CODE_SESSION_ID, else the next session that stops in this project.
    #[arg(long)]
    session: Option<String>,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let chosen = crate::naming::line(ctx, &home, &record, args.line.as_deref())?;
    chosen.tell("resuming", "anvil resume NAME[@LINE]");
    let line = chosen.line;
    let session = ctx.session_or(args.session)?;
    let restored = anvil_core::line::restore::resume(&home, &record, &line, session.as_deref())?;
    if args.json {
        return out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&view::restored_json(&restored)).expect("JSON")
        ));
    }
    let p = &restored.state.progress;
    say(&format!(
        "anvil: resumed {} at round {}, {} (commit {})",
        restored.line,
        p.round,
        p.phase.name(),
        view::short(&restored.commit)
    ));
    say(&view::how_to_continue(&restored));
    out(&crate::term::visible(&restored.prompt))
}
