//! `anvil push` / `anvil pull` against real remotes on this machine: a bare repository by path
//! (the clones' `origin`) and a `git daemon` on 127.0.0.1. Two clones debate, branch the same
//! debate to the same line name, and push and pull both ways.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::json;

use crate::support::anvil::{Project, Run, find_tag, git_in as git};

const ALICE: &str = "aaaaaaaa-1111-4111-8111-111111111111";

/// A bare remote that checks every object it receives, with a branch and a tag of the
/// project's own; returns its path and its refs outside `refs/anvil/`.
fn remote(dir: &Path) -> (PathBuf, String) {
    let bare = dir.join("shared.git");
    git(dir, &["init", "--quiet", "--bare", "shared.git"]);
    git(&bare, &["config", "receive.fsckObjects", "true"]);
    let seed = dir.join("seed");
    git(dir, &["init", "--quiet", "-b", "main", "seed"]);
    std::fs::write(seed.join("README"), "the project\n").unwrap();
    git(&seed, &["add", "README"]);
    git(&seed, &["commit", "--quiet", "-m", "first"]);
    git(&seed, &["tag", "v1"]);
    git(
        &seed,
        &["push", "--quiet", bare.to_str().unwrap(), "main", "v1"],
    );
    let refs = project_refs(&bare);
    (bare, refs)
}

/// The remote's refs that are not anvil's.
fn project_refs(bare: &Path) -> String {
    git(bare, &["for-each-ref", "--format=%(refname) %(objectname)"])
        .lines()
        .filter(|l| !l.starts_with("refs/anvil/"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn anvil_refs(bare: &Path) -> Vec<String> {
    git(
        bare,
        &["for-each-ref", "--format=%(refname)", "refs/anvil/"],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// A clone of `url` with anvil initialised, its git user named `who`.
fn clone(url: &str, who: &str) -> Project {
    let project = Project::empty();
    git(project.path(), &["clone", "--quiet", url, "."]);
    git(project.path(), &["config", "user.name", who]);
    project.anvil(&["init"]).ok();
    project
}

/// A finished 2-round debate started in `project`; returns its id.
fn debate(project: &Project) -> String {
    let out = project
        .command(&["start", "Should we share debates?", "--rounds", "2"])
        .env("CLAUDE_CODE_SESSION_ID", ALICE)
        .output()
        .unwrap();
    assert!(out.status.success());
    let prompt = String::from_utf8_lossy(&out.stdout).into_owned();
    let id = prompt
        .split("[anvil ")
        .nth(1)
        .and_then(|s| s.split('@').next())
        .expect("a tag")
        .to_owned();
    for text in [
        "For.",
        "Against.",
        "For again.",
        "Against again.",
        "Sharing wins.",
    ] {
        project
            .hook(&json!({
                "session_id": ALICE,
                "cwd": project.path(),
                "hook_event_name": "Stop",
                "stop_hook_active": true,
                "last_assistant_message": text,
            }))
            .ok();
    }
    id
}

fn tip(project: &Project, debate: &str, line: &str) -> String {
    project
        .git(&["rev-parse", &format!("refs/anvil/{debate}/{line}")])
        .trim()
        .to_owned()
}

/// Two clones of the remote at `url_a` / `url_b` (what each passes to push and pull; `None`:
/// the default, the clone's `origin`) exchange debates both ways.
fn exchange(bare: &Path, clone_url: &str, remote_arg: Option<&str>, project_refs_before: &str) {
    let alice = clone(clone_url, "Alice");
    let bob = clone(clone_url, "Bob");
    let with_remote = |verb: &str| -> Vec<String> {
        let mut args = vec![verb.to_owned()];
        args.extend(remote_arg.map(str::to_owned));
        args
    };
    let run = |p: &Project, args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        p.anvil(&args).ok()
    };

    let id = debate(&alice);
    run(&alice, &with_remote("push"));
    assert_eq!(anvil_refs(bare), [format!("refs/anvil/{id}/main")]);

    run(&bob, &with_remote("pull"));
    assert_eq!(tip(&bob, &id, "main"), tip(&alice, &id, "main"));
    // Both branch the same debate to the same line name, with different steering.
    alice
        .anvil(&[
            "branch",
            "--from",
            &format!("{id}@main:round-1"),
            "--steer",
            "Think of cost.",
            "--name",
            "cost",
        ])
        .ok();
    bob.anvil(&[
        "branch",
        "--from",
        &format!("{id}@main:round-1"),
        "--steer",
        "Think of the cost of people.",
        "--name",
        "cost",
    ])
    .ok();
    let (alice_cost, bob_cost) = (tip(&alice, &id, "cost"), tip(&bob, &id, "cost"));
    assert_ne!(alice_cost, bob_cost);

    run(&alice, &with_remote("push"));
    let pushed = run(&bob, &with_remote("push"));
    assert!(
        pushed.stdout.contains(&format!("{id}@cost-from-bob")),
        "bob's diverged line goes beside alice's: {}",
        pushed.describe()
    );
    let pulled = run(&bob, &with_remote("pull"));
    assert!(
        pulled.stdout.contains("cost-from-"),
        "{}",
        pulled.describe()
    );
    run(&alice, &with_remote("pull"));
    // A second round changes nothing.
    for p in [&alice, &bob] {
        let again = run(p, &with_remote("pull"));
        assert!(
            again.stderr.contains("0 lines moved"),
            "{}",
            again.describe()
        );
        let again = run(p, &with_remote("push"));
        assert!(
            again.stderr.contains("0 lines moved"),
            "{}",
            again.describe()
        );
    }

    // Nothing lost, both lines everywhere, under names that say where they came from.
    let kept = if remote_arg.is_some() {
        "cost-from-shared"
    } else {
        "cost-from-origin"
    };
    assert_eq!(tip(&alice, &id, "cost"), alice_cost);
    assert_eq!(tip(&alice, &id, "cost-from-bob"), bob_cost);
    assert_eq!(tip(&bob, &id, "cost"), bob_cost);
    assert_eq!(tip(&bob, &id, kept), alice_cost);
    let mut on_remote = anvil_refs(bare);
    on_remote.sort();
    assert_eq!(
        on_remote,
        [
            format!("refs/anvil/{id}/cost"),
            format!("refs/anvil/{id}/cost-from-bob"),
            format!("refs/anvil/{id}/main"),
        ]
    );
    assert_eq!(
        git(bare, &["rev-parse", &format!("refs/anvil/{id}/cost")]).trim(),
        alice_cost
    );
    for p in [&alice, &bob] {
        let log = p.anvil(&["log", &id]).ok().stdout;
        assert!(log.contains("cost") && log.contains("cost-from-"), "{log}");
        p.assert_fsck_clean();
    }
    // No branch or tag of the project moved on the remote.
    assert_eq!(project_refs(bare), project_refs_before);
    git(bare, &["fsck", "--strict", "--no-dangling"]);

    // The pulled line reads, diffs, reports and resumes like a local one.
    bob.anvil(&["show", &format!("{id}@{kept}")]).ok();
    let diff = bob
        .anvil(&["diff", &format!("{id}@cost"), &format!("{id}@{kept}")])
        .ok()
        .stdout;
    assert!(
        diff.contains("cost of people") || diff.contains("Think of cost"),
        "{diff}"
    );
    bob.anvil(&["report", &id]).ok();
    let resumed = bob.anvil(&["resume", &format!("{id}@{kept}")]).ok();
    assert!(
        resumed.stdout.contains(&format!("{id}@{kept}")),
        "{}",
        resumed.describe()
    );
    let status = bob.anvil(&["status"]).ok().stdout;
    assert!(status.contains(&format!("{id}@{kept}")), "{status}");
}

#[test]
fn push_and_pull_through_a_bare_repository_by_path_keep_both_diverged_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (bare, before) = remote(dir.path());
    exchange(&bare, bare.to_str().unwrap(), None, &before);
}

/// A `git daemon` serving a folder on 127.0.0.1, stopped when dropped.
struct Daemon {
    child: Child,
    port: u16,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn daemon(base: &Path) -> Daemon {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("git")
        .args([
            "daemon",
            "--export-all",
            "--enable=receive-pack",
            "--reuseaddr",
            "--listen=127.0.0.1",
            &format!("--port={port}"),
            &format!("--base-path={}", base.display()),
        ])
        .arg(base)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start git daemon");
    let daemon = Daemon { child, port };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "git daemon did not listen"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    daemon
}

#[test]
fn push_and_pull_through_a_git_daemon_keep_both_diverged_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (bare, before) = remote(dir.path());
    let daemon = daemon(dir.path());
    let url = format!("git://127.0.0.1:{}/shared.git", daemon.port);
    exchange(&bare, &url, Some(&url), &before);
}

/// A pull moves a line anvil has only under the line's lock, and decides once it holds it: a
/// line whose live files appeared meanwhile (a debate resumed here) is left as it is.
#[test]
fn a_pull_waits_for_the_lines_lock_and_leaves_a_line_that_came_alive_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let url = bare.to_str().unwrap();
    let (alice, bob) = (clone(url, "Alice"), clone(url, "Bob"));
    let id = debate(&alice);
    let branch = ["branch", "--from", &format!("{id}@main:round-1")];
    alice
        .anvil(
            &[
                &branch[..],
                &["--steer", "Think of cost.", "--name", "cost"],
            ]
            .concat(),
        )
        .ok();
    alice.anvil(&["push"]).ok();
    bob.anvil(&["pull"]).ok();
    let before = tip(&bob, &id, "cost");
    // The line moves ahead on the remote.
    alice.anvil(&["cancel", &format!("{id}@cost")]).ok();
    alice.anvil(&["push"]).ok();
    assert_ne!(tip(&alice, &id, "cost"), before);

    // A transaction of Bob's holds the line: the pull waits for it.
    let line_dir = bob.anvil_home().join("debates").join(&id).join("cost");
    std::fs::create_dir_all(&line_dir).unwrap();
    let lock = std::fs::File::create(line_dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    let mut pull = bob
        .command(&["pull"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(pull.try_wait().unwrap().is_none(), "the pull waits");
    assert_eq!(tip(&bob, &id, "cost"), before);
    // Meanwhile the line comes alive here (its live files, as a resume writes them), then the
    // lock is let go.
    std::fs::write(line_dir.join("state.md"), "a live line\n").unwrap();
    drop(lock);
    let out = pull.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains(&format!("not moved     {id}@cost")), "{said}");
    assert_eq!(tip(&bob, &id, "cost"), before);

    // Without live files, the next pull moves it ahead.
    std::fs::remove_file(line_dir.join("state.md")).unwrap();
    let again = bob.anvil(&["pull"]).ok();
    assert!(
        again.stdout.contains(&format!("fast-forward  {id}@cost")),
        "{}",
        again.describe()
    );
    assert_eq!(tip(&bob, &id, "cost"), tip(&alice, &id, "cost"));
    bob.assert_fsck_clean();
}

/// Run from a git hook (or any shell where a repository's variables are set), anvil's git
/// still works on the record and the remote anvil names, not on the repository they point at.
#[test]
fn git_variables_of_the_caller_do_not_redirect_anvils_git() {
    let dir = tempfile::tempdir().unwrap();
    let (bare, before) = remote(dir.path());
    let alice = clone(bare.to_str().unwrap(), "Alice");
    let id = debate(&alice);
    let hostile = |args: &[&str]| {
        let out = alice
            .command(args)
            .env("GIT_DIR", dir.path().join("seed/.git"))
            .env("GIT_WORK_TREE", dir.path().join("seed"))
            .env("GIT_INDEX_FILE", dir.path().join("nowhere/index"))
            .env("GIT_OBJECT_DIRECTORY", dir.path().join("nowhere/objects"))
            .env(
                "GIT_CONFIG_PARAMETERS",
                "'remote.origin.url'='/nowhere.git'",
            )
            .output()
            .unwrap();
        crate::support::anvil::Run::from_output(out)
    };
    hostile(&["push"]).ok();
    assert_eq!(anvil_refs(&bare), [format!("refs/anvil/{id}/main")]);
    hostile(&["pull"]).ok();
    hostile(&["gc"]).ok();
    assert!(alice.record_dir().join("packed-refs").is_file());
    alice.assert_fsck_clean();
    // The repository the variables named was not touched.
    assert_eq!(project_refs(&bare), before);
    let seed_refs = git(
        &dir.path().join("seed"),
        &["for-each-ref", "--format=%(refname)"],
    );
    assert!(!seed_refs.contains("refs/anvil"), "{seed_refs}");
}

#[test]
fn pull_without_an_origin_says_what_to_name() {
    let project = Project::new();
    let run = project.anvil(&["pull"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    assert!(
        run.stderr.contains("no remote 'origin'"),
        "{}",
        run.describe()
    );
}

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
    assert!(
        patch.contains("+two\n") && patch.contains("+new file\n"),
        "{patch}"
    );
    assert!(
        !patch.contains("c.txt") && !patch.contains("main moved on"),
        "{patch}"
    );
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
    assert!(
        patch.contains("+two\n") && patch.contains("+new file\n") && !patch.contains("c.txt"),
        "{patch}"
    );
    assert!(
        started.prompt.contains("upstream refs/pull/7/head"),
        "says where it came from: {}",
        started.prompt
    );
    // Neither has pull request 8: the error names both.
    let run = project.anvil(&["start", "Should we merge it?", "--pr", "8"]);
    assert_ne!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stderr
            .contains("no pull request 8 on origin or upstream"),
        "{}",
        run.describe()
    );
}

#[test]
fn pr_outside_a_repository_or_without_a_remote_says_what_is_missing() {
    let project = Project::new();
    let run = project.anvil(&["start", "Should we merge it?", "--pr", "3"]);
    assert_ne!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stderr.contains("is not in a git repository"),
        "{}",
        run.describe()
    );
    git(project.path(), &["init", "--quiet"]);
    let run = project.anvil(&["start", "Should we merge it?", "--pr", "3"]);
    assert_ne!(run.code, Some(0), "{}", run.describe());
    assert!(
        run.stderr
            .contains("no git remote to fetch pull request 3 from")
            && run.stderr.contains("git remote add origin"),
        "{}",
        run.describe()
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
    assert!(
        run.stderr.contains("no pull request 8")
            && run.stderr.contains("refs/pull/8/head")
            && run.stderr.contains("refs/merge-requests/8/head"),
        "{}",
        run.describe()
    );
    // Nothing was started.
    let debates = project.anvil_home().join("debates");
    assert!(std::fs::read_dir(&debates).map_or(true, |mut d| d.next().is_none()));
}

/// A remote is not trusted to hold debates: refs under `refs/anvil/` that name an ordinary git
/// commit, a blob, a tree or a tag are refused one by one, each named with its reason, while
/// every real debate, sorted before or after them, is pulled; `anvil log` keeps working.
#[test]
fn a_pull_refuses_each_ref_that_is_not_a_debate_and_takes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let alice = clone(bare.to_str().unwrap(), "Alice");
    let first = debate(&alice);
    let second = debate(&alice);
    alice.anvil(&["push"]).ok();
    // What a careless or hostile teammate puts there.
    let seed = dir.path().join("seed");
    let commit = git(&seed, &["rev-parse", "HEAD"]);
    let blob = git(&seed, &["rev-parse", "HEAD:README"]);
    let tree = git(&seed, &["rev-parse", "HEAD^{tree}"]);
    let tag = git(&seed, &["rev-parse", "v1"]);
    git(&seed, &["tag", "-a", "-m", "annotated", "v2"]);
    git(&seed, &["push", "--quiet", bare.to_str().unwrap(), "v2"]);
    let annotated = git(&seed, &["rev-parse", "v2"]);
    // A commit that looks like anvil's but whose state.md is garbage.
    let damaged = {
        std::fs::create_dir_all(dir.path().join("fake")).unwrap();
        let fake = dir.path().join("fake");
        git(&fake, &["init", "--quiet", "-b", "main"]);
        std::fs::write(fake.join("state.md"), "---\nnot: [valid\n---\n").unwrap();
        git(&fake, &["add", "state.md"]);
        git(
            &fake,
            &["commit", "--quiet", "-m", "round 1 advocate: fake"],
        );
        git(
            &fake,
            &[
                "push",
                "--quiet",
                bare.to_str().unwrap(),
                "main:refs/heads/fake",
            ],
        );
        git(&fake, &["rev-parse", "HEAD"])
    };
    let hostile = [
        ("refs/anvil/aaa-unrelated/main", commit.trim()),
        ("refs/anvil/bbb-damaged/main", damaged.trim()),
        ("refs/anvil/mmm-blob/main", blob.trim()),
        ("refs/anvil/nnn-tree/main", tree.trim()),
        ("refs/anvil/ooo-tag/main", annotated.trim()),
        ("refs/anvil/zzz-light/main", tag.trim()),
    ];
    for (name, id) in hostile {
        git(&bare, &["update-ref", name, id]);
    }

    let bob = clone(bare.to_str().unwrap(), "Bob");
    let pulled = bob.anvil(&["pull", "--json"]);
    assert_eq!(pulled.code, Some(1), "{}", pulled.describe());
    let json: serde_json::Value = serde_json::from_str(&pulled.stdout).unwrap();
    let refused: Vec<(String, String)> = json["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ref"].as_str().unwrap().to_owned(),
                r["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let names: Vec<&str> = refused.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        hostile.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        "{}",
        pulled.describe()
    );
    assert!(refused[0].1.contains("no state.md"), "{refused:?}");
    assert!(refused[1].1.contains("not anvil's"), "{refused:?}");
    assert!(refused[2].1.contains("blob"), "{refused:?}");
    assert!(refused[3].1.contains("tree"), "{refused:?}");
    assert!(refused[4].1.contains("tag"), "{refused:?}");
    assert!(
        pulled.stderr.contains(bare.to_str().unwrap()),
        "names the remote: {}",
        pulled.describe()
    );
    assert_eq!(
        json["moved"].as_array().unwrap().len(),
        2,
        "{}",
        pulled.stdout
    );
    for debate in [&first, &second] {
        assert_eq!(tip(&bob, debate, "main"), tip(&alice, debate, "main"));
    }
    assert!(
        bob.git(&["for-each-ref", "refs/anvil/aaa-unrelated"])
            .is_empty()
    );

    // In words too, one line per refused ref.
    let again = bob.anvil(&["pull"]);
    assert_eq!(again.code, Some(1), "{}", again.describe());
    for (name, _) in hostile {
        assert!(
            again.stdout.contains(&format!("refused       {name}")),
            "{}",
            again.describe()
        );
    }
    let log = bob.anvil(&["log", "--all", "--no-pager"]).ok();
    assert!(
        log.stdout.contains(&first) && log.stdout.contains(&second),
        "{}",
        log.stdout
    );
    // Pushing still works: the remote's refused refs are not taken for lines.
    bob.anvil(&["push"]).ok();
    bob.assert_fsck_clean();
}

/// Two remotes whose URLs end alike keep their tracking refs apart: a pruning fetch from one
/// never deletes what the other's holds.
#[test]
fn remotes_with_the_same_last_name_keep_separate_tracking_refs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a")).unwrap();
    std::fs::create_dir_all(dir.path().join("b")).unwrap();
    let (one, _) = remote(&dir.path().join("a"));
    let (two, _) = remote(&dir.path().join("b"));
    let alice = clone(one.to_str().unwrap(), "Alice");
    let first = debate(&alice);
    alice.anvil(&["push", one.to_str().unwrap()]).ok();
    let bob = clone(two.to_str().unwrap(), "Bob");
    let second = debate(&bob);
    bob.anvil(&["push", two.to_str().unwrap()]).ok();

    let carol = clone(one.to_str().unwrap(), "Carol");
    carol.anvil(&["pull", one.to_str().unwrap()]).ok();
    carol.anvil(&["pull", two.to_str().unwrap()]).ok();
    let tracking = carol.git(&["for-each-ref", "--format=%(refname)", "refs/anvil-remote/"]);
    let folders: std::collections::BTreeSet<&str> = tracking
        .lines()
        .filter_map(|r| r.split('/').nth(2))
        .collect();
    assert_eq!(folders.len(), 2, "{tracking}");
    assert!(
        tracking.contains(&first) && tracking.contains(&second),
        "{tracking}"
    );
    assert!(
        folders.iter().all(|f| f.starts_with("shared-")),
        "{folders:?}"
    );
}

/// Credentials never reach the record, and a push refuses to send one that got in anyway: a
/// phase, steering and a context file carrying a GitHub token, an Anthropic key and a private
/// key are recorded redacted, with a note; a line into which git put a token is refused by
/// `anvil push` (nothing sent) until `--allow-secrets`.
#[test]
fn secrets_are_redacted_before_recording_and_a_push_refuses_one_that_got_in() {
    const TOKEN: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    const KEY: &str = "sk-ant-api03-Xy7Qz9Lm2Np4Rs6Tu8Vw0Ab1Cd3Ef5Gh7Ij9Kl";
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let alice = clone(bare.to_str().unwrap(), "Alice");
    std::fs::write(
        alice.path().join("notes.txt"),
        "deploy with\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----\n",
    )
    .unwrap();
    let mut started = alice.command(&[
        "start",
        "Should we rotate keys?",
        "--rounds",
        "1",
        "--context",
        "notes.txt",
    ]);
    let prompt = Run::from_output(
        started
            .env("CLAUDE_CODE_SESSION_ID", ALICE)
            .output()
            .unwrap(),
    )
    .ok()
    .stdout;
    let debate = find_tag(&prompt).unwrap().debate().to_owned();
    let stop = |text: &str| {
        alice.hook(&json!({
            "session_id": ALICE, "cwd": alice.path(), "hook_event_name": "Stop",
            "stop_hook_active": true, "last_assistant_message": text,
        }))
    };
    alice
        .anvil(&["steer", &format!("use the key {KEY} in the example")])
        .ok();
    let run = stop(&format!(
        "My token is {TOKEN}, use it. Also AKIAIOSFODNN7EXAMPLE, \
         eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U, \
         glpat-Ab12Cd34Ef56Gh78Ij90, xoxb-1234567890-abcdefABCDEF and DB_PASSWORD=s3cr3t-pass."
    ));
    assert!(
        run.stdout.contains("redacted"),
        "the person is told: {}",
        run.describe()
    );
    stop("CRITIC r1: no.").ok();
    stop("Synthesis: rotate.").ok();
    let everything = alice.git(&["log", "-p", "--all", "--format=%B"]);
    for secret in [
        TOKEN,
        KEY,
        "MIIEowIBAAKCAQEA7",
        "AKIAIOSFODNN7EXAMPLE",
        "dozjgNryP4J3jVmNHl0w5N",
        "glpat-Ab12Cd34Ef56Gh78Ij90",
        "xoxb-1234567890-abcdefABCDEF",
        "s3cr3t-pass",
    ] {
        assert!(!everything.contains(secret), "{secret} reached the record");
    }
    assert!(
        everything.contains("DB_PASSWORD=[redacted: secret value]"),
        "{everything}"
    );
    assert!(
        everything.contains("[redacted: GitHub token]"),
        "{everything}"
    );
    assert!(
        everything.contains("[redacted: private key]"),
        "{everything}"
    );
    assert!(
        everything.contains("[redacted: Anthropic API key]"),
        "{everything}"
    );

    // A token that got in behind anvil's back (a commit made with git on top of the line).
    let tip = tip(&alice, &debate, "main");
    let blob = {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(alice.record_dir())
            .args(["hash-object", "-w", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            format!("leaked {TOKEN}\n").as_bytes(),
        )
        .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let tree = alice.git(&["rev-parse", &format!("{tip}^{{tree}}")]);
    let mut listing = alice.git(&["ls-tree", tree.trim()]);
    listing.push_str(&format!("100644 blob {}\tleak.md\n", blob.trim()));
    let new_tree = {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(alice.record_dir())
            .arg("mktree")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), listing.as_bytes()).unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let leaked = alice.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit-tree",
        new_tree.trim(),
        "-p",
        &tip,
        "-m",
        "round 1 note: leak",
    ]);
    alice.git(&[
        "update-ref",
        &format!("refs/anvil/{debate}/main"),
        leaked.trim(),
    ]);
    let refused = alice.anvil(&["push"]);
    assert_eq!(refused.code, Some(1), "{}", refused.describe());
    assert!(
        refused.stderr.contains("GitHub token") && refused.stderr.contains("leak.md"),
        "{}",
        refused.describe()
    );
    assert!(anvil_refs(&bare).is_empty(), "nothing was pushed");
    alice.anvil(&["push", "--allow-secrets"]).ok();
    assert_eq!(anvil_refs(&bare).len(), 1);
}

/// With `[secrets] redact = false` a credential is recorded as it is (and the person told so);
/// `anvil push` then refuses to send it and sends nothing.
#[test]
fn with_redaction_off_a_secret_is_recorded_and_the_push_refuses_it() {
    const TOKEN: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let alice = clone(bare.to_str().unwrap(), "Alice");
    std::fs::write(
        alice.anvil_home().join("config.toml"),
        "[secrets]\nredact = false\n",
    )
    .unwrap();
    let started = alice.start(&["Keep it?", "--rounds", "1", "--session", ALICE]);
    let run = alice.hook(&json!({
        "session_id": ALICE, "cwd": alice.path(), "hook_event_name": "Stop",
        "stop_hook_active": true, "last_assistant_message": format!("the token {TOKEN}"),
    }));
    assert!(
        run.stdout.contains("recorded as it is"),
        "{}",
        run.describe()
    );
    assert!(alice.git(&["log", "-p", "--all"]).contains(TOKEN));
    let refused = alice.anvil(&["push"]);
    assert_eq!(refused.code, Some(1), "{}", refused.describe());
    assert!(
        refused.stderr.contains(&format!("{}@main", started.debate))
            && refused.stderr.contains("GitHub token")
            && refused.stderr.contains("commit "),
        "{}",
        refused.describe()
    );
    assert!(anvil_refs(&bare).is_empty(), "nothing was pushed");
}

/// A smart-HTTP git server on 127.0.0.1 (`git http-backend` behind tiny_http) that serves the
/// repositories under `root` only to `alice` with [`HTTP_PASSWORD`], as a forge does with a
/// token: git sends the URL's credentials after the first 401. Stopped when dropped.
struct HttpRemote {
    server: std::sync::Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
    port: u16,
}

const HTTP_PASSWORD: &str = "s3cr3t-t0ken";
/// `Basic base64("alice:s3cr3t-t0ken")`.
const HTTP_AUTHORIZATION: &str = "Basic YWxpY2U6czNjcjN0LXQwa2Vu";

impl Drop for HttpRemote {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn http_remote(root: &Path) -> HttpRemote {
    let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let port = server.server_addr().to_ip().unwrap().port();
    let root = root.to_owned();
    let serving = server.clone();
    let thread = std::thread::spawn(move || {
        for request in serving.incoming_requests() {
            serve_git(request, &root);
        }
    });
    HttpRemote {
        server,
        thread: Some(thread),
        port,
    }
}

/// One request, answered through `git http-backend` as a CGI program.
fn serve_git(mut request: tiny_http::Request, root: &Path) {
    use std::io::Write;
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_owned(),
                h.value.as_str().to_owned(),
            )
        })
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(field, _)| field.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    };
    if header("Authorization").as_deref() != Some(HTTP_AUTHORIZATION) {
        let challenge =
            tiny_http::Header::from_bytes(&b"WWW-Authenticate"[..], &b"Basic realm=\"git\""[..])
                .unwrap();
        let _ = request.respond(
            tiny_http::Response::from_string("who are you?")
                .with_status_code(401)
                .with_header(challenge),
        );
        return;
    }
    let (path, query) = request
        .url()
        .split_once('?')
        .map(|(p, q)| (p.to_owned(), q.to_owned()))
        .unwrap_or_else(|| (request.url().to_owned(), String::new()));
    let mut body = Vec::new();
    request.as_reader().read_to_end(&mut body).unwrap();
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("REMOTE_USER", "alice")
        .env("REQUEST_METHOD", request.method().as_str())
        .env("PATH_INFO", &path)
        .env("QUERY_STRING", &query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (variable, name) in [
        ("CONTENT_TYPE", "Content-Type"),
        ("HTTP_CONTENT_ENCODING", "Content-Encoding"),
        ("GIT_PROTOCOL", "Git-Protocol"),
    ] {
        if let Some(value) = header(name) {
            cgi.env(variable, value);
        }
    }
    let mut child = cgi.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, at + 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| (at, at + 2))
        })
        .unwrap_or((out.stdout.len(), out.stdout.len()));
    let head = String::from_utf8_lossy(&out.stdout[..split.0]).into_owned();
    let mut response = tiny_http::Response::from_data(out.stdout[split.1..].to_vec());
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("Status") {
            let code = value.split(' ').next().and_then(|c| c.parse().ok());
            response = response.with_status_code(code.unwrap_or(500));
        } else if let Ok(h) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response = response.with_header(h);
        }
    }
    let _ = request.respond(response);
}

/// A remote's URL may carry a password (`http://alice:TOKEN@host/…`, as a CI job or a forge
/// token gives it). git uses it; anvil never prints it (text, `--json`, notes, errors), never
/// stores it (the folder the remote's lines are tracked under) and never names a line after it:
/// a line that diverged is kept under the remote's host, or the last part of its path. A name
/// an older anvil built from the password still reads, and is not copied again.
#[test]
fn credentials_in_a_remote_url_are_never_printed_stored_or_named() {
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let by_path = bare.to_str().unwrap();
    let (alice, bob) = (clone(by_path, "Alice"), clone(by_path, "Bob"));
    let id = debate(&alice);
    alice.anvil(&["push"]).ok();
    bob.anvil(&["pull"]).ok();
    for (who, steer) in [(&alice, "Think of cost."), (&bob, "Think of people.")] {
        who.anvil(&[
            "branch",
            "--from",
            &format!("{id}@main:round-1"),
            "--steer",
            steer,
            "--name",
            "cost",
        ])
        .ok();
    }
    alice.anvil(&["push"]).ok();
    let git_update_server_info = || git(&bare, &["update-server-info"]);
    git_update_server_info();

    // The repository itself at the server's root: a URL with no path, as in the report.
    let at_root = http_remote(&bare);
    let root_url = format!("http://alice:{HTTP_PASSWORD}@127.0.0.1:{}", at_root.port);
    let leaks = |text: &str| text.to_lowercase().contains(HTTP_PASSWORD);
    let tracking = |p: &Project| p.git(&["for-each-ref", "--format=%(refname)"]);

    // An older anvil named this remote's tracking folder after the password and the hash of
    // the whole URL: the next pull empties it.
    let old_hash = {
        let mut hash = Command::new("git")
            .args(["hash-object", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        hash.stdin
            .take()
            .unwrap()
            .write_all(root_url.as_bytes())
            .unwrap();
        String::from_utf8(hash.wait_with_output().unwrap().stdout).unwrap()[..8].to_owned()
    };
    let old_folder = format!("refs/anvil-remote/{}-{old_hash}", at_root.port);
    bob.git(&[
        "update-ref",
        &format!("{old_folder}/{id}/main"),
        &tip(&bob, &id, "main"),
    ]);

    let pulled = bob
        .command(&["pull", &root_url])
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    let pulled = Run::from_output(pulled).ok();
    let kept = "cost-from-127-0-0-1";
    assert!(
        pulled.stdout.contains(&format!("{id}@{kept}")),
        "a diverged line is named after the host: {}",
        pulled.describe()
    );
    assert!(
        pulled
            .stderr
            .contains(&format!("(http://127.0.0.1:{}/)", at_root.port)),
        "{}",
        pulled.describe()
    );
    assert!(!leaks(&pulled.describe()), "{}", pulled.describe());
    assert_eq!(tip(&bob, &id, kept), tip(&alice, &id, "cost"));
    let refs = tracking(&bob);
    assert!(!leaks(&refs), "{refs}");
    assert!(
        !refs.contains(&old_folder),
        "the old folder is gone: {refs}"
    );
    assert!(refs.contains("refs/anvil-remote/127-0-0-1-"), "{refs}");

    // A copy an older anvil kept under a name it built from the password still reads, and a
    // pull does not copy the line again beside it.
    let older = "cost-from-s3cr3t-t0ken-127-0-0-1";
    bob.git(&[
        "update-ref",
        &format!("refs/anvil/{id}/{older}"),
        &tip(&bob, &id, kept),
    ]);
    bob.git(&["update-ref", "-d", &format!("refs/anvil/{id}/{kept}")]);
    let again = Run::from_output(bob.command(&["pull", &root_url]).output().unwrap()).ok();
    assert!(
        again.stderr.contains("0 lines moved"),
        "{}",
        again.describe()
    );
    let shown = bob.anvil(&["show", &format!("{id}@{older}")]).ok();
    assert!(
        shown.stdout.contains("Think of cost"),
        "{}",
        shown.describe()
    );
    bob.git(&["update-ref", "-d", &format!("refs/anvil/{id}/{older}")]);

    // Pushing through the server (the shared repository by its path under the server's root):
    // the diverged line goes beside the remote's under Bob's name, and nothing says the password.
    let served = http_remote(dir.path());
    let url = format!(
        "http://alice:{HTTP_PASSWORD}@127.0.0.1:{}/shared.git",
        served.port
    );
    let shown_url = format!("http://127.0.0.1:{}/shared.git", served.port);
    let pushed = Run::from_output(bob.command(&["push", &url, "--json"]).output().unwrap()).ok();
    let json = pushed.json().expect("JSON");
    assert_eq!(json["remote"], shown_url.as_str(), "{}", pushed.describe());
    assert_eq!(json["name"], "shared", "{}", pushed.describe());
    assert!(!leaks(&pushed.describe()), "{}", pushed.describe());
    let on_remote = anvil_refs(&bare);
    assert!(
        on_remote.contains(&format!("refs/anvil/{id}/cost-from-bob")),
        "{on_remote:?}"
    );
    assert!(!on_remote.iter().any(|r| leaks(r)), "{on_remote:?}");
    assert!(!leaks(&tracking(&bob)));

    // What git says when it fails is cleaned too: a wrong password, a repository that is not
    // there.
    for bad in [
        format!(
            "http://alice:wr0ng-{HTTP_PASSWORD}@127.0.0.1:{}/shared.git",
            served.port
        ),
        format!(
            "http://alice:{HTTP_PASSWORD}@127.0.0.1:{}/missing.git",
            served.port
        ),
    ] {
        let failed = Run::from_output(
            bob.command(&["pull", &bad])
                .env("GIT_TERMINAL_PROMPT", "0")
                .output()
                .unwrap(),
        );
        assert_eq!(failed.code, Some(1), "{}", failed.describe());
        assert!(!leaks(&failed.describe()), "{}", failed.describe());
        assert!(failed.stderr.contains("127.0.0.1"), "{}", failed.describe());
    }
    bob.assert_fsck_clean();
}
