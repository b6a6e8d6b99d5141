//! `anvil log`: the debates of this project and their lines, drawn as a graph.

use std::cell::Cell;

use crate::term::visible;
use anvil_core::model::provenance::{Provenance, RunCost};
use anvil_core::model::spend::Spend;
use anvil_core::record::store::Record;
use anvil_core::record::usage::ModelUsage;
use anvil_core::review::history::{self, Entry, LineHistory};
use anvil_core::review::{names, positions};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::view::{self, Paint};

/// Without `-n` or `--all`, `anvil log` shows the most recently active debates, each whole,
/// until they hold this many phases, about a terminal screen as `git log` fills one...
const FIRST_SCREEN_PHASES: usize = 20;
/// ...or until it has shown this many debates, however short.
const FIRST_SCREEN_DEBATES: usize = 10;

/// Show the debates, numbered, most recently active first, phase by phase.
///
/// Each debate's lines are drawn as a graph (where each line branched off and with which
/// steering), phase by phase: round, role, the agent that played it when not the host, first
/// line of text, time. Without `-n` or `--all`, a first screen: the most recently active
/// debates, each whole, until they hold 20 phases (at most ten debates).
///
/// Each debate is numbered, 1 being the most recently active: the number names it in any
/// command, as long as nothing moved since (`anvil report 2`). So do its id, a prefix of the
/// id, words of the id after its date (`adopt-graphql`), or words of its question
/// (`billing`): `anvil log NAME` shows every debate the name matches.
#[derive(Debug, clap::Args)]
#[command(after_long_help = EXAMPLES)]
pub struct Args {
    /// Only the debates NAME names: an id, a number, a prefix of an id, words of an id or of
    /// a question (`@LINE` is ignored).
    #[arg(value_name = "NAME")]
    debate: Option<String>,

    /// Show every debate, not only the most recent ones.
    #[arg(long)]
    all: bool,

    /// Show at most N phases (commits), newest first.
    ///
    /// As `git log -n N` does: the graph is cut after its N-th commit.
    #[arg(
        short = 'n',
        long = "max-count",
        visible_alias = "limit",
        value_name = "N"
    )]
    max_count: Option<usize>,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,

    /// Add who played each phase and what it cost, summed per agent, model and line.
    ///
    /// Each phase's agent, model, tokens, duration and price (where the agent reports one);
    /// the debate's totals per agent, per model and per line, which add up to its total; what
    /// stopping when positions stopped moving would have saved (per line, and summed over the
    /// debates shown); and what the headless runs of `anvil run` cost, as Claude Code priced
    /// them.
    #[arg(long)]
    stats: bool,

    /// Never page the output.
    ///
    /// By default a terminal gets $ANVIL_PAGER, $PAGER or `less`.
    #[arg(long)]
    no_pager: bool,
}

const EXAMPLES: &str = "Examples:
  anvil log                     the debates last active, numbered
  anvil log billing             the debates whose question (or id) has \"billing\"
  anvil log 2 --stats           the second debate, with who played what and what it cost
  anvil log --all --json        every debate, for a script";

/// The debates come most recently active first from the index of recent debates (checked
/// against the refs of the debates it names; see [`anvil_core::record::recent`]), or from one pass over
/// the refs for `--all`; each is then loaded, drawn and written on its own, so the first
/// screen reads only the debates it shows and `--all` holds one debate in memory at once.
pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let paint = Paint::stdout();
    let saved = Cell::new(Saved::default());
    let saved = &saved;
    let mut more = false;
    // Debates a name matched beyond the first screen.
    let mut more_named: Option<usize> = None;
    let mut pieces: Box<dyn Iterator<Item = Result<(String, usize), CliError>>> =
        match (&args.debate, args.all, args.max_count) {
            (Some(name), _, _) => {
                let debate = name.split_once('@').map_or(name.as_str(), |(d, _)| d);
                let named = crate::naming::debates(&home, &record, debate)?;
                if named.debates.is_empty() {
                    return Err(CliError::new(format!(
                        "no debate '{}'",
                        visible(debate)
                    ))
                    .hint(
                        "name a debate by its id, its number in `anvil log`, or words of its id \
                         or question",
                    ));
                }
                // Without -n or --all, a first screen of them, as without a name.
                let mut matched = named.debates;
                if !args.all && args.max_count.is_none() && matched.len() > FIRST_SCREEN_DEBATES {
                    let left = matched.len() - FIRST_SCREEN_DEBATES;
                    matched.truncate(FIRST_SCREEN_DEBATES);
                    more_named = Some(left);
                }
                Box::new(within_budget(
                    &record,
                    matched.into_iter().map(|debate| Ok((debate, None))),
                    &args,
                    paint,
                    saved,
                ))
            }
            (None, true, _) => {
                let debates = anvil_core::record::recent::scan(&record)?;
                Box::new(within_budget(
                    &record,
                    numbered(debates.into_iter().map(|(debate, _)| Ok(debate))),
                    &args,
                    paint,
                    saved,
                ))
            }
            (None, false, Some(n)) => {
                let newest = anvil_core::record::recent::Newest::new(
                    &record,
                    n.min(FIRST_SCREEN_DEBATES) + 1,
                )?;
                Box::new(within_budget(
                    &record,
                    numbered(
                        newest.map(|found| found.map(|(debate, _)| debate).map_err(CliError::from)),
                    ),
                    &args,
                    paint,
                    saved,
                ))
            }
            (None, false, None) => {
                let (shown, older) = first_screen(&record, &args, paint, saved)?;
                more = older;
                Box::new(shown.into_iter().map(Ok))
            }
        };
    let mut output = crate::pager::Output::start(!args.no_pager);
    let mut shown = 0;
    if args.json {
        output.write("{\n  \"debates\": [")?;
    }
    for piece in pieces.by_ref() {
        let (mut text, _) = piece?;
        if text.is_empty() {
            continue;
        }
        if shown > 0 || args.json {
            text.insert_str(0, if args.json && shown > 0 { ",\n" } else { "\n" });
        }
        shown += 1;
        if !output.write(&text)? {
            return output.finish();
        }
    }
    drop(pieces);
    if args.json {
        output.write(if shown == 0 { "]\n}\n" } else { "\n  ]\n}\n" })?;
        return output.finish();
    }
    let Saved {
        convergence: total,
        triage,
    } = saved.get();
    if args.stats && total.lines > 0 {
        output.write(&format!(
            "\n{} {}\n",
            paint.dim("stopping at convergence would have saved, over the debates shown:"),
            saved_words(total.phases, (total.unpriced == 0).then_some(total.tokens))
                + &format!(
                    " on {} line{}",
                    total.lines,
                    if total.lines == 1 { "" } else { "s" }
                )
                + &if total.unpriced > 0 && total.tokens > 0 {
                    format!(" ({} tokens where the cost was known)", total.tokens)
                } else {
                    String::new()
                }
        ))?;
    }
    if args.stats && triage.lines > 0 {
        output.write(&format!(
            "{} {}\n",
            paint.dim("triage would have saved, over the debates shown:"),
            saved_words(
                triage.phases,
                (triage.unpriced == 0).then_some(triage.tokens)
            ) + &format!(
                " on {} line{}",
                triage.lines,
                if triage.lines == 1 { "" } else { "s" }
            )
        ))?;
    }
    if shown == 0 && args.max_count != Some(0) {
        output.write("no debates yet; start one with `anvil start \"QUESTION\"`\n")?;
    }
    if let Some(left) = more_named {
        output.write(&paint.dim(&format!(
            "\n… {left} more debate{} of that name not shown (`--all` shows them)\n",
            if left == 1 { "" } else { "s" }
        )))?;
    }
    if more {
        output.write(&paint.dim(
            "\n… older debates not shown (`anvil log --all`, or `-n N` for the N newest phases)\n",
        ))?;
    }
    output.finish()
}

/// The debates of `order` with their numbers (1: the most recently active), as far as
/// numbers name debates ([`anvil_core::review::names::MAX_NUMBER`]).
fn numbered(
    order: impl Iterator<Item = Result<String, CliError>>,
) -> impl Iterator<Item = Result<(String, Option<usize>), CliError>> {
    order
        .enumerate()
        .map(|(i, debate)| debate.map(|d| (d, Some(i + 1).filter(|n| *n <= names::MAX_NUMBER))))
}

/// The debates named by `order` (with their numbers), each drawn as it comes, until `-n`'s
/// budget of commits is spent.
fn within_budget<'a>(
    record: &'a Record,
    order: impl Iterator<Item = Result<(String, Option<usize>), CliError>> + 'a,
    args: &'a Args,
    paint: Paint,
    saved: &'a Cell<Saved>,
) -> impl Iterator<Item = Result<(String, usize), CliError>> + 'a {
    let mut budget = args.max_count.unwrap_or(usize::MAX);
    order.map_while(move |debate| {
        if budget == 0 {
            return None;
        }
        let drawn =
            debate.and_then(|(debate, n)| piece(record, &debate, n, args, paint, budget, saved));
        if let Ok((_, commits)) = &drawn {
            budget -= (*commits).min(budget);
        }
        Some(drawn)
    })
}

/// The first screen: the most recently active debates, each whole, until they hold
/// [`FIRST_SCREEN_PHASES`] phases or number [`FIRST_SCREEN_DEBATES`]; and whether older
/// debates were left out.
fn first_screen(
    record: &Record,
    args: &Args,
    paint: Paint,
    saved: &Cell<Saved>,
) -> Result<(Vec<(String, usize)>, bool), CliError> {
    let mut newest = anvil_core::record::recent::Newest::new(record, FIRST_SCREEN_DEBATES + 1)?;
    let mut shown = Vec::new();
    let mut phases = 0;
    while phases < FIRST_SCREEN_PHASES && shown.len() < FIRST_SCREEN_DEBATES {
        let Some((debate, _)) = newest.next().transpose()? else {
            return Ok((shown, false));
        };
        let number = shown.len() + 1;
        let drawn = piece(
            record,
            &debate,
            Some(number),
            args,
            paint,
            usize::MAX,
            saved,
        )?;
        phases += drawn.1;
        shown.push(drawn);
    }
    let more = newest.next().transpose()?.is_some();
    Ok((shown, more))
}

/// One debate as `log` prints it (text or a JSON item), with its number when it has one, cut
/// after `budget` commits; with the number of commits it holds.
fn piece(
    record: &Record,
    debate: &str,
    number: Option<usize>,
    args: &Args,
    paint: Paint,
    budget: usize,
    saved: &Cell<Saved>,
) -> Result<(String, usize), CliError> {
    let (lines, damaged) = history::load_debate_checked(record, debate)?;
    if args.stats {
        let mut sum = saved.get();
        for (_, s) in savings(&lines) {
            sum.convergence.add(&s);
        }
        for (_, s) in triage_savings(&lines) {
            sum.triage.add(&s);
        }
        saved.set(sum);
    }
    if args.json {
        let (mut item, commits) = to_json(record, &lines, budget)?;
        if let Some(n) = number.filter(|_| !item.is_null()) {
            item["number"] = n.into();
        }
        if !damaged.is_empty() {
            if item.is_null() {
                item = serde_json::json!({ "debate": debate });
            }
            item["damaged"] = damaged
                .iter()
                .map(|d| {
                    serde_json::json!({
                        "line": d.line.line, "tip": d.tip.to_string(), "why": d.why,
                    })
                })
                .collect();
        }
        let item = crate::term::json(&item);
        let mut text = String::new();
        for (j, line) in item.lines().enumerate() {
            if j > 0 {
                text.push('\n');
            }
            text.push_str("    ");
            text.push_str(line);
        }
        return Ok((text, commits));
    }
    let (mut text, commits) = draw(record, &lines, number, paint, budget)?;
    if args.stats {
        text.push_str(&stats(&lines, paint));
    }
    if lines.is_empty() && !damaged.is_empty() {
        text.push_str(&format!(
            "{}\n",
            paint.bold(&paint.yellow(&visible(debate)))
        ));
    }
    for d in &damaged {
        text.push_str(&paint.red(&format!(
            "✗ {} is damaged: {}; `anvil doctor --fix` sets it aside (refs/anvil-damaged/)\n",
            visible(&d.line.to_string()),
            visible(&d.why)
        )));
    }
    Ok((text, commits))
}

/// One debate: a title, its setup, and the graph of its lines.
pub fn render(record: &Record, lines: &[LineHistory], paint: Paint) -> Result<String, CliError> {
    Ok(draw(record, lines, None, paint, usize::MAX)?.0)
}

/// [`render`] with the debate's number in front when it has one, cut after `budget` commits,
/// as `git log --graph -n`; with the number of commits drawn.
fn draw(
    record: &Record,
    lines: &[LineHistory],
    number: Option<usize>,
    paint: Paint,
    budget: usize,
) -> Result<(String, usize), CliError> {
    let Some(main) = lines.first() else {
        return Ok((String::new(), 0));
    };
    let state = history::state_at(record, main.tip)?;
    let mut text = match number {
        Some(n) => format!("{}  ", paint.bold(&n.to_string())),
        None => String::new(),
    };
    text.push_str(&format!(
        "{}  {}\n",
        paint.bold(&paint.yellow(&visible(&main.line.debate))),
        paint.bold(&visible(anvil_core::model::state::first_line(
            &state.setup.question
        )))
    ));
    text.push_str(&paint.dim(&format!(
        "{} · {} round{} · lines: {}\n",
        state.setup.mode.name(),
        state.setup.rounds,
        if state.setup.rounds == 1 { "" } else { "s" },
        lines
            .iter()
            .map(|h| visible(&h.line.line))
            .collect::<Vec<_>>()
            .join(", ")
    )));
    let rows = anvil_core::review::graph::draw(lines);
    let entries = anvil_core::review::graph::entries(lines);
    let width = rows.iter().map(|r| r.graph.len()).max().unwrap_or(0);
    let column = rows
        .iter()
        .filter_map(|r| r.commit)
        .map(|c| what(entries[&c]).chars().count())
        .max()
        .unwrap_or(0)
        .max(18);
    let mut drawn = 0;
    for row in rows {
        if drawn == budget {
            break;
        }
        let graph = format!("{:<width$}", row.graph);
        let Some(commit) = row.commit else {
            text.push_str(graph.trim_end());
            text.push('\n');
            continue;
        };
        drawn += 1;
        let entry = entries[&commit];
        let tips: Vec<&str> = lines
            .iter()
            .filter(|h| h.tip == commit)
            .map(|h| h.line.line.as_str())
            .collect();
        let tips = if tips.is_empty() {
            String::new()
        } else {
            format!(" ({})", visible(&tips.join(", ")))
        };
        // A wider phase column (a seat's agent named in it) takes its room from the gist.
        let room = 50usize.saturating_sub(column - 18).max(24);
        let gist = gist(entry, room);
        let pad = room.saturating_sub(gist.chars().count());
        text.push_str(&format!(
            "{graph}{} {:<column$} {gist}{:pad$}  {}{}\n",
            paint.yellow(&view::short(&commit)),
            what(entry),
            "",
            paint.dim(&view::time(entry.time)),
            paint.cyan(&tips),
        ));
    }
    Ok((text, drawn))
}

/// The cost of a debate: each phase that recorded one (and who played it), then the whole
/// debate per agent and per model, each line's own phases (not those it inherited), and the
/// total, which every list adds up to; then what the headless runs cost as Claude Code
/// priced them.
pub fn stats(lines: &[LineHistory], paint: Paint) -> String {
    let (per_line, total) = costs(lines);
    let entries = anvil_core::review::graph::entries(lines);
    let mut text = paint.dim("cost per phase:\n");
    let phases: Vec<(gix::ObjectId, String, Provenance)> = anvil_core::review::graph::draw(lines)
        .iter()
        .filter_map(|r| r.commit)
        .filter_map(|commit| {
            let entry = entries[&commit];
            Some((commit, what(entry), Provenance::read_from(&entry.meta)?))
        })
        .collect();
    let column = phases
        .iter()
        .map(|(_, w, _)| w.chars().count())
        .max()
        .unwrap_or(0)
        .max(18);
    for (commit, what, p) in &phases {
        text.push_str(&format!(
            "  {} {what:<column$} {}\n",
            paint.yellow(&view::short(commit)),
            visible(&p.summary())
        ));
    }
    if total.total.phases == 0 {
        text.push_str(&paint.dim("  no phase recorded what it cost\n"));
    } else {
        text.push_str(&spend_tables(&per_line, &total, paint));
    }
    for (line, s) in savings(lines) {
        text.push_str(&format!(
            "{} {}\n",
            paint.dim("convergence:"),
            visible(&format!(
                "{line} {}, saving {}",
                positions::stop_words(s.round, false),
                saved_words(u64::from(s.phases), s.tokens)
            ))
        ));
    }
    let (runs_per_line, runs_total) = run_costs(lines);
    if runs_total.runs == 0 {
        return text;
    }
    text.push_str(&paint.dim("headless runs (anvil run), as Claude Code priced them:\n"));
    for commit in anvil_core::review::graph::draw(lines)
        .iter()
        .filter_map(|r| r.commit)
    {
        let entry = entries[&commit];
        if let Some(run) = RunCost::read_from(&entry.meta) {
            text.push_str(&format!(
                "  {} {:<18} {}\n",
                paint.yellow(&view::short(&commit)),
                visible(&entry.meta.line),
                visible(&run.summary())
            ));
            for m in &run.models {
                text.push_str(&format!("      {}\n", visible(&model_summary(m))));
            }
        }
    }
    text.push_str(&paint.dim("runs per line:\n"));
    for (line, run) in runs_per_line.iter().filter(|(_, r)| r.runs > 0) {
        text.push_str(&format!(
            "  {:<18} {}\n",
            visible(line),
            visible(&run.summary())
        ));
    }
    text.push_str(&format!(
        "{} {}\n",
        paint.dim("runs total:"),
        visible(&runs_total.summary())
    ));
    text
}

/// The debate's cost per agent, per model and per line (each adding up to the total), and
/// the total.
fn spend_tables(per_line: &[(String, Spend)], total: &Spend, paint: Paint) -> String {
    let mut text = String::new();
    for (heading, shares) in [
        ("cost per agent:", &total.by_player),
        ("cost per model:", &total.by_model),
    ] {
        if shares.is_empty() {
            continue;
        }
        text.push_str(&paint.dim(&format!("{heading}\n")));
        text.push_str(&shares_table(
            shares
                .iter()
                .map(|(name, f)| (visible(name).into_owned(), f)),
        ));
    }
    text.push_str(&paint.dim("cost per line:\n"));
    text.push_str(&shares_table(
        per_line
            .iter()
            .map(|(line, spend)| (visible(line).into_owned(), &spend.total)),
    ));
    text.push_str(&format!(
        "{} {}\n",
        paint.dim("debate total:"),
        total.total.summary()
    ));
    text
}

/// Rows of `name  figures`, the names in one column (as wide as the widest, 18 at least).
fn shares_table<'a>(
    rows: impl Iterator<Item = (String, &'a anvil_core::model::spend::Figures)>,
) -> String {
    let rows: Vec<(String, &anvil_core::model::spend::Figures)> = rows.collect();
    let width = rows
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0)
        .max(18);
    rows.iter()
        .map(|(name, f)| format!("  {name:<width$} {}\n", f.summary()))
        .collect()
}

/// What stopping at convergence, and triage, would have saved over the debates `log --stats`
/// shows.
#[derive(Debug, Clone, Copy, Default)]
struct Saved {
    convergence: Sum,
    triage: Sum,
}

/// Savings summed over lines.
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    lines: u32,
    phases: u64,
    tokens: u64,
    /// Lines whose saving has no token count (a phase without a known cost).
    unpriced: u32,
}

impl Sum {
    fn add(&mut self, s: &anvil_core::model::positions::Saving) {
        self.lines += 1;
        self.phases += u64::from(s.phases);
        match s.tokens {
            Some(t) => self.tokens += t,
            None => self.unpriced += 1,
        }
    }
}

type Saving = anvil_core::model::positions::Saving;

/// What stopping at convergence would have saved on each line of a debate: the saving its
/// own synthesis recorded.
pub fn savings(lines: &[LineHistory]) -> Vec<(String, Saving)> {
    recorded_savings(lines, |m| m.saving)
}

/// What triage would have saved on each line of a debate, as its synthesis recorded it.
pub fn triage_savings(lines: &[LineHistory]) -> Vec<(String, Saving)> {
    recorded_savings(lines, |m| m.triage_saving)
}

/// The saving `of` reads from each line's own synthesis.
fn recorded_savings(
    lines: &[LineHistory],
    of: fn(&anvil_core::record::schema::Meta) -> Option<Saving>,
) -> Vec<(String, Saving)> {
    lines
        .iter()
        .filter_map(|h| {
            let i = h.synthesis()?;
            let e = &h.entries[i];
            (e.meta.line == h.line.line)
                .then(|| of(&e.meta))
                .flatten()
                .map(|s| (h.line.line.clone(), s))
        })
        .collect()
}

/// `4 phases and 8123 tokens`, or `4 phases` when the tokens are not known.
fn saved_words(phases: u64, tokens: Option<u64>) -> String {
    let p = format!("{phases} phase{}", if phases == 1 { "" } else { "s" });
    match tokens {
        Some(t) => format!("{p} and {t} tokens"),
        None => p,
    }
}

/// `claude-x: $0.0123 · 150 in, 50 out, 7 cache read, 3 cache write tokens`.
pub fn model_summary(m: &ModelUsage) -> String {
    format!(
        "{}: {} · {} in, {} out, {} cache read, {} cache write tokens",
        m.model,
        m.cost.human(),
        m.input_tokens,
        m.output_tokens,
        m.cache_read_tokens,
        m.cache_write_tokens
    )
}

/// What each line's own headless runs cost (the run commits only it holds), and the
/// debate's.
fn run_costs(lines: &[LineHistory]) -> (Vec<(String, RunCost)>, RunCost) {
    sums(lines, RunCost::read_from, RunCost::add)
}

/// Each line's own cost (the commits only it holds), and the debate's.
fn costs(lines: &[LineHistory]) -> (Vec<(String, Spend)>, Spend) {
    sums(
        lines,
        |meta| {
            Provenance::read_from(meta).map(|p| {
                let mut spend = Spend::default();
                spend.add(&p);
                spend
            })
        },
        Spend::merge,
    )
}

/// The figures `read` finds in each line's own commits, summed per line and for the debate.
fn sums<T: Default>(
    lines: &[LineHistory],
    read: impl Fn(&anvil_core::record::schema::Meta) -> Option<T>,
    add: impl Fn(&mut T, &T),
) -> (Vec<(String, T)>, T) {
    let entries = anvil_core::review::graph::entries(lines);
    let mut total = T::default();
    let per_line = anvil_core::review::graph::segments(lines)
        .into_iter()
        .map(|segment| {
            let mut sum = T::default();
            for commit in &segment.commits {
                if let Some(figures) = read(&entries[commit].meta) {
                    add(&mut sum, &figures);
                }
            }
            add(&mut total, &sum);
            (segment.line, sum)
        })
        .collect();
    (per_line, total)
}

/// `round 2 critic`, `synthesis`, `start`, `branch cost`; with the agent that played it when
/// a seat did (`round 2 critic · codex`). Shown whatever the record holds (see [`crate::term`]).
fn what(entry: &Entry) -> String {
    let what = visible(&phase_name(entry)).into_owned();
    match &entry.meta.agent {
        Some(agent) if entry.role.is_some() => format!("{what} · {}", short_text(agent, 12)),
        _ => what,
    }
}

/// `round 2 critic`, `synthesis`, `start`, `branch cost`.
fn phase_name(entry: &Entry) -> String {
    match entry.role {
        Some(anvil_core::model::state::Role::Synthesizer) => "synthesis".to_owned(),
        Some(anvil_core::model::state::Role::InteractivePause) => {
            format!("pause {}", entry.meta.round)
        }
        Some(role) => match &entry.meta.voice {
            Some(v) => format!("round {} {}", entry.meta.round, short_text(v, 10)),
            None => format!("round {} {}", entry.meta.round, role.name()),
        },
        None if entry.meta.phase == "branch" => format!("branch {}", entry.meta.line),
        None => entry.meta.phase.clone(),
    }
}

/// The gist of a phase in about `room` characters, shown whatever the text holds (see
/// [`crate::term`]).
fn gist(entry: &Entry, room: usize) -> String {
    if entry.meta.phase == "branch" {
        return format!(
            "from {} · steering: {}",
            visible(entry.meta.branched_from.as_deref().unwrap_or("?")),
            short_text(&entry.meta.steering.join(" / "), room - 2)
        );
    }
    let mut gist = short_text(entry.gist(), room);
    if let Some(p) = positions::summary(&entry.meta) {
        gist = format!("[{p}] {gist}");
    }
    if let Some((round, acted)) = positions::steady(&entry.meta) {
        gist.push_str(&format!(
            " [positions steady: {}]",
            positions::stop_words(round, acted)
        ));
    }
    if let Some(c) = entry.meta.consensus {
        gist.push_str(&format!(" [consensus {c}]"));
    }
    if !entry.meta.steering.is_empty() && entry.role.is_some() {
        gist.push_str(&format!(
            " [steering: {}]",
            short_text(&entry.meta.steering.join(" / "), 30)
        ));
    }
    gist
}

/// `text` made visible and cut to `max` characters.
fn short_text(text: &str, max: usize) -> String {
    let text = visible(text);
    if text.chars().count() <= max {
        text.into_owned()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

/// One debate as JSON, its commits cut after `budget` (in the order of the graph); with the
/// number of commits given.
fn to_json(
    record: &Record,
    lines: &[LineHistory],
    budget: usize,
) -> Result<(serde_json::Value, usize), CliError> {
    let Some(main) = lines.first() else {
        return Ok((serde_json::Value::Null, 0));
    };
    let state = history::state_at(record, main.tip)?;
    let segments = anvil_core::review::graph::segments(lines);
    let (per_line, total) = costs(lines);
    let (runs_per_line, runs_total) = run_costs(lines);
    let run_json = |run: &RunCost| (run.runs > 0).then(|| run.to_json());
    let line_list: Vec<serde_json::Value> = lines
        .iter()
        .zip(&segments)
        .map(|(h, seg)| {
            let first = h.own_start().map(|i| &h.entries[i]);
            serde_json::json!({
                "line": h.line.line,
                "tip": h.tip.to_string(),
                "fork": seg.fork.map(|f| f.to_string()),
                "branched_from": first.and_then(|e| e.meta.branched_from.as_deref()),
                "steering": first.filter(|e| e.meta.phase == "branch").map(|e| e.meta.steering.clone()),
                "synthesis": h.synthesis().map(|i| h.entries[i].commit.to_string()),
                "cost": per_line.iter().find(|(l, _)| *l == h.line.line).map(|(_, p)| p.to_json()),
                "run_cost": runs_per_line.iter().find(|(l, _)| *l == h.line.line).and_then(|(_, r)| run_json(r)),
            })
        })
        .collect();
    let entries = anvil_core::review::graph::entries(lines);
    let commits: Vec<serde_json::Value> = anvil_core::review::graph::draw(lines)
        .iter()
        .filter_map(|r| r.commit)
        .take(budget)
        .map(|c| {
            let e = entries[&c];
            serde_json::json!({
                "commit": c.to_string(),
                "parent": e.parent.map(|p| p.to_string()),
                "line": e.meta.line,
                "phase": e.meta.phase,
                "round": e.meta.round,
                "step": e.step,
                "voice": e.meta.voice,
                "steering": e.meta.steering,
                "subject": e.subject,
                "author": e.author,
                "time": e.time,
                "provenance": Provenance::read_from(&e.meta).map(|p| p.to_json()),
                "run": RunCost::read_from(&e.meta).map(|r| r.to_json()),
                "positions": positions::to_json(&e.meta),
            })
        })
        .collect();
    let count = commits.len();
    let value = serde_json::json!({
        "debate": main.line.debate,
        "question": state.setup.question,
        "mode": state.setup.mode.name(),
        "rounds": state.setup.rounds,
        "lines": line_list,
        "commits": commits,
        "cost": total.to_json(),
        "run_cost": run_json(&runs_total),
    });
    Ok((value, count))
}
