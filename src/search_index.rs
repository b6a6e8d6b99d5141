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
use rusqlite::{Connection, OptionalExtension, params};

/// The index's file, beside the record.
pub fn path(home: &Home) -> PathBuf {
    home.root().join("search.sqlite")
}

/// Bumped when the schema changes: an index of another version is built again.
const VERSION: i64 = 2;

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
        let mut index = match Index::open_file(&path) {
            Ok(index) if index.version().ok() == Some(VERSION) => index,
            _ => {
                // Built again from the record: the file is a cache of it.
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
                let index = Index::open_file(&path)?;
                index.create()?;
                index
            }
        };
        index.catch_up(record, &home.record_dir())?;
        Ok(index)
    }

    fn open_file(path: &Path) -> Result<Index, SearchError> {
        let db = Connection::open(path).map_err(|source| SearchError::Index {
            path: path.to_owned(),
            source,
        })?;
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

    fn version(&self) -> Result<i64, SearchError> {
        self.db
            .query_row("SELECT version FROM meta", [], |r| r.get(0))
            .map_err(self.err())
    }

    fn create(&self) -> Result<(), SearchError> {
        self.db
            .execute_batch(&format!(
                "PRAGMA journal_mode = WAL;
                 CREATE TABLE meta (version INTEGER NOT NULL);
                 INSERT INTO meta VALUES ({VERSION});
                 CREATE TABLE tips (debate TEXT, line TEXT, tip TEXT, PRIMARY KEY (debate, line));
                 CREATE TABLE seen (commit_id TEXT PRIMARY KEY);
                 CREATE TABLE dirs (debate TEXT PRIMARY KEY, stamp TEXT NOT NULL);
                 CREATE TABLE packed (stamp TEXT NOT NULL);
                 CREATE VIRTUAL TABLE phases USING fts5(
                     text, debate UNINDEXED, line UNINDEXED, phase UNINDEXED,
                     round UNINDEXED, commit_id UNINDEXED, time UNINDEXED,
                     tokenize = 'porter unicode61'
                 );"
            ))
            .map_err(self.err())
    }

    /// Adds what the record holds that the index has not seen: for each line whose tip moved
    /// since, its commits back to one already indexed. A commit a branch inherited is indexed
    /// once, under the line that recorded it.
    ///
    /// Which lines may have moved is told by the folders of `refs/anvil/`: a ref is written
    /// by renaming its lock file in its debate's folder (anvil and git alike), which changes
    /// the folder's modification time, and a new debate is a new folder. Only debates whose
    /// folder changed since the last catch-up are read; a changed `packed-refs` (a `git
    /// pack-refs`, `anvil gc`) makes the index read every line once.
    fn catch_up(&mut self, record: &Record, record_dir: &Path) -> Result<(), SearchError> {
        // Stamped before the refs are read: a ref that moves in between is read again next time.
        let packed_now = stamp(&record_dir.join("packed-refs"));
        let dirs_now = debate_dirs(&record_dir.join("refs/anvil"));
        let packed_then: Option<String> = self
            .db
            .query_row("SELECT stamp FROM packed", [], |r| r.get(0))
            .optional()
            .map_err(self.err())?;
        // The usual case, nothing moved: one comparison, no table read.
        let all_now = dirs_now.as_deref().map(all_dirs);
        let all_then: Option<String> = self
            .db
            .query_row("SELECT stamp FROM dirs WHERE debate = ''", [], |r| r.get(0))
            .optional()
            .map_err(self.err())?;
        if all_now.is_some()
            && all_now == all_then
            && packed_then.as_deref() == Some(packed_now.as_str())
        {
            return Ok(());
        }
        let dirs_then: std::collections::HashMap<String, String> = {
            let mut stmt = self
                .db
                .prepare("SELECT debate, stamp FROM dirs")
                .map_err(self.err())?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(self.err())?;
            rows.collect::<Result<_, _>>().map_err(self.err())?
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
            let mut stmt = self
                .db
                .prepare("SELECT debate, line, tip FROM tips")
                .map_err(self.err())?;
            let rows = stmt
                .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))
                .map_err(self.err())?;
            rows.collect::<Result<_, _>>().map_err(self.err())?
        };
        let path = self.path.clone();
        let err = move |source| SearchError::Index {
            path: path.clone(),
            source,
        };
        let tx = self.db.transaction().map_err(&err)?;
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
            if !debate.is_empty() && dirs_then.get(debate) != Some(stamp) {
                tx.execute(
                    "INSERT OR REPLACE INTO dirs VALUES (?1, ?2)",
                    params![debate, stamp],
                )
                .map_err(&err)?;
            }
        }
        // The stamp of them all, under the name no debate has.
        if let Some(all) = &all_now {
            tx.execute("INSERT OR REPLACE INTO dirs VALUES ('', ?1)", [all])
                .map_err(&err)?;
        }
        if packed_then.as_deref() != Some(packed_now.as_str()) {
            tx.execute("DELETE FROM packed", []).map_err(&err)?;
            tx.execute("INSERT INTO packed VALUES (?1)", [&packed_now])
                .map_err(&err)?;
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

/// A file's or folder's identity and modification time, as text; `-` when it is missing.
fn stamp(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => format!("{}:{}:{}.{}", m.ino(), m.len(), m.mtime(), m.mtime_nsec()),
        Err(_) => "-".to_owned(),
    }
}

/// Each debate folder of `refs/anvil/` with its stamp; `None` when the folder cannot be read
/// (the catch-up then reads every line).
fn debate_dirs(refs: &Path) -> Option<Vec<(String, String)>> {
    use std::os::unix::fs::MetadataExt;
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
        let m = entry.metadata().ok()?;
        let stamp = format!("{}:{}:{}.{}", m.ino(), m.len(), m.mtime(), m.mtime_nsec());
        out.push((name, stamp));
    }
    out.sort_unstable();
    Some(out)
}

/// One stamp for all of `dirs` (sorted): equal when no folder changed.
fn all_dirs(dirs: &[(String, String)]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    dirs.hash(&mut h);
    format!("{}:{:016x}", dirs.len(), h.finish())
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
