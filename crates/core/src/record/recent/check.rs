//! How the journal compares with the refs, for `anvil doctor`.

use std::io;

use super::{Journal, OLDER_HEADER, path, scan};
use crate::record::store::{Record, RecordError};

/// How the journal compares with the refs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// It is there and agrees with the refs.
    Fine { debates: usize },
    /// There is none (a record from before it existed, or it was deleted).
    Missing,
    /// An older anvil wrote it (a sorted file of another form): the next reader rewrites it.
    Older,
    /// It cannot be read as a journal.
    Damaged(String),
    /// It disagrees with the refs: `behind` are debates it misses or claims older than they
    /// are (moved by something other than anvil; a reader would not see that they moved
    /// unless it shows them); `ahead`, debates it claims newer than they are, or that are
    /// gone (readers correct those as they meet them).
    Outdated {
        behind: Vec<String>,
        ahead: Vec<String>,
    },
}

pub fn check(record: &Record) -> Result<Health, RecordError> {
    let bytes = match std::fs::read(path(record.path())) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Health::Missing),
        Err(e) => return Ok(Health::Damaged(e.to_string())),
    };
    if bytes.starts_with(OLDER_HEADER.as_bytes()) {
        return Ok(Health::Older);
    }
    let journal = match Journal::parse(&bytes) {
        Ok(journal) => journal,
        Err(e) => return Ok(Health::Damaged(e)),
    };
    let mut claimed = match journal.claims() {
        Ok(claims) => claims,
        Err(e) => return Ok(Health::Damaged(e)),
    };
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
    if behind.is_empty() && ahead.is_empty() {
        return Ok(Health::Fine {
            debates: real.len(),
        });
    }
    Ok(Health::Outdated { behind, ahead })
}
