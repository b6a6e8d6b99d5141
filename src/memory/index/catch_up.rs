//! Catching the index up with the record: the lines that moved since the last catch-up,
//! their new commits indexed, the phases no line reaches any more taken out.

use std::path::Path;

use anvil_core::record::stamp::{self, Stamp};
use anvil_core::record::store::Record;
use anvil_core::review::history;
use gix::ObjectId;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Index, SearchError};

impl Index {
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
    pub(super) fn catch_up(
        &mut self,
        record: &Record,
        record_dir: &Path,
    ) -> Result<(), SearchError> {
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
        let err = SearchError::index(&self.path);
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
        // A phase is indexed as people read it (tags as words): its snippets are what a search
        // shows.
        let text = match entry.role {
            Some(_) => {
                let text = history::response(record, entry)?.unwrap_or_default();
                anvil_core::model::markers::readable(&text).into_owned()
            }
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
