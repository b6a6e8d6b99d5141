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
//!
//! `location` reads where a remote is and keeps its credentials out of sight, `fetch` brings
//! its lines into the remote's tracking folder, `pull` and `push` move the lines each way.

mod fetch;
mod location;
mod pull;
mod push;

use gix::ObjectId;

use crate::home::LineRef;
use crate::record::git::GitError;
use crate::record::store::RecordError;

pub use location::{Remote, find};
pub use pull::pull;
pub use push::push;

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
        /// Where in the commit, after its phase when it records one: `phase critic of round 1,
        /// its trailer Anvil-Seat-Fallback`, `its subject`, `its file NAME`.
        place: String,
        kind: &'static str,
    },
    #[error("{source}\n(the remote moved meanwhile? `anvil pull`, then push again)")]
    Push {
        #[source]
        source: GitError,
    },
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

#[cfg(test)]
mod tests {
    use super::location::safe_name;
    use super::*;
    use crate::record::store::valid_name;

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
}
