//! `anvil mcp`: the record as MCP tools. First spoken to directly over stdio (every tool, every
//! answer cited), then through the real Claude Code in a project where `anvil install` ran,
//! the model calling anvil's search tool and reading the earlier decision with its commit.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::anvil::{Project, anvil_bin, anvil_dir, phase_text, turn_tag};
use crate::support::claude::{Claude, ClaudeHome, ClaudeOutput, new_session_id, spawn_headless};
use crate::support::model_server::{ModelServer, Reply, Turn};

const SYNTHESIS: &str = "Decision: keep Postgres for billing and add read replicas; \
                         a rewrite of the ledger is not worth the risk this year.";

/// A finished 1-round debate on billing's database, recorded through the Stop hook.
fn billing_debate(project: &Project) -> String {
    let session = "61616161-0000-4000-8000-000000000001";
    let started = project.start(&[
        "Should billing move from Postgres to DynamoDB?",
        "--rounds",
        "1",
        "--session",
        session,
    ]);
    for text in [
        "DynamoDB scales writes without a cluster to run.",
        "Ledger transactions need Postgres' consistency; a migration risks invoices.",
        SYNTHESIS,
    ] {
        project
            .hook(&json!({
                "session_id": session, "cwd": project.path(), "hook_event_name": "Stop",
                "stop_hook_active": true, "last_assistant_message": text,
            }))
            .ok();
    }
    started.debate
}

/// The commit of `debate@main`'s synthesis.
fn synthesis_commit(project: &Project, debate: &str) -> String {
    let show = project
        .anvil(&["show", "--json", &format!("{debate}@main:synthesis")])
        .ok();
    show.json().expect("show --json")["commit"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// An `anvil mcp` process spoken to line by line.
struct Mcp {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(project: &Project) -> Mcp {
        let mut child = Command::new(anvil_bin())
            .arg("mcp")
            .current_dir(project.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start anvil mcp");
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            out,
            next: 1,
        };
        let init = mcp.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["serverInfo"]["name"], "anvil", "{init}");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.out.read_line(&mut line).unwrap() > 0,
                "anvil mcp ended"
            );
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC line");
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    /// Calls `tool`: (its text, whether it is an error).
    fn tool(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let result = self.call("tools/call", json!({"name": tool, "arguments": arguments}));
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (text, result["isError"] == true)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_tool_answers_from_the_record_and_cites_it() {
    let project = Project::new();
    let debate = billing_debate(&project);
    let commit = synthesis_commit(&project, &debate);
    let running = project.start(&["Should we adopt a monorepo?", "--rounds", "2"]);
    let mut mcp = Mcp::start(&project);

    let tools = mcp.call("tools/list", json!({}));
    let mut names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "compare",
            "list_debates",
            "read_phase",
            "running",
            "search",
            "synthesis"
        ]
    );
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["annotations"]["readOnlyHint"] == true),
        "{tools}"
    );

    let (list, error) = mcp.tool("list_debates", json!({}));
    assert!(!error, "{list}");
    assert!(list.contains(&debate), "{list}");
    assert!(list.contains(&running.debate), "{list}");
    assert!(
        list.contains("Should billing move from Postgres to DynamoDB?"),
        "{list}"
    );

    // Word forms: "replicas" finds "replica"; the hit cites line, phase and the full commit.
    let (hits, error) = mcp.tool("search", json!({"query": "replica ledger"}));
    assert!(!error, "{hits}");
    let first = hits.lines().next().unwrap();
    assert!(first.contains(&format!("{debate}@main")), "{hits}");
    assert!(first.contains("synthesizer"), "{hits}");
    assert!(first.contains(&commit), "{hits}");
    assert!(hits.contains("**replicas**"), "{hits}");

    let (phase, error) = mcp.tool("read_phase", json!({"rev": &commit}));
    assert!(!error, "{phase}");
    assert!(
        phase.starts_with(&format!("Source: {debate}@main:synthesis")),
        "{phase}"
    );
    assert!(phase.contains(&format!("commit {commit}")), "{phase}");
    assert!(phase.contains(SYNTHESIS), "{phase}");

    // A prefix of the debate id is enough.
    let (synthesis, error) = mcp.tool("synthesis", json!({"debate": &debate[..debate.len() - 2]}));
    assert!(!error, "{synthesis}");
    assert!(synthesis.contains(SYNTHESIS), "{synthesis}");
    assert!(synthesis.contains(&commit), "{synthesis}");
    let (pending, error) = mcp.tool("synthesis", json!({"debate": &running.debate}));
    assert!(!error, "{pending}");
    assert!(pending.contains("has no synthesis yet"), "{pending}");

    let (diff, error) = mcp.tool(
        "compare",
        json!({"from": format!("{debate}@main:round-1/advocate"), "to": format!("{debate}@main:synthesis")}),
    );
    assert!(!error, "{diff}");
    assert!(diff.contains(&commit), "{diff}");
    assert!(diff.contains("+Decision: keep Postgres"), "{diff}");

    let (now, error) = mcp.tool("running", json!({}));
    assert!(!error, "{now}");
    assert!(now.contains(&format!("{}@main", running.debate)), "{now}");
    assert!(!now.contains(&debate), "{now}");

    // Bad input is an error Claude can read, and the server goes on.
    let (missing, error) = mcp.tool("read_phase", json!({"rev": "no-such-debate@main:round-9"}));
    assert!(error, "{missing}");
    assert!(missing.contains("no-such-debate"), "{missing}");
    let (again, error) = mcp.tool("search", json!({"query": "\"unbalanced"}));
    assert!(!error, "{again}");
}

#[test]
fn a_project_without_debates_answers_each_call_and_one_without_anvil_errs_per_call() {
    let project = Project::new();
    let mut mcp = Mcp::start(&project);
    let (text, error) = mcp.tool("search", json!({"query": "billing"}));
    assert!(!error, "{text}");
    assert!(text.contains("no recorded phase matches billing"), "{text}");
    let (text, error) = mcp.tool("running", json!({}));
    assert!(!error, "{text}");
    assert!(text.contains("no debate is running"), "{text}");

    // No .anvil at all: each call says so, and the server stays up for the next.
    let bare = Project::empty();
    let mut mcp = Mcp::start(&bare);
    for _ in 0..2 {
        let (text, error) = mcp.tool("list_debates", json!({}));
        assert!(error, "{text}");
        assert!(text.contains("anvil init"), "{text}");
    }
}

/// Picks anvil's search tool from the request's tools and calls it; answers with what it got.
fn consults_the_record(turn: &Turn) -> Reply {
    if let Some((_, result, _)) = turn.tool_results().first() {
        return Reply::text(format!("From the record: {result}"));
    }
    match turn
        .tool_names()
        .into_iter()
        // `mcp__anvil__search` from `.mcp.json`, `mcp__plugin_anvil_anvil__search` from the
        // plugin.
        .find(|n| n.starts_with("mcp__") && n.contains("anvil") && n.ends_with("__search"))
    {
        Some(tool) => Reply::tool_use(tool, json!({"query": "billing database"})),
        None => Reply::text(format!("no anvil tool among {:?}", turn.tool_names())),
    }
}

/// The real client, in a project where `anvil install` ran and the user trusts the workspace:
/// Claude Code starts `anvil mcp` from `.mcp.json`, offers its tools, lets the call through by
/// the `mcp__anvil` rule, and hands the cited synthesis back to the model.
#[test]
fn claude_calls_anvils_search_and_receives_the_earlier_decision_with_its_commit() {
    let project = Project::installed();
    let mcp_json: Value =
        serde_json::from_str(&project.read(".mcp.json")).expect(".mcp.json is JSON");
    assert_eq!(
        mcp_json["mcpServers"]["anvil"],
        json!({"type": "stdio", "command": "anvil", "args": ["mcp"]})
    );
    let debate = billing_debate(&project);
    let commit = synthesis_commit(&project, &debate);
    let (server, out) = ask_about_billing(&project, |claude| claude.trusted());
    assert_cited(&server, &debate, &commit);
    let answer = out.result_text().unwrap_or_default();
    assert!(answer.contains(&commit), "{}", out.describe());
}

/// Asks Claude Code (as `setup` makes it, with `anvil` on its `PATH`) in `project` what was
/// decided about billing, with the model consulting the record; asserts it succeeded.
fn ask_about_billing(
    project: &Project,
    setup: impl FnOnce(Claude) -> Claude,
) -> (ModelServer, ClaudeOutput) {
    let server = ModelServer::start(consults_the_record);
    let claude = Claude::new(
        &server,
        project.path(),
        "What did we decide about billing's database?",
    )
    .session_id(new_session_id())
    .path_prepend(anvil_dir())
    .timeout(Duration::from_secs(90));
    let out = setup(claude).run();
    out.assert_success();
    (server, out)
}

/// The one tool call made answered the synthesis of `debate` and cited it.
fn assert_cited(server: &ModelServer, debate: &str, commit: &str) {
    let results = server.tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    let (text, error) = &results[0];
    assert!(!error, "{text}");
    assert!(text.contains(&format!("{debate}@main")), "{text}");
    assert!(text.contains(commit), "{text}");
    assert!(text.contains("synthesizer"), "{text}");
}

/// The plugin `anvil plugin` writes carries the server: loaded with `--plugin-dir` in a project
/// where `anvil install` never ran, nobody trusted, the call allowed on the command line under
/// the plugin's name for it, Claude Code starts the server and the cited synthesis comes back.
#[test]
fn the_plugins_server_answers_under_the_plugins_tool_name() {
    let project = Project::new();
    let debate = billing_debate(&project);
    let commit = synthesis_commit(&project, &debate);
    project.anvil(&["plugin", "--out", "anvil-plugin"]).ok();
    let plugin = project.path().join("anvil-plugin");
    let (server, _) = ask_about_billing(&project, |claude| {
        claude
            .arg("--plugin-dir")
            .arg(plugin.display().to_string())
            .arg("--allowedTools")
            .arg(PLUGIN_TOOLS)
    });
    let offered = server.main_turns()[0].tool_names();
    assert!(
        offered
            .iter()
            .any(|n| n == &format!("{PLUGIN_TOOLS}__search")),
        "{offered:?}"
    );
    assert_cited(&server, &debate, &commit);
}

/// The prefix Claude Code gives the tools of the plugin `anvil`'s server `anvil`.
const PLUGIN_TOOLS: &str = "mcp__plugin_anvil_anvil";

/// The same project untrusted: Claude Code ignores its `permissions.allow`, so the call is
/// refused; `anvil doctor` says why and how to fix it.
#[test]
fn in_an_untrusted_workspace_the_call_is_refused_and_doctor_says_why() {
    let project = Project::installed();
    billing_debate(&project);
    let (server, out) = ask_about_billing(&project, |claude| claude);
    let results = server.tool_results();
    assert_eq!(results.len(), 1, "{results:?}\n{}", out.describe());
    assert!(results[0].1, "{results:?}");
    assert!(
        results[0].0.contains("permission") || results[0].0.contains("haven't granted"),
        "{results:?}"
    );
    let doctor = project.anvil(&["doctor", "--json"]);
    assert!(
        doctor.stdout.contains("mcp__anvil"),
        "{}",
        doctor.describe()
    );
}

/// An advocate that consults the record first, then argues with what it found.
fn researching_debater(turn: &Turn) -> Reply {
    if let Some((_, result, error)) = turn.tool_results().into_iter().next_back() {
        return Reply::text(format!(
            "ADVOCATE r1 (tool error: {error}), building on: {}",
            result.trim()
        ));
    }
    match turn_tag(turn) {
        Some(tag) if tag.key() == "ADVOCATE r1" => consults_the_record(turn),
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

/// `anvil run` in a project where `anvil install` never ran, in an untrusted workspace: the
/// debaters still get the record's tools, passed on the command line, and may call them.
#[test]
fn anvil_run_gives_debaters_the_records_tools_without_install_or_trust() {
    let project = Project::new();
    let debate = billing_debate(&project);
    let commit = synthesis_commit(&project, &debate);
    let server = ModelServer::start(researching_debater);
    let home = ClaudeHome::new();
    let out = spawn_headless(
        &project,
        &["run", "Should invoices move to DynamoDB?", "--rounds", "1"],
        &server,
        &home,
    )
    .wait_with_output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let results = server.tool_results();
    assert_eq!(results.len(), 1, "{results:?}\n{stderr}");
    assert!(!results[0].1, "{results:?}");
    // Recall put the earlier conclusion, with its commit, in the first prompt Claude got.
    let first = server.main_turns()[0].all_user_text();
    assert!(first.contains("debated related questions"), "{first}");
    assert!(first.contains(&commit), "{first}");
    assert!(results[0].0.contains(&commit), "{results:?}");
    let report = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let new = report.file_stem().unwrap().to_string_lossy().into_owned();
    let advocate = project
        .anvil(&["show", &format!("{new}@main:round-1/advocate")])
        .ok();
    assert!(advocate.stdout.contains(&commit), "{}", advocate.describe());
}
