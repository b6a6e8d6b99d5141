//! `anvil diff A B`: how positions moved between two rounds, or what another steering changed
//! between two lines.

use crate::term::visible;
use anvil_core::review::compare::{self, Pair};
use anvil_core::review::positions;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::view::{self, Paint};

/// Compare two moments of a debate: how positions moved, what steering changed.
///
/// Between two rounds of one line the Advocate is compared with the Advocate and the Critic
/// with the Critic; between two lines at the same round or at their syntheses, what the other
/// steering changed. Coloured on a terminal only.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil diff round-1 round-2                 how the current line moved
  anvil diff main:synthesis cost:synthesis   what another steering changed
  anvil diff billing@main:round-1 billing@main:round-3 --word")]
pub struct Args {
    /// The older side: round-N, synthesis, LINE:round-N, NAME@LINE:synthesis, LINE~K, a
    /// commit id prefix, …
    a: String,

    /// The newer side.
    b: String,

    /// Compare word by word, for prose: [-removed-]{+added+}.
    #[arg(long, conflicts_with = "stat")]
    word: bool,

    /// Only how many lines changed in each phase.
    #[arg(long)]
    stat: bool,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let a = crate::naming::resolve(ctx, &home, &record, &args.a)?;
    a.chosen
        .tell(&format!("{} of", args.a.trim()), "NAME@LINE:REV");
    let b = crate::naming::resolve(ctx, &home, &record, &args.b)?;
    if b.chosen.line != a.chosen.line {
        b.chosen
            .tell(&format!("{} of", args.b.trim()), "NAME@LINE:REV");
    }
    let (a, b) = (a.resolved, b.resolved);
    let pairs = compare::pairs(&record, &a, &b)?;
    // How each seat moved between the two moments, from the positions the record holds.
    let chart_at = |r: &anvil_core::review::revision::Resolved| {
        positions::chart(&r.history.entries[..=r.index])
    };
    let (chart_a, chart_b) = (chart_at(&a), chart_at(&b));
    let movement = if chart_a.is_empty() && chart_b.is_empty() {
        Vec::new()
    } else {
        positions::movement(&chart_a, &chart_b)
    };
    if args.json {
        let files: Vec<serde_json::Value> = pairs
            .iter()
            .map(|p| {
                let stat = p.stat();
                serde_json::json!({
                    "name": p.name,
                    "a": p.a.as_ref().map(|(l, _)| l),
                    "b": p.b.as_ref().map(|(l, _)| l),
                    "insertions": stat.insertions,
                    "deletions": stat.deletions,
                    "unified": p.unified(),
                })
            })
            .collect();
        let json = serde_json::json!({
            "a": { "rev": a.canonical(), "commit": a.entry().commit.to_string() },
            "b": { "rev": b.canonical(), "commit": b.entry().commit.to_string() },
            "movement": movement,
            "files": files,
        });
        return out(&format!("{}\n", crate::term::json(&json)));
    }
    let paint = Paint::stdout();
    // The texts are made visible before they are compared, so that a carriage return in one
    // (which splits lines for the differ) is shown in place rather than taken for a line end.
    let pairs: Vec<Pair> = pairs.iter().map(shown).collect();
    let mut text: String = movement
        .iter()
        .map(|m| format!("{}\n", paint.bold(&visible(m))))
        .collect();
    if !text.is_empty() {
        text.push('\n');
    }
    text += &if args.stat {
        stat(&pairs)
    } else if args.word {
        pairs.iter().map(|p| word(p, paint)).collect()
    } else {
        pairs.iter().map(|p| unified(p, paint)).collect()
    };
    out(&text)
}

/// `pair` as a terminal may show it (see [`crate::term`]).
fn shown(pair: &Pair) -> Pair {
    let side = |s: &Option<(String, String)>| {
        s.as_ref()
            .map(|(l, t)| (visible(l).into_owned(), visible(t).into_owned()))
    };
    Pair {
        name: visible(&pair.name).into_owned(),
        a: side(&pair.a),
        b: side(&pair.b),
    }
}

fn unified(pair: &Pair, paint: Paint) -> String {
    let mut out = String::new();
    for line in pair.unified().lines() {
        let painted = if line.starts_with("+++") || line.starts_with("---") {
            paint.bold(line)
        } else if line.starts_with('+') {
            paint.green(line)
        } else if line.starts_with('-') {
            paint.red(line)
        } else if line.starts_with("@@") {
            paint.cyan(line)
        } else {
            line.to_owned()
        };
        out.push_str(&painted);
        out.push('\n');
    }
    out
}

fn word(pair: &Pair, paint: Paint) -> String {
    if pair.old_text() == pair.new_text() {
        return String::new();
    }
    let label = |side: &Option<(String, String)>| {
        side.as_ref()
            .map_or("/dev/null".to_owned(), |(l, _)| l.clone())
    };
    let mut out = paint.bold(&format!("=== {} → {}", label(&pair.a), label(&pair.b)));
    out.push('\n');
    let diff = similar::TextDiff::from_words(pair.old_text(), pair.new_text());
    for change in diff.iter_all_changes() {
        let value = change.value();
        match change.tag() {
            similar::ChangeTag::Equal => out.push_str(value),
            similar::ChangeTag::Delete if paint.on => out.push_str(&paint.red(value)),
            similar::ChangeTag::Insert if paint.on => out.push_str(&paint.green(value)),
            similar::ChangeTag::Delete => out.push_str(&format!("[-{value}-]")),
            similar::ChangeTag::Insert => out.push_str(&format!("{{+{value}+}}")),
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn stat(pairs: &[Pair]) -> String {
    let width = pairs.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    let (mut ins, mut del) = (0, 0);
    for pair in pairs {
        let s = pair.stat();
        ins += s.insertions;
        del += s.deletions;
        let bar = format!(
            "{}{}",
            "+".repeat(s.insertions.min(40)),
            "-".repeat(s.deletions.min(40))
        );
        out.push_str(&format!(
            " {:<width$} | {:>4} {bar}\n",
            pair.name,
            s.insertions + s.deletions
        ));
    }
    out.push_str(&format!(
        " {} phase{} compared, {ins} insertion{}(+), {del} deletion{}(-)\n",
        pairs.len(),
        if pairs.len() == 1 { "" } else { "s" },
        if ins == 1 { "" } else { "s" },
        if del == 1 { "" } else { "s" },
    ));
    out
}
