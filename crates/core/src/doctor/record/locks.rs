//! The record's locks: a ref lock anvil made, one a killed anvil left, and one another
//! program holds, told apart by who made them, never by age.

use std::path::Path;
use std::time::Duration;

use super::{STALE, walk};
use crate::doctor::finding::{Finding, Fix, Level};
use crate::home::{Home, LineRef};
use crate::line::transaction::{legacy_intent_path, older_anvils_lock};
use crate::record::ref_lock::{Holder, TEMP_SUFFIX};
use crate::record::store::Record;

/// The record's locks. A ref lock anvil made says so (it is the same file as anvil's temporary
/// file beside it, see `record::ref_lock`), and whether the anvil that made it lives (it holds
/// that file's `flock`); an older anvil's is recognised by the commit it noted. Only what a
/// killed anvil left is fixed. Any other lock is another program's, or was left by one that
/// was killed: the person is told how to tell and what to do, and nothing removes it.
pub(super) fn locks(
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
pub(in crate::doctor) fn line_of(reference: &str) -> Option<LineRef> {
    let (debate, line) = reference.strip_prefix("refs/anvil/")?.split_once('/')?;
    LineRef::valid(debate, line)
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

#[cfg(test)]
mod tests {
    use super::super::tests::{age, checked};
    use super::*;
    use crate::testkit::line_with_debate;

    #[test]
    fn a_ref_lock_anvil_did_not_make_is_reported_and_never_fixed_whatever_its_age() {
        let (_dir, home, line) = line_with_debate();
        let record = Record::open(&home.record_dir()).unwrap();
        let lock = record.ref_lock_path(&line.debate, &line.line);
        std::fs::write(&lock, "").unwrap();
        let fresh = checked(&home, "leftovers");
        assert_eq!(fresh.len(), 1, "{fresh:#?}");
        assert_eq!(fresh[0].level, Level::Note);
        assert!(
            fresh[0].message.contains("not anvil's"),
            "{}",
            fresh[0].message
        );
        assert_eq!(fresh[0].fix, None);
        age(&lock, STALE + Duration::from_secs(5));
        let stale = checked(&home, "leftovers");
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
        let found = checked(&home, "leftovers");
        assert!(
            found[0].message.contains("older anvil"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].fix, None);

        // Holding exactly that commit, it is that anvil's leftover.
        std::fs::write(&lock, "0123456789abcdef0123456789abcdef01234567\n").unwrap();
        let found = checked(&home, "leftovers");
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
        let found = checked(&home, "leftovers");
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
        let found = checked(&home, "leftovers");
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
        let found = checked(&home, "leftovers");
        assert_eq!(found[0].level, Level::Warn);
        assert!(
            found[0].message.contains("temporary file"),
            "{}",
            found[0].message
        );
        assert_eq!(found[0].fix, Some(Fix::ClearRefLock { reference }));
    }
}
