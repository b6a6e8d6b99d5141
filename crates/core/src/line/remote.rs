//! Sharing debates through git remotes: `anvil push` and `anvil pull` move `refs/anvil/*`
//! only, never a branch or a tag, and never lose a line that diverged.
//!
//! The transport is the `git` binary (`git fetch`, `git push`): it speaks every protocol
//! and credential helper a team already uses, which gix's client would have to be configured
//! for one by one. Everything else — which lines to move, ancestry, ref updates — is done
//! here with gix, in the record.
//!
//! A remote's lines are first fetched to `refs/anvil-remote/<REMOTE>/<debate>/<line>` (so
//! their objects are kept and the next push knows where the remote stands). Then, line by
//! line:
//! - pull: a line the record lacks is created; one that only moved ahead on the remote is
//!   fast-forwarded (unless its live files are here: a line being debated is never moved
//!   under the hook's feet); one that diverged is kept beside the local one as
//!   `LINE-from-REMOTE`, so both show in `anvil log`;
//! - push: a line the remote lacks, or that only moved ahead here, is pushed under its name;
//!   one that diverged from the remote's is pushed as `LINE-from-ME` (ME: the project's
//!   `git config user.name`, else `$USER`), never forced over the remote's.
//!
//! A line already present under another name (the remote's copy of a line pushed from here,
//! or the local copy of a line pulled from there) is not copied again.
//!
//! A remote is not trusted to hold debates: each of its refs must name a commit whose tree has
//! a `state.md` anvil can read, on a first-parent chain of commits. A ref that does not (an
//! ordinary git commit, a blob, a tree, a tag) is refused, named with the reason, and every
//! other ref goes through: one bad ref never hides or blocks the rest.

use std::path::Path;

use gix::ObjectId;

use crate::home::{Home, LineRef};
use crate::record::git::{Git, GitError};
use crate::record::store::{Record, RecordError, valid_name};

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("pushing and pulling debates use the `git` binary for the transport: {0}")]
    Git(#[from] GitError),
    #[error(
        "the project's git repository has no remote '{name}' ({message}); name a remote, a URL or a path"
    )]
    NoRemote { name: String, message: String },
    #[error("{0} diverged too many times to keep another copy")]
    TooManyCopies(LineRef),
    #[error("cannot take the lock of {line}: {source}")]
    Lock {
        line: LineRef,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{line} holds what looks like a {kind} (commit {commit}, {place}): recorded unredacted \
         (`[secrets] redact = false`, an older anvil, or written with git) or pulled so; \
         nothing was pushed"
    )]
    Secret {
        line: LineRef,
        commit: ObjectId,
        place: String,
        kind: &'static str,
    },
    #[error("{source}\n(the remote moved meanwhile? `anvil pull`, then push again)")]
    Push {
        #[source]
        source: GitError,
    },
}

/// Where a remote is, and the short name its lines are kept under.
///
/// A URL may carry credentials (`https://alice:TOKEN@host/team.git`, `https://TOKEN@host/…`):
/// git needs them, nobody else sees them. The URL as given goes to git only; what anvil prints,
/// stores or names (messages, `--json`, the tracking folder, `LINE-from-NAME`) comes from
/// [`Remote::shown`] and [`Remote::name`], which never hold a user name or a password.
#[derive(Clone, PartialEq, Eq)]
pub struct Remote {
    /// A remote name of the project's git repository, or a URL or path given as is: handed to
    /// git, never shown.
    url: String,
    /// The URL without its user name and password, as git shows it.
    pub shown: String,
    /// Used in `refs/anvil-remote/<name>-…/` and in `LINE-from-<name>`: the remote's configured
    /// name, else the last part of the URL's path, else its host.
    pub name: String,
    /// Named in the project's git configuration (`origin`), not given as a URL or a path.
    configured: bool,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("shown", &self.shown)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// `text` (what git said) with the URL as given replaced by the one shown, and any other
    /// credentials in a URL taken out.
    fn clean(&self, text: &str) -> String {
        let text = if self.url != self.shown {
            text.replace(&self.url, &self.shown)
        } else {
            text.to_owned()
        };
        without_credentials_in(&text)
    }

    /// A git error of this remote's transport, with [`Remote::clean`] applied to what git said.
    fn clean_error(&self, error: GitError) -> GitError {
        match error {
            GitError::Failed { what, message } => GitError::Failed {
                what,
                message: self.clean(&message),
            },
            other => other,
        }
    }
}

/// What happened to one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Moved {
    /// A line that was not here (pull) or not there (push).
    Created(LineRef),
    FastForwarded(LineRef),
    /// The line diverged: the other side's history is kept under the second name.
    KeptBeside(LineRef, LineRef),
}

/// What a push or a pull did.
#[derive(Debug, Clone, Default)]
pub struct Synced {
    pub moved: Vec<Moved>,
    /// Lines that were the same on both sides, or already present under another name.
    pub unchanged: usize,
    /// Lines the pull left alone because their live files are here and the remote moved
    /// them ahead: `anvil resume` after the debate here is over picks them up.
    pub skipped_live: Vec<LineRef>,
    /// The remote's refs that hold no debate anvil can read, with why: never moved.
    pub refused: Vec<Refused>,
}

/// A ref of the remote that a pull (or a push, reading where the remote stands) refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The ref's name on the remote (`refs/anvil/<debate>/<line>`, or whatever else it is).
    pub name: String,
    pub reason: String,
}

/// What is in a remote's URL: its form without credentials and the name its lines go under.
struct Parsed {
    shown: String,
    name: Option<String>,
}

/// Reads `given` (a URL, an scp-like `host:path`, or a path) with gix's parser, as git reads it.
fn parse_location(given: &str) -> Parsed {
    let Ok(mut url) = gix::url::parse(given) else {
        return Parsed {
            shown: without_credentials_in(given),
            name: None,
        };
    };
    let path = url.path.to_string();
    let last = path
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .map(|last| last.strip_suffix(".git").unwrap_or(last))
        .unwrap_or_default();
    let name = safe_name(last).or_else(|| url.host().and_then(safe_name));
    let shown = if url.user().is_some() || url.password().is_some() {
        url.set_user(None);
        url.set_password(None);
        let mut out = Vec::new();
        match url.write_to(&mut out) {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            Err(_) => without_credentials_in(given),
        }
    } else {
        given.to_owned()
    };
    Parsed { shown, name }
}

/// `text` with the user part (`user:password@`, `TOKEN@`) of every `scheme://` URL in it taken
/// out: what git does to the URLs it prints.
fn without_credentials_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let authority_end = after
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == '\'')
            .unwrap_or(after.len());
        let authority = &after[..authority_end];
        match authority.rfind('@') {
            Some(user_end) => out.push_str(&authority[user_end + 1..]),
            None => out.push_str(authority),
        }
        rest = &after[authority_end..];
    }
    out.push_str(rest);
    out
}

/// Finds the remote: a URL or a path as is, else a remote of the project's git repository
/// (`origin` when none is named).
pub fn find(home: &Home, remote: Option<&str>) -> Result<Remote, RemoteError> {
    let given = remote.unwrap_or("origin");
    let looks_like_location = given.contains('/')
        || given.contains(':')
        || given.contains('\\')
        || Path::new(given).exists();
    if looks_like_location {
        let parsed = parse_location(given);
        return Ok(Remote {
            url: given.to_owned(),
            shown: parsed.shown,
            name: parsed.name.unwrap_or_else(|| "remote".to_owned()),
            configured: false,
        });
    }
    let url = match Git::require()?
        .project(home.project())
        .args(["remote", "get-url", given])
        .output()
    {
        Ok(url) => url,
        Err(GitError::Failed { message, .. }) => {
            return Err(RemoteError::NoRemote {
                name: given.to_owned(),
                message: without_credentials_in(&message),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let url = url.trim().to_owned();
    Ok(Remote {
        shown: parse_location(&url).shown,
        url,
        name: safe_name(given).unwrap_or_else(|| "remote".to_owned()),
        configured: true,
    })
}

/// `text` as a part of a line name: letters, digits and `-`, lower case.
fn safe_name(text: &str) -> Option<String> {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(30).collect();
    let out = out.trim_end_matches('-').to_owned();
    (!out.is_empty()).then_some(out)
}

/// Where a remote's lines are kept: `refs/anvil-remote/<name>-<hash of its URL>/`. The short
/// name alone is not enough: two remotes whose URLs end in `team.git` would share the folder,
/// and a pruning fetch from one would delete the other's refs. The URL hashed is the one
/// shown: changing the password in it keeps the folder.
fn tracking_prefix(remote: &Remote) -> String {
    format!(
        "refs/anvil-remote/{}-{}/",
        remote.name,
        short_hash(&remote.shown)
    )
}

/// Where an older anvil kept this remote's lines: named after the last part of the URL as
/// given (for `https://alice:TOKEN@host` that was the password) and the hash of the whole of
/// it. Emptied once the lines are fetched to [`tracking_prefix`].
fn legacy_tracking_prefix(remote: &Remote) -> String {
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

/// What a fetch found: the remote's lines anvil can read, and the refs it refused.
struct Fetched {
    lines: Vec<(LineRef, ObjectId)>,
    refused: Vec<Refused>,
}

/// Fetches the remote's lines into the remote's tracking folder ([`tracking_prefix`]); keeps
/// those that hold a debate (see the module's documentation) and names the others.
fn fetch(record: &Record, remote: &Remote) -> Result<Fetched, RemoteError> {
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

/// `LINE-from-SOURCE`, `LINE-from-SOURCE-2`, … cut to a valid line name.
fn beside_name(line: &str, source: &str, n: u32) -> String {
    let suffix = if n == 1 {
        format!("-from-{source}")
    } else {
        format!("-from-{source}-{n}")
    };
    let room = 100usize.saturating_sub(suffix.len());
    let base: String = line.chars().take(room).collect();
    format!("{}{suffix}", base.trim_end_matches(['.', '-']))
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

/// The first credential in what `tip` would send that the remote does not have (`theirs`:
/// the remote's tips), walking back from `tip` to a commit the remote has.
fn secret_in(
    record: &Record,
    line: &LineRef,
    tip: ObjectId,
    theirs: &std::collections::HashMap<LineRef, ObjectId>,
) -> Result<Option<RemoteError>, RemoteError> {
    let mut known = std::collections::HashSet::new();
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
    let mut seen_blobs = std::collections::HashSet::new();
    let mut next = Some(tip);
    while let Some(id) = next.filter(|id| !known.contains(id)) {
        let found = |place: String, kind| RemoteError::Secret {
            line: line.clone(),
            commit: id,
            place,
            kind,
        };
        let message = record.commit_message(id)?;
        if let Some(f) = crate::model::secrets::find(&message).first() {
            return Ok(Some(found("its message".to_owned(), f.kind)));
        }
        for (name, blob) in record.top_files(id)? {
            if !seen_blobs.insert(blob) {
                continue;
            }
            let bytes = record.blob(blob)?;
            if let Some(f) = crate::model::secrets::find(&String::from_utf8_lossy(&bytes)).first() {
                return Ok(Some(found(name, f.kind)));
            }
        }
        let mut buf = Vec::new();
        next = record.find_commit(id, &mut buf)?.parents().next();
    }
    Ok(None)
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
    let theirs: std::collections::HashMap<LineRef, ObjectId> = fetched.lines.into_iter().collect();
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
                let mut target = None;
                for n in 1..100 {
                    let name = beside_name(&line.line, &me, n);
                    let there = LineRef::new(&line.debate, &name);
                    match theirs.get(&there) {
                        None => {
                            target = Some((there, true));
                            break;
                        }
                        Some(&t) if record.is_ancestor(tip, t)? => {
                            target = Some((there, false));
                            break;
                        }
                        Some(&t) if record.is_ancestor(t, tip)? => {
                            target = Some((there, true));
                            break;
                        }
                        Some(_) => continue,
                    }
                }
                match target {
                    Some((there, true)) => {
                        specs.push(spec(&line, &there.line, tip));
                        synced.moved.push(Moved::KeptBeside(line, there));
                    }
                    _ => synced.unchanged += 1,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_beside_a_line_are_valid_line_names() {
        assert_eq!(beside_name("cost", "origin", 1), "cost-from-origin");
        assert_eq!(beside_name("cost", "origin", 3), "cost-from-origin-3");
        let long = "x".repeat(100);
        let name = beside_name(&long, "origin", 2);
        assert!(valid_name(&name), "{name}");
        assert_eq!(safe_name("Alice Smith"), Some("alice-smith".into()));
        assert_eq!(safe_name("--"), None);
        for name in ["cost-from-alice-smith", &beside_name("a.b", "x", 1)] {
            assert!(valid_name(name), "{name}");
        }
    }

    /// Credentials in a remote's URL are handed to git only: the URL shown, the name of the
    /// lines kept beside and the tracking folder hold neither user nor password.
    #[test]
    fn credentials_in_a_url_are_never_shown_nor_named() {
        let located = |given: &str| {
            let parsed = parse_location(given);
            Remote {
                url: given.to_owned(),
                shown: parsed.shown,
                name: parsed.name.unwrap_or_else(|| "remote".to_owned()),
                configured: false,
            }
        };
        for (given, shown, name) in [
            ("http://alice:TOKEN@host/x.git", "http://host/x.git", "x"),
            ("http://alice:TOKEN@host", "http://host/", "host"),
            (
                "https://TOKEN@git.example.com:8443/",
                "https://git.example.com:8443/",
                "git-example-com",
            ),
            (
                "https://x-access-token:TOKEN@github.com/team/billing.git",
                "https://github.com/team/billing.git",
                "billing",
            ),
            (
                "ssh://alice:TOKEN@host/srv/team.git",
                "ssh://host/srv/team.git",
                "team",
            ),
            (
                "git@github.com:team/billing.git",
                "github.com:team/billing.git",
                "billing",
            ),
            // Without credentials, a location is shown and named as it always was.
            ("/srv/git/shared.git/", "/srv/git/shared.git/", "shared"),
            ("../shared.git", "../shared.git", "shared"),
            (
                "git://127.0.0.1:9418/shared.git",
                "git://127.0.0.1:9418/shared.git",
                "shared",
            ),
            (
                "https://github.com/team/billing",
                "https://github.com/team/billing",
                "billing",
            ),
        ] {
            let remote = located(given);
            assert_eq!(remote.shown, shown, "{given}");
            assert_eq!(remote.name, name, "{given}");
            let debug = format!("{remote:?}");
            for place in [
                &remote.shown,
                &remote.name,
                &tracking_prefix(&remote),
                &debug,
            ] {
                assert!(!place.to_lowercase().contains("token"), "{given}: {place}");
            }
            assert!(!beside_name("main", &remote.name, 1).contains("token"));
        }
        // A URL without credentials keeps the tracking folder an older anvil gave it.
        let plain = located("/srv/git/shared.git");
        assert_eq!(tracking_prefix(&plain), legacy_tracking_prefix(&plain));
        let with_token = located("http://alice:TOKEN@host");
        assert!(legacy_tracking_prefix(&with_token).contains("token-host-"));
        assert_ne!(
            tracking_prefix(&with_token),
            legacy_tracking_prefix(&with_token)
        );
        assert_eq!(
            tracking_prefix(&with_token),
            tracking_prefix(&located("http://bob:OTHER@host")),
            "the folder does not change with the password"
        );
    }

    #[test]
    fn what_git_says_is_cleaned_of_credentials() {
        let remote = Remote {
            url: "https://alice:s3cret@host/x.git".to_owned(),
            shown: "https://host/x.git".to_owned(),
            name: "x".to_owned(),
            configured: false,
        };
        let said = "fatal: unable to access 'https://alice:s3cret@host/x.git/': no route; \
                    also tried https://TOKEN@mirror.example/x.git and ssh://u:p@h/y";
        let cleaned = remote.clean(said);
        assert_eq!(
            cleaned,
            "fatal: unable to access 'https://host/x.git/': no route; \
                    also tried https://mirror.example/x.git and ssh://h/y"
        );
        assert_eq!(
            without_credentials_in("no url here: a@b"),
            "no url here: a@b"
        );
        assert_eq!(without_credentials_in("http://"), "http://");
    }
}
