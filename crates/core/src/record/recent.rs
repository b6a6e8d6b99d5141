//! Which debates moved last, found without opening every line of every debate.
//!
//! `anvil log` shows the debates with the newest commits first, and the commands that fall
//! back to "the line recorded most recently" want the newest one. Ordering debates from the
//! refs alone opens every line of every debate: thousands of files in a team's record. This
//! journal lets a reader look at the few debates it shows instead.
//!
//! # The journal
//!
//! `anvil-recent`, in the record beside its refs (git ignores it; it is never pushed):
//!
//! ```text
//! anvil-recent 2: …                        a header that says what the file is
//! = 1795000300 20261120-old-77aa           the compacted part: each debate's activity as a
//! = 1795000420 20261122-billing-3f2a       rewrite found it, oldest first, and the stamp of
//! ! <stamp of the refs>                    the refs at which every debate was in it
//!
//! + 1795000480 20261122-billing-3f2a cost 3f2a…    appended: that line is about to move
//!
//! = 1795000200 20261123-queues-9c1e        appended: a correction (`= -`: the debate is gone)
//!
//! ! <stamp of the refs>                    appended: the debates above cover the refs there
//! ```
//!
//! A debate's claim is its last `=` line, raised by every `+` line after it. Each append is
//! one `write` in append mode of a line with a newline on both sides (so the appended part
//! begins at the first empty line, and a note never glues itself to a line a dead writer left
//! unfinished); a last line without its newline is a note being written (or a dead writer's)
//! and is not read. Any other line that cannot be read makes the journal damaged: readers take
//! one pass over every ref instead, which rewrites it.
//!
//! # Why a reader may trust it
//!
//! Every ref anvil writes (a commit of [`crate::line::transaction`], a line `anvil pull`
//! brings) is noted *before* the ref moves, and the writer holds a shared `flock` on the
//! journal until it has moved. So the journal knows every debate anvil made and claims for
//! each at least its real last activity. A reader takes debates in the order of their claims
//! and checks each one it returns against its refs: one whose refs say older (a commit that
//! failed after its note, a line deleted by hand) takes its real place and is corrected in
//! the journal; one whose refs say newer was moved by something other than anvil, so the
//! reader reads the journal again (a writer may have noted it since) and otherwise takes one
//! pass over every ref, which rewrites the journal. Rewrites (a correction, a compaction, a
//! rewrite from the refs) hold the lock exclusively, so no writer is between its note and its
//! ref while they look, and none of them loses a note appended meanwhile: a writer that waited
//! for the lock sees the file was replaced and appends to the new one.
//!
//! Debates `git` wrote behind anvil's back (`git fetch`, a teammate's push) are found by the
//! record's one stamp of its refs ([`crate::record::stamp`]): when it differs from the last
//! `!` line, the reader lists the debates under the refs (one folder, and `packed-refs` if it
//! changed) and, when it knows them all, appends the new stamp; a debate it does not know sends
//! it to the full pass. What no stamp sees is `git` moving a line of a debate the journal
//! knows and does not show: `anvil doctor` reports it, `anvil doctor --fix` and `anvil gc`
//! rewrite the journal from the refs.
//!
//! # Why a journal, read from its end
//!
//! The hook pays one `open`, one `flock` and one `write`. A reader reads the file whole (a
//! few hundred kilobytes at 5,000 debates) but parses only the appended part and as much of
//! the compacted part, from its end, as it shows: parsing every line cost 3 million of the 13
//! million instructions of `anvil log` at 1,000 debates (callgrind), so at 5,000 it would
//! cost more than drawing the debates. The command line's SQLite index was the other
//! candidate: the hook cannot link SQLite, so it would still need this journal to learn of
//! moves, and a reader would pay for opening a database on top of it.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::record::stamp::Stamp;
use crate::record::store::{CommitTimes, Record, RecordError};

/// The journal's file name inside the record.
pub const FILE: &str = "anvil-recent";
const HEADER: &str = "anvil-recent 2: each debate's last activity, noted before its refs move\n";
/// The header of the index earlier builds wrote before the journal (a sorted file with
/// fingerprint chains).
const OLDER_HEADER: &str = "anvil-recent 1 ";
/// Notes past which a reader compacts the journal (a few hundred kilobytes).
const COMPACT_AT: usize = 2048;
/// Times a reader reads the journal again because a writer moved a debate under it, before
/// it takes the full pass instead.
const REREADS: u32 = 8;

pub fn path(record: &Path) -> PathBuf {
    record.join(FILE)
}

// ---------------------------------------------------------------------------------------------
// Writing

/// The note that a line is about to move, held while its ref moves: a shared lock on the
/// journal, so that no rewrite comes between the note and the ref. Dropping it closes the
/// file, which releases the lock; nothing is written then.
#[must_use = "the note must be held until the ref has moved"]
pub struct Note {
    _held: Option<File>,
}

/// Notes that `debate@line` is about to point at `tip`, committed at `time`. A missing
/// journal stays missing (the next reader builds it whole); one that cannot take the note (a
/// full disk, a damaged file) is removed instead, and readers rebuild it from the refs: the
/// record never depends on it, so this is no fault point. Only when the file can be neither
/// written nor removed is the move refused, naming the file.
pub fn note(
    record: &Path,
    debate: &str,
    line: &str,
    tip: ObjectId,
    time: i64,
) -> Result<Note, RecordError> {
    let path = path(record);
    let written = open_locked(&path, Lock::Shared).and_then(|file| {
        let mut file = file.expect("a shared lock is waited for");
        append(&mut file, &format!("+ {time} {debate} {line} {tip}"))?;
        Ok(file)
    });
    match written {
        Ok(file) => Ok(Note { _held: Some(file) }),
        // Missing stays missing; anything else in the way is removed.
        Err(_) => match crate::fsutil::remove_if_present(&path) {
            Ok(()) => Ok(Note { _held: None }),
            Err(source) => Err(RecordError::Write { path, source }),
        },
    }
}

/// Writes an empty journal for a new record (no debates, nothing to rebuild).
pub fn create(record: &Path) -> io::Result<()> {
    let stamp = Stamp::of(record).refs;
    crate::fsutil::write_atomic(
        &path(record),
        &Journal::compacted(&HashMap::new(), Some(&stamp)),
    )
}

/// One line, in one write, with a newline on both sides (see the module's documentation).
fn append(file: &mut File, line: &str) -> io::Result<()> {
    file.write_all(format!("\n{line}\n").as_bytes())
}

#[derive(Clone, Copy, PartialEq)]
enum Lock {
    /// A note or a stamp: waits for a rewrite to end.
    Shared,
    /// A rewrite from the refs: waits for the writers between their note and their ref.
    Exclusive,
    /// A correction or a compaction by a reader: done now or left to the next reader.
    TryExclusive,
}

/// The journal, opened for reading and appending and locked; opened again when a rewrite
/// renamed another file over it while this process waited. `None`: busy ([`Lock::TryExclusive`]).
/// Only a rewrite from the refs creates a missing journal.
fn open_locked(path: &Path, lock: Lock) -> io::Result<Option<File>> {
    for _ in 0..100 {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(lock == Lock::Exclusive)
            .open(path)?;
        match lock {
            Lock::Shared => file.lock_shared()?,
            Lock::Exclusive => file.lock()?,
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
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    true
}

// ---------------------------------------------------------------------------------------------
// The journal's lines

enum Entry<'a> {
    /// `+ TIME DEBATE LINE TIP`: a line of the debate is about to move to a commit of `time`.
    Note(i64, &'a str),
    /// `= TIME DEBATE`: the debate's activity is `time`; `= - DEBATE`: it has no line.
    Set(Option<i64>, &'a str),
    /// `! STAMP`: every debate under the refs at that stamp is noted above.
    Covers(&'a str),
}

/// One line, checked in one pass of each word (a reader parses thousands of them).
fn parse(line: &str) -> Option<Entry<'_>> {
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
        _ => return None,
    };
    words.next().is_none().then_some(entry)
}

fn damaged(line: &str) -> String {
    format!("a line is damaged: {line:?}")
}

/// A journal as a reader holds it: the compacted part (the `=` lines a rewrite wrote, oldest
/// first, then its `!` line), read lazily from its end, since a reader wants the newest few;
/// and what was appended after it, parsed whole.
#[derive(Default)]
struct Journal {
    /// The complete lines after the header.
    text: String,
    /// Where the appended part begins: at the first empty line (every append starts with
    /// one; a rewrite writes none).
    base_end: usize,
    /// The claims of the appended lines, and the debates an appended `=` line sets (their
    /// line in the compacted part no longer counts).
    over: HashMap<String, Option<i64>>,
    reset: HashSet<String>,
    covers: Option<String>,
    notes: usize,
}

impl Journal {
    fn parse(bytes: &[u8]) -> Result<Journal, String> {
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
                    journal.over.insert(debate.to_owned(), time);
                    journal.reset.insert(debate.to_owned());
                }
                Entry::Covers(stamp) => journal.covers = Some(stamp.to_owned()),
            }
        }
        journal.text = text.to_owned();
        Ok(journal)
    }

    /// `None` when there is no journal or it is damaged.
    fn read(record: &Path) -> Option<Journal> {
        Journal::parse(&std::fs::read(path(record)).ok()?).ok()
    }

    /// Every debate's claim, the whole file read (a listing, a compaction, `anvil doctor`).
    fn claims(&self) -> Result<HashMap<String, i64>, String> {
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
    fn compacted(claims: &HashMap<String, i64>, covers: Option<&str>) -> Vec<u8> {
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
    /// when the stamp is not the one it covers (and notes that it covers it, once the refs
    /// have settled).
    fn covers_refs(&self, record: &Record, stamp: &Stamp) -> bool {
        if self.covers.as_ref() == Some(&stamp.refs) {
            return true;
        }
        let (Ok(names), Ok(claims)) = (record.debate_names(), self.claims()) else {
            return false;
        };
        let known = names.iter().all(|debate| {
            claims.contains_key(debate)
                // A folder git left empty, or one holding only locks, holds no debate.
                || record.lines_of_debate(debate).is_ok_and(|l| l.is_empty())
        });
        if known && stamp.refs_settled {
            // A cache: another reader notes it if this one cannot.
            let _ = open_locked(&path(record.path()), Lock::Shared).and_then(|file| {
                append(&mut file.expect("waited for"), &format!("! {}", stamp.refs))
            });
        }
        known
    }
}

/// Debates in the order of their claims, newest first: the appended claims merged with the
/// compacted part read from its end. Both come newest first, so the first time a debate comes
/// is its highest claim; later ones are skipped.
struct Candidates {
    journal: Journal,
    /// Where the compacted part not read yet ends.
    at: usize,
    /// The appended claims, oldest first: taken from the end.
    appended: Vec<(i64, String)>,
    next_base: Option<(i64, String)>,
    /// The last line read from the compacted part: the next one up must not be newer.
    above: Option<(i64, String)>,
    seen: HashSet<String>,
}

impl Candidates {
    fn new(journal: Journal, seen: HashSet<String>) -> Candidates {
        let mut appended: Vec<(i64, String)> = journal
            .over
            .iter()
            .filter_map(|(d, t)| Some(((*t)?, d.clone())))
            .collect();
        appended.sort_unstable();
        Candidates {
            at: journal.base_end,
            journal,
            appended,
            next_base: None,
            above: None,
            seen,
        }
    }

    /// The next line of the compacted part, from its end; it must not be newer than the one
    /// after it.
    fn fill(&mut self) -> Result<(), String> {
        while self.next_base.is_none() && self.at > 0 {
            let text = &self.journal.text[..self.at];
            let start = text.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
            let line = text[start..].trim_end_matches('\n');
            self.at = start;
            match parse(line).ok_or_else(|| damaged(line))? {
                Entry::Set(Some(time), debate) => {
                    let here = (time, debate.to_owned());
                    if self.above.as_ref().is_some_and(|above| here > *above) {
                        return Err(format!("the compacted part is out of order at {line:?}"));
                    }
                    self.above = Some(here);
                    if !self.journal.reset.contains(debate) && !self.seen.contains(debate) {
                        self.next_base = Some((time, debate.to_owned()));
                    }
                }
                Entry::Covers(_) if start + line.len() + 1 == self.journal.base_end => {}
                _ => return Err(damaged(line)),
            }
        }
        Ok(())
    }

    fn next(&mut self) -> Result<Option<(i64, String)>, String> {
        loop {
            self.fill()?;
            let from_base = match (&self.next_base, self.appended.last()) {
                (None, None) => return Ok(None),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(b), Some(a)) => b > a,
            };
            let (time, debate) = if from_base {
                self.next_base.take().expect("checked")
            } else {
                self.appended.pop().expect("checked")
            };
            if self.seen.insert(debate.clone()) {
                return Ok(Some((time, debate)));
            }
        }
    }

    /// The claim the next candidate makes: a bound on every debate not taken yet.
    fn bound(&mut self) -> Result<Option<(i64, String)>, String> {
        loop {
            if self
                .next_base
                .as_ref()
                .is_some_and(|b| self.seen.contains(&b.1))
            {
                self.next_base = None;
            }
            self.fill()?;
            match self.appended.last() {
                Some(a) if self.seen.contains(&a.1) => drop(self.appended.pop()),
                a => {
                    return Ok(match (&self.next_base, a) {
                        (Some(b), Some(a)) => Some(b.max(a).clone()),
                        (b, a) => b.as_ref().or(a).cloned(),
                    });
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading

/// Debates newest first, by the time of their newest commit (ties: the greater id first), as
/// the refs have them: taken from the journal and checked against each debate's refs, or from
/// one pass over every ref when the journal is missing, damaged or does not know a debate
/// (which rewrites it). Claims found too high are corrected as they are met.
pub struct Newest<'r> {
    record: &'r Record,
    times: CommitTimes<'r>,
    source: Source,
    /// Checked debates, with their real activity, that a later claim may still beat.
    pending: BinaryHeap<(i64, String)>,
    returned: HashSet<String>,
    rereads: u32,
    /// Candidates checked so far, and how many to check before returning the first.
    checked: usize,
    screen: usize,
}

enum Source {
    Journal(Box<Candidates>),
    Listed(std::vec::IntoIter<(String, i64)>),
}

impl<'r> Newest<'r> {
    /// `screen`: how many debates the caller is about to show. The first `screen` claims are
    /// all checked against their refs before the first debate is returned, so that a line
    /// moved behind anvil's back among them sends the reader to the full pass before it has
    /// shown anything; debates after those are checked one at a time, as they are reached.
    pub fn new(record: &'r Record, screen: usize) -> Result<Newest<'r>, RecordError> {
        let source = match open(record) {
            Some(journal) => Source::Journal(Box::new(Candidates::new(journal, HashSet::new()))),
            None => Source::Listed(rebuild(record)?.into_iter()),
        };
        Ok(Newest {
            record,
            times: record.commit_times(),
            source,
            pending: BinaryHeap::new(),
            returned: HashSet::new(),
            rereads: 0,
            checked: 0,
            screen,
        })
    }

    /// Is the answer coming from the journal (not from a pass over every ref)?
    #[cfg(test)]
    fn answers_from_journal(&self) -> bool {
        matches!(self.source, Source::Journal(_))
    }

    fn fall_back(&mut self) -> Result<(), RecordError> {
        self.pending.clear();
        self.checked = 0;
        self.source = Source::Listed(rebuild(self.record)?.into_iter());
        Ok(())
    }

    /// `debate` is newer than the journal claimed: a writer may have noted it since the file
    /// was read. Reads it again and starts over from the new claims; `false` when they do not
    /// cover it either (something other than anvil moved it).
    fn read_again(&mut self, debate: &str, real: i64) -> bool {
        self.rereads += 1;
        let Some(journal) = Journal::read(self.record.path()).filter(|_| self.rereads <= REREADS)
        else {
            return false;
        };
        let covered = match journal.over.get(debate) {
            Some(claim) => *claim >= Some(real),
            None => journal.claims().is_ok_and(|c| c.get(debate) >= Some(&real)),
        };
        if covered {
            let candidates = Candidates::new(journal, self.returned.clone());
            self.source = Source::Journal(Box::new(candidates));
            self.pending.clear();
            self.checked = 0;
        }
        covered
    }

    fn step(&mut self) -> Result<Option<(String, i64)>, RecordError> {
        loop {
            let candidates = match &mut self.source {
                Source::Listed(list) => {
                    for (debate, time) in list.by_ref() {
                        if self.returned.insert(debate.clone()) {
                            return Ok(Some((debate, time)));
                        }
                    }
                    return Ok(None);
                }
                Source::Journal(candidates) => candidates,
            };
            let Ok(bound) = candidates.bound() else {
                self.fall_back()?;
                continue;
            };
            if let Some(top) = self.pending.peek() {
                let beats_the_rest = match &bound {
                    None => true,
                    Some(b) => self.checked >= self.screen && (top.0, &top.1) >= (b.0, &b.1),
                };
                if beats_the_rest {
                    let (time, debate) = self.pending.pop().expect("peeked");
                    self.returned.insert(debate.clone());
                    return Ok(Some((debate, time)));
                }
            }
            let next = match candidates.next() {
                Ok(next) => next,
                Err(_) => {
                    self.fall_back()?;
                    continue;
                }
            };
            let Some((claimed, debate)) = next else {
                if self.pending.is_empty() {
                    return Ok(None);
                }
                continue;
            };
            self.checked += 1;
            match activity(self.record, &mut self.times, &debate)? {
                None => correct(self.record, &debate),
                Some(real) if real <= claimed => {
                    if real < claimed {
                        correct(self.record, &debate);
                    }
                    self.pending.push((real, debate));
                }
                Some(real) => {
                    if !self.read_again(&debate, real) {
                        self.fall_back()?;
                    }
                }
            }
        }
    }
}

impl Iterator for Newest<'_> {
    type Item = Result<(String, i64), RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step().transpose()
    }
}

/// The journal of `record`, if it is there, whole and knows every debate under the refs;
/// compacted on the way when its notes have piled up.
fn open(record: &Record) -> Option<Journal> {
    // Taken before the journal is read: a debate made after it is the next reader's.
    let stamp = Stamp::of(record.path());
    let mut journal = Journal::read(record.path())?;
    if journal.notes > COMPACT_AT {
        let _ = compact(record.path());
    }
    if journal.covers_refs(record, &stamp) {
        return Some(journal);
    }
    // A writer that just made a debate's folder noted it a moment before.
    journal = Journal::read(record.path())?;
    journal.covers_refs(record, &stamp).then_some(journal)
}

/// The last activity of `debate` as its refs have it; `None` when it has no line.
fn activity(
    record: &Record,
    times: &mut CommitTimes<'_>,
    debate: &str,
) -> Result<Option<i64>, RecordError> {
    let mut newest: Option<i64> = None;
    for (_, tip) in record.lines_of_debate(debate)? {
        let time = times.of(tip)?;
        newest = Some(newest.map_or(time, |n| n.max(time)));
    }
    Ok(newest)
}

/// Appends `debate`'s activity as its refs have it, under the exclusive lock (so no writer is
/// between its note and its ref). A cache: when the lock is busy or anything fails, the next
/// reader corrects it.
fn correct(record: &Record, debate: &str) {
    let Ok(Some(mut file)) = open_locked(&path(record.path()), Lock::TryExclusive) else {
        return;
    };
    // No writer is between its note and its ref now: a last line without its newline is a
    // dead writer's, cut off rather than left among whole lines, where it would be damage.
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err()
        || !bytes.ends_with(b"\n")
            && file
                .set_len(bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) as u64)
                .is_err()
    {
        return;
    }
    if let Ok(time) = activity(record, &mut record.commit_times(), debate) {
        let time = time.map_or("-".to_owned(), |t| t.to_string());
        let _ = append(&mut file, &format!("= {time} {debate}"));
    }
}

/// Rewrites the journal as one claim per debate, under the exclusive lock: a writer waiting
/// to note appends to the new file. Left to the next reader when the lock is busy.
/// `true` when it did.
fn compact(record: &Path) -> bool {
    let path = path(record);
    let Ok(Some(mut file)) = open_locked(&path, Lock::TryExclusive) else {
        return false;
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).is_ok()
        && Journal::parse(&bytes)
            .and_then(|j| Ok(Journal::compacted(&j.claims()?, j.covers.as_deref())))
            .is_ok_and(|bytes| crate::fsutil::write_atomic(&path, &bytes).is_ok())
}

// ---------------------------------------------------------------------------------------------
// The full pass, and rewriting from it

/// Every debate with the time of its newest commit, newest first: one pass over every ref,
/// with tip times from the commit-graph once maintenance has written one.
pub fn scan(record: &Record) -> Result<Vec<(String, i64)>, RecordError> {
    let mut times = record.commit_times();
    let mut newest: HashMap<String, i64> = HashMap::new();
    record.for_each_line(|debate, _, tip| {
        let time = times.of(tip)?;
        let slot = newest.entry(debate.to_owned()).or_insert(time);
        *slot = (*slot).max(time);
        Ok(())
    })?;
    let mut newest: Vec<(String, i64)> = newest.into_iter().collect();
    newest.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    Ok(newest)
}

/// Rewrites the journal from one pass over every ref and returns that pass ([`scan`]).
/// Writers are not held up during the pass: what they append meanwhile is carried over into
/// the new file. When the journal cannot be written, the pass is returned all the same.
pub fn rebuild(record: &Record) -> Result<Vec<(String, i64)>, RecordError> {
    let path = path(record.path());
    // Under the lock, every note so far belongs to a ref that has moved (its writer let go):
    // the pass sees it. Every later line is carried over.
    let start = open_locked(&path, Lock::Exclusive).and_then(|file| {
        let meta = file.expect("waited for").metadata()?;
        Ok((meta, Stamp::of(record.path())))
    });
    let scanned = scan(record)?;
    if let Ok((before, stamp)) = start {
        let _ = replace(&path, &before, stamp, &scanned);
    }
    Ok(scanned)
}

fn replace(
    path: &Path,
    before: &std::fs::Metadata,
    stamp: Stamp,
    scanned: &[(String, i64)],
) -> io::Result<()> {
    let mut file = open_locked(path, Lock::Exclusive)?.expect("waited for");
    if !same_file(&file.metadata()?, before) {
        // Another reader rewrote it meanwhile.
        return Ok(());
    }
    let mut later = Vec::new();
    file.seek(SeekFrom::Start(before.len()))?;
    file.read_to_end(&mut later)?;
    let claims = scanned.iter().map(|(d, t)| (d.clone(), *t)).collect();
    let mut bytes = Journal::compacted(&claims, Some(&stamp.refs));
    let complete = later
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&later[..0], |i| &later[..=i]);
    for line in complete.split(|&b| b == b'\n') {
        if let Ok(text) = std::str::from_utf8(line)
            && parse(text).is_some()
        {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
    }
    crate::fsutil::write_atomic(path, &bytes)
}

// ---------------------------------------------------------------------------------------------
// Checking (`anvil doctor`)

/// How the journal compares with the refs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// It is there and agrees with the refs.
    Fine { debates: usize },
    /// There is none (a record from before it existed, or it was deleted).
    Missing,
    /// An older anvil wrote it (a sorted file of another form): the next reader rewrites it.
    Older,
    /// It cannot be read as a journal.
    Damaged(String),
    /// It disagrees with the refs: `behind` are debates it misses or claims older than they
    /// are (moved by something other than anvil; a reader would not see that they moved
    /// unless it shows them); `ahead`, debates it claims newer than they are, or that are
    /// gone (readers correct those as they meet them).
    Outdated {
        behind: Vec<String>,
        ahead: Vec<String>,
    },
}

pub fn check(record: &Record) -> Result<Health, RecordError> {
    let bytes = match std::fs::read(path(record.path())) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Health::Missing),
        Err(e) => return Ok(Health::Damaged(e.to_string())),
    };
    if bytes.starts_with(OLDER_HEADER.as_bytes()) {
        return Ok(Health::Older);
    }
    let journal = match Journal::parse(&bytes) {
        Ok(journal) => journal,
        Err(e) => return Ok(Health::Damaged(e)),
    };
    let mut claimed = match journal.claims() {
        Ok(claims) => claims,
        Err(e) => return Ok(Health::Damaged(e)),
    };
    let real = scan(record)?;
    let (mut behind, mut ahead) = (Vec::new(), Vec::new());
    for (debate, time) in &real {
        match claimed.remove(debate) {
            Some(c) if c == *time => {}
            Some(c) if c > *time => ahead.push(debate.clone()),
            _ => behind.push(debate.clone()),
        }
    }
    ahead.extend(claimed.into_keys());
    behind.sort();
    ahead.sort();
    if behind.is_empty() && ahead.is_empty() {
        return Ok(Health::Fine {
            debates: real.len(),
        });
    }
    Ok(Health::Outdated { behind, ahead })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::schema::Meta;
    use crate::record::store::{Base, NewCommit};
    use proptest::prelude::*;

    fn record() -> (tempfile::TempDir, Record) {
        let dir = tempfile::tempdir().unwrap();
        let record = Record::open_or_init(&dir.path().join("record")).unwrap();
        create(record.path()).unwrap();
        (dir, record)
    }

    /// Stages `new`, notes it and moves its line, as the line transaction does.
    fn noted(record: &Record, new: &NewCommit) -> Result<ObjectId, RecordError> {
        let staged = record.stage(new)?;
        let _note = note(
            record.path(),
            &new.meta.debate,
            &new.meta.line,
            staged.id(),
            new.time,
        )?;
        record.publish(&staged)
    }

    fn new_commit(record: &Record, debate: &str, line: &str, time: i64) -> NewCommit {
        NewCommit {
            author: "Advocate".into(),
            subject: format!("at {time}"),
            meta: Meta {
                debate: debate.into(),
                line: line.into(),
                phase: "advocate".into(),
                ..Meta::default()
            },
            files: vec![("state.md".into(), format!("{time}").into_bytes())],
            remove: Vec::new(),
            time,
            base: Base::Tip(record.tip(debate, line).unwrap()),
        }
    }

    /// Commits on `debate@line` at `time`, as the hook does (noted in the journal).
    fn commit(record: &Record, debate: &str, line: &str, time: i64) -> ObjectId {
        noted(record, &new_commit(record, debate, line, time)).unwrap()
    }

    fn newest(record: &Record) -> Vec<(String, i64)> {
        Newest::new(record, 1)
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn journal_text(record: &Record) -> String {
        std::fs::read_to_string(path(record.path())).unwrap()
    }

    fn append_raw(record: &Record, bytes: &[u8]) {
        let mut file = OpenOptions::new()
            .append(true)
            .open(path(record.path()))
            .unwrap();
        file.write_all(bytes).unwrap();
    }

    #[test]
    fn the_journal_orders_debates_by_their_newest_commit_without_a_pass_over_the_refs() {
        let (_dir, record) = record();
        commit(&record, "a", "main", 100);
        commit(&record, "b", "main", 200);
        commit(&record, "c", "main", 150);
        commit(&record, "a", "cost", 300);
        commit(&record, "c", "main", 120);
        let newest_first = vec![("a".into(), 300), ("b".into(), 200), ("c".into(), 120)];
        assert_eq!(scan(&record).unwrap(), newest_first);
        let mut reader = Newest::new(&record, 1).unwrap();
        assert!(reader.answers_from_journal());
        let first = reader.next().unwrap().unwrap();
        assert_eq!(first, ("a".to_owned(), 300));
        // The journal named the first debate and one claim past it: nothing else was checked.
        assert!(reader.pending.len() <= 1, "{:?}", reader.pending);
        drop(reader);
        assert_eq!(newest(&record), newest_first);
        // `c` claimed 150 and its refs said 120: corrected in the journal as it was met.
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });
        assert!(journal_text(&record).ends_with("\n= 120 c\n"));
    }

    /// The first screen reads the compacted part from its end, as far as it shows: at 5,000
    /// debates, parsing every line would cost `anvil log` more than the debates it draws.
    #[test]
    fn a_reader_of_the_newest_reads_the_compacted_part_from_its_end_only() {
        let (_dir, record) = record();
        for (i, debate) in ["d1", "d2", "d3", "d4"].into_iter().enumerate() {
            commit(&record, debate, "main", 10 * i as i64);
        }
        rebuild(&record).unwrap();
        // The oldest line damaged: a reader of the newest two never reaches it.
        let text = journal_text(&record);
        assert!(text.contains("\n= 0 d1\n"), "{text}");
        std::fs::write(
            path(record.path()),
            text.replace("\n= 0 d1\n", "\n= 0 d#\n"),
        )
        .unwrap();
        let mut reader = Newest::new(&record, 1).unwrap();
        assert_eq!(reader.next().unwrap().unwrap(), ("d4".to_owned(), 30));
        assert_eq!(reader.next().unwrap().unwrap(), ("d3".to_owned(), 20));
        assert!(reader.answers_from_journal());
        // Read to the end, it is found damaged, and the rest comes from the refs.
        assert!(matches!(check(&record).unwrap(), Health::Damaged(_)));
        let rest: Vec<_> = reader.map(Result::unwrap).collect();
        assert_eq!(rest, [("d2".to_owned(), 10), ("d1".to_owned(), 0)]);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 4 });
    }

    #[test]
    fn a_missing_or_damaged_journal_is_rebuilt_from_the_refs() {
        let (_dir, record) = record();
        for (i, debate) in ["d1", "d2", "d3"].into_iter().enumerate() {
            commit(&record, debate, "main", 10 * i as i64);
        }
        let expected = scan(&record).unwrap();
        std::fs::remove_file(path(record.path())).unwrap();
        assert_eq!(check(&record).unwrap(), Health::Missing);
        // A note with no journal leaves it missing: the next reader builds it whole.
        commit(&record, "d1", "main", 1);
        assert_eq!(check(&record).unwrap(), Health::Missing);
        let expected = {
            let mut e = expected;
            e.retain(|(d, _)| d != "d1");
            e.push(("d1".to_owned(), 1));
            e
        };
        let reader = Newest::new(&record, 1).unwrap();
        assert!(!reader.answers_from_journal());
        assert_eq!(reader.map(Result::unwrap).collect::<Vec<_>>(), expected);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });

        for damage in [&b"garbage"[..], b"", &HEADER.as_bytes()[..20]] {
            std::fs::write(path(record.path()), damage).unwrap();
            assert!(
                matches!(check(&record).unwrap(), Health::Damaged(_)),
                "{damage:?}"
            );
            assert!(!Newest::new(&record, 1).unwrap().answers_from_journal());
            assert_eq!(newest(&record), expected);
            assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
        }
        // A damaged line among the notes.
        append_raw(&record, b"\n+ 12 d1 main not-a-commit\n");
        assert!(matches!(check(&record).unwrap(), Health::Damaged(_)));
        assert_eq!(newest(&record), expected);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });
    }

    /// An index an earlier build wrote (before the journal) is said to be older, not damaged,
    /// and the first reader rewrites it as a journal; a note taken meanwhile loses nothing.
    #[test]
    fn an_index_of_the_earlier_form_is_rewritten_by_the_first_reader() {
        let (_dir, record) = record();
        for (i, debate) in ["d1", "d2"].into_iter().enumerate() {
            commit(&record, debate, "main", 10 * i as i64);
        }
        let older = "anvil-recent 1 0000000000000040 a1b2\n= 0 d1\n= 10 d2\n";
        std::fs::write(path(record.path()), older).unwrap();
        assert_eq!(check(&record).unwrap(), Health::Older);
        commit(&record, "d1", "main", 20);
        assert_eq!(
            newest(&record),
            vec![("d1".to_owned(), 20), ("d2".to_owned(), 10)]
        );
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });
    }

    /// A writer that died halfway through its note (or is writing it now) leaves a last line
    /// without its newline: readers leave it out, and the next note is never glued to it.
    #[test]
    fn a_torn_last_line_is_left_out_and_the_next_note_stands_on_its_own() {
        let (_dir, record) = record();
        commit(&record, "d1", "main", 10);
        commit(&record, "d2", "main", 20);
        let expected = scan(&record).unwrap();
        // Torn in every place of a note that claims d1 at 90.
        let torn = format!("\n+ 90 d1 main {}", "7".repeat(40));
        for cut in 1..torn.len() {
            let before = std::fs::read(path(record.path())).unwrap();
            append_raw(&record, &torn.as_bytes()[..cut]);
            assert_eq!(
                check(&record).unwrap(),
                Health::Fine { debates: 2 },
                "cut at {cut}"
            );
            let reader = Newest::new(&record, 1).unwrap();
            assert!(reader.answers_from_journal(), "cut at {cut}");
            assert_eq!(reader.map(Result::unwrap).collect::<Vec<_>>(), expected);
            std::fs::write(path(record.path()), before).unwrap();
        }

        // A dead writer's torn line, then a note: the note reads whole; the torn line, now
        // between two lines, is damage, and readers rewrite the journal from the refs.
        append_raw(&record, b"\n+ 30 d1 ma");
        commit(&record, "d2", "main", 40);
        let text = journal_text(&record);
        assert!(text.contains("\n+ 30 d1 ma\n+ 40 d2 main "), "{text:?}");
        assert!(matches!(check(&record).unwrap(), Health::Damaged(_)));
        let expected = scan(&record).unwrap();
        assert_eq!(expected[0], ("d2".to_owned(), 40));
        assert_eq!(newest(&record), expected);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });
        assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
    }

    #[test]
    fn refs_moved_behind_anvils_back_are_seen_and_the_journal_repaired() {
        let (_dir, record) = record();
        commit(&record, "old", "main", 100);
        let old_tip = commit(&record, "old", "main", 110);
        commit(&record, "mid", "main", 200);
        // A line of a debate the journal knows, moved ahead by a writer that noted nothing:
        // the reader checks the claims of the screen it shows (110 is one of them), sees the
        // refs say newer, and takes the full pass before showing anything.
        let before = journal_text(&record);
        let moved = commit(&record, "old", "main", 300);
        std::fs::write(path(record.path()), &before).unwrap();
        assert!(matches!(
            check(&record).unwrap(),
            Health::Outdated { ref behind, .. } if behind == &["old".to_owned()]
        ));
        let expected = vec![("old".to_owned(), 300), ("mid".to_owned(), 200)];
        let screen: Vec<_> = Newest::new(&record, 3)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(screen, expected);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });

        // A new debate written by git: its folder changes the stamp of the refs, and the
        // reader does not know it.
        let before = journal_text(&record);
        commit(&record, "fetched", "main", 250);
        std::fs::write(path(record.path()), &before).unwrap();
        assert!(!Newest::new(&record, 1).unwrap().answers_from_journal());
        assert_eq!(
            newest(&record),
            vec![
                ("old".to_owned(), 300),
                ("fetched".to_owned(), 250),
                ("mid".to_owned(), 200)
            ]
        );
        assert!(Newest::new(&record, 1).unwrap().answers_from_journal());

        // A line moved back by hand (`git update-ref`): corrected where it is met.
        let ref_file = record.path().join("refs/anvil/old/main");
        assert_eq!(
            std::fs::read_to_string(&ref_file).unwrap().trim(),
            moved.to_string()
        );
        std::fs::write(&ref_file, format!("{old_tip}\n")).unwrap();
        assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
        assert_eq!(
            newest(&record),
            vec![
                ("fetched".to_owned(), 250),
                ("mid".to_owned(), 200),
                ("old".to_owned(), 110)
            ]
        );
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });
    }

    /// Once the refs have settled, a reader that listed the debates under them notes the
    /// stamp it found them at: the next one lists nothing.
    #[test]
    fn a_stamp_of_the_refs_spares_the_next_reader_the_listing() {
        let (_dir, record) = record();
        commit(&record, "a", "main", 10);
        let stamp = Stamp::of(record.path());
        let journal = Journal::read(record.path()).unwrap();
        assert_ne!(journal.covers.as_ref(), Some(&stamp.refs), "a new folder");
        assert!(journal.covers_refs(&record, &stamp));
        let settled = Stamp {
            refs_settled: true,
            ..stamp.clone()
        };
        assert!(journal.covers_refs(&record, &settled));
        assert_eq!(
            Journal::read(record.path()).unwrap().covers,
            Some(stamp.refs.clone())
        );
        // A debate the journal does not know, at the same stamp it covers, is not seen; at
        // any other stamp it is.
        let mut forgetful = Journal::read(record.path()).unwrap();
        forgetful.text.clear();
        forgetful.base_end = 0;
        forgetful.over.clear();
        assert!(forgetful.covers_refs(&record, &stamp));
        forgetful.covers = None;
        assert!(!forgetful.covers_refs(&record, &stamp));
    }

    #[cfg(unix)]
    #[test]
    fn a_journal_that_cannot_take_a_note_is_removed_or_the_move_refused() {
        let (dir, record) = record();
        commit(&record, "a", "main", 10);
        // Cannot be opened (it leads nowhere), but can be removed: the commit goes ahead.
        let file = path(record.path());
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(dir.path().join("nowhere/at-all"), &file).unwrap();
        commit(&record, "b", "main", 20);
        assert!(std::fs::symlink_metadata(&file).is_err(), "removed");
        assert_eq!(check(&record).unwrap(), Health::Missing);
        assert_eq!(
            newest(&record),
            [("b".to_owned(), 20), ("a".to_owned(), 10)]
        );
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });
        // Neither written nor removed: the ref does not move, and the error names the file.
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir_all(file.join("in-the-way")).unwrap();
        let tip = record.tip("a", "main").unwrap();
        let refused = noted(&record, &new_commit(&record, "a", "main", 30)).unwrap_err();
        assert!(refused.to_string().contains(FILE), "{refused}");
        assert_eq!(record.tip("a", "main").unwrap(), tip);
    }

    #[test]
    fn a_reader_compacts_the_notes_into_one_claim_per_debate() {
        let (_dir, record) = record();
        let tip = ObjectId::null(gix::hash::Kind::Sha1);
        for i in 0..=COMPACT_AT as i64 {
            drop(note(record.path(), &format!("d{}", i % 7), "main", tip, i).unwrap());
        }
        for d in 0..7 {
            commit(&record, &format!("d{d}"), "main", 5000 + d);
        }
        let before = journal_text(&record);
        let expected = scan(&record).unwrap();
        assert_eq!(newest(&record), expected);
        let after = journal_text(&record);
        assert!(after.len() < before.len() / 10, "{after}");
        assert_eq!(Journal::read(record.path()).unwrap().notes, 0);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 7 });
    }

    /// Writers noting as fast as they can while a reader compacts the journal again and
    /// again: every note lands in the file that is there at the end. (A rewrite from the refs
    /// drops the notes of writers that let go without moving their ref, as these do; racing it
    /// with writers that commit is the next test.)
    #[test]
    fn notes_appended_during_compactions_are_never_lost() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let (_dir, record) = record();
        let at = record.path().to_owned();
        let (writing, compactions) = (AtomicUsize::new(3), AtomicUsize::new(0));
        let tip = ObjectId::null(gix::hash::Kind::Sha1);
        let written: Vec<i64> = std::thread::scope(|scope| {
            let (writing, compactions) = (&writing, &compactions);
            let writers: Vec<_> = (0..3)
                .map(|w| {
                    let at = at.clone();
                    scope.spawn(move || {
                        // Until the journal was compacted under them a few times.
                        let mut i = 0;
                        while i < 100 || compactions.load(SeqCst) < 5 {
                            drop(note(&at, &format!("w{w}-{i}"), "main", tip, i).unwrap());
                            i += 1;
                        }
                        writing.fetch_sub(1, SeqCst);
                        i
                    })
                })
                .collect();
            let at = at.clone();
            scope.spawn(move || {
                while writing.load(SeqCst) > 0 {
                    if compact(&at) {
                        compactions.fetch_add(1, SeqCst);
                    }
                }
            });
            writers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert!(compactions.into_inner() >= 5);
        let journal = Journal::read(&at).unwrap().claims().unwrap();
        for (w, &count) in written.iter().enumerate() {
            for i in 0..count {
                assert_eq!(journal.get(&format!("w{w}-{i}")), Some(&i), "w{w}-{i}");
            }
        }
    }

    #[test]
    fn writers_racing_rewrites_of_the_journal_lose_no_debate() {
        let (_dir, record) = record();
        let path_of_record = record.path().to_owned();
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let writers: Vec<_> = (0..4)
                .map(|w| {
                    let path = path_of_record.clone();
                    scope.spawn(move || {
                        let record = Record::open(&path).unwrap();
                        for i in 0..40 {
                            commit(&record, &format!("w{w}-{}", i % 10), "main", 1000 + i);
                        }
                    })
                })
                .collect();
            let path = path_of_record.clone();
            let stop = &stop;
            let rewriter = scope.spawn(move || {
                let record = Record::open(&path).unwrap();
                let mut rounds = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) || rounds < 3 {
                    rebuild(&record).unwrap();
                    let _ = compact(record.path());
                    let _ = newest(&record);
                    rounds += 1;
                }
            });
            for writer in writers {
                writer.join().unwrap();
            }
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            rewriter.join().unwrap();
        });
        let record = Record::open(&path_of_record).unwrap();
        assert_eq!(newest(&record), scan(&record).unwrap());
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 40 });
        assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// A commit through anvil on debate `d{0}`, line `main` or `side`, at a time.
        Commit(u8, bool, i64),
        /// A new debate written by something other than anvil.
        Foreign(i64),
        /// A line of `d{0}` moved back one commit by hand.
        Back(u8),
        /// A note whose ref never moved (the writer died, or lost a race).
        DeadNote(u8, i64),
        /// A note cut short at that many bytes.
        Torn(usize),
        Delete,
        /// One byte of the file overwritten.
        Garble(usize),
        Compact,
        Rebuild,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..5, any::<bool>(), 0i64..40).prop_map(|(d, s, t)| Op::Commit(d, s, t)),
            1 => (0i64..40).prop_map(Op::Foreign),
            1 => (0u8..5).prop_map(Op::Back),
            1 => (0u8..5, 0i64..60).prop_map(|(d, t)| Op::DeadNote(d, t)),
            1 => (1usize..50).prop_map(Op::Torn),
            1 => Just(Op::Delete),
            1 => any::<usize>().prop_map(Op::Garble),
            1 => Just(Op::Compact),
            1 => Just(Op::Rebuild),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(24)))]

        /// Whatever anvil, git and damage did, the reader gives the order of the refs, and
        /// afterwards the journal agrees with them.
        #[test]
        fn readers_always_give_the_order_of_the_refs(ops in prop::collection::vec(op(), 1..24)) {
            let (_dir, record) = record();
            for (n, op) in ops.iter().enumerate() {
                let file = path(record.path());
                match op {
                    Op::Commit(d, side, t) => {
                        commit(&record, &format!("d{d}"), if *side { "side" } else { "main" }, *t);
                    }
                    Op::Foreign(t) => {
                        let before = std::fs::read(&file).ok();
                        commit(&record, &format!("foreign-{n}"), "main", *t);
                        match before {
                            Some(bytes) => std::fs::write(&file, bytes).unwrap(),
                            None => crate::fsutil::remove_if_present(&file).unwrap(),
                        }
                    }
                    Op::Back(d) => {
                        let debate = format!("d{d}");
                        if let Some(tip) = record.tip(&debate, "main").unwrap() {
                            let mut buf = Vec::new();
                            let parent = record.find_commit(tip, &mut buf).unwrap().parents().next();
                            // Only back in time: a line moved to a newer commit behind
                            // anvil's back, in a folder that exists, is what the journal
                            // cannot see before it checks that debate (see the module's header).
                            let mut times = record.commit_times();
                            if let Some(parent) = parent
                                && times.of(parent).unwrap() <= times.of(tip).unwrap()
                            {
                                let ref_file = record.path().join(format!("refs/anvil/{debate}/main"));
                                std::fs::write(ref_file, format!("{parent}\n")).unwrap();
                            }
                        }
                    }
                    Op::DeadNote(d, t) => {
                        let tip = ObjectId::null(gix::hash::Kind::Sha1);
                        drop(note(record.path(), &format!("d{d}"), "main", tip, *t).unwrap());
                    }
                    Op::Torn(cut) => {
                        if file.exists() {
                            let torn = format!("\n+ 99 d0 main {}", "7".repeat(40));
                            append_raw(&record, &torn.as_bytes()[..(*cut).min(torn.len() - 1)]);
                        }
                    }
                    Op::Delete => crate::fsutil::remove_if_present(&file).unwrap(),
                    Op::Garble(at) => {
                        if let Ok(mut bytes) = std::fs::read(&file) && !bytes.is_empty() {
                            let at = at % bytes.len();
                            bytes[at] = b'#';
                            std::fs::write(&file, bytes).unwrap();
                        }
                    }
                    Op::Compact => drop(compact(record.path())),
                    Op::Rebuild => {
                        rebuild(&record).unwrap();
                    }
                }
                let expected = scan(&record).unwrap();
                prop_assert_eq!(newest(&record), expected.clone(), "after {:?}", op);
                prop_assert_eq!(
                    check(&record).unwrap(),
                    Health::Fine { debates: expected.len() },
                    "after reading, past {:?}", op
                );
            }
        }
    }
}
