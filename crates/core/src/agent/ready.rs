//! Can an agent take a seat here: is it installed (its version), and does it look able to run
//! headless (signed in, or given a provider) — each agent's file tells the second from its own
//! files and the environment ([`Agent::signed_in`]), without sending a request anywhere.

use super::{AGENTS, Agent, SeatError};

/// What `anvil seats` and `anvil doctor` say of one agent.
#[derive(Debug, Clone)]
pub struct Readiness {
    pub agent: &'static dyn Agent,
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
    let handles: Vec<_> = AGENTS
        .iter()
        .map(|&agent| std::thread::spawn(move || check(agent)))
        .collect();
    handles
        .into_iter()
        .zip(AGENTS)
        .map(|(h, &agent)| h.join().unwrap_or_else(|_| check(agent)))
        .collect()
}

pub fn check(agent: &'static dyn Agent) -> Readiness {
    Readiness {
        agent,
        program: agent.program().display().to_string(),
        version: match agent.endpoint() {
            // anvil plays it itself: its version is anvil's, known without running anything.
            Some(_) => Ok(env!("CARGO_PKG_VERSION").to_owned()),
            None => super::version(agent),
        },
        headless: agent.signed_in(),
    }
}

/// `$VAR is set`, for the first of `vars` that is set and not empty.
pub(super) fn set_among(vars: &[&str]) -> Option<String> {
    vars.iter()
        .find(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
        .map(|v| format!("${v} is set"))
}

/// `~/REL`, if it exists.
pub(super) fn home_file(rel: &str) -> Option<std::path::PathBuf> {
    let path = std::path::PathBuf::from(std::env::var_os("HOME")?).join(rel);
    path.exists().then_some(path)
}
