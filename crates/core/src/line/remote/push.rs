//! `anvil push`: the record's lines to the remote, named one by one and never forced; a line
//! that diverged goes beside the remote's, and nothing goes when it would carry a credential.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use super::fetch::fetch;
use super::location::safe_name;
use super::{Moved, Remote, RemoteError, Synced, beside_name};
use crate::home::{Home, LineRef};
use crate::record::git::Git;
use crate::record::store::Record;

/// The first credential in what `tip` would send that the remote does not have (`theirs`:
/// the remote's tips), walking back from `tip` to a commit the remote has.
fn secret_in(
    record: &Record,
    line: &LineRef,
    tip: ObjectId,
    theirs: &HashMap<LineRef, ObjectId>,
) -> Result<Option<RemoteError>, RemoteError> {
    let mut known = HashSet::new();
    for (other, their_tip) in theirs {
        if other.debate != line.debate {
            continue;
        }
        let mut next = Some(*their_tip);
        while let Some(id) = next.filter(|id| known.insert(*id)) {
            let mut buf = Vec::new();
            next = record.find_commit(id, &mut buf)?.parents().next();
        }
    }
    let mut seen_blobs = HashSet::new();
    let mut next = Some(tip);
    while let Some(id) = next.filter(|id| !known.contains(id)) {
        let message = record.commit_message(id)?;
        let (subject, meta) = crate::record::schema::parse(&message);
        let found = |place: String, kind| RemoteError::Secret {
            line: line.clone(),
            commit: id,
            place: match meta.phase.as_str() {
                "" => place,
                phase => format!("phase {phase} of round {}, {place}", meta.round),
            },
            kind,
        };
        if let Some((place, kind)) = secret_in_message(&message, &subject, &meta) {
            return Ok(Some(found(place, kind)));
        }
        for (name, blob) in record.top_files(id)? {
            if !seen_blobs.insert(blob) {
                continue;
            }
            let bytes = record.blob(blob)?;
            if let Some(f) = crate::model::secrets::find(&String::from_utf8_lossy(&bytes)).first() {
                return Ok(Some(found(format!("its file {name}"), f.kind)));
            }
        }
        let mut buf = Vec::new();
        next = record.find_commit(id, &mut buf)?.parents().next();
    }
    Ok(None)
}

/// Where in a commit's message (its subject, a trailer by name, or elsewhere in it) the first
/// credential is, and its kind.
fn secret_in_message(
    message: &str,
    subject: &str,
    meta: &crate::record::schema::Meta,
) -> Option<(String, &'static str)> {
    let first = |text: &str| crate::model::secrets::find(text).first().map(|f| f.kind);
    let kind = first(message)?;
    if let Some(kind) = first(subject) {
        return Some(("its subject".to_owned(), kind));
    }
    for (key, value) in meta.pairs() {
        if let Some(kind) = first(&value) {
            return Some((format!("its trailer {key}"), kind));
        }
    }
    Some(("its message".to_owned(), kind))
}

/// Sends the record's lines to the remote; with `check_secrets`, refuses (before sending
/// anything) when a commit it would send holds what looks like a credential.
pub fn push(
    home: &Home,
    record: &Record,
    remote: &Remote,
    check_secrets: bool,
) -> Result<Synced, RemoteError> {
    let fetched = fetch(record, remote)?;
    let theirs: HashMap<LineRef, ObjectId> = fetched.lines.into_iter().collect();
    let me = whoami(home);
    let mut synced = Synced {
        refused: fetched.refused,
        ..Synced::default()
    };
    let mut specs = Vec::new();
    let mut all = Vec::new();
    record.for_each_line(|debate, line, tip| {
        all.push((LineRef::new(debate, line), tip));
        Ok(())
    })?;
    for (line, tip) in all {
        let remote_has = |debate: &str, tip: ObjectId| -> Result<bool, RemoteError> {
            for (other, their_tip) in &theirs {
                if other.debate == debate && record.is_ancestor(tip, *their_tip)? {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        match theirs.get(&line) {
            None if remote_has(&line.debate, tip)? => synced.unchanged += 1,
            None => {
                specs.push(spec(&line, &line.line, tip));
                synced.moved.push(Moved::Created(line));
            }
            Some(&their) if record.is_ancestor(tip, their)? => synced.unchanged += 1,
            Some(&their) if record.is_ancestor(their, tip)? => {
                specs.push(spec(&line, &line.line, tip));
                synced.moved.push(Moved::FastForwarded(line));
            }
            Some(_) => {
                // Diverged: sent beside theirs, under a name that says where it comes from.
                let target = beside_theirs(record, &line, tip, &me, &theirs)?;
                match target {
                    Some(there) => {
                        specs.push(spec(&line, &there.line, tip));
                        synced.moved.push(Moved::KeptBeside(line, there));
                    }
                    None => synced.unchanged += 1,
                }
            }
        }
    }
    // The remote's refs are named one by one: no pattern, so nothing but these lines moves,
    // and nothing is forced.
    if specs.is_empty() {
        return Ok(synced);
    }
    if check_secrets {
        for moved in &synced.moved {
            let line = match moved {
                Moved::Created(l) | Moved::FastForwarded(l) | Moved::KeptBeside(l, _) => l,
            };
            if let Some(tip) = record.tip(&line.debate, &line.line)?
                && let Some(refusal) = secret_in(record, line, tip, &theirs)?
            {
                return Err(refusal);
            }
        }
    }
    let git = Git::require()?;
    for chunk in specs.chunks(500) {
        git.record(record.path())
            .args(["push", "--quiet", "--porcelain", "--", &remote.url])
            .args(chunk)
            .output()
            .map_err(|e| RemoteError::Push {
                source: remote.clean_error(e),
            })?;
    }
    Ok(synced)
}

/// Where a `line` that diverged from the remote's goes there: the first `LINE-from-ME` the
/// remote lacks or holds behind `tip`; `None` when one holds `tip` already (or all are taken).
fn beside_theirs(
    record: &Record,
    line: &LineRef,
    tip: ObjectId,
    me: &str,
    theirs: &HashMap<LineRef, ObjectId>,
) -> Result<Option<LineRef>, RemoteError> {
    for n in 1..100 {
        let there = LineRef::new(&line.debate, beside_name(&line.line, me, n));
        match theirs.get(&there) {
            None => return Ok(Some(there)),
            Some(&t) if record.is_ancestor(tip, t)? => return Ok(None),
            Some(&t) if record.is_ancestor(t, tip)? => return Ok(Some(there)),
            Some(_) => continue,
        }
    }
    Ok(None)
}

fn spec(line: &LineRef, remote_line: &str, tip: ObjectId) -> String {
    format!("{tip}:refs/anvil/{}/{remote_line}", line.debate)
}

/// Who pushes: the project's `git config user.name`, else `$USER`, as a name part.
fn whoami(home: &Home) -> String {
    let configured = Git::find().and_then(|git| {
        git.project(home.project())
            .args(["config", "user.name"])
            .output()
            .ok()
    });
    configured
        .and_then(|n| safe_name(n.trim()))
        .or_else(|| std::env::var("USER").ok().and_then(|u| safe_name(&u)))
        .unwrap_or_else(|| "elsewhere".to_owned())
}
