//! Debate options as the user gives them, and their validation in one place: everything that
//! can be wrong with a combination of options is caught here, with a message that says what
//! to do, before anything is written.

use std::path::PathBuf;

use crate::state::{Mode, Rotation, Setup};

pub const DEFAULT_ROUNDS: u32 = 3;
pub const MAX_ROUNDS: u32 = 10;
pub const DEFAULT_STAKEHOLDERS: [&str; 3] =
    ["Engineering Team", "Product/UX", "Business/Management"];

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

impl Options {
    pub fn into_setup(self) -> Result<Setup, OptionsError> {
        let question = self.question.trim().to_owned();
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
                    "--stakeholders implies --mode stakeholders, but --mode {} was given; drop one of them",
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
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect();
            if personas.len() < 2 {
                return invalid(
                    "a persona rotation needs at least two voices: --persona security-engineer --persona startup-cfo",
                );
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
            return invalid(
                "--mode devils-advocate attacks your own stance: add --position \"what you believe\"",
            );
        }
        let rounds = match rotation {
            Rotation::Pair => {
                let rounds = self.rounds.unwrap_or(DEFAULT_ROUNDS);
                if !(1..=MAX_ROUNDS).contains(&rounds) {
                    return invalid(format!(
                        "--rounds {rounds} is out of range: use 1 to {MAX_ROUNDS}"
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
            return invalid(format!("--autonomy {autonomy} is out of range: use 0 to 5"));
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
            framework: self.framework,
            focus: self.focus,
            research: self.research,
            autonomy,
            output: self.output,
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
