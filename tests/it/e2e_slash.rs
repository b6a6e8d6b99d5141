//! The slash commands through the real Claude Code CLI, in an untrusted workspace: questions and
//! steering with backticks, quotes, `$`, `!`, newlines and unicode reach the record exactly as
//! typed (issue: a backtick in `/anvil`'s question ended its `!` shell line, and the debate never
//! started).

use anvil_core::model::state::State;

use crate::both_clients;
use crate::support::anvil::{Project, phase_text, turn_tag};
use crate::support::claude::{Claude, Client, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("noted"),
    }
}

/// The question as the first commit of the record holds it.
fn recorded_question(project: &Project, debate: &str) -> String {
    let first = project.commits(debate)[0].id.clone();
    let text = project.git(&["show", &format!("{first}:state.md")]);
    State::from_markdown(&text, std::path::Path::new("state.md"))
        .unwrap()
        .setup
        .question
}

both_clients!(slash_anvil_records_questions_with_shell_characters_verbatim);
fn slash_anvil_records_questions_with_shell_characters_verbatim(client: Client) {
    // (what is typed after /anvil, the question anvil must record)
    let cases = [
        (
            "Should we replace `serde_yaml`? --rounds 1",
            "Should we replace `serde_yaml`?",
        ),
        (
            "'It's \"fine\": $HOME, $(rm -rf ~) and !! — ünïcødé 🦀' --rounds 1",
            "It's \"fine\": $HOME, $(rm -rf ~) and !! — ünïcødé 🦀",
        ),
        (
            "Line one with a `tick`\nline two with \"quotes\" & $PATH --rounds 1",
            "Line one with a `tick`\nline two with \"quotes\" & $PATH",
        ),
        // Quotes escaped with shell habits arrive without their backslashes.
        (
            "\"Should we replace \\\"saphyr\\\"?\" --rounds 1",
            "Should we replace \"saphyr\"?",
        ),
    ];
    for (typed, question) in cases {
        let project = Project::installed();
        let server = ModelServer::start(debater);
        let session = new_session_id();
        let out = Claude::new(&server, project.path(), format!("/anvil {typed}"))
            .client(client)
            .session_id(&session)
            .run();
        out.assert_success();

        let state = project.only_state();
        assert_eq!(state.setup.question, question, "{}", out.describe());
        assert_eq!(recorded_question(&project, &state.debate), question);
        assert_eq!(state.progress.status.name(), "done", "{}", out.describe());
        // The debate ran in this session, from the prompt `anvil slash start` printed.
        let first = turn_tag(&server.main_turns()[0]).expect("the first prompt reached the model");
        assert_eq!(first.key(), "ADVOCATE r1");
        let commits = project.commits(&state.debate);
        assert_eq!(commits[0].trailer("Anvil-Session"), Some(session.as_str()));
        project.assert_fsck_clean();
    }
}

both_clients!(slash_anvil_steer_and_cancel_take_any_text);
fn slash_anvil_steer_and_cancel_take_any_text(client: Client) {
    let project = Project::installed();
    let session = new_session_id();
    project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "2",
        "--session",
        &session,
    ]);
    let steering = "focus on `cost` & \"risk\": $BUDGET, !important\nand ünïcødé 🦀";
    let server = ModelServer::start(debater);
    let out = Claude::new(&server, project.path(), format!("/anvil-steer {steering}"))
        .client(client)
        .session_id(&session)
        .run();
    out.assert_success();
    // The command said it queued the steering; the next phase's prompt carries it whole.
    let turns = server.main_turns();
    assert!(
        turns[0].latest_user_text_raw().contains("steering queued"),
        "{}",
        turns[0].latest_user_text_raw()
    );
    let carried = turns
        .iter()
        .filter_map(|t| t.stop_hook_feedback())
        .any(|prompt| prompt.contains(steering));
    assert!(carried, "{}", out.describe());

    // Cancel a debate that no session drives yet, by name, from another session.
    let started = project.start(&["Should we adopt gRPC?", "--rounds", "2"]);
    let server = ModelServer::start(debater);
    let out = Claude::new(
        &server,
        project.path(),
        format!("/anvil-cancel \"{}\"", started.line),
    )
    .client(client)
    .session_id(new_session_id())
    .run();
    out.assert_success();
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: cancelled"),
        "{state}\n{}",
        out.describe()
    );
    project.assert_fsck_clean();
}

both_clients!(slash_anvil_without_the_hook_says_how_to_fix_it);
fn slash_anvil_without_the_hook_says_how_to_fix_it(client: Client) {
    let project = Project::installed();
    // An installation whose UserPromptExpansion hook is missing (e.g. an older settings file).
    let path = project.path().join(".claude/settings.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("UserPromptExpansion");
    std::fs::write(&path, settings.to_string()).unwrap();

    let server = ModelServer::start(debater);
    let out = Claude::new(&server, project.path(), "/anvil Should we? --rounds 1")
        .client(client)
        .session_id(new_session_id())
        .run();
    out.assert_success();
    let shown = server.main_turns()[0].latest_user_text_raw();
    assert!(
        shown.contains("did not reach anvil") && shown.contains("anvil install"),
        "{shown}"
    );
    assert!(
        anvil_core::home::Home::find(project.path())
            .unwrap()
            .live_lines()
            .unwrap()
            .is_empty()
    );
}
