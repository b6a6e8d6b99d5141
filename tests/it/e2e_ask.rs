//! A debater asks the human, for real: Claude runs `anvil ask` with its Bash tool, the line
//! waits for input, `anvil answer` from a terminal delivers the answer as the tool's result, and
//! the phase goes on with it.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::anvil::{Project, advocate_asks, anvil_dir};
use crate::support::claude::{Claude, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::snap::Filters;

const QUESTION: &str = "Which database do we run in production today?";

/// Asks once, at the start of the advocate's phase; otherwise plays each phase.
fn debater(turn: &Turn) -> Reply {
    advocate_asks(turn, QUESTION)
}

/// The trusted case: the user's own project, where they accepted Claude Code's trust dialog,
/// so `anvil install`'s `permissions.allow` (`Bash(anvil ask:*)`) lets the debater ask. The
/// untrusted case, where Claude Code ignores that list, is `anvil run`'s (see `e2e_run`).
#[test]
fn a_debater_asks_and_the_answer_from_a_terminal_reaches_the_phase() {
    let project = Project::installed();
    let started = project.start(&[
        "Should we move to a managed database?",
        "--rounds",
        "1",
        "--autonomy",
        "3",
    ]);
    assert!(started.prompt.contains("anvil ask"), "{}", started.prompt);
    let server = ModelServer::start(debater);
    let session = new_session_id();
    let claude = Claude::new(&server, project.path(), &started.prompt)
        .session_id(&session)
        .path_prepend(anvil_dir())
        .trusted()
        .timeout(Duration::from_secs(90))
        .spawn();

    // The line waits for input while `anvil ask` runs inside Claude.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let state = project.state_md(&started.debate);
        if state.contains("status: waiting_for_input") {
            assert!(state.contains(QUESTION), "{state}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the debater never asked: {state}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let f = Filters::of(&project).text(&session, "[session]");
    let status = project.anvil(&["status"]).ok();
    insta::assert_snapshot!("status_with_a_question", f.redact(&status.stdout));
    let answered = project.anvil(&["answer", "Postgres 16, self-hosted"]).ok();
    insta::assert_snapshot!("answered", f.redact(&answered.stderr));

    let out = claude.wait();
    out.assert_success();
    let results: Vec<String> = server
        .main_turns()
        .iter()
        .flat_map(|t| t.tool_results())
        .map(|(_, text, _)| text)
        .collect();
    assert_eq!(
        results,
        ["The human answered: Postgres 16, self-hosted"],
        "{}",
        out.describe()
    );

    let state = project.state_md(&started.debate);
    assert!(state.contains("status: done"), "{state}");
    project.assert_asked_and_answered(&started.debate, QUESTION, "Postgres 16, self-hosted", false);
}

#[test]
fn a_stop_while_a_question_is_open_lets_claude_stop_and_shows_the_question() {
    let project = Project::new();
    let session = new_session_id();
    let started = project.start(&["Q?", "--autonomy", "2", "--session", &session]);
    let asker = project
        .command(&["ask", "--wait", "60", "What is the budget?"])
        .env("CLAUDE_CODE_SESSION_ID", &session)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run anvil ask");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !project
        .state_md(&started.debate)
        .contains("status: waiting_for_input")
    {
        assert!(
            Instant::now() < deadline,
            "anvil ask never opened the question"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    let run = project.hook(&json!({
        "session_id": session,
        "cwd": project.path(),
        "last_assistant_message": "I asked about the budget.",
    }));
    let answer: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("hook JSON");
    assert!(answer.get("decision").is_none(), "{answer}");
    let message = answer["systemMessage"].as_str().unwrap();
    // The question, and how to answer it.
    insta::assert_snapshot!(
        "notice_a_question_is_open",
        Filters::of(&project)
            .text(&session, "[session]")
            .redact(message)
    );

    project.anvil(&["answer", "40k a year"]).ok();
    let out = asker.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The human answered: 40k a year\n"
    );
    assert!(project.state_md(&started.debate).contains("status: active"));
}
