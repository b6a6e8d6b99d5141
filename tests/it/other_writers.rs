//! The record among other writers: real `git` processes holding the record's locks while the
//! Stop hook records phases. anvil waits for a lock another program holds and never removes
//! it, so git never undoes a phase anvil wrote.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::support::anvil::{Project, Run, next_key};

const S1: &str = "22222222-2222-4222-8222-222222222222";

fn hook(project: &Project, session: &str, message: &str) -> Run {
    project.hook(&json!({
        "session_id": session,
        "cwd": project.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": message,
    }))
}

fn git(project: &Project) -> Command {
    let mut command = Command::new("git");
    command
        .arg("--git-dir")
        .arg(project.record_dir())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    command
}

/// `git pack-refs --all --prune` on the record, as a person's `git gc` runs it; whether git
/// said it succeeded.
fn pack_refs(project: &Project) -> bool {
    git(project)
        .args(["pack-refs", "--all", "--prune"])
        .output()
        .unwrap()
        .status
        .success()
}

/// `git update-ref --stdin` holding the line's ref lock (a prepared transaction) while the
/// hook runs: the hook waits for git, and records the phase once git commits.
#[test]
fn a_ref_lock_held_by_git_is_waited_for_and_the_phase_recorded_after_it() {
    let project = Project::new();
    let started = project.start(&["Keep the monolith?", "--rounds", "1", "--session", S1]);
    let name = format!("refs/anvil/{}/main", started.debate);
    let tip = project.git(&["rev-parse", &name]).trim().to_owned();
    let mut holder = git(&project)
        .args(["update-ref", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_git = holder.stdin.take().unwrap();
    let mut from_git = BufReader::new(holder.stdout.take().unwrap());
    writeln!(to_git, "start\nupdate {name} {tip} {tip}\nprepare").unwrap();
    let mut said = String::new();
    while !said.contains("prepare: ok") {
        assert_ne!(from_git.read_line(&mut said).unwrap(), 0, "git: {said}");
    }
    let lock = project.record_dir().join(format!("{name}.lock"));
    assert!(lock.exists(), "git holds the lock");

    let released = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        writeln!(to_git, "commit").unwrap();
        drop(to_git);
        holder.wait().unwrap()
    });
    let run = hook(&project, S1, "ADVOCATE r1: keep it.");
    assert!(
        released.join().unwrap().success(),
        "git committed its own edit"
    );
    assert_eq!(next_key(&run), "CRITIC r1", "{}", run.describe());
    let commits = project.commits(&started.debate);
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(phases, ["start", "advocate"]);
    assert_ne!(project.git(&["rev-parse", &name]).trim(), tip);
    project.assert_fsck_clean();
}

/// `git pack-refs --all --prune` again and again, as a person's `git gc` runs it, while two
/// debates record every phase: each phase is recorded once, under the role Claude was given,
/// and each line's ref names its last phase (git never pruned a ref the hook had moved).
#[test]
fn git_pack_refs_racing_the_hook_loses_no_phase() {
    const ROUNDS: usize = 4;
    let project = Project::new();
    let sessions = [S1, "33333333-3333-4333-8333-333333333333"];
    let debates: Vec<String> = sessions
        .iter()
        .map(|s| {
            project
                .start(&[
                    "Split the service?",
                    "--rounds",
                    &ROUNDS.to_string(),
                    "--session",
                    s,
                ])
                .debate
        })
        .collect();
    let done = AtomicBool::new(false);
    let packs = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let packer = scope.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                // git itself may find a ref locked by the hook: it skips it, or says so.
                if pack_refs(&project) {
                    packs.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        let hooks: Vec<_> = sessions
            .iter()
            .map(|session| {
                let project = &project;
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for round in 1..=ROUNDS {
                        for (role, next) in [
                            ("ADVOCATE", format!("CRITIC r{round}")),
                            (
                                "CRITIC",
                                if round == ROUNDS {
                                    "SYNTHESIS".to_owned()
                                } else {
                                    format!("ADVOCATE r{}", round + 1)
                                },
                            ),
                        ] {
                            let run = hook(project, session, &format!("{role} r{round} {session}"));
                            if next_key(&run) != next {
                                problems.push(format!("{role} r{round}: {}", run.describe()));
                            }
                        }
                    }
                    problems
                })
            })
            .collect();
        let problems: Vec<String> = hooks.into_iter().flat_map(|h| h.join().unwrap()).collect();
        done.store(true, Ordering::SeqCst);
        packer.join().unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
    });
    assert!(
        packs.load(Ordering::SeqCst) > 0,
        "git packed the refs meanwhile"
    );
    for (debate, session) in debates.iter().zip(sessions) {
        let commits = project.commits(debate);
        let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
        let mut expected = vec!["start"];
        for _ in 0..ROUNDS {
            expected.extend(["advocate", "critic"]);
        }
        assert_eq!(phases, expected, "{debate}");
        for (i, commit) in commits.iter().skip(1).enumerate() {
            let role = if i % 2 == 0 { "ADVOCATE" } else { "CRITIC" };
            assert!(
                commit
                    .subject
                    .contains(&format!("{role} r{} {session}", i / 2 + 1)),
                "{debate}: {}",
                commit.subject
            );
        }
        let state = project.state_md(debate);
        assert!(state.contains("phase: synthesizer"), "{state}");
    }
    project.assert_fsck_clean();
}

/// Readers while git packs the refs: `anvil log` and the web room's list of debates list
/// 3,000 loose refs that `git pack-refs` folds into `packed-refs` and removes meanwhile;
/// a listing that meets a vanished ref is made again, so every read succeeds.
#[test]
fn readers_list_every_debate_while_git_packs_the_refs() {
    const REFS: usize = 3000;
    let project = Project::new();
    let started = project.start(&["Pack while reading?", "--rounds", "1", "--session", S1]);
    let first = project
        .git(&["rev-parse", &format!("refs/anvil/{}/main", started.debate)])
        .trim()
        .to_owned();
    hook(&project, S1, "ADVOCATE r1: for.").ok();
    let second = project
        .git(&["rev-parse", &format!("refs/anvil/{}/main", started.debate)])
        .trim()
        .to_owned();
    // Many debates' refs, loose, all moved to the other commit at each turn, so that each
    // pack has loose refs to fold and prune.
    let point_all_at = |id: &str| {
        let mut child = git(&project)
            .args(["update-ref", "--stdin"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = String::new();
        for i in 0..REFS {
            input.push_str(&format!("update refs/anvil/copy-{i:05}/main {id}\n"));
        }
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
    };
    point_all_at(&first);
    let served = crate::support::serve::Served::start(&project);

    let done = AtomicBool::new(false);
    let packs = AtomicUsize::new(0);
    let mut failures = Vec::new();
    let mut reads = 0;
    std::thread::scope(|scope| {
        let packer = scope.spawn(|| {
            let mut turn = 0;
            while !done.load(Ordering::SeqCst) {
                turn += 1;
                point_all_at(if turn % 2 == 0 { &first } else { &second });
                if pack_refs(&project) {
                    packs.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        while packs.load(Ordering::SeqCst) < 4 || reads < 3 {
            let log = project.anvil(&["log", "--all", "-n", "2", "--no-pager"]);
            if log.code != Some(0) {
                failures.push(log.describe());
            }
            let listed = served.get("/api/debates");
            if listed.status != 200 {
                failures.push(format!("{} {}", listed.status, listed.body));
            } else if listed.json().as_array().map_or(0, Vec::len) != REFS + 1 {
                failures.push(format!("not every debate listed: {}", listed.body.len()));
            }
            reads += 1;
        }
        done.store(true, Ordering::SeqCst);
        packer.join().unwrap();
    });
    assert!(
        failures.is_empty(),
        "{} of {reads} reads failed: {failures:#?}",
        failures.len()
    );
    assert!(reads >= 3, "{reads}");
}

/// Refs that git wrote into the record under `refs/anvil/` (a commit of the project, a blob),
/// as an unchecked pull used to leave them: `anvil log` shows every debate and marks those
/// lines; `anvil doctor` fails on them and `--fix` sets them aside under
/// `refs/anvil-damaged/`, after which everything is clean and nothing was deleted.
#[test]
fn lines_anvil_cannot_read_are_shown_marked_and_set_aside_by_doctor() {
    let project = Project::new();
    let started = project.start(&["Readable?", "--rounds", "1", "--session", S1]);
    hook(&project, S1, "ADVOCATE r1: for.").ok();
    // An ordinary commit and a blob, made with git in the record itself.
    let blob = {
        let mut child = git(&project)
            .args(["hash-object", "-w", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"not a debate\n")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let tree = project.git(&["mktree"]).trim().to_owned();
    let commit = project
        .git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit-tree",
            &tree,
            "-m",
            "unrelated",
        ])
        .trim()
        .to_owned();
    project.git(&["update-ref", "refs/anvil/aaa-foreign/main", &commit]);
    project.git(&["update-ref", "refs/anvil/zzz-blob/main", &blob]);
    project.git(&[
        "update-ref",
        &format!("refs/anvil/{}/stray", started.debate),
        &blob,
    ]);

    for args in [&["log", "--no-pager"][..], &["log", "--all", "--no-pager"]] {
        let log = project.anvil(args).ok();
        assert!(log.stdout.contains(&started.debate), "{}", log.describe());
        assert!(
            log.stdout.contains("aaa-foreign@main is damaged")
                && log
                    .stdout
                    .contains("zzz-blob@main is damaged: its ref points at a blob")
                && log
                    .stdout
                    .contains(&format!("{}@stray is damaged", started.debate)),
            "{}",
            log.describe()
        );
    }
    let json = project
        .anvil(&["log", "--all", "--json", "--no-pager"])
        .ok();
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let debates = value["debates"].as_array().unwrap();
    assert_eq!(debates.len(), 3, "{}", json.stdout);
    project.anvil(&["show", &started.debate]).ok();

    let doctor = project.anvil(&["doctor"]);
    assert_eq!(doctor.code, Some(1), "{}", doctor.describe());
    assert!(
        doctor.stdout.contains("not a debate anvil can read"),
        "{}",
        doctor.describe()
    );
    let fixed = project.anvil(&["doctor", "--fix"]);
    assert!(
        fixed
            .stdout
            .contains("aside as refs/anvil-damaged/aaa-foreign/main"),
        "{}",
        fixed.describe()
    );
    let aside = project.git(&[
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/anvil-damaged/",
    ]);
    assert!(
        aside.contains(&format!("refs/anvil-damaged/aaa-foreign/main {commit}")),
        "{aside}"
    );
    assert!(
        aside.contains(&format!("refs/anvil-damaged/zzz-blob/main {blob}")),
        "{aside}"
    );
    assert!(
        project
            .git(&[
                "for-each-ref",
                "refs/anvil/aaa-foreign",
                "refs/anvil/zzz-blob"
            ])
            .is_empty()
    );
    let again = project.anvil(&["doctor"]);
    assert!(
        !again.stdout.contains("not a debate anvil can read"),
        "{}",
        again.describe()
    );
    let log = project.anvil(&["log", "--all", "--no-pager"]).ok();
    assert!(!log.stdout.contains("damaged"), "{}", log.describe());
    // The debate itself goes on.
    let next = hook(&project, S1, "CRITIC r1: against.");
    assert_eq!(next_key(&next), "SYNTHESIS", "{}", next.describe());
}
