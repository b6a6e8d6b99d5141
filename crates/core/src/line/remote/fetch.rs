//! Fetching a remote's lines into its tracking folder, `refs/anvil-remote/<REMOTE>/`, where
//! both a pull and a push read where the remote stands; refs that hold no debate are refused.

use gix::ObjectId;

use super::location::{Remote, safe_name};
use super::{Refused, RemoteError};
use crate::home::LineRef;
use crate::record::git::Git;
use crate::record::store::{Record, valid_name};

/// What a fetch found: the remote's lines anvil can read, and the refs it refused.
pub(super) struct Fetched {
    pub(super) lines: Vec<(LineRef, ObjectId)>,
    pub(super) refused: Vec<Refused>,
}

/// Fetches the remote's lines into the remote's tracking folder ([`tracking_prefix`]); keeps
/// those that hold a debate (see the module's documentation) and names the others.
pub(super) fn fetch(record: &Record, remote: &Remote) -> Result<Fetched, RemoteError> {
    let prefix = tracking_prefix(remote);
    Git::require()?
        .record(record.path())
        .args([
            "-c",
            "gc.auto=0",
            "fetch",
            "--quiet",
            "--no-tags",
            "--prune",
            "--no-write-fetch-head",
            "--",
            &remote.url,
            &format!("+refs/anvil/*:{prefix}*"),
        ])
        .output()
        .map_err(|e| remote.clean_error(e))?;
    forget_legacy_tracking(record, remote, &prefix)?;
    let mut fetched = Fetched {
        lines: Vec::new(),
        refused: Vec::new(),
    };
    for (name, id) in record.refs_under(&prefix)? {
        let refuse = |reason: String| Refused {
            name: format!("refs/anvil/{name}"),
            reason,
        };
        let Some((debate, line)) = name
            .split_once('/')
            .filter(|(d, l)| valid_name(d) && valid_name(l))
        else {
            fetched.refused.push(refuse(
                "not a valid `refs/anvil/<debate>/<line>` name".to_owned(),
            ));
            continue;
        };
        match crate::review::history::check_line(record, id) {
            Ok(()) => fetched.lines.push((LineRef::new(debate, line), id)),
            Err(reason) => fetched.refused.push(refuse(reason)),
        }
    }
    Ok(fetched)
}

/// Deletes the refs an older anvil kept this remote's lines under, once they are fetched to
/// `prefix`: that folder's name could hold the password of the remote's URL. Only tracking
/// refs go; the lines themselves (`refs/anvil/`) are never touched here.
fn forget_legacy_tracking(
    record: &Record,
    remote: &Remote,
    prefix: &str,
) -> Result<(), RemoteError> {
    let legacy = legacy_tracking_prefix(remote);
    if legacy == prefix {
        return Ok(());
    }
    let git = Git::require()?;
    for (name, id) in record.refs_under(&legacy)? {
        git.record(record.path())
            .args([
                "update-ref",
                "-d",
                &format!("{legacy}{name}"),
                &id.to_string(),
            ])
            .output()?;
    }
    Ok(())
}

/// Where a remote's lines are kept: `refs/anvil-remote/<name>-<hash of its URL>/`. The short
/// name alone is not enough: two remotes whose URLs end in `team.git` would share the folder,
/// and a pruning fetch from one would delete the other's refs. The URL hashed is the one
/// shown: changing the password in it keeps the folder.
pub(super) fn tracking_prefix(remote: &Remote) -> String {
    format!(
        "refs/anvil-remote/{}-{}/",
        remote.name,
        short_hash(&remote.shown)
    )
}

/// Where an older anvil kept this remote's lines: named after the last part of the URL as
/// given (for `https://alice:TOKEN@host` that was the password) and the hash of the whole of
/// it. Emptied once the lines are fetched to [`tracking_prefix`].
pub(super) fn legacy_tracking_prefix(remote: &Remote) -> String {
    let name = if remote.configured {
        remote.name.clone()
    } else {
        let base = remote
            .url
            .trim_end_matches(['/', '\\'])
            .rsplit(['/', '\\', ':'])
            .next()
            .unwrap_or(&remote.url);
        let base = base.strip_suffix(".git").unwrap_or(base);
        safe_name(base).unwrap_or_else(|| "remote".to_owned())
    };
    format!(
        "refs/anvil-remote/{name}-{}/",
        short_hash(remote.url.trim())
    )
}

fn short_hash(text: &str) -> String {
    gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        text.trim().as_bytes(),
    )
    .map(|id| id.to_hex_with_len(8).to_string())
    .unwrap_or_default()
}
