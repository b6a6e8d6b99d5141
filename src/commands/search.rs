//! `anvil search QUERY`: every recorded phase of every debate and line, ranked by relevance.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::memory::index::{self as search, CLOSE, Hit, Index, OPEN, Query};
use crate::output::out;
use crate::term::visible;
use crate::view::{self, Paint};

/// Search every recorded phase (pulled debates too): words match their forms ("migrating"
/// finds "migration"), "quoted words" match as a phrase. Each hit names DEBATE@LINE, the
/// phase, its commit and date. The index (.anvil/search.sqlite) is a cache of the record,
/// brought up to date by each search and never pushed.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for.
    #[arg(required = true)]
    query: Vec<String>,

    /// Only this debate.
    #[arg(long)]
    debate: Option<String>,

    /// Only this line (e.g. main).
    #[arg(long)]
    line: Option<String>,

    /// Only this phase: advocate, critic, stakeholder, persona, synthesizer, start, branch, …
    #[arg(long)]
    role: Option<String>,

    /// Only phases recorded on or after this date (YYYY-MM-DD).
    #[arg(long)]
    since: Option<String>,

    /// Only phases recorded on or before this date (YYYY-MM-DD).
    #[arg(long)]
    until: Option<String>,

    /// How many hits at most.
    #[arg(short = 'n', long, default_value_t = 10)]
    max_count: usize,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// `YYYY-MM-DD` as seconds since the epoch at the start (or, with `end`, the end) of that day
/// in UTC.
fn day(text: &str, end: bool) -> Result<i64, CliError> {
    let date: jiff::civil::Date = text.parse().map_err(|e| {
        CliError::new(format!("'{text}' is not a date: {e}"))
            .hint("give it as YYYY-MM-DD")
            .usage()
    })?;
    let start = date
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map_err(CliError::from_display)?
        .timestamp()
        .as_second();
    Ok(if end { start + 86_399 } else { start })
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let query = Query {
        text: args.query.join(" "),
        debate: args.debate,
        line: args.line,
        phase: args.role,
        since: args.since.as_deref().map(|d| day(d, false)).transpose()?,
        until: args.until.as_deref().map(|d| day(d, true)).transpose()?,
        limit: args.max_count,
    };
    let index = Index::open(&home, &record)?;
    let hits = index.search(&query)?;
    if args.json {
        let list: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                serde_json::json!({
                    "debate": h.debate,
                    "line": h.line,
                    "at": format!("{}@{}", h.debate, h.line),
                    "phase": h.phase,
                    "round": h.round,
                    "commit": h.commit,
                    "time": h.time,
                    "snippet": h.snippet.replace(OPEN, "[").replace(CLOSE, "]"),
                })
            })
            .collect();
        return out(&format!("{}\n", crate::term::json(&list)));
    }
    if hits.is_empty() {
        return out(&format!(
            "no recorded phase matches {}\n",
            visible(&query.text)
        ));
    }
    let paint = Paint::stdout();
    let mut text = String::new();
    for hit in &hits {
        text.push_str(&draw(hit, paint));
    }
    out(&text)
}

fn draw(hit: &Hit, paint: Paint) -> String {
    let commit = search::commit_of(hit)
        .map(|id| view::short(&id))
        .unwrap_or_else(|| hit.commit.chars().take(7).collect());
    let phase = hit.place();
    // The snippet is recorded text: made visible first, then the matches marked.
    let snippet = visible(&hit.snippet.replace('\n', " ")).into_owned();
    let mut marked = String::new();
    let mut rest = snippet.as_str();
    while let Some(at) = rest.find(OPEN) {
        marked.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len()..];
        let end = after.find(CLOSE).unwrap_or(after.len());
        marked.push_str(&paint.bold(&paint.yellow(&after[..end])));
        rest = after.get(end + CLOSE.len()..).unwrap_or("");
    }
    marked.push_str(rest);
    format!(
        "{}  {}  {}  {}\n    {}\n",
        paint.cyan(&visible(&format!("{}@{}", hit.debate, hit.line))),
        visible(&phase),
        paint.yellow(&commit),
        paint.dim(&view::time(hit.time)),
        marked.trim()
    )
}
