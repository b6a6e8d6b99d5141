//! Who plays each role of a debate: the seats (`--seat ROLE=AGENT[:MODEL]`, `[seats]` in
//! `.anvil/config.toml`), each an agent of [`crate::agent`] and maybe a model, whether round
//! 1's openings are drafted blind (`--independent`), and
//! the debate's budget (`--budget-tokens`, `--budget-usd`). Part of the setup: decided when
//! the debate starts, the same on every line and every retry.
//!
//! A role without a seat is played as before: by the Claude Code session that drives the
//! line (the host). A seat is keyed by the role's name (`advocate`, `critic`,
//! `synthesizer`, `stakeholder`, `persona`) or by a voice of the rotation (`Product/UX`,
//! `startup-cfo`), the voice first.
//!
//! A seat on an endpoint (`ollama:llama3.1`, or `mygw:MODEL` for `[agents.mygw]` in the
//! config) is resolved when the debate starts ([`crate::agent::endpoint::resolve`]) and kept
//! in the setup as it was then: a preset as built in by its text, any other endpoint with its
//! base URL and key variable, so that the hook and every later command play it where it was
//! shown to go, without reading the config again (and a record pulled from elsewhere passes
//! the same checks of where a key may go when it is read back).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::agent::Agent;
use crate::agent::endpoint::{self, Defs};
use crate::record::usage::Usd;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seats {
    /// Role (or voice) → who plays it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, Seat>,
    /// Round 1's openings drafted without seeing each other, in parallel.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub independent: bool,
    /// Tokens (input and output, all seats) the debate may spend before it goes to its
    /// synthesis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// Dollars, as exact decimal text, likewise (counted where agents report a price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<String>,
    /// Who plays a seat whose agent failed (`--fallback host`); `None`: nobody, the debate
    /// waits at that phase until the seat is tried again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
}

impl Seats {
    pub fn is_empty(&self) -> bool {
        *self == Seats::default()
    }

    /// The seat of the role named `role` (`critic`; spoken by `voice` in a rotation), if it
    /// has one.
    pub fn seat_for(&self, role: &str, voice: Option<&str>) -> Option<&Seat> {
        let by_voice = voice.and_then(|v| {
            self.roles
                .iter()
                .find(|(key, _)| key.trim().eq_ignore_ascii_case(v.trim()))
                .map(|(_, seat)| seat)
        });
        by_voice.or_else(|| self.roles.get(role))
    }

    pub fn budget_usd(&self) -> Option<Usd> {
        self.budget_usd.as_deref().and_then(Usd::parse)
    }

    /// Parses `ROLE=AGENT[:MODEL]`, an endpoint of `defs` (`[agents]` of the config) too.
    pub fn parse_assignment(text: &str, defs: &Defs) -> Result<(String, Seat), String> {
        let (role, seat) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}` is not ROLE=AGENT[:MODEL] (e.g. critic=codex)"))?;
        let role = role.trim();
        if role.is_empty() {
            return Err(format!("`{text}` names no role before `=`"));
        }
        Ok((role.to_lowercase_role(), Seat::parse_with(seat, defs)?))
    }

    /// Checks every seat's role against the debate's roles and voices.
    pub(crate) fn check(&self, voices: &[String]) -> Result<(), String> {
        for key in self.roles.keys() {
            let known = [
                "advocate",
                "critic",
                "synthesizer",
                "stakeholder",
                "persona",
            ]
            .contains(&key.as_str())
                || voices
                    .iter()
                    .any(|v| v.trim().eq_ignore_ascii_case(key.trim()));
            if !known {
                let mut roles = vec!["advocate", "critic", "synthesizer"];
                roles.extend(voices.iter().map(String::as_str));
                return Err(format!(
                    "--seat {key}=…: this debate has no role or voice `{key}` (its roles: {})",
                    roles.join(", ")
                ));
            }
        }
        if let Some(text) = &self.budget_usd
            && Usd::parse(text).is_none()
        {
            return Err(format!(
                "--budget-usd {text}: expected an amount of dollars such as 0.50"
            ));
        }
        Ok(())
    }
}

/// `AGENT[:MODEL]`: who plays a seat, and with which model (else the agent's own default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SeatForm", into = "SeatForm")]
pub struct Seat {
    pub agent: &'static dyn Agent,
    pub model: Option<String>,
}

impl Seat {
    /// `AGENT[:MODEL]`, of the agents built in (endpoint presets as built in).
    pub fn parse(text: &str) -> Result<Seat, String> {
        Seat::parse_with(text, &Defs::new())
    }

    /// `AGENT[:MODEL]`, where AGENT may also be an endpoint that `defs` (the config's
    /// `[agents]`) names or moves.
    pub fn parse_with(text: &str, defs: &Defs) -> Result<Seat, String> {
        // An endpoint's model may hold colons of its own (`ollama:llama3.1:8b`).
        let (name, model) = match text.split_once(':') {
            Some((agent, model)) => (agent.trim(), Some(model.trim())),
            None => (text.trim(), None),
        };
        if model.is_some_and(str::is_empty) {
            return Err(format!("`{text}` names no model after the colon"));
        }
        let agent: &'static dyn Agent = match endpoint::resolve(name, defs)? {
            Some(endpoint) => {
                if model.or(endpoint.default_model()).is_none() {
                    return Err(format!(
                        "`{name}` is an endpoint: name its model, `{name}:MODEL` (or `model` in \
                         [agents.{name}] of .anvil/config.toml)"
                    ));
                }
                endpoint
            }
            None => crate::agent::find(name).ok_or_else(|| {
                format!(
                    "unknown agent `{name}` (expected {}, or an endpoint named in [agents.{name}] \
                     of .anvil/config.toml)",
                    crate::agent::names()
                )
            })?,
        };
        // The same check wherever a seat is named: `--seat`, `[seats]` in a config, a setup
        // read back.
        if let Some(model) = model {
            agent.check_model(model).map_err(|why| {
                format!("`{agent}:…`: {why}; a seat names an agent and a model, nothing more")
            })?;
        }
        Ok(Seat {
            agent,
            model: model.map(str::to_owned),
        })
    }

    /// Where an endpoint seat's turns go, for people (`http://127.0.0.1:11434/v1 with no key`).
    pub fn destination(&self) -> Option<String> {
        self.agent.endpoint().map(endpoint::Endpoint::describe)
    }
}

/// How a seat is written in a setup: `AGENT[:MODEL]`, or, for an endpoint other than a preset
/// as built in, a table that says where it sends (see the module's doc).
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum SeatForm {
    Text(String),
    Endpoint {
        agent: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        base_url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_key_env: Option<String>,
    },
}

impl TryFrom<SeatForm> for Seat {
    type Error = String;
    fn try_from(form: SeatForm) -> Result<Seat, String> {
        match form {
            SeatForm::Text(text) => Seat::parse(&text),
            SeatForm::Endpoint {
                agent,
                model,
                base_url,
                api_key_env,
            } => {
                let def = endpoint::Def {
                    base_url: Some(base_url),
                    // A preset's own variable is not implied: none is none.
                    api_key_env: Some(api_key_env.unwrap_or_default()),
                    model: None,
                };
                let mut defs = Defs::new();
                defs.insert(agent.clone(), def);
                let text = match &model {
                    Some(model) => format!("{agent}:{model}"),
                    None => agent,
                };
                Seat::parse_with(&text, &defs)
            }
        }
    }
}

impl From<Seat> for SeatForm {
    fn from(seat: Seat) -> SeatForm {
        match seat.agent.endpoint().filter(|e| !e.is_preset()) {
            Some(endpoint) => SeatForm::Endpoint {
                agent: seat.agent.name().to_owned(),
                model: seat.model,
                base_url: endpoint.base_url().to_owned(),
                api_key_env: endpoint.key_env().map(str::to_owned),
            },
            None => SeatForm::Text(seat.to_string()),
        }
    }
}

impl std::fmt::Display for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.model {
            Some(model) => write!(f, "{}:{model}", self.agent),
            None => write!(f, "{}", self.agent),
        }
    }
}

trait RoleKey {
    fn to_lowercase_role(&self) -> String;
}

impl RoleKey for str {
    /// Role names are matched in lower case; a voice keeps its own spelling.
    fn to_lowercase_role(&self) -> String {
        let lower = self.to_lowercase();
        if [
            "advocate",
            "critic",
            "synthesizer",
            "stakeholder",
            "persona",
        ]
        .contains(&lower.as_str())
        {
            lower
        } else {
            self.to_owned()
        }
    }
}

/// Who plays a seat whose agent failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fallback {
    /// The session that drives the line (`claude` in `anvil run`).
    Host,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::state::Role;

    #[test]
    fn a_seat_is_an_agent_and_maybe_a_model() {
        let seat = Seat::parse("codex:gpt-5.4").unwrap();
        assert_eq!(
            (seat.agent.name(), seat.model.as_deref()),
            ("codex", Some("gpt-5.4"))
        );
        assert_eq!(Seat::parse("qwen").unwrap().model, None);
        assert_eq!(
            Seat::parse("claude:opus").unwrap().to_string(),
            "claude:opus"
        );
        assert!(
            Seat::parse("gemini-pro")
                .unwrap_err()
                .contains("unknown agent `gemini-pro`")
        );
        assert!(Seat::parse("codex:").unwrap_err().contains("no model"));
        let e = Seat::parse("qwen:--openai-base-url=http://elsewhere/v1").unwrap_err();
        assert!(e.contains("starts with `-`"), "{e}");
    }

    #[test]
    fn a_seat_is_found_by_voice_then_by_role() {
        let mut seats = Seats::default();
        for text in [
            "Critic=codex:gpt-x",
            "Product/UX=qwen",
            "stakeholder=copilot",
        ] {
            let (role, seat) = Seats::parse_assignment(text, &Defs::new()).unwrap();
            seats.roles.insert(role, seat);
        }
        assert_eq!(
            seats
                .seat_for(Role::Critic.name(), None)
                .map(|s| s.to_string()),
            Some("codex:gpt-x".into())
        );
        assert_eq!(seats.seat_for(Role::Advocate.name(), None), None);
        assert_eq!(
            seats
                .seat_for(Role::Stakeholder.name(), Some("product/ux"))
                .map(|s| s.agent.name()),
            Some("qwen")
        );
        assert_eq!(
            seats
                .seat_for(Role::Stakeholder.name(), Some("Ops"))
                .map(|s| s.agent.name()),
            Some("copilot")
        );
        assert!(seats.check(&["Product/UX".into()]).is_ok());
        let err = Seats::parse_assignment("judge=codex", &Defs::new()).map(|(r, s)| {
            let mut x = Seats::default();
            x.roles.insert(r, s);
            x.check(&[]).unwrap_err()
        });
        assert!(err.unwrap().contains("no role or voice `judge`"));
        assert!(
            Seats::parse_assignment("critic", &Defs::new())
                .unwrap_err()
                .contains("ROLE=AGENT")
        );
    }
}
