//! The record: a bare git repository under `.anvil/record` holding every line's history, one
//! commit per phase transition, written with gix (no `git` binary needed).
//!
//! Refs live under `refs/anvil/<debate>/<line>` so that pushing them to a team's code remote
//! adds no branch. A commit's tree holds `state.md` and, per phase, the prompt that was
//! injected and the response (`NNN-role.{prompt,response}.md`), so storage grows with
//! the debate, not with its square.
//! Ref updates are one compare-and-swap each: a commit is refused if the line moved since its
//! writer read it, and the writer decides again (see [`crate::line::transaction`], the only writer).
//!
//! The store is split by what it does: [`objects`] reads and builds commits, trees and blobs,
//! [`loose`] writes a commit's new objects as loose files (the hook's path), and [`refs`] reads
//! and moves the refs. This file holds what they share: the record's handle, its errors and
//! the shape of a new commit.

mod loose;
mod objects;
mod refs;

pub use objects::CommitTimes;

use std::path::{Path, PathBuf};

use gix::ObjectId;

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

    /// Writes a commit's objects ([`Record::stage`]) and moves its line to it
    /// ([`Record::publish`]); the line transaction does the two apart, to note the move in the
    /// index of recent debates between them.
    #[cfg(test)]
    pub fn commit(&self, new: &NewCommit) -> Result<ObjectId, RecordError> {
        let staged = self.stage(new)?;
        self.publish(&staged)
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

fn write_error(path: &Path, source: std::io::Error) -> RecordError {
    RecordError::Write {
        path: path.to_owned(),
        source,
    }
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

#[cfg(test)]
mod tests {
    use super::loose::loose_path;
    use super::*;
    use gix::objs::Kind;

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
