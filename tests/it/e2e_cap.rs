//! Claude Code's cap on consecutive Stop-hook blocks, for real: when a debate is cut by it, the
//! user types `continue` in the same session and the debate goes on from where it stood.

use serde_json::Value;

use crate::both_clients;
use crate::support::anvil::{Project, find_tag, phase_text};
use crate::support::claude::{Claude, ClaudeHome, Client, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

/// The prompt a turn answers: the hook's feedback, or, for a plain user message such as
/// `continue`, the last anvil prompt anywhere in the conversation.
fn debater(turn: &Turn) -> Reply {
    let text = match turn.stop_hook_feedback() {
        Some(feedback) => feedback.to_owned(),
        None => turn.all_user_text(),
    };
    match text.rfind("[anvil ").and_then(|at| find_tag(&text[at..])) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("nothing to debate"),
    }
}

both_clients!(a_debate_cut_by_the_block_cap_goes_on_when_the_user_says_continue);
fn a_debate_cut_by_the_block_cap_goes_on_when_the_user_says_continue(client: Client) {
    let project = Project::installed();
    // Lower the cap the install raised, so that a 2-round debate (4 blocks) is cut.
    let settings_path = project.path().join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["env"]["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = "3".into();
    std::fs::write(&settings_path, settings.to_string()).unwrap();

    let started = project.start(&["Should we cap blocks?", "--rounds", "2"]);
    let server = ModelServer::start(debater);
    let home = ClaudeHome::new();
    let session = new_session_id();

    let first = Claude::new(&server, project.path(), &started.prompt)
        .client(client)
        .home(&home)
        .session_id(&session)
        .run();
    first.assert_success();
    // Advocate 1 plus three blocked phases reached the model; the fourth block was dropped.
    assert_eq!(server.main_turns().len(), 4, "{}", first.describe());
    let state = project.state_md(&started.debate);
    assert!(state.contains("status: active"), "{state}");
    assert!(state.contains("phase: synthesizer"), "{state}");

    let second = Claude::new(&server, project.path(), "continue")
        .client(client)
        .home(&home)
        .args(["--resume", session.as_str()])
        .run();
    second.assert_success();
    let turns = server.main_turns();
    let resumed = &turns[4];
    assert!(
        resumed
            .all_user_text()
            .contains("· synthesis · Synthesizer]"),
        "the model saw the prompt the cap cut: {}",
        resumed.all_user_text()
    );
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: done"),
        "{state}\n{}",
        second.describe()
    );
    let commits = project.commits(&started.debate);
    let last = commits.last().unwrap();
    assert_eq!(last.phase(), "synthesizer");
    assert_eq!(last.trailer("Anvil-Session"), Some(session.as_str()));
}
