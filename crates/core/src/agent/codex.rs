//! Codex CLI as a seat: `codex exec --json --sandbox read-only -- -`, continued with `codex
//! exec resume --json -c sandbox_mode="read-only" -- THREAD -` (`exec resume` has no
//! `--sandbox`); `-` reads the prompt from stdin. Codex names the session itself (`thread.started` in its JSON events). The
//! reply is the turn's last `agent_message`; version, model and tokens come from its rollout
//! file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-THREAD.jsonl`: `session_meta.cli_version`,
//! `turn_context.model`, `token_usage_record` per response). `turn.completed`'s usage is the
//! fallback: after a resume it counts the whole thread, not the turn.
//!
//! As a host: a Stop hook in Claude Code's shape in `.codex/hooks.json` (or `[[hooks.Stop]]`
//! in `config.toml`). Codex skips a hook nobody trusted, silently: trust is a hash per hook
//! under `[hooks.state."KEY"]` of `$CODEX_HOME/config.toml` (`--dangerously-bypass-hook-trust`
//! for one run). Its Stop input has `turn_id` (only Codex's does), `model`,
//! `last_assistant_message` and the rollout as `transcript_path`. `decision: block` continues
//! with the reason as a new user message (wrapped in `<hook_prompt>`); there is no cap.
//!
//! Its commands are skills in the open agent-skills form, which Codex reads from the
//! project's `.agents/skills/NAME/SKILL.md` (listed to its model by name and description):
//! `anvil`, and `anvil-steer`, `anvil-status`, `anvil-cancel` beside it. A person names one as
//! `$anvil …`: the prompt reaches the model as typed, followed by the skill's words as a user
//! message of their own (`<skill><name>anvil</name><path>…</path>…</skill>`). Codex runs a
//! command in a login shell (`bash -lc`), so `anvil` must be on the `PATH` the person's
//! profile sets.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::host::{HookFile, Host, HostTurn, Mcp, Shape, Stop, Trust, Wiring};
use super::ready::set_among;
use super::{About, Agent, Live, Played, Ran, Tokens, Turn, agent_home, jsonl};

pub(super) struct Codex;

impl Agent for Codex {
    fn about(&self) -> &'static About {
        &About {
            name: "codex",
            title: "Codex CLI",
            allowed: "`--sandbox read-only`: commands run, nothing written",
            env: &[
                "CODEX_*",
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
                "OPENAI_ORGANIZATION",
                "OPENAI_PROJECT",
            ],
            env_more: "the variable each model provider of its `config.toml` names in `env_key`",
        }
    }

    fn signed_in(&self) -> Result<String, String> {
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
            .or_else(|| set_among(&["OPENAI_API_KEY", "CODEX_API_KEY"]))
            .ok_or_else(|| "no sign-in found: run `codex login`, or set $OPENAI_API_KEY".to_owned())
    }

    fn names_sessions(&self) -> bool {
        false
    }

    fn args(&self, turn: &Turn<'_>, _session: Option<&str>) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into()];
        if turn.resume.is_some() {
            args.push("resume".into());
        }
        args.extend(["--json".into(), "--skip-git-repo-check".into()]);
        if turn.resume.is_some() {
            args.extend(["-c".into(), "sandbox_mode=\"read-only\"".into()]);
        } else {
            args.push("--sandbox=read-only".into());
        }
        if let Some(model) = turn.model {
            args.push(format!("--model={model}"));
        }
        args.push("--".into());
        if let Some(id) = turn.resume {
            args.push(id.to_owned());
        }
        args.push("-".into());
        args
    }

    fn env(&self, _model: Option<&str>) -> Vec<String> {
        let config = agent_home("CODEX_HOME", ".codex")
            .and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok())
            .unwrap_or_default();
        // `env_key = "NAME"` of each `[model_providers.X]`.
        let keys = config.lines().filter_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == "env_key").then(|| value.trim().trim_matches('"').to_owned())
        });
        self.about()
            .env
            .iter()
            .map(|v| (*v).to_owned())
            .chain(keys.filter(|k| super::env::check_pattern(k).is_ok() && !k.ends_with('*')))
            .collect()
    }

    fn live(&self, line: &str) -> Option<Live> {
        let event: Value = serde_json::from_str(line.trim()).ok()?;
        (event["type"] == "item.completed" && event["item"]["type"] == "agent_message")
            .then(|| event["item"]["text"].as_str())
            .flatten()
            .map(|text| Live::Text(text.to_owned()))
    }

    fn host(&self) -> Option<&'static dyn Host> {
        Some(&Codex)
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let events: Vec<Value> = jsonl(&ran.stdout).collect();
        let failure = events.iter().rev().find_map(|e| match e["type"].as_str() {
            Some("turn.failed") => e["error"]["message"].as_str(),
            Some("error") => e["message"].as_str(),
            _ => None,
        });
        if let Some(message) = failure {
            return Err(message.to_owned());
        }
        let thread = events
            .iter()
            .find(|e| e["type"] == "thread.started")
            .and_then(|e| e["thread_id"].as_str())
            .or(session)
            .unwrap_or_default()
            .to_owned();
        let text = events
            .iter()
            .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
            .filter_map(|e| e["item"]["text"].as_str())
            .next_back()
            .unwrap_or_default()
            .to_owned();
        let fallback = events
            .iter()
            .rev()
            .find(|e| e["type"] == "turn.completed")
            .map(|e| tokens(&e["usage"]))
            .unwrap_or_default();
        let rollout = find_rollout(&thread).map(|p| read_rollout(&p));
        let (version, model, tokens) = match rollout {
            Some(r) => (r.version, r.model, r.tokens.unwrap_or(fallback)),
            None => (None, None, fallback),
        };
        Ok(Played {
            agent: &Codex,
            text,
            session: thread,
            agent_version: version,
            model,
            tokens,
            cost: None,
            duration_ms: 0,
        })
    }
}

impl Host for Codex {
    fn agent(&self) -> &'static dyn Agent {
        &Codex
    }

    /// Only Codex's stop names its turn.
    fn runs(&self, stop: &Stop<'_>, _var: &dyn Fn(&str) -> Option<String>) -> bool {
        stop.turn_id.is_some()
    }

    fn turn(&self, stop: &Stop<'_>, _var: &dyn Fn(&str) -> Option<String>) -> HostTurn {
        let rollout = stop.transcript.map(read_rollout);
        let rollout = rollout.as_ref();
        HostTurn {
            version: rollout.and_then(|r| r.version.clone()),
            model: rollout
                .and_then(|r| r.model.clone())
                .or_else(|| stop.model.map(str::to_owned)),
            tokens: rollout.and_then(|r| r.tokens).unwrap_or_default(),
        }
    }

    fn wiring(&self) -> &'static Wiring {
        &WIRING
    }

    /// Two trusts, both in `$CODEX_HOME/config.toml`: the project's (`[projects."PATH"]
    /// trust_level = "trusted"`, without which Codex loads nothing of its `.codex/`), and the
    /// hook's (a `trusted_hash` under `[hooks.state."KEY"]`, whose key names the hooks file).
    fn trust(&self, project: &Path, home: Option<&Path>) -> Trust {
        let Some(codex_home) = super::host::agent_dir("CODEX_HOME", ".codex", home) else {
            return Trust::NotAsked;
        };
        let config_path = codex_home.join("config.toml");
        let config: toml::Table = std::fs::read_to_string(&config_path)
            .ok()
            .and_then(|t| toml::from_str(&t).ok())
            .unwrap_or_default();
        let project = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_owned());
        let project_trusted = project.ancestors().any(|dir| {
            config
                .get("projects")
                .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
                .and_then(|p| p.get("trust_level"))
                .and_then(toml::Value::as_str)
                == Some("trusted")
        });
        if !project_trusted {
            return Trust::Untrusted {
                why: "Codex does not trust this project: it loads nothing of its .codex/, \
                      anvil's hook included"
                    .into(),
                fix: format!(
                    "run `codex` here and trust the project, or add [projects.\"{}\"] \
                     trust_level = \"trusted\" to {}",
                    project.display(),
                    config_path.display()
                ),
            };
        }
        let hooks = project.join(HOOK.settings);
        let hooks = hooks.to_string_lossy();
        let hook_trusted = config
            .get("hooks")
            .and_then(|h| h.get("state"))
            .and_then(toml::Value::as_table)
            .into_iter()
            .flatten()
            .any(|(key, state)| {
                key.contains(hooks.as_ref()) && state.get("trusted_hash").is_some()
            });
        if hook_trusted {
            Trust::Trusted(format!(
                "{} trusts the project and its hooks",
                config_path.display()
            ))
        } else {
            Trust::Untrusted {
                why: "Codex skips a hook nobody trusted, silently: anvil's hook in \
                      .codex/hooks.json has not been trusted"
                    .into(),
                fix: "run `codex` here and trust the new hook when it asks you to review it; \
                      for one headless run, `codex exec --dangerously-bypass-hook-trust`"
                    .into(),
            }
        }
    }
}

/// `$anvil`, `$anvil-steer`, `$anvil-status`, `$anvil-cancel`: skills of the project's, in
/// the folder Codex reads them from.
const SKILLS: super::host::Skills = crate::host_skills!(".agents/skills", "$");

static WIRING: Wiring = Wiring {
    hook: Some(HOOK),
    plugin: None,
    command: Some(SKILLS.0),
    controls: SKILLS.1,
    allow: None,
    mcp: Some(Mcp::Toml(".codex/config.toml")),
    memory_dir: ".codex",
    mention: "$",
};

const HOOK: HookFile = HookFile {
    settings: ".codex/hooks.json",
    event: "Stop",
    timeout: ("timeout", 1),
    cap_setting: None,
    shape: Shape::CLAUDE,
};

fn tokens(usage: &Value) -> Tokens {
    let n = |key: &str| usage[key].as_u64().unwrap_or(0);
    Tokens {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_read: n("cached_input_tokens"),
        cache_write: n("cache_write_input_tokens"),
    }
}

/// The rollout file of `thread`, looked for in the newest day folders first.
fn find_rollout(thread: &str) -> Option<PathBuf> {
    if thread.is_empty() {
        return None;
    }
    let sessions = agent_home("CODEX_HOME", ".codex")?.join("sessions");
    let suffix = format!("-{thread}.jsonl");
    let newest_first = |dir: &Path| -> Vec<PathBuf> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        entries.reverse();
        entries
    };
    let mut days_seen = 0;
    for year in newest_first(&sessions) {
        for month in newest_first(&year) {
            for day in newest_first(&month) {
                if let Some(found) = newest_first(&day)
                    .into_iter()
                    .find(|f| f.to_string_lossy().ends_with(&suffix))
                {
                    return Some(found);
                }
                days_seen += 1;
                // A turn is recorded the day it ran; a resumed thread keeps its first file.
                if days_seen > 31 {
                    return None;
                }
            }
        }
    }
    None
}

struct Rollout {
    version: Option<String>,
    model: Option<String>,
    /// The last turn's tokens, summed over its responses.
    tokens: Option<Tokens>,
}

/// What a rollout says of its last turn, read from its first line (`session_meta`, the
/// version) and its last megabyte (the turn's context and usage): a stop's cost does not grow
/// with the session.
fn read_rollout(path: &Path) -> Rollout {
    let first = || {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(std::fs::File::open(path).ok()?)
            .read_line(&mut line)
            .ok()?;
        serde_json::from_str::<Value>(&line).ok()
    };
    let lines = super::host::tail_records(path);
    let version = first()
        .into_iter()
        .chain(lines.iter().cloned())
        .find(|l| l["type"] == "session_meta")
        .and_then(|l| l["payload"]["cli_version"].as_str().map(str::to_owned));
    let context = lines.iter().rev().find(|l| l["type"] == "turn_context");
    let model = context
        .and_then(|l| l["payload"]["model"].as_str())
        .map(str::to_owned);
    let turn = context.and_then(|l| l["payload"]["turn_id"].as_str());
    let records: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "token_usage_record")
        .filter(|l| turn.is_none() || l["payload"]["turn_id"].as_str() == turn)
        .collect();
    let tokens = (!records.is_empty()).then(|| {
        records.iter().fold(Tokens::default(), |mut sum, l| {
            let t = tokens(&l["payload"]["usage"]);
            sum.input += t.input;
            sum.output += t.output;
            sum.cache_read += t.cache_read;
            sum.cache_write += t.cache_write;
            sum
        })
    });
    Rollout {
        version,
        model,
        tokens,
    }
}
