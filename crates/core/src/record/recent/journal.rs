//! The journal's file: its lines, and how it is opened, locked and appended to. What the
//! lines mean and who writes which is in the parent module's documentation.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::record::stamp::Stamp;
use crate::record::store::Record;

/// The journal's file name inside the record.
pub use crate::record::stamp::JOURNAL as FILE;
pub(super) const HEADER: &str =
    "anvil-recent 2: each debate's last activity, noted before its refs move\n";
/// The header of the index earlier builds wrote before the journal (a sorted file with
/// fingerprint chains).
pub(super) const OLDER_HEADER: &str = "anvil-recent 1 ";

/// The journal's path in `record`.
pub fn path(record: &Path) -> PathBuf {
    record.join(FILE)
}

/// One line, in one write, with a newline on both sides (see the module's documentation).
pub(super) fn append(file: &mut File, line: &str) -> io::Result<()> {
    file.write_all(format!("\n{line}\n").as_bytes())
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Lock {
    /// A note or a stamp: waits for a rewrite to end.
    Shared,
    /// A rewrite from the refs: waits for the writers between their note and their ref.
    Exclusive,
    /// A correction or a compaction by a reader: done now or left to the next reader.
    TryExclusive,
    /// The removal of a journal that cannot take a note: waits, and creates nothing.
    Remove,
}

/// The journal, opened for reading and appending and locked; opened again when a rewrite
/// renamed another file over it while this process waited. `None`: busy ([`Lock::TryExclusive`]).
/// Only a rewrite from the refs creates a missing journal.
pub(super) fn open_locked(path: &Path, lock: Lock) -> io::Result<Option<File>> {
    // Each time round, a rewrite has replaced the file: others make progress meanwhile, so
    // only a clock bounds the waiting (a rewrite is rare; a storm of them is a test's).
    let patience = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < patience {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(lock == Lock::Exclusive)
            .open(path)?;
        match lock {
            Lock::Shared => file.lock_shared()?,
            Lock::Exclusive | Lock::Remove => file.lock()?,
            Lock::TryExclusive => match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            },
        }
        match std::fs::metadata(path) {
            Ok(now) if same_file(&file.metadata()?, &now) => return Ok(Some(file)),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound && lock != Lock::Exclusive => {
                return Err(e);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "{} kept being replaced while anvil waited for it",
        path.display()
    )))
}

#[cfg(unix)]
pub(super) fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
pub(super) fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    true
}

pub(super) enum Entry<'a> {
    /// `+ TIME DEBATE LINE TIP`: a line of the debate is about to move to a commit of `time`.
    Note(i64, &'a str),
    /// `= TIME DEBATE`: the debate's activity is `time`; `= - DEBATE`: it has no line.
    Set(Option<i64>, &'a str),
    /// `! STAMP`: every debate under the refs at that stamp is noted above.
    Covers(&'a str),
    /// `? COUNT HASH`: every debate under the refs whose names list so is noted above.
    Listed(&'a str),
}

/// One line, checked in one pass of each word (a reader parses thousands of them).
pub(super) fn parse(line: &str) -> Option<Entry<'_>> {
    let name = |w: &'_ str| {
        !w.is_empty()
            && !w.starts_with(['.', '-'])
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let mut words = line.split(' ');
    let entry = match (words.next()?, words.next()?, words.next()) {
        ("+", time, Some(debate)) => {
            let (line, tip) = (words.next()?, words.next()?);
            let tip_ok = tip.len() == 40 && tip.bytes().all(|b| b.is_ascii_hexdigit());
            (name(debate) && name(line) && tip_ok)
                .then(|| Some(Entry::Note(time.parse().ok()?, debate)))??
        }
        ("=", "-", Some(debate)) if name(debate) => Entry::Set(None, debate),
        ("=", time, Some(debate)) if name(debate) => Entry::Set(Some(time.parse().ok()?), debate),
        ("!", stamp, None) if !stamp.is_empty() => Entry::Covers(stamp),
        ("?", count, Some(hash))
            if count.parse::<usize>().is_ok()
                && hash.len() == 40
                && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Entry::Listed(line.get(2..)?)
        }
        _ => return None,
    };
    words.next().is_none().then_some(entry)
}

pub(super) fn damaged(line: &str) -> String {
    format!("a line is damaged: {line:?}")
}

/// A journal as a reader holds it: the compacted part (the `=` lines a rewrite wrote, oldest
/// first, then its `!` line), read lazily from its end, since a reader wants the newest few;
/// and what was appended after it, parsed whole.
#[derive(Default)]
pub(super) struct Journal {
    /// The complete lines after the header.
    pub(super) text: String,
    /// Where the appended part begins: at the first empty line (every append starts with
    /// one; a rewrite writes none).
    pub(super) base_end: usize,
    /// The claims of the appended lines, and the debates an appended `=` line sets (their
    /// line in the compacted part no longer counts).
    pub(super) over: HashMap<String, Option<i64>>,
    pub(super) reset: HashSet<String>,
    pub(super) covers: Option<String>,
    /// The last `?` line's names, unless a `= -` line came after it.
    pub(super) listed: Option<String>,
    pub(super) notes: usize,
}

impl Journal {
    pub(super) fn parse(bytes: &[u8]) -> Result<Journal, String> {
        let body = bytes
            .strip_prefix(HEADER.as_bytes())
            .ok_or("its header is not anvil's")?;
        // A last line without its newline is a note being written, or a dead writer's.
        let complete = body
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(&body[..0], |i| &body[..=i]);
        let text = std::str::from_utf8(complete).map_err(|_| "it is not text")?;
        let base_end = match text.starts_with('\n') {
            true => 0,
            false => text.find("\n\n").map_or(text.len(), |i| i + 1),
        };
        let mut journal = Journal {
            base_end,
            ..Journal::default()
        };
        // The compacted part's stamp, if it ends with one.
        if let Some(last) = text[..base_end].trim_end_matches('\n').rsplit('\n').next()
            && let Some(Entry::Covers(stamp)) = parse(last)
        {
            journal.covers = Some(stamp.to_owned());
        }
        for line in text[base_end..].split('\n').filter(|l| !l.is_empty()) {
            match parse(line).ok_or_else(|| damaged(line))? {
                Entry::Note(time, debate) => {
                    journal.notes += 1;
                    let claim = journal.over.entry(debate.to_owned()).or_default();
                    *claim = Some(claim.map_or(time, |c| c.max(time)));
                }
                Entry::Set(time, debate) => {
                    if time.is_none() {
                        journal.listed = None;
                    }
                    journal.over.insert(debate.to_owned(), time);
                    journal.reset.insert(debate.to_owned());
                }
                Entry::Covers(stamp) => journal.covers = Some(stamp.to_owned()),
                Entry::Listed(names) => journal.listed = Some(names.to_owned()),
            }
        }
        journal.text = text.to_owned();
        Ok(journal)
    }

    /// `None` when there is no journal or it is damaged.
    pub(super) fn read(record: &Path) -> Option<Journal> {
        Journal::parse(&std::fs::read(path(record)).ok()?).ok()
    }

    /// Every debate's claim, the whole file read (a listing, a compaction, `anvil doctor`).
    pub(super) fn claims(&self) -> Result<HashMap<String, i64>, String> {
        let mut out: HashMap<String, Option<i64>> = HashMap::new();
        for line in self.text[..self.base_end]
            .split('\n')
            .filter(|l| !l.is_empty())
        {
            match parse(line).ok_or_else(|| damaged(line))? {
                Entry::Set(Some(t), debate) if !self.reset.contains(debate) => {
                    out.insert(debate.to_owned(), Some(t));
                }
                Entry::Set(Some(_), _) | Entry::Covers(_) => {}
                _ => return Err(damaged(line)),
            }
        }
        for (debate, claim) in &self.over {
            let slot = out.entry(debate.clone()).or_default();
            *slot = match (self.reset.contains(debate), *slot) {
                (false, Some(base)) => claim.map_or(Some(base), |c| Some(c.max(base))),
                _ => *claim,
            };
        }
        Ok(out.into_iter().filter_map(|(d, t)| Some((d, t?))).collect())
    }

    /// The journal as a rewrite leaves it: one claim per debate, oldest first, and the stamp.
    pub(super) fn compacted(claims: &HashMap<String, i64>, covers: Option<&str>) -> Vec<u8> {
        let mut sorted: Vec<(i64, &str)> = claims.iter().map(|(d, t)| (*t, d.as_str())).collect();
        sorted.sort_unstable();
        let mut out = HEADER.to_owned();
        for (time, debate) in sorted {
            out.push_str(&format!("= {time} {debate}\n"));
        }
        if let Some(stamp) = covers {
            out.push_str(&format!("! {stamp}\n"));
        }
        out.into_bytes()
    }

    /// Does the journal know every debate under the refs as `stamp` finds them? Lists them
    /// when the stamp is not the one it covers, and checks the names against the claims
    /// unless they are the ones a `?` line counted; then notes that it covers the stamp, once
    /// the refs have settled, or else the names it checked (again, when a `?` line counted
    /// them: the write settles the refs for the next reader).
    pub(super) fn covers_refs(&self, record: &Record, stamp: &Stamp) -> bool {
        if self.covers.as_ref() == Some(&stamp.refs) {
            return true;
        }
        let Ok(names) = record.debate_names() else {
            return false;
        };
        let listed = listing(&names);
        let counted = self.listed.as_deref() == Some(listed.as_str());
        if !counted {
            let Ok(claims) = self.claims() else {
                return false;
            };
            let known = names.iter().all(|debate| {
                claims.contains_key(debate)
                    // A folder git left empty, or one holding only locks, holds no debate.
                    || record.lines_of_debate(debate).is_ok_and(|l| l.is_empty())
            });
            if !known {
                return false;
            }
        }
        // Noted again when counted: the write is what lets the next reader trust the stamp
        // (its time comes after the refs', see `Stamp::refs_settled`).
        let line = match stamp.refs_settled {
            true => format!("! {}", stamp.refs),
            false => format!("? {listed}"),
        };
        // A cache: another reader notes it if this one cannot, or when a torn last line (a
        // dead writer's) would become damage under it.
        let _ = open_locked(&path(record.path()), Lock::Shared).and_then(|file| {
            let mut file = file.expect("waited for");
            let mut last = [b'\n'];
            if file.seek(SeekFrom::End(-1)).is_ok() {
                file.read_exact(&mut last)?;
            }
            match last {
                [b'\n'] => append(&mut file, &line),
                _ => Ok(()),
            }
        });
        true
    }
}

/// The names of the debates under the refs as a `?` line counts them: how many, and the SHA-1
/// of them one a line, sorted.
pub(super) fn listing(names: &[String]) -> String {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    for name in names {
        hasher.update(name.as_bytes());
        hasher.update(b"\n");
    }
    let hash = hasher
        .try_finalize()
        .map_or_else(|_| "0".repeat(40), |id| id.to_string());
    format!("{} {hash}", names.len())
}
