//! `anvil run`: a whole debate headless through the real Claude Code CLI, steered at the
//! terminal (stdin) at each interactive pause, without `anvil install`.

use std::io::Write;
use std::process::Stdio;

use crate::support::anvil::{Project, phase_text, turn_tag};
use crate::support::claude::{ClaudeHome, claude_bin};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

#[test]
fn anvil_run_drives_a_debate_and_asks_for_steering_at_the_terminal() {
    let project = Project::new();
    let server = ModelServer::start(debater);
    let home = ClaudeHome::new();
    home.trust(project.path());
    let mut child = project
        .command(&[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "2",
            "--interactive",
        ])
        .env("ANVIL_CLAUDE_BIN", claude_bin())
        .env("HOME", home.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", "test")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run anvil run");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"focus on migration cost\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // Progress on stderr, one line per phase however fast it went; the report's path on stdout.
    for phase in [
        "round 1/2 · advocate (phase 1 of 6)",
        "round 1/2 · critic (phase 2 of 6)",
        "round 2/2 · advocate (phase 4 of 6)",
        "round 2/2 · critic (phase 5 of 6)",
        "synthesis (phase 6 of 6)",
    ] {
        assert_eq!(stderr.matches(phase).count(), 1, "{phase}:\n{stderr}");
    }
    assert!(
        !stderr.contains("phase 7"),
        "no phase beyond the plan:\n{stderr}"
    );
    assert!(stderr.contains("Steer round 2"), "{stderr}");
    assert!(stderr.contains("done in"), "{stderr}");
    let report = std::path::PathBuf::from(stdout.trim());
    let report_text = std::fs::read_to_string(&report).expect("the report exists");
    assert!(report_text.contains("SYNTHESIS of"), "{report_text}");

    // The pause was the human's, and the steering reached round 2's first prompt.
    let turns = server.main_turns();
    let keys: Vec<String> = turns
        .iter()
        .filter_map(|t| turn_tag(t).map(|t| t.key()))
        .collect();
    assert_eq!(
        keys,
        [
            "ADVOCATE r1",
            "CRITIC r1",
            "ADVOCATE r2",
            "CRITIC r2",
            "SYNTHESIS"
        ]
    );
    assert!(
        turns[2]
            .latest_user_text
            .contains("focus on migration cost"),
        "{}",
        turns[2].latest_user_text
    );
    let debate = report.file_stem().unwrap().to_string_lossy().into_owned();
    let commits = project.commits(&debate);
    let pause = commits
        .iter()
        .find(|c| c.phase() == "interactive-pause")
        .expect("a pause commit");
    assert_eq!(
        pause.trailer("Anvil-Steering"),
        Some("focus on migration cost")
    );
    assert!(project.state_md(&debate).contains("status: done"));
}
