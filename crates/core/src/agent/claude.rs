//! Claude Code as a seat: `claude -p --output-format json --permission-mode plan`, the prompt
//! on stdin, a session named with `--session-id` and continued with `--resume`. Its JSON result has the
//! reply (`result`), `is_error`, `session_id`, `usage` (input, output, cache read, cache
//! write), `total_cost_usd`, `modelUsage` (per model) and `duration_ms`; its version comes
//! from `claude --version`.

use serde_json::Value;

use super::{About, Agent, Played, Ran, Tokens, Turn, session_and_model};
use super::ready::{home_file, set_among};
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
        let mut args: Vec<String> = ["-p", "--output-format=json", "--permission-mode=plan"]
            .map(str::to_owned)
            .into();
        args.extend(session_and_model(turn, session));
        args
    }

    fn prompt_as_text<'p>(&self, prompt: &'p str) -> std::borrow::Cow<'p, str> {
        super::text::no_command(super::text::break_mentions(prompt))
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let json: Value = serde_json::from_str(ran.stdout.trim()).map_err(|_| String::new())?;
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
            agent_version: None,
            model,
            tokens: Tokens {
                input: number(usage, "input_tokens"),
                output: number(usage, "output_tokens"),
                cache_read: number(usage, "cache_read_input_tokens"),
                cache_write: number(usage, "cache_creation_input_tokens"),
            },
            cost: json["total_cost_usd"].as_f64().and_then(Usd::from_f64),
            duration_ms: number(&json, "duration_ms"),
        })
    }
}
