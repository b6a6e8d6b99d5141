//! The protocols `--protocol` names (`council`, `debate`, `vote`): each a preset of other
//! options, defined once here and read by `--help`, docs/options.md, the options themselves
//! (through their own definitions in [`super::defs`]) and the setup's record, which says what
//! of it ran ([`words`]).

use super::Options;
use super::{Given, Takes};
use crate::model::state::Setup;

/// A protocol that `--protocol` names: the flags it stands for ([`PROTOCOLS`]).
#[derive(Debug)]
pub struct Protocol {
    pub name: &'static str,
    /// What it is, for `--help`.
    pub what: &'static str,
    /// The flags it stands for, as they are typed: each fills in only what the command line
    /// left unset (through the option's own definition), before the config does.
    pub flags: &'static [&'static str],
}

/// Every protocol, defined once: `--help`, docs/options.md, the setup's record and the
/// options themselves read them from here.
pub const PROTOCOLS: [Protocol; 3] = [
    Protocol {
        name: "council",
        what: "triage first, every seat drafting every round, a blind vote before the synthesis",
        flags: &["--triage", "--all-draft", "--vote"],
    },
    Protocol {
        name: "debate",
        what: "turn-taking: one seat after another, each seeing what was said, no triage, no vote",
        flags: &["--no-triage", "--no-all-draft", "--no-vote"],
    },
    Protocol {
        name: "vote",
        what: "one blind round, then a vote: no debate",
        flags: &["--rounds", "1", "--all-draft", "--vote", "--no-triage"],
    },
];

/// The protocol named `name`.
pub fn protocol(name: &str) -> Result<&'static Protocol, String> {
    let key = name.trim().to_lowercase();
    PROTOCOLS.iter().find(|p| p.name == key).ok_or_else(|| {
        let names: Vec<&str> = PROTOCOLS.iter().map(|p| p.name).collect();
        format!(
            "unknown protocol '{}'; choose one of: {}",
            name.trim(),
            names.join(", ")
        )
    })
}

impl Protocol {
    /// The options it stands for, as the command line would give them: `--rounds 1` and the
    /// switches (`--no-…` their negation), read through the options' own definitions.
    pub fn options(&self) -> Result<Options, String> {
        let mut out = Options::default();
        let mut flags = self.flags.iter().peekable();
        while let Some(flag) = flags.next() {
            let long = flag.trim_start_matches("--");
            let Some((def, on)) = super::flag_named(long) else {
                return Err(format!("protocol {}: no option {flag}", self.name));
            };
            let given = match def.takes {
                Takes::Switch if on => Given::On,
                Takes::Switch => Given::Off,
                _ => {
                    let value = flags
                        .next()
                        .ok_or_else(|| format!("protocol {}: {flag} without a value", self.name))?;
                    Given::Values(vec![std::ffi::OsString::from(*value)])
                }
            };
            (def.given)(&mut out, given)?;
        }
        Ok(out)
    }

    /// `council = --triage --all-draft --vote`, one line per protocol, for `--help`.
    pub fn lines() -> String {
        PROTOCOLS
            .iter()
            .map(|p| format!("{} = {}: {}.", p.name, p.flags.join(" "), p.what))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The protocol the debate was started with and what of it ran, for people: `council
/// (--triage --all-draft --vote)`, and what a flag beside it changed (`--no-vote given`).
/// `None` without `--protocol`.
pub fn words(setup: &Setup) -> Option<String> {
    let name = setup.protocol.as_deref()?;
    let preset = protocol(name).ok()?;
    let mut changed = Vec::new();
    if let Ok(wanted) = preset.options() {
        let switches = [
            ("triage", wanted.triage, setup.triage),
            ("all-draft", wanted.all_draft, setup.all_draft),
            ("vote", wanted.vote, setup.vote),
        ];
        for (flag, wanted, ran) in switches {
            if let Some(wanted) = wanted
                && wanted != ran
            {
                changed.push(if ran {
                    format!("--{flag}")
                } else {
                    format!("--no-{flag}")
                });
            }
        }
        if let Some(rounds) = wanted.rounds.filter(|r| *r != setup.rounds) {
            changed.push(format!("--rounds {} (not {rounds})", setup.rounds));
        }
    }
    let mut words = format!("{} ({})", preset.name, preset.flags.join(" "));
    if !changed.is_empty() {
        words.push_str(&format!(", with {} given", changed.join(" ")));
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocol_stands_for_options_that_exist() {
        for p in PROTOCOLS {
            let options = p
                .options()
                .unwrap_or_else(|e| panic!("protocol {}: {e}", p.name));
            assert_ne!(
                options,
                Options::default(),
                "protocol {} sets nothing",
                p.name
            );
        }
        let council = protocol("Council").unwrap().options().unwrap();
        assert_eq!(
            (council.triage, council.all_draft, council.vote),
            (Some(true), Some(true), Some(true))
        );
        let vote = protocol("vote").unwrap().options().unwrap();
        assert_eq!((vote.rounds, vote.triage), (Some(1), Some(false)));
        assert_eq!(
            protocol("chat").unwrap_err(),
            "unknown protocol 'chat'; choose one of: council, debate, vote"
        );
    }
}
