//! `anvil log`: debates most recently active first, read from the index of recent debates
//! (`anvil-recent` in the record) and checked against the refs, whatever happened to the
//! index; `-n` counts phases as `git log -n` counts commits; a pager on a terminal.
//!
//! Every command runs at a pinned minute, so the order is known; the expected order is also
//! worked out with plain git (`for-each-ref`), independently of anvil.

use std::io::Write;
use std::process::{Command, Stdio};

use anvil_core::record::recent::Health;
use anvil_core::record::store::Record;
use serde_json::{Value, json};

use crate::support::anvil::{Project, Run};

fn session(n: usize) -> String {
    format!("{n:08}-2222-4333-8444-555555555555")
}

/// `anvil ARGS` at `minute` past ten.
fn at(project: &Project, minute: u32, args: &[&str]) -> Command {
    let mut command = project.command(args);
    command.env("ANVIL_NOW", format!("2026-11-22T10:{minute:02}:00Z"));
    command
}

fn run(command: Command, stdin: &[u8]) -> Run {
    crate::support::anvil::run_with_stdin(command, stdin)
}

/// Starts a debate bound to session `n` at `minute`; its id.
fn start(project: &Project, minute: u32, n: usize) -> String {
    let started = run(
        at(
            project,
            minute,
            &[
                "start",
                &format!("Question number {n}?"),
                "--rounds",
                "3",
                "--session",
                &session(n),
            ],
        ),
        b"",
    )
    .ok();
    crate::support::anvil::find_tag(&started.stdout)
        .expect("a tag")
        .debate()
        .to_owned()
}

/// The Stop hook of session `n` at `minute`: records one phase.
fn stop(project: &Project, minute: u32, n: usize) -> Run {
    let input = json!({
        "session_id": session(n),
        "cwd": project.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": format!("Phase text of session {n} at minute {minute}."),
    });
    let run = run(
        at(project, minute, &["hook", "stop"]),
        input.to_string().as_bytes(),
    );
    assert!(run.stdout.contains("block"), "{}", run.describe());
    run
}

fn log_json(project: &Project, args: &[&str]) -> Value {
    let mut all = vec!["log", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&project.anvil(&all).ok().stdout).expect("JSON")
}

/// The debates `anvil log --json ARGS` lists, in order.
fn order(project: &Project, args: &[&str]) -> Vec<String> {
    log_json(project, args)["debates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["debate"].as_str().unwrap().to_owned())
        .collect()
}

/// Every debate, most recently active first, as plain git sees the refs (ties: the greater
/// id first).
fn git_order(project: &Project) -> Vec<String> {
    let refs = project.git(&[
        "for-each-ref",
        "--format=%(committerdate:unix) %(refname)",
        "refs/anvil/",
    ]);
    let mut newest: std::collections::HashMap<String, i64> = Default::default();
    for line in refs.lines() {
        let (time, name) = line.split_once(' ').unwrap();
        let debate = name.split('/').nth(2).unwrap().to_owned();
        let time: i64 = time.parse().unwrap();
        let slot = newest.entry(debate).or_insert(time);
        *slot = (*slot).max(time);
    }
    let mut all: Vec<(i64, String)> = newest.into_iter().map(|(d, t)| (t, d)).collect();
    all.sort();
    all.into_iter().rev().map(|(_, d)| d).collect()
}

fn index_path(project: &Project) -> std::path::PathBuf {
    anvil_core::record::recent::path(&project.record_dir())
}

fn health(project: &Project) -> Health {
    anvil_core::record::recent::check(&Record::open(&project.record_dir()).unwrap()).unwrap()
}

/// The lines of `anvil log` that draw a commit.
fn commit_rows(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            let graph: String = l.chars().take_while(|c| "*|/\\ ".contains(*c)).collect();
            graph.contains('*')
        })
        .collect()
}

/// Three debates started at minutes 1, 2, 3, each with its first phase recorded.
fn three_debates() -> (Project, Vec<String>) {
    let project = Project::new();
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(start(&project, n as u32 + 1, n));
    }
    for n in 0..3 {
        stop(&project, n as u32 + 4, n);
    }
    (project, ids)
}

#[test]
fn log_lists_debates_by_their_last_activity() {
    let (project, ids) = three_debates();
    let [a, b, c] = [&ids[0], &ids[1], &ids[2]].map(String::clone);
    assert_eq!(order(&project, &[]), [c.clone(), b.clone(), a.clone()]);
    // A phase of the oldest debate brings it to the top; then one of the middle one.
    stop(&project, 10, 0);
    assert_eq!(order(&project, &[]), [a.clone(), c.clone(), b.clone()]);
    stop(&project, 11, 1);
    assert_eq!(order(&project, &[]), [b.clone(), a.clone(), c.clone()]);
    assert_eq!(order(&project, &[]), git_order(&project));
    // The text shows the same order, one title line per debate.
    let text = project.anvil(&["log"]).ok().stdout;
    let place = |id: &str| text.find(&format!("{id}  ")).expect(id);
    assert!(place(&b) < place(&a) && place(&a) < place(&c), "{text}");
    // Branching a line is activity too.
    let branched = run(branch(&project, 12, &a, "cost"), b"");
    assert_eq!(branched.code, Some(0), "{}", branched.describe());
    assert_eq!(order(&project, &[]), [a.clone(), b, c]);
    assert!(matches!(health(&project), Health::Fine { debates: 3 }));
}

/// `anvil branch --from round-0 --name NAME` of `debate` at `minute`.
fn branch(project: &Project, minute: u32, debate: &str, name: &str) -> Command {
    at(
        project,
        minute,
        &[
            "branch",
            "--from",
            &format!("{debate}@main:round-0"),
            "--steer",
            "look at the cost",
            "--name",
            name,
        ],
    )
}

#[test]
fn the_first_screen_shows_at_most_ten_debates_and_says_there_are_more() {
    let project = Project::new();
    let ids: Vec<String> = (0..12).map(|n| start(&project, n as u32, n)).collect();
    let shown = order(&project, &[]);
    let mut newest: Vec<String> = ids.iter().rev().take(10).cloned().collect();
    assert_eq!(shown, newest);
    let text = project.anvil(&["log"]).ok().stdout;
    // Ten debates, the two oldest not shown, and said so.
    let filters = crate::support::snap::Filters::of(&project).keep_clock();
    insta::assert_snapshot!("first_screen_ten_debates", filters.redact(&text));
    let all = order(&project, &["--all"]);
    newest.extend([ids[1].clone(), ids[0].clone()]);
    assert_eq!(all, newest);
    assert!(
        !project
            .anvil(&["log", "--all"])
            .ok()
            .stdout
            .contains("not shown")
    );
    // A name of all twelve (words of their ids) shows a first screen of them too, the newest
    // ids first, and says how many it left out; with --all, every one.
    let named = order(&project, &["question-number"]);
    assert_eq!(named.len(), 10, "{named:?}");
    let mut by_id = ids.clone();
    by_id.sort_by(|a, b| b.cmp(a));
    assert_eq!(named, by_id[..10]);
    let text = project.anvil(&["log", "question-number"]).ok().stdout;
    assert!(
        text.ends_with("… 2 more debates of that name not shown (`--all` shows them)\n"),
        "{text}"
    );
    assert_eq!(order(&project, &["question-number", "--all"]).len(), 12);
}

/// Longer debates fill the first screen sooner: whole debates, newest first, until they hold
/// twenty phases, about a terminal screen.
#[test]
fn the_first_screen_shows_whole_debates_until_twenty_phases() {
    let project = Project::new();
    let mut ids = Vec::new();
    for n in 0..4 {
        let minute = n as u32 * 10;
        ids.push(start(&project, minute, n));
        // Six phases: round 3's critic is the last before the synthesis; seven commits each.
        for phase in 1..=6 {
            stop(&project, minute + phase, n);
        }
    }
    let text = project.anvil(&["log"]).ok().stdout;
    // 7 + 7 < 20 <= 7 + 7 + 7: the three newest debates, each whole.
    assert_eq!(commit_rows(&text).len(), 21, "{text}");
    // The three newest, whole; the oldest not shown, and said so.
    let filters = crate::support::snap::Filters::of(&project).keep_clock();
    insta::assert_snapshot!("first_screen_whole_debates", filters.redact(&text));
    let newest: Vec<String> = ids[1..].iter().rev().cloned().collect();
    assert_eq!(order(&project, &[]), newest);
    // Nothing is left out once every debate fits.
    let all = project.anvil(&["log", "--all"]).ok().stdout;
    assert_eq!(commit_rows(&all).len(), 28, "{all}");
    assert!(!all.contains("not shown"), "{all}");
}

#[test]
fn log_n_counts_phases_newest_first_as_git_log_does() {
    let (project, ids) = three_debates();
    // c: start + 1 phase; then b gets a second phase: b is the newest, with 3 commits.
    stop(&project, 10, 1);
    let b = &ids[1];
    let newest_tip = project.git(&["rev-parse", &format!("refs/anvil/{b}/main")]);

    for n in [1, 2, 3, 4, 6, 7, 100] {
        let json = log_json(&project, &["-n", &n.to_string()]);
        let debates = json["debates"].as_array().unwrap();
        let commits: usize = debates
            .iter()
            .map(|d| d["commits"].as_array().unwrap().len())
            .sum();
        // 3 debates: b has 3 commits, c and a 2 each.
        assert_eq!(commits, n.min(7), "-n {n}: {json:#}");
        assert_eq!(debates[0]["debate"], b.as_str());
        assert_eq!(
            debates[0]["commits"][0]["commit"].as_str().unwrap(),
            newest_tip.trim(),
            "newest first"
        );
        let text = project.anvil(&["log", "-n", &n.to_string()]).ok().stdout;
        let rows = commit_rows(&text);
        assert_eq!(rows.len(), n.min(7), "-n {n}:\n{text}");
        assert!(rows[0].contains(&newest_tip[..7]), "{text}");
        assert!(!text.contains("older debates not shown"), "{text}");
    }
    // Within one debate, and `--max-count` as in git.
    let one = project
        .anvil(&["log", "--max-count", "1", &ids[0]])
        .ok()
        .stdout;
    assert_eq!(commit_rows(&one).len(), 1, "{one}");
    assert!(one.contains(&ids[0]), "{one}");
    let none = project.anvil(&["log", "-n", "0"]).ok().stdout;
    assert_eq!(none, "");
}

#[test]
fn a_deleted_damaged_or_stale_index_gives_the_right_log_and_is_repaired() {
    let (project, ids) = three_debates();
    stop(&project, 10, 0);
    let expected = git_order(&project);
    assert_eq!(order(&project, &[]), expected);

    // Deleted, then damaged in several ways: the same log, and the index is whole again.
    let file = index_path(&project);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(health(&project), Health::Missing);
    assert_eq!(order(&project, &[]), expected);
    assert!(matches!(health(&project), Health::Fine { debates: 3 }));
    let good = std::fs::read(&file).unwrap();
    let mut cut_in_header = good.clone();
    cut_in_header.truncate(20);
    let mut bad_line = good.clone();
    bad_line.extend_from_slice(b"= yesterday nothing\n");
    for damaged in [b"\x00\x01 not an index".to_vec(), cut_in_header, bad_line] {
        std::fs::write(&file, &damaged).unwrap();
        assert!(matches!(health(&project), Health::Damaged(_)));
        assert_eq!(order(&project, &[]), expected);
        assert!(matches!(health(&project), Health::Fine { debates: 3 }));
    }

    // A line moved back by `git update-ref`: `a` is no longer the most recent.
    let a = &ids[0];
    let a_ref = format!("refs/anvil/{a}/main");
    let a_tip = project.git(&["rev-parse", &a_ref]).trim().to_owned();
    project.git(&["update-ref", &a_ref, &format!("{a_tip}~1"), &a_tip]);
    let expected = git_order(&project);
    assert_eq!(expected.last(), Some(a));
    assert_eq!(order(&project, &[]), expected);
    assert!(matches!(health(&project), Health::Fine { .. }));

    // A line moved ahead by git with a commit made by hand, ten minutes after everything else.
    let c = &ids[2];
    let c_ref = format!("refs/anvil/{c}/main");
    let c_tip = project.git(&["rev-parse", &c_ref]).trim().to_owned();
    let tree = project.git(&["rev-parse", &format!("{c_tip}^{{tree}}")]);
    let by_hand = Command::new("git")
        .arg("--git-dir")
        .arg(project.record_dir())
        .args(["commit-tree", tree.trim(), "-p", &c_tip, "-m"])
        .arg(format!(
            "note by hand\n\nAnvil-Debate: {c}\nAnvil-Line: main\nAnvil-Phase: note\n"
        ))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "someone")
        .env("GIT_AUTHOR_EMAIL", "someone@example.com")
        .env("GIT_COMMITTER_NAME", "someone")
        .env("GIT_COMMITTER_EMAIL", "someone@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-22T10:20:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-22T10:20:00Z")
        .output()
        .unwrap();
    assert!(by_hand.status.success(), "{by_hand:?}");
    let by_hand = String::from_utf8(by_hand.stdout).unwrap();
    project.git(&["update-ref", &c_ref, by_hand.trim(), &c_tip]);
    let expected = git_order(&project);
    assert_eq!(expected.first(), Some(c));
    assert!(matches!(health(&project), Health::Outdated { .. }));
    assert_eq!(order(&project, &[]), expected);
    assert!(matches!(health(&project), Health::Fine { .. }));

    // Debates fetched with plain git from another record: new to this one, and newer.
    let other = Project::new();
    let fetched = start(&other, 30, 7);
    project.git(&[
        "fetch",
        "--quiet",
        other.record_dir().to_str().unwrap(),
        "refs/anvil/*:refs/anvil/*",
    ]);
    let expected = git_order(&project);
    assert_eq!(expected.first(), Some(&fetched));
    assert_eq!(order(&project, &[]), expected);
    assert!(matches!(health(&project), Health::Fine { debates: 4 }));
    project.assert_fsck_clean();
}

#[test]
fn a_debate_brought_by_anvil_pull_is_in_the_index_at_once() {
    let (project, _) = three_debates();
    let other = Project::new();
    let pulled = start(&other, 30, 7);
    let remote = other.record_dir();
    project.anvil(&["pull", remote.to_str().unwrap()]).ok();
    // Noted by the pull itself: no reader had to rebuild anything.
    assert!(matches!(health(&project), Health::Fine { debates: 4 }));
    assert_eq!(order(&project, &[])[0], pulled);
    assert_eq!(order(&project, &[]), git_order(&project));
    assert!(matches!(health(&project), Health::Fine { debates: 4 }));
}

#[test]
fn hooks_in_different_debates_at_once_all_appear_in_log() {
    let project = Project::new();
    let n = 6;
    let ids: Vec<String> = (0..n).map(|i| start(&project, 1, i)).collect();
    for round in 0..3u32 {
        let hooks: Vec<_> = (0..n)
            .map(|i| {
                let input = json!({
                    "session_id": session(i),
                    "cwd": project.path(),
                    "hook_event_name": "Stop",
                    "stop_hook_active": true,
                    "last_assistant_message": format!("Session {i}, round {round}."),
                });
                let mut child = at(&project, 10 + round, &["hook", "stop"])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(input.to_string().as_bytes())
                    .unwrap();
                child
            })
            .collect();
        // Readers at the same moment (they may correct or fold the index).
        for _ in 0..3 {
            project.anvil(&["log", "-n", "3"]).ok();
        }
        for hook in hooks {
            let out = hook.wait_with_output().unwrap();
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("block"),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    assert!(matches!(health(&project), Health::Fine { debates } if debates == n));
    // Through the index, as the first screen reads it, but long enough for all of them.
    let shown = order(&project, &["-n", "100"]);
    assert_eq!(shown, git_order(&project));
    let mut sorted = shown.clone();
    sorted.sort();
    let mut all = ids.clone();
    all.sort();
    assert_eq!(sorted, all);
    // Each shows every phase its hooks recorded: start + 3.
    for debate in log_json(&project, &["-n", "100"])["debates"]
        .as_array()
        .unwrap()
    {
        assert_eq!(debate["commits"].as_array().unwrap().len(), 4, "{debate:#}");
    }
}

#[test]
fn log_goes_through_a_pager_on_a_terminal_only() {
    let (project, _) = three_debates();
    let script = |args: &str| {
        let out = Command::new("script")
            .args(["-qec"])
            .arg(format!(
                "{} log {args}",
                crate::support::anvil::anvil_bin().display()
            ))
            .arg("/dev/null")
            .current_dir(project.path())
            .env("ANVIL_PAGER", "sed s/^/paged:/")
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .stdin(Stdio::null())
            .output()
            .expect("`script` (util-linux) runs a command on a terminal");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).replace('\r', "")
    };
    let paged = script("-n 2");
    let rows: Vec<&str> = paged.lines().filter(|l| !l.is_empty()).collect();
    assert!(
        !rows.is_empty() && rows.iter().all(|l| l.starts_with("paged:")),
        "{paged}"
    );
    let unpaged = script("-n 2 --no-pager");
    assert!(
        !unpaged.contains("paged:") && unpaged.contains('*'),
        "{unpaged}"
    );
    // In a pipe, never.
    let mut piped = project.command(&["log", "-n", "2"]);
    piped.env("ANVIL_PAGER", "sed s/^/paged:/");
    let piped = piped.output().unwrap();
    assert!(!String::from_utf8_lossy(&piped.stdout).contains("paged:"));
}
