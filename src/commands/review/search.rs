//! `anvil search QUERY`: every recorded phase of every debate and line, ranked by relevance.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::memory::index::{self as search, CLOSE, Hit, Index, OPEN, Query};
use crate::output::out;
use crate::term::visible;
use crate::view::{self, Paint};

/// Search every recorded phase, pulled debates too.
///
/// Words match their forms ("migrating" finds "migration"), "quoted words" match as a phrase.
/// Each hit names DEBATE@LINE, the phase, its commit and date. The index
/// (.anvil/search.sqlite) is a cache of the record, brought up to date by each search and
/// never pushed.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil search migration cost
  anvil search \"read replicas\" --role synthesizer
  anvil search billing --since 2026-11-01 -n 3")]
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

    /// How many hits at most (1 or more).
    #[arg(short = 'n', long, default_value_t = 10, value_parser = hits)]
    max_count: usize,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// A number of hits: 1 or more, as large as wanted (a huge one means every hit).
fn hits(text: &str) -> Result<usize, String> {
    match text.parse::<u128>() {
        Ok(0) => Err("-n is how many hits to show: 1 or more".to_owned()),
        Ok(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        Err(e) => Err(format!("not a number of hits: {e}")),
    }
}

/// `YYYY-MM-DD` as seconds since the epoch at the start (or, with `end`, the end) of that day
/// in UTC. Any date of the calendar is taken (`9999-12-31` included), by counting its days.
fn day(text: &str, end: bool) -> Result<i64, CliError> {
    let date: jiff::civil::Date = text.parse().map_err(|e| {
        CliError::new(format!("'{text}' is not a date: {e}"))
            .hint("give it as YYYY-MM-DD")
            .usage()
    })?;
    let days = date
        .since(jiff::civil::date(1970, 1, 1))
        .map_err(CliError::from_display)?
        .get_days();
    let start = i64::from(days) * 86_400;
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
    // A query no search takes is refused before the index is opened or caught up.
    search::terms(&query.text).map_err(search::SearchError::Query)?;
    let index = Index::open(&home, &record)?;
    if let Some(why) = index.copied_because() {
        crate::output::say(&format!(
            "anvil: note: the search index cannot be written ({}); searched a copy of it in \
             memory, brought up to date with the record",
            visible(why.trim())
        ));
    }
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
    // The snippet is recorded text: cut at the markers first, each piece made visible, then
    // the matches marked (bold yellow on a terminal, `[word]` elsewhere).
    let snippet = hit.snippet.replace('\n', " ");
    let mut marked = String::new();
    let mut rest = snippet.as_str();
    while let Some(at) = rest.find(OPEN) {
        marked.push_str(&visible(&rest[..at]));
        let after = &rest[at + OPEN.len()..];
        let end = after.find(CLOSE).unwrap_or(after.len());
        let word = visible(&after[..end]);
        if paint.on {
            marked.push_str(&paint.bold(&paint.yellow(&word)));
        } else {
            marked.push_str(&format!("[{word}]"));
        }
        rest = after.get(end + CLOSE.len()..).unwrap_or("");
    }
    marked.push_str(&visible(rest));
    format!(
        "{}  {}  {}  {}\n    {}\n",
        paint.cyan(&visible(&format!("{}@{}", hit.debate, hit.line))),
        visible(&phase),
        paint.yellow(&commit),
        paint.dim(&view::time(hit.time)),
        marked.trim()
    )
}
