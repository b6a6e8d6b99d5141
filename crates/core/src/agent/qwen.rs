//! Qwen Code as a seat: `qwen -o stream-json --include-partial-messages --approval-mode plan`,
//! the prompt on stdin (piped, it runs one turn without a terminal), a session named with
//! `--session-id` and continued with `--resume ID`. Plan mode offers no tool that writes or
//! runs commands. Its output is JSON lines in Claude Code's shape: `system` (`init`:
//! `session_id`, `qwen_code_version`), each message's `stream_event`s as it is written (which
//! [`Agent::live`] reads while the turn runs), the turn's `assistant` messages (each with
//! `model` and `usage`) and `result` (`result`, `is_error`, `duration_ms`); the same events
//! as one array (`-o json`) are read too. The tokens are the assistant messages' own:
//! `result.usage` also counts Qwen Code's background memory requests.
//!
//! As a host: Claude-format hooks in `.qwen/settings.json` (project hooks load only in a
//! trusted folder, and folder trust is off unless the person turned it on). Its Stop input is
//! Claude Code's, `last_assistant_message` included; the hook's environment names the session
//! (`QWEN_CODE_SESSION_ID`), the version (`QWEN_CODE_STARTUP_VERSION`) and the model
//! (`QWEN_CODE_MODEL`). `decision: block` continues the turn with the reason as a user
//! message, which its transcript (`~/.qwen/projects/SLUG/chats/SESSION.jsonl`) does not keep;
//! each reply is an `assistant` record there with its `model` and `usageMetadata`. It drops
//! the block that brings its count of continuations in a row to its cap (8; `stopHookBlockingCap`
//! in its settings, `QWEN_CODE_STOP_HOOK_BLOCK_CAP` for one run): the install raises the
//! setting as it raises Claude Code's.

use serde_json::Value;

use super::host::{HookFile, Host, HostTurn, Mcp, Shape, Stop, Trust, Wiring};
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

    fn host(&self) -> Option<&'static dyn Host> {
        Some(&Qwen)
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

/// The variable that caps Qwen Code's continuations for one run.
const CAP_VAR: &str = "QWEN_CODE_STOP_HOOK_BLOCK_CAP";
/// The setting that caps them.
const CAP_SETTING: &str = "stopHookBlockingCap";

impl Host for Qwen {
    fn agent(&self) -> &'static dyn Agent {
        &Qwen
    }

    /// Its environment names the session that stops (an outer session's variable, inherited,
    /// names another).
    fn runs(&self, stop: &Stop<'_>, var: &dyn Fn(&str) -> Option<String>) -> bool {
        var("QWEN_CODE_SESSION_ID").is_some_and(|s| s.trim() == stop.session)
    }

    fn turn(&self, stop: &Stop<'_>, var: &dyn Fn(&str) -> Option<String>) -> HostTurn {
        let reply = stop
            .transcript
            .and_then(|path| super::host::last_record(path, |r| r["type"] == "assistant"));
        let reply = reply.as_ref();
        let text = |r: &Value, key: &str| r[key].as_str().map(str::to_owned);
        let usage = reply.map(|r| &r["usageMetadata"]);
        let n = |key: &str| usage.and_then(|u| u[key].as_u64()).unwrap_or(0);
        HostTurn {
            version: var("QWEN_CODE_STARTUP_VERSION")
                .or_else(|| reply.and_then(|r| text(r, "version"))),
            model: reply
                .and_then(|r| text(r, "model"))
                .or_else(|| var("QWEN_CODE_MODEL")),
            tokens: Tokens {
                input: n("promptTokenCount"),
                output: n("candidatesTokenCount") + n("thoughtsTokenCount"),
                cache_read: n("cachedContentTokenCount"),
                cache_write: 0,
            },
        }
    }

    fn block_cap(
        &self,
        project: &std::path::Path,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Option<u32> {
        let setting = || {
            let text = std::fs::read_to_string(project.join(HOOK.settings)).ok()?;
            serde_json::from_str::<Value>(&text).ok()?[CAP_SETTING].as_u64()
        };
        let cap = var(CAP_VAR)
            .and_then(|n| n.trim().parse::<u64>().ok())
            .or_else(setting)
            .unwrap_or(8);
        // The block that brings the count to the cap is the one dropped: a cap of N lets N - 1
        // continuations through.
        Some(u32::try_from(cap.saturating_sub(1)).unwrap_or(u32::MAX))
    }

    fn wiring(&self) -> &'static Wiring {
        &WIRING
    }

    /// Folder trust is off unless the person's settings turn it on; a folder is trusted in
    /// `~/.qwen/trustedFolders.json`.
    fn trust(&self, project: &std::path::Path, home: Option<&std::path::Path>) -> Trust {
        let Some((trusted, rules)) = super::host::folder_trust(home, ".qwen", false, project)
        else {
            return Trust::NotAsked;
        };
        match trusted {
            true => Trust::Trusted(format!("{} trusts the project", rules.display())),
            false => Trust::Untrusted {
                why: "Qwen Code does not trust this folder: it ignores the project's \
                      .qwen/settings.json, anvil's hook included"
                    .into(),
                fix: format!(
                    "run `qwen` here and trust the folder (`/permissions`), or add \"{}\": \
                     \"TRUST_FOLDER\" to {}",
                    project.display(),
                    rules.display()
                ),
            },
        }
    }

    /// A project's MCP server connects once the person approved it (`qwen mcp approve NAME`,
    /// kept per project in `~/.qwen/mcpApprovals.json`, bound to the server's entry).
    fn mcp_approval(&self, project: &std::path::Path, home: Option<&std::path::Path>) -> Trust {
        let Some(file) = home.map(|h| h.join(".qwen/mcpApprovals.json")) else {
            return Trust::NotAsked;
        };
        let approvals: Value = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let canonical = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_owned());
        let approved = [project, canonical.as_path()]
            .iter()
            .any(|p| approvals[p.to_string_lossy().as_ref()]["anvil"]["status"] == "approved");
        match approved {
            true => Trust::Trusted(format!("{} approves anvil's MCP server", file.display())),
            false => Trust::Untrusted {
                why: "Qwen Code has not approved the project's MCP server 'anvil': it does not \
                      connect it"
                    .into(),
                fix: "run `qwen mcp approve anvil` here".into(),
            },
        }
    }
}

/// A command of its: Markdown, `{{args}}` where the person's text goes.
macro_rules! command {
    ($description:literal, $words:ident) => {
        crate::host_markdown_command!($description, $words, "{{args}}")
    };
}

static WIRING: Wiring = Wiring {
    hook: Some(HOOK),
    plugin: None,
    command: Some((".qwen/commands/anvil.md", COMMAND)),
    controls: &[
        (
            ".qwen/commands/anvil-steer.md",
            command!(
                "Queue steering for the next phase of the running anvil debate",
                steer
            ),
        ),
        (
            ".qwen/commands/anvil-status.md",
            command!("Show where anvil debates stand", status),
        ),
        (
            ".qwen/commands/anvil-cancel.md",
            command!("Cancel the running anvil debate", cancel),
        ),
    ],
    // Its rules name the shell tool's command by prefix, `*` for any arguments.
    allow: Some((
        &["permissions", "allow"],
        &[
            "run_shell_command(anvil start *)",
            "run_shell_command(anvil steer *)",
            "run_shell_command(anvil status)",
            "run_shell_command(anvil cancel)",
            "run_shell_command(anvil cancel *)",
        ],
    )),
    mcp: Some(Mcp::Settings),
    memory_dir: ".qwen",
    mention: "/",
};

const HOOK: HookFile = HookFile {
    settings: ".qwen/settings.json",
    event: "Stop",
    timeout: ("timeout", 1),
    cap_setting: Some(CAP_SETTING),
    shape: Shape::CLAUDE,
};

/// `/anvil QUESTION [options]`: the model runs `anvil start` with what was typed and answers
/// the prompt it prints; the Stop hook claims the debate for the session that saw it.
const COMMAND: &str = command!("Start an anvil debate on a question", start);

/// The authentication Qwen Code's `settings.json` chooses (`openai`, `qwen-oauth`, …).
fn selected_auth() -> Option<String> {
    let settings = home_file(".qwen/settings.json")
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())?;
    settings["security"]["auth"]["selectedType"]
        .as_str()
        .map(str::to_owned)
}
