//! Debate options: one definition each, and their validation in one place.
//!
//! Every option of `anvil start` and `anvil run` is one [`OptionDef`] in [`defs`]: its flag and
//! the form that turns it off, its key in `.anvil/config.toml`, its words in `--help` and in
//! docs/options.md, and how a value given either way reaches [`Options`]. The command line
//! turns each definition into a clap argument (this crate links no argument parser, so the
//! hook does not either); [`crate::model::config`] reads the file's keys through them; a test
//! checks docs/options.md against them.
//!
//! [`Options::into_setup`] then checks what was given, one small validator per option plus the
//! few rules that tie options together, each with a message that says what to do, before
//! anything is written. A value that came from the config is named as its key there, so the
//! user knows which file to fix.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::PathBuf;

use crate::model::state::{Inputs, Mode, Rotation, Setup};

pub mod defs;
#[cfg(test)]
pub(crate) mod docs;
pub mod protocol;

/// Rounds of a debate when nothing says how many (the web room's form starts from it).
pub const DEFAULT_ROUNDS: u32 = 3;
/// The most rounds a debate may have.
pub const MAX_ROUNDS: u32 = 10;
pub(crate) const DEFAULT_STAKEHOLDERS: [&str; 3] =
    ["Engineering Team", "Product/UX", "Business/Management"];
/// Decision formats of the synthesis; each is `prompts/frameworks/NAME.md`.
pub(crate) const FRAMEWORKS: [&str; 5] = ["adr", "pre-mortem", "red-team", "rfc", "risks"];
/// Focus presets; each is `prompts/focus/NAME.md`. Any other text is a free-text focus.
pub(crate) const FOCUS_PRESETS: [&str; 5] = [
    "security",
    "performance",
    "developer-experience",
    "operational-cost",
    "maintainability",
];
/// Persona presets; each is `prompts/personas/NAME.md`. Any other text is a free-text persona.
pub(crate) const PERSONA_PRESETS: [&str; 4] = [
    "security-engineer",
    "startup-cfo",
    "junior-developer",
    "end-user",
];

/// The options of `anvil start` and `anvil run`, as given, before validation. The config's
/// defaults are an `Options` too (`Config::defaults`), filled in by `Options::with_config`
/// (model/config.rs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    pub question: String,
    pub mode: Option<Mode>,
    pub rounds: Option<u32>,
    pub position: Option<String>,
    /// `Some` when `--stakeholders` was given (possibly empty: the default voices).
    pub stakeholders: Option<String>,
    pub personas: Vec<String>,
    /// A switch is `None` until the command line or the config sets it; `Some(false)` from
    /// `--no-interactive` keeps the config from turning it on.
    pub interactive: Option<bool>,
    pub framework: Option<String>,
    pub focus: Option<String>,
    /// `--converge`: go to the synthesis once positions stop moving.
    pub converge: Option<bool>,
    /// `--vote`: a blind vote of the debating seats before the synthesis.
    pub vote: Option<bool>,
    /// `--triage`: every seat answers first, blind; agreement goes to the synthesis.
    pub triage: Option<bool>,
    /// `--all-draft`: every seat drafts in every round, blind within the round.
    pub all_draft: Option<bool>,
    /// `--protocol NAME`: a preset of the options above (`protocol::PROTOCOLS`), by name.
    pub protocol: Option<String>,
    /// `--triage-threshold`: as given (a share of one, or a percentage).
    pub triage_threshold: Option<String>,
    /// `--context` paths, as given (relative to `cwd`).
    pub context: Vec<String>,
    pub diff: Option<bool>,
    /// `--pr N`: a pull request of the project's remote.
    pub pr: Option<u32>,
    pub follow_up: Option<String>,
    /// `--versus A B`: exactly two when given.
    pub versus: Vec<String>,
    pub research: Option<bool>,
    pub autonomy: Option<u8>,
    pub output: Option<PathBuf>,
    /// The directory reports go to, as `<debate>.md`, unless an output is given (config only).
    pub output_dir: Option<PathBuf>,
    /// Give the debaters the earlier conclusions related to the question (on unless turned off).
    pub recall: Option<bool>,
    /// `--seat ROLE=AGENT[:MODEL]`, as given, then the `[seats]` table's for the other roles.
    pub seats: Vec<String>,
    /// `--independent`: round 1's openings drafted blind, in parallel.
    pub independent: Option<bool>,
    /// `--budget-tokens N`.
    pub budget_tokens: Option<u64>,
    /// `--budget-usd X`.
    pub budget_usd: Option<String>,
    /// `--fallback host`: the host plays a seat that failed.
    pub fallback: Option<crate::model::seats::Fallback>,
    /// Where relative `--context` paths are found.
    pub cwd: PathBuf,
    /// Options whose value came from `.anvil/config.toml`, by config key.
    pub from_config: BTreeSet<&'static str>,
    /// The endpoints the config names or moves (`[agents]`), which a seat may name.
    pub agents: crate::agent::endpoint::Defs,
}

/// One option: everything anvil says and does about it, whichever way it is given.
#[derive(Debug)]
pub struct OptionDef {
    /// How it is typed on the command line; `None` for a key of the config file only.
    pub flag: Option<Flag>,
    /// Its key in `.anvil/config.toml`; `None` for an option of the command line only.
    pub key: Option<Key>,
    /// Its row in docs/options.md.
    pub doc: Doc,
}

/// An option on the command line.
#[derive(Debug)]
pub struct Flag {
    /// The long name, without `--`.
    pub long: &'static str,
    pub short: Option<char>,
    pub takes: Takes,
    /// The words of `--help`: paragraphs apart by a blank line, the first also `-h`'s line;
    /// `{agents}` stands for the agents that can take a seat (see [`Flag::words`]).
    pub help: &'static str,
    /// Shown under the words in `--help`, after "Example: ".
    pub example: Option<&'static str>,
    /// The form that turns a switch off, even when the config turned it on.
    pub negation: Option<Negation>,
    /// Stores what the command line gave.
    pub given: fn(&mut Options, Given) -> Result<(), String>,
    /// `anvil run --line` takes it too: it says how a line is played, not what the debate is.
    pub with_line: bool,
    /// Where `--help` lists it.
    pub heading: Heading,
}

/// The groups `--help` lists the options in, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heading {
    /// How the debate goes: its mode, rounds, voices, pauses, lens, synthesis.
    Debate,
    /// What it is about: code, changes, earlier results.
    Material,
    /// Who plays, and what it may spend.
    Seats,
    /// Where the report goes.
    Report,
}

impl Heading {
    pub fn title(self) -> &'static str {
        match self {
            Heading::Debate => "How the debate goes",
            Heading::Material => "What it is about",
            Heading::Seats => "Seats and budget",
            Heading::Report => "The report",
        }
    }
}

impl Flag {
    /// The words of `--help`, with the list of agents ([`crate::agent::AGENTS`]) where
    /// `{agents}` stands: written once, so a new agent reaches every flag that names them.
    pub fn words(&self) -> std::borrow::Cow<'static, str> {
        if self.help.contains("{protocols}") {
            self.help
                .replace("{protocols}", &protocol::Protocol::lines())
                .into()
        } else if self.help.contains("{agents}") {
            self.help.replace("{agents}", &crate::agent::names()).into()
        } else {
            self.help.into()
        }
    }
}

/// `--no-…`: turns a switch off.
#[derive(Debug)]
pub struct Negation {
    pub long: &'static str,
    pub help: &'static str,
}

/// What a flag takes after it.
#[derive(Debug, Clone, Copy)]
pub enum Takes {
    /// Nothing: a switch (`--interactive`).
    Switch,
    /// One value (`--rounds N`); given twice, the last one counts.
    One(Value),
    /// One value or none (`--stakeholders [LIST]`); none is the empty text.
    OneOrNone(Value),
    /// One value, and the flag may be repeated (`--persona A --persona B`).
    Each(Value),
    /// Two values at once (`--versus A B`).
    Two { names: [&'static str; 2], ty: Ty },
}

/// A value on the command line: its name in `--help` and its type.
#[derive(Debug, Clone, Copy)]
pub struct Value {
    pub name: &'static str,
    pub ty: Ty,
}

/// The type of a value, which the command line checks as it parses (its error names the
/// flag) and completes (a path completes as a file).
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Text,
    Path,
    U8,
    U32,
    U64,
    F64,
    /// Text this function accepts; its error is the message.
    Checked(fn(&str) -> Result<(), String>),
}

/// An option's key in `.anvil/config.toml`.
#[derive(Debug)]
pub struct Key {
    pub name: &'static str,
    /// A value, as TOML, for the example file in docs/options.md, and a note beside it.
    pub example: &'static str,
    pub note: &'static str,
    /// Stores the file's value in the config's defaults; a value of the wrong type is an
    /// error (which the config names with its key and line).
    pub read: fn(&mut Options, toml::de::ValueDeserializer<'_>) -> Result<(), toml::de::Error>,
    /// Takes the config's default where the command line gave nothing; says whether it did.
    pub fill: fn(&mut Options, &Options) -> bool,
}

/// An option's row in docs/options.md.
#[derive(Debug)]
pub struct Doc {
    /// Its value as the table shows it (`N`, `adr\|pre-mortem\|…`); empty for a switch.
    pub shows: &'static str,
    /// What it does (markdown).
    pub what: &'static str,
    /// A whole command that uses it.
    pub example: &'static str,
}

/// What the command line gave for one option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Given {
    /// The switch itself.
    On,
    /// Its `--no-…` form.
    Off,
    /// The values, in the order given.
    Values(Vec<OsString>),
}

impl Given {
    pub fn is_on(&self) -> bool {
        matches!(self, Given::On)
    }

    /// Every value, as text.
    pub fn texts(self) -> Result<Vec<String>, String> {
        match self {
            Given::Values(values) => values
                .into_iter()
                .map(|v| {
                    v.into_string()
                        .map_err(|v| format!("{} is not valid UTF-8", v.to_string_lossy()))
                })
                .collect(),
            Given::On | Given::Off => Err("a value is missing".to_owned()),
        }
    }

    /// The last value, as text.
    pub fn text(self) -> Result<String, String> {
        self.texts()?
            .pop()
            .ok_or_else(|| "a value is missing".to_owned())
    }

    /// The last value, as a path (any bytes).
    pub fn path(self) -> Result<PathBuf, String> {
        match self {
            Given::Values(mut values) => values
                .pop()
                .map(PathBuf::from)
                .ok_or_else(|| "a value is missing".to_owned()),
            Given::On | Given::Off => Err("a value is missing".to_owned()),
        }
    }

    /// The last value, as a number.
    pub fn number<T>(self) -> Result<T, String>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        self.text()?.parse().map_err(|e: T::Err| e.to_string())
    }
}

impl OptionDef {
    /// The name the user gave this option by, in a message: its flag, or its config key when
    /// the value came from the config.
    fn named(&self, options: &Options) -> String {
        match (&self.key, &self.flag) {
            (Some(key), _) if options.from_config.contains(key.name) => {
                format!("`{}` in .anvil/config.toml", key.name)
            }
            (_, Some(flag)) => format!("--{}", flag.long),
            (Some(key), None) => format!("`{}` in .anvil/config.toml", key.name),
            (None, None) => String::new(),
        }
    }
}

/// The option whose flag is `--LONG` (`true`) or whose negation is (`false`).
fn flag_named(long: &str) -> Option<(&'static Flag, bool)> {
    defs::ALL
        .iter()
        .filter_map(|d| d.flag.as_ref())
        .find_map(|f| {
            if f.long == long {
                Some((f, true))
            } else if f.negation.as_ref().is_some_and(|n| n.long == long) {
                Some((f, false))
            } else {
                None
            }
        })
}

/// Every key of `.anvil/config.toml` that holds a debate option, in the order of [`defs::ALL`].
pub fn config_keys() -> impl Iterator<Item = &'static str> {
    defs::ALL
        .iter()
        .filter_map(|def| def.key.as_ref().map(|k| k.name))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OptionsError {
    pub message: String,
}

fn invalid<T>(message: impl Into<String>) -> Result<T, OptionsError> {
    Err(OptionsError {
        message: message.into(),
    })
}

/// `Security`, ` security ` and `operational cost` name presets too.
fn preset<'a>(text: &str, presets: &[&'a str]) -> Option<&'a str> {
    let key = text.trim().to_lowercase().replace([' ', '_'], "-");
    presets.iter().copied().find(|p| *p == key)
}

impl Options {
    /// Fills what the command line (and, when `filled` says so, the config) left unset from
    /// the protocol named (`--protocol`), through each option's own definition: a flag given
    /// beside a preset wins. An unknown protocol is left for [`Options::into_setup`] to refuse.
    pub fn with_protocol(mut self) -> Options {
        let preset = self
            .protocol
            .as_deref()
            .and_then(|name| protocol::protocol(name).ok())
            .and_then(|p| p.options().ok());
        if let Some(preset) = preset {
            for def in defs::ALL {
                if let Some(key) = &def.key {
                    (key.fill)(&mut self, &preset);
                }
            }
        }
        self
    }

    pub fn into_setup(self) -> Result<Setup, OptionsError> {
        let protocol = match &self.protocol {
            Some(name) => Some(
                protocol::protocol(name)
                    .map_err(|e| OptionsError {
                        message: format!("{}: {e}", defs::PROTOCOL.named(&self)),
                    })?
                    .name
                    .to_owned(),
            ),
            None => None,
        };
        let this = self.with_protocol();
        this.setup(protocol)
    }

    fn setup(self, protocol: Option<String>) -> Result<Setup, OptionsError> {
        self.check_versus()?;
        self.check_follow_up()?;
        let question = self.question()?;
        let (rotation, voices) = self.rotation()?;
        let mode = self.mode(rotation)?;
        let rounds = self.rounds(rotation, &voices)?;
        let autonomy = self.autonomy()?;
        let framework = self.framework()?;
        let focus = self.focus()?;
        let context = self.context()?;
        let seats = self.seats(&voices)?;
        let triage = self.triage_threshold()?;
        Ok(Setup {
            question,
            mode,
            rounds,
            position: self
                .position
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty()),
            voices,
            rotation,
            interactive: self.interactive == Some(true),
            framework,
            focus,
            research: self.research == Some(true),
            converge: self.converge == Some(true),
            vote: self.vote == Some(true),
            triage: self.triage == Some(true),
            all_draft: self.all_draft == Some(true),
            protocol,
            triage_threshold: triage.filter(|t| *t != crate::model::positions::TRIAGE_THRESHOLD),
            autonomy,
            output: self.output,
            seats,
            inputs: Inputs {
                context,
                diff: self.diff == Some(true),
                pr: self.pr,
                follow_up: self.follow_up.map(|f| f.trim().to_owned()),
                versus: self.versus.iter().map(|v| v.trim().to_owned()).collect(),
                // Filled in by the command line, which holds the search index.
                recalled: Vec::new(),
            },
        })
    }

    /// `--triage-threshold`: a share of one (`0.85`, `85%`); the default when not given.
    fn triage_threshold(&self) -> Result<Option<crate::record::stance::Share>, OptionsError> {
        let Some(text) = &self.triage_threshold else {
            return Ok(Some(crate::model::positions::TRIAGE_THRESHOLD));
        };
        let t = text.trim();
        match (
            t.trim_end_matches('%').parse::<f64>(),
            crate::record::stance::Share::parse(t),
        ) {
            (Ok(v), Some(share)) if (0.0..=100.0).contains(&v) => Ok(Some(share)),
            _ => invalid(format!(
                "--triage-threshold {text}: expected a confidence from 0 to 1, such as 0.8"
            )),
        }
    }

    /// `--seat`, `--independent`, `--budget-*`: every role seated once, by a known agent, within
    /// the debate's voices; a budget above nothing.
    fn seats(&self, voices: &[String]) -> Result<crate::model::seats::Seats, OptionsError> {
        let mut seats = crate::model::seats::Seats {
            independent: self.independent == Some(true),
            budget_tokens: self.budget_tokens,
            budget_usd: self
                .budget_usd
                .as_ref()
                .map(|u| u.trim().trim_start_matches('$').to_owned()),
            fallback: self.fallback,
            ..Default::default()
        };
        for text in &self.seats {
            let (role, seat) = crate::model::seats::Seats::parse_assignment(text, &self.agents)
                .map_err(|message| OptionsError { message })?;
            seats.roles.insert(role, seat);
        }
        seats
            .check(voices)
            .map_err(|message| OptionsError { message })?;
        if seats.budget_tokens == Some(0) {
            return invalid("--budget-tokens must be above 0");
        }
        Ok(seats)
    }

    /// `--versus`: two different results, and not with `--follow-up`.
    fn check_versus(&self) -> Result<(), OptionsError> {
        if !self.versus.is_empty() && self.versus.len() != 2 {
            return invalid("--versus takes exactly two results: --versus report-a.md report-b.md");
        }
        if self.versus.len() == 2 && self.versus[0].trim() == self.versus[1].trim() {
            return invalid("--versus needs two different results to compare");
        }
        if self.follow_up.is_some() && !self.versus.is_empty() {
            return invalid(
                "--follow-up and --versus both bring earlier results; use one of them (or start a follow-up of the versus debate afterwards)",
            );
        }
        Ok(())
    }

    fn check_follow_up(&self) -> Result<(), OptionsError> {
        if let Some(f) = &self.follow_up
            && f.trim().is_empty()
        {
            return invalid("--follow-up needs a report file or a debate: --follow-up DEBATE@main");
        }
        Ok(())
    }

    /// The question, or with `--versus` and none, the question of a comparison.
    fn question(&self) -> Result<String, OptionsError> {
        let mut question = self.question.trim().to_owned();
        if question.is_empty() && self.versus.len() == 2 {
            question = format!(
                "Which is stronger, A ({}) or B ({}), and why?",
                self.versus[0].trim(),
                self.versus[1].trim()
            );
        }
        if question.is_empty() {
            return invalid("the question is empty: anvil start \"Should we …?\"");
        }
        Ok(question)
    }

    /// Who speaks: the advocate/critic pair, or the voices of a stakeholder or persona rotation.
    fn rotation(&self) -> Result<(Rotation, Vec<String>), OptionsError> {
        if !self.personas.is_empty() && self.stakeholders.is_some() {
            return invalid(
                "--persona and --stakeholders are two different rotations; use one of them",
            );
        }
        if let Some(list) = &self.stakeholders {
            if self.mode.is_some_and(|m| m != Mode::Stakeholders) {
                return invalid(format!(
                    "--stakeholders implies --mode stakeholders, but --mode {} was given; drop one of them (or use --persona for a rotation in another mode)",
                    self.mode.map(Mode::name).unwrap_or_default()
                ));
            }
            let voices: Vec<String> = list
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
                .collect();
            let voices = if voices.is_empty() {
                DEFAULT_STAKEHOLDERS.map(str::to_owned).to_vec()
            } else {
                voices
            };
            return Ok((Rotation::Stakeholders, voices));
        }
        if self.mode == Some(Mode::Stakeholders) {
            let voices = DEFAULT_STAKEHOLDERS.map(str::to_owned).to_vec();
            return Ok((Rotation::Stakeholders, voices));
        }
        if self.personas.is_empty() {
            return Ok((Rotation::Pair, Vec::new()));
        }
        let personas: Vec<String> = self
            .personas
            .iter()
            .map(|p| {
                preset(p, &PERSONA_PRESETS)
                    .map(str::to_owned)
                    .unwrap_or_else(|| p.trim().to_owned())
            })
            .filter(|p| !p.is_empty())
            .collect();
        if personas.len() < 2 {
            return invalid(format!(
                "a persona rotation needs at least two voices: --persona security-engineer --persona startup-cfo (presets: {}; or free text)",
                PERSONA_PRESETS.join(", ")
            ));
        }
        Ok((Rotation::Personas, personas))
    }

    /// The mode: a stakeholder rotation's own, else as given; devils-advocate needs a position.
    fn mode(&self, rotation: Rotation) -> Result<Mode, OptionsError> {
        let mode = match rotation {
            Rotation::Stakeholders => Mode::Stakeholders,
            _ => self.mode.unwrap_or(Mode::Analyst),
        };
        if mode == Mode::DevilsAdvocate
            && self.position.as_deref().is_none_or(|p| p.trim().is_empty())
        {
            return invalid(format!(
                "{} devils-advocate attacks your own stance: add --position \"what you believe\"",
                defs::MODE.named(self)
            ));
        }
        Ok(mode)
    }

    /// Rounds of the pair, 1 to 10; in a rotation, one per voice.
    /// With `--all-draft` every voice of a rotation speaks in every round, so a rotation counts
    /// its rounds as a pair does.
    fn rounds(&self, rotation: Rotation, voices: &[String]) -> Result<u32, OptionsError> {
        if rotation == Rotation::Pair || self.all_draft == Some(true) {
            let rounds = self.rounds.unwrap_or(DEFAULT_ROUNDS);
            if !(1..=MAX_ROUNDS).contains(&rounds) {
                return invalid(format!(
                    "{} {rounds} is out of range: use 1 to {MAX_ROUNDS}",
                    defs::ROUNDS.named(self)
                ));
            }
            return Ok(rounds);
        }
        let count = u32::try_from(voices.len()).unwrap_or(u32::MAX);
        if let Some(r) = self.rounds.filter(|r| *r != count) {
            return invalid(format!(
                "in a rotation every voice speaks once, so rounds = voices ({count}); drop --rounds {r} or change the voices"
            ));
        }
        if count > MAX_ROUNDS {
            return invalid(format!(
                "{count} voices is too many: use at most {MAX_ROUNDS}"
            ));
        }
        Ok(count)
    }

    fn autonomy(&self) -> Result<u8, OptionsError> {
        let autonomy = self.autonomy.unwrap_or(0);
        if autonomy > 5 {
            return invalid(format!(
                "{} {autonomy} is out of range: use 0 to 5 (0: never ask the human; 5: ask whenever anything is ambiguous)",
                defs::AUTONOMY.named(self)
            ));
        }
        Ok(autonomy)
    }

    /// One of the frameworks, by its preset name.
    fn framework(&self) -> Result<Option<String>, OptionsError> {
        let Some(name) = self.framework.as_deref().map(str::trim) else {
            return Ok(None);
        };
        match preset(name, &FRAMEWORKS) {
            Some(known) => Ok(Some(known.to_owned())),
            None => invalid(format!(
                "{} '{name}' is not a framework; choose one of: {}",
                defs::FRAMEWORK.named(self),
                FRAMEWORKS.join(", ")
            )),
        }
    }

    /// A preset by its name, or a lens in the user's own words.
    fn focus(&self) -> Result<Option<String>, OptionsError> {
        match self.focus.as_deref().map(str::trim) {
            None => Ok(None),
            Some("") => invalid(format!(
                "{} is empty: give a preset ({}) or a lens in your own words",
                defs::FOCUS.named(self),
                FOCUS_PRESETS.join(", ")
            )),
            Some(text) => Ok(Some(
                preset(text, &FOCUS_PRESETS)
                    .map(str::to_owned)
                    .unwrap_or_else(|| text.to_owned()),
            )),
        }
    }

    /// Paths that exist, each once.
    fn context(&self) -> Result<Vec<String>, OptionsError> {
        let mut context = Vec::new();
        for path in &self.context {
            let trimmed = path.trim();
            if trimmed.is_empty() {
                return invalid("--context needs a path: --context src/");
            }
            if !self.cwd.join(trimmed).exists() {
                return invalid(format!(
                    "{} {trimmed}: no such file or directory (paths are relative to the current directory {})",
                    defs::CONTEXT.named(self),
                    self.cwd.display()
                ));
            }
            if !context.iter().any(|c| c == trimmed) {
                context.push(trimmed.to_owned());
            }
        }
        Ok(context)
    }
}

#[cfg(test)]
mod tests;
