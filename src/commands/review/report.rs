//! `anvil report`: the final report of any line, from the record, with the debate's branch
//! tree and, for a branched debate, every line's synthesis side by side.

use std::path::PathBuf;

use anvil_core::model::markers::readable;
use anvil_core::model::transcript::nest;
use anvil_core::review::history::{self, LineHistory};
use anvil_core::review::report::Report;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::view::{self, Paint};

/// Write the report of a line: conclusion, debate, lines side by side.
///
/// The conclusion, the whole debate, the tree of its lines and their syntheses side by side,
/// and what it cost. Markdown, or self-contained HTML when PATH ends in .html.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil report                       the current line, on stdout
  anvil report billing -o billing.html")]
pub struct Args {
    /// The line, as NAME[@LINE]: any name of its debate (see `anvil log --help`).
    ///
    /// Default: this session's line, else the only active one, else the one last active (said
    /// on stderr).
    line: Option<String>,

    /// Where to write it (`.md` or `.html`); default: stdout, as markdown.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let chosen = crate::naming::line(ctx, &home, &record, args.line.as_deref())?;
    chosen.tell("report of", "anvil report NAME[@LINE]");
    let line = chosen.line;
    let lines = history::load_debate(&record, &line.debate)?;
    let Some(this) = lines.iter().find(|h| h.line == line) else {
        return Err(CliError::new(format!("no line {line}")));
    };
    let state = history::line_state(&record, &line, this.tip)?;
    let mut report = Report::of_line(&record, this, &state)?;
    report.push(&branches(&record, &lines)?);
    report.push("\n## Cost\n\n```text\n");
    report.push(&crate::commands::log::stats(&lines, Paint { on: false }));
    report.push("```\n");
    match args.output {
        // To a terminal the report is shown, never obeyed; a file keeps the text whole.
        None => out(&crate::term::visible(report.markdown())),
        Some(path) => {
            report
                .write(&path)
                .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))?;
            say(&format!(
                "anvil: report of {line} written to {}",
                path.display()
            ));
            Ok(())
        }
    }
}

/// The tree of the debate's lines and, when there are several, their syntheses side by side.
fn branches(
    record: &anvil_core::record::store::Record,
    lines: &[LineHistory],
) -> Result<String, CliError> {
    let mut text = String::from("\n---\n\n## Lines of this debate\n\n```text\n");
    text.push_str(&crate::commands::log::render(
        record,
        lines,
        Paint { on: false },
    )?);
    text.push_str("```\n");
    if lines.len() < 2 {
        return Ok(text);
    }
    text.push_str("\n## The syntheses side by side\n\n| line | branched from | steering | synthesis |\n|---|---|---|---|\n");
    let mut full = String::new();
    for h in lines {
        let first = h
            .own_start()
            .map(|i| &h.entries[i])
            .filter(|e| e.meta.phase == "branch");
        let synthesis = match history::conclusion(record, h)? {
            Some((_, text)) => readable(&text).into_owned(),
            None => String::new(),
        };
        let cell = |s: &str| {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace('|', "\\|")
        };
        text.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            h.line.line,
            first
                .and_then(|e| e.meta.branched_from.as_deref())
                .unwrap_or("—"),
            cell(
                &first
                    .map(|e| e.meta.steering.join("; "))
                    .unwrap_or_default()
            ),
            if synthesis.is_empty() {
                "_not yet_".to_owned()
            } else {
                cell(&synthesis)
            },
        ));
        if !synthesis.is_empty() {
            full.push_str(&format!(
                "\n### Synthesis of `{}`\n\n{}\n",
                h.line.line,
                nest(synthesis.trim(), 3).trim()
            ));
        }
    }
    text.push_str(&full);
    Ok(text)
}
