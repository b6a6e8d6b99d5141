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

use serde_json::Value;

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
