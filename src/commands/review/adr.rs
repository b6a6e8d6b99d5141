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
use crate::naming;
use crate::output::{out, say};
use crate::view;

/// Write a debate's conclusion as an architecture decision record (MADR).
///
/// In the code repository, as MADR 4.0: YAML front matter (status, date, decision-makers), the context and problem,
/// the options argued, the synthesis as the decision outcome, its consequences, the dissent
/// left open, and links back to the debate. Numbered after the records already there, in
/// docs/decisions/ (or the directory `.adr-dir` names, or --dir). `.adr-dir` must name a
/// directory inside the project. A debate that follows up one with a record (`--follow-up`)
/// supersedes it. Prints the file's path.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil adr                  the current line's synthesis
  anvil adr graphql --dir docs/adr")]
pub struct Args {
    /// The line, as NAME[@LINE]: any name of its debate (see `anvil log --help`).
    ///
    /// Default: this session's line, else the only active one, else the one last active (said
    /// on stderr).
    line: Option<String>,

    /// The directory of decision records, relative to the project.
    ///
    /// Unlike `.adr-dir`, it may lie outside the project (an absolute path, or one through
    /// `..`): anvil then says so.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,

    /// Write another record even if this line already produced one.
    #[arg(long)]
    again: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let chosen = naming::line(ctx, &home, &record, args.line.as_deref())?;
    chosen.tell("decision record of", "anvil adr NAME[@LINE]");
    let line = chosen.line;
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
    let records = decision::directory(&project, args.dir.as_deref()).map_err(dir_error)?;
    if records.outside {
        say(&format!(
            "anvil: note: {} is outside the project; the record goes there because --dir names it",
            records.path.display()
        ));
    }
    let dir_rel = records.path;
    let dir = project.join(&dir_rel);
    let supersedes = superseded(&home, &record, &state.setup.inputs.follow_up)?;

    let date = jiff::Timestamp::from_second(synthesis.time)
        .map(|t| t.strftime("%Y-%m-%d").to_string())
        .unwrap_or_default();
    let mut decision = Decision {
        number: 0,
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
            .map(|(n, path)| (*n, relative(&project, path, &dir_rel))),
        dissent: synthesis.meta.dissent.clone(),
        consensus: synthesis.meta.consensus,
        vote: history.entries[..at]
            .iter()
            .flat_map(|e| anvil_core::model::vote::words(&e.meta))
            .collect(),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::new(format!("cannot create {}: {e}", dir.display())))?;
    let (number, name) = write_numbered(&dir, &mut decision)?;
    let rel = dir_rel.join(&name);
    let rel_text = rel.to_string_lossy().replace('\\', "/");
    if let Some((old_number, old)) = &supersedes {
        let old_path = project.join(old);
        let old_text = std::fs::read_to_string(&old_path)
            .map_err(|e| CliError::new(format!("cannot read {}: {e}", old_path.display())))?;
        match decision::mark_superseded(
            &old_text,
            number,
            &relative(&project, &rel_text, old_dir(old)),
        ) {
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
        // The path comes from the record, which a remote may have filled: the old record is
        // rewritten only inside the project.
        if let Some(path) = produced(&history)
            && decision::inside(home.project(), Path::new(&path))
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

/// `path` (relative to the project) as a link from a file in `from` (relative to the
/// project): the file name when both are in the same directory; the absolute path when `from`
/// lies outside the project.
fn relative(project: &Path, path: &str, from: &Path) -> String {
    let p = Path::new(path);
    if p.parent() == Some(from) {
        return p
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    let plain = from
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain || p.is_absolute() {
        return project.join(p).to_string_lossy().into_owned();
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

/// Writes `decision` as the next record of `dir`: numbered after those there, and after any
/// that another run wrote meanwhile (the file is created only if its name is free, so two runs
/// never overwrite each other). Returns its number and file name.
fn write_numbered(dir: &Path, decision: &mut Decision) -> Result<(u32, String), CliError> {
    use std::io::Write;
    let mut number = decision::next_number(dir)
        .map_err(|e| CliError::new(format!("cannot number a record in {}: {e}", dir.display())))?;
    for _ in 0..100 {
        decision.number = number;
        let name = decision::file_name(number, &decision.question);
        let path = dir.join(&name);
        let failed =
            |e: std::io::Error| CliError::new(format!("cannot write {}: {e}", path.display()));
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                number = number.checked_add(1).ok_or_else(|| {
                    CliError::new(format!("{} holds every record number", dir.display()))
                })?;
                continue;
            }
            Err(e) => return Err(failed(e)),
        };
        let text = decision::render(decision);
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| {
                let _ = std::fs::remove_file(&path);
                failed(e)
            })?;
        return Ok((number, name));
    }
    Err(CliError::new(format!(
        "cannot find a free record number in {}: the names after {} are all taken",
        dir.display(),
        decision.number
    ))
    .hint("another program is writing records there; try again"))
}

/// A refused directory of decision records, with what to do.
fn dir_error(e: decision::DirError) -> CliError {
    use decision::DirError;
    let hint = match &e {
        DirError::Read(_) => "check the file's permissions",
        DirError::Lines(_) => "put one relative path in .adr-dir, such as `docs/decisions`",
        DirError::OddName { .. } => "name a directory without control characters",
        DirError::Outside { .. } => {
            "edit .adr-dir to name a directory inside the project, or pass --dir DIR to write \
             elsewhere on purpose"
        }
    };
    CliError::new(e.to_string()).hint(hint)
}
