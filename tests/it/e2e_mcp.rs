//! `anvil mcp`: the record as MCP tools. First spoken to directly over stdio (every tool, every
//! answer cited), then through the real Claude Code in a project where `anvil install` ran,
//! the model calling anvil's search tool and reading the earlier decision with its commit.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::both_clients;
use crate::support::anvil::{Project, anvil_bin, anvil_dir, phase_text, turn_tag};
use crate::support::claude::{
    Claude, ClaudeHome, ClaudeOutput, Client, new_session_id, spawn_headless_of,
};
use crate::support::model_server::{Discovery, ModelServer, Reply, TOOL_SEARCH, Turn, discover};
use crate::support::snap::Filters;

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

    /// Writes `bytes` to the server as they are (a line of the test's making).
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the server writes.
    fn next(&mut self) -> Value {
        let mut line = String::new();
        assert!(
            self.out.read_line(&mut line).unwrap() > 0,
            "anvil mcp ended"
        );
        serde_json::from_str(&line).expect("JSON-RPC line")
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

    // What Claude reads from each tool, in one snapshot; the commits they cite are checked to
    // be the synthesis' own below.
    let mut read = String::new();
    let mut shown = |call: &str, text: &str| read.push_str(&format!("### {call}\n{text}\n\n"));
    let (list, error) = mcp.tool("list_debates", json!({}));
    assert!(!error, "{list}");
    shown("list_debates", &list);

    // Word forms: "replicas" finds "replica"; the hit cites line, phase and the full commit.
    let (hits, error) = mcp.tool("search", json!({"query": "replica ledger"}));
    assert!(!error, "{hits}");
    let first = hits.lines().next().unwrap();
    assert!(first.contains(&commit), "{hits}");
    shown("search replica ledger", &hits);

    let (phase, error) = mcp.tool("read_phase", json!({"rev": &commit}));
    assert!(!error, "{phase}");
    assert!(
        phase.starts_with(&format!("Source: {debate}@main:synthesis")),
        "{phase}"
    );
    assert!(phase.contains(&format!("commit {commit}")), "{phase}");
    shown("read_phase COMMIT", &phase);

    // A prefix of the debate id is enough.
    let (synthesis, error) = mcp.tool("synthesis", json!({"debate": &debate[..debate.len() - 2]}));
    assert!(!error, "{synthesis}");
    assert!(synthesis.contains(&commit), "{synthesis}");
    shown("synthesis PREFIX", &synthesis);
    let (pending, error) = mcp.tool("synthesis", json!({"debate": &running.debate}));
    assert!(!error, "{pending}");
    shown("synthesis RUNNING", &pending);

    let (diff, error) = mcp.tool(
        "compare",
        json!({"from": format!("{debate}@main:round-1/advocate"), "to": format!("{debate}@main:synthesis")}),
    );
    assert!(!error, "{diff}");
    assert!(diff.contains(&commit), "{diff}");
    shown("compare ROUND-1/ADVOCATE SYNTHESIS", &diff);

    let (now, error) = mcp.tool("running", json!({}));
    assert!(!error, "{now}");
    shown("running", &now);

    // Bad input is an error Claude can read, and the server goes on.
    let (missing, error) = mcp.tool("read_phase", json!({"rev": "no-such-debate@main:round-9"}));
    assert!(error, "{missing}");
    shown("read_phase no-such-debate@main:round-9", &missing);
    insta::assert_snapshot!("mcp_tools", Filters::of(&project).redact(&read));
    let (again, error) = mcp.tool("search", json!({"query": "\"unbalanced"}));
    assert!(!error, "{again}");
}

/// A line that is not JSON gets a parse error, JSON that is no message an invalid request
/// (with its id), and a line past the server's limit (50 MB, as a red team sent) an error that
/// says so, with the id of the request it carried: nothing is dropped without an answer. A query
/// past the search's limit is refused at once, and the server goes on.
#[test]
fn bad_and_over_long_lines_get_json_rpc_errors() {
    let project = Project::new();
    billing_debate(&project);
    let mut mcp = Mcp::start(&project);

    mcp.send_raw(b"this is not json\n");
    let answer = mcp.next();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    mcp.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\n");
    assert_eq!(mcp.next()["error"]["code"], -32700);

    mcp.send(&json!({"jsonrpc": "2.0", "id": 41, "hello": "world"}));
    let answer = mcp.next();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], 41, "{answer}");

    // 50 MB, its id last (as the TypeScript SDK orders the members), then one with its id first.
    let words = "billing ".repeat(50 * 1024 * 1024 / 8);
    for (id, line) in [
        (
            json!(42),
            format!(
                r#"{{"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{words}"}}}},"jsonrpc":"2.0","id":42}}"#
            ),
        ),
        (
            json!("big-43"),
            format!(
                r#"{{"jsonrpc":"2.0","id":"big-43","method":"tools/call","params":{{"name":"search","arguments":{{"query":"{}"}}}}}}"#,
                &words[..2 * 1024 * 1024]
            ),
        ),
    ] {
        mcp.send_raw(format!("{line}\n").as_bytes());
        let answer = mcp.next();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("at most 1048576 bytes"), "{message}");
    }

    // Under the line's limit, over the search's: refused at once, by a tool error.
    let (text, error) = mcp.tool("search", json!({"query": "billing ".repeat(32 * 1024)}));
    assert!(error, "{text}");
    assert!(text.contains("a search takes at most 4096"), "{text}");
    let (text, error) = mcp.tool("search", json!({"query": "billing"}));
    assert!(!error, "{text}");
    assert!(text.contains("billing"), "{text}");
}

/// A search that waits (here for the index, which another process is writing) holds up
/// nothing else: a `ping` sent after it is answered first, and the search answers once the
/// index is free.
#[test]
fn a_waiting_search_holds_up_no_other_request() {
    let project = Project::new();
    let debate = billing_debate(&project);
    let mut mcp = Mcp::start(&project);
    let (text, error) = mcp.tool("search", json!({"query": "replicas"}));
    assert!(!error && text.contains(&debate), "{text}");
    // Something new in the record, and another writer holding the index.
    project.start(&["Should invoices move to a queue?", "--rounds", "1"]);
    let db = rusqlite::Connection::open(project.anvil_home().join("search.sqlite")).unwrap();
    db.execute_batch("BEGIN IMMEDIATE").unwrap();

    mcp.send(&json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call",
                     "params": {"name": "search", "arguments": {"query": "invoices queue"}}}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 101, "method": "ping"}));
    let first = mcp.next();
    assert_eq!(
        first["id"], 101,
        "the ping is answered while the search waits: {first}"
    );
    assert!(first.get("error").is_none(), "{first}");
    db.execute_batch("COMMIT").unwrap();
    let second = mcp.next();
    assert_eq!(second["id"], 100, "{second}");
    let text = second["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("invoices"), "{second}");
}

#[test]
fn a_project_without_debates_answers_each_call_and_one_without_anvil_errs_per_call() {
    let project = Project::new();
    let mut mcp = Mcp::start(&project);
    let (search, error) = mcp.tool("search", json!({"query": "billing"}));
    assert!(!error, "{search}");
    let (running, error) = mcp.tool("running", json!({}));
    assert!(!error, "{running}");
    insta::assert_snapshot!(
        "mcp_without_debates",
        Filters::of(&project).redact(&format!("{search}\n{running}"))
    );

    // No .anvil at all: each call says so, and the server stays up for the next.
    let bare = Project::empty();
    let mut mcp = Mcp::start(&bare);
    for _ in 0..2 {
        let (text, error) = mcp.tool("list_debates", json!({}));
        assert!(error, "{text}");
        insta::assert_snapshot!("mcp_without_anvil", Filters::of(&bare).redact(&text));
    }
}

/// Is `name` anvil's search tool: `mcp__anvil__search` from `.mcp.json`,
/// `mcp__plugin_anvil_anvil__search` from the plugin.
fn is_anvils_search(name: &str) -> bool {
    name.starts_with("mcp__") && name.contains("anvil") && name.ends_with("__search")
}

/// The words a person's question about billing gives a model to look for a tool with.
const KEYWORDS: &str = "earlier decision billing";

/// Reaches anvil's search tool the way the client requires (offered at once by 2.1.197, loaded
/// through `ToolSearch` on 2.1.332) and calls it; answers with what it got.
fn consults_the_record(turn: &Turn) -> Reply {
    if let Some((_, result, _)) = turn
        .answered_calls()
        .into_iter()
        .find(|(name, ..)| is_anvils_search(name))
    {
        return Reply::text(format!("From the record: {result}"));
    }
    match discover(turn, is_anvils_search, KEYWORDS) {
        Discovery::Call(tool) => Reply::tool_use(tool, json!({"query": "billing database"})),
        Discovery::Search(reply) => reply,
        Discovery::Missing(why) => Reply::text(format!("no anvil tool: {why}")),
    }
}

/// What anvil's server tells Claude about when to use its tools reached the model.
const INSTRUCTED: &str = "what was decided, discussed or argued earlier";

both_clients!(claude_calls_anvils_search_and_receives_the_earlier_decision_with_its_commit);
/// The real client, in a project where `anvil install` ran and the user trusts the workspace:
/// Claude Code starts `anvil mcp` from `.mcp.json`, offers its tools (2.1.332: announces them,
/// and loads the one the model asks `ToolSearch` for), lets the call through by the
/// `mcp__anvil` rule, and hands the cited synthesis back to the model, with the server's
/// instructions on when to use them.
fn claude_calls_anvils_search_and_receives_the_earlier_decision_with_its_commit(client: Client) {
    let project = Project::installed();
    let mcp_json: Value =
        serde_json::from_str(&project.read(".mcp.json")).expect(".mcp.json is JSON");
    assert_eq!(
        mcp_json["mcpServers"]["anvil"],
        json!({"type": "stdio", "command": "anvil", "args": ["mcp"]})
    );
    let debate = billing_debate(&project);
    let commit = synthesis_commit(&project, &debate);
    let (server, out) = ask_about_billing(client, &project, |claude| claude.trusted());
    assert_cited(client, &server, &debate, &commit);
    let answer = out.result_text().unwrap_or_default();
    assert!(answer.contains(&commit), "{}", out.describe());
    let turns = server.main_turns();
    assert!(
        turns
            .iter()
            .any(|t| t.body.to_string().contains(INSTRUCTED)),
        "the server's instructions reached the model"
    );
}

/// Asks Claude Code (`client`, as `setup` makes it, with `anvil` on its `PATH`) in `project`
/// what was decided about billing, with the model consulting the record; asserts it succeeded.
fn ask_about_billing(
    client: Client,
    project: &Project,
    setup: impl FnOnce(Claude) -> Claude,
) -> (ModelServer, ClaudeOutput) {
    let server = ModelServer::start(consults_the_record);
    let claude = Claude::new(
        &server,
        project.path(),
        "What did we decide about billing's database?",
    )
    .client(client)
    .session_id(new_session_id())
    .path_prepend(anvil_dir())
    .timeout(Duration::from_secs(90));
    let out = setup(claude).run();
    out.assert_success();
    (server, out)
}

/// The one call of anvil's search answered the synthesis of `debate` and cited it; on a
/// client that defers MCP tools, the model found it through `ToolSearch` first.
fn assert_cited(client: Client, server: &ModelServer, debate: &str, commit: &str) {
    let calls = server.calls_answered();
    let searches: Vec<_> = calls.iter().filter(|(n, ..)| is_anvils_search(n)).collect();
    assert_eq!(searches.len(), 1, "{calls:?}");
    let (_, text, error) = searches[0];
    assert!(!error, "{text}");
    assert!(text.contains(&format!("{debate}@main")), "{text}");
    assert!(text.contains(commit), "{text}");
    assert!(text.contains("synthesizer"), "{text}");
    let loaded = calls
        .iter()
        .any(|(n, text, _)| n == TOOL_SEARCH && text.lines().any(is_anvils_search));
    assert_eq!(loaded, client.defers_mcp_tools(), "{calls:?}");
}

both_clients!(the_plugins_server_answers_under_the_plugins_tool_name);
/// The plugin `anvil plugin` writes carries the server: loaded with `--plugin-dir` in a project
/// where `anvil install` never ran, nobody trusted, the call allowed on the command line under
/// the plugin's name for it, Claude Code starts the server and the cited synthesis comes back.
fn the_plugins_server_answers_under_the_plugins_tool_name(client: Client) {
    let project = Project::new();
    let debate = billing_debate(&project);
    let commit = synthesis_commit(&project, &debate);
    project.anvil(&["plugin", "--out", "anvil-plugin"]).ok();
    let plugin = project.path().join("anvil-plugin");
    let (server, _) = ask_about_billing(client, &project, |claude| {
        claude
            .arg("--plugin-dir")
            .arg(plugin.display().to_string())
            .arg("--allowedTools")
            .arg(PLUGIN_TOOLS)
    });
    // Offered in the request (2.1.197) or announced as deferred (2.1.332).
    let first = &server.main_turns()[0];
    let offered: Vec<String> = first
        .tool_names()
        .into_iter()
        .chain(first.deferred_tools())
        .collect();
    let wanted = format!("{PLUGIN_TOOLS}__search");
    let seen = server
        .main_turns()
        .iter()
        .any(|t| t.tool_names().contains(&wanted) || t.deferred_tools().contains(&wanted));
    assert!(seen, "{offered:?}");
    assert_cited(client, &server, &debate, &commit);
}

/// The prefix Claude Code gives the tools of the plugin `anvil`'s server `anvil`.
const PLUGIN_TOOLS: &str = "mcp__plugin_anvil_anvil";

both_clients!(in_an_untrusted_workspace_the_call_is_refused_and_doctor_says_why);
/// The same project untrusted: Claude Code ignores its `permissions.allow`, so the call is
/// refused; `anvil doctor` says why and how to fix it.
fn in_an_untrusted_workspace_the_call_is_refused_and_doctor_says_why(client: Client) {
    let project = Project::installed();
    billing_debate(&project);
    let (server, out) = ask_about_billing(client, &project, |claude| claude);
    let calls = server.calls_answered();
    let searches: Vec<_> = calls.iter().filter(|(n, ..)| is_anvils_search(n)).collect();
    assert_eq!(searches.len(), 1, "{calls:?}\n{}", out.describe());
    let (_, text, error) = searches[0];
    assert!(error, "{calls:?}");
    assert!(
        text.contains("permission") || text.contains("haven't granted"),
        "{calls:?}"
    );
    let doctor = project.anvil(&["doctor", "--json"]);
    assert!(
        doctor.stdout.contains("mcp__anvil"),
        "{}",
        doctor.describe()
    );
}

both_clients!(a_server_still_starting_when_the_session_begins_is_found_all_the_same);
/// `anvil mcp` slow to start (2 s, a loaded machine): 2.1.332 in `-p` mode sends the first
/// request before the server is connected, so its tools are not announced; a model that looks
/// for them by the words of the question (as a person's question gives them) has `ToolSearch`
/// wait for the server and load anvil's search, which then answers. 2.1.197 waits for the
/// server before the first request.
fn a_server_still_starting_when_the_session_begins_is_found_all_the_same(client: Client) {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::installed();
    let debate = billing_debate(&project);
    let commit = synthesis_commit(&project, &debate);
    let slow = project.path().join("slow-bin");
    std::fs::create_dir_all(&slow).unwrap();
    let wrapper = slow.join("anvil");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n[ \"$1\" = mcp ] && sleep 2\nexec '{}' \"$@\"\n",
            anvil_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The wrapper comes first on the PATH, before the directory of the anvil under test.
    let (server, _) = ask_about_billing(client, &project, |claude| {
        claude.trusted().path_prepend(slow)
    });
    assert_cited(client, &server, &debate, &commit);
    if client.defers_mcp_tools() {
        let first = &server.main_turns()[0];
        let searched = first.deferred_tools().iter().any(|n| is_anvils_search(n));
        let calls = server.calls_answered();
        // Whether the first request raced the server is the machine's business; either way
        // the tool was found, and by keywords when it had not been announced.
        if !searched {
            let query = server.main_turns()[1]
                .messages()
                .iter()
                .rev()
                .find_map(|m| {
                    m["content"].as_array()?.iter().find_map(|b| {
                        (b["name"] == TOOL_SEARCH).then(|| b["input"]["query"].clone())
                    })
                });
            assert_eq!(query, Some(json!(KEYWORDS)), "{calls:?}");
        }
    }
}

/// An advocate that consults the record first, then argues with what it found.
fn researching_debater(turn: &Turn) -> Reply {
    let answered = turn.answered_calls();
    if let Some((_, result, error)) = answered.iter().find(|(n, ..)| is_anvils_search(n)) {
        return Reply::text(format!(
            "ADVOCATE r1 (tool error: {error}), building on: {}",
            result.trim()
        ));
    }
    // Between a `ToolSearch` and the call it prepares, the latest message is its result.
    if answered.iter().any(|(n, ..)| n == TOOL_SEARCH) {
        return consults_the_record(turn);
    }
    match turn_tag(turn) {
        Some(tag) if tag.key() == "ADVOCATE r1" => consults_the_record(turn),
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

both_clients!(anvil_run_gives_debaters_the_records_tools_without_install_or_trust);
/// `anvil run` in a project where `anvil install` never ran, in an untrusted workspace: the
/// debaters still get the record's tools, passed on the command line, and may call them.
fn anvil_run_gives_debaters_the_records_tools_without_install_or_trust(client: Client) {
    let project = Project::new();
    let debate = billing_debate(&project);
    let commit = synthesis_commit(&project, &debate);
    let server = ModelServer::start(researching_debater);
    let home = ClaudeHome::new();
    let out = spawn_headless_of(
        client,
        &project,
        &["run", "Should invoices move to DynamoDB?", "--rounds", "1"],
        &server,
        &home,
    )
    .wait_with_output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let calls = server.calls_answered();
    let results: Vec<_> = calls
        .iter()
        .filter(|(n, ..)| is_anvils_search(n))
        .map(|(_, text, error)| (text.clone(), *error))
        .collect();
    assert_eq!(results.len(), 1, "{calls:?}\n{stderr}");
    assert!(!results[0].1, "{results:?}");
    // Recall put the earlier conclusion, with its commit, in the first prompt Claude got.
    let first = server.main_turns()[0].all_user_text();
    assert!(first.contains("debated related questions"), "{first}");
    assert!(first.contains(&commit), "{first}");
    assert!(results[0].0.contains(&commit), "{results:?}");
    let report = std::path::PathBuf::from(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or_default(),
    );
    let new = report.file_stem().unwrap().to_string_lossy().into_owned();
    let advocate = project
        .anvil(&["show", &format!("{new}@main:round-1/advocate")])
        .ok();
    assert!(advocate.stdout.contains(&commit), "{}", advocate.describe());
}

/// The words a person uses when asking about the past.
const PERSONS_WORDS: [&str; 5] = ["decision", "debate", "past", "earlier", "search"];

/// On the client that defers MCP tools (2.1.332), a model that searches `ToolSearch` with any
/// one word a person uses about the past (decision, debate, past, earlier, search) is handed
/// anvil's search tool: its name and description carry those words.
#[test]
fn anvils_search_is_found_by_the_words_a_person_uses() {
    let client = Client::Newest;
    assert!(client.defers_mcp_tools());
    let project = Project::installed();
    let server = ModelServer::start(|turn| {
        let searched = turn.calls_of(TOOL_SEARCH);
        match PERSONS_WORDS.get(searched) {
            Some(word) => Reply::tool_use(TOOL_SEARCH, json!({"query": word})),
            None => Reply::text("done"),
        }
    });
    Claude::new(&server, project.path(), "What did we decide earlier?")
        .client(client)
        .session_id(new_session_id())
        .path_prepend(anvil_dir())
        .trusted()
        .timeout(Duration::from_secs(90))
        .run()
        .assert_success();
    // Each search's result: the names of the tools it loaded, best first.
    let found: Vec<String> = server
        .calls_answered()
        .into_iter()
        .filter(|(name, ..)| name == TOOL_SEARCH)
        .map(|(_, names, _)| names)
        .collect();
    assert_eq!(found.len(), PERSONS_WORDS.len(), "{found:?}");
    for (word, names) in PERSONS_WORDS.iter().zip(&found) {
        assert!(
            names.lines().any(|n| n == "mcp__anvil__search"),
            "{word}: {names}"
        );
    }
}
