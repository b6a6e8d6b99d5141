//! OpenCode as a seat: `opencode run --format=json --pure --title=anvil`, the prompt on stdin
//! (an argument with spaces reaches its model quoted; stdin stays as it is), continued with
//! `--session=ses_…`. OpenCode names its sessions itself (each event carries `sessionID`).
//!
//! OpenCode runs shell commands and edits without asking, even under its plan agent: a seat
//! is made read-only through its permissions, set for the turn in `OPENCODE_PERMISSION`
//! (merged over the person's own, so a deny wins). `--pure` leaves external plugins out (a
//! project's plugin would run code, and its install blocks the start);
//! `OPENCODE_DISABLE_PROJECT_CONFIG` leaves the project's own `opencode.json` out, so a
//! repository does not choose the seat's provider or permissions. `--title` spares the extra
//! request that would name the session.
//!
//! Its JSON events are one a line: `text` (the reply's parts), `tool_use`, `step_finish`
//! (`tokens`: `input` without the cached part, `output`, `reasoning`, `cache.read`,
//! `cache.write`; `cost` in dollars, each per step) and `error`. No event names the model:
//! it is the one asked for, or its config's `model`; the version comes from `opencode
//! --version`.
//!
//! As a host: OpenCode runs no hooks. A plugin of anvil's, `.opencode/plugin/anvil.js`
//! (`opencode.js` beside this file), sees `session.idle`, reads the session's last reply and
//! hands `anvil-hook stop` a Stop-like input of its own (`hook_event_name: "session.idle"`,
//! which only it sends; the reply's text, the prompt it answered and what its tools returned,
//! its model `PROVIDER/MODEL`, tokens and the session's OpenCode version, from the message
//! info); on `block` it sends the reason as the next prompt (`client.session.promptAsync`).
//! This continues a session in OpenCode's terminal and under `opencode serve`, not under
//! `opencode run` (which ends at the first idle). OpenCode has no cap: the plugin ends a streak
//! of 200. It imports nothing: OpenCode itself installs `@opencode-ai/plugin` into each
//! config folder that holds a plugin, at its start (which that install blocks for a minute
//! when offline, unless `node_modules/` and a `package-lock.json` naming it are there). Its
//! commands are `.opencode/command/anvil.md` and `anvil-steer`, `anvil-status`,
//! `anvil-cancel` beside it; anvil's MCP server is `mcp.anvil` of the project's `opencode.json`
//! (`{"type": "local", "command": ["anvil", "mcp"]}`), whose tools it offers as `anvil_search`,
//! …. OpenCode writes a `$schema` into a config file that lacks one: the install writes it too,
//! and the uninstall takes it out of a file that had none.

use serde_json::Value;

use super::host::{Host, HostTurn, Mcp, Stop, Wiring};
use super::ready::set_among;
use super::{About, Agent, Live, Played, Ran, Tokens, Turn, agent_home, jsonl};
use crate::record::usage::Usd;

pub(super) struct OpenCode;

/// What a seat of OpenCode is denied.
const READ_ONLY: &str = r#"{"edit":"deny","bash":"deny","webfetch":"deny","websearch":"deny","codesearch":"deny","task":"deny"}"#;

impl Agent for OpenCode {
    fn about(&self) -> &'static About {
        &About {
            name: "opencode",
            title: "OpenCode",
            allowed: "edit, bash, web and task denied (`OPENCODE_PERMISSION`): reads and searches",
            env: &["OPENCODE_*"],
            env_more: "the variables of the provider its model names (`anthropic/…`: \
                       `ANTHROPIC_*`), and those its `opencode.json` reads (`{env:NAME}`)",
        }
    }

    fn signed_in(&self) -> Result<String, String> {
        let logins = agent_home("XDG_DATA_HOME", ".local/share")
            .map(|d| d.join("opencode/auth.json"))
            .filter(|p| p.exists());
        logins
            .map(|_| "signed in".to_owned())
            .or_else(|| {
                let model = config()["model"].as_str()?.to_owned();
                Some(format!("model `{model}` in its opencode.json"))
            })
            .or_else(|| set_among(&["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"]))
            .ok_or_else(|| {
                "no provider found: run `opencode auth login`, or name a model in its \
                 opencode.json"
                    .to_owned()
            })
    }

    fn host(&self) -> Option<&'static dyn Host> {
        Some(&OpenCode)
    }

    fn names_sessions(&self) -> bool {
        false
    }

    fn check_session(&self, id: &str) -> Result<(), String> {
        let ok = id.strip_prefix("ses_").is_some_and(|rest| {
            !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric())
        });
        if ok {
            Ok(())
        } else {
            Err(format!(
                "the session `{}` is not an OpenCode session (ses_…)",
                id.escape_debug()
            ))
        }
    }

    fn args(&self, turn: &Turn<'_>, _session: Option<&str>) -> Vec<String> {
        let mut args: Vec<String> = ["run", "--format=json", "--pure", "--title=anvil"]
            .map(str::to_owned)
            .into();
        if let Some(id) = turn.resume {
            args.push(format!("--session={id}"));
        }
        if let Some(model) = turn.model {
            args.push(format!("--model={model}"));
        }
        args
    }

    fn env(&self, model: Option<&str>) -> Vec<String> {
        let config = config();
        let model = model
            .or_else(|| config["model"].as_str())
            .unwrap_or_default();
        let mut env: Vec<String> = self.about().env.iter().map(|v| (*v).to_owned()).collect();
        env.extend(provider_vars(model));
        env.extend(config_vars(&config.to_string()));
        env
    }

    fn default_model(&self) -> Option<String> {
        config()["model"].as_str().map(str::to_owned)
    }

    fn sets(&self) -> Vec<(&'static str, String)> {
        vec![
            ("OPENCODE_PERMISSION", READ_ONLY.to_owned()),
            ("OPENCODE_DISABLE_PROJECT_CONFIG", "1".to_owned()),
        ]
    }

    fn live(&self, line: &str) -> Option<Live> {
        let event: Value = serde_json::from_str(line.trim()).ok()?;
        (event["type"] == "text")
            .then(|| event["part"]["text"].as_str())
            .flatten()
            .map(|text| Live::Text(text.to_owned()))
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let events: Vec<Value> = jsonl(&ran.stdout).collect();
        if let Some(error) = events.iter().rev().find(|e| e["type"] == "error") {
            let message = error["error"]["data"]["message"]
                .as_str()
                .or_else(|| error["error"]["message"].as_str())
                .or_else(|| error["error"]["name"].as_str())
                .unwrap_or("an error");
            return Err(message.to_owned());
        }
        let id = events
            .iter()
            .find_map(|e| e["sessionID"].as_str())
            .or(session)
            .unwrap_or_default()
            .to_owned();
        // The reply is the last step's text: earlier steps led to tool calls.
        let last_step = events
            .iter()
            .rposition(|e| e["type"] == "step_start")
            .unwrap_or(0);
        let text: String = events[last_step..]
            .iter()
            .filter(|e| e["type"] == "text")
            .filter_map(|e| e["part"]["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let mut tokens = Tokens::default();
        let mut cost = 0.0;
        for step in events.iter().filter(|e| e["type"] == "step_finish") {
            let t = tokens_of(&step["part"]["tokens"]);
            tokens.input += t.input;
            tokens.output += t.output;
            tokens.cache_read += t.cache_read;
            tokens.cache_write += t.cache_write;
            cost += step["part"]["cost"].as_f64().unwrap_or(0.0);
        }
        Ok(Played {
            agent: &OpenCode,
            text,
            session: id,
            agent_version: None,
            model: None,
            tokens,
            cost: (cost > 0.0).then(|| Usd::from_f64(cost)).flatten(),
            duration_ms: 0,
        })
    }
}

/// OpenCode's count of tokens (a step's, a message's): `input` without the cached part,
/// `output`, `reasoning`, `cache.read`, `cache.write`.
fn tokens_of(t: &Value) -> Tokens {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    Tokens {
        input: n(&t["input"]) + n(&t["cache"]["read"]),
        output: n(&t["output"]) + n(&t["reasoning"]),
        cache_read: n(&t["cache"]["read"]),
        cache_write: n(&t["cache"]["write"]),
    }
}

impl Host for OpenCode {
    fn agent(&self) -> &'static dyn Agent {
        &OpenCode
    }

    /// Only anvil's plugin names the event `session.idle`.
    fn runs(&self, stop: &Stop<'_>, _var: &dyn Fn(&str) -> Option<String>) -> bool {
        stop.event == Some("session.idle")
    }

    fn turn(&self, stop: &Stop<'_>, _var: &dyn Fn(&str) -> Option<String>) -> HostTurn {
        HostTurn {
            version: stop.version.map(str::to_owned),
            model: stop.model.map(str::to_owned),
            tokens: stop.tokens.map(tokens_of).unwrap_or_default(),
        }
    }

    fn wiring(&self) -> &'static Wiring {
        &WIRING
    }
}

/// A command of its: Markdown, `$ARGUMENTS` where the person's text goes.
macro_rules! command {
    ($description:literal, $words:ident) => {
        crate::host_markdown_command!($description, $words, "$ARGUMENTS")
    };
}

static WIRING: Wiring = Wiring {
    hook: None,
    plugin: Some((".opencode/plugin/anvil.js", include_str!("opencode.js"))),
    command: Some((".opencode/command/anvil.md", COMMAND)),
    controls: &[
        (
            ".opencode/command/anvil-steer.md",
            command!(
                "Queue steering for the next phase of the running anvil debate",
                steer
            ),
        ),
        (
            ".opencode/command/anvil-status.md",
            command!("Show where anvil debates stand", status),
        ),
        (
            ".opencode/command/anvil-cancel.md",
            command!("Cancel the running anvil debate", cancel),
        ),
    ],
    allow: None,
    // The project's config, which OpenCode reads beside its own (a seat of OpenCode's does not:
    // `OPENCODE_DISABLE_PROJECT_CONFIG`); its tools are `anvil_search`, ….
    mcp: Some(Mcp::Json {
        file: "opencode.json",
        key: "mcp",
        entry: r#"{"type": "local", "command": ["anvil", "mcp"]}"#,
        header: &[("$schema", "https://opencode.ai/config.json")],
    }),
    memory_dir: ".opencode",
    mention: "/",
};

/// `/anvil QUESTION [options]`: the model runs `anvil start` with what was typed and answers
/// the prompt it prints; the plugin hands the turn to the hook, which claims the debate for
/// the session that saw it.
const COMMAND: &str = command!("Start an anvil debate on a question", start);

/// The person's OpenCode config (`$OPENCODE_CONFIG`, else `~/.config/opencode/opencode.json`),
/// or `null`.
fn config() -> Value {
    let path = std::env::var_os("OPENCODE_CONFIG")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            agent_home("XDG_CONFIG_HOME", ".config").map(|d| d.join("opencode/opencode.json"))
        });
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// `ANTHROPIC_*` for `anthropic/claude-…`: the variables of a model's provider, named as
/// OpenCode's providers read their keys.
pub(super) fn provider_vars(model: &str) -> Option<String> {
    let (provider, _) = model.split_once('/')?;
    let name: String = provider
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    (!name.is_empty()).then(|| format!("{name}_*"))
}

/// The variables a config reads by `{env:NAME}`.
fn config_vars(text: &str) -> Vec<String> {
    text.match_indices("{env:")
        .filter_map(|(at, _)| {
            let rest = &text[at + 5..];
            let name = &rest[..rest.find('}')?];
            super::env::check_pattern(name)
                .ok()
                .filter(|()| !name.ends_with('*'))
                .map(|()| name.to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seat_is_given_the_variables_of_its_models_provider_and_of_its_config() {
        assert_eq!(
            provider_vars("anthropic/claude-sonnet-4-5").as_deref(),
            Some("ANTHROPIC_*")
        );
        assert_eq!(
            provider_vars("github-copilot/gpt-5").as_deref(),
            Some("GITHUB_COPILOT_*")
        );
        assert_eq!(provider_vars("no-provider"), None);
        assert_eq!(
            config_vars(
                r#"{"provider":{"x":{"options":{"apiKey":"{env:MY_KEY}","h":"{env:$(x)}"}}}}"#
            ),
            ["MY_KEY"]
        );
    }

    #[test]
    fn a_session_is_opencodes_own() {
        assert!(OpenCode.check_session("ses_3f2a9c1bffe1AbCd").is_ok());
        for bad in [
            "",
            "ses_",
            "--session",
            "ses_a/b",
            "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        ] {
            assert!(OpenCode.check_session(bad).is_err(), "{bad}");
        }
    }
}
