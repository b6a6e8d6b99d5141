//! What reaches anvil from inside each host, beside its hook, for real: the commands a person
//! types there (Copilot CLI's skills, OpenCode's commands run in a session of `opencode
//! serve`) and anvil's MCP tools as each host offers them (Copilot CLI, OpenCode, Codex, Qwen
//! Code's deferred tool search). Each real CLI runs against the scripted server in a fresh
//! `HOME`, after `anvil install --agent NAME`.

use std::time::Duration;

use crate::e2e_hosts::{
    assert_hosted, assert_same_files, debater, installed, project_files, the_debate,
};
use crate::e2e_seats::run_anvil;
use crate::support::agents::{AgentsHome, Cli, Output};
use crate::support::anvil::{Project, Started};
use crate::support::model_server::{ModelServer, Reply, Turn};

/// What the person typed as a command (`/NAME ARGS`, Codex's `$NAME ARGS`), as the last line of
/// a user message that begins with it: Copilot CLI and Codex hand a prompt typed headless to
/// their model as it is.
fn typed(turn: &Turn, mention: &str, name: &str) -> Option<String> {
    let prompt = turn.all_user_text();
    prompt
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(&format!("{mention}{name}")))
        .filter(|rest| rest.is_empty() || rest.starts_with(' '))
        .map(|rest| rest.trim().to_owned())
}

/// A model that uses Copilot CLI's skills as a person's model would: a prompt `/NAME ARGS`
/// loads the skill NAME (its `skill` tool); the skill's words, handed back as
/// `<skill-context name="NAME">`, have it run the anvil command they name with ARGS through
/// `bash`; what that printed is answered as the [`debater`] answers (the prompt `anvil start`
/// printed), or read back.
fn copilot_skills(turn: &Turn) -> Reply {
    let prompt = turn.prompt();
    if let Some((_, text, _)) = turn.tool_results().first() {
        return match text.contains("[anvil ") {
            true => debater(turn),
            false => Reply::text(format!("anvil said: {text}")),
        };
    }
    // The person's prompt is the conversation's first user message.
    let first = turn
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .count()
        == 1;
    if let Some(name) = ["anvil-steer", "anvil-status", "anvil-cancel", "anvil"]
        .into_iter()
        .find(|name| first && typed(turn, "/", name).is_some())
    {
        return Reply::tool_use("skill", serde_json::json!({ "skill": name }));
    }
    if let Some(rest) = prompt.strip_prefix("<skill-context name=\"") {
        let name = rest.split('"').next().unwrap_or_default();
        let args = typed(turn, "/", name).unwrap_or_default();
        let Some(command) = skills_command(rest, &args) else {
            return Reply::text(format!("no anvil command in the skill: {rest}"));
        };
        return Reply::tool_use(
            "bash",
            serde_json::json!({ "command": command, "description": "anvil" }),
        );
    }
    debater(turn)
}

/// The shell line a skill's words name (`` `anvil start`: ``, …), with what the person typed
/// after the skill's name.
fn skills_command(words: &str, args: &str) -> Option<String> {
    match words
        .split_once("`anvil ")
        .map(|(_, r)| r.split('`').next())
    {
        Some(Some("start")) => Some(format!("anvil start {args}")),
        Some(Some("steer")) => Some(format!("anvil steer '{args}'")),
        Some(Some("status")) => Some("anvil status".to_owned()),
        Some(Some("cancel")) => Some(format!("anvil cancel {args}")),
        _ => None,
    }
}

/// `copilot -p PROMPT` in the project, headless, trusting the folder for this run.
fn copilot(home: &AgentsHome, project: &Project, prompt: &str) -> Output {
    home.run(
        Cli::Copilot,
        project.path(),
        &[
            "-p",
            prompt,
            "--allow-all-tools",
            "--trust-folder",
            "--model",
            "copilot-host-model",
        ],
        Duration::from_secs(300),
    )
}

/// Copilot CLI's log lines since its start, every log file of its home's.
fn copilot_log(home: &AgentsHome) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(home.path().join(".copilot/logs"))
        .into_iter()
        .flatten()
        .flatten()
    {
        text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
    }
    text
}

/// `copilot -p '/anvil "…" --rounds 1'` in a project that already had a hook file of the
/// person's own at `.github/hooks/anvil.json`: its model loads the skill, runs `anvil start`,
/// answers the prompt it printed, and the `agentStop` hook takes the debate to its synthesis.
/// Copilot reads every `.json` of `.github/hooks/` as a hook file: its log names the project's
/// hooks loaded and none of them invalid (what the install remembers of the person's file is
/// kept elsewhere). The uninstall gives the project back byte for byte.
#[test]
fn copilots_anvil_skill_runs_headless_to_the_synthesis_beside_the_persons_hook_file() {
    let server = ModelServer::start(copilot_skills);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let hooks = project.path().join(".github/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("anvil.json"),
        "{\n  \"version\": 1,\n  \"hooks\": {\"sessionStart\": [{\"type\": \"command\", \"bash\": \"true\", \"timeoutSec\": 5}]}\n}\n",
    )
    .unwrap();
    let before = project_files(&project);
    run_anvil(&project, &home, &["install", "--agent", "copilot"]).ok();
    let run = copilot(
        &home,
        &project,
        "/anvil \"Should we adopt GraphQL?\" --rounds 1",
    );
    let debate = the_debate(&project);
    assert_hosted(&project, &server, &debate, "copilot 1.0.102", &run);
    let log = copilot_log(&home);
    assert!(log.contains("Loading repo hooks"), "{log}");
    assert!(
        !log.contains("Invalid hook configuration"),
        "a hook file Copilot could not read: {log}"
    );
    run_anvil(&project, &home, &["uninstall", "--agent", "copilot"]).ok();
    assert_same_files(&project_files(&project), &before);
}

/// `/anvil-steer TEXT` and `/anvil-status`, Copilot CLI's skills, headless: each model loads
/// its skill and runs its `anvil` command, and what it printed comes back (the steering
/// queued, the debate as it stands).
#[test]
fn copilots_steer_and_status_skills_run_anvils_own() {
    let server = ModelServer::start(copilot_skills);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Copilot);
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    for typed in ["/anvil-steer focus on migration cost", "/anvil-status"] {
        copilot(&home, &project, typed).ok();
    }
    steered_and_shown(&server, &started);
}

/// The two commands' shell results, in order: the steering queued for `started`'s line, then
/// the status naming it and its question.
pub(crate) fn steered_and_shown(server: &ModelServer, started: &Started) {
    let results: Vec<String> = server.tool_results().into_iter().map(|(t, _)| t).collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains(&format!("steering queued for {}", started.line)),
        "{results:?}"
    );
    assert!(
        results[1].contains(&started.line) && results[1].contains("Should we adopt GraphQL?"),
        "{results:?}"
    );
}

/// A model that calls the MCP tool `tool` when the request offers it, and reads back what it
/// answered.
fn mcp_caller(tool: &'static str) -> impl Fn(&Turn) -> Reply + Send + Sync + 'static {
    move |turn: &Turn| match turn.tool_results().first() {
        Some((_, text, _)) => Reply::text(format!("The record says: {text}")),
        None if turn.tool_names().iter().any(|t| t == tool) => {
            Reply::tool_use(tool, serde_json::json!({}))
        }
        None => Reply::text(format!("no {tool} among {:?}", turn.tool_names())),
    }
}

/// The tool results that name `debate`, or every result and the run, to fail with.
fn read_back(server: &ModelServer, debate: &str, run: &str) {
    let results: Vec<String> = server.tool_results().into_iter().map(|(t, _)| t).collect();
    assert!(
        results.iter().any(|r| r.contains(debate)),
        "{results:?}\n{run}"
    );
}

/// Copilot CLI calls anvil's MCP tool `anvil-list_debates`, as the install wired it in
/// `.github/mcp.json` (loaded in a trusted folder), and its model reads the debate back.
#[test]
fn copilot_reads_the_record_through_anvils_mcp_server() {
    let server = ModelServer::start(mcp_caller("anvil-list_debates"));
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Copilot);
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let run = copilot(&home, &project, "Which decisions are recorded here?");
    read_back(&server, &started.debate, &run.describe());
    assert!(run.stdout.contains("The record says"), "{}", run.describe());
}

/// A model of OpenCode's that follows anvil's commands as a person's model would: the
/// expanded `/anvil` (`… \`anvil start\`: ARGS …`) and `/anvil-status` are calls of its `bash`
/// tool; a question about the record calls anvil's MCP tool `anvil_list_debates`; what a
/// command printed is answered as the [`debater`] answers (the prompt `anvil start` printed),
/// or read back.
fn opencode_commands(turn: &Turn) -> Reply {
    if let Some((_, text, _)) = turn.tool_results().first() {
        return match text.contains("[anvil ") {
            true => debater(turn),
            false => Reply::text(format!("anvil said: {text}")),
        };
    }
    let prompt = turn.prompt();
    let bash = |command: String| {
        Reply::tool_use(
            "bash",
            serde_json::json!({ "command": command, "description": "anvil" }),
        )
    };
    if let Some((_, rest)) = prompt.split_once("`anvil start`: ") {
        return bash(format!(
            "anvil start {}",
            rest.lines().next().unwrap_or_default().trim()
        ));
    }
    if prompt.contains("Run `anvil status`") {
        return bash("anvil status".to_owned());
    }
    if prompt.contains("Which decisions") {
        return mcp_caller("anvil_list_debates")(turn);
    }
    debater(turn)
}

/// OpenCode, in sessions of `opencode serve` driven over HTTP as its terminal drives them:
/// `/anvil "…" --rounds 1` run as a command (`POST /session/ID/command`) expands anvil's
/// command file, its model runs `anvil start` and answers the prompt it printed, and anvil's
/// plugin takes the debate to its synthesis as the session goes idle after each reply. Then,
/// in sessions of their own, `/anvil-status` runs `anvil status`, which shows a debate
/// waiting, and the model calls anvil's MCP tool `anvil_list_debates` (the project's `opencode.json`)
/// and reads the debate back.
#[test]
fn opencodes_commands_and_mcp_tools_run_in_a_served_session() {
    use crate::e2e_hosts::{OpenCodeServer, plugin_package_installed};
    let server = ModelServer::start(opencode_commands);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    plugin_package_installed(&project.path().join(".opencode"));
    plugin_package_installed(&home.path().join(".config/opencode"));
    run_anvil(&project, &home, &["install", "--agent", "opencode"]).ok();
    let opencode = OpenCodeServer::start(&home, &project);
    let session = || {
        let session = opencode.post("/session", &serde_json::json!({}));
        session["id"].as_str().expect("a session id").to_owned()
    };
    // OpenCode answers a command's request some 30 s after its reply is done (a message's at
    // once): each runs in the background while what it does is watched.
    let command = |name: &str, arguments: &str| {
        opencode.post_in_background(
            format!("/session/{}/command", session()),
            serde_json::json!({ "command": name, "arguments": arguments }),
        )
    };
    let until = |done: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + Duration::from_secs(180);
        while !done() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let started = command("anvil", "\"Should we adopt GraphQL?\" --rounds 1");
    let debates =
        || std::fs::read_dir(project.path().join(".anvil/debates")).map_or(0, |d| d.count());
    until(&|| debates() > 0);
    let debate = the_debate(&project);
    until(&|| project.state_md(&debate).contains("status: done"));
    // Time for a request after the synthesis, if one were sent.
    std::thread::sleep(Duration::from_secs(3));
    let run = crate::support::agents::Output {
        code: None,
        timed_out: false,
        stdout: String::new(),
        stderr: String::new(),
    };
    assert_hosted(&project, &server, &debate, "opencode 1.18.33", &run);
    assert!(
        project
            .state_md(&debate)
            .contains("Should we adopt GraphQL?")
    );

    // A debate waiting for a session: the status shows it.
    let waiting = project.start(&["Should we cache?", "--rounds", "1"]);
    let status = command("anvil-status", "");
    let results = || -> Vec<String> { server.tool_results().into_iter().map(|(t, _)| t).collect() };
    until(&|| results().len() > 1);
    let shown = results().last().cloned().unwrap_or_default();
    assert!(
        shown.contains(&waiting.debate) && shown.contains("Should we cache?"),
        "{:?}",
        results()
    );
    let asked = opencode.post(
        &format!("/session/{}/message", session()),
        &serde_json::json!({ "parts": [{ "type": "text", "text": "Which decisions are recorded here?" }] }),
    );
    let results = results();
    assert_eq!(results.len(), 3, "{results:?}\n{asked}");
    assert!(
        results[2].contains(&debate) && !results[2].contains("anvil status"),
        "{results:?}"
    );
    for command in [started, status] {
        command.join().expect("the command's request answered");
    }
}

/// Codex calls anvil's MCP tool `list_debates` (`[mcp_servers.anvil]` of the trusted
/// project's `.codex/config.toml`), the call scripted in the Responses API's reply, and its
/// model reads the debate back.
#[test]
fn codex_reads_the_record_through_anvils_mcp_server() {
    // Codex offers an MCP server's tools as a namespace of their own, `mcp__anvil`.
    let offered = |turn: &Turn| {
        turn.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| {
                t["type"] == "namespace"
                    && t["name"] == "mcp__anvil"
                    && t["tools"].to_string().contains("\"list_debates\"")
            })
    };
    let server = ModelServer::start(move |turn: &Turn| match turn.tool_results().first() {
        Some((_, text, _)) => Reply::text(format!("The record says: {text}")),
        None if offered(turn) => Reply::tool_use("mcp__anvil::list_debates", serde_json::json!({})),
        None => Reply::text("no mcp__anvil namespace offered"),
    });
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Codex);
    crate::e2e_hosts::trust_codex_project(&home, &project);
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let run = home.run(
        Cli::Codex,
        project.path(),
        &[
            "exec",
            "--skip-git-repo-check",
            "Which decisions are recorded here?",
        ],
        Duration::from_secs(300),
    );
    read_back(&server, &started.debate, &run.describe());
}

/// The tool name around `at` in `text`: the run of name characters (`mcp__anvil__…`) there.
fn name_at(text: &str, at: usize) -> &str {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let start = text[..at].rfind(|c| !is_name(c)).map_or(0, |i| i + 1);
    let end = text[at..]
        .find(|c| !is_name(c))
        .map_or(text.len(), |i| at + i);
    &text[start..end]
}

/// Qwen Code connects a project's MCP server once the person approved it (`qwen mcp approve
/// anvil`, which `anvil doctor` names until it is done), and offers its tools only through its
/// deferred tool search: the model
/// searches with the words of the question (`tool_search`; the server may not have connected
/// when the first request went out, and is searched again), reads the declaration of anvil's
/// `list_debates` in what comes back, calls it through `tool_call`, and reads the debate back.
#[test]
fn qwen_code_reads_the_record_through_its_deferred_tool_search() {
    let server = ModelServer::start(|turn: &Turn| {
        let searched = turn.calls_of("tool_search");
        match turn.tool_results().first() {
            Some((_, text, _)) if searched > 0 && turn.calls_of("tool_call") == 0 => {
                match text.find("list_debates") {
                    Some(at) => Reply::tool_use(
                        "tool_call",
                        serde_json::json!({ "name": name_at(text, at), "arguments": {} }),
                    ),
                    None if searched < 3 => Reply::tool_use(
                        "tool_search",
                        serde_json::json!({ "query": "anvil debates decisions recorded" }),
                    ),
                    None => Reply::text(format!("no list_debates found: {text}")),
                }
            }
            Some((_, text, _)) => Reply::text(format!("The record says: {text}")),
            None => Reply::tool_use(
                "tool_search",
                serde_json::json!({ "query": "anvil debates decisions recorded" }),
            ),
        }
    });
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Qwen);
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    // Qwen Code connects a project's MCP server only once the person approved it, as
    // `anvil doctor` says.
    let doctor = run_anvil(&project, &home, &["doctor"]);
    assert!(
        doctor.stdout.contains("qwen mcp approve anvil"),
        "{}",
        doctor.describe()
    );
    home.run(
        Cli::Qwen,
        project.path(),
        &["mcp", "approve", "anvil"],
        Duration::from_secs(60),
    )
    .ok();
    let doctor = run_anvil(&project, &home, &["doctor"]);
    assert!(
        !doctor.stdout.contains("qwen mcp approve anvil"),
        "{}",
        doctor.describe()
    );
    let run = home.run(
        Cli::Qwen,
        project.path(),
        &["-p", "Which decisions are recorded here?"],
        Duration::from_secs(300),
    );
    let calls = server.calls_answered();
    let listed = calls
        .iter()
        .find(|(tool, _, _)| tool == "tool_call")
        .unwrap_or_else(|| panic!("no tool_call: {calls:?}\n{}", run.describe()));
    assert!(listed.1.contains(&started.debate), "{calls:?}");
}

/// A model that uses Codex's skills as a person's model would: the prompt `$NAME ARGS` comes
/// with the skill's words, which Codex hands over after it as `<skill><name>NAME</name>…`;
/// the model runs the anvil command they name with ARGS through `exec_command`, and answers
/// what that printed as the [`debater`] does (the prompt `anvil start` printed), or reads it
/// back.
fn codex_skills(turn: &Turn) -> Reply {
    if let Some((_, text, _)) = turn.tool_results().first() {
        return match text.contains("[anvil ") {
            true => debater(turn),
            false => Reply::text(format!("anvil said: {text}")),
        };
    }
    let prompt = turn.prompt();
    if let Some(rest) = prompt.strip_prefix("<skill>\n<name>") {
        let name = rest.split('<').next().unwrap_or_default();
        let args = typed(turn, "$", name).unwrap_or_default();
        return match skills_command(rest, &args) {
            Some(command) => Reply::tool_use("exec_command", serde_json::json!({ "cmd": command })),
            None => Reply::text(format!("no anvil command in the skill: {rest}")),
        };
    }
    debater(turn)
}

/// `codex exec PROMPT` in the trusted project, its hook trusted for this run. Codex runs a
/// command in a login shell (`bash -lc`), whose `/etc/profile` sets a `PATH` of its own: the
/// person's `~/.profile` puts anvil on it, as an install in a folder of the person's would.
fn codex(home: &AgentsHome, project: &Project, prompt: &str) -> Output {
    std::fs::write(
        home.path().join(".profile"),
        format!(
            "PATH=\"{}:$PATH\"\n",
            crate::support::anvil::anvil_dir().display()
        ),
    )
    .unwrap();
    home.run(
        Cli::Codex,
        project.path(),
        &[
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            prompt,
        ],
        Duration::from_secs(300),
    )
}

/// `codex exec '$anvil "…" --rounds 1'`: Codex lists anvil's skills from the project's
/// `.agents/skills/`, hands its model the skill's words after the prompt, the model runs
/// `anvil start` with what the person typed, answers the prompt it printed, and Codex's Stop
/// hook takes the debate to its synthesis.
#[test]
fn codexs_anvil_skill_runs_headless_to_the_synthesis() {
    let server = ModelServer::start(codex_skills);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Codex);
    crate::e2e_hosts::trust_codex_project(&home, &project);
    let run = codex(
        &home,
        &project,
        "$anvil \"Should we adopt GraphQL?\" --rounds 1",
    );
    let first = &server.main_turns()[0];
    let listed = first.body["input"].to_string();
    for skill in ["anvil", "anvil-steer", "anvil-status", "anvil-cancel"] {
        assert!(
            listed.contains(&format!("- {skill}: ")),
            "{skill} not listed: {listed}"
        );
    }
    let skill = first.prompt();
    assert!(
        skill.starts_with("<skill>\n<name>anvil</name>")
            && skill.contains("`anvil start`: what the person typed after $anvil"),
        "{skill}"
    );
    let debate = the_debate(&project);
    assert_hosted(&project, &server, &debate, "codex 0.169.0", &run);
}

/// `$anvil-steer TEXT` and `$anvil-status`, Codex's skills, headless: each model is handed
/// its skill's words and runs its `anvil` command, and what it printed comes back (the
/// steering queued, the debate as it stands).
#[test]
fn codexs_steer_and_status_skills_run_anvils_own() {
    let server = ModelServer::start(codex_skills);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Codex);
    crate::e2e_hosts::trust_codex_project(&home, &project);
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    for typed in ["$anvil-steer focus on migration cost", "$anvil-status"] {
        codex(&home, &project, typed).ok();
    }
    steered_and_shown(&server, &started);
}
