//! Can an agent take a seat here: is it installed (its version), and does it look able to run
//! headless (signed in, or given a provider) — told from the agent's own files and the
//! environment, without sending a request anywhere.

use super::{Agent, SeatError, agent_home};

/// What `anvil seats` and `anvil doctor` say of one agent.
#[derive(Debug, Clone)]
pub struct Readiness {
    pub agent: Agent,
    pub program: String,
    /// Its version, or why it would not run.
    pub version: Result<String, SeatError>,
    /// How it would reach a model headless (`Ok`), or what seems to be missing (`Err`).
    pub headless: Result<String, String>,
}

impl Readiness {
    pub fn ready(&self) -> bool {
        self.version.is_ok() && self.headless.is_ok()
    }
}

/// Checks each agent, all at once.
pub fn check_all() -> Vec<Readiness> {
    let handles: Vec<_> = Agent::ALL
        .into_iter()
        .map(|agent| std::thread::spawn(move || check(agent)))
        .collect();
    handles
        .into_iter()
        .zip(Agent::ALL)
        .map(|(h, agent)| h.join().unwrap_or_else(|_| check(agent)))
        .collect()
}

pub fn check(agent: Agent) -> Readiness {
    Readiness {
        agent,
        program: agent.program().display().to_string(),
        version: agent.adapter().version(),
        headless: headless(agent),
    }
}

fn set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty())
}

fn home_file(rel: &str) -> Option<std::path::PathBuf> {
    let path = std::path::PathBuf::from(std::env::var_os("HOME")?).join(rel);
    path.exists().then_some(path)
}

fn headless(agent: Agent) -> Result<String, String> {
    let env_key = |vars: &[&str]| vars.iter().find(|v| set(v)).map(|v| format!("${v} is set"));
    match agent {
        Agent::Claude => env_key(&[
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
        .ok_or_else(|| "no sign-in found: run `claude` once and log in, or set $ANTHROPIC_API_KEY".to_owned()),
        Agent::Codex => {
            let home = agent_home("CODEX_HOME", ".codex");
            let config = home
                .as_ref()
                .and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok())
                .unwrap_or_default();
            let provider = config
                .lines()
                .find_map(|l| l.trim().strip_prefix("model_provider"))
                .and_then(|rest| rest.split('"').nth(1))
                .map(|p| format!("model provider `{p}` in its config.toml"));
            provider
                .or_else(|| {
                    home.filter(|h| h.join("auth.json").exists())
                        .map(|_| "signed in".to_owned())
                })
                .or_else(|| env_key(&["OPENAI_API_KEY", "CODEX_API_KEY"]))
                .ok_or_else(|| "no sign-in found: run `codex login`, or set $OPENAI_API_KEY".to_owned())
        }
        Agent::Copilot => env_key(&["COPILOT_PROVIDER_BASE_URL"])
            .map(|s| format!("its own model provider ({s})"))
            .or_else(|| env_key(&["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"]))
            .or_else(|| {
                let config = agent_home("COPILOT_HOME", ".copilot")?.join("config.json");
                let text = std::fs::read_to_string(config).ok()?;
                text.contains("logged_in_users")
                    .then(|| "signed in".to_owned())
            })
            .ok_or_else(|| {
                "no sign-in found: run `copilot login`, or set $COPILOT_GITHUB_TOKEN (or a provider with $COPILOT_PROVIDER_BASE_URL)".to_owned()
            }),
        Agent::Qwen => {
            let settings = home_file(".qwen/settings.json")
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
            settings
                .as_ref()
                .and_then(|s| s["security"]["auth"]["selectedType"].as_str())
                .map(|t| format!("authentication `{t}` in its settings.json"))
                .or_else(|| home_file(".qwen/oauth_creds.json").map(|_| "signed in".to_owned()))
                .ok_or_else(|| {
                    "no authentication chosen: run `qwen` once and pick one (its settings.json has none)".to_owned()
                })
        }
    }
}
