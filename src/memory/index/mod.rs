//! Full-text search over every recorded phase: an SQLite FTS5 index kept beside the record
//! (`.anvil/search.sqlite`), never pushed, always rebuildable from the record, which stays the
//! source of truth. Each search first catches the index up with the commits it has not seen
//! (a line's tip it has not indexed to); a missing or unreadable index is built again. The Stop
//! hook never touches it: it lives in the command line's binary only.
//!
//! Words are matched by their stems (SQLite's `porter` tokenizer over `unicode61`), so
//! "migrating" finds "migration"; `"a phrase"` in quotes matches the words in order. The query
//! is read by [`terms`] (one pass), never handed to FTS5 as syntax, and it is bounded
//! ([`MAX_QUERY_BYTES`], [`MAX_QUERY_WORDS`]): FTS5 parses a query of N terms in time
//! quadratic in N (each term is added to a list copied whole), so an unbounded query could hold
//! a search, and every other reader of the index, for minutes.
//!
//! A line deleted from the record (or moved back to an earlier commit) takes out of the index
//! the phases no line reaches any more. Where the index cannot be written (a read-only `.anvil`,
//! a full disk) a search copies it into memory, catches the copy up with the record, and
//! answers from that.

use std::path::{Path, PathBuf};

use anvil_core::home::Home;
use anvil_core::record::stamp::{self, Stamp};
use anvil_core::record::store::Record;
use anvil_core::review::history;
use gix::ObjectId;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// The index's file, beside the record.
pub fn path(home: &Home) -> PathBuf {
    home.search_index()
}

/// Bumped when the schema changes: an index of another version is built again.
const VERSION: i64 = 3;

/// How long a writer waits for another process's catch-up before it gives up.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Why a search could not be made.
#[derive(Debug)]
pub enum SearchError {
    /// The index file could not be used.
    Index {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// The query cannot be searched for.
    Query(QueryError),
    History(history::HistoryError),
    Record(anvil_core::record::store::RecordError),
}

/// What is wrong with a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// Nothing in it is a word (empty, blank, or punctuation such as `"` alone).
    NoWords,
    TooLong {
        bytes: usize,
    },
    TooManyWords {
        words: usize,
    },
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::NoWords => write!(f, "the query holds no word to search for"),
            QueryError::TooLong { bytes } => write!(
                f,
                "the query is {bytes} bytes long; a search takes at most {MAX_QUERY_BYTES}"
            ),
            QueryError::TooManyWords { words } => write!(
                f,
                "the query holds {words} words; a search takes at most {MAX_QUERY_WORDS}"
            ),
        }
    }
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::Index { path, source } => {
                write!(f, "the search index {}: {source}", path.display())
            }
            SearchError::Query(e) => e.fmt(f),
            SearchError::History(e) => e.fmt(f),
            SearchError::Record(e) => e.fmt(f),
        }
    }
}

impl SearchError {
    fn code(&self) -> Option<rusqlite::ErrorCode> {
        match self {
            SearchError::Index { source, .. } => source.sqlite_error_code(),
            _ => None,
        }
    }

    /// Another process held the index for longer than a writer waits.
    fn is_busy(&self) -> bool {
        matches!(
            self.code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }

    /// The index file is damaged (or not an SQLite database at all).
    fn is_damaged(&self) -> bool {
        matches!(
            self.code(),
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        )
    }
}

impl From<history::HistoryError> for SearchError {
    fn from(e: history::HistoryError) -> SearchError {
        SearchError::History(e)
    }
}

impl From<anvil_core::record::store::RecordError> for SearchError {
    fn from(e: anvil_core::record::store::RecordError) -> SearchError {
        SearchError::Record(e)
    }
}

impl From<SearchError> for crate::error::CliError {
    fn from(e: SearchError) -> crate::error::CliError {
        use crate::error::CliError;
        use rusqlite::ErrorCode;
        let hint = match &e {
            SearchError::Query(QueryError::NoWords) => {
                return CliError::new(e.to_string())
                    .hint("give words to look for; punctuation alone matches nothing")
                    .usage();
            }
            SearchError::Query(_) => {
                return CliError::new(e.to_string())
                    .hint("search for the few words that matter; put a phrase in quotes")
                    .usage();
            }
            SearchError::History(_) | SearchError::Record(_) => None,
            _ if e.is_busy() => Some(
                "another anvil (a search, the MCP server, the web room, `anvil gc`) is bringing \
                 it up to date; search again in a moment",
            ),
            // Only a damaged index is worth deleting: it is a cache of the record.
            _ if e.is_damaged() => Some(
                "it is damaged; it is only a cache of the record: delete it, and the next \
                 search builds it again",
            ),
            _ if e.code() == Some(ErrorCode::DiskFull) => {
                Some("the disk is full; the record itself is untouched")
            }
            _ => None,
        };
        let text = e.to_string();
        let error = match e {
            SearchError::History(e) => return e.into(),
            SearchError::Record(e) => return e.into(),
            _ => CliError::new(text),
        };
        match hint {
            Some(hint) => error.hint(hint),
            None => error,
        }
    }
}

/// One recorded phase that matched.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hit {
    pub debate: String,
    pub line: String,
    pub phase: String,
    pub round: u32,
    pub commit: String,
    /// Seconds since the epoch.
    pub time: i64,
    /// The matched words between `open` and `close` markers, with `…` where text was cut
    /// (each output marks them its own way).
    #[serde(skip_serializing)]
    pub snippet: String,
}

impl Hit {
    /// `round 2 critic`, or the bookkeeping phase's name (`start`, `branch`).
    pub fn place(&self) -> String {
        if self.round > 0 {
            format!("round {} {}", self.round, self.phase)
        } else {
            self.phase.clone()
        }
    }
}

/// What to look for, and where.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub text: String,
    pub debate: Option<String>,
    pub line: Option<String>,
    pub phase: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub limit: usize,
}

/// The longest query a search takes, in bytes: a few lines of text.
pub const MAX_QUERY_BYTES: usize = 4096;
/// The most words a query may hold.
pub const MAX_QUERY_WORDS: usize = 64;

/// The markers around matched words in a snippet.
pub const OPEN: &str = "\u{1}";
pub const CLOSE: &str = "\u{2}";

/// The index, opened (built or caught up first).
pub struct Index {
    db: Connection,
    path: PathBuf,
    /// Why the index on disk could not be written, when this is a copy made in memory.
    in_memory: Option<String>,
}

impl Index {
    /// Opens the index of `home`'s record and brings it up to date with the record: built
    /// anew when missing, damaged or of another version; else only the commits it has not
    /// seen are added (and the phases of deleted lines taken out). Where the index on disk
    /// cannot be written, a copy in memory is caught up and searched instead
    /// ([`Index::copied_because`] says why).
    pub fn open(home: &Home, record: &Record) -> Result<Index, SearchError> {
        let path = path(home);
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
        Index::open_on_disk(&path(home), record, &home.record_dir()).map(drop)
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
        let err = |source| SearchError::Index {
            path: path.to_owned(),
            source,
        };
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
        let err = |source| SearchError::Index {
            path: path.to_owned(),
            source,
        };
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

    fn err(&self) -> impl Fn(rusqlite::Error) -> SearchError + '_ {
        |source| SearchError::Index {
            path: self.path.clone(),
            source,
        }
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
        let path = self.path.clone();
        let err = move |source| SearchError::Index {
            path: path.clone(),
            source,
        };
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

    /// Adds what the record holds that the index has not seen: for each line whose tip moved
    /// since, its commits back to one already indexed. A commit a branch inherited is indexed
    /// once, under the line that recorded it.
    ///
    /// Which lines may have moved is told by the folders of `refs/anvil/`: a ref is written
    /// by renaming its lock file in its debate's folder (anvil and git alike), which changes
    /// the folder's modification time, and a new debate is a new folder. Only debates whose
    /// folder changed since the last catch-up are read; a changed `packed-refs` (a `git
    /// pack-refs`, `anvil gc`) makes the index read every line once. Before any of that, the
    /// record's stamp of its refs ([`Stamp::all`]) tells whether anything can have moved at
    /// all. What it cannot see (a ref `git` moves in an existing debate's folder, without a
    /// fetch: `git update-ref`, a push into this record) is found at the next change that it
    /// does see (any phase anvil records, a fetch, `anvil gc`).
    fn catch_up(&mut self, record: &Record, record_dir: &Path) -> Result<(), SearchError> {
        // Stamped before the refs are read: a ref that moves in between is read again next time.
        let now = Stamp::of(record_dir);
        // The usual case, nothing moved: one comparison, no folder listed, no table read.
        let quick_then: Option<String> = self
            .db
            .query_row("SELECT stamp FROM stamps WHERE name = 'quick'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(self.err())?;
        if quick_then.as_deref() == Some(now.all.as_str()) {
            return Ok(());
        }
        let dirs_now = stamp::debate_folders(record_dir);
        let path = self.path.clone();
        let err = move |source| SearchError::Index {
            path: path.clone(),
            source,
        };
        // One writer at a time: a process that catches up at the same moment waits, then
        // finds the work done (the tables are read again inside the transaction).
        let tx = self
            .db
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        let changes_before = tx.total_changes();
        let then = Then::read(&tx).map_err(&err)?;
        let (examined, lines) = lines_to_read(record, &then, dirs_now.as_deref(), &now.packed)?;
        let mut shrunk = lines_gone(&then.tips, examined.as_ref(), &lines);
        for (debate, line, tip) in &lines {
            let before = then.tips.get(&(debate.clone(), line.clone()));
            if index_line(&tx, record, (debate, line, *tip), before, &err)? {
                shrunk.insert(debate.clone());
            }
        }
        for debate in &shrunk {
            let now: Vec<(&str, ObjectId)> = lines
                .iter()
                .filter(|(d, _, _)| d == debate)
                .map(|(_, l, t)| (l.as_str(), *t))
                .collect();
            forget_unreachable(&tx, record, debate, &now).map_err(&err)?;
        }
        save_stamps(&tx, &then, dirs_now.as_deref(), &now).map_err(&err)?;
        if tx.total_changes() == changes_before {
            // Nothing new: the transaction ends without writing anything.
            return Ok(());
        }
        tx.commit().map_err(&err)
    }

    /// The best matches for `query`, most relevant first: phases with every word; when none
    /// has them all, phases with any of them (ranked, so those with more and rarer words
    /// come first). A query no search can take ([`terms`]) is refused before the index is
    /// asked anything.
    pub fn search(&self, query: &Query) -> Result<Vec<Hit>, SearchError> {
        let terms = terms(&query.text).map_err(SearchError::Query)?;
        if query.limit == 0 {
            return Ok(Vec::new());
        }
        let hits = self.run(query, &terms.join(" "))?;
        if !hits.is_empty() || terms.len() < 2 {
            return Ok(hits);
        }
        self.run(query, &terms.join(" OR "))
    }

    fn run(&self, query: &Query, matching: &str) -> Result<Vec<Hit>, SearchError> {
        let mut sql = format!(
            "SELECT debate, line, phase, round, commit_id, time,
                    snippet(phases, 0, '{OPEN}', '{CLOSE}', '…', 16)
             FROM phases WHERE phases MATCH ?1"
        );
        let mut args: Vec<rusqlite::types::Value> = vec![matching.to_owned().into()];
        let mut filter = |column: &str, op: &str, value: rusqlite::types::Value| {
            args.push(value);
            sql.push_str(&format!(" AND {column} {op} ?{}", args.len()));
        };
        if let Some(d) = &query.debate {
            filter("debate", "=", d.clone().into());
        }
        if let Some(l) = &query.line {
            filter("line", "=", l.clone().into());
        }
        if let Some(p) = &query.phase {
            filter("phase", "=", p.clone().into());
        }
        if let Some(s) = query.since {
            filter("time", ">=", s.into());
        }
        if let Some(u) = query.until {
            filter("time", "<=", u.into());
        }
        args.push(i64::try_from(query.limit).unwrap_or(i64::MAX).into());
        sql.push_str(&format!(" ORDER BY rank LIMIT ?{}", args.len()));
        let mut stmt = self.db.prepare(&sql).map_err(self.err())?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), |r| {
                Ok(Hit {
                    debate: r.get(0)?,
                    line: r.get(1)?,
                    phase: r.get(2)?,
                    round: r.get(3)?,
                    commit: r.get(4)?,
                    time: r.get(5)?,
                    snippet: r.get(6)?,
                })
            })
            .map_err(self.err())?;
        rows.collect::<Result<_, _>>().map_err(self.err())
    }
}

/// What the index knew at its last catch-up: the stamp of `packed-refs`, each debate folder's
/// stamp, and each line's tip.
struct Then {
    packed: Option<String>,
    dirs: std::collections::HashMap<String, String>,
    tips: std::collections::HashMap<(String, String), String>,
}

impl Then {
    fn read(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<Then> {
        let packed = tx
            .query_row("SELECT stamp FROM stamps WHERE name = 'packed'", [], |r| {
                r.get(0)
            })
            .optional()?;
        let dirs = tx
            .prepare("SELECT debate, stamp FROM dirs")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let tips = tx
            .prepare("SELECT debate, line, tip FROM tips")?
            .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        Ok(Then { packed, dirs, tips })
    }
}

/// The debates whose lines are read (`None`: every debate), and the lines they have now. Only
/// debates whose folder changed, appeared or went away are read, unless `packed-refs` changed
/// or the folders could not be listed.
#[allow(clippy::type_complexity)]
fn lines_to_read(
    record: &Record,
    then: &Then,
    dirs_now: Option<&[(String, String)]>,
    packed_now: &str,
) -> Result<
    (
        Option<std::collections::HashSet<String>>,
        Vec<(String, String, ObjectId)>,
    ),
    SearchError,
> {
    let Some(dirs) = dirs_now.filter(|_| then.packed.as_deref() == Some(packed_now)) else {
        return Ok((None, record.lines()?));
    };
    let mut examined = std::collections::HashSet::new();
    for (debate, stamp) in dirs {
        if !debate.is_empty() && then.dirs.get(debate) != Some(stamp) {
            examined.insert(debate.clone());
        }
    }
    // A debate whose folder went away: its lines were deleted (or packed, which a changed
    // `packed-refs` would have said).
    let now: std::collections::HashSet<&String> = dirs.iter().map(|(d, _)| d).collect();
    examined.extend(then.dirs.keys().filter(|d| !now.contains(d)).cloned());
    let mut lines = Vec::new();
    for debate in &examined {
        for (line, tip) in record.lines_of_debate(debate)? {
            lines.push((debate.clone(), line, tip));
        }
    }
    Ok((Some(examined), lines))
}

/// The debates read whose lines the index knows and the refs no longer have (a line deleted):
/// they lost commits.
fn lines_gone(
    known: &std::collections::HashMap<(String, String), String>,
    examined: Option<&std::collections::HashSet<String>>,
    lines: &[(String, String, ObjectId)],
) -> std::collections::BTreeSet<String> {
    let current: std::collections::HashSet<(&str, &str)> = lines
        .iter()
        .map(|(d, l, _)| (d.as_str(), l.as_str()))
        .collect();
    known
        .keys()
        .filter(|(debate, line)| {
            examined.is_none_or(|e| e.contains(debate))
                && !current.contains(&(debate.as_str(), line.as_str()))
        })
        .map(|(debate, _)| debate.clone())
        .collect()
}

/// Indexes the commits of one line down to the first one the index has seen, and notes its
/// tip. True when the line lost commits: it moved to where its old tip is not.
fn index_line(
    tx: &rusqlite::Transaction<'_>,
    record: &Record,
    (debate, line, tip): (&str, &str, ObjectId),
    before: Option<&String>,
    err: &impl Fn(rusqlite::Error) -> SearchError,
) -> Result<bool, SearchError> {
    if before == Some(&tip.to_string()) {
        return Ok(false);
    }
    // A line anvil cannot read (see `anvil doctor`) is left out, not fatal.
    let Ok(entries) = history::chain(record, tip) else {
        return Ok(false);
    };
    let lost = before
        .and_then(|b| b.parse::<ObjectId>().ok())
        .is_some_and(|before| !entries.iter().any(|e| e.commit == before));
    for entry in entries.iter().rev() {
        let id = entry.commit.to_string();
        let seen: Option<i64> = tx
            .query_row("SELECT 1 FROM seen WHERE commit_id = ?1", [&id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(err)?;
        if seen.is_some() {
            break;
        }
        tx.execute("INSERT INTO seen VALUES (?1)", [&id])
            .map_err(err)?;
        let text = match entry.role {
            Some(_) => history::response(record, entry)?.unwrap_or_default(),
            // Bookkeeping commits: the question, steering and answers they carry.
            None => entry.describe(),
        };
        // The line that recorded it; a commit written without anvil's trailers belongs to
        // the line it was found on.
        let recorded_on = if entry.meta.line.is_empty() {
            line
        } else {
            &entry.meta.line
        };
        tx.execute(
            "INSERT INTO phases (text, debate, line, phase, round, commit_id, time)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                text,
                debate,
                recorded_on,
                entry.meta.phase,
                entry.meta.round,
                id,
                entry.time
            ],
        )
        .map_err(err)?;
    }
    tx.execute(
        "INSERT OR REPLACE INTO tips VALUES (?1, ?2, ?3)",
        params![debate, line, tip.to_string()],
    )
    .map_err(err)?;
    Ok(lost)
}

/// Notes the stamps the next catch-up compares: each debate folder's, `packed-refs`', and the
/// quick one, unless it was taken too close to a change (see [`Stamp::settled`]); then the
/// next search looks at the folders again.
fn save_stamps(
    tx: &rusqlite::Transaction<'_>,
    then: &Then,
    dirs_now: Option<&[(String, String)]>,
    now: &Stamp,
) -> rusqlite::Result<()> {
    // Folders gone since (deleted, or packed away): their debates were read.
    if let Some(dirs) = dirs_now {
        let present: std::collections::HashSet<&String> = dirs.iter().map(|(d, _)| d).collect();
        for debate in then.dirs.keys().filter(|d| !present.contains(d)) {
            tx.execute("DELETE FROM dirs WHERE debate = ?1", [debate])?;
        }
    }
    for (debate, stamp) in dirs_now.into_iter().flatten() {
        if then.dirs.get(debate) != Some(stamp) {
            tx.execute(
                "INSERT OR REPLACE INTO dirs VALUES (?1, ?2)",
                params![debate, stamp],
            )?;
        }
    }
    if then.packed.as_deref() != Some(now.packed.as_str()) {
        tx.execute(
            "INSERT OR REPLACE INTO stamps VALUES ('packed', ?1)",
            [&now.packed],
        )?;
    }
    if now.settled && dirs_now.is_some() {
        tx.execute(
            "INSERT OR REPLACE INTO stamps VALUES ('quick', ?1)",
            [&now.all],
        )?;
    } else {
        tx.execute("DELETE FROM stamps WHERE name = 'quick'", [])?;
    }
    Ok(())
}

/// Takes out of the index the phases of `debate` that none of its lines (`lines`: each with
/// its tip) reaches any more, and the lines that are gone; a phase still reached, but noted
/// under a line that is gone (the line a branch was made from), is noted under a line that
/// reaches it. A debate with a line that cannot be read is left as it is.
fn forget_unreachable(
    tx: &rusqlite::Transaction<'_>,
    record: &Record,
    debate: &str,
    lines: &[(&str, ObjectId)],
) -> rusqlite::Result<()> {
    let mut reached: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for (line, tip) in lines {
        let Ok(entries) = history::chain(record, *tip) else {
            return Ok(());
        };
        for entry in entries {
            reached.entry(entry.commit.to_string()).or_insert(line);
        }
    }
    let indexed: Vec<(i64, String, String)> = {
        let mut stmt = tx.prepare("SELECT rowid, commit_id, line FROM phases WHERE debate = ?1")?;
        let rows = stmt.query_map([debate], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (rowid, commit, line) in indexed {
        match reached.get(&commit) {
            None => {
                tx.execute("DELETE FROM phases WHERE rowid = ?1", [rowid])?;
                tx.execute("DELETE FROM seen WHERE commit_id = ?1", [&commit])?;
            }
            Some(by) if !lines.iter().any(|(l, _)| *l == line) => {
                tx.execute(
                    "UPDATE phases SET line = ?1 WHERE rowid = ?2",
                    params![by, rowid],
                )?;
            }
            Some(_) => {}
        }
    }
    let gone: Vec<String> = {
        let mut stmt = tx.prepare("SELECT line FROM tips WHERE debate = ?1")?;
        let rows = stmt.query_map([debate], |r| r.get(0))?;
        rows.collect::<Result<Vec<String>, _>>()?
            .into_iter()
            .filter(|line| !lines.iter().any(|(l, _)| l == line))
            .collect()
    };
    for line in gone {
        tx.execute(
            "DELETE FROM tips WHERE debate = ?1 AND line = ?2",
            params![debate, line],
        )?;
    }
    Ok(())
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

/// An earlier conclusion related to a question: the newest synthesis of a debate whose
/// question or synthesis holds enough of the question's significant words.
#[derive(Debug, Clone)]
pub struct Related {
    pub debate: String,
    pub line: String,
    pub commit: String,
    pub time: i64,
    /// How many of the question's significant words it holds, of how many.
    pub matched: usize,
    pub of: usize,
}

/// Words too common to relate two questions.
const STOP_WORDS: &[&str] = &[
    "about", "after", "all", "also", "and", "any", "are", "because", "been", "before", "being",
    "best", "better", "between", "both", "but", "can", "could", "did", "does", "doing", "done",
    "each", "for", "from", "get", "had", "has", "have", "how", "into", "its", "just", "keep",
    "more", "most", "much", "need", "not", "now", "our", "ours", "over", "same", "should", "some",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "too", "use", "using", "very", "was", "way", "were", "what", "when", "where", "which", "while",
    "who", "why", "will", "with", "would", "yes", "you", "your",
];

/// The words of `text` that can relate it to another question: three letters or more, not a
/// common word, each once.
pub fn significant_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        if word.chars().count() >= 3 && !STOP_WORDS.contains(&word.as_str()) && !out.contains(&word)
        {
            out.push(word);
        }
    }
    out
}

impl Index {
    /// Earlier conclusions related to `question`, best first, at most `limit`: debates whose
    /// question (their `start`) or synthesis holds at least half of the question's significant
    /// words, and never fewer than two of them (all of them when it has one or two). Debates
    /// without a synthesis are left out, and so are those `skip` names.
    pub fn related(
        &self,
        question: &str,
        limit: usize,
        skip: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<Related>, SearchError> {
        let words = significant_words(question);
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let need = if words.len() <= 2 {
            words.len()
        } else {
            words.len().div_ceil(2).max(2)
        };
        let any = words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR ");
        // Candidates: questions and syntheses holding any of the words, best first.
        let mut stmt = self
            .db
            .prepare(
                "SELECT rowid, debate FROM phases WHERE phases MATCH ?1
                 AND phase IN ('start', 'synthesizer') ORDER BY rank LIMIT 400",
            )
            .map_err(self.err())?;
        let candidates: Vec<(i64, String)> = stmt
            .query_map([&any], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.err())?
            .collect::<Result<_, _>>()
            .map_err(self.err())?;
        let mut holds = self
            .db
            .prepare("SELECT 1 FROM phases WHERE phases MATCH ?1 AND rowid = ?2")
            .map_err(self.err())?;
        // For each debate, in the order of its best candidate: which words it holds.
        let mut debates: Vec<(String, Vec<bool>)> = Vec::new();
        for (rowid, debate) in candidates {
            if skip(&debate) {
                continue;
            }
            let at = match debates.iter().position(|(d, _)| *d == debate) {
                Some(at) => at,
                None => {
                    debates.push((debate, vec![false; words.len()]));
                    debates.len() - 1
                }
            };
            for (n, word) in words.iter().enumerate() {
                if debates[at].1[n] {
                    continue;
                }
                let found = holds
                    .exists(params![format!("\"{word}\""), rowid])
                    .map_err(self.err())?;
                debates[at].1[n] = found;
            }
        }
        let mut related = Vec::new();
        let mut newest = self
            .db
            .prepare(
                "SELECT line, commit_id, time FROM phases WHERE debate = ?1
                 AND phase = 'synthesizer' ORDER BY time DESC LIMIT 1",
            )
            .map_err(self.err())?;
        let mut ranked: Vec<(usize, usize, String)> = debates
            .into_iter()
            .enumerate()
            .map(|(order, (d, held))| (held.iter().filter(|h| **h).count(), order, d))
            .filter(|(matched, _, _)| *matched >= need)
            .collect();
        // More words first; among equals, the better-ranked candidate.
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (matched, _, debate) in ranked {
            let found = newest
                .query_row([&debate], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })
                .optional()
                .map_err(self.err())?;
            if let Some((line, commit, time)) = found {
                related.push(Related {
                    debate,
                    line,
                    commit,
                    time,
                    matched,
                    of: words.len(),
                });
            }
            if related.len() == limit {
                break;
            }
        }
        Ok(related)
    }
}

/// The terms of a query, as FTS5 strings (quoted, so that no character of the query is FTS5
/// syntax): each word, and each `"quoted phrase"` whole (an unclosed quote runs to the end).
/// A term without a letter or a digit is dropped (it would match nothing), a repeated one
/// kept once. One pass over the text; refused when it is longer than [`MAX_QUERY_BYTES`], holds
/// more than [`MAX_QUERY_WORDS`] words, or none.
pub fn terms(text: &str) -> Result<Vec<String>, QueryError> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(QueryError::TooLong { bytes: text.len() });
    }
    let mut terms: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut words = 0;
    let mut add = |piece: &str| {
        // Words as the tokenizer sees them: runs of letters and digits.
        let count = piece
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .count();
        // The tokenizer folds case: `X` and `x` are one term.
        if count == 0 || !seen.insert(piece.to_lowercase()) {
            return;
        }
        words += count;
        terms.push(format!("\"{piece}\""));
    };
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let (phrase, after) = quoted.split_once('"').unwrap_or((quoted, ""));
            add(phrase);
            rest = after;
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '"')
                .unwrap_or(rest.len());
            add(&rest[..end]);
            rest = rest[end..].trim_start();
        }
    }
    if words > MAX_QUERY_WORDS {
        return Err(QueryError::TooManyWords { words });
    }
    if terms.is_empty() {
        return Err(QueryError::NoWords);
    }
    Ok(terms)
}

/// The commit id of a hit, parsed.
pub fn commit_of(hit: &Hit) -> Option<ObjectId> {
    hit.commit.parse().ok()
}

#[cfg(test)]
mod tests;
