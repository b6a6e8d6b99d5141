//! `anvil seats`: which agents can take a seat here, and a one-turn try of one.

use anvil_core::agent::endpoint::{Defs, Endpoint};
use anvil_core::agent::{self, Agent as _};
use anvil_core::model::seats::Seat;
use anvil_core::model::secrets::Intake;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;

/// List the agents that can play a role of a debate (`--seat ROLE=AGENT[:MODEL]`): whether
/// each is installed, its version, whether it looks able to run headless here (signed in, or
/// given a model provider), and what it may do in a seat (its read-only or plan mode).
///
/// Each agent runs as you configured it; anvil never writes its configuration. The binary is
/// found on PATH by the agent's name, or named in $ANVIL_<AGENT>_BIN ($ANVIL_CODEX_BIN, …).
///
/// Endpoints (a model behind an OpenAI-compatible API, played by anvil itself: the presets,
/// and those named in [agents.NAME] of .anvil/config.toml) are listed with where their turns
/// go, whether their key's variable is set, and whether they answer (GET BASE_URL/models,
/// which costs nothing).
///
///   anvil seats
///
///   anvil seats --try codex:gpt-5.4 --prompt "Say hello in five words."
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Play one turn with this seat (AGENT[:MODEL]) in the current directory, read-only, and
    /// print what it said and cost. This sends a request to the agent's model.
    #[arg(long = "try", value_name = "AGENT[:MODEL]")]
    try_seat: Option<String>,

    /// The prompt for --try.
    #[arg(
        long,
        requires = "try_seat",
        default_value = "Reply with one short sentence."
    )]
    prompt: String,

    /// With --try: resume this session of the agent instead of starting one.
    #[arg(long, requires = "try_seat", value_name = "SESSION")]
    resume: Option<String>,

    /// With --try: stop the agent after this many seconds.
    #[arg(
        long,
        requires = "try_seat",
        value_name = "SECONDS",
        default_value_t = 600
    )]
    timeout: u64,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// The project's `[agents]` (none outside a project).
fn defs(ctx: &Ctx) -> Result<Defs, CliError> {
    match anvil_core::home::Home::find(&ctx.cwd) {
        Some(home) => Ok(anvil_core::model::config::Config::load(&home)?.agents),
        None => Ok(Defs::new()),
    }
}

/// An endpoint that can take a seat here, and whether it would.
struct Reach {
    agent: &'static dyn agent::Agent,
    endpoint: &'static Endpoint,
    /// Moved or named by `.anvil/config.toml`.
    configured: bool,
    key: Result<String, String>,
    answers: Result<String, String>,
}

impl Reach {
    fn ready(&self) -> bool {
        self.key.is_ok() && self.answers.is_ok()
    }
}

/// The endpoints: each preset as the config leaves it, then those the config names; each
/// asked whether it answers, all at once.
fn endpoints(defs: &Defs) -> Result<Vec<Reach>, CliError> {
    let presets = agent::AGENTS.iter().filter_map(|a| a.endpoint());
    let mut names: Vec<&str> = presets.map(|p| p.name()).collect();
    let named: Vec<&str> = defs
        .keys()
        .map(String::as_str)
        .filter(|n| !names.contains(n))
        .collect();
    names.extend(named);
    let mut found = Vec::new();
    for name in names {
        let endpoint = agent::endpoint::resolve(name, defs)
            .map_err(CliError::new)?
            .expect("a preset or a name of [agents]");
        found.push((endpoint, !endpoint.is_preset()));
    }
    let handles: Vec<_> = found
        .iter()
        .map(|&(endpoint, _)| std::thread::spawn(move || crate::endpoint::probe(endpoint)))
        .collect();
    Ok(found
        .into_iter()
        .zip(handles)
        .map(|((endpoint, configured), probe)| Reach {
            agent: endpoint,
            endpoint,
            configured,
            key: endpoint.signed_in(),
            answers: probe
                .join()
                .unwrap_or_else(|_| Err("the probe failed".to_owned())),
        })
        .collect())
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let defs = defs(ctx)?;
    if let Some(seat) = &args.try_seat {
        let seat = Seat::parse_with(seat, &defs).map_err(|e| CliError::new(e).usage())?;
        return try_seat(ctx, &seat, &args);
    }
    let reach = std::thread::spawn(move || endpoints(&defs));
    // Why an agent cannot run quotes the agent: cleaned of credentials before it is shown.
    let mut intake = intake(ctx);
    let all: Vec<_> = anvil_core::seat::check_all(&mut intake)
        .into_iter()
        .filter(|r| r.agent.endpoint().is_none())
        .collect();
    let mut reach = reach
        .join()
        .unwrap_or_else(|_| Err(CliError::new("the endpoints' check failed")))?;
    // So does what an endpoint answered to the probe.
    for r in &mut reach {
        if let Err(why) = &mut r.answers {
            intake.clean_in_place("the endpoint's answer", why);
        }
    }
    if args.json {
        let mut json: Vec<serde_json::Value> = all
            .iter()
            .map(|r| {
                serde_json::json!({
                    "agent": r.agent.name(),
                    "program": r.program,
                    "installed": r.version.is_ok(),
                    "version": r.version.as_ref().ok(),
                    "error": r.version.as_ref().err().map(ToString::to_string),
                    "headless": r.headless.as_ref().ok(),
                    "headless_missing": r.headless.as_ref().err(),
                    "ready": r.ready(),
                    "allowed": r.agent.allowed(),
                })
            })
            .collect();
        json.extend(reach.iter().map(|r| {
            serde_json::json!({
                "agent": r.agent.name(),
                "endpoint": r.endpoint.base_url(),
                "configured": r.configured,
                "key_env": r.endpoint.key_env(),
                "key": r.key.as_ref().ok(),
                "key_missing": r.key.as_ref().err(),
                "answers": r.answers.as_ref().ok(),
                "not_answering": r.answers.as_ref().err(),
                "ready": r.ready(),
                "allowed": r.agent.allowed(),
            })
        }));
        return out(&format!("{}\n", crate::term::json(&json)));
    }
    let mut text = String::new();
    for r in &all {
        let visible = |t: &str| crate::term::visible(t).into_owned();
        match &r.version {
            Ok(version) => {
                text.push_str(&format!(
                    "{:<10} {} {version} ({})\n",
                    r.agent.name(),
                    r.agent.title(),
                    visible(&r.program)
                ));
                match &r.headless {
                    Ok(how) => {
                        text.push_str(&format!("           headless: yes, {}\n", visible(how)))
                    }
                    Err(missing) => text.push_str(&format!(
                        "           headless: not yet, {}\n",
                        visible(missing)
                    )),
                }
                text.push_str(&format!("           in a seat: {}\n", r.agent.allowed()));
            }
            Err(agent::SeatError::Missing { reason, .. }) => text.push_str(&format!(
                "{:<10} not installed: cannot run {} ({})\n",
                r.agent.name(),
                visible(&r.program),
                visible(reason)
            )),
            Err(e) => text.push_str(&format!(
                "{:<10} cannot run: {}\n",
                r.agent.name(),
                visible(&e.to_string())
            )),
        }
    }
    for r in &reach {
        let visible = |t: &str| crate::term::visible(t).into_owned();
        text.push_str(&format!(
            "{:<10} {} at {}{}\n",
            r.agent.name(),
            r.agent.title(),
            visible(r.endpoint.base_url()),
            if r.configured {
                " (from .anvil/config.toml)"
            } else {
                ""
            }
        ));
        match &r.key {
            Ok(how) => text.push_str(&format!("           key: {}\n", visible(how))),
            Err(missing) => {
                text.push_str(&format!("           key: not yet, {}\n", visible(missing)))
            }
        }
        match &r.answers {
            Ok(how) => text.push_str(&format!("           answers: yes, {}\n", visible(how))),
            Err(why) => text.push_str(&format!("           answers: no, {}\n", visible(why))),
        }
        if !r.ready() && !r.endpoint.hint().is_empty() {
            text.push_str(&format!("           to start: {}\n", r.endpoint.hint()));
        }
        text.push_str(&format!("           in a seat: {}\n", r.agent.allowed()));
    }
    out(&text)
}

/// The credential intake of the project here, or one that redacts outside a project.
fn intake(ctx: &Ctx) -> Intake {
    ctx.home()
        .map_or_else(|_| Intake::default(), |home| Intake::new(home.root()))
}

fn try_seat(ctx: &Ctx, seat: &Seat, args: &Args) -> Result<(), CliError> {
    let guard = std::env::current_exe().ok();
    // The project's `[seats] env`, when there is a project and its config reads.
    let config = ctx
        .home()
        .ok()
        .and_then(|home| anvil_core::model::config::Config::load(&home).ok())
        .unwrap_or_default();
    let turn = agent::Turn {
        pass_env: config.seat_env(),
        watch: None,
        cwd: &ctx.cwd,
        prompt: &args.prompt,
        resume: args.resume.as_deref(),
        model: seat.model.as_deref(),
        timeout: std::time::Duration::from_secs(args.timeout),
        role: "try",
        guard: guard.as_deref(),
    };
    // What the agent said is outside text: cleaned of credentials as a debate's seat is.
    let mut intake = intake(ctx);
    let said = anvil_core::seat::take_in(agent::play(seat.agent, &turn), &mut intake);
    if let Some(note) = intake.note() {
        crate::output::say(&format!("anvil: note: {note}"));
    }
    let played = said.map_err(|e| {
        CliError::new(format!("the seat {seat} failed: {e}")).hint(format!(
            "`anvil seats` says whether {} can run here",
            seat.agent
        ))
    })?;
    let json = serde_json::json!({
        "agent": played.agent.name(),
        "session": played.session,
        "agent_version": played.agent_version,
        "model": played.model,
        "tokens": {
            "input": played.tokens.input,
            "output": played.tokens.output,
            "cache_read": played.tokens.cache_read,
            "cache_write": played.tokens.cache_write,
        },
        "cost_usd": played.cost.map(|c| c.as_f64()),
        "duration_ms": played.duration_ms,
        "text": played.text,
    });
    if args.json {
        return out(&format!("{}\n", crate::term::json(&json)));
    }
    out(&crate::term::visible(&format!(
        "{}\n\n{} {} · {} · {} in, {} out, {} cached · {:.1} s · session {}\n",
        played.text.trim(),
        played.agent.name(),
        played.agent_version.as_deref().unwrap_or("?"),
        played.model.as_deref().unwrap_or("default model"),
        played.tokens.input,
        played.tokens.output,
        played.tokens.cache_read,
        played.duration_ms as f64 / 1000.0,
        played.session
    )))
}
