//! `anvil pull`: the remote's lines into the record, each moved under its lock and never
//! while a debate on it goes on here; a line that diverged is kept beside the local one.

use gix::ObjectId;

use super::fetch::fetch;
use super::{Moved, Remote, RemoteError, Synced, beside_name};
use crate::home::{Home, LineRef};
use crate::record::store::Record;

/// How long a pull waits for a line that a transaction holds (a hook recording a phase).
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Brings the remote's lines into the record. A line that exists here is moved only under
/// its lock, from where it stands once the lock is held, and never while it has live files
/// (a debate going on here); a line that does not exist is created with a compare-and-swap
/// that fails if anything created it meanwhile.
pub fn pull(home: &Home, record: &Record, remote: &Remote) -> Result<Synced, RemoteError> {
    let fetched = fetch(record, remote)?;
    let mut synced = Synced {
        refused: fetched.refused,
        ..Synced::default()
    };
    for (line, tip) in fetched.lines {
        match record.tip(&line.debate, &line.line)? {
            None if held_elsewhere(record, &line.debate, tip)? => synced.unchanged += 1,
            None => {
                move_line(record, &line, None, tip, "pulled")?;
                synced.moved.push(Moved::Created(line));
            }
            Some(ours) if record.is_ancestor(tip, ours)? => synced.unchanged += 1,
            Some(_) => match fast_forward(home, record, &line, tip, "pulled")? {
                Forward::Moved => synced.moved.push(Moved::FastForwarded(line)),
                Forward::Live => synced.skipped_live.push(line),
                Forward::Already => synced.unchanged += 1,
                // Held by another line already: a copy kept by an earlier pull, perhaps
                // under the name an older anvil gave it.
                Forward::Diverged if held_elsewhere(record, &line.debate, tip)? => {
                    synced.unchanged += 1
                }
                Forward::Diverged => match keep_beside(home, record, &line, tip, &remote.name)? {
                    Some(kept) => synced.moved.push(Moved::KeptBeside(line, kept)),
                    None => synced.unchanged += 1,
                },
            },
        }
    }
    Ok(synced)
}

/// Points `line` at `tip` if it stands at `expected`, noted first in the index of recent
/// debates (held until the ref has moved; see `record::recent`).
fn move_line(
    record: &Record,
    line: &LineRef,
    expected: Option<ObjectId>,
    tip: ObjectId,
    why: &str,
) -> Result<(), RemoteError> {
    let time = record.commit_times().of(tip)?;
    let _note = crate::record::recent::note(record.path(), &line.debate, &line.line, tip, time)?;
    record.set_line(&line.debate, &line.line, expected, tip, why)?;
    Ok(())
}

/// What [`fast_forward`] found once it held the line.
enum Forward {
    Moved,
    /// The line has live files here: it is left as it is.
    Live,
    /// The line holds `tip` already.
    Already,
    /// The line and `tip` went different ways.
    Diverged,
}

/// Moves `line` (which exists) ahead to `tip`, under the line's lock: the tip is read again
/// once the lock is held, since a hook may have recorded a phase meanwhile.
fn fast_forward(
    home: &Home,
    record: &Record,
    line: &LineRef,
    tip: ObjectId,
    why: &str,
) -> Result<Forward, RemoteError> {
    let _lock = home
        .lock_line(line, LOCK_PATIENCE)
        .map_err(|source| RemoteError::Lock {
            line: line.clone(),
            source,
        })?;
    let ours = record.tip(&line.debate, &line.line)?;
    Ok(match ours {
        Some(ours) if record.is_ancestor(tip, ours)? => Forward::Already,
        Some(ours) if !record.is_ancestor(ours, tip)? => Forward::Diverged,
        _ if home.state_path(line).is_file() => Forward::Live,
        ours => {
            move_line(record, line, ours, tip, why)?;
            Forward::Moved
        }
    })
}

/// Stores a diverged `tip` of `line` as `LINE-from-SOURCE` (numbered when that name holds
/// yet another history); `None` when it is there already, or when the copy that could take it
/// has live files here (someone resumed it).
fn keep_beside(
    home: &Home,
    record: &Record,
    line: &LineRef,
    tip: ObjectId,
    source: &str,
) -> Result<Option<LineRef>, RemoteError> {
    for n in 1..100 {
        let kept = LineRef::new(&line.debate, beside_name(&line.line, source, n));
        match record.tip(&kept.debate, &kept.line)? {
            None => {
                move_line(record, &kept, None, tip, "kept a diverged line")?;
                return Ok(Some(kept));
            }
            Some(copy) if record.is_ancestor(tip, copy)? => return Ok(None),
            Some(_) => match fast_forward(home, record, &kept, tip, "kept a diverged line")? {
                Forward::Moved => return Ok(Some(kept)),
                Forward::Already | Forward::Live => return Ok(None),
                Forward::Diverged => continue,
            },
        }
    }
    Err(RemoteError::TooManyCopies(line.clone()))
}

/// Is `tip` already the tip, or an ancestor of the tip, of some line of `debate` here?
fn held_elsewhere(record: &Record, debate: &str, tip: ObjectId) -> Result<bool, RemoteError> {
    for (_, other) in record.lines_of_debate(debate)? {
        if record.is_ancestor(tip, other)? {
            return Ok(true);
        }
    }
    Ok(false)
}
