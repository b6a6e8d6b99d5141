//! The web room with the real Claude Code CLI, in untrusted workspaces: while `claude -p`
//! debates, steering posted through `anvil serve`'s API reaches the next phase's prompt; a
//! branch made through the API runs headless from the API to its synthesis; and a debater's
//! question in `anvil run --autonomy 5` is answered through the API.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::anvil::{Project, advocate_asks, anvil_dir, phase_text, turn_tag};
use crate::support::claude::{Claude, ClaudeHome, headless_env, new_session_id, spawn_headless};
use crate::support::model_server::{ModelServer, Reply, Turn};
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

/// Polls `GET path` until `ready` accepts the answer.
fn poll(served: &Served, path: &str, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let res = served.get(path);
        if res.status == 200 {
            let view = res.json();
            if ready(&view) {
                return view;
            }
        }
        assert!(Instant::now() < deadline, "{what} never came: {}", res.body);
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn line<'a>(view: &'a Value, name: &str) -> &'a Value {
    view["lines"]
        .as_array()
        .and_then(|ls| ls.iter().find(|l| l["name"] == name))
        .unwrap_or(&Value::Null)
}

const BRANCH_STEER: &str = "Assume the mobile team stays on REST";

#[test]
fn a_branch_made_through_the_api_runs_headless_from_the_api_to_its_synthesis() {
    let project = Project::new();
    let session = new_session_id();
    let started = project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "2",
        "--session",
        &session,
    ]);
    let debate = started.debate.clone();
    // Round 1 of the main line, recorded as a Claude session's hook would.
    for text in ["ADVOCATE r1: yes.", "CRITIC r1: not yet."] {
        project
            .hook(&json!({
                "session_id": session, "cwd": project.path(), "hook_event_name": "Stop",
                "stop_hook_active": true, "last_assistant_message": text,
            }))
            .ok();
    }
    let server = ModelServer::start(|turn| match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    });
    let home = ClaudeHome::new();
    let served = Served::start_with(&project, &headless_env(&server, &home));

    // Branch from round 1 through the API, then run the new line headless through the API.
    let branch = served.post(
        &format!("/api/debates/{debate}/branch"),
        &json!({"from": "round-1", "steer": BRANCH_STEER, "name": "rest"}),
    );
    assert_eq!(branch.status, 201, "{}", branch.body);
    let run = served.post(&format!("/api/debates/{debate}/lines/rest/run"), &json!({}));
    assert_eq!(run.status, 202, "{}", run.body);
    let log = run.json()["log"].as_str().unwrap().to_owned();

    // The page's view follows it to its end.
    let view = poll(
        &served,
        &format!("/api/debates/{debate}"),
        "the end of the headless run",
        |v| {
            let state = &line(v, "rest")["headless"]["state"];
            state == "done" || state == "failed" || state == "stopped"
        },
    );
    let rest = line(&view, "rest");
    assert_eq!(
        rest["headless"]["state"],
        "done",
        "{rest:#}\n{}",
        project.read(&log)
    );
    assert_eq!(rest["status"], "done");
    assert_eq!(rest["runnable"], false);
    let report = rest["headless"]["message"].as_str().unwrap();
    assert!(report.contains(".anvil/reports/"), "{report}");
    // The main line was not touched.
    assert_eq!(line(&view, "main")["status"], "active");

    // Claude debated the branch, steered as it was branched, to its synthesis.
    let turns = server.main_turns();
    let keys: Vec<String> = turns
        .iter()
        .filter_map(|t| turn_tag(t).map(|t| format!("{} {}", t.line, t.key())))
        .collect();
    assert_eq!(
        keys,
        [
            format!("{debate}@rest ADVOCATE r2"),
            format!("{debate}@rest CRITIC r2"),
            format!("{debate}@rest SYNTHESIS"),
        ]
    );
    assert!(turns[0].latest_user_text_raw().contains(BRANCH_STEER));
    let commits = project.line_commits(&debate, "rest");
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(
        phases,
        [
            "start",
            "advocate",
            "critic",
            "branch",
            "advocate",
            "critic",
            "synthesizer",
            // What the headless run cost, recorded once it was over.
            "run"
        ],
        "{}",
        project.read(&log)
    );
    let files = project.git(&["ls-tree", "--name-only", &commits[6].id]);
    let file = files
        .lines()
        .find(|f| f.ends_with("-synthesizer.response.md"))
        .unwrap_or_else(|| panic!("no synthesis in {files}"));
    let synthesis = project.git(&["show", &format!("{}:{file}", commits[6].id)]);
    assert!(
        synthesis.contains(&format!("SYNTHESIS of {debate}@rest")),
        "{synthesis}"
    );
    // Its progress is in its log, phase by phase.
    let progress = project.read(&log);
    assert!(progress.contains("synthesis (phase"), "{progress}");
    assert!(progress.contains("done in"), "{progress}");
}

const QUESTION: &str = "What budget do we have for a DBA this year?";
const ANSWER: &str = "About 150k a year, approved by finance";

/// The advocate of round 1 asks the human with its Bash tool and argues with the answer.
fn asking_debater(turn: &Turn) -> Reply {
    advocate_asks(turn, QUESTION)
}

#[test]
fn anvil_run_autonomy_5_brings_the_question_to_the_page_and_the_pages_answer_to_the_debater() {
    let project = Project::new();
    let served = Served::start(&project);
    let server = ModelServer::start(asking_debater);
    let home = ClaudeHome::new();
    // A stdin that stays open and empty (never written): only the page answers.
    let mut run = spawn_headless(
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
    let stdin = run.stdin.take();
    // What `anvil run` prints at the terminal, read as it comes.
    let terminal = Arc::new(Mutex::new(String::new()));
    let reader = {
        let terminal = Arc::clone(&terminal);
        let mut pipe = run.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut pipe, &mut buf) {
                if n == 0 {
                    break;
                }
                terminal
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };

    // The question shows in the page's view of the running debate, while `anvil ask` waits.
    let list = poll(&served, "/api/debates", "the debate", |v| {
        v.as_array().is_some_and(|a| !a.is_empty())
    });
    let debate = list[0]["id"].as_str().unwrap().to_owned();
    let view = poll(
        &served,
        &format!("/api/debates/{debate}"),
        "the question",
        |v| line(v, "main")["question"]["text"] == QUESTION,
    );
    assert_eq!(line(&view, "main")["stage"], "waiting");
    assert_eq!(line(&view, "main")["question"]["answer"], Value::Null);
    assert_eq!(line(&view, "main")["headless"]["state"], "running");
    // Answered once the terminal shows the question too, so both channels are open at once.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !terminal.lock().unwrap().contains(QUESTION) {
        assert!(Instant::now() < deadline, "{}", terminal.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    let answered = served.post(
        &format!("/api/debates/{debate}/lines/main/answer"),
        &json!({ "text": ANSWER }),
    );
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert_eq!(
        answered.json()["delivered_now"],
        true,
        "the waiting anvil ask took it"
    );

    let out = run.wait_with_output().unwrap();
    drop(stdin);
    reader.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = terminal.lock().unwrap().clone();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The terminal saw the question too, and that the page answered it first.
    assert!(
        stderr.contains(&format!("The debater asks: {QUESTION}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("answered elsewhere: {ANSWER}")),
        "{stderr}"
    );

    // The debater's next words carry the answer: the tool's result, then its phase.
    let results: Vec<(String, bool)> = server
        .main_turns()
        .iter()
        .flat_map(|t| t.tool_results())
        .map(|(_, text, error)| (text, error))
        .collect();
    assert_eq!(
        results,
        [(format!("The human answered: {ANSWER}"), false)],
        "{stderr}"
    );
    project.assert_asked_and_answered(&debate, QUESTION, ANSWER, true);
    let view = served.get(&format!("/api/debates/{debate}")).json();
    assert_eq!(line(&view, "main")["headless"]["state"], "done");
}
