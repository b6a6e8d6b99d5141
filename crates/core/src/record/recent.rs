//! Which debates moved last, found without listing every ref.
//!
//! `anvil log` shows the debates with the newest commits first, and the commands that fall
//! back to "the line recorded most recently" want the newest one. Ordering debates from the
//! refs alone means opening every line of every debate: thousands of files in a team's
//! record. This index lets a reader look at the few debates it shows instead.
//!
//! # The file
//!
//! `anvil-recent`, in the record beside its refs (git ignores it, and it is never pushed):
//!
//! ```text
//! anvil-recent 1 0000000000000123 <fingerprint>      header: where the sorted part ends
//! = 1795000000 20261120-old-77aa                    sorted part: each debate and its last
//! = 1795000420 20261122-billing-3f2a                activity, oldest first
//! + 1795000480 20261122-billing-3f2a cost 3f2a…     appended: a line about to move there
//! ! <fingerprint before> <fingerprint after>         appended: a writer changed refs/anvil/
//! = 1795000300 20261123-queues-9c1e                 appended: a correction (`= -`: gone)
//! ```
//!
//! A debate's activity is its last `=` line, raised by every `+` line after it.
//!
//! # Why a reader may trust it
//!
//! Every ref anvil writes (a commit of [`crate::line::transaction`], a line `anvil pull` brings) is
//! noted with a `+` line *before* the ref moves, and the writer holds a shared lock on the
//! file until it has moved. So the index knows every debate anvil made, and claims for each
//! at least its real last activity. A reader takes debates in the order the index claims and
//! checks each one it returns against its refs (the times of its lines' tips): a debate whose
//! refs say older (a commit that failed after its note, a line deleted by hand) is put in its
//! real place and its entry corrected; one whose refs say newer was moved by something other
//! than anvil, so the reader reads the file again (a writer may have noted it meanwhile) and
//! otherwise falls back to one pass over every ref, which also rebuilds the index. Rewrites
//! of the file (folding the appended lines into the sorted part, a rebuild) hold the lock
//! exclusively, so no note is lost between reading the old file and renaming the new one.
//!
//! Refs written by `git` behind anvil's back are caught by a fingerprint of `refs/anvil/`
//! and `packed-refs` (a new debate's folder, packed refs): anvil's writers append how they
//! changed it, and a change that no writer accounts for sends the reader to the full pass.
//! What this cannot see is `git` moving a line of a debate whose folder already exists: that
//! debate is checked when it is shown, `anvil doctor` reports it, and `anvil gc` or
//! `anvil doctor --fix` rebuild the index.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::record::store::{CommitTimes, Record, RecordError, valid_name};

/// The index's file name inside the record.
pub const FILE: &str = "anvil-recent";
const MAGIC: &str = "anvil-recent 1";
/// Appended bytes past which a reader folds them into the sorted part (a few hundred notes).
const FOLD_AT: u64 = 64 * 1024;
/// How much of the sorted part is read at once, from its end.
const CHUNK: u64 = 8 * 1024;
/// Times a reader reads the file again because a writer moved a debate under it, before it
/// takes the full pass instead.
const REREADS: u32 = 8;

pub fn path(record: &Path) -> PathBuf {
    record.join(FILE)
}

// ---------------------------------------------------------------------------------------------
// Writing

/// A note that a line is about to move, held while its ref moves (see the module's
/// documentation). Dropping it releases the lock, after noting how the move changed
/// `refs/anvil/`, if it did.
pub struct Note {
    file: Option<File>,
    record: PathBuf,
    before: String,
}

/// Notes that `debate@line` is about to point at `tip`, committed at `time`. A missing index
/// stays missing (the next reader builds it whole); one that cannot take the note (a full disk, a damaged file) is removed instead, and readers rebuild
/// it from the refs: the record never depends on it, so this is no fault point. Only when the
/// file can be neither written nor removed is the move refused, naming the file.
pub fn note(
    record: &Path,
    debate: &str,
    line: &str,
    tip: ObjectId,
    time: i64,
) -> Result<Note, RecordError> {
    let path = path(record);
    let written = (|| {
        let mut file = open_locked(&path, Lock::Shared)?;
        let before = fingerprint(record);
        append(&mut file, &format!("+ {time} {debate} {line} {tip}\n"))?;
        Ok::<_, io::Error>((file, before))
    })();
    match written {
        Ok((file, before)) => Ok(Note {
            file: Some(file),
            record: record.to_owned(),
            before,
        }),
        Err(_) => match crate::fsutil::remove_if_present(&path) {
            Ok(()) => Ok(Note {
                file: None,
                record: record.to_owned(),
                before: String::new(),
            }),
            Err(source) => Err(RecordError::Write { path, source }),
        },
    }
}

impl Drop for Note {
    fn drop(&mut self) {
        let Some(mut file) = self.file.take() else {
            return;
        };
        let after = fingerprint(&self.record);
        if after != self.before {
            // Lost, the chain of fingerprints breaks and the next reader rebuilds: safe.
            let _ = append(&mut file, &format!("! {} {after}\n", self.before));
        }
    }
}

/// Writes an empty index for a new record (no debates, nothing to rebuild).
pub fn create(record: &Path) -> io::Result<()> {
    crate::fsutil::write_atomic(&path(record), &encode(&fingerprint(record), &[], b""))
}

#[derive(Clone, Copy)]
enum Lock {
    Shared,
    Exclusive,
}

/// The index file, opened for reading and appending and locked; opened again when a rewrite
/// renamed another file over it while this process waited. A writer of the whole file
/// (exclusive) creates it when absent; a note (shared) does not.
fn open_locked(path: &Path, lock: Lock) -> io::Result<File> {
    for _ in 0..100 {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(matches!(lock, Lock::Exclusive))
            .open(path)?;
        match lock {
            Lock::Shared => file.lock_shared()?,
            Lock::Exclusive => file.lock()?,
        }
        match std::fs::metadata(path) {
            Ok(now) if same_file(&file.metadata()?, &now) => return Ok(file),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "{} kept being replaced while anvil waited for it",
        path.display()
    )))
}

/// Does the index end with a line without its newline? Only a writer that died halfway
/// leaves one (a note is one short write, and its ref moves after it), or damage.
fn ends_broken(file: &File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0];
    let mut file = file;
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// Appends whole lines to the index through `file`, opened for appending and locked. After a
/// broken last line (see [`ends_broken`]) they start on a line of their own, not glued to it;
/// the next reader meets the broken line and rebuilds the index.
fn append(file: &mut File, text: &str) -> io::Result<()> {
    if ends_broken(file)? {
        return file.write_all(format!("\n{text}").as_bytes());
    }
    file.write_all(text.as_bytes())
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

/// How `refs/anvil/` and `packed-refs` look from outside: a new debate's folder or a rewrite
/// of the packed refs changes it. One token, without spaces.
fn fingerprint(record: &Path) -> String {
    format!(
        "{}/{}",
        stamp(&record.join("refs/anvil"), true),
        stamp(&record.join("packed-refs"), false)
    )
}

#[cfg(unix)]
fn stamp(path: &Path, folder: bool) -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(path) {
        // A folder's link count moves with each sub-folder made or removed, even within one
        // tick of the file system's clock.
        Ok(m) => format!(
            "{:x}.{:x}.{:x}.{:x}",
            m.ino(),
            m.mtime(),
            m.mtime_nsec(),
            if folder { m.nlink() } else { m.size() }
        ),
        Err(_) => "-".to_owned(),
    }
}

#[cfg(not(unix))]
fn stamp(path: &Path, _folder: bool) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) => {
            let time = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{time:x}.{:x}", m.len())
        }
        Err(_) => "-".to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// The file's lines

/// One line of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// `+ TIME DEBATE LINE TIP`: a line of the debate is about to move to a commit of `time`.
    Moved { time: i64, debate: String },
    /// `= TIME DEBATE`: the debate's last activity is `time`; `= - DEBATE`: it has no line.
    Set { time: Option<i64>, debate: String },
    /// `! BEFORE AFTER`: a writer changed the fingerprint from one to the other.
    Changed(String, String),
}

fn parse(line: &str) -> Option<Entry> {
    let words: Vec<&str> = line.split(' ').collect();
    let time = |w: &str| w.parse::<i64>().ok();
    match words.as_slice() {
        ["+", t, debate, line, tip]
            if valid_name(debate)
                && valid_name(line)
                && tip.len() == 40
                && tip.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Some(Entry::Moved {
                time: time(t)?,
                debate: (*debate).to_owned(),
            })
        }
        ["=", t, debate] if valid_name(debate) => Some(Entry::Set {
            time: if *t == "-" { None } else { Some(time(t)?) },
            debate: (*debate).to_owned(),
        }),
        ["!", before, after] if !before.is_empty() && !after.is_empty() => {
            Some(Entry::Changed((*before).to_owned(), (*after).to_owned()))
        }
        _ => None,
    }
}

/// A whole file: the header, the sorted part (oldest first) and what is appended after it.
fn encode(fingerprint: &str, sorted: &[(i64, String)], appended: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    for (time, debate) in sorted {
        body.extend_from_slice(format!("= {time} {debate}\n").as_bytes());
    }
    let header_len = MAGIC.len() + 1 + 16 + 1 + fingerprint.len() + 1;
    let sorted_end = header_len + body.len();
    let mut out = format!("{MAGIC} {sorted_end:016} {fingerprint}\n").into_bytes();
    debug_assert_eq!(out.len(), header_len);
    out.extend_from_slice(&body);
    out.extend_from_slice(appended);
    out
}

/// The header: where the sorted part ends, and the fingerprint the file was written at.
fn parse_header(bytes: &[u8]) -> Option<(u64, u64, String)> {
    let end = bytes.iter().position(|&b| b == b'\n')?;
    let line = std::str::from_utf8(&bytes[..end]).ok()?;
    let rest = line.strip_prefix(MAGIC)?.strip_prefix(' ')?;
    let (offset, fingerprint) = rest.split_once(' ')?;
    let sorted_end = offset.parse::<u64>().ok()?;
    let header_len = end as u64 + 1;
    (offset.len() == 16 && !fingerprint.is_empty() && !fingerprint.contains(' '))
        .then(|| {
            (
                header_len,
                sorted_end.max(header_len),
                fingerprint.to_owned(),
            )
        })
        .filter(|(h, s, _)| s >= h && *s == sorted_end)
}

/// Is `now` reached from `start` through the writers' `!` lines?
fn accounts_for(start: &str, edges: &[(String, String)], now: &str) -> bool {
    let mut reached: HashSet<&str> = HashSet::from([start]);
    loop {
        let before = reached.len();
        for (from, to) in edges {
            if reached.contains(from.as_str()) {
                reached.insert(to.as_str());
            }
        }
        if reached.len() == before {
            return reached.contains(now);
        }
    }
}

/// A whole file read at once (folding, `anvil doctor`).
struct Whole {
    fingerprint: String,
    sorted: Vec<(i64, String)>,
    appended: Vec<Entry>,
}

impl Whole {
    fn parse(bytes: &[u8]) -> Result<Whole, String> {
        let (header_len, sorted_end, fingerprint) =
            parse_header(bytes).ok_or("its header is not anvil's")?;
        if sorted_end > bytes.len() as u64 {
            return Err("it is shorter than its header says".into());
        }
        let text = |range: &[u8]| {
            std::str::from_utf8(range)
                .map(str::to_owned)
                .map_err(|_| "it is not text".to_owned())
        };
        let mut sorted = Vec::new();
        for line in text(&bytes[header_len as usize..sorted_end as usize])?.lines() {
            match parse(line) {
                Some(Entry::Set {
                    time: Some(t),
                    debate,
                }) => sorted.push((t, debate)),
                _ => return Err(format!("a line of its sorted part is damaged: {line:?}")),
            }
        }
        let rest = text(&bytes[sorted_end as usize..])?;
        let mut appended = Vec::new();
        // A last line without its newline is a note being written: not there yet.
        let complete = rest.rfind('\n').map_or("", |i| &rest[..=i]);
        for line in complete.lines().filter(|l| !l.is_empty()) {
            appended.push(parse(line).ok_or_else(|| format!("a line is damaged: {line:?}"))?);
        }
        Ok(Whole {
            fingerprint,
            sorted,
            appended,
        })
    }

    fn edges(&self) -> Vec<(String, String)> {
        self.appended
            .iter()
            .filter_map(|e| match e {
                Entry::Changed(a, b) => Some((a.clone(), b.clone())),
                _ => None,
            })
            .collect()
    }

    /// Every debate and the activity the file claims for it.
    fn activity(&self) -> HashMap<String, i64> {
        let mut out: HashMap<String, Option<i64>> = self
            .sorted
            .iter()
            .map(|(t, d)| (d.clone(), Some(*t)))
            .collect();
        for entry in &self.appended {
            apply(&mut out, None, entry);
        }
        out.into_iter().filter_map(|(d, t)| Some((d, t?))).collect()
    }
}

/// What an appended line does to the claimed activities (`reset` collects the debates whose
/// sorted line it supersedes).
fn apply(
    claims: &mut HashMap<String, Option<i64>>,
    reset: Option<&mut HashSet<String>>,
    entry: &Entry,
) {
    match entry {
        Entry::Moved { time, debate } => {
            let slot = claims.entry(debate.clone()).or_insert(None);
            *slot = Some(slot.map_or(*time, |t| t.max(*time)));
        }
        Entry::Set { time, debate } => {
            claims.insert(debate.clone(), *time);
            if let Some(reset) = reset {
                reset.insert(debate.clone());
            }
        }
        Entry::Changed(..) => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Reading

/// The file as a reader holds it: the header and the appended part, parsed; the sorted part
/// is read from its end only as far as the reader needs.
struct Index {
    path: PathBuf,
    file: File,
    header_len: u64,
    sorted_end: u64,
    /// The end of the last complete line read.
    read_to: u64,
    fingerprint: String,
    edges: Vec<(String, String)>,
    /// What the appended lines claim, on top of the sorted part.
    appended: HashMap<String, Option<i64>>,
    /// Debates with an `=` line among the appended ones: their sorted line no longer counts.
    reset: HashSet<String>,
}

impl Index {
    /// The index of `record`, if it is there, whole, and accounts for the refs as they are.
    fn open(record: &Path) -> Option<Index> {
        let mut index = Index::read(record).ok()??;
        // A writer that just made a debate's folder notes it a moment later.
        for wait in [0, 1, 4] {
            if wait > 0 {
                std::thread::sleep(std::time::Duration::from_millis(wait));
                if !index.read_more().ok()? {
                    index = Index::read(record).ok()??;
                }
            }
            if accounts_for(&index.fingerprint, &index.edges, &fingerprint(record)) {
                return Some(index);
            }
        }
        None
    }

    /// `None` when there is no usable index.
    fn read(record: &Path) -> io::Result<Option<Index>> {
        let path = path(record);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut head = Vec::with_capacity(1024);
        (&file).take(1024).read_to_end(&mut head)?;
        let Some((header_len, sorted_end, fingerprint)) = parse_header(&head) else {
            return Ok(None);
        };
        let mut index = Index {
            path,
            file,
            header_len,
            sorted_end,
            read_to: sorted_end,
            fingerprint,
            edges: Vec::new(),
            appended: HashMap::new(),
            reset: HashSet::new(),
        };
        Ok(index.read_more()?.then_some(index))
    }

    /// Reads what was appended since the last read. `false`: the file is damaged, or another
    /// file has replaced it (read that one from the start).
    fn read_more(&mut self) -> io::Result<bool> {
        let meta = self.file.metadata()?;
        match std::fs::metadata(&self.path) {
            Ok(now) if same_file(&meta, &now) => {}
            _ => return Ok(false),
        }
        if meta.len() < self.read_to {
            return Ok(false);
        }
        let mut bytes = Vec::new();
        (&self.file).seek(SeekFrom::Start(self.read_to))?;
        (&self.file).read_to_end(&mut bytes)?;
        // A last line without its newline is a note being written: not there yet.
        let Some(last) = bytes.iter().rposition(|&b| b == b'\n') else {
            return Ok(true);
        };
        let Ok(text) = std::str::from_utf8(&bytes[..=last]) else {
            return Ok(false);
        };
        for line in text.lines().filter(|l| !l.is_empty()) {
            let Some(entry) = parse(line) else {
                return Ok(false);
            };
            if let Entry::Changed(a, b) = &entry {
                self.edges.push((a.clone(), b.clone()));
            }
            apply(&mut self.appended, Some(&mut self.reset), &entry);
        }
        self.read_to += last as u64 + 1;
        Ok(true)
    }

    /// The debates in the order of their claims, leaving out those in `returned`.
    fn candidates(&self, returned: &HashSet<String>) -> io::Result<Candidates> {
        let mut appended: Vec<(i64, String)> = self
            .appended
            .iter()
            .filter_map(|(d, t)| Some(((*t)?, d.clone())))
            .collect();
        appended.sort();
        Ok(Candidates {
            appended,
            sorted: Backward {
                file: self.file.try_clone()?,
                start: self.header_len,
                at: self.sorted_end,
                buf: Vec::new(),
            },
            next_sorted: None,
            peeked: None,
            reset: self.reset.clone(),
            seen: returned.clone(),
        })
    }
}

/// Debates in the order of the activity the index claims, newest first: the appended part
/// merged with the sorted part read backwards. As both are taken newest first, the first time
/// a debate comes is its highest claim; later ones are skipped.
struct Candidates {
    /// Oldest first: taken from the end.
    appended: Vec<(i64, String)>,
    sorted: Backward,
    next_sorted: Option<(i64, String)>,
    peeked: Option<Option<(i64, String)>>,
    reset: HashSet<String>,
    seen: HashSet<String>,
}

impl Candidates {
    fn fill(&mut self) -> Result<(), String> {
        while self.next_sorted.is_none() {
            let Some(line) = self.sorted.next().map_err(|e| e.to_string())? else {
                return Ok(());
            };
            let Some(Entry::Set {
                time: Some(t),
                debate,
            }) = parse(&line)
            else {
                return Err(format!("a line of the sorted part is damaged: {line:?}"));
            };
            if !self.reset.contains(&debate) && !self.seen.contains(&debate) {
                self.next_sorted = Some((t, debate));
            }
        }
        Ok(())
    }

    fn pull(&mut self) -> Result<Option<(i64, String)>, String> {
        loop {
            self.fill()?;
            let take_sorted = match (&self.next_sorted, self.appended.last()) {
                (None, None) => return Ok(None),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(s), Some(a)) => s > a,
            };
            let (time, debate) = if take_sorted {
                self.next_sorted.take().expect("checked")
            } else {
                self.appended.pop().expect("checked")
            };
            if self.seen.insert(debate.clone()) {
                return Ok(Some((time, debate)));
            }
        }
    }

    fn next(&mut self) -> Result<Option<(i64, String)>, String> {
        match self.peeked.take() {
            Some(next) => Ok(next),
            None => self.pull(),
        }
    }

    fn peek(&mut self) -> Result<Option<(i64, String)>, String> {
        if self.peeked.is_none() {
            self.peeked = Some(self.pull()?);
        }
        Ok(self.peeked.clone().flatten())
    }
}

/// The lines of the sorted part, from its end.
struct Backward {
    file: File,
    start: u64,
    /// Where `buf` starts in the file.
    at: u64,
    buf: Vec<u8>,
}

impl Backward {
    fn next(&mut self) -> io::Result<Option<String>> {
        loop {
            // `buf` ends with whole lines, each with its newline, after a partial one.
            let body = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            if let Some(i) = body.iter().rposition(|&b| b == b'\n') {
                let line = String::from_utf8_lossy(&body[i + 1..]).into_owned();
                self.buf.truncate(i + 1);
                return Ok(Some(line));
            }
            if self.at == self.start {
                if body.is_empty() {
                    return Ok(None);
                }
                let line = String::from_utf8_lossy(body).into_owned();
                self.buf.clear();
                return Ok(Some(line));
            }
            let from = self.at.saturating_sub(CHUNK).max(self.start);
            let mut chunk = vec![0; (self.at - from) as usize];
            (&self.file).seek(SeekFrom::Start(from))?;
            (&self.file).read_exact(&mut chunk)?;
            chunk.extend_from_slice(&self.buf);
            self.buf = chunk;
            self.at = from;
        }
    }
}

/// Debates newest first, by the time of their newest commit (ties: the greater id first), as
/// the refs have them: taken from the index and checked against each debate's refs, or from
/// one pass over every ref when the index is missing, damaged or out of date (which rebuilds
/// it). What reading found is written back when it is dropped.
pub struct Newest<'r> {
    record: &'r Record,
    times: CommitTimes<'r>,
    source: Source,
    /// Checked debates, with their real activity, that a later claim may still beat.
    pending: BinaryHeap<(i64, String)>,
    returned: HashSet<String>,
    /// Debates whose refs say older than the index claims, or that are gone.
    corrections: Vec<String>,
    rereads: u32,
    /// Candidates checked so far, and how many to check before returning the first.
    checked: usize,
    screen: usize,
}

enum Source {
    Index(Box<Index>, Box<Candidates>),
    Listed(std::vec::IntoIter<(String, i64)>),
}

impl<'r> Newest<'r> {
    /// `screen`: how many debates the caller is about to show. The first `screen` claims are
    /// all checked against their refs before the first debate is returned, so that a line
    /// moved behind anvil's back among them sends the reader to the full pass before it has
    /// shown anything; debates after those are checked one at a time, as they are reached.
    pub fn new(record: &'r Record, screen: usize) -> Result<Newest<'r>, RecordError> {
        let opened = Index::open(record.path()).and_then(|index| {
            let candidates = index.candidates(&HashSet::new()).ok()?;
            Some(Source::Index(Box::new(index), Box::new(candidates)))
        });
        let source = match opened {
            Some(source) => source,
            None => Source::Listed(rebuild(record)?.into_iter()),
        };
        Ok(Newest {
            record,
            times: record.commit_times(),
            source,
            pending: BinaryHeap::new(),
            returned: HashSet::new(),
            corrections: Vec::new(),
            rereads: 0,
            checked: 0,
            screen,
        })
    }

    /// Is the answer coming from the index (not from a pass over every ref)?
    #[cfg(test)]
    fn answers_from_index(&self) -> bool {
        matches!(self.source, Source::Index(..))
    }

    /// The last activity of `debate` as its refs have it; `None` when it has no line.
    fn real(&mut self, debate: &str) -> Result<Option<i64>, RecordError> {
        let mut newest: Option<i64> = None;
        for (_, tip) in self.record.lines_of_debate(debate)? {
            let time = self.times.of(tip)?;
            newest = Some(newest.map_or(time, |n| n.max(time)));
        }
        Ok(newest)
    }

    fn fall_back(&mut self) -> Result<(), RecordError> {
        self.pending.clear();
        self.checked = 0;
        self.corrections.clear();
        self.source = Source::Listed(rebuild(self.record)?.into_iter());
        Ok(())
    }

    /// `debate` is newer than the index claimed: a writer may have noted it since the file
    /// was read. Reads the file again and starts over from the new claims; `false` when the
    /// new claims do not cover it either (something other than anvil moved it).
    fn read_again(&mut self, debate: &str, real: i64) -> bool {
        self.rereads += 1;
        let Source::Index(index, candidates) = &mut self.source else {
            return false;
        };
        if self.rereads > REREADS {
            return false;
        }
        match index.read_more() {
            Ok(true) if index.appended.get(debate).copied().flatten() >= Some(real) => {}
            Ok(true) | Err(_) => return false,
            // Rewritten meanwhile: its claims are read from the start.
            Ok(false) => match Index::open(self.record.path()) {
                Some(fresh) => **index = fresh,
                None => return false,
            },
        }
        match index.candidates(&self.returned) {
            Ok(fresh) => **candidates = fresh,
            Err(_) => return false,
        }
        self.pending.clear();
        self.checked = 0;
        true
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
                Source::Index(_, candidates) => candidates,
            };
            let Ok(bound) = candidates.peek() else {
                self.fall_back()?;
                continue;
            };
            if let Some(top) = self.pending.peek()
                && (bound.is_none()
                    || self.checked >= self.screen
                        && bound
                            .as_ref()
                            .is_some_and(|b| (top.0, &top.1) >= (b.0, &b.1)))
            {
                let (time, debate) = self.pending.pop().expect("peeked");
                self.returned.insert(debate.clone());
                return Ok(Some((debate, time)));
            }
            // The candidate was peeked: taking it cannot fail.
            let Ok(Some((claimed, debate))) = candidates.next() else {
                return Ok(None);
            };
            self.checked += 1;
            match self.real(&debate)? {
                None => self.corrections.push(debate),
                Some(real) if real <= claimed => {
                    if real < claimed {
                        self.corrections.push(debate.clone());
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

impl Drop for Newest<'_> {
    /// Writes back what reading found: corrected debates, and the appended part folded into
    /// the sorted one once it has grown. A cache: a failure here is left for the next reader.
    fn drop(&mut self) {
        let Source::Index(index, _) = &self.source else {
            return;
        };
        let fold = index.read_to - index.sorted_end > FOLD_AT;
        if fold || !self.corrections.is_empty() {
            let _ = settle(self.record, &self.corrections, fold);
        }
    }
}

/// Corrects the entries of `debates` from their refs, and folds the file when `fold`, under
/// the exclusive lock (so no writer is between its note and its ref update).
fn settle(record: &Record, debates: &[String], fold: bool) -> Result<(), RecordError> {
    let path = path(record.path());
    let io = |source| RecordError::Write {
        path: path.clone(),
        source,
    };
    let mut file = open_locked(&path, Lock::Exclusive).map_err(io)?;
    // No writer is between its note and its ref now: a broken last line is a dead writer's
    // or damage. Rather than glue corrections to it, the index is rebuilt from the refs.
    if ends_broken(&file).map_err(io)? {
        drop(file);
        return rebuild(record).map(drop);
    }
    let mut times = record.commit_times();
    let mut corrected = Vec::new();
    for debate in debates {
        let mut newest: Option<i64> = None;
        for (_, tip) in record.lines_of_debate(debate)? {
            let time = times.of(tip)?;
            newest = Some(newest.map_or(time, |n| n.max(time)));
        }
        corrected.push(Entry::Set {
            time: newest,
            debate: debate.clone(),
        });
    }
    if !fold {
        let mut text = String::new();
        for entry in &corrected {
            if let Entry::Set { time, debate } = entry {
                let time = time.map_or("-".to_owned(), |t| t.to_string());
                text.push_str(&format!("= {time} {debate}\n"));
            }
        }
        return append(&mut file, &text).map_err(io);
    }
    let mut bytes = Vec::new();
    (&file).seek(SeekFrom::Start(0)).map_err(io)?;
    file.read_to_end(&mut bytes).map_err(io)?;
    let Ok(mut whole) = Whole::parse(&bytes) else {
        return Ok(());
    };
    let now = fingerprint(record.path());
    if !accounts_for(&whole.fingerprint, &whole.edges(), &now) {
        return Ok(());
    }
    whole.appended.extend(corrected);
    let mut sorted: Vec<(i64, String)> =
        whole.activity().into_iter().map(|(d, t)| (t, d)).collect();
    sorted.sort();
    crate::fsutil::write_atomic(&path, &encode(&now, &sorted, b"")).map_err(io)
}

// ---------------------------------------------------------------------------------------------
// The full pass, and rebuilding

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

/// Rewrites the index from one pass over every ref and returns that pass ([`scan`]). Writers
/// are not held up during the pass: what they note meanwhile is carried over into the new
/// file. When the index cannot be written, the pass is returned all the same.
pub fn rebuild(record: &Record) -> Result<Vec<(String, i64)>, RecordError> {
    let path = path(record.path());
    // Every note before this point belongs to a ref that has moved (its writer let go of the
    // lock): the pass sees it. Every later note is carried over.
    let start = open_locked(&path, Lock::Exclusive).and_then(|file| {
        let meta = file.metadata()?;
        Ok((meta, fingerprint(record.path())))
    });
    let scanned = scan(record)?;
    if let Ok((before, fingerprint)) = start {
        let _ = replace(&path, &before, &fingerprint, &scanned);
    }
    Ok(scanned)
}

fn replace(
    path: &Path,
    before: &std::fs::Metadata,
    fingerprint: &str,
    scanned: &[(String, i64)],
) -> io::Result<()> {
    let file = open_locked(path, Lock::Exclusive)?;
    if !same_file(&file.metadata()?, before) {
        // Another reader rebuilt it meanwhile.
        return Ok(());
    }
    let mut later = Vec::new();
    (&file).seek(SeekFrom::Start(before.len()))?;
    (&file).read_to_end(&mut later)?;
    let complete = later
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(&later[..0], |i| &later[..=i]);
    let mut carried = Vec::new();
    for line in complete.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if std::str::from_utf8(line).ok().and_then(parse).is_some() {
            carried.extend_from_slice(line);
            carried.push(b'\n');
        }
    }
    let mut sorted: Vec<(i64, String)> = scanned.iter().map(|(d, t)| (*t, d.clone())).collect();
    sorted.sort();
    crate::fsutil::write_atomic(path, &encode(fingerprint, &sorted, &carried))
}

// ---------------------------------------------------------------------------------------------
// Checking (`anvil doctor`)

/// How the index compares with the refs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// It is there and agrees with the refs.
    Fine { debates: usize },
    /// There is none (a record from before it existed, or it was deleted).
    Missing,
    /// It cannot be read as an index.
    Damaged(String),
    /// It disagrees with the refs: `behind` are debates it misses or claims older than they
    /// are (a reader would not see that they moved); `ahead`, debates it claims newer than
    /// they are, or that are gone (readers correct those as they meet them). `unaccounted`:
    /// the refs were changed by something other than anvil since it was written.
    Outdated {
        behind: Vec<String>,
        ahead: Vec<String>,
        unaccounted: bool,
    },
}

pub fn check(record: &Record) -> Result<Health, RecordError> {
    let path = path(record.path());
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Health::Missing),
        Err(e) => return Ok(Health::Damaged(e.to_string())),
    };
    let whole = match Whole::parse(&bytes) {
        Ok(whole) => whole,
        Err(e) => return Ok(Health::Damaged(e)),
    };
    let unaccounted = !accounts_for(
        &whole.fingerprint,
        &whole.edges(),
        &fingerprint(record.path()),
    );
    let mut claimed = whole.activity();
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
    if behind.is_empty() && ahead.is_empty() && !unaccounted {
        return Ok(Health::Fine {
            debates: real.len(),
        });
    }
    Ok(Health::Outdated {
        behind,
        ahead,
        unaccounted,
    })
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

    /// Commits on `debate@line` at `time`, as the hook does (noted in the index).
    fn commit(record: &Record, debate: &str, line: &str, time: i64) -> ObjectId {
        let tip = record.tip(debate, line).unwrap();
        noted(
            record,
            &NewCommit {
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
                base: Base::Tip(tip),
            },
        )
        .unwrap()
    }

    fn newest(record: &Record) -> Vec<(String, i64)> {
        Newest::new(record, 1)
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn index_bytes(record: &Record) -> Vec<u8> {
        std::fs::read(path(record.path())).unwrap()
    }

    #[test]
    fn the_index_orders_debates_by_their_newest_commit_without_a_pass_over_the_refs() {
        let (_dir, record) = record();
        commit(&record, "a", "main", 100);
        commit(&record, "b", "main", 200);
        commit(&record, "c", "main", 150);
        commit(&record, "a", "cost", 300);
        commit(&record, "c", "main", 120);
        let newest_first = vec![("a".into(), 300), ("b".into(), 200), ("c".into(), 120)];
        assert_eq!(scan(&record).unwrap(), newest_first);
        let mut reader = Newest::new(&record, 1).unwrap();
        assert!(reader.answers_from_index());
        let first = reader.next().unwrap().unwrap();
        assert_eq!(first, ("a".to_owned(), 300));
        // The index named the first debate and one claim past it: nothing else was checked.
        assert!(reader.pending.len() <= 1, "{:?}", reader.pending);
        drop(reader);
        assert_eq!(newest(&record), newest_first);
        // `c` claimed 150 and its refs said 120: corrected in the file.
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });
        let text = String::from_utf8(index_bytes(&record)).unwrap();
        assert!(text.ends_with("= 120 c\n"), "{text}");
    }

    #[test]
    fn a_missing_or_damaged_index_is_rebuilt_from_the_refs() {
        let (_dir, record) = record();
        for (i, debate) in ["d1", "d2", "d3"].into_iter().enumerate() {
            commit(&record, debate, "main", 10 * i as i64);
        }
        let expected = scan(&record).unwrap();
        std::fs::remove_file(path(record.path())).unwrap();
        assert_eq!(check(&record).unwrap(), Health::Missing);
        let reader = Newest::new(&record, 1).unwrap();
        assert!(!reader.answers_from_index());
        assert_eq!(reader.map(Result::unwrap).collect::<Vec<_>>(), expected);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });

        for damage in [
            &b"garbage"[..],
            b"",
            b"anvil-recent 1 0000000000099999 x/y\n",
        ] {
            std::fs::write(path(record.path()), damage).unwrap();
            assert!(
                matches!(check(&record).unwrap(), Health::Damaged(_)),
                "{damage:?}"
            );
            assert!(!Newest::new(&record, 1).unwrap().answers_from_index());
            assert_eq!(newest(&record), expected);
            assert!(Newest::new(&record, 1).unwrap().answers_from_index());
        }
        // A damaged line among the notes.
        let mut bytes = index_bytes(&record);
        bytes.extend_from_slice(b"+ 12 d1 main not-a-commit\n");
        std::fs::write(path(record.path()), bytes).unwrap();
        assert_eq!(newest(&record), expected);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });
    }

    /// A writer that died halfway through its note leaves a line without its newline: what
    /// is appended next is never glued to it, and reading leaves the index whole.
    #[test]
    fn a_note_cut_short_is_never_glued_to_the_next_line() {
        let (_dir, record) = record();
        commit(&record, "d1", "main", 10);
        commit(&record, "d2", "main", 20);
        let expected = scan(&record).unwrap();
        let broken = |record: &Record| {
            let mut file = OpenOptions::new()
                .append(true)
                .open(path(record.path()))
                .unwrap();
            file.write_all(b"+ 30 d1 ma").unwrap();
        };

        // A reader with a correction to write (a note whose ref never moved claims d1 at 50):
        // it rebuilds the index instead of appending after the broken line.
        drop(
            note(
                record.path(),
                "d1",
                "main",
                ObjectId::null(gix::hash::Kind::Sha1),
                50,
            )
            .unwrap(),
        );
        broken(&record);
        assert_eq!(newest(&record), expected);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });

        // A writer's note after the broken line: on a line of its own, so the broken one is
        // found by the next reader, who rebuilds the index.
        broken(&record);
        commit(&record, "d2", "main", 40);
        let bytes = String::from_utf8(index_bytes(&record)).unwrap();
        assert!(bytes.contains("+ 30 d1 ma\n+ 40 d2 main "), "{bytes}");
        assert!(matches!(check(&record).unwrap(), Health::Damaged(_)));
        let expected = scan(&record).unwrap();
        assert_eq!(expected[0], ("d2".to_owned(), 40));
        assert_eq!(newest(&record), expected);
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });
    }

    #[test]
    fn refs_moved_behind_anvils_back_are_seen_and_the_index_repaired() {
        let (_dir, record) = record();
        commit(&record, "old", "main", 100);
        let old_tip = commit(&record, "old", "main", 110);
        commit(&record, "mid", "main", 200);
        // A line of a debate the index knows, moved ahead by a writer that noted nothing:
        // the reader checks the claims of the screen it shows (110 is one of them), sees the
        // refs say newer, and takes the full pass before showing anything.
        let before = index_bytes(&record);
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

        // A new debate written by git: its folder changes the fingerprint.
        let before = index_bytes(&record);
        commit(&record, "fetched", "main", 250);
        std::fs::write(path(record.path()), &before).unwrap();
        assert!(!Newest::new(&record, 1).unwrap().answers_from_index());
        assert_eq!(
            newest(&record),
            vec![
                ("old".to_owned(), 300),
                ("fetched".to_owned(), 250),
                ("mid".to_owned(), 200)
            ]
        );
        assert!(Newest::new(&record, 1).unwrap().answers_from_index());

        // A line moved back by hand (`git update-ref`): corrected where it is met.
        let ref_file = record.path().join("refs/anvil/old/main");
        assert_eq!(
            std::fs::read_to_string(&ref_file).unwrap().trim(),
            moved.to_string()
        );
        std::fs::write(&ref_file, format!("{old_tip}\n")).unwrap();
        assert!(Newest::new(&record, 1).unwrap().answers_from_index());
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

    #[cfg(unix)]
    #[test]
    fn an_index_that_cannot_take_a_note_is_removed_or_the_move_refused() {
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
        let refused = noted(
            &record,
            &NewCommit {
                author: "Advocate".into(),
                subject: "refused".into(),
                meta: Meta {
                    debate: "a".into(),
                    line: "main".into(),
                    phase: "advocate".into(),
                    ..Meta::default()
                },
                files: Vec::new(),
                remove: Vec::new(),
                time: 30,
                base: Base::Tip(tip),
            },
        )
        .unwrap_err();
        assert!(refused.to_string().contains(FILE), "{refused}");
        assert_eq!(record.tip("a", "main").unwrap(), tip);
    }

    #[test]
    fn the_sorted_part_is_read_backwards_across_chunks() {
        let (_dir, record) = record();
        let sorted: Vec<(i64, String)> = (0..2000).map(|i| (i, format!("debate-{i:05}"))).collect();
        let bytes = encode(&fingerprint(record.path()), &sorted, b"");
        assert!(bytes.len() as u64 > 4 * CHUNK);
        std::fs::write(path(record.path()), &bytes).unwrap();
        let index = Index::read(record.path()).unwrap().unwrap();
        let mut candidates = index.candidates(&HashSet::new()).unwrap();
        let mut seen = Vec::new();
        while let Some(next) = candidates.next().unwrap() {
            seen.push(next);
        }
        let mut expected = sorted.clone();
        expected.reverse();
        assert_eq!(seen, expected);
        assert_eq!(
            Whole::parse(&bytes).unwrap().sorted,
            sorted,
            "the whole file reads the same"
        );
    }

    #[test]
    fn writers_racing_rewrites_of_the_index_lose_no_debate() {
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
                    let _ = settle(&record, &[], true);
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
        assert_eq!(check(&record).unwrap(), Health::Fine { debates: 40 });
        assert!(Newest::new(&record, 1).unwrap().answers_from_index());
        assert_eq!(newest(&record), scan(&record).unwrap());
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
        Delete,
        /// One byte of the file overwritten.
        Garble(usize),
        Fold,
        Rebuild,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..5, any::<bool>(), 0i64..40).prop_map(|(d, s, t)| Op::Commit(d, s, t)),
            1 => (0i64..40).prop_map(Op::Foreign),
            1 => (0u8..5).prop_map(Op::Back),
            1 => (0u8..5, 0i64..60).prop_map(|(d, t)| Op::DeadNote(d, t)),
            1 => Just(Op::Delete),
            1 => any::<usize>().prop_map(Op::Garble),
            1 => Just(Op::Fold),
            1 => Just(Op::Rebuild),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(24)))]

        /// Whatever anvil, git and damage did, the reader gives the order of the refs, and
        /// afterwards the index agrees with them.
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
                            // anvil's back, in a folder that exists, is what the index cannot
                            // see before it checks that debate (see the module's header).
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
                    Op::Delete => crate::fsutil::remove_if_present(&file).unwrap(),
                    Op::Garble(at) => {
                        if let Ok(mut bytes) = std::fs::read(&file) && !bytes.is_empty() {
                            let at = at % bytes.len();
                            bytes[at] = b'#';
                            std::fs::write(&file, bytes).unwrap();
                        }
                    }
                    Op::Fold => {
                        let _ = settle(&record, &[], true);
                    }
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
