//! Is the record sound: leftovers of killed processes, every reachable object, live files
//! against the lines they show, the index of recent debates.
//!
//! `locks` tells anvil's ref locks from other programs'; `contents` reads the objects and holds
//! each line's live files against its tip.

mod contents;
mod locks;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::finding::{Finding, Fix, Level};
use crate::home::{Home, LineRef};
use crate::record::store::Record;

pub(super) use locks::line_of;

/// A temporary file older than this belongs to no running anvil (a hook finishes within its
/// 60-second timeout); a lock another program made this long ago is more likely a leftover
/// than in use, and reported so (but never removed).
const STALE: Duration = Duration::from_secs(60);

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
    out.extend(locks::locks(home, &dir, maintaining, &age));
    out.extend(leftovers(home, maintaining, &age));
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
    out.push(contents::objects(&dir));
    out.extend(contents::lines(home, &dir));
    out.push(recent_index(&dir));
    out
}

/// Temporary files of killed processes: a git object write's, a live file's, a slash
/// command's arguments never taken. A maintenance's git writes temporary files as long as it
/// needs them, so while one runs none is stale.
fn leftovers(home: &Home, maintaining: bool, age: &dyn Fn(&Path) -> Duration) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut leftovers: Vec<(PathBuf, &str)> = Vec::new();
    walk(&home.record_dir().join("objects"), &mut |p| {
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
    out
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
        Ok(Health::Older) => finding(
            Level::Note,
            format!(
                "the index of recent debates {} was written by an older anvil: the next \
                 `anvil log` rewrites it as a journal",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::line_with_debate;

    fn of<'a>(findings: &'a [Finding], name: &str) -> Vec<&'a Finding> {
        findings.iter().filter(|f| f.check == name).collect()
    }

    /// The record's findings of the check `name`, now.
    pub(super) fn checked(home: &Home, name: &str) -> Vec<Finding> {
        check(home, SystemTime::now())
            .into_iter()
            .filter(|f| f.check == name)
            .collect()
    }

    pub(super) fn age(path: &Path, by: Duration) {
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
    fn a_record_that_is_not_a_repository_fails_and_stops_the_checks() {
        let (_dir, home, _line) = line_with_debate();
        std::fs::remove_file(home.record_dir().join("HEAD")).unwrap();
        let found = check(&home, SystemTime::now());
        assert_eq!(of(&found, "objects")[0].level, Level::Fail);
        assert!(of(&found, "live-files").is_empty());
    }

    #[test]
    fn long_lists_of_debates_are_cut_to_three() {
        let debates: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(names(&debates[..2]), "a, b");
        assert_eq!(names(&debates), "a, b, c and 2 more");
    }
}
