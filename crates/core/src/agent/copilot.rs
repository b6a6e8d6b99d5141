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

use serde_json::Value;

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
