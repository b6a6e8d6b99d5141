//! `anvil show REV`: one recorded phase, or the state of the line at that point.

use anvil_core::model::provenance::{Provenance, RunCost};
use anvil_core::record::schema::Meta;
use anvil_core::review::revision::Resolved;
use anvil_core::review::{history, positions};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::naming;
use crate::output::out;
use crate::view::{self, Paint};

/// Show one recorded phase: round, role, when, steering, and the text.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil show                      the conclusion of the current line
  anvil show round-2/critic       a phase of the current line
  anvil show 2:synthesis          the synthesis of the second debate in `anvil log`
  anvil show billing@cost:round-3 --prompt")]
pub struct Args {
    /// The revision (default: the conclusion of the current line).
    ///
    /// round-N, round-N/ROLE, synthesis, tip, LINE (its tip), LINE:round-N, NAME@LINE:round-N,
    /// LINE~K, or a commit id prefix; NAME is any name of a debate (see `anvil log --help`).
    /// Without one: the conclusion (the synthesis; the latest phase while there is none) of
    /// this session's line, else of the only active one, else of the one last active (said on
    /// stderr).
    rev: Option<String>,

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
    let resolved = picked(ctx, &home, &record, args.rev.as_deref())?;
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
            "positions": positions::to_json(&entry.meta),
        });
        return out(&format!("{}\n", crate::term::json(&json)));
    }
    let paint = Paint::stdout();
    if args.state {
        let state = history::read_text(&record, entry.commit, "state.md")?.unwrap_or_default();
        return out(&crate::term::visible(&state));
    }
    let mut text = view::render_entry(&record, &resolved.history, entry, args.prompt, paint)?;
    let said = stood(&entry.meta);
    if !said.is_empty() {
        text.push_str(&format!("\n{}", crate::term::visible(&said)));
    }
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

/// The phase `rev` names; without one, the conclusion of the current line, which is said on
/// stderr.
fn picked(
    ctx: &Ctx,
    home: &anvil_core::home::Home,
    record: &anvil_core::record::store::Record,
    rev: Option<&str>,
) -> Result<Resolved, CliError> {
    let Some(rev) = rev else {
        let chosen = naming::line(ctx, home, record, None)?;
        let history = history::LineHistory::load(record, &chosen.line)?;
        let index = conclusion(&history);
        let what = if history.synthesis() == Some(index) {
            "the synthesis of"
        } else {
            "the latest phase of"
        };
        chosen.tell(what, "anvil show NAME[@LINE][:REV]");
        return Ok(Resolved {
            name: chosen.line.to_string(),
            history,
            index,
        });
    };
    let picked = naming::resolve(ctx, home, record, rev)?;
    picked
        .chosen
        .tell(&format!("{} of", rev.trim()), "anvil show NAME@LINE:REV");
    Ok(picked.resolved)
}

/// A line's conclusion: its synthesis, else its latest phase (not a bookkeeping commit such as
/// a run's cost), else its tip.
fn conclusion(history: &history::LineHistory) -> usize {
    history
        .synthesis()
        .or_else(|| history.entries.iter().rposition(|e| e.role.is_some()))
        .unwrap_or(history.entries.len().saturating_sub(1))
}

/// What a commit says about positions, for people: the debater's stance and open points; on
/// a synthesis, the consensus score, the dissent, and what convergence would have saved.
pub fn stood(meta: &Meta) -> String {
    let mut text = String::new();
    if let Some(p) = positions::position(meta) {
        text.push_str(&format!("position: {} — {}\n", p.short(), p.claim));
    }
    for point in &meta.open {
        text.push_str(&format!("open: {point}\n"));
    }
    match (meta.converged, &meta.converge_held, positions::steady(meta)) {
        (Some(round), Some(why), _) => text.push_str(&format!(
            "positions stopped moving after round {round}; went on: {why}\n"
        )),
        (_, None, Some((round, acted))) => text.push_str(&format!(
            "positions steady: {}\n",
            positions::stop_words(round, acted)
        )),
        _ => {}
    }
    if let Some(c) = meta.consensus {
        text.push_str(&format!("consensus: {c}\n"));
    }
    for (i, d) in meta.dissent.iter().enumerate() {
        let missing = meta.dissent_missing.contains(d);
        text.push_str(&format!(
            "dissent {} ({}): {}{}\n",
            anvil_core::model::positions::OpenPoint::label(i),
            d.seat,
            d.text,
            if missing {
                " — not mentioned by the synthesis"
            } else {
                ""
            }
        ));
    }
    for said in [&meta.triage, &meta.triage_shadow].into_iter().flatten() {
        text.push_str(&format!("triage: {said}\n"));
    }
    if let Some(s) = meta.triage_saving {
        text.push_str(&format!(
            "triage would have saved {} phase(s){}\n",
            s.phases,
            s.tokens
                .map(|t| format!(" and {t} tokens"))
                .unwrap_or_default()
        ));
    }
    for line in anvil_core::model::vote::words(meta) {
        text.push_str(&line);
        text.push('\n');
    }
    if let Some(s) = meta.saving {
        text.push_str(&format!(
            "stopping at convergence (after round {}) would have saved {} phase(s){}\n",
            s.round,
            s.phases,
            s.tokens
                .map(|t| format!(" and {t} tokens"))
                .unwrap_or_default()
        ));
    }
    text
}
