//! `anvil seats`: which agents can take a seat here, and a one-turn try of one.

use anvil_core::agent;
use anvil_core::model::seats::Seat;

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
///   anvil seats
///
///   anvil seats --try codex:gpt-5.4 --prompt "Say hello in five words."
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Play one turn with this seat (AGENT[:MODEL]) in the current directory, read-only, and
    /// print what it said and cost. This sends a request to the agent's model.
    #[arg(long = "try", value_name = "AGENT[:MODEL]", value_parser = parse_seat)]
    try_seat: Option<Seat>,

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

fn parse_seat(text: &str) -> Result<Seat, String> {
    Seat::parse(text)
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    if let Some(seat) = &args.try_seat {
        return try_seat(ctx, seat, &args);
    }
    let all = agent::check_all();
    if args.json {
        let json: Vec<serde_json::Value> = all
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
        return out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json).expect("JSON")
        ));
    }
    let mut text = String::new();
    for r in &all {
        let visible = |t: &str| crate::term::visible(t).into_owned();
        match &r.version {
            Ok(version) => {
                text.push_str(&format!(
                    "{:<8} {} {version} ({})\n",
                    r.agent.name(),
                    r.agent.title(),
                    visible(&r.program)
                ));
                match &r.headless {
                    Ok(how) => {
                        text.push_str(&format!("         headless: yes, {}\n", visible(how)))
                    }
                    Err(missing) => text.push_str(&format!(
                        "         headless: not yet, {}\n",
                        visible(missing)
                    )),
                }
                text.push_str(&format!("         in a seat: {}\n", r.agent.allowed()));
            }
            Err(agent::SeatError::Missing { reason, .. }) => text.push_str(&format!(
                "{:<8} not installed: cannot run {} ({})\n",
                r.agent.name(),
                visible(&r.program),
                visible(reason)
            )),
            Err(e) => text.push_str(&format!(
                "{:<8} cannot run: {}\n",
                r.agent.name(),
                visible(&e.to_string())
            )),
        }
    }
    out(&text)
}

fn try_seat(ctx: &Ctx, seat: &Seat, args: &Args) -> Result<(), CliError> {
    let guard = std::env::current_exe().ok();
    let turn = agent::Turn {
        cwd: &ctx.cwd,
        prompt: &args.prompt,
        resume: args.resume.as_deref(),
        model: seat.model.as_deref(),
        timeout: std::time::Duration::from_secs(args.timeout),
        role: "try",
        guard: guard.as_deref(),
    };
    let played = agent::play(seat.agent, &turn).map_err(|e| {
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
        return out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json).expect("JSON")
        ));
    }
    out(&format!(
        "{}\n\n{} {} · {} · {} in, {} out, {} cached · {:.1} s · session {}\n",
        crate::term::visible(played.text.trim()),
        played.agent.name(),
        played.agent_version.as_deref().unwrap_or("?"),
        played.model.as_deref().unwrap_or("default model"),
        played.tokens.input,
        played.tokens.output,
        played.tokens.cache_read,
        played.duration_ms as f64 / 1000.0,
        played.session
    ))
}
