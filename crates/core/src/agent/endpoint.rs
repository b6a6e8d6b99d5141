//! A model behind an OpenAI-compatible endpoint, with no agent CLI: anvil plays the seat's
//! turn itself. The presets (`openai`, `openrouter`, `ollama`, `lmstudio`) are one small file
//! each beside the CLIs', and `[agents.NAME]` in `.anvil/config.toml` names any other endpoint
//! (vLLM, llama.cpp's server, a company gateway) or moves a preset's base URL or key.
//!
//! **How a turn runs.** The runner treats an endpoint like any agent: [`Endpoint::program`] is
//! anvil's own `anvil` binary, run as `anvil endpoint-turn --base-url=… --model=… …` with the
//! prompt on stdin ([`TURN_WORD`]). That subcommand sends one Chat Completions request
//! (streamed where the server streams), prints an [`Answer`] as JSON, and keeps the
//! conversation (the seat's own earlier turns, which a resumed turn sends again) in a session
//! file of its own, as an agent CLI keeps its sessions. The HTTP client (and TLS) live in the
//! `anvil` binary only: the Stop hook hands an endpoint seat to `anvil` as it hands a CLI seat
//! to its agent, so the hook's binary links nothing new. How the hook finds `anvil`:
//! [`anvil_program`]. A seat on an endpoint has no tools: it argues from the prompt and the
//! material alone.
//!
//! **Whose key goes where.** A committed `.anvil/config.toml` (and a record pulled from a
//! remote) is another person's input, so neither may send a key the person holds for one
//! service to a host the person did not choose. A key is read from the one variable its
//! endpoint names ([`Endpoint::key_env`]), never from a file anvil writes, never recorded, and
//! sent only to that endpoint (no redirect is followed). The variable must be one of:
//! - the endpoint's own, `ANVIL_<NAME>_API_KEY`, which a person sets for anvil's endpoint of
//!   that name and nothing else;
//! - a provider's own variable ([`PROVIDER_KEYS`]: `OPENAI_API_KEY`, `OPENROUTER_API_KEY`,
//!   `ANTHROPIC_API_KEY`, …) at that provider's host, over https.
//!
//! So `[agents.openrouter] base_url = "https://elsewhere/v1"` keeps no key (it must name
//! `ANVIL_OPENROUTER_API_KEY`), and `api_key_env = "ANTHROPIC_API_KEY"` is refused for any
//! host but Anthropic's. A key is never sent over plain http but to this machine
//! (loopback). A base URL with a user or password in it is refused: the key has its variable.
//! The endpoint a seat uses (name, base URL, key variable, model) is fixed in the debate's
//! setup when it starts, and the notice that starts it names where each endpoint seat's turns
//! go.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::{About, Agent, Played, Ran, Tokens, Turn};
use crate::record::usage::Usd;

/// The word of the hidden subcommand that plays an endpoint's turn: `anvil endpoint-turn`.
pub const TURN_WORD: &str = "endpoint-turn";

/// What a seat on an endpoint may do.
pub(super) const ALLOWED: &str =
    "no tools: it argues from the prompt and the material; anvil sends one request per turn";

/// What an endpoint's turn is given of the environment beside what every seat is, for people.
pub(super) const ENV_MORE: &str = "the one variable its key is read from (`api_key_env`)";

/// Provider variables, and the one host each key is ever sent to.
pub const PROVIDER_KEYS: &[(&str, &str)] = &[
    ("OPENAI_API_KEY", "api.openai.com"),
    ("OPENROUTER_API_KEY", "openrouter.ai"),
    ("ANTHROPIC_API_KEY", "api.anthropic.com"),
    ("GEMINI_API_KEY", "generativelanguage.googleapis.com"),
    ("GOOGLE_API_KEY", "generativelanguage.googleapis.com"),
    ("GROQ_API_KEY", "api.groq.com"),
    ("MISTRAL_API_KEY", "api.mistral.ai"),
    ("DEEPSEEK_API_KEY", "api.deepseek.com"),
    ("XAI_API_KEY", "api.x.ai"),
    ("TOGETHER_API_KEY", "api.together.xyz"),
    ("FIREWORKS_API_KEY", "api.fireworks.ai"),
];

/// An OpenAI-compatible endpoint that can take a seat: a preset, or one named in the config.
#[derive(Debug)]
pub struct Endpoint {
    about: &'static About,
    base_url: Cow<'static, str>,
    key_env: Option<Cow<'static, str>>,
    /// The model a seat that names none gets (`[agents.NAME] model`).
    model: Option<Cow<'static, str>>,
    /// How to get it going, for people (`start it with `ollama serve``).
    hint: &'static str,
}

/// Two endpoints are the same when they have the same name and send to the same place.
impl PartialEq for Endpoint {
    fn eq(&self, other: &Self) -> bool {
        self.about.name == other.about.name
            && self.base_url == other.base_url
            && self.key_env == other.key_env
            && self.model == other.model
    }
}

impl Eq for Endpoint {}

/// `[agents.NAME]` in `.anvil/config.toml`: an endpoint of that name, or a preset's base URL,
/// key variable or default model moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Def {
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub model: Option<String>,
}

/// `[agents]`: every `[agents.NAME]` of the config, by name.
pub type Defs = BTreeMap<String, Def>;

impl Endpoint {
    /// A preset: its facts, its default base URL and the variable its key is read from.
    pub(super) const fn preset(
        about: &'static About,
        base_url: &'static str,
        key_env: Option<&'static str>,
        hint: &'static str,
    ) -> Endpoint {
        Endpoint {
            about,
            base_url: Cow::Borrowed(base_url),
            key_env: match key_env {
                Some(k) => Some(Cow::Borrowed(k)),
                None => None,
            },
            model: None,
            hint,
        }
    }

    /// Where its turns go: the base URL of its Chat Completions API (`…/v1`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The variable its API key is read from, when it takes one.
    pub fn key_env(&self) -> Option<&str> {
        self.key_env.as_deref()
    }

    /// The model a seat gets when it names none.
    pub fn default_model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// How to get it going, for people.
    pub fn hint(&self) -> &str {
        self.hint
    }

    /// Is it a preset as built in, untouched by a config?
    pub fn is_preset(&self) -> bool {
        presets().any(|p| std::ptr::eq(p, self))
    }

    /// Its definition, as a config or a setup writes it.
    pub fn def(&self) -> Def {
        Def {
            base_url: Some(self.base_url.clone().into_owned()),
            api_key_env: self.key_env.as_ref().map(|k| k.clone().into_owned()),
            model: self.model.as_ref().map(|m| m.clone().into_owned()),
        }
    }

    /// Where a seat's turns go, for the notice that starts a debate: `http://…/v1 with the
    /// key in $VAR`.
    pub fn describe(&self) -> String {
        match &self.key_env {
            Some(var) => format!("{} with the key in ${var}", self.base_url),
            None => format!("{} with no key", self.base_url),
        }
    }
}

/// The presets among the agents.
fn presets() -> impl Iterator<Item = &'static Endpoint> {
    super::AGENTS.iter().filter_map(|a| a.endpoint())
}

/// The endpoint `name` of a seat: a preset (with what `defs` moves of it), or one `defs`
/// names; `None` when it is neither (a CLI agent's name, or unknown). `Err` when its
/// definition is refused (see the module's doc).
pub fn resolve(name: &str, defs: &Defs) -> Result<Option<&'static Endpoint>, String> {
    let preset = presets().find(|p| p.about.name == name);
    match (preset, defs.get(name)) {
        (Some(preset), None) => Ok(Some(preset)),
        (preset, Some(def)) => define(name, def, preset).map(Some),
        (None, None) => Ok(None),
    }
}

/// The endpoint `name` as `def` says (on top of `preset`'s facts, when it is one), checked
/// and kept for the rest of the process.
pub fn define(
    name: &str,
    def: &Def,
    preset: Option<&'static Endpoint>,
) -> Result<&'static Endpoint, String> {
    check_name(name)?;
    let base_url = def
        .base_url
        .as_deref()
        .or(preset.map(Endpoint::base_url))
        .ok_or_else(|| {
            format!("[agents.{name}] has no `base_url` (the URL of its Chat Completions API, e.g. http://127.0.0.1:8000/v1)")
        })?;
    let url = Url::parse(base_url).map_err(|why| format!("[agents.{name}] base_url: {why}"))?;
    // A preset's own variable goes with its own URL only: moving the URL drops it.
    let key_env = match (&def.api_key_env, preset) {
        (Some(var), _) => Some(var.clone()),
        (None, Some(p)) if def.base_url.is_none() || url_eq(base_url, p.base_url()) => {
            p.key_env().map(str::to_owned)
        }
        (None, Some(p)) => {
            if let Some(var) = p.key_env() {
                return Err(format!(
                    "[agents.{name}] moves the base URL to {base_url}, where ${var} is not sent: \
                     name the key's variable, api_key_env = \"{}\" (set it to the key for \
                     that endpoint), or api_key_env = \"\" for none",
                    own_key_env(name)
                ));
            }
            None
        }
        (None, None) => None,
    }
    .filter(|v| !v.is_empty());
    if let Some(var) = &key_env {
        check_key_env(name, var, &url)?;
    }
    if let Some(model) = &def.model {
        super::argv::check_model(model).map_err(|why| format!("[agents.{name}] model: {why}"))?;
    }
    let endpoint = Endpoint {
        about: match preset {
            Some(p) => p.about,
            None => named_about(name),
        },
        base_url: Cow::Owned(base_url.trim_end_matches('/').to_owned()),
        key_env: key_env.map(Cow::Owned),
        model: def
            .model
            .clone()
            .or_else(|| preset.and_then(|p| p.model.as_ref().map(|m| m.to_string())))
            .map(Cow::Owned),
        hint: preset.map_or("", |p| p.hint),
    };
    if let Some(p) = preset.filter(|p| **p == endpoint) {
        return Ok(p);
    }
    Ok(intern(endpoint))
}

/// The variable a named endpoint's key is read from unless it names a provider's own:
/// `ANVIL_<NAME>_API_KEY`.
pub fn own_key_env(name: &str) -> String {
    format!(
        "ANVIL_{}_API_KEY",
        name.to_uppercase().replace(['-', '.'], "_")
    )
}

/// An endpoint's name: letters, digits, `-` and `_`, not a CLI agent's.
fn check_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && name.len() <= 40
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !plain {
        return Err(format!(
            "[agents.{}]: an endpoint's name is lower-case letters, digits, - and _, starting with a letter",
            name.escape_debug()
        ));
    }
    if let Some(cli) = super::AGENTS
        .iter()
        .find(|a| a.name() == name && a.endpoint().is_none())
    {
        return Err(format!(
            "[agents.{name}]: `{name}` is {}, an agent CLI that runs as you configured it; an \
             endpoint needs a name of its own",
            cli.title()
        ));
    }
    Ok(())
}

/// Refuses a key variable that a config may not point at this endpoint (see the module's
/// doc).
fn check_key_env(name: &str, var: &str, url: &Url) -> Result<(), String> {
    let own = own_key_env(name);
    if !url.https && !url.loopback {
        return Err(format!(
            "[agents.{name}]: a key is sent over https, or over http to this machine only; \
             {} would carry ${var} in clear",
            url.text
        ));
    }
    if var == own {
        return Ok(());
    }
    match PROVIDER_KEYS.iter().find(|(v, _)| *v == var) {
        Some((_, host)) if url.https && url.host.eq_ignore_ascii_case(host) => Ok(()),
        Some((_, host)) => Err(format!(
            "[agents.{name}]: ${var} is sent to {host} only, not to {}; for this endpoint set \
             its own variable, api_key_env = \"{own}\"",
            url.host
        )),
        None => Err(format!(
            "[agents.{name}]: api_key_env = \"{}\" is not this endpoint's variable; anvil \
             reads a key from ${own} (set for this endpoint alone), or from a provider's own \
             variable at that provider's URL ({})",
            var.escape_debug(),
            PROVIDER_KEYS
                .iter()
                .map(|(v, _)| *v)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The facts of an endpoint named in the config, kept for the rest of the process.
fn named_about(name: &str) -> &'static About {
    static SEEN: Mutex<Vec<&'static About>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(about) = seen.iter().find(|a| a.name == name) {
        return about;
    }
    let about: &'static About = Box::leak(Box::new(About {
        name: Box::leak(name.to_owned().into_boxed_str()),
        title: "OpenAI-compatible endpoint",
        allowed: ALLOWED,
        env: &[],
        env_more: ENV_MORE,
    }));
    seen.push(about);
    about
}

/// The endpoints defined by a config in this process, each kept once ([`intern`]).
static DEFINED: Mutex<Vec<&'static Endpoint>> = Mutex::new(Vec::new());

/// The one `'static` copy of `endpoint`: an agent is `&'static dyn Agent`, and a config
/// names its endpoints once per process (the few definitions a process meets are kept).
fn intern(endpoint: Endpoint) -> &'static Endpoint {
    let mut defined = DEFINED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = defined.iter().find(|e| ***e == endpoint) {
        return found;
    }
    let kept: &'static Endpoint = Box::leak(Box::new(endpoint));
    defined.push(kept);
    kept
}

impl Endpoint {
    /// This endpoint as an agent of the process: the preset itself, or its kept definition.
    fn as_agent(&self) -> &'static dyn Agent {
        let defined = DEFINED.lock().unwrap_or_else(|e| e.into_inner());
        presets()
            .chain(defined.iter().copied())
            .find(|e| std::ptr::eq(*e, self))
            .or_else(|| defined.iter().copied().find(|e| *e == self))
            .map_or(&UNKNOWN, |e| e as &'static dyn Agent)
    }
}

/// What [`Endpoint::as_agent`] answers for an endpoint that is neither a preset nor kept
/// (never, since every endpoint is made by [`define`] or is a preset).
static UNKNOWN: Endpoint = Endpoint::preset(
    &About {
        name: "endpoint",
        title: "an OpenAI-compatible endpoint",
        allowed: ALLOWED,
        env: &[],
        env_more: ENV_MORE,
    },
    "http://127.0.0.1/v1",
    None,
    "",
);

/// Do two base URLs name the same API (a trailing `/` aside)?
fn url_eq(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// What the checks need of a base URL.
struct Url {
    text: String,
    https: bool,
    host: String,
    loopback: bool,
}

impl Url {
    fn parse(text: &str) -> Result<Url, String> {
        let shown = text.escape_debug().to_string();
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| format!("`{shown}` is not an http or https URL"))?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            _ => return Err(format!("`{shown}` is not an http or https URL")),
        };
        if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(format!("`{shown}` holds spaces or control characters"));
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            // Shown without what comes before the `@`: the user and password are not echoed.
            let after = &rest[authority.rfind('@').map_or(0, |at| at + 1)..];
            return Err(format!(
                "`{scheme}://…@{}` holds a user or password: a key goes in the variable named by api_key_env, never in the URL",
                after.escape_debug()
            ));
        }
        if rest.contains(['?', '#']) {
            return Err(format!(
                "`{shown}` has a query or fragment; give the API's base URL (…/v1)"
            ));
        }
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default().to_owned(),
            None => authority.split(':').next().unwrap_or_default().to_owned(),
        };
        if host.is_empty() {
            return Err(format!("`{shown}` names no host"));
        }
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        Ok(Url {
            text: text.to_owned(),
            https,
            host,
            loopback,
        })
    }
}

/// What `anvil endpoint-turn` prints: the turn's reply and usage, or what went wrong.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The reply's text; empty on failure.
    #[serde(default)]
    pub text: String,
    /// The model the endpoint says answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cached_tokens: u64,
    /// The price in dollars, where the endpoint reports one (OpenRouter's `usage.cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The conversation, to resume with the seat's next turn.
    #[serde(default)]
    pub session: String,
    /// anvil's version, which played it.
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub duration_ms: u64,
    /// What went wrong, in the endpoint's own words (cleaned of credentials, control
    /// characters shown as escapes); the reply is then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Agent for Endpoint {
    fn about(&self) -> &'static About {
        self.about
    }

    /// `$ANVIL_BIN`, else anvil's own program ([`anvil_program`]).
    fn bin_var(&self) -> String {
        "ANVIL_BIN".to_owned()
    }

    fn program(&self) -> PathBuf {
        anvil_program()
    }

    fn endpoint(&self) -> Option<&Endpoint> {
        Some(self)
    }

    /// The variable its key is read from, and no other: `anvil endpoint-turn` reads that one
    /// (see [`super::env`] for why it passes even as one of anvil's own, `ANVIL_<NAME>_API_KEY`).
    fn env(&self, _model: Option<&str>) -> Vec<String> {
        self.key_env.iter().map(|v| v.to_string()).collect()
    }

    fn missing(&self, program: &str, reason: &str) -> String {
        format!(
            "{}'s turns are played by anvil's own `anvil` program, which is not here: cannot \
             run `{program}` ({reason}); it is looked for beside the running program, beside \
             the npm package's launcher and on PATH: install anvil-debate so that `anvil` is \
             on PATH, or name it in ${}",
            self.about.name,
            self.bin_var()
        )
    }

    fn args(&self, turn: &Turn<'_>, session: Option<&str>) -> Vec<String> {
        let mut args = vec![
            TURN_WORD.to_owned(),
            format!("--name={}", self.about.name),
            format!("--base-url={}", self.base_url),
            format!("--timeout={}", turn.timeout.as_secs().max(1)),
        ];
        if let Some(var) = &self.key_env {
            args.push(format!("--key-env={var}"));
        }
        if let Some(model) = turn.model.or(self.model.as_deref()) {
            args.push(format!("--model={model}"));
        }
        match (turn.resume, session) {
            (Some(id), _) => args.push(format!("--resume={id}")),
            (None, Some(id)) => args.push(format!("--session-id={id}")),
            (None, None) => {}
        }
        args
    }

    fn read(&self, ran: &Ran, session: Option<&str>) -> Result<Played, String> {
        let answer: Answer = serde_json::from_str(ran.stdout.trim()).map_err(|_| String::new())?;
        if let Some(error) = answer.error {
            return Err(error);
        }
        Ok(Played {
            agent: self.as_agent(),
            text: answer.text,
            session: if answer.session.is_empty() {
                session.unwrap_or_default().to_owned()
            } else {
                answer.session
            },
            agent_version: (!answer.version.is_empty()).then_some(answer.version),
            model: answer.model,
            tokens: Tokens {
                input: answer.input_tokens,
                output: answer.output_tokens,
                cache_read: answer.cached_tokens,
                cache_write: 0,
            },
            cost: answer.cost_usd.and_then(Usd::from_f64),
            duration_ms: answer.duration_ms,
        })
    }

    fn signed_in(&self) -> Result<String, String> {
        match &self.key_env {
            None => Ok("no key needed".to_owned()),
            Some(var) if std::env::var_os(var.as_ref()).is_some_and(|v| !v.is_empty()) => {
                Ok(format!("${var} is set"))
            }
            Some(var) => Err(format!("${var} is not set")),
        }
    }
}

/// The `anvil` program that plays an endpoint's turn, wherever anvil was installed from:
/// - `$ANVIL_BIN`, when set;
/// - this process, when it is `anvil` (`anvil run`, `anvil seats --try`);
/// - `anvil` beside this process: `anvil-hook` and `anvil` are installed side by side
///   (`cargo install`, the npm package's `bin/` once its native programs are in place, its
///   platform package, the plugin's `bin/`);
/// - `anvil` beside the npm launcher that started this process (`$ANVIL_NPM_LAUNCHER`: the
///   package's `bin/` while it holds node launchers);
/// - `anvil` on `PATH`.
///
/// Found nowhere, it is plain `anvil`, which the runner fails to start: the seat fails with
/// [`Agent::install_hint`], like an agent CLI that is not installed.
pub fn anvil_program() -> PathBuf {
    if let Some(bin) = std::env::var_os("ANVIL_BIN").filter(|v| !v.is_empty()) {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().ok();
    if let Some(exe) = &exe
        && exe.file_stem().is_some_and(|s| s == "anvil")
    {
        return exe.clone();
    }
    let beside = |p: &std::path::Path| p.parent().map(|dir| dir.join("anvil"));
    let launcher = std::env::var_os("ANVIL_NPM_LAUNCHER").map(PathBuf::from);
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("anvil"));
    exe.as_deref()
        .and_then(beside)
        .into_iter()
        .chain(launcher.as_deref().and_then(beside))
        .chain(on_path)
        .find(|p| is_program(p))
        .unwrap_or_else(|| PathBuf::from("anvil"))
}

/// A file this user may run.
fn is_program(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(base_url: Option<&str>, key: Option<&str>) -> Def {
        Def {
            base_url: base_url.map(str::to_owned),
            api_key_env: key.map(str::to_owned),
            model: None,
        }
    }

    #[test]
    fn a_preset_is_found_by_name_and_moved_by_the_config() {
        let none = Defs::new();
        let ollama = resolve("ollama", &none).unwrap().unwrap();
        assert!(ollama.is_preset());
        assert_eq!(ollama.base_url(), "http://127.0.0.1:11434/v1");
        assert_eq!(resolve("codex", &none).unwrap(), None);
        assert_eq!(resolve("mygw", &none).unwrap(), None);
        let mut moved = Defs::new();
        moved.insert("ollama".into(), def(Some("http://127.0.0.1:9/v1/"), None));
        let ollama = resolve("ollama", &moved).unwrap().unwrap();
        assert!(!ollama.is_preset());
        assert_eq!(
            (ollama.base_url(), ollama.key_env()),
            ("http://127.0.0.1:9/v1", None)
        );
        // The same definition twice is one endpoint.
        assert!(std::ptr::eq(
            ollama,
            resolve("ollama", &moved).unwrap().unwrap()
        ));
    }

    #[test]
    fn a_key_goes_only_where_its_variable_is_for() {
        let refused = |name: &str, d: Def| {
            let mut defs = Defs::new();
            defs.insert(name.into(), d);
            resolve(name, &defs).unwrap_err()
        };
        let taken = |name: &str, d: Def| {
            let mut defs = Defs::new();
            defs.insert(name.into(), d);
            resolve(name, &defs)
                .unwrap()
                .unwrap()
                .key_env()
                .map(str::to_owned)
        };
        // A preset's URL moved elsewhere drops its provider's key.
        let e = refused(
            "openrouter",
            def(Some("https://elsewhere.example/v1"), None),
        );
        assert!(e.contains("ANVIL_OPENROUTER_API_KEY"), "{e}");
        // Another provider's variable for a host that is not that provider's.
        let e = refused(
            "mygw",
            def(Some("https://gw.example/v1"), Some("ANTHROPIC_API_KEY")),
        );
        assert!(e.contains("sent to api.anthropic.com only"), "{e}");
        let e = refused(
            "mygw",
            def(Some("https://gw.example/v1"), Some("AWS_SECRET_ACCESS_KEY")),
        );
        assert!(e.contains("ANVIL_MYGW_API_KEY"), "{e}");
        // Over plain http to another machine.
        let e = refused(
            "mygw",
            def(Some("http://gw.example/v1"), Some("ANVIL_MYGW_API_KEY")),
        );
        assert!(e.contains("in clear"), "{e}");
        // A password in the URL.
        let e = refused("mygw", def(Some("https://me:hunter2@gw.example/v1"), None));
        assert!(
            e.contains("user or password") && !e.contains("hunter2"),
            "{e}"
        );
        // What is taken: the endpoint's own variable, a provider's at its host, none.
        assert_eq!(
            taken(
                "mygw",
                def(Some("https://gw.example/v1"), Some("ANVIL_MYGW_API_KEY"))
            ),
            Some("ANVIL_MYGW_API_KEY".into())
        );
        assert_eq!(
            taken(
                "groq",
                def(Some("https://api.groq.com/openai/v1"), Some("GROQ_API_KEY"))
            ),
            Some("GROQ_API_KEY".into())
        );
        assert_eq!(
            taken("vllm", def(Some("http://10.0.0.5:8000/v1"), None)),
            None
        );
        assert_eq!(
            taken(
                "openrouter",
                def(Some("http://127.0.0.1:9/api/v1"), Some(""))
            ),
            None
        );
        // A named endpoint needs a URL, and a name of its own.
        assert!(refused("mygw", def(None, None)).contains("no `base_url`"));
        assert!(refused("codex", def(Some("http://127.0.0.1:1/v1"), None)).contains("Codex CLI"));
    }

    #[test]
    fn a_turn_is_anvils_own_command_line_without_the_prompt() {
        let ollama = resolve("ollama", &Defs::new()).unwrap().unwrap();
        let turn = Turn {
            cwd: std::path::Path::new("/tmp"),
            prompt: "--not-an-option and a long prompt",
            resume: None,
            model: Some("llama3.1:8b"),
            timeout: std::time::Duration::from_secs(30),
            role: "critic",
            guard: None,
            pass_env: &[],
            watch: None,
        };
        let args = ollama.args(&turn, Some("0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"));
        assert_eq!(
            args,
            [
                "endpoint-turn",
                "--name=ollama",
                "--base-url=http://127.0.0.1:11434/v1",
                "--timeout=30",
                "--model=llama3.1:8b",
                "--session-id=0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
            ]
        );
    }
}
