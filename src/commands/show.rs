//! `anvil show REV`: one recorded phase, or the state of the line at that point.

use anvil_core::model::provenance::{Provenance, RunCost};
use anvil_core::review::history;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::view::{self, Paint};

/// Show one recorded phase as markdown: round, role, when, steering, and the text.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The revision: round-N, round-N/ROLE, synthesis, LINE, LINE:round-N,
    /// DEBATE@LINE:round-N, LINE~K, or a commit id prefix. Default: the current line's tip.
    #[arg(default_value = "tip")]
    rev: String,

    /// Show the prompt that was injected for this phase instead of the response.
    #[arg(long, conflicts_with = "state")]
    prompt: bool,

    /// Show the line's state file as it was at this point.
    #[arg(long)]
    state: bool,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let resolved = view::resolve(ctx, &home, &record, &args.rev)?;
    let entry = resolved.entry();
    if args.json {
        let json = serde_json::json!({
            "rev": resolved.canonical(),
            "debate": resolved.history.line.debate,
            "line": resolved.history.line.line,
            "commit": entry.commit.to_string(),
            "parent": entry.parent.map(|p| p.to_string()),
            "phase": entry.meta.phase,
            "round": entry.meta.round,
            "step": entry.step,
            "voice": entry.meta.voice,
            "steering": entry.meta.steering,
            "complete": entry.meta.complete,
            "session": entry.meta.session,
            "author": entry.author,
            "subject": entry.subject,
            "time": entry.time,
            "trailers": entry.meta.pairs().iter().map(|(k, v)| serde_json::json!([k, v])).collect::<Vec<_>>(),
            "response": history::response(&record, entry)?,
            "prompt": history::prompt(&record, entry)?,
            "state": history::read_text(&record, entry.commit, "state.md")?,
            "provenance": Provenance::read_from(&entry.meta).map(|p| p.to_json()),
            "run": RunCost::read_from(&entry.meta).map(|r| r.to_json()),
            "recalled": view::recalled(&record, entry),
        });
        return out(&format!("{}\n", crate::term::json(&json)));
    }
    let paint = Paint::stdout();
    if args.state {
        let state = history::read_text(&record, entry.commit, "state.md")?.unwrap_or_default();
        return out(&crate::term::visible(&state));
    }
    let mut text = view::render_entry(&record, &resolved.history, entry, args.prompt, paint)?;
    if let Some(p) = Provenance::read_from(&entry.meta) {
        text.push_str(&paint.dim(&format!(
            "\n{}\n",
            crate::term::visible(&format!("cost: {}", p.summary()))
        )));
    }
    if let Some(run) = RunCost::read_from(&entry.meta) {
        let mut lines = format!("cost of the headless runs: {}", run.summary());
        for m in &run.models {
            lines.push_str(&format!("\n  {}", crate::commands::log::model_summary(m)));
        }
        text.push_str(&paint.dim(&format!("\n{}\n", crate::term::visible(&lines))));
    }
    out(&text)
}
