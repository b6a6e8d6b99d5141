//! `anvil serve`'s JSON API over real HTTP on 127.0.0.1: every route, every error status, and
//! the guard (token, Host, origin). Debates move through the real `anvil hook stop`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::anvil::{Project, Started};
use crate::support::serve::Served;
use crate::support::snap::Filters;

const S1: &str = "5e1a0000-0000-4000-8000-000000000001";
const S2: &str = "5e1a0000-0000-4000-8000-000000000002";

fn stop(project: &Project, session: &str, text: &str) -> Value {
    let run = project
        .hook(&json!({
            "session_id": session,
            "cwd": project.path(),
            "hook_event_name": "Stop",
            "stop_hook_active": true,
            "last_assistant_message": text,
        }))
        .ok();
    run.json().unwrap_or(Value::Null)
}

fn session_start(project: &Project, session: &str, transcript: &std::path::Path) {
    project
        .anvil_stdin(
            &["hook", "session-start"],
            json!({
                "session_id": session,
                "cwd": project.path(),
                "hook_event_name": "SessionStart",
                "source": "startup",
                "transcript_path": transcript,
            })
            .to_string()
            .as_bytes(),
        )
        .ok();
}

/// A project with a 2-round debate bound to S1, its first round recorded.
fn debate_after_round_1() -> (Project, Started) {
    let project = Project::new();
    let started = debate_after_round_1_in(&project);
    (project, started)
}

/// [`debate_after_round_1`] in `project`.
fn debate_after_round_1_in(project: &Project) -> Started {
    let started = project.start(&[
        "Should we rewrite billing in Rust?",
        "--rounds",
        "2",
        "--session",
        S1,
    ]);
    stop(project, S1, "ADVOCATE r1: yes, for safety.");
    stop(project, S1, "CRITIC r1: no, the risk is too high.");
    started
}

fn steering_of(served: &Served, debate: &str, line: &str) -> Vec<Value> {
    let view = served.get(&format!("/api/debates/{debate}")).json();
    view["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == line)
        .unwrap()["steering"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn without_the_token_nothing_is_answered() {
    let project = Project::new();
    let served = Served::start(&project);
    for path in [
        "/",
        "/api/debates",
        "/api/sessions",
        "/api/events",
        "/assets/app.js",
    ] {
        let res = served.request("GET", path).send();
        assert!(res.error(401).contains("token"), "{path}");
        let wrong = served.request("GET", path).bearer("0000").send();
        assert_eq!(wrong.error(401), "wrong token", "{path}");
    }
    let wrong_query = served.request("GET", "/?token=nope").send();
    wrong_query.error(401);
    // The right token in the URL of a request that changes something: not "wrong", but
    // where it belongs.
    let posted = served
        .request(
            "POST",
            &format!("/api/debates/x/lines/main/steer?token={}", served.token),
        )
        .json(&serde_json::json!({"text": "t"}))
        .send();
    let said = posted.error(401);
    assert!(said.contains("Authorization: Bearer"), "{said}");
}

#[test]
fn the_token_in_the_url_becomes_a_cookie_and_the_page_loads_with_it() {
    let (project, started) = debate_after_round_1();
    let served = Served::start(&project);
    let opened = served
        .request("GET", &format!("/?token={}", served.token))
        .send();
    assert_eq!(opened.status, 303, "{opened:?}");
    assert_eq!(opened.header("location"), Some("/"));
    let cookie = opened.header("set-cookie").expect("a cookie").to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap().to_owned();
    let page = served.request("GET", "/").header("Cookie", &pair).send();
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&started.debate), "{}", page.body);
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"));
    assert!(!page.body.contains("<script>"), "no inline script");
    assert!(page.header("server-timing").is_some());
    // Assets and the debate page answer to the cookie as well.
    for path in [
        "/assets/app.js".to_owned(),
        "/assets/style.css".to_owned(),
        format!("/debates/{}", started.debate),
        format!("/debates/{}/compare", started.debate),
        "/sessions".to_owned(),
    ] {
        let res = served.request("GET", &path).header("Cookie", &pair).send();
        assert_eq!(res.status, 200, "{path}: {}", res.body);
    }
}

#[test]
fn a_foreign_host_is_refused_even_with_the_token() {
    let project = Project::new();
    let served = Served::start(&project);
    for host in ["evil.example", "rebind.example:80", "localhost:1"] {
        let res = served
            .request("GET", "/api/debates")
            .bearer(&served.token)
            .header("Host", host)
            .send();
        assert!(res.error(403).contains("host"), "{host}");
    }
    let ok = served
        .request("GET", "/api/debates")
        .bearer(&served.token)
        .header("Host", &format!("localhost:{}", served.port))
        .send();
    assert_eq!(ok.status, 200, "{}", ok.body);
}

#[test]
fn a_cross_origin_post_cannot_steer() {
    let (project, started) = debate_after_round_1();
    let served = Served::start(&project);
    let path = format!("/api/debates/{}/lines/main/steer", started.debate);
    let cookie = format!("anvil_token_{}={}", served.port, served.token);
    let body = json!({"text": "abandon the debate"});
    // A cross-site form: the cookie rides along, the Origin gives it away.
    let forged = served
        .request("POST", &path)
        .header("Cookie", &cookie)
        .header("Origin", "http://evil.example")
        .json(&body)
        .send();
    assert!(forged.error(403).contains("cross-origin"));
    // Even with the token in the header, a foreign origin is refused.
    let with_header = served
        .request("POST", &path)
        .bearer(&served.token)
        .header("Origin", "http://evil.example")
        .json(&body)
        .send();
    with_header.error(403);
    // The cookie alone, with no origin at all, is not enough to change anything.
    let bare = served
        .request("POST", &path)
        .header("Cookie", &cookie)
        .json(&body)
        .send();
    bare.error(403);
    let cross_site = served
        .request("POST", &path)
        .header("Cookie", &cookie)
        .header("Sec-Fetch-Site", "cross-site")
        .json(&body)
        .send();
    cross_site.error(403);
    assert!(steering_of(&served, &started.debate, "main").is_empty());
    // The page itself: same origin, cookie.
    let same = served
        .request("POST", &path)
        .header("Cookie", &cookie)
        .header("Origin", &served.base())
        .json(&json!({"text": "mind the cost"}))
        .send();
    assert_eq!(same.status, 202, "{}", same.body);
}

#[test]
fn debates_list_and_one_debate_in_full() {
    let (project, started) = debate_after_round_1();
    let served = Served::start(&project);
    let list = served.get("/api/debates").json();
    assert_eq!(list[0]["id"], started.debate.as_str(), "{list}");
    assert_eq!(list[0]["status"], "running");
    assert_eq!(list[0]["lines"], 1);
    assert_eq!(list[0]["mode"], "analyst");
    let found = served.get("/api/debates?q=billing").json();
    assert_eq!(found.as_array().unwrap().len(), 1);
    let none = served.get("/api/debates?q=kubernetes").json();
    assert_eq!(none, json!([]));

    let view = served
        .get(&format!("/api/debates/{}", started.debate))
        .json();
    let main = &view["lines"][0];
    assert_eq!(main["name"], "main");
    assert_eq!(main["status"], "active");
    assert_eq!(main["round"], 2);
    let phases: Vec<&str> = main["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["start", "advocate", "critic"]);
    assert_eq!(main["phases"][1]["text"], "ADVOCATE r1: yes, for safety.");
    assert_eq!(main["question"], Value::Null);

    served.get("/api/debates/20990101-nothing-0000").error(404);
    served.get("/api/debates/..%2Fetc").error(404);
    served.get("/api/no-such-route").error(404);
}

#[test]
fn steering_is_queued_then_delivered_in_the_next_prompt_together() {
    let (project, started) = debate_after_round_1();
    let served = Served::start(&project);
    let path = format!("/api/debates/{}/lines/main/steer", started.debate);
    let first = served.post(&path, &json!({"text": "focus on migration cost"}));
    assert_eq!(first.status, 202, "{}", first.body);
    assert_eq!(first.json()["state"], "queued");
    served.post(&path, &json!({"text": "and on hiring"}));
    let queued = steering_of(&served, &started.debate, "main");
    assert_eq!(queued.len(), 2, "{queued:?}");
    assert!(queued.iter().all(|s| s["state"] == "queued"));

    // The next stop delivers both, in one prompt.
    let answer = stop(&project, S1, "ADVOCATE r2: still yes.");
    let prompt = answer["reason"].as_str().expect("a block");
    insta::assert_snapshot!(
        "prompt_with_steering_from_the_room",
        Filters::of(&project).redact(prompt)
    );
    let delivered = steering_of(&served, &started.debate, "main");
    assert_eq!(delivered.len(), 2, "{delivered:?}");
    assert!(
        delivered
            .iter()
            .all(|s| s["state"] == "delivered" && s["round"] == 2),
        "{delivered:?}"
    );

    served.post(&path, &json!({"text": "   "})).error(400);
    served.post(&path, &json!({"words": "x"})).error(400);
    served
        .request("POST", &path)
        .bearer(&served.token)
        .raw_body("application/json", b"{not json".to_vec())
        .send()
        .error(400);
    let huge = json!({"text": "x".repeat(200 * 1024)});
    let too_big = served.post(&path, &huge);
    assert_eq!(too_big.status, 413, "{}", too_big.body);
    assert!(too_big.json()["error"].is_string());
    served
        .post(
            &format!("/api/debates/{}/lines/nope/steer", started.debate),
            &json!({"text": "x"}),
        )
        .error(404);
    served
        .post(
            "/api/debates/20990101-none-0000/lines/main/steer",
            &json!({"text": "x"}),
        )
        .error(404);
}

#[test]
fn cancel_ends_a_line_once_and_a_finished_line_cannot_be_steered() {
    let (project, started) = debate_after_round_1();
    let served = Served::start(&project);
    let base = format!("/api/debates/{}/lines/main", started.debate);
    let cancelled = served.post(&format!("{base}/cancel"), &json!({"reason": "enough"}));
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
    assert_eq!(cancelled.json()["status"], "cancelled");
    let again = served
        .post(&format!("{base}/cancel"), &json!({}))
        .error(409);
    insta::assert_snapshot!("cancel_twice", Filters::of(&project).redact(&again));
    served
        .post(&format!("{base}/steer"), &json!({"text": "more"}))
        .error(409);
    served
        .post(&format!("{base}/answer"), &json!({"text": "x"}))
        .error(409);
    let commits = project.commits(&started.debate);
    assert_eq!(commits.last().unwrap().phase(), "cancel");
    assert_eq!(
        commits.last().unwrap().trailer("Anvil-Reason"),
        Some("enough")
    );
    let list = served.get("/api/debates").json();
    assert_eq!(list[0]["status"], "cancelled");
}

#[test]
fn an_answer_from_the_api_reaches_the_waiting_ask() {
    let (project, started) = debate_after_round_1();
    let served = Served::start(&project);
    let base = format!("/api/debates/{}/lines/main", started.debate);
    let refused = served
        .post(&format!("{base}/answer"), &json!({"text": "40k"}))
        .error(409);
    insta::assert_snapshot!(
        "answer_without_a_question",
        Filters::of(&project).redact(&refused)
    );
    let asker = project
        .command(&["ask", "--line", &started.debate, "What is the budget?"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let view = served
            .get(&format!("/api/debates/{}", started.debate))
            .json();
        if view["lines"][0]["question"]["text"] == "What is the budget?"
            && project
                .line_dir(&started.debate, "main")
                .join("asking")
                .exists()
        {
            assert_eq!(view["status"], "waiting");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the question never showed: {view}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    served
        .post(&format!("{base}/answer"), &json!({"text": ""}))
        .error(400);
    let answered = served.post(
        &format!("{base}/answer"),
        &json!({"text": "About 40k a year"}),
    );
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert_eq!(answered.json()["delivered_now"], true);
    let out = asker.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The human answered: About 40k a year\n"
    );
    // First answer wins: a second one finds no open question.
    served
        .post(&format!("{base}/answer"), &json!({"text": "60k"}))
        .error(409);
}

#[test]
fn a_branch_from_the_api_is_a_line_of_the_record() {
    let (project, started) = debate_after_round_1();
    let served = Served::start(&project);
    let path = format!("/api/debates/{}/branch", started.debate);
    let made = served.post(
        &path,
        &json!({"from": "round-1", "steer": "assume a team of two", "name": "small-team"}),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    let reply = made.json();
    assert_eq!(reply["line"], "small-team");
    assert_eq!(
        reply["continue"],
        format!("claude \"$(anvil resume {}@small-team)\"", started.debate)
    );
    let log = project
        .anvil(&["log", &format!("{}@small-team", started.debate)])
        .ok();
    insta::assert_snapshot!(
        "log_of_a_branch_made_in_the_room",
        Filters::of(&project).redact(&log.stdout)
    );
    let view = served
        .get(&format!("/api/debates/{}", started.debate))
        .json();
    let branch = view["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "small-team")
        .expect("the new line")
        .clone();
    assert_eq!(branch["branched_from"]["line"], "main");
    assert_eq!(branch["branched_from"]["steering"], "assume a team of two");

    served
        .post(
            &path,
            &json!({"from": "round-1", "steer": "again", "name": "small-team"}),
        )
        .error(409);
    served
        .post(&path, &json!({"from": "round-9", "steer": "x"}))
        .error(400);
    served
        .post(&path, &json!({"from": "round-1", "steer": " "}))
        .error(400);
    served
        .post(
            &path,
            &json!({"from": "round-1", "steer": "x", "name": "../up"}),
        )
        .error(400);
    served.post(&path, &json!({"steer": "no from"})).error(400);
    served
        .post(
            "/api/debates/20990101-none-0000/branch",
            &json!({"from": "round-1", "steer": "x"}),
        )
        .error(404);
}

#[test]
fn feedback_to_a_session_is_delivered_at_its_next_stop() {
    let project = Project::new();
    let transcript = project.path().join("t.jsonl");
    std::fs::write(
        &transcript,
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Tidy the parser module\"}}\n",
    )
    .unwrap();
    session_start(&project, S2, &transcript);
    let served = Served::start(&project);
    let sessions = served.get("/api/sessions").json();
    assert_eq!(sessions[0]["session"], S2, "{sessions}");
    assert_eq!(sessions[0]["first_prompt"], "Tidy the parser module");
    assert_eq!(sessions[0]["messages"], json!([]));

    // Nothing queued: the stop is as silent as without anvil.
    assert_eq!(stop(&project, S2, "done"), Value::Null);

    let path = format!("/api/sessions/{S2}/feedback");
    let queued = served.post(&path, &json!({"text": "also update the docs"}));
    assert_eq!(queued.status, 202, "{}", queued.body);
    served.post(&path, &json!({"text": "and run clippy"}));
    let answer = stop(&project, S2, "done");
    assert_eq!(answer["decision"], "block", "{answer}");
    let reason = answer["reason"].as_str().unwrap();
    insta::assert_snapshot!(
        "feedback_delivered_to_a_session",
        Filters::of(&project).redact(reason)
    );
    let messages = served.get("/api/sessions").json()[0]["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 2);
    assert!(
        messages
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["delivered"] == true)
    );
    assert_eq!(stop(&project, S2, "done again"), Value::Null);

    served.post(&path, &json!({"text": ""})).error(400);
    served
        .post(
            "/api/sessions/no-such-session/feedback",
            &json!({"text": "x"}),
        )
        .error(404);
    served
        .post(
            "/api/sessions/..%2F..%2Fetc/feedback",
            &json!({"text": "x"}),
        )
        .error(404);
}

#[test]
fn a_recorded_phase_is_an_event_on_the_stream() {
    let (project, started) = debate_after_round_1();
    let served = Served::start(&project);
    let mut events = served
        .request("GET", "/api/events")
        .bearer(&served.token)
        .events();
    assert_eq!(events.status, "200");
    assert_eq!(events.next().map(|(e, _)| e).as_deref(), Some("hello"));
    stop(&project, S1, "ADVOCATE r2: more.");
    let (event, data) = events.next().expect("a change event");
    assert_eq!(event, "change");
    let change: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(change, json!({"kind": "debate", "debate": started.debate}));
}

/// The line's `headless` as the API shows it, once `done` says it is there.
fn wait_for_headless(
    served: &Served,
    debate: &str,
    line: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = served.get(&format!("/api/debates/{debate}")).json();
        let line = view["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == line)
            .cloned()
            .unwrap_or(Value::Null);
        if done(&line["headless"]) {
            return line;
        }
        assert!(Instant::now() < deadline, "never came: {line:#}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A "claude" that never answers, in a folder of its own: a headless run stays running until
/// the test ends it.
fn silent_claude() -> (tempfile::TempDir, std::path::PathBuf) {
    let bin = tempfile::tempdir().unwrap();
    let slow = bin.path().join("claude");
    std::fs::write(&slow, "#!/bin/sh\nexec sleep 60\n").unwrap();
    std::fs::set_permissions(&slow, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (bin, slow)
}

/// Ends a headless run the page started: its whole process group.
fn kill_run(pid: u64) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status();
}

#[test]
fn run_starts_a_headless_run_once_and_refuses_a_finished_line() {
    let (project, started) = debate_after_round_1();
    let debate = &started.debate;
    let (_bin, slow) = silent_claude();
    let served = Served::start_with(&project, &[("ANVIL_CLAUDE_BIN", slow.clone().into())]);

    let line = served.get(&format!("/api/debates/{debate}")).json()["lines"][0].clone();
    assert_eq!(
        (&line["runnable"], &line["headless"]),
        (&json!(true), &Value::Null)
    );
    let path = format!("/api/debates/{debate}/lines/main/run");
    let res = served.post(&path, &json!({}));
    assert_eq!(res.status, 202, "{}", res.body);
    let reply = res.json();
    let pid = reply["pid"].as_u64().unwrap();
    let log = reply["log"].as_str().unwrap().to_owned();
    assert!(
        log.starts_with(".anvil/runs/") && log.ends_with(".log"),
        "{log}"
    );

    // Shown as running; a second start is a conflict; bad bodies and unknown lines are refused.
    let line = wait_for_headless(&served, debate, "main", |h| h["state"] == "running");
    assert_eq!(line["headless"]["pid"], pid);
    assert_eq!(line["runnable"], false);
    let again = served.post(&path, &json!({})).error(409);
    assert!(again.contains("already running headless"), "{again}");
    served.post(&path, &json!({"text": "x"})).error(400);
    served
        .post(&format!("/api/debates/{debate}/lines/nope/run"), &json!({}))
        .error(404);
    // The run's progress goes to its log, and it took the line over with a session of its own.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !project.read(&log).contains("running") {
        assert!(Instant::now() < deadline, "{}", project.read(&log));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        project
            .read(&log)
            .contains(&format!("anvil: running {debate}@main"))
    );

    // Stopped from outside (its process group): the page says it stopped, and it can run again.
    kill_run(pid);
    let line = wait_for_headless(&served, debate, "main", |h| h["state"] == "stopped");
    assert_eq!(line["runnable"], true);

    // A finished line cannot run.
    served
        .post(
            &format!("/api/debates/{debate}/lines/main/cancel"),
            &json!({}),
        )
        .json();
    let over = served.post(&path, &json!({})).error(409);
    assert!(over.contains("cancelled"), "{over}");
}

#[test]
fn a_run_that_cannot_start_claude_shows_as_failed() {
    let (project, started) = debate_after_round_1();
    let missing = project.path().join("no-such-claude");
    let served = Served::start_with(&project, &[("ANVIL_CLAUDE_BIN", missing.clone().into())]);
    let res = served.post(
        &format!("/api/debates/{}/lines/main/run", started.debate),
        &json!({}),
    );
    assert_eq!(res.status, 202, "{}", res.body);
    let line = wait_for_headless(&served, &started.debate, "main", |h| h["state"] == "failed");
    let message = line["headless"]["message"].as_str().unwrap();
    assert!(message.contains("cannot run"), "{message}");
    assert_eq!(line["runnable"], true);
}

/// A line that waits for a Claude session says so on its page, with how to take it; a line
/// a session drives does not.
#[test]
fn a_waiting_line_says_how_to_take_it() {
    let project = Project::new();
    let waiting = project.start(&["Who takes me?", "--rounds", "1"]);
    let driven = debate_after_round_1_in(&project);
    let served = Served::start(&project);
    let page = |debate: &str| {
        let res = served
            .request("GET", &format!("/debates/{debate}"))
            .bearer(&served.token)
            .send();
        assert_eq!(res.status, 200, "{}", res.body);
        res.body
    };
    let body = page(&waiting.debate);
    assert!(body.contains("Waiting for a Claude session"), "{body}");
    assert!(
        body.contains(&format!("anvil resume {}@main", waiting.debate)),
        "{body}"
    );
    assert!(!page(&driven.debate).contains("Waiting for a Claude session"));
}

/// The issue's case: a session is at work on something else (its SessionStart ran); a branch is
/// made from the web room; that session stops and is not handed the branch. Two sessions that
/// start afterwards stop together: exactly one of them takes it.
#[test]
fn a_branch_from_the_web_room_never_goes_to_a_session_already_at_work() {
    const OTHER: &str = "0ddba11c-0000-4000-8000-000000000001";
    const NEW_A: &str = "0ddba11c-0000-4000-8000-00000000000a";
    const NEW_B: &str = "0ddba11c-0000-4000-8000-00000000000b";
    let (project, started) = debate_after_round_1();
    let none = project.path().join("no-transcript.jsonl");
    session_start(&project, OTHER, &none);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let served = Served::start(&project);
    let made = served.post(
        &format!("/api/debates/{}/branch", started.debate),
        &json!({"from": "round-1", "steer": "assume a team of two", "name": "small-team"}),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(
        stop(&project, OTHER, "I finished the refactor."),
        Value::Null,
        "the busy session is left alone"
    );

    std::thread::sleep(std::time::Duration::from_millis(20));
    session_start(&project, NEW_A, &none);
    session_start(&project, NEW_B, &none);
    let project = &project;
    let answers: Vec<Value> = std::thread::scope(|scope| {
        let a = scope.spawn(move || stop(project, NEW_A, "hello"));
        let b = scope.spawn(move || stop(project, NEW_B, "hello"));
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    let handed = answers
        .iter()
        .filter(|a| a.to_string().contains("small-team"))
        .count();
    assert_eq!(handed, 1, "exactly one new session takes it: {answers:?}");
}

/// "New debate": the form's choices start a debate as `anvil start` would (the config's
/// defaults, the same validation), and the server runs it headless at once. The line is the
/// run's from the start: a Claude session that starts meanwhile is not handed it.
#[test]
fn a_new_debate_from_the_api_is_started_and_run_headless() {
    const NEWCOMER: &str = "0ddba11c-0000-4000-8000-0000000000cc";
    let project = Project::new();
    std::fs::write(project.path().join(".anvil/config.toml"), "rounds = 4\n").unwrap();
    let (_bin, slow) = silent_claude();
    let served = Served::start_with(&project, &[("ANVIL_CLAUDE_BIN", slow.into())]);
    let res = served.post(
        "/api/debates",
        &json!({"question": "  Should we adopt GraphQL?  ", "mode": "philosopher"}),
    );
    assert_eq!(res.status, 201, "{}", res.body);
    let reply = res.json();
    let debate = reply["debate"].as_str().unwrap().to_owned();
    assert_eq!(
        (&reply["line"], &reply["state"]),
        (&json!("main"), &json!("running"))
    );
    assert_eq!(reply["url"], format!("/debates/{debate}"));
    let pid = reply["pid"].as_u64().unwrap();

    let line = wait_for_headless(&served, &debate, "main", |h| h["state"] == "running");
    assert_eq!(line["headless"]["pid"], pid);
    assert_eq!(
        line["rounds"], 4,
        "the config's rounds, as `anvil start` reads them"
    );
    let view = served.get(&format!("/api/debates/{debate}")).json();
    assert_eq!(
        (&view["question"], &view["mode"]),
        (&json!("Should we adopt GraphQL?"), &json!("philosopher"))
    );
    let commits = project.commits(&debate);
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(phases, ["start"]);
    let none = project.path().join("no-transcript.jsonl");
    session_start(&project, NEWCOMER, &none);
    assert_eq!(
        stop(&project, NEWCOMER, "hello"),
        Value::Null,
        "a session that starts now is not handed the run's debate"
    );
    kill_run(pid);
}

/// Everything the form could send wrong is refused with what is wrong, and records nothing;
/// the guard stands in front of it as in front of every change.
#[test]
fn a_new_debate_is_refused_with_the_reason_and_nothing_is_recorded() {
    let project = Project::new();
    let missing = project.path().join("no-such-codex");
    let served = Served::start_with(
        &project,
        &[
            ("ANVIL_CODEX_BIN", missing.into()),
            (
                "ANVIL_CLAUDE_BIN",
                crate::support::claude::claude_bin().into(),
            ),
            ("ANTHROPIC_API_KEY", "test".into()),
        ],
    );
    // The form offers only the agents ready here, and says what the others lack.
    let form = served.get("/new");
    assert_eq!(form.status, 200, "{}", form.body);
    assert!(
        form.body.contains(r#"<option value="claude">"#),
        "{}",
        form.body
    );
    assert!(
        !form.body.contains(r#"<option value="codex">"#),
        "{}",
        form.body
    );
    assert!(form.body.contains("codex (not installed)"), "{}", form.body);
    for (body, says) in [
        (json!({"question": "  "}), "a debate needs a question"),
        (json!({"question": "Q?", "rounds": 11}), "out of range"),
        (json!({"question": "Q?", "mode": "shouting"}), "shouting"),
        (
            json!({"question": "Q?", "mode": "devils-advocate"}),
            "add --position",
        ),
        (
            json!({"question": "Q?", "seats": {"critic": "codex"}}),
            "codex cannot take the critic seat here: not installed",
        ),
        (
            json!({"question": "Q?", "seats": {"critic": "gpt"}}),
            "names no agent anvil knows: 'gpt'",
        ),
        (
            json!({"question": "Q?", "seats": {"judge": "claude"}}),
            "no role or voice `judge`",
        ),
        (json!({"question": "Q?", "colour": "red"}), "unknown field"),
    ] {
        let said = served.post("/api/debates", &body).error(400);
        assert!(said.contains(says), "{body}: {said}");
    }
    let path = "/api/debates";
    let cookie = format!("anvil_token_{}={}", served.port, served.token);
    let forged = served
        .request("POST", path)
        .header("Cookie", &cookie)
        .header("Origin", "http://evil.example")
        .json(&json!({"question": "Q?"}))
        .send();
    assert!(forged.error(403).contains("cross-origin"));
    let bare = served
        .request("POST", path)
        .json(&json!({"question": "Q?"}))
        .send();
    bare.error(401);
    assert_eq!(served.get("/api/debates").json(), json!([]));
}
