//! Qwen Code as a seat: `qwen -o stream-json --include-partial-messages --approval-mode plan`,
//! the prompt on stdin (piped, it runs one turn without a terminal), a session named with
//! `--session-id` and continued with `--resume ID`. Plan mode offers no tool that writes or
//! runs commands. Its output is JSON lines in Claude Code's shape: `system` (`init`:
//! `session_id`, `qwen_code_version`), each message's `stream_event`s as it is written (which
//! [`Agent::live`] reads while the turn runs), the turn's `assistant` messages (each with
//! `model` and `usage`) and `result` (`result`, `is_error`, `duration_ms`); the same events
//! as one array (`-o json`) are read too. The tokens are the assistant messages' own:
//! `result.usage` also counts Qwen Code's background memory requests.

use serde_json::Value;

use super::ready::home_file;
use super::{About, Agent, Live, Played, Ran, Tokens, Turn, headless_args};

pub(super) struct Qwen;

impl Agent for Qwen {
    fn about(&self) -> &'static About {
        &About {
            name: "qwen",
            title: "Qwen Code",
            allowed: "plan mode (`--approval-mode plan`): reads and searches, no edits or shell",
            env: &["QWEN_*"],
            env_more: "the variables of the provider its `settings.json` chooses (`openai`: \
                       `OPENAI_*`, `DASHSCOPE_*`; `anthropic`: `ANTHROPIC_*`; `gemini`, \
                       `vertex-ai`: `GEMINI_*`, `GOOGLE_*`)",
        }
    }

    fn signed_in(&self) -> Result<String, String> {
        selected_auth()
            .map(|t| format!("authentication `{t}` in its settings.json"))
            .or_else(|| home_file(".qwen/oauth_creds.json").map(|_| "signed in".to_owned()))
            .ok_or_else(|| {
                "no authentication chosen: run `qwen` once and pick one (its settings.json has \
                 none)"
                    .to_owned()
            })
    }

    fn args(&self, turn: &Turn<'_>, session: Option<&str>) -> Vec<String> {
        headless_args(
            &[
                "--output-format=stream-json",
                "--include-partial-messages",
                "--approval-mode=plan",
            ],
            turn,
            session,
        )
    }

    fn prompt_as_text<'p>(&self, prompt: &'p str) -> std::borrow::Cow<'p, str> {
        super::text::no_command(super::text::escape_every_at(prompt))
    }

    fn env(&self, _model: Option<&str>) -> Vec<String> {
        let provider: &[&str] = match selected_auth().as_deref() {
            Some("anthropic") => &["ANTHROPIC_*"],
            Some("gemini" | "vertex-ai") => &["GEMINI_*", "GOOGLE_*"],
            Some("qwen-oauth") => &[],
            _ => &["OPENAI_*", "DASHSCOPE_*"],
        };
        self.about()
            .env
            .iter()
            .chain(provider)
            .map(|v| (*v).to_owned())
            .collect()
    }

    fn live(&self, line: &str) -> Option<Live> {
        super::stream_json_live(line, "qwen_code_version")
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let events = super::events(&ran.stdout);
        if events.is_empty() {
            return Err(String::new());
        }
        let result = events.iter().rev().find(|e| e["type"] == "result");
        if let Some(result) = result.filter(|r| r["is_error"].as_bool() == Some(true)) {
            let message = result["error"]["message"]
                .as_str()
                .or_else(|| result["result"].as_str())
                .unwrap_or_default();
            return Err(message.to_owned());
        }
        let init = events
            .iter()
            .find(|e| e["type"] == "system" && e["subtype"] == "init");
        let mut tokens = Tokens::default();
        let mut model = None;
        for message in events
            .iter()
            .filter(|e| e["type"] == "assistant")
            .map(|e| &e["message"])
        {
            let u = &message["usage"];
            let n = |key: &str| u[key].as_u64().unwrap_or(0);
            tokens.input += n("input_tokens");
            tokens.output += n("output_tokens");
            tokens.cache_read += n("cache_read_input_tokens");
            tokens.cache_write += n("cache_creation_input_tokens");
            model = message["model"].as_str().map(str::to_owned).or(model);
        }
        Ok(Played {
            agent: &Qwen,
            text: result
                .and_then(|r| r["result"].as_str())
                .unwrap_or_default()
                .to_owned(),
            session: init
                .and_then(|i| i["session_id"].as_str())
                .or(session)
                .unwrap_or_default()
                .to_owned(),
            agent_version: init
                .and_then(|i| i["qwen_code_version"].as_str())
                .map(str::to_owned),
            model,
            tokens,
            cost: None,
            duration_ms: result.and_then(|r| r["duration_ms"].as_u64()).unwrap_or(0),
        })
    }
}

/// The authentication Qwen Code's `settings.json` chooses (`openai`, `qwen-oauth`, …).
fn selected_auth() -> Option<String> {
    let settings = home_file(".qwen/settings.json")
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())?;
    settings["security"]["auth"]["selectedType"]
        .as_str()
        .map(str::to_owned)
}
