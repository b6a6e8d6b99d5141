//! Full-text search over every recorded phase: an SQLite FTS5 index kept beside the record
//! (`.anvil/search.sqlite`), never pushed, always rebuildable from the record, which stays the
//! source of truth. Each search first catches the index up with the commits it has not seen
//! (a line's tip it has not indexed to); a missing or unreadable index is built again. The Stop
//! hook never touches it: it lives in the command line's binary only.
//!
//! Words are matched by their stems (SQLite's `porter` tokenizer over `unicode61`), so
//! "migrating" finds "migration"; `"a phrase"` in quotes matches the words in order.

use std::path::{Path, PathBuf};

use anvil_core::home::Home;
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
    History(history::HistoryError),
    Record(anvil_core::record::store::RecordError),
}

impl SearchError {
    /// Another process held the index for longer than a writer waits.
    fn is_busy(&self) -> bool {
        matches!(self, SearchError::Index { source, .. } if matches!(
            source.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        ))
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
        match e {
            SearchError::Index { path, source } => crate::error::CliError::new(format!(
                "the search index {}: {source}",
                path.display()
            ))
            .hint("it is a cache of the record: delete it, and the next search builds it again"),
            SearchError::History(e) => e.into(),
            SearchError::Record(e) => e.into(),
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

/// The markers around matched words in a snippet.
pub const OPEN: &str = "\u{1}";
pub const CLOSE: &str = "\u{2}";

/// The index, opened (built or caught up first).
pub struct Index {
    db: Connection,
    path: PathBuf,
}

impl Index {
    /// Opens the index of `home`'s record and brings it up to date with the record: built
    /// anew when missing, unreadable or of another version; else only the commits it has not
    /// seen are added.
    pub fn open(home: &Home, record: &Record) -> Result<Index, SearchError> {
        let path = path(home);
        let mut index = Index::open_file(&path)?;
        match index.version() {
            Ok(Some(VERSION)) => {}
            // New (or being made by another process, which this one waits for).
            Ok(None) => index.create()?,
            // Busy for longer than a writer waits: not a reason to throw it away.
            Err(e) if e.is_busy() => return Err(e),
            // Of another version, or not a database: built again from the record, whose
            // cache it is.
            Ok(Some(_)) | Err(_) => {
                drop(index);
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
                index = Index::open_file(&path)?;
                index.create()?;
            }
        }
        // A cache in WAL mode: a crash or power cut may lose the last catch-ups (made again
        // by the next search), never the file's consistency; no sync on every commit.
        index
            .db
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(index.err())?;
        index.catch_up(record, &home.record_dir())?;
        Ok(index)
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
    /// pack-refs`, `anvil gc`) makes the index read every line once. Before any of that, a
    /// handful of stamps ([`Quick`]) tell whether anything can have moved at all.
    fn catch_up(&mut self, record: &Record, record_dir: &Path) -> Result<(), SearchError> {
        // Stamped before the refs are read: a ref that moves in between is read again next time.
        let quick_now = Quick::of(record_dir);
        // The usual case, nothing moved: one comparison, no folder listed, no table read.
        let quick_then: Option<String> = self
            .db
            .query_row("SELECT stamp FROM stamps WHERE name = 'quick'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(self.err())?;
        if quick_then.as_deref() == Some(quick_now.stamp.as_str()) {
            return Ok(());
        }
        let packed_now = &quick_now.packed;
        let dirs_now = debate_dirs(&record_dir.join("refs/anvil"));
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
        let packed_then: Option<String> = tx
            .query_row("SELECT stamp FROM stamps WHERE name = 'packed'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(&err)?;
        let dirs_then: std::collections::HashMap<String, String> = {
            let mut stmt = tx.prepare("SELECT debate, stamp FROM dirs").map_err(&err)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(&err)?;
            rows.collect::<Result<_, _>>().map_err(&err)?
        };
        let lines = match &dirs_now {
            Some(dirs) if packed_then.as_deref() == Some(packed_now.as_str()) => {
                let mut lines = Vec::new();
                for (debate, stamp) in dirs {
                    if debate.is_empty() || dirs_then.get(debate) == Some(stamp) {
                        continue;
                    }
                    for (line, tip) in record.lines_of_debate(debate)? {
                        lines.push((debate.clone(), line, tip));
                    }
                }
                lines
            }
            _ => record.lines()?,
        };
        let known: std::collections::HashMap<(String, String), String> = {
            let mut stmt = tx
                .prepare("SELECT debate, line, tip FROM tips")
                .map_err(&err)?;
            let rows = stmt
                .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))
                .map_err(&err)?;
            rows.collect::<Result<_, _>>().map_err(&err)?
        };
        for (debate, line, tip) in lines {
            if known.get(&(debate.clone(), line.clone())) == Some(&tip.to_string()) {
                continue;
            }
            // A line anvil cannot read (see `anvil doctor`) is left out, not fatal.
            let Ok(entries) = history::chain(record, tip) else {
                continue;
            };
            for entry in entries.iter().rev() {
                let id = entry.commit.to_string();
                let seen: Option<i64> = tx
                    .query_row("SELECT 1 FROM seen WHERE commit_id = ?1", [&id], |r| {
                        r.get(0)
                    })
                    .optional()
                    .map_err(&err)?;
                if seen.is_some() {
                    break;
                }
                tx.execute("INSERT INTO seen VALUES (?1)", [&id])
                    .map_err(&err)?;
                let text = match entry.role {
                    Some(_) => history::response(record, entry)?.unwrap_or_default(),
                    // Bookkeeping commits: the question, steering and answers they carry.
                    None => entry.describe(),
                };
                tx.execute(
                    "INSERT INTO phases (text, debate, line, phase, round, commit_id, time)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        text,
                        debate,
                        // The line that recorded it; a commit written without anvil's
                        // trailers belongs to the line it was found on.
                        if entry.meta.line.is_empty() {
                            &line
                        } else {
                            &entry.meta.line
                        },
                        entry.meta.phase,
                        entry.meta.round,
                        id,
                        entry.time
                    ],
                )
                .map_err(&err)?;
            }
            tx.execute(
                "INSERT OR REPLACE INTO tips VALUES (?1, ?2, ?3)",
                params![debate, line, tip.to_string()],
            )
            .map_err(&err)?;
        }
        for (debate, stamp) in dirs_now.iter().flatten() {
            if dirs_then.get(debate) != Some(stamp) {
                tx.execute(
                    "INSERT OR REPLACE INTO dirs VALUES (?1, ?2)",
                    params![debate, stamp],
                )
                .map_err(&err)?;
            }
        }
        let mut stamps = Vec::new();
        if packed_then.as_deref() != Some(packed_now.as_str()) {
            stamps.push(("packed", packed_now.as_str()));
        }
        // What a search with nothing moved compares, unless it was taken too close to a
        // change (see [`Quick`]); then the next search looks at the folders again.
        if quick_now.settled && dirs_now.is_some() {
            stamps.push(("quick", &quick_now.stamp));
        } else {
            tx.execute("DELETE FROM stamps WHERE name = 'quick'", [])
                .map_err(&err)?;
        }
        for (name, stamp) in stamps {
            tx.execute(
                "INSERT OR REPLACE INTO stamps VALUES (?1, ?2)",
                params![name, stamp],
            )
            .map_err(&err)?;
        }
        if tx.total_changes() == changes_before {
            // Nothing new: the transaction ends without writing anything.
            return Ok(());
        }
        tx.commit().map_err(&err)
    }

    /// The best matches for `query`, most relevant first: phases with every word; when none
    /// has them all, phases with any of them (ranked, so those with more and rarer words
    /// come first).
    pub fn search(&self, query: &Query) -> Result<Vec<Hit>, SearchError> {
        let hits = match self.run(query, &query.text) {
            Ok(hits) => hits,
            // Not FTS5 syntax (a stray quote, `-`, `:`…): the words as plain terms.
            Err(_) => self.run(query, &plain(&query.text, " "))?,
        };
        if !hits.is_empty() || query.text.split_whitespace().nth(1).is_none() {
            return Ok(hits);
        }
        self.run(query, &plain(&query.text, " OR "))
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
        sql.push_str(&format!(" ORDER BY rank LIMIT {}", query.limit.max(1)));
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

/// A file's or folder's identity and modification time, as text.
fn stamp_of(m: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!("{}:{}:{}.{}", m.ino(), m.len(), m.mtime(), m.mtime_nsec())
}

/// Each debate folder of `refs/anvil/` with its stamp; `None` when the folder cannot be read
/// (the catch-up then reads every line).
fn debate_dirs(refs: &Path) -> Option<Vec<(String, String)>> {
    let entries = match std::fs::read_dir(refs) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.ok()?;
        let name = entry.file_name().into_string().ok()?;
        // Relative to the open folder: no path to walk for each of thousands of debates.
        out.push((name, stamp_of(&entry.metadata().ok()?)));
    }
    out.sort_unstable();
    Some(out)
}

/// What tells a search that nothing moved without listing every debate's folder: the stamps
/// of `refs/anvil/` (a debate added or removed), `packed-refs` (packing, pruning), the
/// recent-debates index every ref anvil writes is noted in before it moves (see
/// `anvil_core::record::recent`), and `FETCH_HEAD` (a `git fetch` into the record).
///
/// A ref that `git` moves in the folder of an existing debate with none of these (`git
/// update-ref`, a push into this record) changes none of them: it is found at the next change
/// that does (any phase anvil records, a fetch, `anvil gc`).
struct Quick {
    stamp: String,
    /// `packed-refs`' own stamp (`-` when there is none): when it changed, every line is read.
    packed: String,
    /// Every stamped file is older than [`RACY`]: a change within the same tick of a
    /// filesystem's clock (or a ref about to move after its note) cannot hide behind it.
    settled: bool,
}

/// How old the stamped files must be for a search to trust their stamps next time (as git
/// treats an index entry as racily clean).
const RACY: std::time::Duration = std::time::Duration::from_secs(2);

impl Quick {
    fn of(record_dir: &Path) -> Quick {
        let files = [
            record_dir.join("packed-refs"),
            record_dir.join("refs/anvil"),
            anvil_core::record::recent::path(record_dir),
            record_dir.join("FETCH_HEAD"),
        ];
        let now = std::time::SystemTime::now();
        let mut settled = true;
        let mut parts = Vec::with_capacity(files.len());
        for file in &files {
            let meta = std::fs::metadata(file).ok();
            if let Some(modified) = meta.as_ref().and_then(|m| m.modified().ok()) {
                settled &= now.duration_since(modified).is_ok_and(|age| age >= RACY);
            }
            parts.push(meta.map_or_else(|| "-".to_owned(), |m| stamp_of(&m)));
        }
        Quick {
            stamp: parts.join(" "),
            packed: parts.swap_remove(0),
            settled,
        }
    }
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

/// `text` as FTS5 terms joined by `join` (" " for all, " OR " for any): each word quoted, so
/// that no character has a meaning of its own.
fn plain(text: &str, join: &str) -> String {
    text.split_whitespace()
        .map(|w| w.replace('"', ""))
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(join)
}

/// The commit id of a hit, parsed.
pub fn commit_of(hit: &Hit) -> Option<ObjectId> {
    hit.commit.parse().ok()
}
