//! Gemini CLI as a seat: `gemini --output-format=stream-json --approval-mode=plan --skip-trust`, the
//! prompt on stdin (piped, it runs one turn without a terminal, and text on stdin is taken as
//! it is: an `@path` in an argument would inline that file), a session named with
//! `--session-id` and continued with `--resume`.
//!
//! Plan mode is its read-only mode (a headless turn never waits for an approval: what would
//! need one is left out). `--skip-trust` runs it in a folder nobody trusted without its
//! refusal (exit 55), and without the project's own `.gemini/settings.json`: a repository's
//! settings do not choose the seat's tools, hooks or endpoint. `GEMINI_CLI_NO_RELAUNCH` keeps
//! it one process (else it starts itself again as a child).
//!
//! Its output is JSON lines, one event each, written as the turn runs: `init` (`session_id`,
//! the model asked for), the person's `message`, the reply's `message`s (`role` `assistant`,
//! `delta: true`: a few words each, as the model streams them; the reply is all of them in
//! order), `tool_use` and `tool_result`, and last `result`: `status` `success` or `error` (with
//! `error.message`), and `stats` (`input_tokens`, which count the cached ones too, `cached`,
//! `output_tokens` and `total_tokens`, which also counts the model's thoughts, per model under
//! `models`). No cost is reported; the version comes from `gemini --version`.
//!
//! As a host: `hooks.AfterAgent` in `.gemini/settings.json` (Claude Code's `Stop`), loaded only
//! in a trusted folder (folder trust is on: a folder is trusted in
//! `~/.gemini/trustedFolders.json`, or for one run by `GEMINI_CLI_TRUST_WORKSPACE=true`). Its
//! input has `prompt` (the person's) and `prompt_response`, which after a continuation holds
//! every answer since that prompt, joined: the turn's own text is the last `gemini` record of
//! its transcript (`~/.gemini/tmp/DIR/chats/session-….jsonl`, with `model` and `tokens`).
//! `decision: block` continues with the reason as a user message, headless and in its
//! terminal; there is no cap. Its hook entries count their `timeout` in milliseconds. Nothing
//! it hands a hook names its version.

use serde_json::Value;

use super::host::{HookFile, Host, HostTurn, Mcp, Shape, Stop, Trust, Wiring};
use super::ready::{home_file, set_among};
use super::{About, Agent, Live, Played, Ran, Tokens, Turn, headless_args, jsonl};

pub(super) struct Gemini;

impl Agent for Gemini {
    fn about(&self) -> &'static About {
        &About {
            name: "gemini",
            title: "Gemini CLI",
            allowed: "plan mode (`--approval-mode plan`): reads and searches, no edits or shell",
            env: &["GEMINI_*", "GOOGLE_*"],
            env_more: "",
        }
    }

    fn signed_in(&self) -> Result<String, String> {
        set_among(&[
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_GENAI_USE_VERTEXAI",
        ])
        .or_else(|| {
            let settings = std::fs::read_to_string(home_file(".gemini/settings.json")?).ok()?;
            let settings: Value = serde_json::from_str(&settings).ok()?;
            settings["security"]["auth"]["selectedType"]
                .as_str()
                .map(|t| format!("authentication `{t}` in its settings.json"))
        })
        .or_else(|| home_file(".gemini/oauth_creds.json").map(|_| "signed in".to_owned()))
        .ok_or_else(|| {
            "no sign-in found: run `gemini` once and log in, or set $GEMINI_API_KEY".to_owned()
        })
    }

    fn args(&self, turn: &Turn<'_>, session: Option<&str>) -> Vec<String> {
        headless_args(
            &[
                "--output-format=stream-json",
                "--approval-mode=plan",
                "--skip-trust",
            ],
            turn,
            session,
        )
    }

    fn prompt_as_text<'p>(&self, prompt: &'p str) -> std::borrow::Cow<'p, str> {
        super::text::no_command(super::text::escape_every_at(prompt))
    }

    fn sets(&self) -> Vec<(&'static str, String)> {
        vec![("GEMINI_CLI_NO_RELAUNCH", "true".to_owned())]
    }

    /// Gemini CLI 0.61.0 can lose a session: a resumed turn in a later minute than the
    /// session's start was seen to write a second file for it, and a later start to remove
    /// both; resuming it then exits 42, "Error resuming session: Invalid session identifier".
    fn lost_session(&self, ran: &Ran) -> bool {
        ran.status.code() == Some(42) && ran.stderr.contains("Error resuming session")
    }

    fn host(&self) -> Option<&'static dyn Host> {
        Some(&Gemini)
    }

    fn live(&self, line: &str) -> Option<Live> {
        let event: Value = serde_json::from_str(line.trim()).ok()?;
        match event["type"].as_str()? {
            // The model asked for; `auto…` names Gemini CLI's router, not a model.
            "init" => Some(Live::Begins {
                model: event["model"]
                    .as_str()
                    .filter(|m| !m.starts_with("auto"))
                    .map(str::to_owned),
            }),
            "message" if event["role"] == "assistant" => {
                event["content"].as_str().map(|t| Live::More(t.to_owned()))
            }
            _ => None,
        }
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let events: Vec<Value> = jsonl(&ran.stdout).collect();
        let result = events
            .iter()
            .rev()
            .find(|e| e["type"] == "result")
            .ok_or_else(String::new)?;
        if result["status"] != "success" {
            return Err(result["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned());
        }
        let text: String = events
            .iter()
            .filter(|e| e["type"] == "message" && e["role"] == "assistant")
            .filter_map(|e| e["content"].as_str())
            .collect();
        let mut tokens = Tokens::default();
        let mut model = None;
        let mut most = 0;
        for (name, stats) in result["stats"]["models"].as_object().into_iter().flatten() {
            let n = |key: &str| stats[key].as_u64().unwrap_or(0);
            tokens.input += n("input_tokens");
            tokens.cache_read += n("cached");
            // The thoughts are output too: what the total holds beyond the prompt.
            let output =
                n("output_tokens").max(n("total_tokens").saturating_sub(n("input_tokens")));
            tokens.output += output;
            // The model that wrote the most answered; another may have done side work.
            if output >= most {
                most = output;
                model = Some(name.clone());
            }
        }
        Ok(Played {
            agent: &Gemini,
            text,
            session: events
                .iter()
                .find(|e| e["type"] == "init")
                .and_then(|e| e["session_id"].as_str())
                .or(session)
                .unwrap_or_default()
                .to_owned(),
            agent_version: None,
            model,
            tokens,
            cost: None,
            duration_ms: 0,
        })
    }
}

impl Host for Gemini {
    fn agent(&self) -> &'static dyn Agent {
        &Gemini
    }

    /// Only Gemini CLI names the event `AfterAgent`.
    fn runs(&self, stop: &Stop<'_>, _var: &dyn Fn(&str) -> Option<String>) -> bool {
        stop.event == Some("AfterAgent")
    }

    fn text(&self, stop: &Stop<'_>) -> Option<String> {
        last_reply(stop)
            .and_then(|r| r["content"].as_str().map(str::to_owned))
            .filter(|t| !t.trim().is_empty())
            .or_else(|| stop.prompt_response.map(str::to_owned))
    }

    fn turn(&self, stop: &Stop<'_>, _var: &dyn Fn(&str) -> Option<String>) -> HostTurn {
        let reply = last_reply(stop);
        let t = reply.as_ref().map(|r| &r["tokens"]);
        let n = |key: &str| t.and_then(|t| t[key].as_u64()).unwrap_or(0);
        HostTurn {
            version: None,
            model: reply
                .as_ref()
                .and_then(|r| r["model"].as_str().map(str::to_owned)),
            tokens: Tokens {
                input: n("input"),
                output: n("output") + n("thoughts"),
                cache_read: n("cached"),
                cache_write: 0,
            },
        }
    }

    fn wiring(&self) -> &'static Wiring {
        &WIRING
    }

    /// Folder trust is on unless the person's settings turn it off; a folder is trusted in
    /// `~/.gemini/trustedFolders.json`.
    fn trust(&self, project: &std::path::Path, home: Option<&std::path::Path>) -> Trust {
        let Some((trusted, rules)) = super::host::folder_trust(home, ".gemini", true, project)
        else {
            return Trust::NotAsked;
        };
        match trusted {
            true => Trust::Trusted(format!("{} trusts the project", rules.display())),
            false => Trust::Untrusted {
                why: "Gemini CLI does not trust this folder: it ignores the project's \
                      .gemini/settings.json, anvil's hook included (headless, it refuses to run: \
                      exit 55)"
                    .into(),
                fix: format!(
                    "run `gemini` here and trust the folder, or add \"{}\": \"TRUST_FOLDER\" to \
                     {}; for one headless run, GEMINI_CLI_TRUST_WORKSPACE=true",
                    project.display(),
                    rules.display()
                ),
            },
        }
    }
}

/// The turn's last answer in the transcript: its last `gemini` record with text.
fn last_reply(stop: &Stop<'_>) -> Option<Value> {
    super::host::last_record(stop.transcript?, |r| {
        r["type"] == "gemini" && r["content"].as_str().is_some_and(|t| !t.trim().is_empty())
    })
}

/// A command of Gemini CLI's: TOML, `{{args}}` in its prompt where the person's text goes.
macro_rules! command {
    ($description:literal, $words:ident) => {
        concat!(
            "# anvil-managed\ndescription = \"",
            $description,
            "\"\nprompt = \"\"\"\n",
            crate::host_command_words!($words, "{{args}}"),
            "\"\"\"\n"
        )
    };
}

static WIRING: Wiring = Wiring {
    hook: Some(HOOK),
    plugin: None,
    command: Some((".gemini/commands/anvil.toml", COMMAND)),
    controls: &[
        (
            ".gemini/commands/anvil-steer.toml",
            command!(
                "Queue steering for the next phase of the running anvil debate",
                steer
            ),
        ),
        (
            ".gemini/commands/anvil-status.toml",
            command!("Show where anvil debates stand", status),
        ),
        (
            ".gemini/commands/anvil-cancel.toml",
            command!("Cancel the running anvil debate", cancel),
        ),
    ],
    // Its rules name the shell tool's command by prefix.
    allow: Some((
        &["tools", "allowed"],
        &[
            "run_shell_command(anvil start)",
            "run_shell_command(anvil steer)",
            "run_shell_command(anvil status)",
            "run_shell_command(anvil cancel)",
        ],
    )),
    mcp: Some(Mcp::Settings),
    memory_dir: ".gemini",
    mention: "/",
};

const HOOK: HookFile = HookFile {
    settings: ".gemini/settings.json",
    event: "AfterAgent",
    timeout: ("timeout", 1000),
    cap_setting: None,
    shape: Shape::CLAUDE,
};

/// `/anvil QUESTION [options]`: the model runs `anvil start` with what was typed and answers
/// the prompt it prints; the hook claims the debate for the session that saw it.
const COMMAND: &str = command!("Start an anvil debate on a question", start);

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn ran(stdout: &str, code: i32) -> Ran {
        Ran {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: stdout.to_owned(),
            stderr: String::new(),
            duration: std::time::Duration::ZERO,
        }
    }

    /// What Gemini CLI 0.61.0 printed for a turn whose model thought 8 tokens beside the 12 it
    /// wrote (the scripted server's `thoughtsTokenCount`): the thoughts count as output.
    #[test]
    fn a_streamed_turn_gives_its_session_model_and_tokens() {
        let played = Gemini
            .read(
                &ran(include_str!("testdata/gemini-0.61.0-stream.jsonl"), 0),
                None,
            )
            .unwrap();
        assert_eq!(played.session, "21111111-2222-4333-8444-555555555555");
        assert_eq!(played.model.as_deref(), Some("gemini-scripted"));
        assert_eq!(
            played.tokens,
            Tokens {
                input: 120,
                output: 20,
                cache_read: 20,
                cache_write: 0
            }
        );
    }

    /// A failed turn ends with a `result` whose status is `error`: its message is the agent's
    /// last words; output without a `result` (killed, or not Gemini CLI's) says nothing.
    #[test]
    fn a_failed_turn_gives_its_message() {
        let failed = concat!(
            r#"{"type":"init","session_id":"s1","model":"m1"}"#,
            "\n",
            r#"{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: fetch failed]"},"stats":{"models":{}}}"#,
            "\n"
        );
        assert_eq!(
            Gemini.read(&ran(failed, 1), None).unwrap_err(),
            "[API Error: fetch failed]"
        );
        let cut = r#"{"type":"message","role":"assistant","content":"Hel","delta":true}"#;
        assert_eq!(Gemini.read(&ran(cut, 1), None).unwrap_err(), "");
    }
}
