//! `anvil gc`: the record packed while hooks commit, nothing lost, everything fsck-clean.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;

use crate::support::anvil::Project;

const ROUNDS: u32 = 5;

fn session(i: usize) -> String {
    format!("3a3a3a3a-0000-4000-8000-00000000000{i}")
}

/// The text debater `i` answers with at step `step` (1-based).
fn text(i: usize, step: u32) -> String {
    format!("Debate {i}, step {step}: a point made at length so that the blob is not tiny.\n")
}

/// Where step `step` of a ROUNDS-round analyst debate is recorded.
fn response_file(step: u32) -> String {
    let role = if step == 2 * ROUNDS + 1 {
        "synthesizer"
    } else if step % 2 == 1 {
        "advocate"
    } else {
        "critic"
    };
    format!("{step:03}-{role}.response.md")
}

#[test]
fn gc_racing_hooks_keeps_every_phase_and_leaves_the_record_fsck_clean() {
    let project = Project::new();
    let debates: Vec<String> = (0..4)
        .map(|i| {
            let out = project
                .command(&[
                    "start",
                    &format!("Race question {i}?"),
                    "--rounds",
                    &ROUNDS.to_string(),
                ])
                .env("CLAUDE_CODE_SESSION_ID", session(i))
                .output()
                .unwrap();
            assert!(out.status.success());
            let prompt = String::from_utf8_lossy(&out.stdout).into_owned();
            prompt
                .split("[anvil ")
                .nth(1)
                .and_then(|s| s.split('@').next())
                .expect("a tag in the first prompt")
                .to_owned()
        })
        .collect();

    let hooks_done = AtomicBool::new(false);
    let gcs_during_hooks = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let gc = scope.spawn(|| {
            while !hooks_done.load(Ordering::SeqCst) {
                let run = project.anvil(&["gc"]);
                if run.code != Some(0) {
                    hooks_done.store(true, Ordering::SeqCst);
                    panic!("gc: {}", run.describe());
                }
                if !hooks_done.load(Ordering::SeqCst) {
                    gcs_during_hooks.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        let hooks: Vec<_> = (0..debates.len())
            .map(|i| {
                let project = &project;
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for step in 1..=2 * ROUNDS + 1 {
                        let run = project.hook(&json!({
                            "session_id": session(i),
                            "cwd": project.path(),
                            "hook_event_name": "Stop",
                            "stop_hook_active": step > 1,
                            "last_assistant_message": text(i, step),
                        }));
                        // Every phase but the synthesis is answered with the next prompt.
                        let blocked = run.stdout.contains("\"decision\":\"block\"");
                        if run.code != Some(0) || blocked != (step <= 2 * ROUNDS) {
                            problems.push(run.describe());
                        }
                    }
                    problems
                })
            })
            .collect();
        // The gc loop stops once every hook is done, even if one of them failed.
        let problems: Vec<String> = hooks
            .into_iter()
            .flat_map(|hook| hook.join().unwrap_or_else(|_| vec!["panicked".into()]))
            .collect();
        hooks_done.store(true, Ordering::SeqCst);
        gc.join().unwrap();
        assert!(problems.is_empty(), "hooks: {problems:#?}");
    });
    assert!(
        gcs_during_hooks.load(Ordering::SeqCst) >= 1,
        "no gc ran while the hooks were committing"
    );

    // One last pack, then every phase of every debate is still there, in order.
    project.anvil(&["gc"]).ok();
    for (i, debate) in debates.iter().enumerate() {
        let commits = project.commits(debate);
        assert_eq!(commits.len() as u32, 2 * ROUNDS + 2, "start + every phase");
        for step in 1..=2 * ROUNDS + 1 {
            let bytes = project.git_show_bytes(debate, &response_file(step));
            assert_eq!(String::from_utf8(bytes).unwrap(), text(i, step));
        }
    }
    project.assert_fsck_clean();
    let counted = project.git(&["count-objects", "-v"]);
    assert!(counted.contains("count: 0\n"), "all packed: {counted}");
    assert!(project.record_dir().join("packed-refs").is_file());
    // Reads work on the packed record, through packed refs and the commit-graph.
    let log = project.anvil(&["log", "--all"]).ok().stdout;
    for debate in &debates {
        assert!(log.contains(debate.as_str()), "{log}");
    }
}

#[test]
fn gc_keeps_a_young_object_that_no_ref_points_at_yet() {
    let project = Project::new();
    project.start(&["A question?"]);
    // What a hook leaves between writing its objects and moving its ref.
    let hash = |content: &str| {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(project.record_dir())
            .args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(content.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let in_flight = hash("a phase whose ref has not moved yet\n");
    project.anvil(&["gc"]).ok();
    project.git(&["cat-file", "-e", &in_flight]);
}

#[test]
fn gc_without_git_says_what_it_needs() {
    let project = Project::new();
    project.start(&["A question?"]);
    let empty = tempfile::tempdir().unwrap();
    let run = project
        .command(&["gc"])
        .env("PATH", empty.path())
        .env_remove("ANVIL_GIT")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("needs the `git` binary"), "{stderr}");
    // The record is untouched and still readable.
    project.anvil(&["log"]).ok();
}
