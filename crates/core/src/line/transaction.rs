//! The one way a line changes. A phase recorded by the Stop hook, an interactive pause, queued
//! steering, a question and its answer, a cancel, a branch, a resume: each is one call of
//! [`run`], which
//!
//! 1. takes the line's lock (so nothing else changes the line meanwhile),
//! 2. reads where the record says the line stands, bringing the live files forward first if
//!    they are behind (a writer died between its commit and its live files),
//! 3. lets the caller decide, from that state alone, what happens ([`Plan`]),
//! 4. commits what was decided, with one compare-and-swap of the line's ref (`commit_of`,
//!    `publish`; a race lost to a writer outside anvil is tried again, `before_retry`),
//! 5. brings the live files in line with the new commit, `state.md` last (`follow`).
//!
//! The record is the source of truth and the live files are a cache of its tip: `state.md`
//! names the commit it shows (`tip:`), so a state file that does not name the line's tip is
//! out of date, and is rebuilt from the record instead of being trusted. Whatever point a
//! process dies at, the next transaction finds either the old tip (nothing happened) or the
//! new one with stale live files (which it rolls forward): a phase is never recorded twice.
//!
//! A ref lock file is removed only when it is provably anvil's own leftover: anvil makes its
//! ref locks so that they say whose they are (see [`crate::record::ref_lock`]), and the next
//! transaction of the line clears what a killed one left. Any other lock is another program's
//! (`git gc` packing the refs, a person's `git`): it is waited for, never removed.

use std::path::Path;
use std::time::Duration;

use gix::ObjectId;

use crate::error::{DebateError, Refusal};
use crate::home::{Home, LineRef};
use crate::model::state::{State, StateError, Status};
use crate::model::transcript;
use crate::record::schema::Meta;
use crate::record::store::{Base, NewCommit, Record, RecordError};
use crate::review::history::{self, LineHistory};
use crate::{fault, fsutil};

/// How a transaction treats the line.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How long to wait for the line's lock.
    pub patience: Duration,
    /// Rebuild the live files from the record even when they look current, and replace a
    /// damaged state file instead of reporting it (`anvil resume`).
    pub rebuild: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            patience: Duration::from_secs(10),
            rebuild: false,
        }
    }
}

/// Where the line stands, as the record says, when the caller decides.
pub struct Current<'a> {
    pub record: &'a Record,
    pub line: &'a LineRef,
    /// The commit the line stands at; `None` for a line the record does not have (yet).
    pub tip: Option<ObjectId>,
    /// The state at the tip; `None` with `tip`.
    pub state: Option<State>,
}

impl Current<'_> {
    /// The state of a line that must exist.
    pub fn state(&self) -> Result<State, DebateError> {
        self.state
            .clone()
            .ok_or_else(|| Refusal::NoLine(self.line.clone()).into())
    }
}

/// What the caller decided.
pub enum Plan<T> {
    /// Nothing changes.
    Keep(T),
    /// Only fields the record does not need change (which session drives the line, and
    /// whether it holds the debate): the live state file is rewritten, nothing is committed.
    Live(Box<State>, T),
    /// A commit, and the live files that follow from it.
    Record(Box<Change>, T),
}

/// One commit of a line and how its live files follow.
pub struct Change {
    /// The line's state after the commit (its `state.md`).
    pub state: State,
    pub author: String,
    pub subject: String,
    pub meta: Meta,
    /// Files besides `state.md`.
    pub files: Vec<(String, Vec<u8>)>,
    pub remove: Vec<String>,
    /// Start the line from this commit of another line (`anvil branch`).
    pub fork: Option<ObjectId>,
    pub transcript: Transcript,
    /// Write the report (the line is done).
    pub report: bool,
}

impl Change {
    /// A commit that records a change of the state alone (start, cancel, ask, answer, …),
    /// spoken by anvil.
    pub fn bookkeeping(state: State, phase: &str, subject: String) -> Change {
        let meta = Meta {
            debate: state.debate.clone(),
            line: state.line.clone(),
            phase: phase.to_owned(),
            round: state.progress.round,
            step: Some(state.progress.step),
            ..Meta::default()
        };
        Change {
            state,
            author: "anvil".into(),
            subject,
            meta,
            files: Vec::new(),
            remove: Vec::new(),
            fork: None,
            transcript: Transcript::Keep,
            report: false,
        }
    }
}

/// What happens to `transcript.md` with a commit.
pub enum Transcript {
    Keep,
    Append(String),
    Replace(String),
}

/// What a transaction did.
pub struct Done<T> {
    pub value: T,
    /// The commit the line stands at afterwards.
    pub tip: Option<ObjectId>,
    /// Things worth telling the user (a leftover lock removed, live files rebuilt).
    pub notes: Vec<String>,
}

/// Tries of a commit that lost a race with a writer that does not take the line's lock.
const ATTEMPTS: u32 = 5;

/// Runs one change of `line` (see the module's documentation). `decide` sees the line as the
/// record has it and may run more than once, if a writer outside anvil moves the line's ref
/// meanwhile; it must not write anything the record depends on.
pub fn run<T>(
    home: &Home,
    line: &LineRef,
    options: Options,
    mut decide: impl FnMut(&Current<'_>) -> Result<Plan<T>, DebateError>,
) -> Result<Done<T>, DebateError> {
    let _lock = home
        .lock_line(line, options.patience)
        .map_err(|source| DebateError::Io {
            what: "cannot take the lock of",
            path: home.line_lock_path(line),
            source,
        })?;
    let mut record = open_record(home)?;
    let mut notes = Vec::new();
    clear_ref_lock(home, &record, line, &mut notes)?;
    let mut rebuild = options.rebuild;
    let mut attempt = 0;
    let began = std::time::Instant::now();
    loop {
        attempt += 1;
        let tip = record.tip(&line.debate, &line.line)?;
        let state = match tip {
            Some(tip) => Some(current(home, &record, line, tip, rebuild, &mut notes)?),
            None => None,
        };
        rebuild = false;
        let plan = decide(&Current {
            record: &record,
            line,
            tip,
            state,
        })?;
        let (change, value) = match plan {
            Plan::Keep(value) => return Ok(Done { value, tip, notes }),
            Plan::Live(mut state, value) => {
                state.tip = tip.map(|t| t.to_string());
                save_state(home, line, &state)?;
                return Ok(Done { value, tip, notes });
            }
            Plan::Record(change, value) => (change, value),
        };
        let (new, after) = commit_of(*change, tip);
        match publish(&record, line, &new) {
            Ok(id) => {
                follow(
                    home,
                    &record,
                    line,
                    after.state,
                    id,
                    after.transcript,
                    after.report,
                )?;
                return Ok(Done {
                    value,
                    tip: Some(id),
                    notes,
                });
            }
            Err(e) => before_retry(home, &mut record, line, e, (attempt, began), &mut notes)?,
        }
    }
}

/// What the live files do once a [`Change`]'s commit has landed.
struct After {
    state: State,
    transcript: Transcript,
    report: bool,
}

/// The commit of `change` onto `tip` (or the commit it forks from), with its `state.md`, and
/// what the live files do once it has landed.
fn commit_of(change: Change, tip: Option<ObjectId>) -> (NewCommit, After) {
    let mut state = change.state;
    state.tip = None;
    let mut files = Vec::with_capacity(change.files.len() + 1);
    files.push(("state.md".to_owned(), state.to_markdown().into_bytes()));
    files.extend(change.files);
    let new = NewCommit {
        author: change.author,
        subject: change.subject,
        meta: change.meta,
        files,
        remove: change.remove,
        time: crate::clock::now().as_second(),
        base: match change.fork {
            Some(from) => Base::Fork(from),
            None => Base::Tip(tip),
        },
    };
    let after = After {
        state,
        transcript: change.transcript,
        report: change.report,
    };
    (new, after)
}

/// Writes `new`'s objects and moves the line's ref to it. The line moves in two steps, noted
/// in the index of recent debates between them: the note is held until the ref has moved (see
/// `record::recent`).
fn publish(record: &Record, line: &LineRef, new: &NewCommit) -> Result<ObjectId, RecordError> {
    record.stage(new).and_then(|staged| {
        let _note = crate::record::recent::note(
            record.path(),
            &line.debate,
            &line.line,
            staged.id(),
            new.time,
        )?;
        record.publish(&staged)
    })
}

/// After a commit that did not land with `e` (at the `attempt`th try, the first `began` then):
/// the error, when it is final; else a short wait, the record opened again if it must be, and
/// anvil's own leftover ref lock cleared.
fn before_retry(
    home: &Home,
    record: &mut Record,
    line: &LineRef,
    e: RecordError,
    (attempt, began): (u32, std::time::Instant),
    notes: &mut Vec<String>,
) -> Result<(), DebateError> {
    // A ref lock another program takes again and again (`git pack-refs` in a loop, a long
    // `git gc`) is waited for as long as one held lock would be.
    let locked = matches!(e, RecordError::Locked { .. });
    let patient = locked && began.elapsed() < FOREIGN_LOCK_PATIENCE;
    if !e.is_retryable() || (attempt >= ATTEMPTS && !patient) {
        if let (true, RecordError::Locked { lock }) = (attempt >= ATTEMPTS, &e) {
            return Err(RecordError::ForeignLock {
                lock: lock.clone(),
                holder: holder_of(record, line),
            }
            .into());
        }
        return Err(e.into());
    }
    std::thread::sleep(Duration::from_millis(5 * u64::from(attempt.min(10))));
    if e.needs_reopen() {
        *record = Record::open(&home.record_dir())?;
    }
    if locked {
        clear_ref_lock(home, record, line, notes)?;
    }
    Ok(())
}

/// The project's record, created (with its index of recent debates) when there is none yet.
pub fn open_record(home: &Home) -> Result<Record, DebateError> {
    let record = Record::open_or_init(&home.record_dir())?;
    if record.created() {
        // A new record knows all of its (no) debates: readers need not rebuild the index.
        crate::record::recent::create(record.path()).map_err(|source| DebateError::Io {
            what: "cannot create the index of recent debates in",
            path: record.path().to_owned(),
            source,
        })?;
    }
    Ok(record)
}

/// Where `line` stands, for a reader that changes nothing: the live state when it shows the
/// record's tip, else the record's own. Takes no lock.
pub fn view(home: &Home, line: &LineRef) -> Result<State, DebateError> {
    let record = open_record(home)?;
    let tip = record
        .tip(&line.debate, &line.line)?
        .ok_or_else(|| Refusal::NoLine(line.clone()))?;
    let recorded = history::line_state(&record, line, tip)?;
    match State::load(&home.state_path(line)) {
        // The live file adds who drives the line; where the line stands, the record says.
        Ok(live)
            if live.tip.as_deref() == Some(tip.to_string().as_str())
                && live.progress == recorded.progress =>
        {
            Ok(live)
        }
        _ => Ok(recorded),
    }
}

/// The live state at `tip`, rolled forward from the record when the live files are behind.
fn current(
    home: &Home,
    record: &Record,
    line: &LineRef,
    tip: ObjectId,
    rebuild: bool,
    notes: &mut Vec<String>,
) -> Result<State, DebateError> {
    let path = home.state_path(line);
    let mut headless = false;
    match State::load(&path) {
        Ok(live) if !rebuild && live.tip.as_deref() == Some(tip.to_string().as_str()) => {
            // It names the tip; it must also say what the tip says (a state file edited by
            // hand would otherwise stop the debate, or move it, behind the record's back).
            let recorded = history::progress_at(record, tip)?;
            if recorded == live.progress {
                return Ok(live);
            }
            let recorded = State {
                progress: recorded,
                ..live.clone()
            };
            let aside = path.with_extension("md.edited");
            std::fs::copy(&path, &aside).map_err(|source| DebateError::Io {
                what: "cannot keep the edited state file as",
                path: aside.clone(),
                source,
            })?;
            notes.push(format!(
                "{line}'s state.md says {} where the record says {}: the record wins, and the \
                 live files were rebuilt from it (the edited file is kept as {})",
                live.standing(),
                recorded.standing(),
                aside.display()
            ));
            headless = live.headless;
        }
        Ok(live) => {
            headless = live.headless;
            if live.tip.is_some() && !rebuild {
                notes.push(format!(
                    "{line}'s live files were behind the record (a writer stopped half-way); brought forward"
                ));
            }
        }
        Err(StateError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if rebuild => {
            let aside = path.with_extension("md.damaged");
            std::fs::rename(&path, &aside).map_err(|source| DebateError::Io {
                what: "cannot move the damaged state file aside to",
                path: aside.clone(),
                source,
            })?;
            notes.push(format!(
                "{e}; rebuilt from the record (the damaged file is kept as {})",
                aside.display()
            ));
        }
        Err(e) => return Err(e.into()),
    }
    roll_forward(home, record, line, tip, headless)
}

/// Rebuilds `line`'s live files from the record's commit `tip`.
/// Whether `anvil run` drives the line is this machine's business, not the record's: it is
/// kept from the live state being replaced.
fn roll_forward(
    home: &Home,
    record: &Record,
    line: &LineRef,
    tip: ObjectId,
    headless: bool,
) -> Result<State, DebateError> {
    let history = LineHistory::at(record, line, tip)?;
    let mut state = history::line_state(record, line, tip)?;
    state.headless |= headless;
    let text = history::transcript(record, &history, history.entries.len() - 1, &state)?;
    follow(
        home,
        record,
        line,
        state.clone(),
        tip,
        Transcript::Replace(text),
        false,
    )?;
    state.tip = Some(tip.to_string());
    Ok(state)
}

/// Brings the live files in line with commit `tip`, whose state is `state`: the transcript,
/// then what follows from the state (queue, report), then `state.md`, so that a state file
/// naming `tip` means all that is done. A line that is over is then let go of by its
/// sessions: last, so that a session whose hook died before can still be told the line is
/// done (and every stop of a session bound to a line that is over unbinds it anyway).
fn follow(
    home: &Home,
    record: &Record,
    line: &LineRef,
    mut state: State,
    tip: ObjectId,
    text: Transcript,
    report: bool,
) -> Result<(), DebateError> {
    let path = home.transcript_path(line);
    let io = |source| DebateError::Io {
        what: "cannot write",
        path: path.clone(),
        source,
    };
    match text {
        Transcript::Keep => {}
        Transcript::Append(section) => transcript::append(&path, &section).map_err(io)?,
        Transcript::Replace(all) => fault::point("writing the transcript")
            .and_then(|()| fsutil::write_atomic(&path, all.as_bytes()))
            .map_err(io)?,
    }
    settle(home, record, (line, tip), &state, report)?;
    if !state.progress.status.is_over() {
        crate::line::active::mark(home, line).map_err(|source| DebateError::Io {
            what: "cannot write the active index in",
            path: home.root().to_owned(),
            source,
        })?;
    }
    state.tip = Some(tip.to_string());
    save_state(home, line, &state)?;
    release(home, line, &state)
}

/// What follows from a line's state outside the record, done so that doing it again is
/// harmless: delivered steering leaves the queue; a finished line has its report, made from
/// the record at `tip` (its conclusion is the synthesis recorded there).
fn settle(
    home: &Home,
    record: &Record,
    (line, tip): (&LineRef, ObjectId),
    state: &State,
    report: bool,
) -> Result<(), DebateError> {
    fault::point("settling").map_err(|source| DebateError::Io {
        what: "cannot settle",
        path: home.line_dir(line),
        source,
    })?;
    let io = |what, path: &Path| {
        let path = path.to_owned();
        move |source| DebateError::Io { what, path, source }
    };
    let queued = home.queued_steering(line).map_err(io(
        "cannot read the steering queue of",
        &home.line_dir(line),
    ))?;
    for item in queued.iter().filter(|q| q.number <= state.steering_taken) {
        crate::fsutil::remove_if_present(&item.path).map_err(io("cannot remove", &item.path))?;
    }
    if state.progress.status == Status::Done
        && (report || !crate::review::report::output_path(home, state).exists())
    {
        let history = LineHistory::at(record, line, tip)?;
        let path = crate::review::report::output_path(home, state);
        crate::review::report::Report::of_line(record, &history, state)?
            .write(&path)
            .map_err(io("cannot write the report", &path))?;
    }
    Ok(())
}

/// A line that is over is no longer offered to sessions, nor driven by one.
fn release(home: &Home, line: &LineRef, state: &State) -> Result<(), DebateError> {
    if !state.progress.status.is_over() {
        return Ok(());
    }
    let io = |what| {
        let path = home.root().to_owned();
        move |source| DebateError::Io { what, path, source }
    };
    fault::point("releasing the line").map_err(io("cannot release the line in"))?;
    home.remove_pending(line)
        .map_err(io("cannot withdraw the offer of a line in"))?;
    for session in home
        .sessions_of(line)
        .map_err(io("cannot read sessions in"))?
    {
        home.unbind(&session)
            .map_err(io("cannot unbind a session in"))?;
    }
    Ok(())
}

fn save_state(home: &Home, line: &LineRef, state: &State) -> Result<(), DebateError> {
    let path = home.state_path(line);
    fault::point("writing the state file")
        .map_err(|source| StateError::Write {
            path: path.clone(),
            source,
        })
        .and_then(|()| state.save(&path))?;
    Ok(())
}

/// Notes of a transaction run by a command (not the hook, which shows them to Claude's user).
pub(crate) fn print_notes(notes: &[String]) {
    for note in notes {
        eprintln!("anvil: note: {note}");
    }
}
/// Where an older anvil wrote the commit it was about to point the line's ref at, before
/// gix created the ref's lock; a lock holding exactly that commit was its leftover. This anvil
/// writes no such file (its ref locks say whose they are, see [`crate::record::ref_lock`]); it
/// still recognises and clears what an older one left.
pub(crate) fn legacy_intent_path(home: &Home, line: &LineRef) -> std::path::PathBuf {
    home.ref_intent_path(line)
}

/// Clears the way to the line's ref. What an anvil killed while it moved the ref left behind
/// is removed ([`clear_leftovers`]), with a note when it was a lock. Any other lock belongs to
/// another program (`git gc` or `git pack-refs` folding the ref into `packed-refs`, a person's
/// `git update-ref`): removing it would let that program undo this write, so it is waited
/// for, within the hook's budget, and never removed.
fn clear_ref_lock(
    home: &Home,
    record: &Record,
    line: &LineRef,
    notes: &mut Vec<String>,
) -> Result<(), DebateError> {
    let lock = record.ref_lock_path(&line.debate, &line.line);
    if clear_leftovers(home, record, line)? {
        notes.push(format!(
            "removed {}, left behind by an anvil process that was killed while it moved the ref",
            lock.display()
        ));
    }
    let gone = || std::fs::symlink_metadata(&lock).is_err();
    let began = std::time::Instant::now();
    while !gone() {
        if began.elapsed() >= FOREIGN_LOCK_PATIENCE {
            // An older anvil's intent stays beside a lock that stays: `anvil doctor` reads it.
            return Err(RecordError::ForeignLock {
                lock,
                holder: holder_of(record, line),
            }
            .into());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

/// Removes what an anvil killed while it moved the line's ref left behind: its lock and its
/// temporary file (see [`crate::record::ref_lock`]), or an older anvil's lock, holding the
/// commit it noted in its intent file, and that file. Says whether a lock was removed. The
/// caller holds the line's lock: an older anvil's leftover is recognised only under it.
pub(crate) fn clear_leftovers(
    home: &Home,
    record: &Record,
    line: &LineRef,
) -> Result<bool, DebateError> {
    let mut removed = record.clear_ref_leftovers(&Record::ref_name(&line.debate, &line.line))?;
    let lock = record.ref_lock_path(&line.debate, &line.line);
    let intent = legacy_intent_path(home, line);
    if std::fs::symlink_metadata(&lock).is_ok() {
        if !older_anvils_lock(record, line, &intent) {
            return Ok(removed);
        }
        match std::fs::remove_file(&lock) {
            Ok(()) => removed = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(RecordError::Write { path: lock, source }.into()),
        }
    }
    remove_legacy_intent(&intent);
    Ok(removed)
}

/// Is the line's ref lock one an older anvil left: holding exactly the commit it noted in
/// `intent`, a commit the ref does not name?
pub(crate) fn older_anvils_lock(record: &Record, line: &LineRef, intent: &Path) -> bool {
    let Ok(intended) = std::fs::read(intent) else {
        return false;
    };
    crate::record::ref_lock::holds_new_value(
        &record.ref_lock_path(&line.debate, &line.line),
        &intended,
        || record.tip(&line.debate, &line.line).ok().flatten(),
    )
}

/// An older anvil's intent file is evidence only while a lock holds its commit (one the ref
/// does not name): one that cannot be removed misleads nobody, and stops nothing.
fn remove_legacy_intent(intent: &Path) {
    let _ = std::fs::remove_file(intent);
}

/// Who holds a lock of the record that anvil did not take, as far as anvil can tell.
fn holder_of(record: &Record, line: &LineRef) -> &'static str {
    use crate::record::ref_lock::Holder;
    if crate::record::maintenance::running(record.path()) {
        return "`anvil gc` (its `git gc` packing the record)";
    }
    match record.ref_lock_holder(&Record::ref_name(&line.debate, &line.line)) {
        Ok(Holder::Anvil) => "another anvil process moving the line (an `anvil pull`?)",
        _ if std::fs::metadata(record.ref_lock_path(&line.debate, &line.line))
            .is_ok_and(|m| m.len() == 0) =>
        {
            "a program other than anvil (it is empty: a `git` command on the record, or one \
             that was killed before it wrote anything)"
        }
        _ => "a program other than anvil (a `git` command on the record?)",
    }
}

/// How long a stop waits for a ref lock another program holds: `git pack-refs` holds one for
/// the moment it takes to fold the ref into `packed-refs`.
const FOREIGN_LOCK_PATIENCE: Duration = Duration::from_secs(5);
