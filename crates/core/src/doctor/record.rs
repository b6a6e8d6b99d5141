//! Is the record sound: leftovers of killed processes, every reachable object, live files
//! against the lines they show, the index of recent debates.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::finding::{Finding, Fix, Level};
use crate::error::DebateError;
use crate::home::{Home, LineRef};
use crate::line::transaction::{legacy_intent_path, older_anvils_lock};
use crate::model::state::State;
use crate::record::ref_lock::{Holder, TEMP_SUFFIX};
use crate::record::store::Record;
use crate::review::history::{self, LineHistory};

/// A temporary file older than this belongs to no running anvil (a hook finishes within its
/// 60-second timeout); a lock another program made this long ago is more likely a leftover
/// than in use, and reported so (but never removed).
pub(crate) const STALE: Duration = Duration::from_secs(60);

/// How far back a line's live state is looked for in its history.
const BEHIND_SEARCH: usize = 64;

/// The record's findings.
pub(super) fn check(home: &Home, now: SystemTime) -> Vec<Finding> {
    let mut out = Vec::new();
    let dir = home.record_dir();
    let age = |path: &Path| {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default()
    };

    // Leftovers of killed processes. Locks are told apart by who made them, never by age.
    let maintaining = crate::record::maintenance::running(&dir);
    out.extend(locks(home, &dir, maintaining, &age));
    let mut leftovers = Vec::new();
    walk(&dir.join("objects"), &mut |p| {
        if file_name_starts(p, "tmp_obj_") || file_name_starts(p, "tmp_pack_") {
            leftovers.push((p.to_owned(), "temporary object file"));
        }
    });
    walk(&home.debates_dir(), &mut |p| {
        if file_name_starts(p, ".anvil-tmp") {
            leftovers.push((p.to_owned(), "temporary live file"));
        }
    });
    walk(&home.slash_dir(), &mut |p| {
        if !file_name_starts(p, ".gitignore") {
            leftovers.push((p.to_owned(), "slash command's arguments never taken"));
        }
    });
    // A maintenance's git writes temporary files as long as it needs them.
    for (path, what) in leftovers {
        let age = age(&path);
        if age >= STALE && !maintaining {
            out.push(
                Finding::new(
                    "record",
                    "leftovers",
                    Level::Warn,
                    format!(
                        "stale {what} {} ({} s old), left by a process that was killed",
                        path.display(),
                        age.as_secs()
                    ),
                )
                .hint("`anvil doctor --fix` removes it; nothing is lost")
                .fix(Fix::Remove { path }),
            );
        } else {
            out.push(Finding::new(
                "record",
                "leftovers",
                Level::Note,
                format!("{what} {} is fresh: a process is using it", path.display()),
            ));
        }
    }

    out.extend(sessions(home));

    if !dir.join("HEAD").is_file() {
        out.push(
            Finding::new(
                "record",
                "objects",
                Level::Fail,
                format!("{} is not a git repository", dir.display()),
            )
            .hint("`anvil init` creates the record; restore it from a backup or a remote if it was deleted"),
        );
        return out;
    }
    out.push(objects(&dir));
    out.extend(lines(home, &dir));
    out.push(recent_index(&dir));
    out
}

/// The record's locks. A ref lock anvil made says so (it is the same file as anvil's temporary
/// file beside it, see `record::ref_lock`), and whether the anvil that made it lives (it holds
/// that file's `flock`); an older anvil's is recognised by the commit it noted. Only what a
/// killed anvil left is fixed. Any other lock is another program's, or was left by one that
/// was killed: the person is told how to tell and what to do, and nothing removes it.
fn locks(
    home: &Home,
    dir: &Path,
    maintaining: bool,
    age: &dyn Fn(&Path) -> Duration,
) -> Vec<Finding> {
    let record = Record::open(dir).ok();
    let (mut ref_locks, mut temps) = (Vec::new(), Vec::new());
    walk(&dir.join("refs"), &mut |p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.ends_with(TEMP_SUFFIX) {
            temps.push(p.to_owned());
        } else if name.ends_with(".lock") {
            ref_locks.push(p.to_owned());
        }
    });
    let mut out = Vec::new();
    for lock in &ref_locks {
        let Some(reference) = ref_of(dir, lock, ".lock") else {
            continue;
        };
        out.extend(ref_lock(
            home,
            record.as_ref(),
            &reference,
            lock,
            maintaining,
            age(lock),
        ));
    }
    for temp in temps {
        let Some(reference) = ref_of(dir, &temp, TEMP_SUFFIX) else {
            continue;
        };
        let holder = record
            .as_ref()
            .and_then(|r| r.ref_lock_holder(&reference).ok());
        if matches!(holder, Some(Holder::Anvil | Holder::KilledAnvil)) {
            // Said with the lock made from it.
            continue;
        }
        out.push(if crate::fsutil::held(&temp) {
            Finding::new(
                "record",
                "leftovers",
                Level::Note,
                format!(
                    "anvil's temporary file {} is in use: an anvil is moving {reference}",
                    temp.display()
                ),
            )
        } else {
            Finding::new(
                "record",
                "leftovers",
                Level::Warn,
                format!(
                    "anvil's temporary file {} was left by an anvil that was killed while it \
                     moved {reference}; the next change of the line removes it",
                    temp.display()
                ),
            )
            .hint("`anvil doctor --fix` removes it now; nothing is lost")
            .fix(Fix::ClearRefLock { reference })
        });
    }
    for name in ["packed-refs.lock", "HEAD.lock", "config.lock", "index.lock"] {
        let lock = dir.join(name);
        if lock.exists() {
            out.push(foreign_lock(&lock, None, maintaining, age(&lock)));
        }
    }
    out
}

/// The ref (`refs/…`) whose file under the record `dir` is `path`, less `suffix`.
fn ref_of(dir: &Path, path: &Path, suffix: &str) -> Option<String> {
    let relative = path.strip_prefix(dir).ok()?.to_str()?;
    let reference = relative.strip_suffix(suffix)?.replace('\\', "/");
    Some(reference)
}

/// The line whose ref is `reference`, for a ref of `refs/anvil/`.
fn line_of(reference: &str) -> Option<LineRef> {
    let (debate, line) = reference.strip_prefix("refs/anvil/")?.split_once('/')?;
    (crate::record::store::valid_name(debate) && crate::record::store::valid_name(line))
        .then(|| LineRef::new(debate, line))
}

/// What is known of the lock of the ref `reference`.
fn ref_lock(
    home: &Home,
    record: Option<&Record>,
    reference: &str,
    lock: &Path,
    maintaining: bool,
    age: Duration,
) -> Option<Finding> {
    let holder = record.map_or(Ok(Holder::Other), |r| r.ref_lock_holder(reference));
    let line = line_of(reference);
    let intent = line.as_ref().map(|l| legacy_intent_path(home, l));
    let finding = |level, message: String| Finding::new("record", "leftovers", level, message);
    let fix = || Fix::ClearRefLock {
        reference: reference.to_owned(),
    };
    Some(match holder {
        Ok(Holder::Nobody) => return None,
        Ok(Holder::Anvil) => finding(
            Level::Note,
            format!(
                "ref lock {} is anvil's: an anvil is moving {reference} right now",
                lock.display()
            ),
        ),
        Ok(Holder::KilledAnvil) => finding(
            Level::Warn,
            format!(
                "ref lock {} was left by an anvil that was killed while it moved {reference} \
                 (the lock is the same file as anvil's temporary file beside it); the next \
                 change of the line removes it",
                lock.display()
            ),
        )
        .hint("`anvil doctor --fix` removes it now; nothing is lost")
        .fix(fix()),
        _ if line
            .as_ref()
            .zip(record)
            .zip(intent.as_ref())
            .is_some_and(|((line, record), intent)| older_anvils_lock(record, line, intent)) =>
        {
            finding(
                Level::Warn,
                format!(
                    "ref lock {} was left by an older anvil that was killed while it moved \
                     {reference} (it holds the commit that anvil noted in {}); the next change \
                     of the line removes it",
                    lock.display(),
                    intent.as_deref().unwrap_or(Path::new("")).display()
                ),
            )
            .hint("`anvil doctor --fix` removes it now; nothing is lost")
            .fix(fix())
        }
        _ => foreign_lock(
            lock,
            intent.as_deref().filter(|i| i.exists()),
            maintaining,
            age,
        ),
    })
}

/// A lock anvil did not make: held by a program at work, or left by one that was killed. Its
/// age says how likely each is, never which: it is reported, and never removed.
fn foreign_lock(lock: &Path, intent: Option<&Path>, maintaining: bool, age: Duration) -> Finding {
    let finding = |level, message: String| Finding::new("record", "leftovers", level, message);
    if maintaining {
        return finding(
            Level::Note,
            format!(
                "lock {} is in use: `anvil gc` is packing the record",
                lock.display()
            ),
        );
    }
    let empty = std::fs::metadata(lock).is_ok_and(|m| m.len() == 0);
    let mut message = format!(
        "lock {} ({} s old{}) is not anvil's: a git command on the record holds it, or one that \
         was killed left it",
        lock.display(),
        age.as_secs(),
        if empty { ", empty" } else { "" }
    );
    if let (true, Some(intent)) = (empty, intent) {
        message.push_str(&format!(
            "; beside it is {}, which an older anvil wrote before it took a ref lock: most \
             likely that anvil was killed between creating the lock and filling it (this \
             version never leaves a lock empty)",
            intent.display()
        ));
    }
    let level = if age >= STALE {
        Level::Warn
    } else {
        Level::Note
    };
    finding(level, message).hint(format!(
        "anvil never removes a lock it did not make, and debates on that ref wait for it; if no \
         git command runs on the record, remove it by hand: rm {}",
        lock.display()
    ))
}

/// The session files (`.anvil/sessions/SESSION`, naming the line a Claude session drives):
/// one that cannot be read, names no line, or names a line with no live files here binds
/// nothing, and is reported with its removal as the fix.
fn sessions(home: &Home) -> Vec<Finding> {
    let mut out = Vec::new();
    let Ok(entries) = crate::fsutil::visible_entries(&home.sessions_dir()) else {
        return out;
    };
    for (_, path) in entries {
        let problem = match crate::fsutil::read_optional(&path) {
            Err(e) => Some(format!("cannot be read ({e})")),
            Ok(None) => None,
            Ok(Some(text)) => match LineRef::parse(&text) {
                None => Some("names no line".to_owned()),
                Some(line) if !home.line_dir(&line).is_dir() => {
                    Some(format!("names {line}, which has no live files here"))
                }
                Some(_) => None,
            },
        };
        if let Some(problem) = problem {
            out.push(
                Finding::new(
                    "record",
                    "sessions",
                    Level::Warn,
                    format!("the session file {} {problem}", path.display()),
                )
                .hint("`anvil doctor --fix` removes it; the session then drives nothing")
                .fix(Fix::Remove { path }),
            );
        }
    }
    out
}

/// The index of recent debates (the order of `anvil log`) against the refs it caches.
fn recent_index(dir: &Path) -> Finding {
    use crate::record::recent::Health;
    let finding = |level, message: String| Finding::new("record", "recent-index", level, message);
    let health = Record::open(dir).and_then(|record| crate::record::recent::check(&record));
    let path = crate::record::recent::path(dir);
    let rebuild =
        "`anvil doctor --fix` rebuilds it from the refs (so does `anvil gc`); nothing is lost";
    match health {
        Ok(Health::Fine { debates }) => finding(
            Level::Ok,
            format!(
                "the index of recent debates agrees with the refs ({debates} debate{})",
                if debates == 1 { "" } else { "s" }
            ),
        ),
        Ok(Health::Missing) => finding(
            Level::Note,
            format!(
                "there is no index of recent debates ({}): the next `anvil log` builds it",
                path.display()
            ),
        )
        .hint(rebuild)
        .fix(Fix::RebuildIndex),
        Ok(Health::Damaged(why)) => finding(
            Level::Warn,
            format!(
                "the index of recent debates {} cannot be read ({why}); `anvil log` rebuilds it, \
                 with one pass over every ref",
                path.display()
            ),
        )
        .hint(rebuild)
        .fix(Fix::RebuildIndex),
        Ok(Health::Outdated { behind, ahead }) => {
            let mut parts = Vec::new();
            if !behind.is_empty() {
                parts.push(format!(
                    "it misses that {} moved (refs written by git behind anvil's back?); \
                     `anvil log` may list {} too low",
                    names(&behind),
                    if behind.len() == 1 { "it" } else { "them" }
                ));
            }
            if !ahead.is_empty() {
                parts.push(format!(
                    "it claims {} moved later than {} did (corrected when read)",
                    names(&ahead),
                    if ahead.len() == 1 { "it" } else { "they" }
                ));
            }
            let level = if behind.is_empty() {
                Level::Note
            } else {
                Level::Warn
            };
            finding(
                level,
                format!(
                    "the index of recent debates is out of date: {}",
                    parts.join("; ")
                ),
            )
            .hint(rebuild)
            .fix(Fix::RebuildIndex)
        }
        Err(e) => finding(
            Level::Warn,
            format!("cannot check the index of recent debates: {e}"),
        ),
    }
}

/// `a, b and 3 more`.
fn names(debates: &[String]) -> String {
    let shown: Vec<&str> = debates.iter().take(3).map(String::as_str).collect();
    match debates.len().saturating_sub(3) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

fn file_name_starts(path: &Path, prefix: &str) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(prefix))
}

/// Calls `each` for every file under `dir` (not following symlinks).
fn walk(dir: &Path, each: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, each),
            Ok(_) => each(&path),
            Err(_) => {}
        }
    }
}

/// Reads every object reachable from `refs/anvil/*` and checks that each hashes to its id.
fn objects(dir: &Path) -> Finding {
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
fn lines(home: &Home, dir: &Path) -> Vec<Finding> {
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
    use super::*;
    use crate::testkit::line_with_debate;

    fn of<'a>(findings: &'a [Finding], name: &str) -> Vec<&'a Finding> {
        findings.iter().filter(|f| f.check == name).collect()
    }

    fn age(path: &Path, by: Duration) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - by).unwrap();
    }

    #[test]
    fn a_sound_record_with_its_debate_in_step_is_all_ok() {
        let (_dir, home, _line) = line_with_debate();
        let found = check(&home, SystemTime::now());
        assert!(found.iter().all(|f| f.level <= Level::Note), "{found:#?}");
        assert_eq!(of(&found, "objects")[0].level, Level::Ok);
        assert!(
            of(&found, "live-files")
                .iter()
                .any(|f| f.message.starts_with("1 of 1 lines"))
        );
    }

    #[test]
    fn a_ref_lock_anvil_did_not_make_is_reported_and_never_fixed_whatever_its_age() {
        let (_dir, home, line) = line_with_debate();
        let record = Record::open(&home.record_dir()).unwrap();
        let lock = record.ref_lock_path(&line.debate, &line.line);
        std::fs::write(&lock, "").unwrap();
        let fresh = check(&home, SystemTime::now());
        let fresh = of(&fresh, "leftovers");
        assert_eq!(fresh.len(), 1, "{fresh:#?}");
        assert_eq!(fresh[0].level, Level::Note);
        assert!(
            fresh[0].message.contains("not anvil's"),
            "{}",
            fresh[0].message
        );
        assert_eq!(fresh[0].fix, None);
        age(&lock, STALE + Duration::from_secs(5));
        let stale = check(&home, SystemTime::now());
        let stale = of(&stale, "leftovers");
        assert_eq!(stale[0].level, Level::Warn);
        assert_eq!(
            stale[0].fix, None,
            "a lock anvil did not make is never removed"
        );
        let hint = stale[0].hint.as_deref().unwrap();
        assert!(hint.contains(&format!("rm {}", lock.display())), "{hint}");

        // Empty, beside the intent an older anvil wrote: most likely that anvil's, not provably.
        let intent = legacy_intent_path(&home, &line);
        std::fs::write(&intent, "0123456789abcdef0123456789abcdef01234567").unwrap();
        let found = check(&home, SystemTime::now());
        let found = of(&found, "leftovers");
        assert!(
            found[0].message.contains("older anvil"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].fix, None);

        // Holding exactly that commit, it is that anvil's leftover.
        std::fs::write(&lock, "0123456789abcdef0123456789abcdef01234567\n").unwrap();
        let found = check(&home, SystemTime::now());
        let found = of(&found, "leftovers");
        assert_eq!(found[0].level, Level::Warn);
        assert!(
            found[0].message.contains("older anvil"),
            "{}",
            found[0].message
        );
        let reference = Record::ref_name(&line.debate, &line.line);
        assert_eq!(found[0].fix, Some(Fix::ClearRefLock { reference }));
    }

    #[test]
    fn a_ref_lock_a_killed_anvil_left_is_fixed_and_one_a_live_anvil_holds_is_not() {
        let (_dir, home, line) = line_with_debate();
        let record = Record::open(&home.record_dir()).unwrap();
        let reference = Record::ref_name(&line.debate, &line.line);
        let files = crate::record::ref_lock::RefFiles::new(record.path(), &reference);
        std::fs::write(&files.temp, "0123456789abcdef0123456789abcdef01234567\n").unwrap();
        std::fs::hard_link(&files.temp, &files.lock).unwrap();
        let found = check(&home, SystemTime::now());
        let found = of(&found, "leftovers");
        assert_eq!(
            found.len(),
            1,
            "the lock and its temporary file are one finding"
        );
        assert_eq!(found[0].level, Level::Warn);
        assert!(found[0].message.contains("killed"), "{}", found[0].message);
        assert_eq!(
            found[0].fix,
            Some(Fix::ClearRefLock {
                reference: reference.clone()
            })
        );

        let alive = std::fs::File::open(&files.temp).unwrap();
        alive.lock().unwrap();
        let found = check(&home, SystemTime::now());
        let found = of(&found, "leftovers");
        assert_eq!(found[0].level, Level::Note);
        assert!(
            found[0].message.contains("right now"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].fix, None);
        drop(alive);

        // The temporary file alone (killed before it took the lock, or after the ref moved).
        std::fs::remove_file(&files.lock).unwrap();
        let found = check(&home, SystemTime::now());
        let found = of(&found, "leftovers");
        assert_eq!(found[0].level, Level::Warn);
        assert!(
            found[0].message.contains("temporary file"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].fix, Some(Fix::ClearRefLock { reference }));
    }

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
        let found = check(&home, SystemTime::now());
        let objects = of(&found, "objects");
        assert_eq!(objects[0].level, Level::Fail);
        assert!(objects[0].message.contains(&hex), "{}", objects[0].message);
    }

    #[test]
    fn a_record_that_is_not_a_repository_fails_and_stops_the_checks() {
        let (_dir, home, _line) = line_with_debate();
        std::fs::remove_file(home.record_dir().join("HEAD")).unwrap();
        let found = check(&home, SystemTime::now());
        assert_eq!(of(&found, "objects")[0].level, Level::Fail);
        assert!(of(&found, "live-files").is_empty());
    }

    #[test]
    fn live_files_behind_the_record_are_rolled_forward_and_a_stranger_state_is_not() {
        let (_dir, home, line) = line_with_debate();
        let path = home.state_path(&line);
        let before = std::fs::read(&path).unwrap();
        crate::line::stop::record_turn(&home, &line, "s-1", "The advocate's case.").unwrap();
        std::fs::write(&path, &before).unwrap();
        let found = check(&home, SystemTime::now());
        let live = of(&found, "live-files");
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
        let found = check(&home, SystemTime::now());
        let live = of(&found, "live-files");
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
        let found = check(&home, SystemTime::now());
        let kept = of(&found, "incoming");
        assert_eq!(kept[0].level, Level::Warn);
        assert_eq!(kept[0].fix, None);

        crate::line::stop::record_turn(&home, &line, "s-1", "Recorded already.").unwrap();
        std::fs::write(&incoming, "Recorded already.\n").unwrap();
        let found = check(&home, SystemTime::now());
        let left = of(&found, "incoming");
        assert_eq!(left[0].fix, Some(Fix::Remove { path: incoming }));
    }

    #[test]
    fn long_lists_of_debates_are_cut_to_three() {
        let debates: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(names(&debates[..2]), "a, b");
        assert_eq!(names(&debates), "a, b, c and 2 more");
    }
}
