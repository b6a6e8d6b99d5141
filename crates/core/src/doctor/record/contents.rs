//! The record's contents: every object reachable from the lines, and each line's live files
//! against the state its tip records.

use std::collections::HashSet;
use std::path::Path;

use crate::doctor::finding::{Finding, Fix, Level};
use crate::error::DebateError;
use crate::home::{Home, LineRef};
use crate::model::state::State;
use crate::record::store::Record;
use crate::review::history::{self, LineHistory};

/// How far back a line's live state is looked for in its history.
const BEHIND_SEARCH: usize = 64;

/// Reads every object reachable from `refs/anvil/*` and checks that each hashes to its id.
pub(super) fn objects(dir: &Path) -> Finding {
    let failed = |message: String| {
        Finding::new("record", "objects", Level::Fail, message).hint(
            "the record is damaged: `git --git-dir .anvil/record fsck` says more; fetch the \
             lines from a remote you pushed them to (`anvil pull`) or restore .anvil/record \
             from a backup",
        )
    };
    let repo = match gix::open(dir) {
        Ok(repo) => repo,
        Err(e) => return failed(format!("cannot open the record {}: {e}", dir.display())),
    };
    let tips = match Record::open(dir).and_then(|r| r.lines()) {
        Ok(tips) => tips,
        Err(e) => return failed(format!("cannot list the record's lines: {e}")),
    };
    let mut seen: HashSet<gix::ObjectId> = HashSet::new();
    let mut todo: Vec<gix::ObjectId> = tips.iter().map(|(_, _, id)| *id).collect();
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        let object = match repo.find_object(id) {
            Ok(object) => object,
            Err(e) => return failed(format!("object {id} cannot be read: {e}")),
        };
        match gix::objs::compute_hash(repo.object_hash(), object.kind, &object.data) {
            Ok(actual) if actual == id => {}
            _ => {
                return failed(format!(
                    "object {id} is corrupt: its contents do not match its id"
                ));
            }
        }
        match object.kind {
            gix::object::Kind::Commit => {
                match gix::objs::CommitRef::from_bytes(&object.data, repo.object_hash()) {
                    Ok(commit) => {
                        todo.push(commit.tree());
                        todo.extend(commit.parents());
                    }
                    Err(e) => return failed(format!("commit {id} cannot be parsed: {e}")),
                }
            }
            gix::object::Kind::Tree => {
                match gix::objs::TreeRef::from_bytes(&object.data, repo.object_hash()) {
                    Ok(tree) => todo.extend(
                        tree.entries
                            .iter()
                            .filter(|e| !e.mode.is_commit())
                            .map(|e| e.oid.to_owned()),
                    ),
                    Err(e) => return failed(format!("tree {id} cannot be parsed: {e}")),
                }
            }
            _ => {}
        }
    }
    Finding::new(
        "record",
        "objects",
        Level::Ok,
        format!(
            "{} objects reachable from {} lines read and match their ids",
            seen.len(),
            tips.len()
        ),
    )
}

/// Live files against the record, line by line.
pub(super) fn lines(home: &Home, dir: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let record = match Record::open(dir) {
        Ok(r) => r,
        Err(_) => return out, // reported by `objects`
    };
    let all: Vec<(LineRef, gix::ObjectId)> = match record.lines() {
        Ok(t) => t
            .into_iter()
            .map(|(d, l, id)| (LineRef::new(d, l), id))
            .collect(),
        Err(_) => return out,
    };
    // Lines anvil cannot read (a foreign commit, a blob, … under refs/anvil/): readers show
    // them marked; set aside, they stop troubling anyone, and nothing is deleted.
    let mut tips = Vec::with_capacity(all.len());
    for (line, tip) in all {
        match history::check_line(&record, tip) {
            Ok(()) => tips.push((line, tip)),
            Err(why) => out.push(
                Finding::new(
                    "record",
                    "lines",
                    Level::Fail,
                    format!("{line} is not a debate anvil can read: {why}"),
                )
                .hint(format!(
                    "`anvil doctor --fix` sets it aside as refs/anvil-damaged/{}/{} (nothing is \
                     deleted); if it came from a remote, remove it there too",
                    line.debate, line.line
                ))
                .fix(Fix::SetAside {
                    line: line.to_string(),
                    tip: tip.to_string(),
                }),
            ),
        }
    }
    let live = home.live_lines().unwrap_or_default();
    let mut in_step = 0;
    for line in &live {
        let Some((_, tip)) = tips.iter().find(|(l, _)| l == line) else {
            out.push(Finding::new(
                "record",
                "live-files",
                Level::Fail,
                format!(
                    "{line} has live files ({}) but no line in the record",
                    home.line_dir(line).display()
                ),
            ).hint("its history is lost from the record; its transcript.md is all there is (keep a copy)"));
            continue;
        };
        match compare(home, &record, line, *tip) {
            Ok(None) => in_step += 1,
            Ok(Some(finding)) => out.push(finding),
            Err(e) => out.push(
                Finding::new("record", "live-files", Level::Fail, format!("{line}: {e}")).hint(
                    format!("`anvil resume {line}` rebuilds its live files from the record"),
                ),
            ),
        }
        out.extend(incoming(home, &record, line, *tip));
    }
    for (line, _) in &tips {
        if !live.contains(line) {
            out.push(
                Finding::new(
                    "record",
                    "live-files",
                    Level::Note,
                    format!(
                        "{line} is in the record only (pulled, or its live files were removed)"
                    ),
                )
                .hint(format!(
                    "`anvil resume {line}` puts an unfinished line back on disk"
                )),
            );
        }
    }
    out.push(Finding::new(
        "record",
        "live-files",
        Level::Ok,
        format!(
            "{in_step} of {} lines have live files that agree with the record",
            live.len()
        ),
    ));
    out
}

/// `None` when the live state agrees with the tip; a finding when it does not.
fn compare(
    home: &Home,
    record: &Record,
    line: &LineRef,
    tip: gix::ObjectId,
) -> Result<Option<Finding>, DebateError> {
    let live = State::load(&home.state_path(line))?;
    let at_tip = history::state_at(record, tip)?;
    // A state file names the commit it shows; one written before it did is compared by what
    // it says.
    let names = |id: gix::ObjectId| live.tip.as_deref() == Some(id.to_string().as_str());
    if (names(tip) || live.tip.is_none()) && live.progress == at_tip.progress {
        return Ok(None);
    }
    let chain = history::chain(record, tip)?;
    let behind = chain
        .iter()
        .rev()
        .skip(1)
        .take(BEHIND_SEARCH)
        .position(|entry| match &live.tip {
            Some(_) => names(entry.commit),
            None => {
                history::state_at(record, entry.commit).is_ok_and(|s| s.progress == live.progress)
            }
        })
        .filter(|_| !names(tip));
    Ok(Some(match behind {
        Some(n) => Finding::new(
            "record",
            "live-files",
            Level::Warn,
            format!(
                "{line}: state.md is {} commit{} behind the record ({} there, {} on disk)",
                n + 1,
                if n == 0 { "" } else { "s" },
                at_tip.standing(),
                live.standing()
            ),
        )
        .hint("`anvil doctor --fix` rolls the live files forward from the record")
        .fix(Fix::RollForward {
            line: line.to_string(),
        }),
        None => Finding::new(
            "record",
            "live-files",
            Level::Fail,
            format!(
                "{line}: state.md disagrees with the record ({} there, {} on disk) and is not \
                 an earlier state of it",
                at_tip.standing(),
                live.standing()
            ),
        )
        .hint(
            "the record is the source of truth: `anvil doctor --fix` (or the next stop) rebuilds \
             the live files from it, keeping the edited file as state.md.edited",
        )
        .fix(Fix::Overrule {
            line: line.to_string(),
        }),
    }))
}

/// A phase text the hook saved and never recorded.
fn incoming(home: &Home, record: &Record, line: &LineRef, tip: gix::ObjectId) -> Option<Finding> {
    let path = home.incoming_path(line);
    let text = std::fs::read_to_string(&path).ok()?;
    let recorded = LineHistory::load(record, line)
        .ok()
        .filter(|h| h.tip == tip)
        .and_then(|h| {
            let last = h.entries.last()?;
            history::response(record, last).ok().flatten()
        })
        .is_some_and(|last| last.trim() == text.trim());
    Some(if recorded {
        Finding::new(
            "record",
            "incoming",
            Level::Warn,
            format!(
                "{} is left over: its text is recorded already",
                path.display()
            ),
        )
        .hint("`anvil doctor --fix` removes it")
        .fix(Fix::Remove { path })
    } else {
        Finding::new(
            "record",
            "incoming",
            Level::Warn,
            format!(
                "{} holds a phase text that was not recorded (a hook failed while recording it)",
                path.display()
            ),
        )
        .hint(format!(
            "the next stop of the session records its turn; if the session is gone, keep the \
             file and run `anvil resume {line}`"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::checked;
    use super::*;
    use crate::testkit::line_with_debate;

    #[test]
    fn a_missing_object_fails_the_record() {
        let (_dir, home, line) = line_with_debate();
        let record = Record::open(&home.record_dir()).unwrap();
        let tip = record.tip(&line.debate, &line.line).unwrap().unwrap();
        let hex = tip.to_string();
        let loose = home
            .record_dir()
            .join("objects")
            .join(&hex[..2])
            .join(&hex[2..]);
        std::fs::remove_file(loose).unwrap();
        let objects = checked(&home, "objects");
        assert_eq!(objects[0].level, Level::Fail);
        assert!(objects[0].message.contains(&hex), "{}", objects[0].message);
    }

    #[test]
    fn live_files_behind_the_record_are_rolled_forward_and_a_stranger_state_is_not() {
        let (_dir, home, line) = line_with_debate();
        let path = home.state_path(&line);
        let before = std::fs::read(&path).unwrap();
        crate::line::stop::record_turn(&home, &line, "s-1", "The advocate's case.").unwrap();
        std::fs::write(&path, &before).unwrap();
        let live = checked(&home, "live-files");
        assert_eq!(live[0].level, Level::Warn, "{live:#?}");
        assert!(
            live[0].message.contains("1 commit behind"),
            "{}",
            live[0].message
        );
        assert_eq!(
            live[0].fix,
            Some(Fix::RollForward {
                line: line.to_string()
            })
        );

        let mut stranger = State::load(&path).unwrap();
        stranger.tip = Some("0".repeat(40));
        stranger.progress.round += 7;
        std::fs::write(&path, stranger.to_markdown()).unwrap();
        let live = checked(&home, "live-files");
        assert_eq!(live[0].level, Level::Fail, "{live:#?}");
        assert_eq!(
            live[0].fix,
            Some(Fix::Overrule {
                line: line.to_string()
            })
        );
    }

    #[test]
    fn a_phase_text_left_unrecorded_is_kept_and_one_recorded_already_is_removed() {
        let (_dir, home, line) = line_with_debate();
        let incoming = home.incoming_path(&line);
        std::fs::write(&incoming, "A text the hook never recorded.").unwrap();
        let kept = checked(&home, "incoming");
        assert_eq!(kept[0].level, Level::Warn);
        assert_eq!(kept[0].fix, None);

        crate::line::stop::record_turn(&home, &line, "s-1", "Recorded already.").unwrap();
        std::fs::write(&incoming, "Recorded already.\n").unwrap();
        let left = checked(&home, "incoming");
        assert_eq!(left[0].fix, Some(Fix::Remove { path: incoming }));
    }
}
