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
//!
//! ? 5001 <sha-1 of the names>              appended: they cover the refs whose debates have
//!                                          these names (the stamp was too young to trust)
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
//! it to the full pass. A stamp is noted only once the refs have settled (a debate removed and
//! another made within one tick of the file system's clock would leave it as it was): once
//! they are older than [`crate::record::stamp::RACY`], or older than the journal's last
//! write, which the file system timed after them. Until then the reader notes the names it
//! checked (`?`: their count and a hash), so that the next reader compares the listing's names
//! with that line rather than every name with the whole journal, and that write is usually the
//! later one that settles the refs for it. A `= -` line clears it (a name it counted as known
//! may have gone and come back). What no stamp sees is `git` moving a line of a debate the
//! journal knows and does not show: `anvil doctor` reports it, `anvil doctor --fix` and
//! `anvil gc` rewrite the journal from the refs.
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
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use gix::ObjectId;

use crate::record::stamp::Stamp;
use crate::record::store::{CommitTimes, Record, RecordError};

mod journal;
use journal::{Entry, Journal, Lock, OLDER_HEADER, append, damaged, open_locked, parse, same_file};
pub use journal::{FILE, path};

/// Notes past which a reader compacts the journal (a few hundred kilobytes).
const COMPACT_AT: usize = 2048;
/// Times a reader reads the journal again because a writer moved a debate under it, before
/// it takes the full pass instead.
const REREADS: u32 = 8;

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
        Err(_) => match remove(&path) {
            Ok(()) => Ok(Note { _held: None }),
            Err(source) => Err(RecordError::Write { path, source }),
        },
    }
}

/// Removes a journal that cannot take a note, under the exclusive lock when it can be opened:
/// a rewrite that read it before would otherwise rename it back without the note.
fn remove(path: &Path) -> io::Result<()> {
    let held = open_locked(path, Lock::Remove);
    crate::fsutil::remove_if_present(path)?;
    drop(held);
    Ok(())
}

/// Writes an empty journal for a new record (no debates, nothing to rebuild).
pub fn create(record: &Path) -> io::Result<()> {
    let stamp = Stamp::of(record).refs;
    crate::fsutil::write_atomic(
        &path(record),
        &Journal::compacted(&HashMap::new(), Some(&stamp)),
    )
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
        let _ = compact(record.path(), COMPACT_AT);
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
/// to note appends to the new file. Left to the next reader when the lock is busy, or when
/// another reader compacted it meanwhile: each rewrite makes the writers waiting for it open
/// the file again, so rewrites come only once notes have piled up again, never one after
/// another while a writer waits: it takes more than `over` notes. `true` when it did.
fn compact(record: &Path, over: usize) -> bool {
    let path = path(record);
    let Ok(Some(mut file)) = open_locked(&path, Lock::TryExclusive) else {
        return false;
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).is_ok()
        && Journal::parse(&bytes)
            .ok()
            .filter(|j| j.notes > over)
            .and_then(|j| Some(Journal::compacted(&j.claims().ok()?, j.covers.as_deref())))
            .is_some_and(|bytes| crate::fsutil::write_atomic(&path, &bytes).is_ok())
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
    // The stamp the pass started at, by the rule every reader follows: only once settled.
    let covers = stamp.refs_settled.then_some(stamp.refs.as_str());
    let mut bytes = Journal::compacted(&claims, covers);
    let complete = later
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&later[..0], |i| &later[..=i]);
    // A `?` line counted names as known against the claims the pass replaces: left out.
    for line in complete.split(|&b| b == b'\n') {
        if let Ok(text) = std::str::from_utf8(line)
            && parse(text).is_some_and(|e| !matches!(e, Entry::Listed(_)))
        {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
    }
    crate::fsutil::write_atomic(path, &bytes)
}

mod check;
pub use check::{Health, check};

#[cfg(test)]
mod tests;
