//! `.anvil/config.toml`: a project's defaults for every debate option, so a team can say once
//! "our debates are 2-round ADRs with a security focus". Flags override them (see
//! [`crate::model::options::Options::with_config`]).
//!
//! The file is strict: an unknown key is an error naming it, not a silently ignored typo. Each
//! debate option reads its own key ([`crate::model::options::defs`]); the tables below are the
//! settings of anvil itself. `anvil start`/`anvil run` read the debate options; the `[gc]`
//! table is read by the automatic maintenance (see [`crate::record::maintenance`]), which the
//! Stop hook looks at only after a synthesis.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::home::Home;
use crate::model::options::{Options, defs};
pub use crate::model::seats::Fallback;
use crate::record::maintenance::Limits;

/// Everything the file holds; all optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// The debate options' defaults, each read by its definition from its key.
    pub defaults: Options,
    /// When the record is packed automatically (`[gc]`).
    pub gc: Option<Gc>,
    /// Signals in Claude Code's terminal (`[notify]`).
    pub notify: Option<Notify>,
    /// What is done with credentials found in what is recorded (`[secrets]`).
    pub secrets: Option<Secrets>,
    /// Who plays each role by default, and how seats run (`[seats]`).
    pub seats: Option<SeatsTable>,
    /// Endpoints a seat can name (`[agents.NAME]`), or a preset moved: see
    /// [`crate::agent::endpoint`].
    pub agents: crate::agent::endpoint::Defs,
}

/// `[seats]`: `ROLE = "AGENT[:MODEL]"` for any role or voice, plus how seats run. A
/// `--seat` for the same role wins over its line here.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SeatsTable {
    /// `fallback = "host"`: the host plays a seat that failed (recorded as such).
    pub fallback: Option<Fallback>,
    /// Seconds a seat's turn may take before it is stopped (default 600; 1 to
    /// [`crate::agent::MAX_TIMEOUT_SECS`]).
    #[serde(default, deserialize_with = "timeout_secs")]
    pub timeout: Option<u64>,
    pub independent: Option<bool>,
    pub budget_tokens: Option<u64>,
    pub budget_usd: Option<f64>,
    /// `env = ["NAME", "PREFIX_*"]`: variables passed to every seat beside those its agent
    /// reads (see [`crate::agent::env`]); never the host session's or anvil's own.
    #[serde(default, deserialize_with = "env_names")]
    pub env: Vec<String>,
    /// Every other key is a role or a voice, and its seat, `AGENT[:MODEL]` (checked against
    /// the agents and the file's `[agents]` once the file is read).
    #[serde(flatten)]
    pub roles: std::collections::BTreeMap<String, String>,
}

impl Eq for SeatsTable {}

/// `[seats] timeout`: seconds, at least 1 and at most a day.
fn timeout_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let secs = u64::deserialize(d)?;
    if !(1..=crate::agent::MAX_TIMEOUT_SECS).contains(&secs) {
        return Err(serde::de::Error::custom(format!(
            "{secs} seconds: a seat's timeout is from 1 to {} (a day)",
            crate::agent::MAX_TIMEOUT_SECS
        )));
    }
    Ok(Some(secs))
}

/// `[seats] env`: names of variables, or prefixes ending in `*`.
fn env_names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    for name in &names {
        crate::agent::env::check_pattern(name).map_err(serde::de::Error::custom)?;
    }
    Ok(names)
}

impl Config {
    /// How long a seat's turn may take: `$ANVIL_SEAT_TIMEOUT` (seconds), else `[seats]
    /// timeout`, else [`crate::agent::DEFAULT_TIMEOUT`]; at most a day
    /// ([`crate::agent::MAX_TIMEOUT_SECS`]) whatever the variable says.
    pub fn seat_timeout(&self) -> std::time::Duration {
        std::env::var("ANVIL_SEAT_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .filter(|secs| *secs > 0)
            .map(|secs| secs.min(crate::agent::MAX_TIMEOUT_SECS))
            .or_else(|| self.seats.as_ref().and_then(|s| s.timeout))
            .map_or(
                crate::agent::DEFAULT_TIMEOUT,
                std::time::Duration::from_secs,
            )
    }

    /// What `[seats] env` passes to every seat.
    pub fn seat_env(&self) -> &[String] {
        self.seats.as_ref().map_or(&[], |s| &s.env)
    }

    /// Does `[seats] fallback = "host"` let the host play a seat that failed?
    pub fn seat_fallback(&self) -> bool {
        self.seats.as_ref().and_then(|s| s.fallback) == Some(Fallback::Host)
    }

    /// Does `[secrets] redact = false` keep credentials in texts as they are?
    pub fn keeps_credentials(&self) -> bool {
        self.secrets.and_then(|s| s.redact) == Some(false)
    }
}

impl Options {
    /// Fills every option the flags left unset from the config; flags win.
    pub fn with_config(mut self, config: &Config) -> Options {
        self.agents = config.agents.clone();
        // A protocol named on the command line outranks the config's keys; one named in the
        // config is filled in after them, so that the file's own keys win over its preset.
        let given = self.protocol.is_some();
        if given {
            self = self.with_protocol();
        }
        for def in defs::ALL {
            if let Some(key) = &def.key
                && (key.fill)(&mut self, &config.defaults)
            {
                self.from_config.insert(key.name);
            }
        }
        // Seats: the `[seats]` table's for every role the command line left without one,
        // and how seats run (its keys live in that table, beside the roles).
        if let Some(table) = &config.seats {
            let given: Vec<String> = self
                .seats
                .iter()
                .filter_map(|s| s.split_once('=').map(|(r, _)| r.trim().to_lowercase()))
                .collect();
            for (role, seat) in &table.roles {
                if !given.contains(&role.trim().to_lowercase()) {
                    self.seats.push(format!("{role}={seat}"));
                    self.from_config.insert("seats");
                }
            }
            if self.independent.is_none() && table.independent.is_some() {
                self.independent = table.independent;
                self.from_config.insert("seats.independent");
            }
            if self.budget_tokens.is_none() && table.budget_tokens.is_some() {
                self.budget_tokens = table.budget_tokens;
                self.from_config.insert("seats.budget_tokens");
            }
            if self.budget_usd.is_none()
                && let Some(usd) = table.budget_usd
            {
                self.budget_usd = Some(format!("{usd}"));
                self.from_config.insert("seats.budget_usd");
            }
            if self.fallback.is_none() && table.fallback.is_some() {
                self.fallback = table.fallback;
                self.from_config.insert("seats.fallback");
            }
        }
        self
    }
}

/// The project's config, read the first time something asks for it and kept for the rest of
/// one command or one run of the hook: every step of the run sees the same file, read once,
/// and a run that needs none of it (a stop in a session without a debate) reads nothing.
/// Clones share what was read.
#[derive(Debug, Clone)]
pub struct Lazy {
    home: Home,
    read: std::sync::Arc<std::sync::OnceLock<Option<Config>>>,
}

impl Lazy {
    /// The config of the project whose home is `home`, not read yet.
    pub fn new(home: &Home) -> Lazy {
        Lazy {
            home: home.clone(),
            read: std::sync::Arc::default(),
        }
    }

    /// The config of `home`'s project, read already (by a command that reports a bad file
    /// itself).
    pub fn read(home: &Home, config: Config) -> Lazy {
        Lazy {
            home: home.clone(),
            read: std::sync::Arc::new(std::sync::OnceLock::from(Some(config))),
        }
    }

    /// Has the file been read?
    pub fn is_read(&self) -> bool {
        self.read.get().is_some()
    }

    /// The config; `None` when the file cannot be read or is not valid, and each reader then
    /// goes by its own default (the hook never fails over a config file).
    pub fn get(&self) -> Option<&Config> {
        self.read
            .get_or_init(|| Config::load(&self.home).ok())
            .as_ref()
    }
}

/// The tables of the file: anvil's own settings, beside the debate options' keys.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Tables {
    gc: Option<Gc>,
    notify: Option<Notify>,
    secrets: Option<Secrets>,
    seats: Option<SeatsTable>,
    #[serde(default)]
    agents: crate::agent::endpoint::Defs,
}

const TABLES: [&str; 5] = ["gc", "notify", "secrets", "seats", "agents"];

/// `[secrets]`: credentials found in a phase, steering, an answer or a context file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Secrets {
    /// Replace each with `[redacted: KIND]` before it is recorded (the default); `false`
    /// records them as they are (`anvil push` still refuses to send them).
    pub redact: Option<bool>,
}

/// `[notify]`: what the Stop hook shows in the terminal of the session that runs a debate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Notify {
    /// The debate's progress in the title and the progress bar, and a desktop notification
    /// when it waits for the person or ends (`terminalSequence`); `false` turns them off.
    pub terminal: Option<bool>,
}

/// `[gc]`: when commands and the Stop hook start the record's maintenance in the background,
/// as git's `gc.auto` and `gc.autoPackLimit` do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gc {
    /// Loose objects above which maintenance starts (estimated from one fan-out folder, as
    /// git does); 0 turns the automatic maintenance off.
    pub auto: Option<usize>,
    /// Packs above which maintenance starts; 0: the number of packs is not looked at.
    pub auto_pack_limit: Option<usize>,
    /// Debates whose refs are loose (written since the last maintenance) above which
    /// maintenance starts; 0: not looked at.
    pub auto_loose_debates: Option<usize>,
}

impl Gc {
    /// When maintenance is due under this table: git's defaults for what it leaves out.
    pub(crate) fn limits(&self) -> Limits {
        let default = Limits::default();
        Limits {
            loose_objects: self.auto.unwrap_or(default.loose_objects),
            packs: self.auto_pack_limit.unwrap_or(default.packs),
            loose_debates: self.auto_loose_debates.unwrap_or(default.loose_debates),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl Config {
    /// When the record's maintenance is due in this project (`[gc]`, or git's defaults).
    pub fn gc_limits(&self) -> Limits {
        self.gc.unwrap_or_default().limits()
    }

    /// The config of the project whose home is `home`; empty when there is no file.
    pub fn load(home: &Home) -> Result<Config, ConfigError> {
        let path = home.config_path();
        match crate::fsutil::read_optional(&path) {
            Ok(None) => Ok(Config::default()),
            Ok(Some(text)) => Config::parse(&text, &path),
            Err(source) => Err(ConfigError::Read { path, source }),
        }
    }

    /// Parses the file's text; `path` only names the file in errors. Each key of a debate
    /// option is read by its definition, the tables by serde; either way an error names the
    /// key and its line.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let invalid = |message: &str, span: Option<Range<usize>>| ConfigError::Invalid {
            path: path.to_owned(),
            message: describe(message, span, text),
        };
        let toml_error = |e: toml::de::Error| invalid(e.message(), e.span());
        let document = toml::de::DeTable::parse(text).map_err(toml_error)?;
        let span = document.span();
        let mut defaults = Options::default();
        let mut tables = toml::de::DeTable::new();
        for (key, value) in document.into_inner() {
            if let Some(option) = defs::by_key(key.get_ref()) {
                let read = option.key.as_ref().map(|k| k.read);
                if let Some(read) = read {
                    read(&mut defaults, value.into()).map_err(toml_error)?;
                }
            } else if TABLES.contains(&key.get_ref().as_ref()) {
                tables.insert(key, value);
            } else {
                let e = <toml::de::Error as serde::de::Error>::unknown_field(key.get_ref(), keys());
                return Err(invalid(e.message(), Some(key.span())));
            }
        }
        let tables = Tables::deserialize(toml::de::Deserializer::from(toml::Spanned::new(
            span, tables,
        )))
        .map_err(toml_error)?;
        // Each endpoint as it would be used, and each seat against the agents and them.
        for name in tables.agents.keys() {
            crate::agent::endpoint::resolve(name, &tables.agents)
                .map_err(|why| invalid(&why, None))?;
        }
        for (role, seat) in tables.seats.iter().flat_map(|s| &s.roles) {
            crate::model::seats::Seat::parse_with(seat, &tables.agents)
                .map_err(|why| invalid(&format!("[seats] {role}: {why}"), None))?;
        }
        Ok(Config {
            defaults,
            gc: tables.gc,
            notify: tables.notify,
            secrets: tables.secrets,
            seats: tables.seats,
            agents: tables.agents,
        })
    }
}

/// Every key the file may hold at its top level: the debate options', then the tables.
fn keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| crate::model::options::config_keys().chain(TABLES).collect())
}

/// toml's message, with the key at fault named even when the message itself does not.
fn describe(message: &str, span: Option<Range<usize>>, text: &str) -> String {
    let message = message.trim().to_owned();
    let Some(span) = span else {
        return message;
    };
    let line_no = text[..span.start.min(text.len())].matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
    let key = line.split('=').next().unwrap_or("").trim();
    if !key.is_empty() && line.contains('=') && !message.contains(key) {
        format!("line {line_no}: key `{key}`: {message}")
    } else {
        format!("line {line_no}: {message}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::state::Mode;

    /// The hook's config: nothing read until a step asks, then read once for the whole run
    /// and shared by every step (a clone sees the same read); a bad file reads as none.
    #[test]
    fn a_lazy_config_is_read_when_first_asked_then_once_for_all_its_clones() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let config = Lazy::new(&home);
        let step = config.clone();
        assert!(!config.is_read());
        std::fs::write(home.config_path(), "[notify]\nterminal = false\n").unwrap();
        let terminal = |c: &Lazy| c.get().and_then(|c| c.notify).and_then(|n| n.terminal);
        assert_eq!(terminal(&step), Some(false));
        assert!(config.is_read());
        std::fs::write(home.config_path(), "[notify\n").unwrap();
        assert_eq!(terminal(&config), Some(false), "read once per run");
        assert_eq!(Lazy::new(&home).get(), None, "a bad file reads as none");
    }

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, Path::new(".anvil/config.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn every_key_parses() {
        let c = parse(
            r#"
mode = "philosopher"
rounds = 2
position = "yes"
stakeholders = ["Ops", "Legal"]
personas = ["startup-cfo", "end-user"]
interactive = true
framework = "adr"
focus = "security"
research = true
converge = true
autonomy = 3
output = "decision.md"
output_dir = "docs/debates"
context = ["src/"]
diff = true
recall = false

[gc]
auto = 0
auto_pack_limit = 10
auto_loose_debates = 20
"#,
        )
        .unwrap();
        let d = &c.defaults;
        assert_eq!(d.mode, Some(Mode::Philosopher));
        assert_eq!(d.rounds, Some(2));
        assert_eq!(d.position.as_deref(), Some("yes"));
        assert_eq!(d.stakeholders.as_deref(), Some("Ops,Legal"));
        assert_eq!(d.personas, ["startup-cfo", "end-user"]);
        assert_eq!(d.interactive, Some(true));
        assert_eq!(d.framework.as_deref(), Some("adr"));
        assert_eq!(d.focus.as_deref(), Some("security"));
        assert_eq!(d.research, Some(true));
        assert_eq!(d.converge, Some(true));
        assert_eq!(d.autonomy, Some(3));
        assert_eq!(d.output, Some(PathBuf::from("decision.md")));
        assert_eq!(d.output_dir, Some(PathBuf::from("docs/debates")));
        assert_eq!(d.context, ["src/"]);
        assert_eq!(d.diff, Some(true));
        assert_eq!(d.recall, Some(false));
        assert_eq!(
            c.gc,
            Some(Gc {
                auto: Some(0),
                auto_pack_limit: Some(10),
                auto_loose_debates: Some(20),
            })
        );
    }

    #[test]
    fn unknown_key_is_named() {
        let err = parse("rounds = 2\nrouns = 3\n").unwrap_err();
        assert!(err.contains("rouns"), "{err}");
        assert!(err.contains(".anvil/config.toml"), "{err}");
        assert!(
            err.starts_with(
                ".anvil/config.toml: line 2: unknown field `rouns`, expected one of `mode`, \
                 `rounds`,"
            ),
            "{err}"
        );
        assert!(
            err.ends_with("`output_dir`, `gc`, `notify`, `secrets`, `seats`, `agents`"),
            "{err}"
        );
        let err = parse("[gc]\nautp = 3\n").unwrap_err();
        assert_eq!(
            err,
            ".anvil/config.toml: line 2: unknown field `autp`, expected one of `auto`, \
             `auto_pack_limit`, `auto_loose_debates`"
        );
    }

    #[test]
    fn bad_value_names_the_key() {
        for (text, key) in [
            ("rounds = \"many\"\n", "rounds"),
            ("mode = \"shouty\"\n", "mode"),
            ("interactive = 3\n", "interactive"),
            ("autonomy = -1\n", "autonomy"),
            ("stakeholders = \"Ops\"\n", "stakeholders"),
            ("output_dir = 1\n", "output_dir"),
            ("recall = \"no\"\n", "recall"),
            ("rounds = 2\n[notify]\nterminal = 1\n", "terminal"),
        ] {
            let err = parse(text).unwrap_err();
            let line = text.lines().count();
            assert!(err.contains(key), "{text}: {err}");
            assert!(err.contains(&format!("line {line}")), "{text}: {err}");
        }
    }

    #[test]
    fn gc_limits_come_from_the_gc_table_with_gits_defaults() {
        assert_eq!(Config::default().gc_limits(), Limits::default());
        let config = parse("[gc]\nauto = 0\nauto_loose_debates = 7\n").unwrap();
        assert_eq!(
            config.gc_limits(),
            Limits {
                loose_objects: 0,
                packs: crate::record::maintenance::AUTO_PACKS,
                loose_debates: 7,
            }
        );
    }

    #[test]
    fn the_seats_table_names_roles_and_how_seats_run() {
        let config = parse(
            "[seats]\ncritic = \"codex:gpt-5.4\"\n\"Product/UX\" = \"qwen\"\nfallback = \"host\"\ntimeout = 30\nbudget_usd = 0.5\n",
        )
        .unwrap();
        let seats = config.seats.unwrap();
        assert_eq!(seats.fallback, Some(Fallback::Host));
        assert_eq!(seats.timeout, Some(30));
        assert_eq!(seats.roles["critic"], "codex:gpt-5.4");
        assert_eq!(seats.roles["Product/UX"], "qwen");
        // A timeout no person meant is refused where it is read, not added up until it
        // overflows.
        for bad in ["0", "18446744073709551615", "86401"] {
            let err = parse(&format!("[seats]\ntimeout = {bad}\n")).unwrap_err();
            assert!(err.contains("from 1 to 86400"), "{err}");
        }
        assert_eq!(
            parse("[seats]\ntimeout = 86400\n").unwrap().seat_timeout(),
            std::time::Duration::from_secs(86_400)
        );
        let err = parse("[seats]\ncritic = \"bard\"\n").unwrap_err();
        assert!(err.contains("unknown agent `bard`"), "{err}");
        // The config's seats fill the roles the command line left open.
        let options = crate::model::options::Options {
            question: "Q?".into(),
            seats: vec!["critic=claude".into()],
            ..Default::default()
        }
        .with_config(&parse("[seats]\ncritic = \"codex\"\nsynthesizer = \"copilot\"\n").unwrap());
        let setup = options.into_setup().unwrap();
        let roles: Vec<String> = setup
            .seats
            .roles
            .iter()
            .map(|(r, s)| format!("{r}={s}"))
            .collect();
        assert_eq!(roles, ["critic=claude", "synthesizer=copilot"]);
    }
}
