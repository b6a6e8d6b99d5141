//! Self-test of the harness for the other agents: Codex CLI, Copilot CLI and Qwen Code, run
//! for real against the scripted server (Responses API for Codex, Chat Completions for the
//! other two). Each runs headless in its read-only or plan mode (a scripted attempt to write
//! into the project fails), resumes its session for a second turn, and its version, model and
//! token usage can be read back from its own transcript or JSON output.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::agents::{AgentsHome, Cli, read_jsonl};
use crate::support::model_server::{Agent, Api, ModelServer, Reply, Turn};

const TIMEOUT: Duration = Duration::from_secs(180);

/// Answers "WRITE" with the tool calls `writes` makes for the agent, a tool result with what
/// the tools said, and anything else with what it was asked.
fn script(turn: &Turn) -> Reply {
    if let Some((_, result, _)) = turn.tool_results().last() {
        return Reply::text(format!("after the tools: {result}"));
    }
    let asked = turn.latest_user_text.trim();
    if asked.contains("WRITE") {
        let mut reply = Reply::text("writing");
        reply.blocks.clear();
        for (name, input) in writes(turn.agent) {
            reply = reply.and_tool_use(name, input);
        }
        return reply;
    }
    // The prompt is the last line (Copilot's plan mode puts a notice before it and `[[PLAN]] `
    // in front of it).
    let prompt = asked.lines().last().unwrap_or_default();
    let prompt = prompt.strip_prefix("[[PLAN]] ").unwrap_or(prompt);
    Reply::text(format!("{} replies to: {prompt}", turn.agent.name()))
}

/// Tool calls that would write `written.txt` in the project, in each agent's own tools.
fn writes(agent: Agent) -> Vec<(&'static str, Value)> {
    let shell = "echo pwned > written.txt";
    match agent {
        Agent::Codex => vec![("exec_command", json!({"cmd": shell}))],
        Agent::Copilot => vec![
            (
                "create",
                json!({"path": "written.txt", "file_text": "pwned\n"}),
            ),
            (
                "bash",
                json!({"command": shell, "description": "write", "mode": "sync", "initial_wait": 10}),
            ),
        ],
        Agent::Qwen => vec![
            (
                "write_file",
                json!({"file_path": "written.txt", "content": "pwned\n"}),
            ),
            (
                "run_shell_command",
                json!({"command": shell, "description": "write"}),
            ),
        ],
        _ => Vec::new(),
    }
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "a project\n").unwrap();
    dir
}

fn assert_unwritten(project: &Path) {
    assert!(
        !project.join("written.txt").exists(),
        "a seat in read-only mode wrote into the project"
    );
}

#[test]
fn codex_runs_read_only_resumes_and_reports_its_usage() {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = project();
    let first = home
        .run(
            Cli::Codex,
            project.path(),
            &[
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
                "read-only",
                "-m",
                "codex-seat-model",
                "first turn: WRITE a file",
            ],
            TIMEOUT,
        )
        .ok();
    let events = first.jsonl();
    let thread = events
        .iter()
        .find(|e| e["type"] == "thread.started")
        .and_then(|e| e["thread_id"].as_str())
        .unwrap_or_else(|| panic!("no thread id: {}", first.describe()))
        .to_owned();
    // The command ran, and the sandbox refused its write.
    let results = server.turns_of(Agent::Codex)[1].tool_results();
    assert_eq!(results.len(), 1, "{}", first.describe());
    assert!(
        results[0].1.contains("Read-only file system"),
        "{results:?}"
    );
    assert_unwritten(project.path());

    let second = home
        .run(
            Cli::Codex,
            project.path(),
            &[
                "exec",
                "resume",
                "--json",
                "--skip-git-repo-check",
                "-c",
                "sandbox_mode=\"read-only\"",
                "-m",
                "codex-seat-model",
                &thread,
                "second turn",
            ],
            TIMEOUT,
        )
        .ok();
    let said: Vec<String> = second
        .jsonl()
        .iter()
        .filter(|e| e["item"]["type"] == "agent_message")
        .filter_map(|e| e["item"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        said,
        ["codex replies to: second turn"],
        "{}",
        second.describe()
    );

    let turns = server.turns_of(Agent::Codex);
    assert_eq!(turns.len(), 3, "a tool call, its result, the second turn");
    assert!(turns.iter().all(|t| t.api == Api::Responses));
    assert!(turns.iter().all(|t| t.model == "codex-seat-model"));
    assert!(
        turns
            .iter()
            .all(|t| t.session_id.as_deref() == Some(&*thread))
    );
    // The resumed turn carries the first one: it is the same session.
    assert!(
        turns[2]
            .all_user_text()
            .contains("first turn: WRITE a file")
    );
    assert!(turns[0].system_text().contains("read-only"));

    // Version, model and usage, from Codex's own rollout file.
    let rollouts = home.codex_rollouts();
    assert_eq!(rollouts.len(), 1, "{rollouts:?}");
    assert!(
        rollouts[0]
            .to_string_lossy()
            .ends_with(&format!("{thread}.jsonl"))
    );
    let lines = read_jsonl(&rollouts[0]);
    let meta = lines.iter().find(|l| l["type"] == "session_meta").unwrap();
    assert_eq!(meta["payload"]["cli_version"], "0.169.0");
    let context = lines.iter().find(|l| l["type"] == "turn_context").unwrap();
    assert_eq!(context["payload"]["model"], "codex-seat-model");
    let usage: Vec<u64> = lines
        .iter()
        .filter(|l| l["type"] == "token_usage_record")
        .map(|l| l["payload"]["usage"]["input_tokens"].as_u64().unwrap())
        .collect();
    let sent: Vec<u64> = server
        .sent()
        .iter()
        .map(|s| s["usage"][0].as_u64().unwrap())
        .collect();
    assert_eq!(usage, sent);
}

#[test]
fn copilot_runs_in_plan_mode_resumes_and_reports_its_usage() {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = project();
    let session = crate::support::claude::new_session_id();
    let common = [
        "--allow-all-tools",
        "--mode",
        "plan",
        "--output-format",
        "json",
        "--model",
        "copilot-seat-model",
    ];
    let mut args = vec!["-p", "first turn: WRITE a file", "--session-id", &session];
    args.extend(common);
    let first = home.run(Cli::Copilot, project.path(), &args, TIMEOUT).ok();
    let refused: Vec<String> = first
        .jsonl()
        .iter()
        .filter(|e| e["type"] == "tool.execution_complete")
        .map(|e| {
            assert_eq!(e["data"]["success"], false, "{e}");
            e["data"]["error"]["message"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(refused.len(), 2, "{}", first.describe());
    assert!(
        refused.iter().all(|m| m.contains("Plan mode")),
        "{refused:?}"
    );
    assert_unwritten(project.path());

    let resume = format!("--resume={session}");
    let mut args = vec!["-p", "second turn", resume.as_str()];
    args.extend(common);
    let second = home.run(Cli::Copilot, project.path(), &args, TIMEOUT).ok();
    let events = second.jsonl();
    let said: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "assistant.message")
        .filter_map(|e| e["data"]["content"].as_str())
        .collect();
    assert_eq!(
        said,
        ["copilot replies to: second turn"],
        "{}",
        second.describe()
    );
    let result = events.iter().find(|e| e["type"] == "result").unwrap();
    assert_eq!(result["sessionId"], json!(session));

    let turns = server.turns_of(Agent::Copilot);
    assert_eq!(turns.len(), 3, "a tool call, its result, the second turn");
    assert!(turns.iter().all(|t| t.api == Api::ChatCompletions));
    assert!(turns.iter().all(|t| t.model == "copilot-seat-model"));
    assert!(
        turns[2]
            .all_user_text()
            .contains("first turn: WRITE a file")
    );

    let log = read_jsonl(&home.copilot_events(&session));
    let start = log.iter().find(|e| e["type"] == "session.start").unwrap();
    assert_eq!(start["data"]["copilotVersion"], "1.0.102");
    assert!(log.iter().any(|e| e["type"] == "session.resume"));
    let usage: Vec<(String, u64, u64)> = log
        .iter()
        .filter(|e| e["type"] == "session.usage_record")
        .map(|e| {
            let u = &e["data"]["usage"];
            (
                u["model"].as_str().unwrap().to_owned(),
                u["inputTokens"].as_u64().unwrap(),
                u["cacheReadTokens"].as_u64().unwrap(),
            )
        })
        .collect();
    let sent: Vec<(String, u64, u64)> = server
        .sent()
        .iter()
        .map(|s| {
            (
                s["model"].as_str().unwrap().to_owned(),
                s["usage"][0].as_u64().unwrap(),
                s["usage"][1].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(usage, sent);
}

#[test]
fn qwen_runs_in_plan_mode_resumes_and_reports_its_usage() {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = project();
    let session = crate::support::claude::new_session_id();
    let common = [
        "--approval-mode",
        "plan",
        "-o",
        "json",
        "-m",
        "qwen-seat-model",
    ];
    let mut args = vec!["-p", "first turn: WRITE a file", "--session-id", &session];
    args.extend(common);
    let first = home.run(Cli::Qwen, project.path(), &args, TIMEOUT).ok();
    let events: Vec<Value> =
        serde_json::from_str(&first.stdout).unwrap_or_else(|e| panic!("{e}: {}", first.describe()));
    let init = &events[0];
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["permission_mode"], "plan");
    assert_eq!(init["qwen_code_version"], "0.24.4");
    let declined: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "user")
        .flat_map(|e| e["message"]["content"].as_array().unwrap())
        .filter(|c| c["type"] == "tool_result")
        .collect();
    assert_eq!(declined.len(), 2, "{}", first.describe());
    assert!(declined.iter().all(|c| c["is_error"] == true));
    assert_unwritten(project.path());

    let mut args = vec!["-p", "second turn", "--resume", &session];
    args.extend(common);
    let second = home.run(Cli::Qwen, project.path(), &args, TIMEOUT).ok();
    let events: Vec<Value> = serde_json::from_str(&second.stdout).unwrap();
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["result"], "qwen replies to: second turn");
    assert_eq!(result["session_id"], json!(session));
    let assistant: Vec<&Value> = events.iter().filter(|e| e["type"] == "assistant").collect();
    assert_eq!(assistant.len(), 1);
    assert_eq!(assistant[0]["message"]["model"], "qwen-seat-model");

    // Its background memory requests are side requests; the main ones are the session's.
    let turns = server.turns_of(Agent::Qwen);
    assert_eq!(turns.len(), 3, "a tool call, its result, the second turn");
    assert!(turns.iter().all(|t| t.api == Api::ChatCompletions));
    assert!(turns.iter().all(|t| t.model == "qwen-seat-model"));
    assert!(
        turns[2]
            .all_user_text()
            .contains("first turn: WRITE a file")
    );
    // The usage of the answer that ended the second turn is the one the server sent it.
    let last_sent = server.sent().last().unwrap().clone();
    let usage = &assistant[0]["message"]["usage"];
    assert_eq!(usage["input_tokens"], last_sent["usage"][0]);
    assert_eq!(usage["cache_read_input_tokens"], last_sent["usage"][1]);
    assert_eq!(usage["output_tokens"], last_sent["usage"][2]);
    // Its chat log names the session too.
    let chats = home.qwen_chats();
    assert!(
        chats.iter().any(|c| c.to_string_lossy().contains(&session)),
        "{chats:?}"
    );
}
