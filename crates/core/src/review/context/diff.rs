//! The diffs a debate can be about: the project's uncommitted changes (`--diff`), and a pull
//! request's change against its merge base (`--pr`), fetched from the project's remote. gix
//! reads the trees and writes the unified diff; the `git` binary does a pull request's transport.

use std::path::Path;

use super::{ContextError, text_of};

/// The project's uncommitted changes (staged, unstaged and untracked) against `HEAD`, as a
/// unified diff; binary files are named, not shown. Read with gix, no `git` binary needed.
pub(super) fn uncommitted_diff(project: &Path) -> Result<String, ContextError> {
    use gix::bstr::ByteSlice;

    let repo = gix::discover(project).map_err(|e| {
        ContextError::Diff(
            format!(
                "{} is not in a git repository ({e}); drop --diff or run it inside one",
                project.display()
            )
            .into(),
        )
    })?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| ContextError::Diff("the repository has no working tree".into()))?
        .to_owned();
    let tree = repo
        .head_tree_id_or_empty()
        .map_err(ContextError::diff)?
        .object()
        .map_err(ContextError::diff)?
        .into_tree();
    let mut paths: Vec<String> = Vec::new();
    let iter = repo
        .status(gix::progress::Discard)
        .map_err(ContextError::diff)?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .into_iter(None)
        .map_err(ContextError::diff)?;
    for item in iter {
        let item = item.map_err(ContextError::diff)?;
        let path = item.location().to_str_lossy().into_owned();
        if !path.starts_with(".anvil/") {
            paths.push(path);
        }
    }
    paths.sort();
    paths.dedup();
    let mut out = String::new();
    for path in paths {
        let old = match tree
            .lookup_entry_by_path(&path)
            .map_err(ContextError::diff)?
        {
            Some(entry) if entry.mode().is_blob() => {
                entry.object().map_err(ContextError::diff)?.detach().data
            }
            _ => Vec::new(),
        };
        let new = match std::fs::read(workdir.join(&path)) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(ContextError::diff(e)),
        };
        if old == new {
            continue;
        }
        out.push_str(&file_diff(&path, old, new).map_err(ContextError::diff)?);
    }
    Ok(out)
}

/// One file's change as a `diff --git` section (binary files are named, not shown).
fn file_diff(path: &str, old: Vec<u8>, new: Vec<u8>) -> Result<String, std::io::Error> {
    use gix::diff::blob::unified_diff::{ConsumeBinaryHunk, ContextSize};
    use gix::diff::blob::{Algorithm, InternedInput, UnifiedDiff};

    let (Some(old), Some(new)) = (text_of(old), text_of(new)) else {
        return Ok(format!("Binary file {path} changed\n"));
    };
    let input = InternedInput::new(old.as_str(), new.as_str());
    let diff = gix::diff::blob::diff_with_slider_heuristics(Algorithm::Histogram, &input);
    let hunks = UnifiedDiff::new(
        &diff,
        &input,
        ConsumeBinaryHunk::new(String::new(), "\n"),
        ContextSize::symmetrical(3),
    )
    .consume()?;
    let from = if old.is_empty() {
        "/dev/null".to_owned()
    } else {
        format!("a/{path}")
    };
    let to = if new.is_empty() {
        "/dev/null".to_owned()
    } else {
        format!("b/{path}")
    };
    Ok(format!(
        "diff --git a/{path} b/{path}\n--- {from}\n+++ {to}\n{hunks}"
    ))
}

/// A pull request's changes, as [`pull_request_diff`] finds them.
#[derive(Debug, Clone)]
pub(super) struct PullRequest {
    /// The remote it came from (`origin`, or `upstream` in a fork's clone).
    pub remote: String,
    /// The remote ref it was found under (`refs/pull/N/head`, …).
    pub reference: String,
    pub head: gix::ObjectId,
    /// The remote's default branch (`main`, …).
    pub base_branch: String,
    pub merge_base: gix::ObjectId,
    /// Unified diff from the merge base to the pull request's head.
    pub patch: String,
}

/// Fetches pull request `n` from the project's remote as forges publish it
/// (`refs/pull/N/head` on GitHub-style forges, `refs/merge-requests/N/head` on GitLab-style
/// ones) together with the remote's default branch, and diffs it against their merge base.
///
/// The remote is `origin`, then `upstream` when `origin` does not have it (a fork's clone:
/// pull requests live on the repository it was forked from); a project with neither but
/// exactly one remote uses that one.
///
/// The `git` binary does the transport (`ls-remote`, then `fetch` of the two commits, no ref
/// written in the project); gix finds the merge base and makes the diff.
pub(super) fn pull_request_diff(project: &Path, n: u32) -> Result<PullRequest, ContextError> {
    let git = crate::record::git::Git::find().ok_or_else(|| {
        ContextError::pr("fetching a pull request needs the `git` binary on the PATH")
    })?;
    let run = |args: &[&str]| -> Result<String, ContextError> {
        git.project(project)
            .args(args)
            .output()
            .map_err(ContextError::pr)
    };
    let repo = gix::discover(project).map_err(|_| {
        ContextError::pr(format!(
            "{} is not in a git repository: pull request {n} is fetched from its remote",
            project.display()
        ))
    })?;
    let tried = remotes_to_try(&run, n)?;
    let listed = list_pull_request(&run, &tried, n)?;
    run(&[
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        &listed.remote,
        &listed.head,
        &listed.base,
    ])?;

    let id = |hex: &str| gix::ObjectId::from_hex(hex.as_bytes()).map_err(ContextError::pr);
    let (head, base) = (id(&listed.head)?, id(&listed.base)?);
    let merge_base = merge_base(&repo, head, base)?.ok_or_else(|| {
        ContextError::pr(format!(
            "pull request {n} shares no history with {}",
            listed.base_branch
        ))
    })?;
    let patch = patch_between(&repo, merge_base, head)?;
    Ok(PullRequest {
        remote: listed.remote,
        reference: listed.reference,
        head,
        base_branch: listed.base_branch,
        merge_base,
        patch,
    })
}

/// The remotes a pull request is looked for on, in order: `origin`, then `upstream`; else the
/// project's only remote.
fn remotes_to_try(
    run: &dyn Fn(&[&str]) -> Result<String, ContextError>,
    n: u32,
) -> Result<Vec<String>, ContextError> {
    let remotes = run(&["remote"])?;
    let remotes: Vec<&str> = remotes.lines().map(str::trim).collect();
    let tried: Vec<String> = ["origin", "upstream"]
        .into_iter()
        .filter(|r| remotes.contains(r))
        .map(str::to_owned)
        .collect();
    if !tried.is_empty() {
        return Ok(tried);
    }
    match remotes.as_slice() {
        [only] => Ok(vec![(*only).to_owned()]),
        [] => Err(ContextError::pr(format!(
            "the project has no git remote to fetch pull request {n} from \
             (add one: git remote add origin URL)"
        ))),
        _ => Err(ContextError::pr(format!(
            "the project has no remote 'origin' or 'upstream' to fetch pull request \
             {n} from, and several others ({}); name one of them origin",
            remotes.join(", ")
        ))),
    }
}

/// Where pull request `n` was found: on which remote, under which ref, its head commit, and
/// the remote's default branch and its commit.
struct Listed {
    remote: String,
    reference: String,
    head: String,
    base_branch: String,
    base: String,
}

/// Asks each remote of `tried` in turn (`git ls-remote`) for pull request `n` and its default
/// branch; the first that has it answers.
fn list_pull_request(
    run: &dyn Fn(&[&str]) -> Result<String, ContextError>,
    tried: &[String],
    n: u32,
) -> Result<Listed, ContextError> {
    let candidates = [
        format!("refs/pull/{n}/head"),
        format!("refs/merge-requests/{n}/head"),
    ];
    for remote in tried {
        let listed = run(&[
            "ls-remote",
            "--symref",
            remote,
            "HEAD",
            &candidates[0],
            &candidates[1],
        ])?;
        let listing = Listing::parse(&listed, &candidates);
        let Some((reference, head)) = listing.head else {
            continue;
        };
        let base = listing.base.ok_or_else(|| {
            ContextError::pr(format!("the remote '{remote}' has no default branch"))
        })?;
        let base_branch = listing
            .base_ref
            .as_deref()
            .map(|r| r.strip_prefix("refs/heads/").unwrap_or(r).to_owned())
            .unwrap_or_else(|| "HEAD".to_owned());
        return Ok(Listed {
            remote: remote.clone(),
            reference,
            head,
            base_branch,
            base,
        });
    }
    Err(ContextError::pr(format!(
        "no pull request {n} on {} (looked for {} and {})",
        tried.join(" or "),
        candidates[0],
        candidates[1]
    )))
}

/// The unified diff of every file that differs between the trees of `from` and `to`.
fn patch_between(
    repo: &gix::Repository,
    from: gix::ObjectId,
    to: gix::ObjectId,
) -> Result<String, ContextError> {
    let old = blobs(repo, from)?;
    let new = blobs(repo, to)?;
    let mut paths: Vec<&String> = old.keys().chain(new.keys()).collect();
    paths.sort();
    paths.dedup();
    let read = |id: Option<&gix::ObjectId>| -> Result<Vec<u8>, ContextError> {
        match id {
            Some(id) => Ok(repo
                .find_object(*id)
                .map_err(ContextError::pr)?
                .detach()
                .data),
            None => Ok(Vec::new()),
        }
    };
    let mut patch = String::new();
    for path in paths {
        let (a, b) = (old.get(path), new.get(path));
        if a == b {
            continue;
        }
        patch.push_str(&file_diff(path, read(a)?, read(b)?).map_err(ContextError::pr)?);
    }
    Ok(patch)
}

/// What `git ls-remote --symref REMOTE HEAD CANDIDATES…` says about a pull request.
struct Listing {
    /// The first candidate ref listed, and the commit it names.
    head: Option<(String, String)>,
    /// The branch the remote's `HEAD` points at (`refs/heads/main`).
    base_ref: Option<String>,
    /// The commit of the remote's `HEAD`.
    base: Option<String>,
}

impl Listing {
    fn parse(listed: &str, candidates: &[String]) -> Listing {
        let mut listing = Listing {
            head: None,
            base_ref: None,
            base: None,
        };
        for line in listed.lines() {
            if let Some(rest) = line.strip_prefix("ref: ") {
                if let Some((target, "HEAD")) = rest.split_once('\t') {
                    listing.base_ref = Some(target.to_owned());
                }
                continue;
            }
            let Some((id, name)) = line.split_once('\t') else {
                continue;
            };
            if name == "HEAD" {
                listing.base = Some(id.to_owned());
            } else if listing.head.is_none() && candidates.iter().any(|c| c == name) {
                listing.head = Some((name.to_owned(), id.to_owned()));
            }
        }
        listing
    }
}

/// The nearest common ancestor of `a` and `b`: every ancestor of `b`, then `a`'s ancestors
/// breadth first until one of them is among those.
fn merge_base(
    repo: &gix::Repository,
    a: gix::ObjectId,
    b: gix::ObjectId,
) -> Result<Option<gix::ObjectId>, ContextError> {
    let parents = |id: gix::ObjectId| -> Result<Vec<gix::ObjectId>, ContextError> {
        let commit = repo
            .find_commit(id)
            .map_err(|e| ContextError::PullRequest(e.into()))?;
        Ok(commit.parent_ids().map(|p| p.detach()).collect())
    };
    let mut of_b = std::collections::HashSet::new();
    let mut stack = vec![b];
    while let Some(id) = stack.pop() {
        if of_b.insert(id) {
            stack.extend(parents(id)?);
        }
    }
    let mut queue = std::collections::VecDeque::from([a]);
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = queue.pop_front() {
        if of_b.contains(&id) {
            return Ok(Some(id));
        }
        if seen.insert(id) {
            queue.extend(parents(id)?);
        }
    }
    Ok(None)
}

/// Every blob of `commit`'s tree by path.
fn blobs(
    repo: &gix::Repository,
    commit: gix::ObjectId,
) -> Result<std::collections::BTreeMap<String, gix::ObjectId>, ContextError> {
    use gix::bstr::ByteSlice;
    let tree = repo
        .find_commit(commit)
        .map_err(ContextError::pr)?
        .tree_id()
        .map_err(ContextError::pr)?
        .detach();
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![(String::new(), tree)];
    while let Some((prefix, id)) = stack.pop() {
        let tree = repo.find_tree(id).map_err(ContextError::pr)?;
        for entry in tree.iter() {
            let entry = entry.map_err(ContextError::pr)?;
            let path = format!("{prefix}{}", entry.filename().to_str_lossy());
            if entry.mode().is_tree() {
                stack.push((format!("{path}/"), entry.oid().to_owned()));
            } else if entry.mode().is_blob() {
                out.insert(path, entry.oid().to_owned());
            }
        }
    }
    Ok(out)
}
