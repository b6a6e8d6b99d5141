//! `anvil push` / `anvil pull` against real remotes on this machine: a bare repository by path
//! (the clones' `origin`) and a `git daemon` on 127.0.0.1. Two clones debate, branch the same
//! debate to the same line name, and push and pull both ways.
//!
//! Also here, each with the remotes it needs: `anvil pr` reading a pull request's change
//! (`pr_context`), credentials kept out of the record and out of a push (`secrets`), and a
//! remote URL's password never printed, stored or named (`credentials`).

mod credentials;
mod pr_context;
mod secrets;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::json;

use crate::support::anvil::{Project, Run, git_in as git};
use crate::support::snap::Filters;

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

/// Two clones of `clone_url` (the remote `bare`) exchange debates both ways, each passing
/// `remote_arg` to push and pull (`None`: the default, the clone's `origin`); what they read
/// is the snapshot `exchange_{name}`, and the remote's own refs stay `project_refs_before`.
fn exchange(
    name: &str,
    bare: &Path,
    clone_url: &str,
    remote_arg: Option<&str>,
    project_refs_before: &str,
) {
    let alice = clone(clone_url, "Alice");
    let bob = clone(clone_url, "Bob");
    // What each of them reads, for the snapshot.
    let mut screen = String::new();
    let show = |screen: &mut String, who: &Project, command: String, run: &Run| {
        let filters = Filters::of(who)
            .path(bare, "[remote]")
            .text(clone_url, "[remote]");
        let name = if std::ptr::eq(who, &alice) {
            "alice"
        } else {
            "bob"
        };
        screen.push_str(&format!("{name}{}\n", filters.run(&command, run)));
    };
    // `anvil push` or `anvil pull` (with the remote named, if it is) in `p`.
    let sync = |p: &Project, verb: &str| -> (String, Run) {
        let mut args = vec![verb];
        args.extend(remote_arg);
        (format!("anvil {}", args.join(" ")), p.anvil(&args).ok())
    };
    // … shown on the screen.
    let sync_shown = |screen: &mut String, p: &Project, verb: &str| {
        let (command, run) = sync(p, verb);
        show(screen, p, command, &run);
    };

    let id = debate(&alice);
    sync(&alice, "push");
    assert_eq!(anvil_refs(bare), [format!("refs/anvil/{id}/main")]);

    sync(&bob, "pull");
    assert_eq!(tip(&bob, &id, "main"), tip(&alice, &id, "main"));
    // Both branch the same debate to the same line name, with different steering.
    let from = format!("{id}@main:round-1");
    for (p, steer) in [
        (&alice, "Think of cost."),
        (&bob, "Think of the cost of people."),
    ] {
        p.anvil(&[
            "branch", "--from", &from, "--steer", steer, "--name", "cost",
        ])
        .ok();
    }
    let (alice_cost, bob_cost) = (tip(&alice, &id, "cost"), tip(&bob, &id, "cost"));
    assert_ne!(alice_cost, bob_cost);

    sync_shown(&mut screen, &alice, "push");
    // Bob's diverged line goes beside alice's.
    sync_shown(&mut screen, &bob, "push");
    sync_shown(&mut screen, &bob, "pull");
    sync_shown(&mut screen, &alice, "pull");
    // A second round changes nothing.
    for p in [&alice, &bob] {
        sync_shown(&mut screen, p, "pull");
        sync_shown(&mut screen, p, "push");
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
        // (Not in the snapshot: lines whose tips share a second of time are drawn in either
        // order.)
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
        .ok();
    show(
        &mut screen,
        &bob,
        format!("anvil diff {id}@cost {id}@{kept}"),
        &diff,
    );
    bob.anvil(&["report", &id]).ok();
    let resumed = bob.anvil(&["resume", &format!("{id}@{kept}")]).ok();
    assert!(
        resumed.stdout.contains(&format!("{id}@{kept}")),
        "{}",
        resumed.describe()
    );
    let status = bob.anvil(&["status"]).ok();
    show(&mut screen, &bob, "anvil status".into(), &status);
    insta::assert_snapshot!(format!("exchange_{name}"), screen);
}

#[test]
fn push_and_pull_through_a_bare_repository_by_path_keep_both_diverged_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (bare, before) = remote(dir.path());
    exchange("by_path", &bare, bare.to_str().unwrap(), None, &before);
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
    exchange("git_daemon", &bare, &url, Some(&url), &before);
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
    insta::assert_snapshot!("pull_leaves_a_live_line", Filters::of(&bob).redact(&said));
    assert_eq!(tip(&bob, &id, "cost"), before);

    // Without live files, the next pull moves it ahead.
    std::fs::remove_file(line_dir.join("state.md")).unwrap();
    let again = bob.anvil(&["pull"]).ok();
    insta::assert_snapshot!(
        "pull_fast_forwards",
        Filters::of(&bob).redact(&again.stdout)
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
    insta::assert_snapshot!(
        "pull_without_origin",
        Filters::of(&project).redact(&run.stderr)
    );
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
    // The state's fields, which the parser lists after an unknown one, grow with the state.
    let filters = Filters::of(&bob).path(&bare, "[remote]").pattern(
        r"expected one of [a-z_, ]+",
        "expected one of [the state's fields]",
    );
    let reasons: String = refused
        .iter()
        .map(|(name, reason)| format!("{name}: {reason}\n"))
        .collect();
    insta::assert_snapshot!("pull_refusals", filters.redact(&reasons));
    // The remote is named.
    insta::assert_snapshot!("pull_refusals_stderr", filters.redact(&pulled.stderr));
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
    insta::assert_snapshot!("pull_refusals_in_words", filters.run("anvil pull", &again));
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
