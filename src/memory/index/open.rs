//! Opening the index: the file on disk (built anew when missing, damaged or of another
//! version) or, where it cannot be written, a copy in memory; and its schema.

use std::path::Path;

use anvil_core::home::Home;
use anvil_core::record::store::Record;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::{BUSY_WAIT, Index, SearchError, VERSION};

impl Index {
    /// Opens the index of `home`'s record and brings it up to date with the record: built
    /// anew when missing, damaged or of another version; else only the commits it has not
    /// seen are added (and the phases of deleted lines taken out). Where the index on disk
    /// cannot be written, a copy in memory is caught up and searched instead
    /// ([`Index::copied_because`] says why).
    pub fn open(home: &Home, record: &Record) -> Result<Index, SearchError> {
        let path = home.search_index();
        match Index::open_on_disk(&path, record, &home.record_dir()) {
            Ok(index) => Ok(index),
            Err(e @ (SearchError::History(_) | SearchError::Record(_) | SearchError::Query(_))) => {
                Err(e)
            }
            // Busy for longer than a writer waits: the index is sound, and will be written.
            Err(e) if e.is_busy() => Err(e),
            Err(e) => Index::in_memory(&path, record, &home.record_dir(), &e),
        }
    }

    /// Brings the index on disk up to date with the record, if it can be written (what
    /// `anvil gc` does in passing); never a copy in memory.
    pub fn update(home: &Home, record: &Record) -> Result<(), SearchError> {
        Index::open_on_disk(&home.search_index(), record, &home.record_dir()).map(drop)
    }

    /// Why this index is a copy in memory of the one on disk (which could not be written),
    /// if it is one.
    pub fn copied_because(&self) -> Option<&str> {
        self.in_memory.as_deref()
    }

    fn open_on_disk(path: &Path, record: &Record, record_dir: &Path) -> Result<Index, SearchError> {
        let mut index = Index::open_file(path)?;
        match index.version() {
            Ok(Some(VERSION)) => {}
            // New (or being made by another process, which this one waits for).
            Ok(None) => index.create()?,
            // Of another version, or damaged: built again from the record, whose cache it is.
            Ok(Some(_)) => index = Index::rebuilt(index)?,
            Err(e) if e.is_damaged() => index = Index::rebuilt(index)?,
            // Anything else (busy, unreadable, no room) says nothing against the index.
            Err(e) => return Err(e),
        }
        // A cache in WAL mode: a crash or power cut may lose the last catch-ups (made again
        // by the next search), never the file's consistency; no sync on every commit.
        index
            .db
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(index.err())?;
        match index.catch_up(record, record_dir) {
            Ok(()) => {}
            Err(e) if e.is_damaged() => {
                index = Index::rebuilt(index)?;
                index.catch_up(record, record_dir)?;
            }
            Err(e) => return Err(e),
        }
        Ok(index)
    }

    /// `index`'s file deleted and made again, empty.
    fn rebuilt(index: Index) -> Result<Index, SearchError> {
        let path = index.path.clone();
        drop(index);
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let mut index = Index::open_file(&path)?;
        index.create()?;
        Ok(index)
    }

    /// An index in memory: what the one on disk holds (read without writing a byte there),
    /// caught up with the record; a scan of the whole record when there is none to read.
    fn in_memory(
        path: &Path,
        record: &Record,
        record_dir: &Path,
        why: &SearchError,
    ) -> Result<Index, SearchError> {
        let err = SearchError::index(path);
        let empty = || -> Result<Index, SearchError> {
            let mut index = Index {
                db: Connection::open_in_memory().map_err(err)?,
                path: path.to_owned(),
                in_memory: Some(why.to_string()),
            };
            index.create()?;
            Ok(index)
        };
        let mut index = empty()?;
        if let Some(disk) = read_only(path) {
            let copied = rusqlite::backup::Backup::new(&disk, &mut index.db)
                .and_then(|b| b.run_to_completion(1024, std::time::Duration::ZERO, None));
            if copied.is_err() || !matches!(index.version(), Ok(Some(VERSION))) {
                index = empty()?;
            }
        }
        match index.catch_up(record, record_dir) {
            Ok(()) => Ok(index),
            // A copy taken while the file was being written: the record is scanned instead.
            Err(e) if e.is_damaged() => {
                let mut index = empty()?;
                index.catch_up(record, record_dir)?;
                Ok(index)
            }
            Err(e) => Err(e),
        }
    }

    fn open_file(path: &Path) -> Result<Index, SearchError> {
        let err = SearchError::index(path);
        let db = Connection::open(path).map_err(err)?;
        // Other processes use it too (a search, the MCP server, the web room, a catch-up in
        // the background): a writer waits for the one before it rather than failing.
        db.busy_timeout(BUSY_WAIT).map_err(err)?;
        Ok(Index {
            db,
            path: path.to_owned(),
            in_memory: None,
        })
    }

    pub(super) fn err(&self) -> impl Fn(rusqlite::Error) -> SearchError + '_ {
        SearchError::index(&self.path)
    }

    /// The schema's version; `None` for a file with no schema yet.
    fn version(&self) -> Result<Option<i64>, SearchError> {
        let tables: i64 = self
            .db
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 'meta'",
                [],
                |r| r.get(0),
            )
            .map_err(self.err())?;
        if tables == 0 {
            return Ok(None);
        }
        self.db
            .query_row("SELECT version FROM meta", [], |r| r.get(0))
            .optional()
            .map_err(self.err())
    }

    /// Makes the schema, in one transaction that another process making it at the same
    /// time waits for (and then finds done).
    fn create(&mut self) -> Result<(), SearchError> {
        let err = SearchError::index(&self.path);
        self.db
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(&err)?;
        let tx = self
            .db
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (version INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS tips (debate TEXT, line TEXT, tip TEXT, PRIMARY KEY (debate, line));
             CREATE TABLE IF NOT EXISTS seen (commit_id TEXT PRIMARY KEY);
             CREATE TABLE IF NOT EXISTS dirs (debate TEXT PRIMARY KEY, stamp TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS stamps (name TEXT PRIMARY KEY, stamp TEXT NOT NULL);
             CREATE VIRTUAL TABLE IF NOT EXISTS phases USING fts5(
                 text, debate UNINDEXED, line UNINDEXED, phase UNINDEXED,
                 round UNINDEXED, commit_id UNINDEXED, time UNINDEXED,
                 tokenize = 'porter unicode61'
             );",
        )
        .map_err(&err)?;
        tx.execute(
            "INSERT INTO meta SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM meta)",
            [VERSION],
        )
        .map_err(&err)?;
        tx.commit().map_err(&err)
    }
}

/// The index file opened for reading only, if it holds an index of this version: as SQLite
/// reads a database in WAL mode where it cannot write (`mode=ro`), else taken as it is on disk
/// (`immutable=1`: no lock and no `-shm` file are needed).
fn read_only(path: &Path) -> Option<Connection> {
    use rusqlite::OpenFlags;
    if !path.is_file() {
        return None;
    }
    let uri = file_uri(path);
    ["mode=ro", "immutable=1"].into_iter().find_map(|how| {
        let db = Connection::open_with_flags(
            format!("{uri}?{how}"),
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .ok()?;
        let version: i64 = db
            .query_row("SELECT version FROM meta", [], |r| r.get(0))
            .ok()?;
        (version == VERSION).then_some(db)
    })
}

/// `path` as an SQLite `file:` URI: every byte but unreserved ones and `/` percent-encoded.
fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}
