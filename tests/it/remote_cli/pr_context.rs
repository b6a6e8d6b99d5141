//! `anvil pr`: the context of a pull request is exactly its change against the merge base,
//! fetched from `origin` or, in a fork's clone, from `upstream`.

use std::path::{Path, PathBuf};

use crate::support::anvil::{Project, git_in as git};
use crate::support::snap::Filters;

use super::clone;

/// A remote whose `refs/pull/7/head` changes `a.txt` and adds `b.txt` on top of `main`'s
/// first commit, while `main` has moved on (adding `c.txt`) since.
fn remote_with_pull_request(dir: &Path) -> PathBuf {
    let bare = dir.join("forge.git");
    git(
        dir,
        &["init", "--quiet", "--bare", "-b", "main", "forge.git"],
    );
    let work = dir.join("work");
    git(dir, &["init", "--quiet", "-b", "main", "work"]);
    std::fs::write(work.join("a.txt"), "one\n").unwrap();
    git(&work, &["add", "a.txt"]);
    git(&work, &["commit", "--quiet", "-m", "base"]);
    git(&work, &["checkout", "--quiet", "-b", "feature"]);
    std::fs::write(work.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(work.join("b.txt"), "new file\n").unwrap();
    git(&work, &["add", "a.txt", "b.txt"]);
    git(&work, &["commit", "--quiet", "-m", "the change"]);
    git(&work, &["checkout", "--quiet", "main"]);
    std::fs::write(work.join("c.txt"), "main moved on\n").unwrap();
    git(&work, &["add", "c.txt"]);
    git(&work, &["commit", "--quiet", "-m", "later on main"]);
    let url = bare.to_str().unwrap();
    git(
        &work,
        &["push", "--quiet", url, "main", "feature:refs/pull/7/head"],
    );
    bare
}

#[test]
fn pr_context_holds_exactly_the_pull_requests_change_against_the_merge_base() {
    let dir = tempfile::tempdir().unwrap();
    let bare = remote_with_pull_request(dir.path());
    let project = clone(bare.to_str().unwrap(), "Reviewer");
    let started = project.start(&["Should we merge it?", "--pr", "7"]);
    let patch = project.git(&[
        "show",
        &format!("refs/anvil/{}/main:context/pr-7.patch", started.debate),
    ]);
    let files: Vec<&str> = patch
        .lines()
        .filter(|l| l.starts_with("diff --git"))
        .collect();
    assert_eq!(
        files,
        ["diff --git a/a.txt b/a.txt", "diff --git a/b.txt b/b.txt"],
        "{patch}"
    );
    // The change of the pull request alone: nothing of what main did since.
    insta::assert_snapshot!("pr_7_patch", patch);
    assert!(
        started.prompt.contains("+two"),
        "the debaters see it: {}",
        started.prompt
    );
    // The project's own refs are untouched: nothing was written but objects.
    let refs = git(project.path(), &["for-each-ref", "--format=%(refname)"]);
    assert!(!refs.contains("pull"), "{refs}");
}

/// A fork's clone: `origin` is the fork (no pull requests), `upstream` the forge's repository
/// where pull request 7 lives.
#[test]
fn pr_missing_on_origin_is_fetched_from_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let forge = remote_with_pull_request(dir.path());
    let fork = dir.path().join("fork.git");
    git(
        dir.path(),
        &[
            "clone",
            "--quiet",
            "--bare",
            forge.to_str().unwrap(),
            fork.to_str().unwrap(),
        ],
    );
    // A bare clone takes the branches only: the fork has no pull request refs.
    assert_eq!(git(&fork, &["for-each-ref", "refs/pull"]), "");
    let project = clone(fork.to_str().unwrap(), "Reviewer");
    git(
        project.path(),
        &["remote", "add", "upstream", forge.to_str().unwrap()],
    );
    let started = project.start(&["Should we merge it?", "--pr", "7"]);
    let patch = project.git(&[
        "show",
        &format!("refs/anvil/{}/main:context/pr-7.patch", started.debate),
    ]);
    insta::assert_snapshot!("pr_7_patch", patch);
    assert!(
        started.prompt.contains("upstream refs/pull/7/head"),
        "says where it came from: {}",
        started.prompt
    );
    // Neither has pull request 8: the error names both.
    let run = project.anvil(&["start", "Should we merge it?", "--pr", "8"]);
    assert_ne!(run.code, Some(0), "{}", run.describe());
    insta::assert_snapshot!(
        "pr_8_on_neither_remote",
        Filters::of(&project)
            .path(dir.path(), "[remotes]")
            .redact(&run.stderr)
    );
}

#[test]
fn pr_outside_a_repository_or_without_a_remote_says_what_is_missing() {
    let project = Project::new();
    let run = project.anvil(&["start", "Should we merge it?", "--pr", "3"]);
    assert_ne!(run.code, Some(0), "{}", run.describe());
    insta::assert_snapshot!(
        "pr_outside_a_repository",
        Filters::of(&project).redact(&run.stderr)
    );
    git(project.path(), &["init", "--quiet"]);
    let run = project.anvil(&["start", "Should we merge it?", "--pr", "3"]);
    assert_ne!(run.code, Some(0), "{}", run.describe());
    insta::assert_snapshot!(
        "pr_without_a_remote",
        Filters::of(&project).redact(&run.stderr)
    );
    let debates = project.anvil_home().join("debates");
    assert!(std::fs::read_dir(&debates).map_or(true, |mut d| d.next().is_none()));
}

#[test]
fn pr_that_the_remote_does_not_have_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bare = remote_with_pull_request(dir.path());
    let project = clone(bare.to_str().unwrap(), "Reviewer");
    let run = project.anvil(&["start", "Should we merge it?", "--pr", "8"]);
    assert_ne!(run.code, Some(0), "{}", run.describe());
    insta::assert_snapshot!(
        "pr_8_not_on_the_remote",
        Filters::of(&project)
            .path(dir.path(), "[remotes]")
            .redact(&run.stderr)
    );
    // Nothing was started.
    let debates = project.anvil_home().join("debates");
    assert!(std::fs::read_dir(&debates).map_or(true, |mut d| d.next().is_none()));
}
