//! Copilot CLI as a seat: `copilot --output-format json --allow-all-tools --mode plan`, the
//! prompt on stdin (piped, it runs one turn without a terminal as `-p` does), a session named
//! with `--session-id` and continued with `--resume=ID`. Plan mode refuses any change outside
//! Copilot's own session folder; `--allow-all-tools` is what a turn without a terminal needs
//! to run at all. Its JSON events come as they happen: `assistant.message_start` begins a
//! message and each `assistant.message_delta` brings more of its text (`deltaContent`), which
//! [`Agent::live`] reads while the turn runs. The reply is the turn's last `assistant.message`;
//! version, model and tokens come from the session's `events.jsonl`
//! (`$COPILOT_HOME/session-state/ID/`, else `~/.copilot/…`: `session.start.copilotVersion`,
//! then per request `session.usage_record`).
//!
//! As a host: an `agentStop` hook in a hook file of anvil's own, `.github/hooks/anvil.json`
//! (`{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": …, "timeoutSec": …}]}}`:
//! entries straight in the event's list, the command under `bash`). Copilot runs a project's
//! hook files only in a folder the person trusted (`trustedFolders` in its `config.json`, or a
//! folder above; `--trust-folder` for one headless run). Its input is its own: `sessionId`,
//! `transcriptPath` (the session's `events.jsonl`), `cwd`, `stopReason` (only Copilot's input
//! has it) and `stop_hook_active`, with no last message: the turn's text is the last
//! `assistant.message` since the turn's `user.message` in that log, and its model and tokens
//! the `session.usage_record`s since then; the hook's environment names the version
//! (`COPILOT_CLI_BINARY_VERSION`). `decision: block` continues with the reason as a user
//! message; after 8 in a row the next is dropped (nothing of it stays in the session), with no
//! setting to raise it. Its commands are skills, `.github/skills/anvil/SKILL.md` (`/anvil`)
//! and `anvil-steer`, `anvil-status`, `anvil-cancel` beside it: a prompt `/NAME …` reaches its
//! model as typed, which loads the skill with its `skill` tool and gets its words back as
//! `<skill-context>`. anvil's MCP server is in `.github/mcp.json` (`mcpServers`, `"type":
//! "local"`), loaded, as hooks are, in a trusted folder; its tools are `anvil-search`, ….

use std::path::Path;

use serde_json::Value;

use super::host::{HookFile, Host, HostTurn, Mcp, Shape, Stop, Trust, Wiring};
use super::ready::set_among;
use super::{About, Agent, Live, Played, Ran, Tokens, Turn, agent_home, headless_args, jsonl};

pub(super) struct Copilot;

impl Agent for Copilot {
    fn about(&self) -> &'static About {
        &About {
            name: "copilot",
            title: "Copilot CLI",
            allowed: "plan mode (`--mode plan`): reads and searches, no change outside its session folder",
            env: &["COPILOT_*", "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST"],
            env_more: "",
        }
    }

    fn signed_in(&self) -> Result<String, String> {
        set_among(&["COPILOT_PROVIDER_BASE_URL"])
            .map(|s| format!("its own model provider ({s})"))
            .or_else(|| set_among(&["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"]))
            .or_else(|| {
                let config = agent_home("COPILOT_HOME", ".copilot")?.join("config.json");
                let text = std::fs::read_to_string(config).ok()?;
                text.contains("logged_in_users")
                    .then(|| "signed in".to_owned())
            })
            .ok_or_else(|| {
                "no sign-in found: run `copilot login`, or set $COPILOT_GITHUB_TOKEN (or a \
                 provider with $COPILOT_PROVIDER_BASE_URL)"
                    .to_owned()
            })
    }

    fn args(&self, turn: &Turn<'_>, session: Option<&str>) -> Vec<String> {
        headless_args(
            &["--output-format=json", "--allow-all-tools", "--mode=plan"],
            turn,
            session,
        )
    }

    fn host(&self) -> Option<&'static dyn Host> {
        Some(&Copilot)
    }

    fn live(&self, line: &str) -> Option<Live> {
        let event: Value = serde_json::from_str(line.trim()).ok()?;
        match event["type"].as_str()? {
            "assistant.message_start" => Some(Live::Begins { model: None }),
            "assistant.message_delta" => event["data"]["deltaContent"]
                .as_str()
                .map(|text| Live::More(text.to_owned())),
            _ => None,
        }
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let events: Vec<Value> = jsonl(&ran.stdout).collect();
        let result = events.iter().rev().find(|e| e["type"] == "result");
        let id = result
            .and_then(|r| r["sessionId"].as_str())
            .or(session)
            .unwrap_or_default()
            .to_owned();
        if let Some(error) = events
            .iter()
            .rev()
            .find(|e| e["type"] == "session.error")
            .and_then(|e| e["data"]["message"].as_str())
        {
            return Err(error.to_owned());
        }
        let text = events
            .iter()
            .filter(|e| e["type"] == "assistant.message")
            .filter_map(|e| e["data"]["content"].as_str())
            .rfind(|t| !t.trim().is_empty())
            .unwrap_or_default()
            .to_owned();
        let duration_ms = result
            .and_then(|r| r["usage"]["sessionDurationMs"].as_u64())
            .unwrap_or(0);
        // The session's own log; its events of this turn follow the last user message.
        let log = agent_home("COPILOT_HOME", ".copilot")
            .map(|home| home.join("session-state").join(&id).join("events.jsonl"))
            .and_then(|path| std::fs::read_to_string(path).ok())
            .unwrap_or_default();
        let log: Vec<Value> = jsonl(&log).collect();
        let version = log
            .iter()
            .find(|e| e["type"] == "session.start")
            .and_then(|e| e["data"]["copilotVersion"].as_str())
            .map(str::to_owned);
        let turn_start = log
            .iter()
            .rposition(|e| e["type"] == "user.message")
            .unwrap_or(0);
        let mut tokens = Tokens::default();
        let mut model = None;
        for record in log[turn_start..]
            .iter()
            .filter(|e| e["type"] == "session.usage_record")
        {
            let u = &record["data"]["usage"];
            let n = |key: &str| u[key].as_u64().unwrap_or(0);
            tokens.input += n("inputTokens");
            tokens.output += n("outputTokens");
            tokens.cache_read += n("cacheReadTokens");
            tokens.cache_write += n("cacheWriteTokens");
            model = u["model"].as_str().map(str::to_owned).or(model);
        }
        Ok(Played {
            agent: &Copilot,
            text,
            session: id,
            agent_version: version,
            model,
            tokens,
            cost: None,
            duration_ms,
        })
    }
}

impl Host for Copilot {
    fn agent(&self) -> &'static dyn Agent {
        &Copilot
    }

    /// Only Copilot's stop says why it stopped.
    fn runs(&self, stop: &Stop<'_>, _var: &dyn Fn(&str) -> Option<String>) -> bool {
        stop.stop_reason.is_some()
    }

    fn text(&self, stop: &Stop<'_>) -> Option<String> {
        this_turn(stop)
            .iter()
            .filter(|e| e["type"] == "assistant.message")
            .filter_map(|e| e["data"]["content"].as_str())
            .rfind(|t| !t.trim().is_empty())
            .map(str::to_owned)
    }

    fn turn(&self, stop: &Stop<'_>, var: &dyn Fn(&str) -> Option<String>) -> HostTurn {
        let records = this_turn(stop);
        let mut found = HostTurn {
            version: var("COPILOT_CLI_BINARY_VERSION").filter(|v| !v.trim().is_empty()),
            ..HostTurn::default()
        };
        for usage in records
            .iter()
            .filter(|e| e["type"] == "session.usage_record")
            .map(|e| &e["data"]["usage"])
        {
            let n = |key: &str| usage[key].as_u64().unwrap_or(0);
            found.tokens.input += n("inputTokens");
            found.tokens.output += n("outputTokens");
            found.tokens.cache_read += n("cacheReadTokens");
            found.tokens.cache_write += n("cacheWriteTokens");
            found.model = usage["model"].as_str().map(str::to_owned).or(found.model);
        }
        found
    }

    /// Eight continuations in a row go through; the ninth `block` is dropped.
    fn block_cap(&self, _project: &Path, _var: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
        Some(8)
    }

    fn wiring(&self) -> &'static Wiring {
        &WIRING
    }

    /// A project's hook files run only in a folder the person trusted: `trustedFolders` in
    /// `$COPILOT_HOME/config.json` (else `~/.copilot/`) names it or a folder above it.
    fn trust(&self, project: &Path, home: Option<&Path>) -> Trust {
        let Some(dir) = super::host::agent_dir("COPILOT_HOME", ".copilot", home) else {
            return Trust::NotAsked;
        };
        let config = dir.join("config.json");
        let project = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_owned());
        let trusted = read_config(&config)["trustedFolders"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|folder| project.starts_with(folder));
        match trusted {
            true => Trust::Trusted(format!("{} trusts the folder", config.display())),
            false => Trust::Untrusted {
                why: "Copilot CLI does not trust this folder: it skips the project's hook files \
                      (.github/hooks) and MCP servers (.github/mcp.json), anvil's included"
                    .into(),
                fix: format!(
                    "run `copilot` here and trust the folder when it asks, or add \"{}\" to \
                     \"trustedFolders\" in {}; for one headless run, `copilot --trust-folder -p …`",
                    project.display(),
                    config.display()
                ),
            },
        }
    }
}

/// Copilot's `config.json`, whose first lines are `//` comments.
fn read_config(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json).unwrap_or_default()
}

/// The records of the turn that ended: those after the last `user.message` of the session's
/// log (the person's prompt, or the continuation a hook handed back) before this hook's call.
/// Copilot writes its log behind the turn and may start the hook before the turn's records
/// are in it: the log is read until it names this call (`hook.start` with the input's
/// `timestamp`), two seconds at most.
fn this_turn(stop: &Stop<'_>) -> Vec<Value> {
    let Some(path) = stop.transcript else {
        return Vec::new();
    };
    let this_call = |e: &Value| {
        e["type"] == "hook.start" && e["data"]["input"]["timestamp"].as_u64() == stop.timestamp
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut records = super::host::tail_records(path);
    while stop.timestamp.is_some()
        && !records.iter().any(this_call)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
        records = super::host::tail_records(path);
    }
    if let Some(call) = records.iter().rposition(this_call) {
        records.truncate(call);
    }
    if let Some(start) = records.iter().rposition(|e| e["type"] == "user.message") {
        records.drain(..=start);
    }
    records
}

/// `/anvil`, `/anvil-steer`, `/anvil-status`, `/anvil-cancel`.
const SKILLS: super::host::Skills = crate::host_skills!(".github/skills", "/");

static WIRING: Wiring = Wiring {
    hook: Some(HookFile {
        settings: ".github/hooks/anvil.json",
        event: "agentStop",
        timeout: ("timeoutSec", 1),
        cap_setting: None,
        shape: Shape {
            grouped: false,
            command: "bash",
            header: &[("version", 1)],
        },
    }),
    plugin: None,
    command: Some(SKILLS.0),
    controls: SKILLS.1,
    allow: None,
    // The project's MCP file (Copilot also reads `.mcp.json`, Claude Code's, where `anvil
    // install` puts the same server); its servers load only in a trusted folder, as its hooks.
    mcp: Some(Mcp::Json {
        file: ".github/mcp.json",
        key: "mcpServers",
        entry: r#"{"type": "local", "command": "anvil", "args": ["mcp"], "tools": ["*"]}"#,
        header: &[],
    }),
    memory_dir: ".github",
    mention: "/",
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's log as Copilot CLI 1.0.102 wrote it: a prompt and two continuations handed
    /// back by an `agentStop` hook. The turn that ended is the last one: its text, its model
    /// and tokens, never an earlier turn's; the version is the hook's environment's.
    #[test]
    fn the_turn_that_ended_is_read_from_the_sessions_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        std::fs::write(&log, include_str!("testdata/copilot-1.0.102-events.jsonl")).unwrap();
        let stop = Stop {
            session: "995dd182-41b4-4ad8-bfbe-a17e7d5951a7",
            transcript: Some(&log),
            stop_reason: Some("end_turn"),
            ..Stop::default()
        };
        let none = |_: &str| None;
        assert!(Copilot.runs(&stop, &none));
        let text = Copilot.text(&stop).unwrap();
        assert!(text.ends_with("please continue number 2"), "{text}");
        let var = |k: &str| (k == "COPILOT_CLI_BINARY_VERSION").then(|| "1.0.102".to_owned());
        let turn = Copilot.turn(&stop, &var);
        assert_eq!(turn.host(&Copilot), "copilot 1.0.102");
        assert_eq!(turn.model.as_deref(), Some("m1"));
        assert_eq!((turn.tokens.input, turn.tokens.output), (11, 7));
        // The call the input names marks the turn's end: the log read later holds more.
        let second = Stop {
            timestamp: Some(1_795_913_697_602),
            ..stop
        };
        let text = Copilot.text(&second).unwrap();
        assert!(text.ends_with("please continue number 1"), "{text}");
        // A turn without text of its own is not given the turn before it.
        std::fs::write(
            &log,
            format!(
                "{}{{\"type\":\"user.message\",\"data\":{{\"content\":\"go on\"}}}}\n",
                include_str!("testdata/copilot-1.0.102-events.jsonl")
            ),
        )
        .unwrap();
        assert_eq!(Copilot.text(&stop), None);
    }

    /// Trusted where `trustedFolders` of its `config.json` (written with comments first)
    /// names the project or a folder above it.
    #[test]
    fn the_folder_is_trusted_where_its_config_says() {
        let dir = tempfile::tempdir().unwrap();
        let (home, project) = (dir.path().join("home"), dir.path().join("p"));
        std::fs::create_dir_all(home.join(".copilot")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let trust = || Copilot.trust(&project, Some(&home));
        assert!(matches!(trust(), Trust::Untrusted { .. }));
        let above = dir.path().canonicalize().unwrap();
        std::fs::write(
            home.join(".copilot/config.json"),
            format!(
                "// User settings belong in settings.json.\n// This file is managed \
                 automatically.\n{{\n  \"trustedFolders\": [{:?}]\n}}\n",
                above.to_str().unwrap()
            ),
        )
        .unwrap();
        assert!(matches!(trust(), Trust::Trusted(_)), "{:?}", trust());
    }
}
