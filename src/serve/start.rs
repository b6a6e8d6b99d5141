//! A debate started from the page ("New debate"): what the form offers (the modes, and the
//! agents that can take a seat here, as `anvil seats` finds them), and what its request does.
//!
//! The debate is created exactly as `anvil start` creates one: the form's choices become the
//! command line's options, parsed by the same definitions (`crate::flags`), then
//! `commands::start::create` applies the project's config, validates, recalls and records.
//! The new line is bound at once to a session of its own, so no Claude Code session that
//! starts meanwhile can claim it, and then run headless the way the page runs any line
//! (`runs::launch`: `anvil run --line`, which takes the line over with its own session). The
//! page goes to the debate and follows the run live.

use std::collections::BTreeMap;

use clap::Parser;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use anvil_core::model::state::Mode;

use super::App;
use super::error::ApiError;

/// One agent as the form shows it.
#[derive(Debug, Clone, Serialize)]
pub struct AgentChoice {
    /// `codex`: what a seat names.
    pub name: String,
    /// `Codex CLI`.
    pub title: String,
    pub version: Option<String>,
    /// It can take a seat here: installed, and able to run headless.
    pub ready: bool,
    /// Why it cannot, in a few words (`anvil seats` says how to fix it).
    pub missing: Option<String>,
}

/// How long what the agents said of themselves is shown before it is asked again.
const FRESH: std::time::Duration = std::time::Duration::from_secs(30);

/// What the agents last said of themselves, and when.
static KNOWN: std::sync::Mutex<Option<(std::time::Instant, Vec<AgentChoice>)>> =
    std::sync::Mutex::new(None);
/// Held while the agents are asked: a look that finds nothing known waits for the asking under
/// way rather than asking them all a second time.
static ASKING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn known() -> Option<(std::time::Instant, Vec<AgentChoice>)> {
    KNOWN.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Asks the agents in the background, so that the first "New debate" does not wait for them
/// (each answers `--version` in its own process: seconds for some, and the page waits for the
/// slowest). The room calls it when it starts.
pub fn warm() {
    std::thread::spawn(|| ask_and_keep(None));
}

/// Asks the agents and keeps their answers, unless answers newer than `older_than` arrived
/// while this waited its turn.
fn ask_and_keep(older_than: Option<std::time::Instant>) -> Vec<AgentChoice> {
    let _asking = ASKING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((at, agents)) = known()
        && older_than.is_none_or(|then| at > then)
    {
        return agents;
    }
    let fresh = ask_agents();
    *KNOWN.lock().unwrap_or_else(|e| e.into_inner()) =
        Some((std::time::Instant::now(), fresh.clone()));
    fresh
}

/// The agents that could take a seat, and whether each can here: what `anvil seats` says. The
/// form shows what they last said, asked again in the background once it is older than
/// [`FRESH`] (an agent installed or signed in a minute ago counts on the next look); a look
/// before any answer waits for one.
pub fn agents() -> Vec<AgentChoice> {
    match known() {
        Some((at, agents)) => {
            if at.elapsed() > FRESH && ASKING.try_lock().is_ok() {
                std::thread::spawn(move || ask_and_keep(Some(at)));
            }
            agents
        }
        None => ask_and_keep(None),
    }
}

/// The agents asked now.
fn ask_agents() -> Vec<AgentChoice> {
    anvil_core::agent::check_all()
        .into_iter()
        .map(|r| AgentChoice {
            name: r.agent.name().to_owned(),
            title: r.agent.title().to_owned(),
            version: r.version.as_ref().ok().cloned(),
            ready: r.ready(),
            missing: match (&r.version, &r.headless) {
                (Err(anvil_core::agent::SeatError::Missing { .. }), _) => {
                    Some("not installed".to_owned())
                }
                (Err(e), _) => Some(e.to_string()),
                // `no sign-in found: run …`: what is missing, before how to fix it.
                (Ok(_), Err(missing)) => {
                    Some(missing.split(':').next().unwrap_or(missing).to_owned())
                }
                (Ok(_), Ok(_)) => None,
            },
        })
        .collect()
}

/// The roles a seat can be given on the form, and the modes each plays in.
pub const SEAT_ROLES: [(&str, &str, &[&str]); 4] = [
    (
        "advocate",
        "Advocate",
        &["analyst", "philosopher", "devils-advocate"],
    ),
    (
        "critic",
        "Critic",
        &["analyst", "philosopher", "devils-advocate"],
    ),
    ("stakeholder", "Stakeholders", &["stakeholders"]),
    (
        "synthesizer",
        "Synthesizer",
        &["analyst", "philosopher", "devils-advocate", "stakeholders"],
    ),
];

/// What the form needs besides the agents: the modes, and what the project's config
/// already chose (the form starts from it; a field left alone leaves the config's value).
pub fn form(home: &anvil_core::home::Home) -> Result<Value, ApiError> {
    let config = anvil_core::model::config::Config::load(home)
        .map_err(|e| ApiError::internal(crate::error::CliError::from(e).to_text()))?;
    let defaults = &config.defaults;
    let configured: BTreeMap<String, String> = config
        .seats
        .iter()
        .flat_map(|t| t.roles.iter())
        .map(|(role, seat)| (role.clone(), seat.to_string()))
        .collect();
    Ok(json!({
        "modes": Mode::ALL.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "mode": defaults.mode.unwrap_or(Mode::Analyst).name(),
        "rounds": defaults.rounds.unwrap_or(anvil_core::model::options::DEFAULT_ROUNDS),
        "max_rounds": anvil_core::model::options::MAX_ROUNDS,
        "roles": SEAT_ROLES
            .iter()
            .map(|(role, title, modes)| json!({
                "role": role,
                "title": title,
                "modes": modes.join(" "),
                "configured": configured.get(*role),
            }))
            .collect::<Vec<_>>(),
    }))
}

/// The body of `POST /api/debates`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewDebate {
    question: String,
    #[serde(default)]
    rounds: Option<u32>,
    #[serde(default)]
    mode: Option<String>,
    /// The person's own stance (devil's advocate argues against it).
    #[serde(default)]
    position: Option<String>,
    /// Role (or voice) → `AGENT[:MODEL]`; a role left out is played as the config says
    /// (by the host, Claude Code, unless `[seats]` names another).
    #[serde(default)]
    seats: BTreeMap<String, String>,
}

/// The form's choices as the command line of `anvil start`, read by its own definitions.
#[derive(Debug, Parser)]
#[command(no_binary_name = true, disable_help_flag = true)]
struct Form {
    #[command(flatten)]
    debate: crate::commands::start::DebateArgs,
}

/// `--mode=…`-style arguments (a value can never be read as an option), the question last.
fn arguments(req: &NewDebate, question: &str) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(mode) = req.mode.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
        args.push(format!("--mode={mode}"));
    }
    if let Some(rounds) = req.rounds {
        args.push(format!("--rounds={rounds}"));
    }
    if let Some(position) = req
        .position
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        args.push(format!("--position={position}"));
    }
    for (role, seat) in &req.seats {
        args.push(format!("--seat={}={}", role.trim(), seat.trim()));
    }
    args.push("--".to_owned());
    args.push(question.to_owned());
    args
}

/// Refuses a seat whose agent cannot take one here, saying why.
fn check_seats(seats: &BTreeMap<String, String>) -> Result<(), ApiError> {
    if seats.is_empty() {
        return Ok(());
    }
    let mut agents = agents();
    // What was said a while ago may be out of date: a seat refused is refused on a fresh look.
    let named =
        |agents: &[AgentChoice], name: &str| agents.iter().any(|a| a.name == name && a.ready);
    if seats
        .values()
        .any(|seat| !named(&agents, seat.split(':').next().unwrap_or_default().trim()))
    {
        agents = ask_and_keep(Some(std::time::Instant::now()));
    }
    for (role, seat) in seats {
        let name = seat.split(':').next().unwrap_or_default().trim();
        match agents.iter().find(|a| a.name == name) {
            Some(a) if a.ready => {}
            Some(a) => {
                return Err(ApiError::bad_request(format!(
                    "{name} cannot take the {role} seat here: {}",
                    a.missing.as_deref().unwrap_or("not ready")
                )));
            }
            None => {
                let known: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
                return Err(ApiError::bad_request(format!(
                    "the {role} seat names no agent anvil knows: '{name}' (agents: {})",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Starts a debate from `req` and runs it headless: what `POST /api/debates` answers.
pub fn start(app: &App, req: NewDebate) -> Result<Value, ApiError> {
    let question = req.question.trim();
    if question.is_empty() {
        return Err(ApiError::bad_request("a debate needs a question"));
    }
    check_seats(&req.seats)?;
    let form = Form::try_parse_from(arguments(&req, question)).map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        ApiError::bad_request(first.trim_start_matches("error: ").to_owned())
    })?;
    let ctx = crate::ctx::Ctx {
        cwd: app.home.project().to_owned(),
    };
    // Bound to a session nobody runs until the headless run takes it over with its own.
    let holder = anvil_core::agent::new_session_id();
    let (started, config_seats) =
        crate::commands::start::create(&ctx, &app.home, form.debate, Some(&holder))
            .map_err(ApiError::from_cli)?;
    let line = started.line;
    let run = super::runs::launch(app, &line).map_err(|e| {
        ApiError::new(
            e.status,
            format!(
                "{} (the debate is recorded: {line}, where its page can run it again)",
                e.message
            ),
        )
    })?;
    Ok(json!({
        "debate": line.debate,
        "line": line.line,
        "url": format!("/debates/{}", line.debate),
        "state": "running",
        "pid": run.pid,
        "log": run.log,
        "message": "started — running headless; its phases appear as they are recorded",
        // The seats the project's config chose beside the form's, said as at the terminal.
        "config_seats": config_seats,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_choices_are_options_that_cannot_be_read_as_others() {
        let req = NewDebate {
            question: String::new(),
            rounds: Some(2),
            mode: Some("analyst".into()),
            position: Some("--rounds=9".into()),
            seats: [("critic".to_owned(), "codex:gpt-5".to_owned())].into(),
        };
        let args = arguments(&req, "--help me decide");
        assert_eq!(
            args,
            [
                "--mode=analyst",
                "--rounds=2",
                "--position=--rounds=9",
                "--seat=critic=codex:gpt-5",
                "--",
                "--help me decide"
            ]
        );
        let form = Form::try_parse_from(args).unwrap();
        let options = form.debate.options;
        assert_eq!(options.question, "--help me decide");
        assert_eq!(options.rounds, Some(2));
        assert_eq!(options.position.as_deref(), Some("--rounds=9"));
        assert_eq!(options.seats, ["critic=codex:gpt-5"]);
    }
}
