//! The material a debate is about: code (`--context`, `--diff`) and earlier results
//! (`--follow-up`, `--versus`), gathered once by `anvil start`, never by the Stop hook.
//!
//! It is kept twice: file by file under `context/` in the debate's first commit, so a replay
//! or a branch sees exactly what the debaters saw, and as one bundle (`context.md` in the
//! debate's folder) that full prompts carry and later prompts point to. The bundle is bounded:
//! what does not fit is cut or left out, and its index says so.

use std::path::{Component, Path, PathBuf};

use crate::home::Home;
use crate::model::state::Inputs;

/// The most material a debate carries, in bytes (about 30k tokens).
pub const MAX_BYTES: usize = 128 * 1024;
/// A file cut to fit keeps at least this much; below it the file is left out instead.
const MIN_PIECE: usize = 2 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--{option} {name}: {message}")]
    Source {
        option: &'static str,
        name: String,
        message: String,
    },
    /// The record could not be read for an earlier debate named by `--follow-up`/`--versus`.
    #[error("--{option} {name}: {source}")]
    Record {
        option: &'static str,
        name: String,
        #[source]
        source: crate::record::store::RecordError,
    },
    #[error("--{option} {name}: {source}")]
    State {
        option: &'static str,
        name: String,
        #[source]
        source: crate::model::state::StateError,
    },
    /// What went wrong making the diff: gix's error, or anvil's own words.
    #[error("--diff: {0}")]
    Diff(Box<dyn std::error::Error + Send + Sync>),
    /// What went wrong fetching the pull request: git's or gix's error, or anvil's own words.
    #[error("--pr: {0}")]
    PullRequest(Box<dyn std::error::Error + Send + Sync>),
    #[error("--context {path}: {message}")]
    Walk { path: String, message: String },
}

impl ContextError {
    fn diff(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ContextError {
        ContextError::Diff(e.into())
    }

    fn pr(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ContextError {
        ContextError::PullRequest(e.into())
    }
}

/// The debate's material, ready to record and to show.
#[derive(Debug, Clone, Default)]
pub struct Material {
    /// Files for the first commit, by path in its tree (all under `context/`).
    pub files: Vec<(String, Vec<u8>)>,
    /// The bundle that prompts carry.
    pub bundle: String,
    /// What was cleaned of credentials on the way in (each piece as it was read).
    pub intake: crate::model::secrets::Intake,
}

/// Where the bundle of `debate` lives: next to its lines, shared by all of them.
pub(crate) fn bundle_path(home: &Home, debate: &str) -> PathBuf {
    home.context_path(debate)
}

/// One piece of material before the budget is applied.
struct Piece {
    /// Path under `context/` in the record.
    record_path: String,
    /// Heading in the bundle.
    title: String,
    /// Fence language hint.
    lang: String,
    text: String,
}

/// The earlier results that `--follow-up` and `--versus` name, read by
/// [`crate::review::earlier::read`]: each as (what was named, its text).
#[derive(Debug, Clone, Default)]
pub struct Earlier {
    pub follow_up: Option<(String, String)>,
    pub versus: Vec<(String, String)>,
    /// The recalled conclusions (`inputs.recalled`), as one markdown text.
    pub recalled: Option<String>,
}

/// Gathers everything `inputs` names, with the `earlier` results it names already read.
/// Relative paths are found from `cwd`; file names in the record are relative to the project
/// when the file is inside it.
pub fn gather(
    home: &Home,
    cwd: &Path,
    inputs: &Inputs,
    earlier: Earlier,
    budget: usize,
) -> Result<Material, ContextError> {
    if inputs.is_empty() {
        return Ok(Material::default());
    }
    let mut pieces = Vec::new();
    let mut skipped = Vec::new();
    if let Some((source, text)) = earlier.follow_up {
        pieces.push(Piece {
            record_path: "follow-up.md".into(),
            title: format!("Previous report ({source})"),
            lang: "markdown".into(),
            text,
        });
    }
    if let Some(text) = earlier.recalled {
        pieces.push(Piece {
            record_path: "recalled.md".into(),
            title: "Earlier conclusions of this project, recalled for this question".into(),
            lang: "markdown".into(),
            text,
        });
    }
    for (label, (source, text)) in ["a", "b"].iter().zip(earlier.versus) {
        pieces.push(Piece {
            record_path: format!("versus-{label}.md"),
            title: format!("Result {} ({source})", label.to_uppercase()),
            lang: "markdown".into(),
            text,
        });
    }
    if inputs.diff {
        let patch = uncommitted_diff(home.project())?;
        pieces.push(Piece {
            record_path: "diff.patch".into(),
            title: "Uncommitted changes (git diff against HEAD)".into(),
            lang: "diff".into(),
            text: if patch.is_empty() {
                "(no uncommitted changes)\n".into()
            } else {
                patch
            },
        });
    }
    if let Some(n) = inputs.pr {
        let pr = pull_request_diff(home.project(), n)?;
        pieces.push(Piece {
            record_path: format!("pr-{n}.patch"),
            title: format!(
                "Pull request #{n} ({} {} at {}, against {} from their merge base {})",
                pr.remote,
                pr.reference,
                &pr.head.to_string()[..12],
                pr.base_branch,
                &pr.merge_base.to_string()[..12]
            ),
            lang: "diff".into(),
            text: if pr.patch.is_empty() {
                "(the pull request changes nothing)\n".into()
            } else {
                pr.patch
            },
        });
    }
    let mut seen = std::collections::HashSet::new();
    for given in &inputs.context {
        for path in walk(cwd, given)? {
            if !seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())) {
                continue;
            }
            let bytes = std::fs::read(&path).map_err(|source| ContextError::Read {
                path: path.clone(),
                source,
            })?;
            let name = display_name(home.project(), cwd, &path);
            match text_of(bytes) {
                Some(text) => pieces.push(Piece {
                    record_path: format!("files/{name}"),
                    lang: lang_of(&name),
                    title: name,
                    text,
                }),
                None => skipped.push(format!("{name} (binary)")),
            }
        }
    }
    // Each piece enters anvil here: cleaned before the budget cuts it (a private key cut in
    // half is still one) and before it is recorded, bundled or shown.
    let mut intake = crate::model::secrets::Intake::new(home.root());
    for piece in &mut pieces {
        let place = match piece.record_path.strip_prefix("files/") {
            Some(name) => format!("--context {name}"),
            None => piece.title.clone(),
        };
        intake.clean_in_place(&place, &mut piece.text);
    }
    let mut material = assemble(pieces, skipped, budget);
    material.intake = intake;
    Ok(material)
}

/// Applies the budget in order (earlier results first, then the diff, then files), and writes
/// the index that says what was cut.
fn assemble(pieces: Vec<Piece>, mut skipped: Vec<String>, budget: usize) -> Material {
    let mut left = budget;
    let mut included = Vec::new();
    let mut cut = Vec::new();
    for mut piece in pieces {
        let size = piece.text.len();
        if size <= left {
            left -= size;
        } else if left >= MIN_PIECE {
            let keep = floor_line(&piece.text, left);
            piece.text.truncate(keep);
            piece.text.push_str(&format!(
                "\n[… cut by anvil: {keep} of {size} bytes kept]\n"
            ));
            cut.push(format!("{} (cut to {keep} of {size} bytes)", piece.title));
            left = 0;
        } else {
            skipped.push(format!(
                "{} ({size} bytes, over the size limit)",
                piece.title
            ));
            continue;
        }
        included.push(piece);
    }
    let mut index = String::from("# Material given to the debaters\n\n");
    for p in &included {
        index.push_str(&format!("- {} — `context/{}`\n", p.title, p.record_path));
    }
    if !cut.is_empty() || !skipped.is_empty() {
        index.push_str(&format!(
            "\nThe material is limited to {budget} bytes; anvil cut or left out:\n"
        ));
        for c in cut.iter().chain(&skipped) {
            index.push_str(&format!("- {c}\n"));
        }
    }
    let mut bundle = index.clone();
    let mut files = vec![("context/README.md".to_owned(), index.into_bytes())];
    for p in included {
        let fence = fence_for(&p.text);
        bundle.push_str(&format!(
            "\n## {}\n\n{fence}{}\n{}{}{fence}\n",
            p.title,
            p.lang,
            p.text,
            if p.text.ends_with('\n') { "" } else { "\n" }
        ));
        files.push((format!("context/{}", p.record_path), p.text.into_bytes()));
    }
    Material {
        files,
        bundle,
        intake: Default::default(),
    }
}

/// The largest prefix of `text` of at most `max` bytes that ends at a line break (or a char
/// boundary, for a text without one).
fn floor_line(text: &str, max: usize) -> usize {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(i) if i > 0 => i + 1,
        _ => end,
    }
}

/// A backtick fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn lang_of(name: &str) -> String {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_owned()
}

/// Text, or `None` for a binary file (a NUL byte, or not UTF-8).
fn text_of(bytes: Vec<u8>) -> Option<String> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// The files of one `--context` argument, sorted: a file as it is (even if ignored, since it
/// was named), a directory walked with `.gitignore`, `.ignore` and hidden files respected.
fn walk(cwd: &Path, given: &str) -> Result<Vec<PathBuf>, ContextError> {
    let root = cwd.join(given);
    if root.is_file() {
        return Ok(vec![root]);
    }
    if !root.is_dir() {
        return Err(ContextError::Walk {
            path: given.to_owned(),
            message: "no such file or directory".into(),
        });
    }
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(&root)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".anvil" && e.file_name() != ".git")
        .build();
    for entry in walker {
        let entry = entry.map_err(|e| ContextError::Walk {
            path: given.to_owned(),
            message: e.to_string(),
        })?;
        if entry.file_type().is_some_and(|t| t.is_file()) {
            out.push(entry.into_path());
        }
    }
    out.sort();
    Ok(out)
}

/// `src/lib.rs` for a file in the project; otherwise its path with only normal components.
fn display_name(project: &Path, cwd: &Path, path: &Path) -> String {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
    let path = canonical(path);
    let rel = path
        .strip_prefix(canonical(project))
        .or_else(|_| path.strip_prefix(canonical(cwd)))
        .unwrap_or(&path);
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The project's uncommitted changes (staged, unstaged and untracked) against `HEAD`, as a
/// unified diff; binary files are named, not shown. Read with gix, no `git` binary needed.
pub(crate) fn uncommitted_diff(project: &Path) -> Result<String, ContextError> {
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
pub(crate) struct PullRequest {
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
pub(crate) fn pull_request_diff(project: &Path, n: u32) -> Result<PullRequest, ContextError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(name: &str, text: &str) -> Piece {
        Piece {
            record_path: format!("files/{name}"),
            title: name.into(),
            lang: String::new(),
            text: text.into(),
        }
    }

    #[test]
    fn budget_cuts_at_a_line_and_says_what_was_cut() {
        let big = "line of text\n".repeat(400); // 5200 bytes
        let m = assemble(
            vec![
                piece("a.rs", "fn a() {}\n"),
                piece("b.rs", &big),
                piece("c.rs", "c\n"),
            ],
            vec!["logo.png (binary)".into()],
            4096,
        );
        let paths: Vec<&str> = m.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "context/README.md",
                "context/files/a.rs",
                "context/files/b.rs"
            ]
        );
        let b = String::from_utf8(m.files[2].1.clone()).unwrap();
        assert!(b.contains("[… cut by anvil"), "{b}");
        assert!(b.lines().rev().nth(1).unwrap().is_empty() || b.contains("line of text\n\n["));
        assert!(m.bundle.contains("b.rs (cut to"), "{}", m.bundle);
        assert!(
            m.bundle.contains("c.rs (2 bytes, over the size limit)"),
            "{}",
            m.bundle
        );
        assert!(m.bundle.contains("logo.png (binary)"), "{}", m.bundle);
    }

    #[test]
    fn fences_outgrow_backticks_in_the_text() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```rust\n``` b"), "````");
    }

    #[test]
    fn binary_files_are_not_text() {
        assert!(text_of(b"a\0b".to_vec()).is_none());
        assert!(text_of(vec![0xff, 0xfe]).is_none());
        assert_eq!(text_of(b"ok".to_vec()).as_deref(), Some("ok"));
    }
}
