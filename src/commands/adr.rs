//! `anvil adr DEBATE[@LINE]`: the debate's conclusion as an architecture decision record in the
//! code repository (MADR 4.0), linked back to the record, and noted in the record.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anvil_core::home::{Home, LineRef};
use anvil_core::record::store::Record;
use anvil_core::review::decision::{self, Decision, Position};
use anvil_core::review::history::{self, LineHistory};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::{out, say};
use crate::view;

/// Write a debate's conclusion as an architecture decision record (MADR 4.0) in the code
/// repository: YAML front matter (status, date, decision-makers), the context and problem,
/// the options argued, the synthesis as the decision outcome, its consequences, the dissent
/// left open, and links back to the debate. Numbered after the records already there, in
/// docs/decisions/ (or the directory `.adr-dir` names, or --dir). A debate that follows up
/// one with a record (`--follow-up`) supersedes it. Prints the file's path.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The debate, as DEBATE[@LINE] (a prefix of the id is enough); default: the current line.
    line: Option<String>,

    /// The directory of decision records, relative to the project.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    /// Write another record even if this line already produced one.
    #[arg(long)]
    again: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let line = view::line(ctx, &home, &record, args.line.as_deref())?;
    let history = LineHistory::load(&record, &line)?;
    let project = home.project().to_owned();
    if !args.again
        && let Some(path) = produced(&history).filter(|p| project.join(p).is_file())
    {
        return Err(CliError::new(format!(
            "{line} already produced the decision record {path}"
        ))
        .hint("edit that file, or pass --again to write another"));
    }
    let Some(at) = history.synthesis() else {
        return Err(CliError::new(format!(
            "{line} has no synthesis yet: a decision record records one"
        ))
        .hint(format!("`anvil status {line}` says where it stands")));
    };
    let synthesis = &history.entries[at];
    let state = history::state_at(&record, synthesis.commit)?;
    let dir_rel = args.dir.unwrap_or_else(|| decision::directory(&project));
    let dir = project.join(&dir_rel);
    let number = decision::next_number(&dir)
        .map_err(|e| CliError::new(format!("cannot read {}: {e}", dir.display())))?;
    let name = decision::file_name(number, &state.setup.question);
    let supersedes = superseded(&home, &record, &state.setup.inputs.follow_up)?;

    let date = jiff::Timestamp::from_second(synthesis.time)
        .map(|t| t.strftime("%Y-%m-%d").to_string())
        .unwrap_or_default();
    let text = decision::render(&Decision {
        number,
        question: state.setup.question.clone(),
        position: state.setup.position.clone(),
        material: material(&state.setup.inputs),
        positions: positions(&record, &history, at)?,
        synthesis: history::response(&record, synthesis)?.unwrap_or_default(),
        date,
        decision_makers: vec![decision_maker(&project)],
        line: line.to_string(),
        commit: synthesis.commit.to_string(),
        supersedes: supersedes
            .as_ref()
            .map(|(n, path)| (*n, relative(path, &dir_rel))),
    });
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::new(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join(&name);
    write_new(&path, text.as_bytes())?;
    let rel = dir_rel.join(&name);
    let rel_text = rel.to_string_lossy().replace('\\', "/");
    if let Some((old_number, old)) = &supersedes {
        let old_path = project.join(old);
        let old_text = std::fs::read_to_string(&old_path)
            .map_err(|e| CliError::new(format!("cannot read {}: {e}", old_path.display())))?;
        match decision::mark_superseded(&old_text, number, &relative(&rel_text, old_dir(old))) {
            Some(new) => anvil_core::fsutil::write_atomic(&old_path, new.as_bytes())
                .map_err(|e| CliError::new(format!("cannot write {}: {e}", old_path.display())))?,
            None => say(&format!(
                "anvil: note: {old} has no front matter to mark as superseded by ADR-{number:04}"
            )),
        }
        say(&format!(
            "anvil: ADR-{number:04} supersedes ADR-{old_number:04} ({old})"
        ));
    }
    anvil_core::line::control::record_decision(&home, &line, &rel_text)?;
    say(&format!(
        "anvil: wrote the decision record of {line} (status: proposed); `anvil log {line}` shows it"
    ));
    out(&format!("{rel_text}\n"))
}

/// The decision record this line already produced, as the record notes it.
fn produced(history: &LineHistory) -> Option<String> {
    history
        .entries
        .iter()
        .rev()
        .find_map(|e| e.meta.decision_record.clone())
}

/// The record the debate a `--follow-up` named produced: (its number, its path in the project).
fn superseded(
    home: &Home,
    record: &Record,
    follow_up: &Option<String>,
) -> Result<Option<(u32, String)>, CliError> {
    let Some(earlier) = follow_up.as_deref().and_then(LineRef::parse) else {
        return Ok(None);
    };
    for debate in record.debates_with_prefix(&earlier.debate)? {
        let line = LineRef::new(&debate, &earlier.line);
        let Ok(history) = LineHistory::load(record, &line) else {
            continue;
        };
        if let Some(path) = produced(&history)
            && home.project().join(&path).is_file()
            && let Some(n) = Path::new(&path)
                .file_name()
                .and_then(|f| decision::number_of(&f.to_string_lossy()))
        {
            return Ok(Some((n, path)));
        }
    }
    Ok(None)
}

/// The directory of a record's path, relative to the project.
fn old_dir(path: &str) -> &Path {
    Path::new(path).parent().unwrap_or(Path::new(""))
}

/// `path` (relative to the project) as a link from a file in `from` (relative to the project):
/// the file name when both are in the same directory.
fn relative(path: &str, from: &Path) -> String {
    let p = Path::new(path);
    if p.parent() == Some(from) {
        return p
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    let ups = from.components().count();
    format!("{}{path}", "../".repeat(ups))
}

/// Each voice's final argument before the synthesis, in the order they first spoke.
fn positions(
    record: &Record,
    history: &LineHistory,
    synthesis: usize,
) -> Result<Vec<Position>, CliError> {
    let mut order: Vec<String> = Vec::new();
    let mut last: HashMap<String, usize> = HashMap::new();
    for (i, entry) in history.entries[..synthesis].iter().enumerate() {
        let Some(role) = entry.role else { continue };
        if !role.is_debating() {
            continue;
        }
        let by = entry
            .meta
            .voice
            .clone()
            .unwrap_or_else(|| role.title().to_owned());
        if !last.contains_key(&by) {
            order.push(by.clone());
        }
        last.insert(by, i);
    }
    order
        .into_iter()
        .map(|by| {
            let entry = &history.entries[last[&by]];
            Ok(Position {
                text: history::response(record, entry)?.unwrap_or_default(),
                by,
            })
        })
        .collect()
}

/// What the debate was given besides its question.
fn material(inputs: &anvil_core::model::state::Inputs) -> Vec<String> {
    let mut out: Vec<String> = inputs.context.iter().map(|c| format!("`{c}`")).collect();
    if inputs.diff {
        out.push("the uncommitted changes".into());
    }
    if let Some(pr) = inputs.pr {
        out.push(format!("pull request #{pr}"));
    }
    if let Some(f) = &inputs.follow_up {
        out.push(format!("the earlier result `{f}`"));
    }
    for v in &inputs.versus {
        out.push(format!("`{v}`"));
    }
    for r in &inputs.recalled {
        out.push(format!("the earlier conclusion `{}`", r.line));
    }
    out
}

/// Who decides: the project's `git config user.name`, else `$USER`.
fn decision_maker(project: &Path) -> String {
    anvil_core::record::git::Git::find()
        .and_then(|git| {
            git.project(project)
                .args(["config", "user.name"])
                .output()
                .ok()
        })
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Writes `bytes` to a file that must not exist yet.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    let failed = |e: std::io::Error| CliError::new(format!("cannot write {}: {e}", path.display()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(failed)?;
    file.write_all(bytes).map_err(|e| {
        let _ = std::fs::remove_file(path);
        failed(e)
    })
}
