//! The seats of a debate that a Claude Code session drives, played by its Stop hook (which
//! hands over its clock: [`HookClock`]).
//!
//! When the phase that comes out next belongs to an external seat (`/anvil "…" --seat
//! critic=codex`), the host session does not play it and is given no turn for it: the Stop
//! hook, once the host's phase is recorded, runs the seat's agent itself — the same agent and
//! the same recording as `anvil run` ([`super::play`]; the seat's text is cleaned of
//! credentials there) — goes on while the next phase is a seat's too, and only then hands the
//! host its next prompt, which brings the seats' recorded texts in full. A seat's phase costs
//! no continuation of Claude Code's block cap.
//!
//! Two clocks bound a turn: the seat's own timeout (`[seats] timeout`, ten minutes by default)
//! and what is left of the hook's (the `timeout` of anvil's Stop hook entry, which `anvil
//! install` sets to [`HookClock::installed`]: Claude Code kills a hook past it), less [`MARGIN`] to record and answer. A turn that no longer fits is not
//! started: the person is told, and the next stop plays it.
//!
//! A seat that fails (its agent missing, failing, timing out or silent) records nothing: the
//! line stays where it was, the person is told which seat failed and what its agent said last
//! (cleaned of credentials, as all an agent says, by [`super::take_in`]),
//! and the next stop (or `anvil run --line`) tries again. With `--fallback host` (or `[seats]
//! fallback = "host"`) the host is handed the seat's prompt instead, and the record says so.
//! A hook killed meanwhile (Ctrl+C, its timeout) takes the agent with it
//! ([`crate::agent::guard`]) and has recorded nothing of the seat's phase.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{Out, Turned};
use crate::error::DebateError;
use crate::home::{Home, LineRef};
use crate::line::stop::Reply;

/// Time kept back from the hook's timeout to record a seat's text and answer Claude Code.
pub const MARGIN: Duration = Duration::from_secs(10);
/// The least time a seat's turn is started with; less than this left, it waits for the next
/// stop.
pub const SHORTEST_TURN: Duration = Duration::from_secs(20);

/// The hook's own clock: when it started and how long its client lets it run.
#[derive(Debug, Clone)]
pub struct HookClock {
    pub began: Instant,
    pub timeout: Duration,
    /// The file whose entry sets the timeout (`None`: the client's default).
    pub set_in: Option<PathBuf>,
    /// The timeout `anvil install` gives the hook, which leaves room for seats' turns.
    pub installed: Duration,
}

impl HookClock {
    /// What is left for a seat's turn: the hook's timeout, less what has gone and [`MARGIN`].
    fn left(&self) -> Duration {
        self.timeout
            .saturating_sub(self.began.elapsed())
            .saturating_sub(MARGIN)
    }

    /// The hook's timeout, for people: `1800 s (in .claude/settings.json)`.
    fn describe(&self, home: &Home) -> String {
        match &self.set_in {
            Some(path) => format!(
                "{} s, in {}",
                self.timeout.as_secs(),
                path.strip_prefix(home.project()).unwrap_or(path).display()
            ),
            None => format!("{} s, Claude Code's default", self.timeout.as_secs()),
        }
    }
}

/// Plays the seats' phases that are due on `line` (`due` is the reply that said a seat's
/// phase is out), one after the other, until the host's turn, the end, a failure or the
/// hook's time; returns what the hook answers, with a line for the person per seat played.
/// `config` is the hook run's (the seats' timeout and fallback, and whether credentials are
/// kept).
/// Cold: most stops play no seat, and the hook starts at every turn of every session (its
/// hot path stays together, apart from the seats' code).
#[cold]
#[inline(never)]
pub fn play(
    home: &Home,
    line: &LineRef,
    session: &str,
    clock: &HookClock,
    due: Reply,
    lazy: &crate::model::config::Lazy,
) -> Result<Reply, DebateError> {
    let unread = crate::model::config::Config::default();
    let config = lazy.get().unwrap_or(&unread);
    let seat_timeout = config.seat_timeout();
    let guard = std::env::current_exe().ok();
    let mut played_lines: Vec<String> = Vec::new();
    let mut reply = due;
    while reply.is_seat() {
        // The phases due at once that seats play (a round drafted blind, triage, the vote)
        // are played in parallel and recorded in order; else the one phase that is out.
        let mut batch = super::due(home, line, None)?;
        if batch.len() < 2 {
            let Some(out) = super::out(home, line)? else {
                // Played meanwhile by another player (a second hook of the same stop): what is
                // out now is handed out, as to a repeated stop.
                reply = crate::line::stop::stop(home, line, crate::line::stop::Stop::of(session))?;
                if reply.is_seat() {
                    break;
                }
                continue;
            };
            batch = vec![out];
        }
        let left = clock.left();
        if left < SHORTEST_TURN {
            reply = no_time(home, line, &batch[0], clock, !played_lines.is_empty());
            break;
        }
        let timeout = seat_timeout.min(left);
        let turned = match batch.as_slice() {
            [out] => vec![(
                out.clone(),
                super::play(
                    home,
                    line,
                    session,
                    out,
                    guard.as_deref(),
                    timeout,
                    lazy,
                    None,
                )?,
            )],
            _ => super::play_due(home, line, session, &batch, guard.as_deref(), timeout, lazy)?,
        };
        for (out, turned) in turned {
            let cut_short = timeout < seat_timeout;
            let (next, played) = answer(home, line, &out, turned, clock, cut_short, config)?;
            played_lines.extend(played);
            reply = next;
        }
    }
    Ok(with_first(reply, &played_lines))
}

/// What the hook answers after one seat's turn (`turned`, of the phase `out`), with the line
/// for the person when the seat played; `cut_short` says the hook's own clock bounded it.
fn answer(
    home: &Home,
    line: &LineRef,
    out: &Out,
    turned: Turned,
    clock: &HookClock,
    cut_short: bool,
    config: &crate::model::config::Config,
) -> Result<(Reply, Option<String>), DebateError> {
    Ok(match turned {
        Turned::Played { played, reply } => (reply, Some(played_line(out, &played))),
        Turned::Failed { error, note } => (
            failed(home, line, out, &error, clock, cut_short, config)?
                .with_notes(&Vec::from_iter(note)),
            None,
        ),
        Turned::Busy => (
            Reply::message(format!(
                "anvil {line}: {} is being played by {} for another process (a second Stop \
                 hook, or `anvil run`); its text reaches this session with the next prompt",
                out.label, out.seat
            )),
            None,
        ),
    })
}

/// `anvil: critic played by codex (gpt-5.4), 12 s`.
fn played_line(out: &Out, played: &crate::agent::Played) -> String {
    let who = match (&played.model, &out.seat.model) {
        (Some(model), _) | (None, Some(model)) => format!("{} ({model})", played.agent),
        (None, None) => played.agent.to_string(),
    };
    let role = match &out.voice {
        Some(voice) => format!("{} ({voice})", out.role.name()),
        None => out.role.name().to_owned(),
    };
    format!(
        "anvil: {role} played by {who}, {} s",
        played.duration_ms.div_ceil(1000)
    )
}

/// The answer when a seat's turn no longer fits in this stop.
fn no_time(home: &Home, line: &LineRef, out: &Out, clock: &HookClock, played: bool) -> Reply {
    let notice = if played {
        format!(
            "anvil {line}: {} ({}) is next, and this stop has too little of its time left \
             for the turn (the Stop hook's timeout is {}): say `continue` and the next stop \
             plays it",
            out.label,
            out.seat,
            clock.describe(home)
        )
    } else {
        format!(
            "anvil {line}: {} is {}'s seat, and the Stop hook's timeout ({}) leaves no time \
             for a seat's turn: run `anvil install` (it sets {} s), then say `continue`; or \
             play the line with `anvil run --line {line}`",
            out.label,
            out.seat,
            clock.describe(home),
            clock.installed.as_secs()
        )
    };
    Reply::message(notice)
}

/// The answer when a seat's agent failed: the host takes the seat over when the debate or the
/// config says so, else the person is told which seat failed and why, and the line waits.
fn failed(
    home: &Home,
    line: &LineRef,
    out: &Out,
    e: &crate::agent::SeatError,
    clock: &HookClock,
    cut_short: bool,
    config: &crate::model::config::Config,
) -> Result<Reply, DebateError> {
    let mut why = e.to_string();
    if cut_short && matches!(e, crate::agent::SeatError::TimedOut { .. }) {
        why.push_str(&format!(
            " (cut short by the Stop hook's own timeout, {}",
            clock.describe(home)
        ));
        if clock.timeout < clock.installed {
            why.push_str(&format!(
                "; `anvil install` sets it to {} s",
                clock.installed.as_secs()
            ));
        }
        why.push(')');
    }
    let state = crate::line::transaction::view(home, line)?;
    if state.setup.seats.fallback.is_some() || config.seat_fallback() {
        let prompt = super::fall_back(home, line, &format!("{} failed: {why}", out.seat))?;
        return Ok(Reply::block(
            prompt,
            format!(
                "anvil {line}: the seat of {} ({}) failed: {why}; this session plays it \
                 (--fallback host)",
                out.label, out.seat
            ),
        ));
    }
    Ok(Reply::message(format!(
        "anvil {line}: the seat of {} ({}) failed: {why}. Nothing of that phase was recorded \
         and the debate waits there: say `continue` to try the seat again, or run `anvil run \
         --line {line}` (with `--fallback host`, the host plays it)",
        out.label, out.seat
    )))
}

/// `reply`, with `lines` shown before its own notice.
fn with_first(reply: Reply, lines: &[String]) -> Reply {
    if lines.is_empty() {
        return reply;
    }
    let before = |notice: String| {
        let mut all = lines.join("\n");
        if !notice.is_empty() {
            all.push('\n');
            all.push_str(&notice);
        }
        all
    };
    reply.map_notice(before)
}
