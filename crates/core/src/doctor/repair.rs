//! `anvil doctor --fix`: the repairs that lose nothing.

use std::path::{Path, PathBuf};

use super::environment::Environment;
use super::finding::{Finding, Fix, Level};
use crate::claude::install::{self, InstallError};
use crate::error::DebateError;
use crate::home::{Home, LineRef};
use crate::model::state::State;
use crate::record::store::{Record, RecordError};

/// Why a repair was not made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RepairError {
    #[error("cannot remove {path}: {source}")]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot take the lock of {line}: {source}")]
    Lock {
        line: LineRef,
        source: std::io::Error,
    },
    #[error("cannot keep the edited state file as {path}: {source}")]
    Keep {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is not one of anvil's commands")]
    NotOurs(PathBuf),
    #[error("the line {0} is gone")]
    NoLine(String),
    #[error("there is no .anvil here")]
    NoHome,
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error(transparent)]
    Line(#[from] DebateError),
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// Applies the fix of every finding that has one; records in `fixed` what happened.
pub fn repair(env: &Environment, findings: &mut [Finding]) {
    let home = Home::find(&env.cwd);
    for finding in findings.iter_mut() {
        let Some(fix) = finding.fix.clone() else {
            continue;
        };
        let result = match &fix {
            Fix::Remove { path } => {
                // A directory where a file belongs (a session "file" made by hand).
                if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                    std::fs::remove_dir_all(path)
                } else {
                    crate::fsutil::remove_if_present(path)
                }
            }
            .map(|()| format!("removed {}", path.display()))
            .map_err(|source| RepairError::Remove {
                path: path.clone(),
                source,
            }),
            Fix::ClearRefLock { reference } => match &home {
                Some(home) => clear_ref_lock(home, reference),
                None => Err(RepairError::NoHome),
            },
            Fix::Rewrite { path } => rewrite_command(path),
            Fix::RollForward { line } => match (&home, LineRef::parse(line)) {
                (Some(home), Some(line)) => roll_forward(home, &line).map_err(RepairError::from),
                _ => Err(RepairError::NoLine(line.clone())),
            },
            Fix::Overrule { line } => match (&home, LineRef::parse(line)) {
                (Some(home), Some(line)) => {
                    let path = home.state_path(&line);
                    let aside = path.with_extension("md.edited");
                    std::fs::copy(&path, &aside)
                        .map_err(|source| RepairError::Keep {
                            path: aside.clone(),
                            source,
                        })
                        .and_then(|_| roll_forward(home, &line).map_err(RepairError::from))
                        .map(|done| {
                            format!("{done} (the edited file is kept as {})", aside.display())
                        })
                }
                _ => Err(RepairError::NoLine(line.clone())),
            },
            Fix::SetAside { line, tip } => {
                match (&home, LineRef::parse(line), tip.parse::<gix::ObjectId>()) {
                    (Some(home), Some(line), Ok(tip)) => set_aside(home, &line, tip),
                    _ => Err(RepairError::NoLine(line.clone())),
                }
            }
            Fix::RebuildIndex => match &home {
                Some(home) => Record::open(&home.record_dir())
                    .and_then(|record| crate::record::recent::rebuild(&record))
                    .map(|debates| {
                        format!(
                            "rebuilt the index of recent debates from the refs ({} debates)",
                            debates.len()
                        )
                    })
                    .map_err(RepairError::from),
                None => Err(RepairError::NoHome),
            },
        };
        finding.fixed = Some(match result {
            Ok(done) => {
                finding.level = Level::Ok;
                done
            }
            Err(e) => format!("not fixed: {e}"),
        });
    }
}

fn rewrite_command(path: &Path) -> Result<String, RepairError> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let (_, text) = install::commands()
        .into_iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| RepairError::NotOurs(path.to_owned()))?;
    install::write_in_place(path, text.as_bytes())?;
    Ok(format!("rewrote {}", path.display()))
}

/// Removes what an anvil killed while it moved `reference` left behind, and only that: under
/// the line's lock where the line has live files (taking it creates none elsewhere).
fn clear_ref_lock(home: &Home, reference: &str) -> Result<String, RepairError> {
    if gix::refs::FullName::try_from(reference).is_err() {
        return Err(RecordError::BadName(reference.to_owned()).into());
    }
    let record = Record::open(&home.record_dir())?;
    let line = super::record::line_of(reference).filter(|line| home.line_dir(line).is_dir());
    let removed = match line {
        Some(line) => {
            let _lock = home
                .lock_line(&line, std::time::Duration::from_secs(10))
                .map_err(|source| RepairError::Lock {
                    line: line.clone(),
                    source,
                })?;
            crate::line::transaction::clear_leftovers(home, &record, &line)?
        }
        None => record.clear_ref_leftovers(reference)?,
    };
    let lock = crate::record::ref_lock::RefFiles::new(record.path(), reference).lock;
    Ok(if removed {
        format!(
            "removed {}, left by an anvil that was killed while it moved the ref",
            lock.display()
        )
    } else if lock.exists() {
        format!(
            "removed anvil's temporary file; {} is not anvil's and stays",
            lock.display()
        )
    } else {
        format!("removed what a killed anvil left of {reference}'s move")
    })
}

/// Brings `line`'s live files forward to its tip in the record: a transaction that decides
/// nothing, so that the one write path rolls them forward under the line's lock.
/// Moves an unreadable line out of the way, under its lock.
fn set_aside(home: &Home, line: &LineRef, tip: gix::ObjectId) -> Result<String, RepairError> {
    let _lock = home
        .lock_line(line, std::time::Duration::from_secs(10))
        .map_err(|source| RepairError::Lock {
            line: line.clone(),
            source,
        })?;
    let aside = Record::open(&home.record_dir())?.set_aside(&line.debate, &line.line, tip)?;
    Ok(format!("set {line} aside as {aside}"))
}

fn roll_forward(home: &Home, line: &LineRef) -> Result<String, DebateError> {
    let done = crate::line::transaction::run(
        home,
        line,
        crate::line::transaction::Options::default(),
        |_| Ok(crate::line::transaction::Plan::Keep(())),
    )?;
    let state = State::load(&home.state_path(line))?;
    Ok(if done.notes.is_empty() {
        format!("{line} had caught up already")
    } else {
        format!("rolled {line} forward to {}", state.standing())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::line_with_debate;

    fn env(home: &Home) -> Environment {
        Environment::for_test(home.project().to_owned(), None)
    }

    fn finding(fix: Fix) -> Finding {
        Finding::new("record", "test", Level::Warn, "broken".into()).fix(fix)
    }

    #[test]
    fn fixes_are_applied_and_say_what_they_did() {
        let (_dir, home, line) = line_with_debate();
        let path = home.state_path(&line);
        let before = std::fs::read(&path).unwrap();
        crate::line::stop::record_turn(&home, &line, "s-1", "The advocate's case.").unwrap();
        let after = std::fs::read(&path).unwrap();
        std::fs::write(&path, &before).unwrap();
        let stale = home.root().join("stale.lock");
        std::fs::write(&stale, "").unwrap();
        let mut findings = [
            finding(Fix::Remove {
                path: stale.clone(),
            }),
            finding(Fix::RollForward {
                line: line.to_string(),
            }),
        ];
        repair(&env(&home), &mut findings);
        assert!(!stale.exists());
        assert_eq!(findings[0].level, Level::Ok);
        assert!(
            findings[0]
                .fixed
                .as_deref()
                .unwrap()
                .starts_with("removed ")
        );
        assert_eq!(findings[1].level, Level::Ok, "{:?}", findings[1].fixed);
        assert!(findings[1].fixed.as_deref().unwrap().starts_with("rolled "));
        assert_eq!(std::fs::read(&path).unwrap(), after);
    }

    #[test]
    fn a_fix_that_cannot_be_made_says_why_and_leaves_the_level() {
        let (_dir, home, _line) = line_with_debate();
        let mut findings = [
            finding(Fix::RollForward {
                line: "no-such-debate@main".into(),
            }),
            finding(Fix::Rewrite {
                path: home.root().join("not-a-command.md"),
            }),
        ];
        repair(&env(&home), &mut findings);
        assert_eq!(findings[0].level, Level::Warn);
        let why = findings[0].fixed.as_deref().unwrap();
        assert!(
            why.starts_with("not fixed: ") && why.contains("no-such-debate"),
            "{why}"
        );
        assert_eq!(findings[1].level, Level::Warn);
        assert!(
            findings[1]
                .fixed
                .as_deref()
                .unwrap()
                .contains("is not one of anvil's commands")
        );
    }
}
