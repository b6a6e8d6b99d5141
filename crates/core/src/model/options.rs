//! Debate options as the user gives them, and their validation in one place: everything that
//! can be wrong with a combination of options is caught here, with a message that says what
//! to do, before anything is written.
//!
//! Defaults come from `.anvil/config.toml` ([`crate::model::config`]); flags override them. A value
//! that came from the config is named as its key there, so the user knows which file to fix.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::model::config::Config;
use crate::model::state::{Inputs, Mode, Rotation, Setup};

pub(crate) const DEFAULT_ROUNDS: u32 = 3;
pub(crate) const MAX_ROUNDS: u32 = 10;
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

/// The options of `anvil start` and `anvil run`, before validation.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub question: String,
    pub mode: Option<Mode>,
    pub rounds: Option<u32>,
    pub position: Option<String>,
    /// `Some` when `--stakeholders` was given (possibly empty: the default voices).
    pub stakeholders: Option<String>,
    pub personas: Vec<String>,
    pub interactive: bool,
    pub framework: Option<String>,
    pub focus: Option<String>,
    pub research: bool,
    pub autonomy: Option<u8>,
    pub output: Option<PathBuf>,
    /// `--context` paths, as given (relative to `cwd`).
    pub context: Vec<String>,
    pub diff: bool,
    /// `--pr N`: a pull request of the project's remote.
    pub pr: Option<u32>,
    pub follow_up: Option<String>,
    /// `--versus A B`: exactly two when given.
    pub versus: Vec<String>,
    /// `--seat ROLE=AGENT[:MODEL]`, as given.
    pub seats: Vec<String>,
    /// `--independent`: round 1's openings drafted blind, in parallel.
    pub independent: bool,
    /// `--budget-tokens N`.
    pub budget_tokens: Option<u64>,
    /// `--budget-usd X`.
    pub budget_usd: Option<String>,
    /// Where relative `--context` paths are found.
    pub cwd: PathBuf,
    /// Options whose value came from `.anvil/config.toml`, by config key.
    pub from_config: BTreeSet<&'static str>,
    /// Switches the command line turned off (`--no-interactive`, …), by config key: the
    /// config cannot turn them on.
    pub turned_off: BTreeSet<&'static str>,
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
    /// Fills every option the flags left unset from the config; flags win.
    pub fn with_config(mut self, config: &Config) -> Options {
        fn take<T: Clone>(
            flag: &mut Option<T>,
            value: &Option<T>,
            key: &'static str,
            from: &mut BTreeSet<&'static str>,
        ) {
            if flag.is_none() && value.is_some() {
                *flag = value.clone();
                from.insert(key);
            }
        }
        let from = &mut self.from_config;
        // A rotation given on the command line outranks a configured mode.
        if self.stakeholders.is_none() || config.mode == Some(Mode::Stakeholders) {
            take(&mut self.mode, &config.mode, "mode", from);
        }
        take(&mut self.rounds, &config.rounds, "rounds", from);
        take(&mut self.position, &config.position, "position", from);
        take(&mut self.framework, &config.framework, "framework", from);
        take(&mut self.focus, &config.focus, "focus", from);
        take(&mut self.autonomy, &config.autonomy, "autonomy", from);
        take(&mut self.output, &config.output, "output", from);
        if self.stakeholders.is_none()
            && self.personas.is_empty()
            && self.mode.is_none_or(|m| m == Mode::Stakeholders)
            && let Some(list) = &config.stakeholders
        {
            self.stakeholders = Some(list.join(","));
            from.insert("stakeholders");
        }
        if self.personas.is_empty()
            && self.stakeholders.is_none()
            && let Some(list) = &config.personas
        {
            self.personas = list.clone();
            from.insert("personas");
        }
        if self.context.is_empty()
            && let Some(list) = &config.context
        {
            self.context = list.clone();
            from.insert("context");
        }
        // Seats: the config's for every role the command line left without one.
        if let Some(table) = &config.seats {
            let given: Vec<String> = self
                .seats
                .iter()
                .filter_map(|s| s.split_once('=').map(|(r, _)| r.trim().to_lowercase()))
                .collect();
            for (role, seat) in &table.roles {
                if !given.contains(&role.trim().to_lowercase()) {
                    self.seats.push(format!("{role}={seat}"));
                    from.insert("seats");
                }
            }
            if !self.independent && table.independent == Some(true) {
                self.independent = true;
                from.insert("seats.independent");
            }
            take(
                &mut self.budget_tokens,
                &table.budget_tokens,
                "seats.budget_tokens",
                from,
            );
            let usd = table.budget_usd.map(|d| format!("{d}"));
            take(&mut self.budget_usd, &usd, "seats.budget_usd", from);
        }
        for (flag, value, key) in [
            (&mut self.interactive, config.interactive, "interactive"),
            (&mut self.research, config.research, "research"),
            (&mut self.diff, config.diff, "diff"),
        ] {
            if !*flag && value == Some(true) && !self.turned_off.contains(key) {
                *flag = true;
                from.insert(key);
            }
        }
        self
    }

    /// How an option is named in a message: the flag, or the config key it came from.
    fn named(&self, key: &'static str, flag: &str) -> String {
        if self.from_config.contains(key) {
            format!("`{key}` in .anvil/config.toml")
        } else {
            flag.to_owned()
        }
    }

    pub fn into_setup(self) -> Result<Setup, OptionsError> {
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
        if !self.personas.is_empty() && self.stakeholders.is_some() {
            return invalid(
                "--persona and --stakeholders are two different rotations; use one of them",
            );
        }
        let (rotation, voices) = if let Some(list) = &self.stakeholders {
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
            (Rotation::Stakeholders, voices)
        } else if self.mode == Some(Mode::Stakeholders) {
            (
                Rotation::Stakeholders,
                DEFAULT_STAKEHOLDERS.map(str::to_owned).to_vec(),
            )
        } else if !self.personas.is_empty() {
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
            (Rotation::Personas, personas)
        } else {
            (Rotation::Pair, Vec::new())
        };
        let mode = match rotation {
            Rotation::Stakeholders => Mode::Stakeholders,
            _ => self.mode.unwrap_or(Mode::Analyst),
        };
        if mode == Mode::DevilsAdvocate
            && self.position.as_deref().is_none_or(|p| p.trim().is_empty())
        {
            return invalid(format!(
                "{} devils-advocate attacks your own stance: add --position \"what you believe\"",
                self.named("mode", "--mode")
            ));
        }
        let rounds = match rotation {
            Rotation::Pair => {
                let rounds = self.rounds.unwrap_or(DEFAULT_ROUNDS);
                if !(1..=MAX_ROUNDS).contains(&rounds) {
                    return invalid(format!(
                        "{} {rounds} is out of range: use 1 to {MAX_ROUNDS}",
                        self.named("rounds", "--rounds")
                    ));
                }
                rounds
            }
            _ => {
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
                count
            }
        };
        let autonomy = self.autonomy.unwrap_or(0);
        if autonomy > 5 {
            return invalid(format!(
                "{} {autonomy} is out of range: use 0 to 5 (0: never ask the human; 5: ask whenever anything is ambiguous)",
                self.named("autonomy", "--autonomy")
            ));
        }
        let framework = match self.framework.as_deref().map(str::trim) {
            None => None,
            Some(name) => match preset(name, &FRAMEWORKS) {
                Some(known) => Some(known.to_owned()),
                None => {
                    return invalid(format!(
                        "{} '{name}' is not a framework; choose one of: {}",
                        self.named("framework", "--framework"),
                        FRAMEWORKS.join(", ")
                    ));
                }
            },
        };
        let focus = match self.focus.as_deref().map(str::trim) {
            None => None,
            Some("") => {
                return invalid(format!(
                    "{} is empty: give a preset ({}) or a lens in your own words",
                    self.named("focus", "--focus"),
                    FOCUS_PRESETS.join(", ")
                ));
            }
            Some(text) => Some(
                preset(text, &FOCUS_PRESETS)
                    .map(str::to_owned)
                    .unwrap_or_else(|| text.to_owned()),
            ),
        };
        let mut context = Vec::new();
        for path in &self.context {
            let trimmed = path.trim();
            if trimmed.is_empty() {
                return invalid("--context needs a path: --context src/");
            }
            if !self.cwd.join(trimmed).exists() {
                return invalid(format!(
                    "{} {trimmed}: no such file or directory (paths are relative to the current directory {})",
                    self.named("context", "--context"),
                    self.cwd.display()
                ));
            }
            if !context.iter().any(|c| c == trimmed) {
                context.push(trimmed.to_owned());
            }
        }
        if let Some(f) = &self.follow_up
            && f.trim().is_empty()
        {
            return invalid("--follow-up needs a report file or a debate: --follow-up DEBATE@main");
        }
        let inputs = Inputs {
            context,
            diff: self.diff,
            pr: self.pr,
            follow_up: self.follow_up.map(|f| f.trim().to_owned()),
            versus: self.versus.iter().map(|v| v.trim().to_owned()).collect(),
            // Filled in by the command line, which holds the search index.
            recalled: Vec::new(),
        };
        let mut seats = crate::model::seats::Seats {
            independent: self.independent,
            budget_tokens: self.budget_tokens,
            budget_usd: self
                .budget_usd
                .map(|u| u.trim().trim_start_matches('$').to_owned()),
            ..Default::default()
        };
        for text in &self.seats {
            let (role, seat) = crate::model::seats::Seats::parse_assignment(text)
                .map_err(|message| OptionsError { message })?;
            seats.roles.insert(role, seat);
        }
        seats
            .check(&voices)
            .map_err(|message| OptionsError { message })?;
        if seats.budget_tokens == Some(0) {
            return invalid("--budget-tokens must be above 0");
        }
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
            interactive: self.interactive,
            framework,
            focus,
            research: self.research,
            autonomy,
            output: self.output,
            seats,
            inputs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q() -> Options {
        Options {
            question: "Should we?".into(),
            ..Options::default()
        }
    }

    #[test]
    fn defaults_are_a_three_round_analyst_debate() {
        let s = q().into_setup().unwrap();
        assert_eq!(
            (s.mode, s.rounds, s.rotation),
            (Mode::Analyst, 3, Rotation::Pair)
        );
    }

    #[test]
    fn stakeholders_default_voices_and_rounds() {
        let s = Options {
            stakeholders: Some(String::new()),
            ..q()
        }
        .into_setup()
        .unwrap();
        assert_eq!(s.voices, DEFAULT_STAKEHOLDERS);
        assert_eq!((s.mode, s.rounds), (Mode::Stakeholders, 3));
        let s = Options {
            mode: Some(Mode::Stakeholders),
            ..q()
        }
        .into_setup()
        .unwrap();
        assert_eq!(s.voices.len(), 3);
        let s = Options {
            stakeholders: Some("Ops, Legal".into()),
            ..q()
        }
        .into_setup()
        .unwrap();
        assert_eq!(
            (s.voices.clone(), s.rounds),
            (vec!["Ops".to_owned(), "Legal".to_owned()], 2)
        );
    }

    #[test]
    fn invalid_combinations_say_what_to_do() {
        let cases: Vec<(Options, &str)> = vec![
            (
                Options {
                    question: "  ".into(),
                    ..q()
                },
                "question is empty",
            ),
            (
                Options {
                    mode: Some(Mode::DevilsAdvocate),
                    ..q()
                },
                "--position",
            ),
            (
                Options {
                    personas: vec!["cfo".into()],
                    ..q()
                },
                "at least two",
            ),
            (
                Options {
                    stakeholders: Some("A,B".into()),
                    mode: Some(Mode::Philosopher),
                    ..q()
                },
                "implies --mode stakeholders",
            ),
            (
                Options {
                    rounds: Some(0),
                    ..q()
                },
                "out of range",
            ),
            (
                Options {
                    rounds: Some(11),
                    ..q()
                },
                "1 to 10",
            ),
            (
                Options {
                    stakeholders: Some("A,B".into()),
                    rounds: Some(3),
                    ..q()
                },
                "rounds = voices",
            ),
            (
                Options {
                    stakeholders: Some("A".into()),
                    personas: vec!["x".into(), "y".into()],
                    ..q()
                },
                "use one of them",
            ),
            (
                Options {
                    autonomy: Some(6),
                    ..q()
                },
                "0 to 5",
            ),
        ];
        for (options, expected) in cases {
            let err = options.clone().into_setup().unwrap_err().to_string();
            assert!(err.contains(expected), "{options:?}: {err}");
        }
    }
}
