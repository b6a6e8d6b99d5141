//! Claude Code as a seat: `claude -p --output-format stream-json --verbose
//! --include-partial-messages --permission-mode plan`, the prompt on stdin, a session named
//! with `--session-id` and continued with `--resume`.
//!
//! Its output is JSON lines (both pinned clients refuse `stream-json` in `-p` mode without
//! `--verbose`): `system` `init` (`claude_code_version`), then each message's `stream_event`s
//! (`message_start` with its `model`, `content_block_delta`s with the text as it is written),
//! which [`Agent::live`] reads while the turn runs, and at the end the `result`, the object
//! `--output-format json` prints alone: the reply (`result`), `is_error`, `session_id`,
//! `usage` (input, output, cache read, cache write), `total_cost_usd`, `modelUsage` (per
//! model) and `duration_ms`. Its version is `init`'s, else `claude --version`'s.

use serde_json::Value;

use super::ready::{home_file, set_among};
use super::{About, Agent, Live, Played, Ran, Tokens, Turn, headless_args};
use crate::record::usage::Usd;

pub(super) struct Claude;

impl Agent for Claude {
    fn about(&self) -> &'static About {
        &About {
            name: "claude",
            title: "Claude Code",
            allowed: "plan mode (`--permission-mode plan`): reads, searches, no edits",
            env: &[
                "ANTHROPIC_*",
                "CLAUDE_CODE_*",
                "CLAUDE_CONFIG_DIR",
                "DISABLE_AUTOUPDATER",
                "DISABLE_TELEMETRY",
                "DISABLE_ERROR_REPORTING",
                "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
                "MAX_THINKING_TOKENS",
                "MCP_TIMEOUT",
                "MCP_TOOL_TIMEOUT",
                "AWS_*",
                "CLOUD_ML_REGION",
                "VERTEX_REGION_*",
                "GOOGLE_APPLICATION_CREDENTIALS",
            ],
            env_more: "",
        }
    }

    fn signed_in(&self) -> Result<String, String> {
        set_among(&[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
        ])
        .or_else(|| home_file(".claude/.credentials.json").map(|_| "signed in".to_owned()))
        .or_else(|| {
            let config = std::fs::read_to_string(home_file(".claude.json")?).ok()?;
            config
                .contains("\"oauthAccount\"")
                .then(|| "signed in".to_owned())
        })
        .ok_or_else(|| {
            "no sign-in found: run `claude` once and log in, or set $ANTHROPIC_API_KEY".to_owned()
        })
    }

    fn args(&self, turn: &Turn<'_>, session: Option<&str>) -> Vec<String> {
        headless_args(
            &[
                "-p",
                "--output-format=stream-json",
                "--verbose",
                "--include-partial-messages",
                "--permission-mode=plan",
            ],
            turn,
            session,
        )
    }

    fn prompt_as_text<'p>(&self, prompt: &'p str) -> std::borrow::Cow<'p, str> {
        super::text::no_command(super::text::break_mentions(prompt))
    }

    fn live(&self, line: &str) -> Option<Live> {
        super::stream_json_live(line, "claude_code_version")
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let events = super::events(&ran.stdout);
        let json = events
            .iter()
            .rfind(|e| e["type"] == "result")
            .ok_or_else(String::new)?;
        let version = events
            .iter()
            .find(|e| e["type"] == "system" && e["subtype"] == "init")
            .and_then(|e| e["claude_code_version"].as_str())
            .map(str::to_owned);
        let text = json["result"].as_str().unwrap_or_default().to_owned();
        if json["is_error"].as_bool() == Some(true) {
            return Err(text);
        }
        let number = |v: &Value, key: &str| v[key].as_u64().unwrap_or(0);
        let usage = &json["usage"];
        // The model that wrote the most is the one that answered (a small model may have
        // done side work).
        let model = json["modelUsage"].as_object().and_then(|models| {
            models
                .iter()
                .max_by_key(|(_, u)| u["outputTokens"].as_u64().unwrap_or(0))
                .map(|(name, _)| name.clone())
        });
        Ok(Played {
            agent: &Claude,
            text,
            session: json["session_id"]
                .as_str()
                .or(session)
                .unwrap_or_default()
                .to_owned(),
            agent_version: version,
            model,
            tokens: Tokens {
                input: number(usage, "input_tokens"),
                output: number(usage, "output_tokens"),
                cache_read: number(usage, "cache_read_input_tokens"),
                cache_write: number(usage, "cache_creation_input_tokens"),
            },
            cost: json["total_cost_usd"].as_f64().and_then(Usd::from_f64),
            duration_ms: number(json, "duration_ms"),
        })
    }
}
