//! The web room with the real Claude Code CLI: while `claude -p` debates, steering posted
//! through `anvil serve`'s API reaches the next phase's prompt, and the record says so.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::support::anvil::{Project, anvil_dir, phase_text, turn_tag};
use crate::support::claude::{Claude, new_session_id};
use crate::support::model_server::{ModelServer, Reply};
use crate::support::serve::{Request, Served};

const STEERING: &str = "Weigh the cost of retraining the mobile team";

#[test]
fn steering_posted_through_the_api_reaches_the_next_phase_of_a_running_claude() {
    let project = Project::installed();
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "2"]);
    let served = Served::start(&project);
    let (port, token, debate) = (served.port, served.token.clone(), started.debate.clone());
    let posted: Arc<Mutex<Option<u16>>> = Arc::default();
    let seen = posted.clone();
    // While Claude writes the first advocate phase, a person steers from the page.
    let server = ModelServer::start(move |turn| match turn_tag(turn) {
        Some(tag) => {
            if tag.key() == "ADVOCATE r1" && seen.lock().unwrap().is_none() {
                let res = Request::new(
                    port,
                    "POST",
                    &format!("/api/debates/{debate}/lines/main/steer"),
                )
                .bearer(&token)
                .json(&json!({ "text": STEERING }))
                .send();
                *seen.lock().unwrap() = Some(res.status);
            }
            Reply::text(phase_text(&tag))
        }
        None => Reply::text("hello"),
    });
    let out = Claude::new(&server, project.path(), &started.prompt)
        .session_id(new_session_id())
        .path_prepend(anvil_dir())
        .timeout(Duration::from_secs(120))
        .run();
    out.assert_success();
    assert_eq!(
        *posted.lock().unwrap(),
        Some(202),
        "the API queued the steering"
    );

    // The prompt after the advocate's phase carries it; the one before did not.
    let turns = server.main_turns();
    let text_of = |key: &str| {
        turns
            .iter()
            .find(|t| turn_tag(t).is_some_and(|tag| tag.key() == key))
            .map(|t| t.latest_user_text_raw())
            .unwrap_or_else(|| panic!("no {key} turn: {}", out.describe()))
    };
    assert!(!text_of("ADVOCATE r1").contains(STEERING));
    assert!(
        text_of("CRITIC r1").contains(STEERING),
        "{}",
        text_of("CRITIC r1")
    );

    // The record has it on the advocate's commit, and the API shows it delivered.
    let commits = project.commits(&started.debate);
    let advocate = commits
        .iter()
        .find(|c| c.phase() == "advocate" && c.round() == "1")
        .expect("advocate r1 recorded");
    assert_eq!(advocate.trailers_named("Anvil-Steering"), [STEERING]);
    let view = served
        .get(&format!("/api/debates/{}", started.debate))
        .json();
    let steering = &view["lines"][0]["steering"];
    assert_eq!(
        steering,
        &json!([{ "text": STEERING, "state": "delivered", "round": 1,
                  "time": steering[0]["time"] }])
    );
    assert_eq!(view["lines"][0]["status"], "done");
}
