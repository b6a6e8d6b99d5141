//! Self-test of the end-to-end harness: the real Claude Code CLI against the scripted model
//! server, with a project Stop hook that blocks once.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::both_clients;
use crate::support::claude::{Claude, Client, new_session_id};
use crate::support::model_server::{ModelServer, Reply};

both_clients!(claude_runs_against_the_scripted_server_and_relays_stop_hook_feedback);
fn claude_runs_against_the_scripted_server_and_relays_stop_hook_feedback(client: Client) {
    let server = ModelServer::start(|turn| match turn.stop_hook_feedback() {
        Some(reason) => Reply::text(format!("final answer after: {reason}")),
        None => Reply::text(format!("first answer to: {}", turn.latest_user_text)),
    });

    let project = tempfile::tempdir().unwrap();
    let hook = project.path().join("stop-hook.sh");
    std::fs::write(
        &hook,
        r#"#!/bin/bash
dir=$(dirname "$0")
cat > "$dir/hook-input.json"
env > "$dir/hook-env.txt"
if [ ! -e "$dir/blocked-once" ]; then
  touch "$dir/blocked-once"
  echo '{"decision":"block","reason":"please continue"}'
fi
"#,
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": hook.to_str().unwrap()}
        ]}]}})
        .to_string(),
    )
    .unwrap();

    let session = new_session_id();
    let out = Claude::new(&server, project.path(), "hello model")
        .client(client)
        .session_id(&session)
        .run();
    out.assert_success();
    assert_eq!(
        out.result_text(),
        Some("final answer after: please continue"),
        "{}",
        out.describe()
    );
    assert_eq!(out.session_id(), Some(session.as_str()));
    // The binary is the version the tests pin for it.
    let version = std::process::Command::new(client.bin())
        .arg("--version")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .expect("claude --version");
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    assert!(
        version.starts_with(client.version()),
        "package.json and Client::version disagree: {version}"
    );
    assert!(out.transcript().is_some(), "no transcript written");

    let turns = server.main_turns();
    assert_eq!(turns.len(), 2, "{turns:#?}");
    assert_eq!(turns[0].latest_user_text, "hello model");
    // 2.1.197 hands the reason over as the message's text, 2.1.332 inside a system reminder.
    assert_eq!(
        turns[1].stop_hook_block(),
        Some("please continue"),
        "{}",
        turns[1].latest_user_text_raw()
    );
    assert_eq!(turns[1].session_id.as_deref(), Some(session.as_str()));
    assert_eq!(turns[1].session_index, Some(1));
    assert!(server.script_panics().is_empty());

    let input: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.path().join("hook-input.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(input["session_id"], json!(session));
    // What the Stop hook tells the client by: AI_AGENT, for this very session.
    let env = std::fs::read_to_string(project.path().join("hook-env.txt")).unwrap();
    let agent = format!(
        "AI_AGENT=claude-code_{}_harness",
        client.version().replace('.', "-")
    );
    assert!(env.lines().any(|l| l == agent), "{env}");
    assert!(
        env.lines()
            .any(|l| l == format!("CLAUDE_CODE_SESSION_ID={session}")),
        "{env}"
    );
    assert_eq!(input["stop_hook_active"], json!(true));
    assert_eq!(
        input["last_assistant_message"],
        json!("final answer after: please continue")
    );
}

/// One HTTP/1.1 request over a raw socket; returns (status line, body).
fn http(port: u16, method: &str, path: &str, body: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

#[test]
fn server_answers_plain_json_sse_count_tokens_and_unknown_paths() {
    let server = ModelServer::start(|turn| {
        Reply::text_and_tool_use(
            format!("n={}", turn.index()),
            "Bash",
            json!({"command": "echo hi"}),
        )
    });
    let request = json!({
        "model": "m", "max_tokens": 100, "tools": [{"name": "Bash"}],
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>\nx\n</system-reminder>"},
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "out"}]},
                {"type": "text", "text": "more"}
            ]},
            {"role": "system", "content": "listing"}
        ]
    });
    let (status, body) = http(
        server.port(),
        "POST",
        "/v1/messages?beta=true",
        &request.to_string(),
    );
    assert!(status.contains("200"), "{status}");
    let message: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(message["content"][0]["text"], "n=0");
    assert_eq!(message["content"][1]["input"]["command"], "echo hi");

    let mut streaming = request.clone();
    streaming["stream"] = json!(true);
    let (_, body) = http(
        server.port(),
        "POST",
        "/v1/messages",
        &streaming.to_string(),
    );
    for event in [
        "message_start",
        "content_block_start",
        "input_json_delta",
        "message_delta",
        "message_stop",
    ] {
        assert!(body.contains(event), "{event} missing in {body}");
    }

    let (_, body) = http(
        server.port(),
        "POST",
        "/v1/messages/count_tokens",
        &request.to_string(),
    );
    assert!(body.contains("input_tokens"), "{body}");
    let (status, _) = http(server.port(), "HEAD", "/", "");
    assert!(status.contains("404"), "{status}");

    let mut side = request.clone();
    side["max_tokens"] = json!(1);
    let (_, body) = http(server.port(), "POST", "/v1/messages", &side.to_string());
    assert!(body.contains("\"ok\""), "{body}");

    let turns = server.requests();
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[0].latest_user_text, "out\nmore");
    assert!(turns[0].latest_user_text_raw().contains("system-reminder"));
    assert_eq!(
        turns[0].tool_results(),
        vec![("t1".to_owned(), "out".to_owned(), false)]
    );
    assert_eq!(turns[1].main_index, Some(1));
    assert!(!turns[2].is_main());
    assert_eq!(server.main_turns().len(), 2);
    assert_eq!(server.other_requests().len(), 2);
}

#[test]
fn server_speaks_geminis_api_and_fills_the_schemas_of_its_side_calls() {
    let server = ModelServer::start(|turn| {
        Reply::text_and_tool_use(
            format!("heard {}", turn.latest_user_text),
            "read_file",
            json!({"file_path": "a.txt"}),
        )
    });
    let turn = json!({
        "contents": [
            {"role": "user", "parts": [{"text": "see debate\\@main"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "glob", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "glob",
                                                              "response": {"output": "a.txt"}}}]}
        ],
        "systemInstruction": {"parts": [{"text": "You are Gemini."}]},
        "tools": [{"functionDeclarations": [{"name": "read_file"}, {"name": "glob"}]}]
    });
    let (status, body) = http(
        server.port(),
        "POST",
        "/v1beta/models/g-model:streamGenerateContent?alt=sse",
        &turn.to_string(),
    );
    assert!(status.contains("200"), "{status}");
    let event: serde_json::Value =
        serde_json::from_str(body.trim().strip_prefix("data: ").unwrap()).unwrap();
    let parts = &event["candidates"][0]["content"]["parts"];
    assert_eq!(parts[0]["text"], "heard see debate@main");
    assert_eq!(parts[1]["functionCall"]["name"], "read_file");
    assert!(event["usageMetadata"]["promptTokenCount"].as_u64().unwrap() > 0);

    // Its side calls ask for JSON by schema: the router's score, the next speaker, the loop
    // check's confidence.
    let side = json!({
        "contents": [{"role": "user", "parts": [{"text": "classify"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "object", "properties": {
                "complexity_reasoning": {"type": "string"},
                "complexity_score": {"type": "integer"},
                "next_speaker": {"type": "string", "enum": ["model", "user"]},
                "unproductive_state_confidence": {"type": "number"}
            }}}
    });
    let (_, body) = http(
        server.port(),
        "POST",
        "/v1beta/models/g-model:generateContent",
        &side.to_string(),
    );
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    let filled: serde_json::Value = serde_json::from_str(
        answer["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        filled,
        json!({"complexity_reasoning": "scripted", "complexity_score": 1,
               "next_speaker": "user", "unproductive_state_confidence": 0})
    );

    let turns = server.requests();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0].model, "g-model");
    assert_eq!(
        turns[0].tool_results(),
        vec![(
            "glob".to_owned(),
            json!({"output": "a.txt"}).to_string(),
            false
        )]
    );
    assert_eq!(turns[0].system_text(), "You are Gemini.");
    assert_eq!(turns[0].tool_names(), ["read_file", "glob"]);
    assert!(!turns[1].is_main());
    assert_eq!(server.main_turns().len(), 1);
}

#[test]
fn a_spawned_claude_can_be_killed_mid_request_and_runs_time_out() {
    let server =
        ModelServer::start(|_| Reply::text("late").delayed(std::time::Duration::from_secs(30)));
    let project = tempfile::tempdir().unwrap();

    let running = Claude::new(&server, project.path(), "hang").spawn();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while server.main_turns().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "claude never called the model"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = running.kill();
    assert!(!killed.success());
    assert_eq!(killed.signal(), Some(9), "{}", killed.describe());

    let out = Claude::new(&server, project.path(), "hang")
        .timeout(std::time::Duration::from_secs(3))
        .run();
    assert!(out.timed_out, "{}", out.describe());
}
