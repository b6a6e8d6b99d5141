//! Debates hosted by agents other than Claude Code, for real: in a fresh `HOME` and project,
//! `anvil install --agent NAME`, then the agent's own headless run of the prompt `anvil start`
//! printed, against the scripted server. The agent's own Stop hook (Qwen Code's `Stop`, Gemini
//! CLI's `AfterAgent`, Codex's `Stop`) runs `anvil-hook stop`, which records each phase and
//! hands the next prompt back with `decision: block`, until the synthesis.

use std::time::Duration;

use crate::e2e_seats::run_anvil;
use crate::support::agents::{AgentsHome, Cli, Output};
use crate::support::anvil::{Project, Run, find_tag, phase_text};
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::snap::Filters;

/// Every main turn answers the last anvil prompt it was handed (Codex wraps a hook's reason in
/// `<hook_prompt>`, Gemini CLI puts its `<session_context>` first: the tag is found in both).
fn debater(turn: &Turn) -> Reply {
    let text = turn.latest_user_text.clone();
    match text.rfind("[anvil ").and_then(|at| find_tag(&text[at..])) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("nothing to debate"),
    }
}

/// The keys of the phases the main turns answered, in order (`ADVOCATE r1`, …).
fn answered(server: &ModelServer) -> Vec<String> {
    server
        .main_turns()
        .iter()
        .map(|t| {
            let text = &t.latest_user_text;
            text.rfind("[anvil ")
                .and_then(|at| find_tag(&text[at..]))
                .map_or_else(|| format!("(no prompt) {text}"), |tag| tag.key())
        })
        .collect()
}

/// A project in a fresh `HOME` where `anvil install --agent NAME` ran; its output.
fn installed(home: &AgentsHome, cli: Cli) -> (Project, Run) {
    let project = Project::new();
    let run = run_anvil(&project, home, &["install", "--agent", cli.name()]).ok();
    (project, run)
}

/// The debate reached its synthesis through the host's hook: every phase recorded once, each
/// host phase naming the host (`Anvil-Host`), and no request after the synthesis.
fn assert_hosted(project: &Project, server: &ModelServer, debate: &str, host: &str, run: &Output) {
    let state = project.state_md(debate);
    assert!(
        state.contains("status: done"),
        "{state}\n{}\n{:?}",
        run.describe(),
        answered(server)
    );
    let commits = project.commits(debate);
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(phases, ["start", "advocate", "critic", "synthesizer"]);
    for commit in &commits[1..] {
        assert_eq!(
            commit.trailer("Anvil-Host"),
            Some(host),
            "{}",
            commit.phase()
        );
        assert!(
            commit.trailer("Anvil-Model").is_some(),
            "{}",
            commit.phase()
        );
    }
    assert_eq!(
        answered(server),
        ["ADVOCATE r1", "CRITIC r1", "SYNTHESIS"],
        "one request per phase, none after the synthesis"
    );
}

#[test]
fn qwen_code_hosts_a_debate_to_its_synthesis_through_its_stop_hook() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, install) = installed(&home, Cli::Qwen);
    insta::assert_snapshot!(
        "install_qwen",
        Filters::of(&project).redact(&install.stderr)
    );
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let run = home.run(
        Cli::Qwen,
        project.path(),
        &["-p", &started.prompt],
        Duration::from_secs(300),
    );
    assert_hosted(&project, &server, &started.debate, "qwen 0.24.4", &run);
    let uninstall = run_anvil(&project, &home, &["uninstall", "--agent", "qwen"]).ok();
    insta::assert_snapshot!(
        "uninstall_qwen",
        Filters::of(&project).redact(&uninstall.stderr)
    );
    // What the install wrote is gone; Qwen Code has added a `$version` of its own to the
    // settings it found, which stays.
    for file in [".qwen/commands/anvil.md", ".qwen/anvil-install.json"] {
        assert!(!project.path().join(file).exists(), "{file}");
    }
    let settings = std::fs::read_to_string(project.path().join(".qwen/settings.json")).unwrap();
    assert_eq!(settings, "{\n  \"$version\": 4\n}\n");
}
