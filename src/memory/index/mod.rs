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

use std::path::PathBuf;

use anvil_core::review::history;
use gix::ObjectId;
use rusqlite::Connection;

mod catch_up;
mod open;
mod questions;
mod related;
mod search;

pub use search::terms;

/// Bumped when the schema changes, or what is indexed of a phase: an index of another version
/// is built again. (4: phases indexed as people read them, tags as words.)
const VERSION: i64 = 4;

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
    /// What turns an error of the index file at `path` into a search's, for `map_err`.
    fn index(path: &std::path::Path) -> impl Fn(rusqlite::Error) -> SearchError + Copy + '_ {
        move |source| SearchError::Index {
            path: path.to_owned(),
            source,
        }
    }

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
        let hint = match e {
            SearchError::History(e) => return e.into(),
            SearchError::Record(e) => return e.into(),
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
            SearchError::Index { .. } if e.is_busy() => {
                "another anvil (a search, the MCP server, the web room, `anvil gc`) is bringing \
                 it up to date; search again in a moment"
            }
            // Only a damaged index is worth deleting: it is a cache of the record.
            SearchError::Index { .. } if e.is_damaged() => {
                "it is damaged; it is only a cache of the record: delete it, and the next \
                 search builds it again"
            }
            SearchError::Index { .. } if e.code() == Some(rusqlite::ErrorCode::DiskFull) => {
                "the disk is full; the record itself is untouched"
            }
            SearchError::Index { .. } => return CliError::new(e.to_string()),
        };
        CliError::new(e.to_string()).hint(hint)
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

/// The commit id of a hit, parsed.
pub fn commit_of(hit: &Hit) -> Option<ObjectId> {
    hit.commit.parse().ok()
}

#[cfg(test)]
mod tests;
