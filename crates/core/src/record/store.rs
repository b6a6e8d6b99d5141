//! The record: a bare git repository under `.anvil/record` holding every line's history, one
//! commit per phase transition, written with gix (no `git` binary needed).
//!
//! Refs live under `refs/anvil/<debate>/<line>` so that pushing them to a team's code remote
//! adds no branch. A commit's tree holds `state.md` and, per phase, the prompt that was
//! injected and the response (`NNN-role.{prompt,response}.md`), so storage grows with
//! the debate, not with its square.
//! Ref updates are one compare-and-swap each: a commit is refused if the line moved since its
//! writer read it, and the writer decides again (see [`crate::line::transaction`], the only writer).

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::lock::acquire::Fail;
use gix::objs::tree::EntryKind;
use gix::objs::{FindExt, Kind, WriteTo};
use gix::refs::Target;
use gix::refs::transaction::{Change, LogChange, RefEdit, RefLog};
use zlib_rs::{Deflate, DeflateConfig, DeflateFlush, Status};

use crate::record::ref_lock::{self, Expected, Holder, RefFiles, Refused};
use crate::record::schema::Meta;

/// What can go wrong with the record. Causes are kept as sources, so a caller can tell a lost
/// race (worth another try) from a full disk or a refused permission (not worth one).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("the record at {path} cannot be opened: {reason}{}", source.as_ref().map(|s| format!(": {s}")).unwrap_or_default())]
    Open {
        path: PathBuf,
        reason: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    #[error("the record at {path}: cannot read {what}")]
    Read {
        path: PathBuf,
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("cannot write {path}: {source}; {}", crate::fsutil::advice(source.kind()))]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{name} moved while anvil was writing it")]
    Moved { name: String },
    /// An object the line needs was not found where this process looked: a maintenance
    /// (`git gc`) moved it into a new pack at that moment. A record opened again finds it.
    #[error("the record at {path}: {what} could not be found (moved into a pack at that moment?)")]
    Missing { path: PathBuf, what: String },
    #[error("{name} exists already")]
    Exists { name: String },
    #[error("{lock} is held by another process (git, or an anvil that is not anvil's line lock)")]
    Locked { lock: PathBuf },
    /// A ref lock another program made, still there after the wait.
    #[error(
        "{lock} is held by {holder} and stayed for 5 s; anvil never removes a lock another \
         program holds. Try again once it is done; if no git command runs on the record and the \
         lock stays, a program that was killed left it: `anvil doctor` says what it knows of \
         it, and removing the file by hand lets the debate go on"
    )]
    ForeignLock { lock: PathBuf, holder: &'static str },
    #[error("cannot update {name}")]
    Ref {
        name: String,
        #[source]
        source: gix::error::Error,
    },
    #[error("'{0}' is not a valid debate or line name for a git ref")]
    BadName(String),
}

impl RecordError {
    /// Worth another try after re-reading the line: a lost compare-and-swap, a ref lock that
    /// someone holds right now, or an object that a maintenance has just packed away (with the
    /// record opened again, [`RecordError::needs_reopen`]). Nothing else is.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(
            self,
            RecordError::Moved { .. } | RecordError::Locked { .. } | RecordError::Missing { .. }
        )
    }

    /// Worth another try only with the record opened again (see [`RecordError::Missing`]).
    pub(crate) fn needs_reopen(&self) -> bool {
        matches!(self, RecordError::Missing { .. })
    }
}

/// The record's object database and ref store, opened on their own: reading the repository's
/// configuration (as a whole `gix::Repository` does) would cost every Stop hook a third of a
/// millisecond, and the record has no configuration anvil needs.
pub struct Record {
    objects: gix::odb::Handle,
    refs: gix::refs::file::Store,
    path: PathBuf,
    created: bool,
}

/// A commit to add on top of a line. The ref is `refs/anvil/<meta.debate>/<meta.line>`.
#[derive(Debug, Clone)]
pub struct NewCommit {
    /// Who speaks in this commit, shown as the author (`Advocate`, a persona, `anvil`, …); any
    /// text, made safe for git's header.
    pub author: String,
    /// Any text: its first line, made safe for git's header.
    pub subject: String,
    pub meta: Meta,
    /// Files to add or replace, by path inside the tree.
    pub files: Vec<(String, Vec<u8>)>,
    /// Files to take out of the tree.
    pub remove: Vec<String>,
    /// Seconds since the epoch.
    pub time: i64,
    pub base: Base,
}

/// What a new commit is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The commit the line must stand at; `None` for a new, empty line. If the line stands
    /// elsewhere the commit is refused ([`RecordError::Moved`]): the caller decided on what
    /// it read, so it reads again and decides again.
    Tip(Option<ObjectId>),
    /// Another line's commit, to start a new line from (`anvil branch`); refused
    /// ([`RecordError::Exists`]) if the line exists already.
    Fork(ObjectId),
}

/// A commit whose objects are written, waiting for [`Record::publish`] to move its line.
#[derive(Debug)]
pub struct Staged {
    id: ObjectId,
    name: String,
    /// The commit the line must stand at; `None`: the line must not exist.
    expected: Option<ObjectId>,
    fork: bool,
}

impl Staged {
    /// The commit's id.
    pub fn id(&self) -> ObjectId {
        self.id
    }
}

const COMMITTER: &str = "anvil";
const EMAIL: &str = "anvil@localhost";
/// anvil makes its records with SHA-1, git's default.
const HASH: gix::hash::Kind = gix::hash::Kind::Sha1;

impl Record {
    /// Opens the record, creating an empty bare repository first if there is none.
    pub fn open_or_init(path: &Path) -> Result<Record, RecordError> {
        if !path.join("HEAD").is_file() {
            std::fs::create_dir_all(path).map_err(|e| write_error(path, e))?;
            gix::init_bare(path).map_err(|e| open_error(path, "cannot create it", e))?;
            // The 256 loose-object folders up front: otherwise most commits of a young record
            // pay for a `mkdir` per object in the Stop hook. Git is content with empty ones.
            for fan in 0..=0xffu8 {
                let dir = path.join("objects").join(format!("{fan:02x}"));
                std::fs::create_dir_all(&dir).map_err(|e| write_error(&dir, e))?;
            }
            let mut record = Record::at(path)?;
            record.created = true;
            return Ok(record);
        }
        Record::at(path)
    }

    /// Did this open create the repository?
    pub fn created(&self) -> bool {
        self.created
    }

    pub fn open(path: &Path) -> Result<Record, RecordError> {
        if !path.join("HEAD").is_file() {
            return Err(RecordError::Open {
                path: path.to_owned(),
                reason: "not a git repository (no HEAD)".into(),
                source: None,
            });
        }
        Record::at(path)
    }

    /// The stores of the repository at `path`, which has a `HEAD`.
    fn at(path: &Path) -> Result<Record, RecordError> {
        if let Some(format) = object_format(path) {
            return Err(RecordError::Open {
                path: path.to_owned(),
                reason: format!("its objects use {format}; anvil writes records with SHA-1 only"),
                source: None,
            });
        }
        let objects = gix::odb::at(path.join("objects"), HASH)
            .map_err(|e| open_error(path, "cannot open its objects", e))?;
        let options = gix::refs::store::init::Options {
            write_reflog: gix::refs::store::WriteReflog::Disable,
            ..Default::default()
        };
        let refs = gix::refs::file::Store::at_opts(path.to_owned(), HASH, options);
        Ok(Record {
            objects,
            refs,
            path: path.to_owned(),
            created: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

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

    /// Writes a commit's objects ([`Record::stage`]) and moves its line to it
    /// ([`Record::publish`]); the line transaction does the two apart, to note the move in the
    /// index of recent debates between them.
    #[cfg(test)]
    pub fn commit(&self, new: &NewCommit) -> Result<ObjectId, RecordError> {
        let staged = self.stage(new)?;
        self.publish(&staged)
    }

    /// Writes the objects of a commit to add to a line: nothing refers to them until
    /// [`Record::publish`] moves the line.
    pub fn stage(&self, new: &NewCommit) -> Result<Staged, RecordError> {
        let name = Record::ref_name(&new.meta.debate, &new.meta.line);
        if gix::refs::FullName::try_from(name.as_str()).is_err() {
            return Err(RecordError::BadName(name));
        }
        // The commit's objects are built in memory and written together by `persist`.
        let mut built = Built::default();
        let mut blobs = Vec::with_capacity(new.files.len());
        for (path, bytes) in &new.files {
            blobs.push((path.as_str(), built.add(Kind::Blob, bytes.clone())));
        }
        let (parent, fork) = match new.base {
            Base::Tip(tip) => (tip, false),
            Base::Fork(from) => (Some(from), true),
        };
        let mut buf = Vec::new();
        // The parent and its tree were there a moment ago (the ref names the parent): one
        // that is not found has just been packed, and the caller opens the record again.
        let base_tree: gix::objs::Tree = match parent {
            Some(id) => {
                let tree = self
                    .objects
                    .find_commit(&id, &mut buf)
                    .map_err(|e| self.find_error(&format!("commit {id}"), e))?
                    .tree();
                self.objects
                    .find_tree(&tree, &mut buf)
                    .map_err(|e| self.find_error(&format!("tree {tree}"), e))?
                    .into()
            }
            None => gix::objs::Tree::empty(),
        };
        let mut editor = gix::objs::tree::Editor::new(base_tree, &self.objects, HASH);
        for (path, id) in &blobs {
            editor
                .upsert(path.split('/'), EntryKind::Blob, *id)
                .map_err(|e| self.read_error("the tree to edit", e))?;
        }
        for path in &new.remove {
            editor
                .remove(path.split('/'))
                .map_err(|e| self.read_error("the tree to edit", e))?;
        }
        let tree = editor
            .write(|tree| Ok::<_, std::convert::Infallible>(built.add_object(Kind::Tree, tree)))
            .map_err(|e| self.read_error("the tree to write", e))?;
        let signature = |name: &str| gix::actor::Signature {
            name: name.into(),
            email: EMAIL.into(),
            time: gix::date::Time::new(new.time, 0),
        };
        let message = crate::record::schema::message(&new.subject, &new.meta);
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: signature(&crate::record::schema::safe_name(&new.author)),
            committer: signature(COMMITTER),
            encoding: None,
            message: message.as_str().into(),
            extra_headers: Vec::new(),
        };
        let id = built.add_object(Kind::Commit, &commit);
        self.persist(built.objects)?;
        Ok(Staged {
            id,
            name,
            expected: parent.filter(|_| !fork),
            fork,
        })
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

    /// Writes objects built in memory as loose objects, all through one compressor (setting one
    /// up per object, as gix's loose-object store does, costs the hook most of its page
    /// faults: `cargo bench --bench hook` writes one phase's objects both ways, and this
    /// writer takes about 0.6 of the time), skipping the ones the record has already.
    fn persist(&self, objects: Vec<(ObjectId, Kind, Vec<u8>)>) -> Result<(), RecordError> {
        use std::io::Write;
        let dir = self.path.join("objects");
        let mut compressor = compressor();
        let mut loose = Vec::new();
        for (id, kind, data) in objects {
            let target = loose_path(&dir, id);
            let fan_dir = target.parent().expect("a fan-out folder").to_owned();
            // Only the loose copy is looked for: asking the object database about an object
            // it lacks makes it rescan its packs, and a duplicate of a packed object is
            // harmless (git keeps one when it next packs). A loose copy that is there may be
            // an unreachable leftover that `git gc` is about to prune as old: it is made young
            // again, as git does, so that it outlives the commit that now needs it.
            if freshen(&target) {
                continue;
            }
            let mut raw = gix::objs::encode::loose_header(kind, data.len() as u64).to_vec();
            raw.extend_from_slice(&data);
            deflate(&mut compressor, &raw, &mut loose)
                .map_err(|e| write_error(&target, std::io::Error::other(e)))?;
            // Written next to where it lands, as git does (and named like git's, so that
            // `git prune` cleans up after a writer that died): a rename within one folder.
            let mut builder = tempfile::Builder::new();
            builder.prefix("tmp_obj_");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                builder.permissions(std::fs::Permissions::from_mode(0o444));
            }
            // The fan-out folders are made with the record; one may be missing from a record
            // that git wrote or packed, and `git gc` (anvil gc) removes the ones it empties,
            // possibly right after this writer made one again: made again, a few times.
            let mut attempts = 0;
            let file = loop {
                match builder.tempfile_in(&fan_dir) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempts < 10 => {
                        attempts += 1;
                        if let Err(e) = std::fs::create_dir_all(&fan_dir) {
                            break Err(e);
                        }
                    }
                    other => break other,
                }
            };
            file.and_then(|mut file| {
                crate::fault::point("writing an object")?;
                file.write_all(&loose)?;
                file.persist(&target).map_err(|e| e.error)
            })
            .map_err(|e| write_error(&target, e))?;
        }
        Ok(())
    }

    /// A commit, decoded; `buf` holds its bytes.
    pub(crate) fn find_commit<'a>(
        &self,
        id: ObjectId,
        buf: &'a mut Vec<u8>,
    ) -> Result<gix::objs::CommitRef<'a>, RecordError> {
        self.objects
            .find_commit(&id, buf)
            .map_err(|e| self.read_error(&format!("commit {id}"), e))
    }

    /// What kind of object `id` is.
    pub(crate) fn object_kind(&self, id: ObjectId) -> Result<gix::objs::Kind, RecordError> {
        use gix::objs::FindHeader;
        match self.objects.try_header(&id) {
            Ok(Some(header)) => Ok(header.kind),
            Ok(None) => Err(RecordError::Missing {
                path: self.path.clone(),
                what: format!("object {id}"),
            }),
            Err(e) => Err(self.read_error(&format!("object {id}"), e)),
        }
    }

    pub(crate) fn tree_of(&self, commit: ObjectId) -> Result<ObjectId, RecordError> {
        let mut buf = Vec::new();
        Ok(self.find_commit(commit, &mut buf)?.tree())
    }

    /// The bytes of `path` in `commit`'s tree, if it is there.
    pub fn read(&self, commit: ObjectId, path: &str) -> Result<Option<Vec<u8>>, RecordError> {
        let (mut buf, mut lookup) = (Vec::new(), Vec::new());
        let tree = self.tree_of(commit)?;
        let entry = self
            .objects
            .find_tree_iter(&tree, &mut buf)
            .and_then(|tree| tree.lookup_entry(&self.objects, &mut lookup, path.split('/')))
            .map_err(|e| self.read_error(&format!("{path} in {commit}"), e))?;
        let Some(entry) = entry.filter(|e| e.mode.is_blob()) else {
            return Ok(None);
        };
        let blob = self
            .objects
            .find_blob(&entry.oid, &mut buf)
            .map_err(|e| self.read_error(&format!("{path} in {commit}"), e))?;
        Ok(Some(blob.data.to_vec()))
    }

    /// The blobs at the top of `commit`'s tree, as `(name, id)` (a commit of the record keeps
    /// its files there).
    pub(crate) fn top_files(
        &self,
        commit: ObjectId,
    ) -> Result<Vec<(String, ObjectId)>, RecordError> {
        let tree = self.tree_of(commit)?;
        let mut buf = Vec::new();
        let entries = self
            .objects
            .find_tree_iter(&tree, &mut buf)
            .map_err(|e| self.read_error(&format!("the tree of {commit}"), e))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| self.read_error(&format!("the tree of {commit}"), e))?;
            if entry.mode.is_blob() {
                out.push((
                    entry.filename.to_str_lossy().into_owned(),
                    entry.oid.to_owned(),
                ));
            }
        }
        Ok(out)
    }

    /// A blob's bytes.
    pub(crate) fn blob(&self, id: ObjectId) -> Result<Vec<u8>, RecordError> {
        let mut buf = Vec::new();
        let blob = self
            .objects
            .find_blob(&id, &mut buf)
            .map_err(|e| self.read_error(&format!("blob {id}"), e))?;
        Ok(blob.data.to_vec())
    }

    /// A commit's message, whole.
    pub(crate) fn commit_message(&self, id: ObjectId) -> Result<String, RecordError> {
        let mut buf = Vec::new();
        let commit = self.find_commit(id, &mut buf)?;
        Ok(commit.message.to_str_lossy().into_owned())
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

    /// A failed read of refs or objects, for the readers that name no single file.
    fn git(&self, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> RecordError {
        self.read_error("refs and objects", e)
    }

    /// A failed lookup of an object that must exist: [`RecordError::Missing`] when it was not
    /// found, else a read error.
    fn find_error(&self, what: &str, e: gix::error::Error) -> RecordError {
        if e.is_not_found() {
            return RecordError::Missing {
                path: self.path.clone(),
                what: what.to_owned(),
            };
        }
        self.read_error(what, e)
    }

    fn read_error(
        &self,
        what: &str,
        e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> RecordError {
        RecordError::Read {
            path: self.path.clone(),
            what: what.to_owned(),
            source: e.into(),
        }
    }
}

/// How long a listing of refs is made again while it fails (see [`Record::list`]): packing the
/// refs of a large record takes git about a second per 50,000 refs.
const LISTING_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// Objects made for one commit, not yet written: `(id, kind, encoded bytes)`.
#[derive(Default)]
struct Built {
    objects: Vec<(ObjectId, Kind, Vec<u8>)>,
}

impl Built {
    fn add(&mut self, kind: Kind, data: Vec<u8>) -> ObjectId {
        let id = gix::objs::compute_hash(HASH, kind, &data).expect("SHA-1 hashing cannot fail");
        self.objects.push((id, kind, data));
        id
    }

    fn add_object(&mut self, kind: Kind, object: &impl WriteTo) -> ObjectId {
        let mut data = Vec::new();
        object
            .write_to(&mut data)
            .expect("writing to memory cannot fail");
        self.add(kind, data)
    }
}

/// The record's object format when it is not SHA-1 (`extensions.objectFormat`), read from its
/// config without parsing all of it: the hashes anvil computes would not match.
fn object_format(path: &Path) -> Option<String> {
    let config = std::fs::read_to_string(path.join("config")).ok()?;
    config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        let value = value.trim().to_ascii_lowercase();
        (key.trim().eq_ignore_ascii_case("objectformat") && value != "sha1").then_some(value)
    })
}

fn open_error(
    path: &Path,
    reason: &str,
    e: impl std::error::Error + Send + Sync + 'static,
) -> RecordError {
    RecordError::Open {
        path: path.to_owned(),
        reason: reason.to_owned(),
        source: Some(Box::new(e)),
    }
}

/// Sets the modification time of the loose object at `path` to now; `false` when there is no
/// such file or its time cannot be set (then the object is written again).
fn freshen(path: &Path) -> bool {
    std::fs::File::open(path)
        .and_then(|file| file.set_modified(std::time::SystemTime::now()))
        .is_ok()
}

fn write_error(path: &Path, source: std::io::Error) -> RecordError {
    RecordError::Write {
        path: path.to_owned(),
        source,
    }
}

/// The compressor for loose objects: zlib's fastest level, as git's `core.compression=1`,
/// with an 8 KB window and small symbol buffers instead of the 32 KB and 64 KB defaults.
/// A phase's files are a few KB, so they compress to the same size, and a fresh process
/// zeroes and faults in a quarter less memory: a third less time for a commit's objects.
fn compressor() -> Deflate {
    let mut config = DeflateConfig::new(1);
    config.window_bits = 13;
    config.mem_level = 4;
    Deflate::new_with_config(config)
}

/// Compresses `input` into `out` (cleared first) as one zlib stream.
fn deflate(compressor: &mut Deflate, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    compressor.reset();
    out.clear();
    let mut rest = input;
    loop {
        let (read, written) = (compressor.total_in(), compressor.total_out());
        let filled = out.len();
        out.resize(filled + rest.len() + 64, 0);
        let status = compressor
            .compress(rest, &mut out[filled..], DeflateFlush::Finish)
            .map_err(|e| format!("cannot compress an object: {e:?}"))?;
        out.truncate(filled + (compressor.total_out() - written) as usize);
        rest = &rest[(compressor.total_in() - read) as usize..];
        if status == Status::StreamEnd {
            return Ok(());
        }
    }
}

/// Where object `id` is stored loose under `objects` (the record's `objects` folder): its
/// fan-out folder, named by the first two hex digits, then the other 38.
pub(crate) fn loose_path(objects: &Path, id: ObjectId) -> PathBuf {
    let hex = id.to_hex().to_string();
    let (fan, rest) = hex.split_at(2);
    objects.join(fan).join(rest)
}

/// Is `name` usable as one component of `refs/anvil/<debate>/<line>`?
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && !name.ends_with(['.', '/'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("@{")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

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

    /// The commits whose id starts with `hex` (at least 4 hex digits).
    pub(crate) fn commits_with_prefix(&self, hex: &str) -> Result<Vec<ObjectId>, RecordError> {
        let Ok(prefix) = gix::hash::Prefix::from_hex(hex) else {
            return Ok(Vec::new());
        };
        let mut candidates = std::collections::HashSet::new();
        self.objects
            .lookup_prefix(prefix, Some(&mut candidates))
            .map_err(|e| self.git(e))?;
        let mut buf = Vec::new();
        let mut out: Vec<ObjectId> = candidates
            .into_iter()
            .filter(|id| {
                gix::objs::Find::try_find(&self.objects, id, &mut buf)
                    .ok()
                    .flatten()
                    .is_some_and(|o| o.kind == Kind::Commit)
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// Commit times for line tips: from the commit-graph that maintenance writes when it has
    /// the commit (no object to inflate), else from the commit itself.
    pub fn commit_times(&self) -> CommitTimes<'_> {
        let graph =
            gix::commitgraph::Graph::from_info_dir(&self.path.join("objects/info"), HASH).ok();
        CommitTimes {
            record: self,
            graph,
            buf: Vec::new(),
        }
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

    /// Is `ancestor` `descendant` itself or one of its ancestors?
    pub(crate) fn is_ancestor(
        &self,
        ancestor: ObjectId,
        descendant: ObjectId,
    ) -> Result<bool, RecordError> {
        let mut stack = vec![descendant];
        let mut seen = std::collections::HashSet::new();
        let mut buf = Vec::new();
        while let Some(id) = stack.pop() {
            if id == ancestor {
                return Ok(true);
            }
            if !seen.insert(id) {
                continue;
            }
            stack.extend(self.find_commit(id, &mut buf)?.parents());
        }
        Ok(false)
    }
}

/// See [`Record::commit_times`].
pub struct CommitTimes<'r> {
    record: &'r Record,
    graph: Option<gix::commitgraph::Graph>,
    buf: Vec<u8>,
}

impl CommitTimes<'_> {
    /// Seconds since the epoch at which `id` was committed.
    pub fn of(&mut self, id: ObjectId) -> Result<i64, RecordError> {
        if let Some(commit) = self.graph.as_ref().and_then(|g| g.commit_by_id(id)) {
            return Ok(commit.committer_timestamp() as i64);
        }
        // A tip that is no commit anvil can read (a ref git wrote into the record) counts as
        // the oldest: it must not hide the debates around it.
        match self.record.find_commit(id, &mut self.buf) {
            Ok(commit) => Ok(commit.committer().map_or(0, |c| c.seconds())),
            Err(e) => match self.record.object_kind(id) {
                Ok(_) => Ok(0),
                Err(_) => Err(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_commit(files: Vec<(&str, &[u8])>, parent: Option<ObjectId>) -> NewCommit {
        NewCommit {
            author: "Advocate".into(),
            subject: "round 1 advocate: yes".into(),
            meta: Meta {
                debate: "20261122-q-0000".into(),
                line: "main".into(),
                phase: "advocate".into(),
                ..Meta::default()
            },
            files: files
                .into_iter()
                .map(|(p, b)| (p.to_owned(), b.to_vec()))
                .collect(),
            remove: Vec::new(),
            time: 1_795_000_000,
            base: Base::Tip(parent),
        }
    }

    /// A new record in a temporary folder (kept alive by the first element).
    fn empty_record() -> (tempfile::TempDir, PathBuf, Record) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("record");
        let record = Record::open_or_init(&path).unwrap();
        (dir, path, record)
    }

    /// Every loose object file under `objects/`, and anything else left there.
    fn loose_files(record: &Path) -> (usize, Vec<String>) {
        let (mut objects, mut other) = (0, Vec::new());
        for fan in std::fs::read_dir(record.join("objects")).unwrap() {
            let fan = fan.unwrap();
            let name = fan.file_name().into_string().unwrap();
            if name.len() != 2 {
                continue;
            }
            for file in std::fs::read_dir(fan.path()).unwrap() {
                let file = file.unwrap().file_name().into_string().unwrap();
                if file.len() == 38 && file.bytes().all(|b| b.is_ascii_hexdigit()) {
                    objects += 1;
                } else {
                    other.push(format!("{name}/{file}"));
                }
            }
        }
        (objects, other)
    }

    #[test]
    fn commits_are_read_back_and_leave_only_objects_even_without_fan_out_folders() {
        let (_dir, path, record) = empty_record();
        let first = record
            .commit(&new_commit(
                vec![
                    ("state.md", b"state 1"),
                    ("phases/001-advocate.response.md", b"yes"),
                ],
                None,
            ))
            .unwrap();
        // A record that git packed or wrote may lack fan-out folders: they are made as needed.
        for fan in std::fs::read_dir(path.join("objects")).unwrap() {
            let fan = fan.unwrap();
            if fan.file_name().len() == 2 && std::fs::read_dir(fan.path()).unwrap().count() == 0 {
                std::fs::remove_dir(fan.path()).unwrap();
            }
        }
        let second = record
            .commit(&new_commit(
                vec![
                    ("state.md", b"state 2"),
                    ("phases/002-critic.prompt.md", b"argue against"),
                ],
                Some(first),
            ))
            .unwrap();
        assert_eq!(record.tip("20261122-q-0000", "main").unwrap(), Some(second));
        for (path, bytes) in [
            ("state.md", &b"state 2"[..]),
            ("phases/001-advocate.response.md", b"yes"),
            ("phases/002-critic.prompt.md", b"argue against"),
        ] {
            assert_eq!(record.read(second, path).unwrap().as_deref(), Some(bytes));
        }
        assert_eq!(
            record.read(first, "phases/002-critic.prompt.md").unwrap(),
            None
        );
        // Commit 1: 2 blobs, 2 trees, the commit; commit 2: 2 blobs, 2 trees, the commit.
        let (objects, other) = loose_files(&path);
        assert_eq!(objects, 10);
        assert!(other.is_empty(), "left behind: {other:?}");
    }

    #[test]
    fn a_record_with_sha256_objects_is_refused() {
        let (_dir, path, _) = empty_record();
        let config = std::fs::read_to_string(path.join("config")).unwrap();
        std::fs::write(
            path.join("config"),
            format!("{config}[extensions]\n\tobjectFormat = sha256\n"),
        )
        .unwrap();
        let err = Record::open(&path).err().expect("refused");
        assert!(err.to_string().contains("sha256"), "{err}");
    }

    #[test]
    fn a_commit_on_a_stale_tip_is_refused_and_a_held_ref_lock_is_reported() {
        let (_dir, _, record) = empty_record();
        let first = record
            .commit(&new_commit(vec![("state.md", b"state 1")], None))
            .unwrap();
        let other = record
            .commit(&new_commit(
                vec![("001-advocate.response.md", b"yes")],
                Some(first),
            ))
            .unwrap();
        // This writer still believes the line stands at `first`: it must decide again.
        let stale = record
            .commit(&new_commit(
                vec![("002-critic.response.md", b"no")],
                Some(first),
            ))
            .unwrap_err();
        assert!(matches!(stale, RecordError::Moved { .. }), "{stale:?}");
        assert!(stale.is_retryable());
        assert_eq!(record.tip("20261122-q-0000", "main").unwrap(), Some(other));
        // A new line where one exists is a lost race too.
        let exists = record
            .commit(&new_commit(vec![("state.md", b"again")], None))
            .unwrap_err();
        assert!(matches!(exists, RecordError::Moved { .. }), "{exists:?}");

        let lock = record.ref_lock_path("20261122-q-0000", "main");
        std::fs::write(&lock, "").unwrap();
        let locked = record
            .commit(&new_commit(
                vec![("002-critic.response.md", b"no")],
                Some(other),
            ))
            .unwrap_err();
        assert!(
            matches!(&locked, RecordError::Locked { lock: l } if *l == lock),
            "{locked:?}"
        );
        assert!(locked.is_retryable());
        std::fs::remove_file(&lock).unwrap();
        let mine = record
            .commit(&new_commit(
                vec![("002-critic.response.md", b"no")],
                Some(other),
            ))
            .unwrap();
        assert_eq!(record.tip("20261122-q-0000", "main").unwrap(), Some(mine));
    }

    #[test]
    fn a_full_disk_or_a_refused_permission_is_not_retried_and_names_the_file() {
        let err = write_error(
            Path::new("/r/objects/ab/cd"),
            std::io::Error::new(std::io::ErrorKind::StorageFull, "no space"),
        );
        assert!(!err.is_retryable());
        let text = err.to_string();
        assert!(text.contains("/r/objects/ab/cd"), "{text}");
        assert!(text.contains("disk is full"), "{text}");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn an_object_the_record_has_is_not_written_again_but_made_young() {
        let (_dir, path, record) = empty_record();
        let first = record
            .commit(&new_commit(vec![("state.md", b"same text")], None))
            .unwrap();
        let blob = gix::objs::compute_hash(HASH, Kind::Blob, b"same text").unwrap();
        let file = loose_path(&path.join("objects"), blob);
        // As old as an unreachable leftover that `git gc` would prune.
        let weeks_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(21 * 86_400);
        std::fs::File::open(&file)
            .unwrap()
            .set_modified(weeks_ago)
            .unwrap();
        let written = std::fs::metadata(&file).unwrap();
        record
            .commit(&new_commit(vec![("copy.md", b"same text")], Some(first)))
            .unwrap();
        // Rewriting would have replaced the file (a new inode) through a temporary file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            assert_eq!(std::fs::metadata(&file).unwrap().ino(), written.ino());
        }
        let young = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
        assert!(std::fs::metadata(&file).unwrap().modified().unwrap() > young);
        // One blob, two trees, two commits.
        assert_eq!(loose_files(&path), (5, Vec::new()));
    }

    #[test]
    fn a_fork_starts_a_new_line_from_another_lines_commit_and_never_moves_an_existing_one() {
        let (_dir, _, record) = empty_record();
        let files = vec![
            ("state.md", &b"state 1"[..]),
            ("phases/002-critic.prompt.md", b"old prompt"),
        ];
        let main = record.commit(&new_commit(files, None)).unwrap();
        let fork = |line: &str, prompt: &[u8]| {
            let mut new = new_commit(vec![("phases/002-advocate.prompt.md", prompt)], None);
            new.meta.line = line.into();
            new.remove = vec!["phases/002-critic.prompt.md".into()];
            new.base = Base::Fork(main);
            record.commit(&new)
        };
        let cost = fork("cost", b"new").unwrap();
        assert_eq!(record.tip("20261122-q-0000", "cost").unwrap(), Some(cost));
        assert_eq!(record.tip("20261122-q-0000", "main").unwrap(), Some(main));
        assert_eq!(
            record.read(cost, "state.md").unwrap().as_deref(),
            Some(&b"state 1"[..])
        );
        assert_eq!(
            record.read(cost, "phases/002-critic.prompt.md").unwrap(),
            None
        );
        let again = fork("cost", b"other").expect_err("the line exists");
        assert!(matches!(again, RecordError::Exists { .. }), "{again:?}");
        assert!(again.to_string().contains("exists already"), "{again}");
        assert_eq!(record.tip("20261122-q-0000", "cost").unwrap(), Some(cost));
    }
}
