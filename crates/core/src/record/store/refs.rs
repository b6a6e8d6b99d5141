//! Reading and moving the refs: a line's tip, listings that survive a `git pack-refs`
//! running under them, the reads that touch only the debate they name, and the ref moves
//! (anvil's own compare-and-swap of a loose ref, and gix's transactions for the rest).

use std::path::PathBuf;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::lock::acquire::Fail;
use gix::refs::Target;
use gix::refs::transaction::{Change, LogChange, RefEdit, RefLog};

use super::{COMMITTER, EMAIL, Record, RecordError, Staged, valid_name};
use crate::record::ref_lock::{self, Expected, Holder, RefFiles, Refused};

impl Record {
    pub(crate) fn ref_name(debate: &str, line: &str) -> String {
        format!("refs/anvil/{debate}/{line}")
    }

    /// The lock file git and gix take to update a line's ref.
    pub(crate) fn ref_lock_path(&self, debate: &str, line: &str) -> PathBuf {
        self.ref_files(debate, line).lock
    }

    /// The commit a line stands at, if the line exists.
    pub fn tip(&self, debate: &str, line: &str) -> Result<Option<ObjectId>, RecordError> {
        self.current(&Record::ref_name(debate, line))
    }

    /// Moves a staged commit's line to it with one compare-and-swap of its ref (see [`Base`]),
    /// and returns the commit's id. anvil moves the loose ref itself, so that a ref lock it
    /// leaves is always recognisable as its own (see [`crate::record::ref_lock`]); a ref lock
    /// that is there already is reported as [`RecordError::Locked`] at once, not waited for:
    /// the caller knows whether it can be stale.
    pub(crate) fn publish(&self, staged: &Staged) -> Result<ObjectId, RecordError> {
        let expected = match staged.expected {
            Some(parent) => Expected::At(parent),
            None => Expected::Absent,
        };
        self.move_ref(&staged.name, expected, staged.id, staged.fork)?;
        Ok(staged.id)
    }

    /// Moves the line's ref `name` from `expected` to `new` (see [`ref_lock::update`]); a ref
    /// that stands elsewhere is [`RecordError::Exists`] for a new line made from another
    /// (`fork`), else [`RecordError::Moved`].
    fn move_ref(
        &self,
        name: &str,
        expected: Expected,
        new: ObjectId,
        fork: bool,
    ) -> Result<(), RecordError> {
        let files = RefFiles::new(&self.path, name);
        ref_lock::update(&files, expected, new, || self.current(name)).map_err(|refused| {
            match refused {
                Refused::Locked => RecordError::Locked { lock: files.lock },
                Refused::Moved if fork => RecordError::Exists { name: name.into() },
                Refused::Moved => RecordError::Moved { name: name.into() },
                Refused::Write { path, source } => RecordError::Write { path, source },
                Refused::Read(e) => e,
            }
        })
    }

    /// The commit the ref `name` names (its loose file, else `packed-refs`), if it exists.
    fn current(&self, name: &str) -> Result<Option<ObjectId>, RecordError> {
        let reference = self
            .refs
            .try_find(name)
            .map_err(|e| self.read_error(name, e))?;
        Ok(reference.and_then(|r| r.target.try_id().map(ToOwned::to_owned)))
    }

    /// The files of the line's ref: the ref, its lock, and anvil's temporary file beside them.
    pub(crate) fn ref_files(&self, debate: &str, line: &str) -> RefFiles {
        RefFiles::new(&self.path, &Record::ref_name(debate, line))
    }

    /// Who holds the lock of the ref `name` (`refs/…`), as far as anvil can tell (see
    /// [`ref_lock::holder`]).
    pub(crate) fn ref_lock_holder(&self, name: &str) -> std::io::Result<Holder> {
        ref_lock::holder(&RefFiles::new(&self.path, name), || {
            self.current(name).ok().flatten()
        })
    }

    /// Clears what an anvil killed while it moved the ref `name` left behind (see
    /// [`ref_lock::clear`]); says whether that was a lock. Another program's lock is left.
    pub(crate) fn clear_ref_leftovers(&self, name: &str) -> Result<bool, RecordError> {
        let files = RefFiles::new(&self.path, name);
        ref_lock::clear(&files, || self.current(name).ok().flatten()).map_err(|source| {
            RecordError::Write {
                path: files.temp.clone(),
                source,
            }
        })
    }

    /// Lists `(debate, line, tip)` for every line in the record.
    pub fn lines(&self) -> Result<Vec<(String, String, ObjectId)>, RecordError> {
        let mut out = Vec::new();
        for (rest, id) in self.list("refs/anvil/")? {
            if let Some((debate, line)) = rest.split_once('/') {
                out.push((debate.to_owned(), line.to_owned(), id));
            }
        }
        Ok(out)
    }

    /// Every ref under `prefix` (ending in `/`) that names an object, as `(name after the
    /// prefix, id)`, sorted by name. A listing that fails is made again: while `git gc` or
    /// `git pack-refs` folds loose refs into `packed-refs`, a ref file can vanish between the
    /// directory listing and its read ("Could not read reference"), and a folder between two
    /// steps of the walk. A listing that still fails after [`LISTING_PATIENCE`] is an error.
    fn list(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, RecordError> {
        let began = std::time::Instant::now();
        let mut attempt = 0u64;
        loop {
            match self.list_once(prefix) {
                Ok(out) => return Ok(out),
                Err(e) if began.elapsed() >= LISTING_PATIENCE => return Err(e),
                Err(_) => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(2 * attempt.min(25)));
                }
            }
        }
    }

    /// One walk of the refs under `prefix`, loose over packed. `git pack-refs` writes the new
    /// `packed-refs` before it prunes the loose files it folded in, and the walk took its
    /// snapshot of `packed-refs` before it began: so a loose ref that vanished under the walk
    /// (a file gone between listing and reading, a folder pruned before it was entered) is in
    /// the `packed-refs` that is there now. Refs without a loose file are then taken from it,
    /// rather than the whole walk being made again, which a record packed in a loop would
    /// never let finish. A loose ref that is there yet cannot be read is an error.
    fn list_once(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, RecordError> {
        let relative: &gix::path::RelativePath = prefix.try_into().map_err(|e| self.git(e))?;
        let platform = self.refs.iter().map_err(|e| self.read_error(prefix, e))?;
        let mut out = std::collections::BTreeMap::new();
        let mut vanished = false;
        for reference in platform
            .prefixed(relative)
            .map_err(|e| self.read_error(prefix, e))?
        {
            let reference = match reference {
                Ok(reference) => reference,
                Err(e) if e.is_not_found() => {
                    vanished = true;
                    continue;
                }
                Err(e) => return Err(self.read_error(prefix, e)),
            };
            let name = reference.name.as_bstr().to_str_lossy();
            if let (Some(rest), Some(id)) = (name.strip_prefix(prefix), reference.target.try_id()) {
                out.insert(rest.to_owned(), id.to_owned());
            }
        }
        if vanished {
            self.settle_from_packed(prefix, &mut out)?;
        }
        Ok(out.into_iter().collect())
    }

    /// After loose refs vanished under a walk: every ref under `prefix` that has no loose file
    /// now takes its value from `packed-refs` as it is now (newer than the walk's snapshot),
    /// and one that is in neither was deleted meanwhile.
    fn settle_from_packed(
        &self,
        prefix: &str,
        out: &mut std::collections::BTreeMap<String, ObjectId>,
    ) -> Result<(), RecordError> {
        let loose = |rest: &str| self.path.join(prefix).join(rest).exists();
        let mut packed_now = std::collections::BTreeMap::new();
        if let Some(packed) = self
            .refs
            .open_packed_buffer()
            .map_err(|e| self.read_error("packed-refs", e))?
        {
            for reference in packed
                .iter_prefixed(prefix.into())
                .map_err(|e| self.read_error("packed-refs", e))?
            {
                let reference = reference.map_err(|e| self.read_error("packed-refs", e))?;
                let name = reference.name.as_bstr().to_str_lossy();
                if let Some(rest) = name.strip_prefix(prefix) {
                    packed_now.insert(rest.to_owned(), reference.target());
                }
            }
        }
        out.retain(|rest, _| loose(rest) || packed_now.contains_key(rest));
        for (rest, id) in packed_now {
            if !loose(&rest) {
                out.insert(rest, id);
            }
        }
        Ok(())
    }
}

/// How long a listing of refs is made again while it fails (see [`Record::list`]): packing the
/// refs of a large record takes git about a second per 50,000 refs.
const LISTING_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads that touch only what they name, whatever the number of other debates: one debate's
/// lines, the debates an id prefix matches, a commit by an abbreviated id, and the times of
/// line tips from the commit-graph that maintenance writes.
impl Record {
    /// The lines of one debate with their tips, sorted by name: one folder of loose refs and a
    /// binary search in `packed-refs`, never a listing of every ref.
    pub fn lines_of_debate(&self, debate: &str) -> Result<Vec<(String, ObjectId)>, RecordError> {
        if !valid_name(debate) {
            return Ok(Vec::new());
        }
        let mut out: Vec<(String, ObjectId)> = self
            .list(&format!("refs/anvil/{debate}/"))?
            .into_iter()
            .filter(|(line, _)| !line.contains('/'))
            .collect();
        out.dedup_by(|a, b| a.0 == b.0);
        Ok(out)
    }

    /// The debates whose id starts with `prefix`, sorted: one listing of `refs/anvil/` (names
    /// only, no file opened) and a binary search in `packed-refs`.
    pub fn debates_with_prefix(&self, prefix: &str) -> Result<Vec<String>, RecordError> {
        self.debates_named(prefix, true)
    }

    /// Every debate folder of `refs/anvil/` and every debate in `packed-refs`, sorted,
    /// without opening the folders (one may hold no line any more).
    pub fn debate_names(&self) -> Result<Vec<String>, RecordError> {
        self.debates_named("", false)
    }

    fn debates_named(&self, prefix: &str, holding_refs: bool) -> Result<Vec<String>, RecordError> {
        let mut out = std::collections::BTreeSet::new();
        if prefix.contains('/') {
            return Ok(Vec::new());
        }
        match std::fs::read_dir(self.path.join("refs/anvil")) {
            Ok(entries) => {
                for entry in entries.flatten() {
                    let Ok(name) = entry.file_name().into_string() else {
                        continue;
                    };
                    // A folder that packing left empty holds no line, nor does one that holds
                    // only locks (anvil's temporary file of a move included).
                    let holds_ref = |d: std::fs::ReadDir| {
                        d.flatten()
                            .any(|e| !e.file_name().to_string_lossy().ends_with(".lock"))
                    };
                    if name.starts_with(prefix)
                        && (!holding_refs || std::fs::read_dir(entry.path()).is_ok_and(holds_ref))
                    {
                        out.insert(name);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.read_error("refs/anvil", e)),
        }
        if let Some(packed) = self.refs.open_packed_buffer().map_err(|e| self.git(e))? {
            let full = format!("refs/anvil/{prefix}");
            for reference in packed.iter_prefixed(full.into()).map_err(|e| self.git(e))? {
                let reference = reference.map_err(|e| self.git(e))?;
                let name = reference.name.as_bstr().to_str_lossy();
                if let Some((debate, _)) = name
                    .strip_prefix("refs/anvil/")
                    .and_then(|r| r.split_once('/'))
                {
                    out.insert(debate.to_owned());
                }
            }
        }
        Ok(out.into_iter().collect())
    }

    /// Every line as `(debate, line, tip)`, in ref order, handed to `each` one at a time.
    pub(crate) fn for_each_line(
        &self,
        mut each: impl FnMut(&str, &str, ObjectId) -> Result<(), RecordError>,
    ) -> Result<(), RecordError> {
        for (rest, id) in self.list("refs/anvil/")? {
            if let Some((debate, line)) = rest.split_once('/') {
                each(debate, line, id)?;
            }
        }
        Ok(())
    }
}

/// Refs outside `refs/anvil/` that sharing needs: the remote-tracking copies of a remote's
/// lines, and moving a line's ref as a whole (create or fast-forward, compare-and-swap).
impl Record {
    /// Every ref under `prefix` (ending in `/`) with its target, as `(name after the
    /// prefix, id)`, sorted.
    pub(crate) fn refs_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, RecordError> {
        self.list(prefix)
    }

    /// Points `refs/anvil/<debate>/<line>` at `new` if it still stands at `expected`
    /// (`None`: it must not exist yet). `_why` is what git's reflog would say of the move; the
    /// record keeps no reflog.
    pub(crate) fn set_line(
        &self,
        debate: &str,
        line: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
        _why: &str,
    ) -> Result<(), RecordError> {
        if !valid_name(debate) || !valid_name(line) {
            return Err(RecordError::BadName(format!("{debate}@{line}")));
        }
        let name = Record::ref_name(debate, line);
        let expected = match expected {
            Some(id) => Expected::At(id),
            None => Expected::Absent,
        };
        // A pull moves a line under its lock (see `line::remote`); a lock another writer holds
        // is waited for as git waits for one (`core.filesRefLockTimeout`, 100 ms).
        let began = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(1);
        loop {
            match self.move_ref(&name, expected, new, false) {
                Err(RecordError::Locked { .. })
                    if began.elapsed() < std::time::Duration::from_millis(100) =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(10));
                }
                moved => return moved,
            }
        }
    }

    /// Applies `edits` in one ref transaction (named after `name` in errors), waiting up to
    /// `patience` for a lock another writer holds.
    fn apply(
        &self,
        edits: Vec<RefEdit>,
        name: &str,
        patience: std::time::Duration,
    ) -> Result<(), RecordError> {
        let committer = gix::actor::Signature {
            name: COMMITTER.into(),
            email: EMAIL.into(),
            time: gix::date::Time::new(jiff::Timestamp::now().as_second(), 0),
        };
        let mut time_buf = gix::date::parse::TimeBuf::default();
        let wait = Fail::AfterDurationWithBackoff(patience);
        self.refs
            .transaction()
            .prepare(edits, wait, wait)
            .and_then(|t| t.commit(Some(committer.to_ref(&mut time_buf))))
            .map_err(|source| RecordError::Ref {
                name: name.to_owned(),
                source,
            })?;
        Ok(())
    }

    /// Moves a line anvil cannot read out of `refs/anvil/` to `refs/anvil-damaged/`, in one
    /// transaction, if it still stands at `tip`: readers no longer meet it, and nothing is
    /// deleted (git keeps what the new ref names).
    pub(crate) fn set_aside(
        &self,
        debate: &str,
        line: &str,
        tip: ObjectId,
    ) -> Result<String, RecordError> {
        use gix::refs::transaction::PreviousValue;
        let name = Record::ref_name(debate, line);
        let aside = format!("refs/anvil-damaged/{debate}/{line}");
        let full = |n: &str| -> Result<gix::refs::FullName, RecordError> {
            n.try_into().map_err(|_| RecordError::BadName(n.to_owned()))
        };
        let edits = vec![
            RefEdit {
                change: Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: "anvil: set aside a line anvil cannot read".into(),
                    },
                    expected: PreviousValue::Any,
                    new: Target::Object(tip),
                },
                name: full(&aside)?,
                deref: false,
            },
            RefEdit {
                change: Change::Delete {
                    expected: PreviousValue::MustExistAndMatch(Target::Object(tip)),
                    log: RefLog::AndReference,
                },
                name: full(&name)?,
                deref: false,
            },
        ];
        self.apply(edits, &name, std::time::Duration::from_secs(1))?;
        Ok(aside)
    }
}
