//! Gemini CLI as a seat: `gemini --output-format=json --approval-mode=plan --skip-trust`, the
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
//! Its JSON result is one object: `session_id`, `response` (the reply), `stats.models` (per
//! model: `tokens` with `prompt`, `candidates`, `cached`, `thoughts`); a failed turn prints
//! nothing there and says why on stderr. No cost is reported; the version comes from
//! `gemini --version`.
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
use super::{About, Agent, Played, Ran, Tokens, Turn, headless_args};

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
                "--output-format=json",
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

    fn host(&self) -> Option<&'static dyn Host> {
        Some(&Gemini)
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let json: Value = serde_json::from_str(ran.stdout.trim()).map_err(|_| String::new())?;
        if let Some(message) = json["error"]["message"].as_str() {
            return Err(message.to_owned());
        }
        let mut tokens = Tokens::default();
        let mut model = None;
        let mut most = 0;
        for (name, stats) in json["stats"]["models"].as_object().into_iter().flatten() {
            let t = &stats["tokens"];
            let n = |key: &str| t[key].as_u64().unwrap_or(0);
            // `prompt` counts the cached part too, as the OpenAI agents' input does.
            tokens.input += n("prompt");
            tokens.cache_read += n("cached");
            tokens.output += n("candidates") + n("thoughts");
            // The model that wrote the most answered; another may have done side work.
            if n("candidates") >= most {
                most = n("candidates");
                model = Some(name.clone());
            }
        }
        Ok(Played {
            agent: &Gemini,
            text: json["response"].as_str().unwrap_or_default().to_owned(),
            session: json["session_id"]
                .as_str()
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
