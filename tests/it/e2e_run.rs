//! `anvil run`: a whole debate headless through the real Claude Code CLI, steered at the
//! terminal (stdin) at each interactive pause, without `anvil install`, in an untrusted
//! workspace (a fresh HOME: Claude Code ignores the project's `permissions.allow` there).

use std::io::Write;

use serde_json::json;

use crate::both_clients;
use crate::support::anvil::{Project, finish_within, phase_text, turn_tag};
use crate::support::claude::{ClaudeHome, Client, spawn_headless, spawn_headless_of};
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::snap::Filters;

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
    let mut child = spawn_headless(
        &project,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "2",
            "--interactive",
            "--quiet",
        ],
        &server,
        &home,
    );
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

    // With --quiet: progress on stderr, one line per phase however fast it went, the question
    // of the pause, nothing beyond the plan; the report's path alone on stdout.
    insta::assert_snapshot!(
        "run_with_a_pause_at_the_terminal",
        Filters::of(&project).without_usage().redact(&stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
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

const QUESTION: &str = "What budget do we have for a DBA this year?";

/// Commands the advocate tries before it asks: neither is `anvil ask` alone, so both must be
/// refused (the second would pass a rule matched against the whole line's start).
const NOT_ALLOWED: [&str; 2] = ["anvil cancel", "anvil ask \"decoy?\" && anvil cancel"];

/// How many tool results the conversation holds so far.
fn tool_results_so_far(turn: &Turn) -> usize {
    turn.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .count()
}

/// The advocate of round 1 tries two commands it may not run, then asks the human with its
/// Bash tool and argues with the answer; every other phase plays on.
fn asking_debater(turn: &Turn) -> Reply {
    let bash = |command: &str| {
        Reply::tool_use(
            "Bash",
            json!({ "command": command, "description": "Ask the human" }),
        )
    };
    if let Some((_, result, _)) = turn.tool_results().into_iter().next_back() {
        return match tool_results_so_far(turn) {
            n if n < NOT_ALLOWED.len() => bash(NOT_ALLOWED[n]),
            n if n == NOT_ALLOWED.len() => bash(&format!("anvil ask \"{QUESTION}\"")),
            _ => Reply::text(format!(
                "ADVOCATE r1, knowing this ({}): hire one.",
                result.trim()
            )),
        };
    }
    match turn_tag(turn) {
        Some(tag) if tag.key() == "ADVOCATE r1" => bash(NOT_ALLOWED[0]),
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

both_clients!(anvil_run_untrusted_brings_a_debaters_question_to_the_terminal_and_the_answer_back);
/// Issue 10's first defect: in an untrusted workspace `claude -p` refused the debater's
/// `anvil ask` ("This command requires approval"), so the question never reached the human.
fn anvil_run_untrusted_brings_a_debaters_question_to_the_terminal_and_the_answer_back(
    client: Client,
) {
    let project = Project::installed();
    let server = ModelServer::start(asking_debater);
    let home = ClaudeHome::new();
    let mut child = spawn_headless_of(
        client,
        &project,
        &[
            "run",
            "Should we hire a DBA?",
            "--rounds",
            "1",
            "--autonomy",
            "5",
        ],
        &server,
        &home,
    );
    // Answer as a human does: once the question is on the terminal.
    let mut stdin = child.stdin.take().unwrap();
    let stderr_pipe = child.stderr.take().unwrap();
    let watcher = std::thread::spawn(move || {
        let mut seen = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr_pipe)) {
            let Ok(line) = line else { break };
            if line.starts_with("The debater asks:") {
                let _ = stdin.write_all(b"about 150k a year\n");
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        seen
    });
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = watcher.join().unwrap();
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // The question reached the terminal, and the answer reached the debater as the tool's result.
    assert!(
        stderr.contains(&format!("The debater asks: {QUESTION}")),
        "{stderr}"
    );
    let results = server.tool_results();
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(
        results[2],
        ("The human answered: about 150k a year".to_owned(), false),
        "{stderr}"
    );

    // Nothing but `anvil ask` ran: the other commands were refused, not carried out.
    for (result, error) in &results[..2] {
        assert!(*error, "{result}");
    }
    assert!(!stderr.contains("decoy"), "{stderr}");

    // And the record has the question, the answer, and a phase built on it.
    let report = std::path::PathBuf::from(stdout.lines().last().unwrap_or_default());
    let debate = report.file_stem().unwrap().to_string_lossy().into_owned();
    project.assert_asked_and_answered(&debate, QUESTION, "about 150k a year", true);
    assert!(project.state_md(&debate).contains("status: done"));
}

both_clients!(anvil_run_with_a_host_that_repeats_itself_records_each_phase);
/// A host that answers every phase in the same words (a canned refusal): each of its turns is
/// a phase of its own, told apart by the message ids of Claude Code's transcript, so the run
/// ends with its report after one turn per phase, instead of being handed the critic's prompt
/// again and again.
fn anvil_run_with_a_host_that_repeats_itself_records_each_phase(client: Client) {
    const REFUSAL: &str = "I can't help with that.";
    let project = Project::new();
    let server = ModelServer::start(|_: &Turn| Reply::text(REFUSAL));
    let home = ClaudeHome::new();
    let child = spawn_headless_of(
        client,
        &project,
        &["run", "Should we adopt GraphQL?", "--rounds", "1"],
        &server,
        &home,
    );
    let run = finish_within(child, std::time::Duration::from_secs(300)).ok();
    assert_eq!(server.main_turns().len(), 3, "{}", run.describe());
    let debate = project.only_debate();
    let phases: Vec<String> = project
        .commits(&debate)
        .iter()
        .map(|c| c.phase().to_owned())
        .filter(|p| p != "run")
        .collect();
    assert_eq!(phases, ["start", "advocate", "critic", "synthesizer"]);
    assert!(project.state_md(&debate).contains("status: done"));
}
