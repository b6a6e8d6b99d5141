//! The seat adapters (anvil-core's `seat`) with the real agent CLIs against the scripted
//! server, through `anvil seats --try`: a read-only turn in a new session, a second turn that
//! resumes it, what each reports (version, model, tokens), and how each failure is told.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::agents::AgentsHome;
use crate::support::anvil::{Project, Run};
use crate::support::model_server::{Agent, ModelServer, Reply, Turn};
use crate::support::snap::Filters;

/// "WRITE" draws tool calls that would write `written.txt`; a tool result is answered with
/// what the tools said; anything else with the prompt's last line.
fn script(turn: &Turn) -> Reply {
    if let Some((_, result, _)) = turn.tool_results().last() {
        return Reply::text(format!("after the tools: {}", result.trim()));
    }
    let asked = turn.latest_user_text.trim();
    let prompt = asked.lines().last().unwrap_or_default();
    let prompt = prompt.strip_prefix("[[PLAN]] ").unwrap_or(prompt);
    if prompt.contains("HANG") {
        return Reply::text("late").delayed(Duration::from_secs(60));
    }
    if prompt.contains("FAIL") {
        return Reply::error(400, "the scripted provider refuses this request");
    }
    if prompt.contains("SILENT") {
        return Reply::text("");
    }
    if !prompt.contains("WRITE") {
        return Reply::text(format!("{} says: {prompt}", turn.agent.name()));
    }
    let target = "written.txt";
    let shell = format!("echo pwned > {target}");
    let calls: Vec<(&str, Value)> = match turn.agent {
        Agent::Claude => vec![
            (
                "Write",
                json!({"file_path": cwd_of(turn).join(target), "content": "pwned\n"}),
            ),
            ("Bash", json!({"command": shell, "description": "write"})),
        ],
        Agent::Codex => vec![("exec_command", json!({"cmd": shell}))],
        Agent::Copilot => vec![
            ("create", json!({"path": target, "file_text": "pwned\n"})),
            (
                "bash",
                json!({"command": shell, "description": "write", "mode": "sync", "initial_wait": 10}),
            ),
        ],
        Agent::Qwen => vec![
            (
                "write_file",
                json!({"file_path": target, "content": "pwned\n"}),
            ),
            (
                "run_shell_command",
                json!({"command": shell, "description": "write"}),
            ),
        ],
        Agent::Gemini => vec![
            (
                "write_file",
                json!({"file_path": target, "content": "pwned\n"}),
            ),
            (
                "run_shell_command",
                json!({"command": shell, "description": "write"}),
            ),
        ],
        Agent::OpenCode => vec![
            (
                "write",
                json!({"filePath": cwd_of(turn).join(target), "content": "pwned\n"}),
            ),
            ("bash", json!({"command": shell, "description": "write"})),
        ],
        Agent::Anvil | Agent::Unknown => Vec::new(),
    };
    let mut reply = Reply::text("");
    reply.blocks.clear();
    for (name, input) in calls {
        reply = reply.and_tool_use(name, input);
    }
    reply
}

/// Claude Code names its working directory in its system prompt ("Primary working directory"),
/// OpenCode too ("Working directory").
fn cwd_of(turn: &Turn) -> std::path::PathBuf {
    let system = turn.system_text();
    let line = system
        .lines()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("Primary working directory: ")
                .or_else(|| l.strip_prefix("Working directory: "))
        })
        .unwrap_or("/nonexistent");
    std::path::PathBuf::from(line.trim())
}

fn try_seat(project: &Project, home: &AgentsHome, args: &[&str]) -> Run {
    let mut all = vec!["seats", "--json", "--try"];
    all.extend(args);
    Run::from_output(
        project
            .command(&all)
            .env_clear()
            .envs(home.env())
            .output()
            .expect("run anvil"),
    )
}

fn played(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.describe()))
}

fn assert_unwritten(project: &Path) {
    assert!(
        !project.join("written.txt").exists(),
        "a seat wrote into the project"
    );
}

/// One agent: a read-only turn with tool calls, then a resumed second turn; the figures it
/// reports are the ones the server sent.
fn two_turns(agent: Agent, model: &str, version: &str) {
    two_turns_at(agent, model, model, version);
}

/// [`two_turns`], for an agent whose seat names `model` and whose API is sent `api_model`.
fn two_turns_at(agent: Agent, model: &str, api_model: &str, version: &str) {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let seat = format!("{}:{model}", agent.name());
    let first = try_seat(
        &project,
        &home,
        &[&seat, "--prompt", "first turn: WRITE a file"],
    )
    .ok();
    let first = played(&first);
    assert_unwritten(project.path());
    assert_eq!(first["agent"], agent.name());
    assert_eq!(first["agent_version"], version);
    assert_eq!(first["model"], model, "{first}");
    assert!(
        first["text"]
            .as_str()
            .unwrap()
            .starts_with("after the tools:"),
        "{first}"
    );
    let session = first["session"].as_str().unwrap().to_owned();
    assert!(!session.is_empty());

    let second = try_seat(
        &project,
        &home,
        &[&seat, "--prompt", "second turn", "--resume", &session],
    )
    .ok();
    let second = played(&second);
    assert_eq!(
        second["text"],
        format!("{} says: second turn", agent.name())
    );
    assert_eq!(second["session"], json!(session));

    let turns = server.turns_of(agent);
    assert_eq!(turns.len(), 3, "tool calls, their results, the second turn");
    assert!(turns.iter().all(|t| t.model == api_model));
    assert!(
        turns[2]
            .all_user_text()
            .contains("first turn: WRITE a file")
    );
    // The second turn's tokens are the last request's, as the server counted them.
    let sent = server.sent();
    let last = sent.last().unwrap();
    let (input, output) = match agent {
        Agent::Claude => (
            last["usage"]["input_tokens"].clone(),
            last["usage"]["output_tokens"].clone(),
        ),
        _ => (last["usage"][0].clone(), last["usage"][2].clone()),
    };
    assert_eq!(second["tokens"]["input"], input, "{second}");
    assert_eq!(second["tokens"]["output"], output, "{second}");
    if agent != Agent::Claude {
        assert_eq!(second["tokens"]["cache_read"], last["usage"][1], "{second}");
    }
    assert!(second["duration_ms"].as_u64().unwrap() > 0);
}

#[test]
fn codex_plays_a_read_only_seat_and_resumes_it() {
    two_turns(Agent::Codex, "codex-seat-model", "0.169.0");
}

#[test]
fn copilot_plays_a_plan_mode_seat_and_resumes_it() {
    two_turns(Agent::Copilot, "copilot-seat-model", "1.0.102");
}

#[test]
fn qwen_plays_a_plan_mode_seat_and_resumes_it() {
    two_turns(Agent::Qwen, "qwen-seat-model", "0.24.4");
}

#[test]
fn gemini_plays_a_plan_mode_seat_and_resumes_it() {
    two_turns(Agent::Gemini, "gemini-seat-model", "0.61.0");
}

/// A Gemini CLI that no longer has the session a seat resumes (it was seen to remove a
/// session's files itself) exits 42: the turn is played again in a new session, with the whole
/// prompt, and the seat goes on from there.
#[test]
fn a_gemini_seat_whose_session_is_gone_plays_its_turn_in_a_new_one() {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let seat = "gemini:gemini-seat-model";
    let first = try_seat(&project, &home, &[seat, "--prompt", "first turn"]).ok();
    let session = played(&first)["session"].as_str().unwrap().to_owned();
    let chats = std::fs::read_dir(home.path().join(".gemini/tmp"))
        .unwrap()
        .map(|dir| dir.unwrap().path().join("chats"))
        .find(|chats| chats.is_dir())
        .expect("Gemini CLI keeps its sessions under ~/.gemini/tmp/DIR/chats");
    std::fs::remove_dir_all(&chats).unwrap();

    let second = try_seat(
        &project,
        &home,
        &[seat, "--prompt", "second turn", "--resume", &session],
    )
    .ok();
    let second = played(&second);
    assert_eq!(second["text"], "gemini says: second turn");
    let new = second["session"].as_str().unwrap();
    assert!(!new.is_empty() && new != session, "{second}");
    // The failed resume sent nothing; the turn in the new session sent its prompt once.
    let turns = server.turns_of(Agent::Gemini);
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert!(!turns[1].all_user_text().contains("first turn"));
}

/// Without a model, Gemini CLI picks its own (with an API key, without asking its router); the
/// seat records the one that answered.
#[test]
fn a_gemini_seat_without_a_model_records_the_one_that_answered() {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let played = try_seat(&project, &home, &["gemini", "--prompt", "first turn"]).ok();
    let played = self::played(&played);
    assert_eq!(played["text"], "gemini says: first turn");
    let main = server.turns_of(Agent::Gemini);
    assert_eq!(main.len(), 1);
    assert!(main[0].model.starts_with("gemini-"), "{}", main[0].model);
    assert_eq!(played["model"], main[0].model.as_str());
}

/// Some agents inline the file an `@path` of their prompt names (Claude Code, Qwen Code, Gemini
/// CLI, from stdin too): a seat's prompt stays text, `@decorators`, addresses and `DEBATE@LINE`
/// included.
fn an_at_path_stays_text(agent: Agent, seat: &str) {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    std::fs::write(
        project.path().join("secret.txt"),
        "CONTENTS-NOT-FOR-THE-MODEL\n",
    )
    .unwrap();
    try_seat(
        &project,
        &home,
        &[seat, "--prompt", "What does @secret.txt say?"],
    )
    .ok();
    let turns = server.turns_of(agent);
    assert!(!turns.is_empty());
    for turn in &turns {
        // As the model reads it: through the zero-width space before Claude Code's mention,
        // and the backslash before Qwen Code's `@`.
        let text = turn
            .latest_user_text
            .replace('\u{200B}', "")
            .replace("\\@", "@");
        assert!(text.contains("What does @secret.txt say?"), "{text}");
        assert!(!turn.all_text().contains("CONTENTS-NOT-FOR-THE-MODEL"));
    }
}

#[test]
fn an_at_path_in_a_gemini_seats_prompt_stays_text() {
    an_at_path_stays_text(Agent::Gemini, "gemini:gemini-seat-model");
}

#[test]
fn an_at_path_in_an_opencode_seats_prompt_stays_text() {
    an_at_path_stays_text(Agent::OpenCode, "opencode:scripted/opencode-seat-model");
}

#[test]
fn an_at_path_in_a_qwen_seats_prompt_stays_text() {
    an_at_path_stays_text(Agent::Qwen, "qwen:qwen-seat-model");
}

#[test]
fn an_at_path_in_a_claude_seats_prompt_stays_text() {
    an_at_path_stays_text(Agent::Claude, "claude:claude-seat-model");
}

#[test]
fn an_at_path_in_a_copilot_seats_prompt_stays_text() {
    an_at_path_stays_text(Agent::Copilot, "copilot:copilot-seat-model");
}

#[test]
fn an_at_path_in_a_codex_seats_prompt_stays_text() {
    an_at_path_stays_text(Agent::Codex, "codex:codex-seat-model");
}

#[test]
fn opencode_plays_a_read_only_seat_and_resumes_it() {
    two_turns_at(
        Agent::OpenCode,
        "scripted/opencode-seat-model",
        "opencode-seat-model",
        "1.18.33",
    );
}

#[test]
fn claude_plays_a_plan_mode_seat_and_resumes_it() {
    two_turns(Agent::Claude, "claude-seat-model", "2.1.197");
}

#[test]
fn each_failure_of_a_seat_is_told_with_the_agents_last_words() {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = Project::new();

    let failed = try_seat(&project, &home, &["codex:m", "--prompt", "FAIL now"]);
    assert_eq!(failed.code, Some(1), "{}", failed.describe());
    // Each failure in the words the person reads (the agent's last words included), but the
    // hang's, whose last words depend on when it was stopped.
    let f = Filters::of(&project);
    let mut told = f.run("anvil seats --try codex:m --prompt 'FAIL now'", &failed);

    let began = std::time::Instant::now();
    let hung = try_seat(
        &project,
        &home,
        &["qwen:m", "--prompt", "HANG please", "--timeout", "5"],
    );
    assert_eq!(hung.code, Some(1), "{}", hung.describe());
    assert!(
        hung.stderr
            .contains("qwen did not answer within 5 s and was stopped"),
        "{}",
        hung.describe()
    );
    assert!(began.elapsed() < Duration::from_secs(40));

    // An empty reply: Copilot says so itself and exits 1; Codex ends its turn quietly, and
    // anvil tells it apart.
    let silent = try_seat(&project, &home, &["copilot:m", "--prompt", "SILENT please"]);
    assert_eq!(silent.code, Some(1), "{}", silent.describe());
    told.push_str(&f.run(
        "anvil seats --try copilot:m --prompt 'SILENT please'",
        &silent,
    ));
    let silent = try_seat(&project, &home, &["codex:m", "--prompt", "SILENT please"]);
    assert_eq!(silent.code, Some(1), "{}", silent.describe());
    told.push_str(&f.run(
        "anvil seats --try codex:m --prompt 'SILENT please'",
        &silent,
    ));

    let mut env = home.env();
    env.push(("ANVIL_QWEN_BIN", "/nonexistent/qwen".into()));
    let missing = Run::from_output(
        project
            .command(&["seats", "--try", "qwen", "--prompt", "hello"])
            .env_clear()
            .envs(env)
            .output()
            .unwrap(),
    );
    assert_eq!(missing.code, Some(1));
    told.push_str(&f.run(
        "ANVIL_QWEN_BIN=/nonexistent/qwen anvil seats --try qwen --prompt hello",
        &missing,
    ));
    insta::assert_snapshot!("seat_failures", told);
}

#[test]
fn anvil_seats_lists_the_agents_their_versions_and_whether_each_runs_headless() {
    let server = ModelServer::start(script);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    // Without OPENAI_API_KEY (Qwen Code reads it when it runs, not to be ready), which would
    // have `anvil seats` ask api.openai.com whether the `openai` endpoint answers.
    let run = Run::from_output(
        project
            .command(&["seats", "--json"])
            .env_clear()
            .envs(
                home.env()
                    .into_iter()
                    .filter(|(k, _)| *k != "OPENAI_API_KEY"),
            )
            .output()
            .unwrap(),
    )
    .ok();
    let list: Vec<Value> = serde_json::from_str(&run.stdout).unwrap();
    // The agent CLIs (the endpoints follow them: e2e_endpoints).
    let seen: Vec<(String, String, bool)> = list
        .iter()
        .filter(|a| a.get("endpoint").is_none())
        .map(|a| {
            (
                a["agent"].as_str().unwrap().to_owned(),
                a["version"].as_str().unwrap_or("-").to_owned(),
                a["ready"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("claude".to_owned(), "2.1.197".to_owned(), true),
            ("codex".to_owned(), "0.169.0".to_owned(), true),
            ("copilot".to_owned(), "1.0.102".to_owned(), true),
            ("qwen".to_owned(), "0.24.4".to_owned(), true),
            ("gemini".to_owned(), "0.61.0".to_owned(), true),
            ("opencode".to_owned(), "1.18.33".to_owned(), true),
        ]
    );
    // The same, in `anvil doctor`; and an agent that is not there is a note, not a failure.
    let mut env = home.env();
    env.push(("ANVIL_COPILOT_BIN", "/nonexistent/copilot".into()));
    let doctor = Run::from_output(
        project
            .command(&["doctor"])
            .env_clear()
            .envs(env)
            .output()
            .unwrap(),
    );
    let seats = doctor
        .stdout
        .split("\nSeats\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no Seats section: {}", doctor.describe()));
    insta::assert_snapshot!("doctor_seats", Filters::of(&project).redact(seats));
}
