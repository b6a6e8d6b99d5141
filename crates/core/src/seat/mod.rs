//! Seats: a role of a debate played by another agent, headless, read-only, in a session of its
//! own. Who plays each role is part of the debate's setup ([`crate::model::seats`]); the agents
//! and how one turn of each runs are [`crate::agent`]'s. This room plays a line's seats: the
//! phase that is out for an agent, playing it (its text recorded with who played it and what
//! it cost), and the host taking over a seat that failed. `anvil run` and the Stop hook of a
//! Claude Code session ([`hook`], handed the hook's clock) both play seats through [`play`].
//!
//! Everything an agent says enters anvil here, through one credential intake ([`take_in`]): its
//! reply, the model, version and session it reports, and, when it fails, its last words, which
//! become the hook's notice, `anvil run`'s error and, with `--fallback host`, the
//! `Anvil-Seat-Fallback` trailer ([`fall_back`] cleans the reason again, as the door to the
//! record). Nothing an agent said reaches a trailer, a notice or a terminal uncleaned.
//!
//! A seat's turn takes minutes and never holds the line's lock meanwhile. Its own lock (the
//! line's `seat.lock`, held for the turn) keeps a second player away — Claude Code running the
//! hook of two settings files, a hook and an `anvil run` — and the text is recorded only onto
//! the phase it was given: if the line moved meanwhile, nothing is recorded.

#[cfg(test)]
mod docs;
pub mod hook;
#[cfg(test)]
mod tests;

use crate::agent::{Played, SeatError};
use crate::error::{DebateError, io};
use crate::home::{Home, LineRef};
use crate::line::stop::{self, Reply, Stop};
use crate::line::transaction::{self, Options, Plan};
use crate::model::machine::{self, Cue};
use crate::model::provenance::Provenance;
use crate::model::seats::Seat;
use crate::model::secrets::Intake;
use crate::model::state::{Role, Status};
use crate::record::schema::{PhaseFile, phase_file};
use crate::record::store::Record;
use crate::review::history::LineHistory;

/// A phase that is out for a seat.
#[derive(Debug, Clone)]
pub struct Out {
    pub seat: Seat,
    pub role: Role,
    pub round: u32,
    pub voice: Option<String>,
    /// The prompt it was given, as the record holds it.
    pub prompt: String,
    /// The agent's session from this role's last turn, to resume.
    pub resume: Option<String>,
    /// `round 2/3 · critic`, for people.
    pub label: String,
    /// The line's step when the phase was handed out: its text is recorded only there.
    pub step: u32,
}

impl Out {
    /// The agent's turn that plays this phase, in `cwd`, under `timeout`.
    fn turn<'a>(
        &'a self,
        cwd: &'a std::path::Path,
        timeout: std::time::Duration,
        pass_env: &'a [String],
        guard: Option<&'a std::path::Path>,
        watch: Option<&'a (dyn Fn(crate::agent::Live) + Sync)>,
    ) -> crate::agent::Turn<'a> {
        crate::agent::Turn {
            pass_env,
            watch,
            cwd,
            prompt: &self.prompt,
            resume: self.resume.as_deref(),
            model: self.seat.model.as_deref(),
            timeout,
            role: self.role.name(),
            guard,
        }
    }
}

/// The phase that is out on `line`, if a seat plays it (and the host has not taken it over).
pub fn out(home: &Home, line: &LineRef) -> Result<Option<Out>, DebateError> {
    let state = transaction::view(home, line)?;
    if state.progress.status != Status::Active {
        return Ok(None);
    }
    let cue = machine::current_cue(&state.setup, &state.progress);
    let Some(seat) = cue.seat(&state).cloned() else {
        return Ok(None);
    };
    let record = Record::open(&home.record_dir())?;
    let history = LineHistory::load(&record, line)?;
    let prompt = prompt_out(home, &record, &history, &state, &cue)?;
    Ok(Some(Out {
        resume: last_session(&history, &cue, &seat),
        label: state.standing(),
        step: state.progress.step,
        seat,
        role: cue.role,
        round: cue.round,
        voice: cue.voice,
        prompt,
    }))
}

/// The prompt of the phase that is out (`cue`), as the record holds it (the commit before it
/// wrote it), else rendered in full now.
fn prompt_out(
    home: &Home,
    record: &Record,
    history: &LineHistory,
    state: &crate::model::state::State,
    cue: &Cue,
) -> Result<String, DebateError> {
    let recorded = match history.entries.last() {
        Some(tip) => record.read(
            tip.commit,
            &phase_file(state.progress.step + 1, cue.role.name(), PhaseFile::Prompt),
        )?,
        None => None,
    };
    match recorded {
        Some(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        None => stop::render_prompt(home, state, cue, true, ""),
    }
}

/// The agent session that played this role (this voice) on the line last, by this agent.
fn last_session(history: &LineHistory, cue: &Cue, seat: &Seat) -> Option<String> {
    history
        .entries
        .iter()
        .rev()
        .find(|e| {
            e.role == Some(cue.role)
                && e.meta.voice == cue.voice
                && e.meta.agent.as_deref() == Some(seat.agent.name())
        })
        .and_then(|e| e.meta.agent_session.clone())
}

/// The phases due at once on `line` ([`machine::due`]: a round drafted blind, the triage
/// answers, the ballots) that can be played now, each with the prompt it is given, in the
/// order they are recorded: the leading ones a seat plays. `host` plays a phase without a seat
/// when it can run as a seat does (`anvil run`'s one-shot `claude -p`); without it the list
/// stops at the first phase the host session plays (the Stop hook: the host is the session
/// itself). Empty when nothing is due for a seat; one phase alone is [`out`]'s.
pub fn due(home: &Home, line: &LineRef, host: Option<&Seat>) -> Result<Vec<Out>, DebateError> {
    let state = transaction::view(home, line)?;
    if state.progress.status != Status::Active {
        return Ok(Vec::new());
    }
    let cues = machine::due(&state.setup, &state.progress);
    if cues.len() < 2 {
        return Ok(Vec::new());
    }
    let record = Record::open(&home.record_dir())?;
    let history = LineHistory::load(&record, line)?;
    let label = |cue: &Cue| {
        let mut label = crate::model::state::phase_label(cue.role, cue.round, state.setup.rounds);
        if let Some(voice) = &cue.voice {
            label.push_str(&format!(" ({voice})"));
        }
        label
    };
    let mut outs = Vec::new();
    // The later phases are rendered from the line as it stands: blind by construction (a
    // round's draft sees the rounds before, a triage answer nothing, a ballot the final
    // phases), as each will be when it is out.
    let mut later = state.clone();
    later.seat_fallback = None;
    for (i, cue) in cues.iter().enumerate() {
        let step = state.progress.step + u32::try_from(i).unwrap_or(u32::MAX);
        if i == 0 && state.seat_fallback.is_some() {
            // The host took this phase over: it is the session's, never a batch's.
            break;
        }
        let seat = if i == 0 {
            cue.seat(&state)
        } else {
            cue.seat(&later)
        };
        // The first phase's prompt is out already (recorded with the commit before it); the
        // others are rendered now. A phase of a batch runs in a fresh session: its prompt
        // holds all it may see. The host's, in the words of a participant in a seat.
        let (seat, prompt) = match (seat, host) {
            (Some(seat), _) if i == 0 => (seat, prompt_out(home, &record, &history, &state, cue)?),
            (Some(seat), _) => (seat, stop::render_prompt(home, &later, cue, true, "")?),
            (None, Some(host)) => {
                let mut hosted = later.clone();
                let key = cue
                    .voice
                    .clone()
                    .unwrap_or_else(|| cue.role.name().to_owned());
                hosted.setup.seats.roles.insert(key, host.clone());
                (host, stop::render_prompt(home, &hosted, cue, true, "")?)
            }
            (None, None) => break,
        };
        outs.push(Out {
            seat: seat.clone(),
            role: cue.role,
            round: cue.round,
            voice: cue.voice.clone(),
            prompt,
            resume: None,
            label: label(cue),
            step,
        });
    }
    Ok(outs)
}

/// Plays the phases `outs` ([`due`]) at once, each agent in a thread of its own, and records
/// them in order, each with the prompt it had; the next one's recorded prompt is the one it
/// was given (a line that turned elsewhere meanwhile, a steered synthesis, records no more).
/// Returns each phase with how it went, in order, up to the first that did not play (a
/// failure: nothing of it or after it is recorded).
#[allow(clippy::too_many_arguments)]
pub fn play_due(
    home: &Home,
    line: &LineRef,
    session: &str,
    outs: &[Out],
    guard: Option<&std::path::Path>,
    timeout: std::time::Duration,
    config: &crate::model::config::Lazy,
) -> Result<Vec<(Out, Turned)>, DebateError> {
    let Some(first) = outs.first() else {
        return Ok(Vec::new());
    };
    let lock = home.seat_lock_path(line);
    let Some(_held) = crate::fsutil::hold(&lock, std::time::Duration::from_millis(20))
        .map_err(io("cannot lock", &lock))?
    else {
        return Ok(vec![(first.clone(), Turned::Busy)]);
    };
    let pass_env = config.get().map_or(&[][..], |c| c.seat_env());
    let cwd = home.project();
    let said: Vec<Result<Played, SeatError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = outs
            .iter()
            .map(|out| {
                scope.spawn(move || {
                    let turn = out.turn(cwd, timeout, pass_env, guard, None);
                    crate::agent::play(out.seat.agent, &turn)
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(outs)
            .map(|(h, out)| {
                h.join().unwrap_or_else(|_| {
                    Err(SeatError::Empty {
                        agent: out.seat.agent,
                        last_words: "the thread that played the seat panicked".to_owned(),
                    })
                })
            })
            .collect()
    });
    let cues: Vec<Cue> = outs
        .iter()
        .map(|o| Cue {
            role: o.role,
            round: o.round,
            voice: o.voice.clone(),
            steering: Vec::new(),
        })
        .collect();
    let mut intake = Intake::with_config(config);
    let mut done = Vec::new();
    for (i, (out, said)) in outs.iter().zip(said).enumerate() {
        let next = outs.get(i + 1).map(|o| (&cues[i + 1], o.prompt.as_str()));
        let stop = Stop {
            at_step: Some(out.step),
            at_cue: Some(&cues[i]),
            next_prompt: next,
            ..Stop::of(session)
        };
        let turned = take_in_and_record(home, line, said, stop, &mut intake)?;
        let failed = matches!(turned, Turned::Failed { .. });
        done.push((out.clone(), turned));
        if failed {
            break;
        }
        // The line turned elsewhere (a steered synthesis, another player): no more is its.
        let now = transaction::view(home, line)?;
        let expected = outs.get(i + 1).map(|o| o.step);
        if expected.is_some()
            && (now.progress.step != expected.unwrap_or_default()
                || !machine::current_cue(&now.setup, &now.progress).same_phase(&cues[i + 1]))
        {
            break;
        }
    }
    Ok(done)
}

/// A seat's text recorded, with what `stop` says of it (what it cost, the next phase's prompt
/// when it was drafted already, the step it answers: a line that moved meanwhile records
/// nothing and answers where it stands), cleaned through `intake`, then bounded
/// ([`bounded`]).
fn record_at(
    home: &Home,
    line: &LineRef,
    stop: Stop<'_>,
    text: &str,
    intake: &mut Intake,
) -> Result<Reply, DebateError> {
    // Cleaned before the bound cuts it: a credential cut in half is still one.
    let text = intake.clean(SEAT_TEXT, text);
    stop::record_cleaned(
        home,
        line,
        SEAT_TEXT,
        &bounded(&text),
        Stop { seat: true, ..stop },
        intake,
    )
}

/// The most of a seat's reply that is recorded, in bytes: as much as the material of a debate
/// ([`crate::review::context::MAX_BYTES`]). Every later prompt carries the phase, the host's
/// included, so an agent that answers megabytes would otherwise be handed on whole.
pub const MAX_REPLY: usize = crate::review::context::MAX_BYTES;

/// `text`, cut at a line's end to fit [`MAX_REPLY`], with the cut said where it is.
fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_REPLY {
        return text.into();
    }
    let mut keep = MAX_REPLY;
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    let keep = text[..keep].rfind('\n').map_or(keep, |at| at + 1);
    format!(
        "{}\n[… cut by anvil: the seat's reply was {} bytes; the first {keep} are kept]\n",
        &text[..keep],
        text.len()
    )
    .into()
}

/// The host takes over the seat of the phase that is out, which failed (`--fallback host`):
/// the phase is recorded with `why` when the host's text arrives. `why` quotes the agent, so it
/// is cleaned of credentials here, where it enters the line's state and then the record (an
/// error [`take_in`] cleaned already passes unchanged). Returns the prompt for the host, in
/// full.
pub fn fall_back(home: &Home, line: &LineRef, why: &str) -> Result<String, DebateError> {
    let mut intake = Intake::new(home.root());
    let why = intake.clean("the seat's fallback reason", why);
    if let Some(note) = intake.note() {
        transaction::print_notes(&[note]);
    }
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        state.seat_fallback = Some(why.clone().into_owned());
        state.informed_session = None;
        let cue = machine::current_cue(&state.setup, &state.progress);
        let transcript = stop::read_transcript(home, line)?;
        let prompt = stop::render_prompt(home, &state, &cue, true, &transcript)?;
        Ok(Plan::Live(Box::new(state), prompt))
    })?;
    Ok(done.value)
}

/// How one seat's turn went ([`play`]).
#[derive(Debug)]
pub enum Turned {
    /// The agent answered and its text is recorded; `reply` is what recording it answered
    /// (the next prompt for the host, another seat's turn, the end).
    Played { played: Played, reply: Reply },
    /// The agent failed: nothing was recorded, the line stands where it stood. The error's
    /// last words are cleaned of credentials; `note` says what was replaced, if anything.
    Failed {
        error: SeatError,
        note: Option<String>,
    },
    /// Another process plays this seat now (it holds the seat's lock): nothing was done.
    Busy,
}

/// Plays the phase that is out (`out`) with its seat's agent, under `timeout`, and records
/// what it said; `guard` is the program that guards the agent ([`crate::agent::Turn::guard`]);
/// `config` is the run's (whether credentials in the text are kept); `watch` is handed what the
/// agent says while it plays ([`crate::agent::Turn::watch`]), for whoever shows it.
#[allow(clippy::too_many_arguments)]
pub fn play(
    home: &Home,
    line: &LineRef,
    session: &str,
    out: &Out,
    guard: Option<&std::path::Path>,
    timeout: std::time::Duration,
    config: &crate::model::config::Lazy,
    watch: Option<&(dyn Fn(crate::agent::Live) + Sync)>,
) -> Result<Turned, DebateError> {
    let lock = home.seat_lock_path(line);
    let Some(_held) = crate::fsutil::hold(&lock, std::time::Duration::from_millis(20))
        .map_err(io("cannot lock", &lock))?
    else {
        return Ok(Turned::Busy);
    };
    let pass_env = config.get().map_or(&[][..], |c| c.seat_env());
    let turn = out.turn(home.project(), timeout, pass_env, guard, watch);
    let said = crate::agent::play(out.seat.agent, &turn);
    let stop = Stop {
        at_step: Some(out.step),
        ..Stop::of(session)
    };
    take_in_and_record(home, line, said, stop, &mut Intake::with_config(config))
}

/// What a seat's turn comes to: what it `said`, taken in through `intake`, then recorded as
/// `stop` says, with its provenance; or, when it failed, its failure with the intake's note.
fn take_in_and_record(
    home: &Home,
    line: &LineRef,
    said: Result<Played, SeatError>,
    stop: Stop<'_>,
    intake: &mut Intake,
) -> Result<Turned, DebateError> {
    let played = match take_in(said, intake) {
        Ok(played) => played,
        Err(error) => {
            return Ok(Turned::Failed {
                error,
                note: intake.note(),
            });
        }
    };
    let reply = record_at(
        home,
        line,
        Stop {
            provenance: Some(&provenance(&played)),
            ..stop
        },
        &played.text,
        intake,
    )?;
    Ok(Turned::Played { played, reply })
}

/// What an agent said in a turn, taken in through `intake`: its reply, the model, version and
/// session it reports; or, when it failed, its last words. Every caller that runs a seat's turn
/// passes what came back through here before it records, shows or quotes any of it.
pub fn take_in(said: Result<Played, SeatError>, intake: &mut Intake) -> Result<Played, SeatError> {
    match said {
        Ok(mut played) => {
            intake.clean_in_place(SEAT_TEXT, &mut played.text);
            intake.clean_option("the seat's model name", &mut played.model);
            intake.clean_option("the seat's version", &mut played.agent_version);
            intake.clean_in_place("the seat's session", &mut played.session);
            Ok(played)
        }
        Err(error) => Err(take_in_failure(error, intake)),
    }
}

/// A seat's failure taken in through `intake`: its last words (or why its program would not
/// start) cleaned of credentials. [`take_in`] uses it; so does whatever shows why an agent
/// cannot take a seat (`anvil seats`).
pub fn take_in_failure(mut error: SeatError, intake: &mut Intake) -> SeatError {
    const LAST_WORDS: &str = "the seat's last words";
    match &mut error {
        SeatError::Failed { last_words, .. }
        | SeatError::TimedOut { last_words, .. }
        | SeatError::Empty { last_words, .. } => intake.clean_in_place(LAST_WORDS, last_words),
        // Why the program could not start: the system's words, and the path the person
        // configured.
        SeatError::Missing { reason, .. } => intake.clean_in_place(LAST_WORDS, reason),
        // Why anvil would not run it: it quotes the model or session the config named.
        SeatError::Refused { reason, .. } => intake.clean_in_place(LAST_WORDS, reason),
    }
    error
}

/// Which agents could take a seat here ([`crate::agent::check_all`]), each failure's words
/// taken in through `intake` ([`take_in_failure`]): what `anvil seats` and `anvil doctor` show.
pub fn check_all(intake: &mut Intake) -> Vec<crate::agent::Readiness> {
    crate::agent::check_all()
        .into_iter()
        .map(|mut r| {
            r.version = r.version.map_err(|e| take_in_failure(e, intake));
            r
        })
        .collect()
}

/// Where a seat's reply came from, as the credentials' note names it.
const SEAT_TEXT: &str = "the seat's text";

/// What a seat's turn is recorded with: who played it and what it cost.
pub fn provenance(played: &Played) -> Provenance {
    Provenance {
        model: played.model.clone(),
        input_tokens: played.tokens.input,
        output_tokens: played.tokens.output,
        cache_read_tokens: played.tokens.cache_read,
        cache_write_tokens: played.tokens.cache_write,
        duration_ms: Some(played.duration_ms),
        claude_version: None,
        host: None,
        agent: Some(played.agent.name().to_owned()),
        agent_version: played.agent_version.clone(),
        agent_session: Some(played.session.clone()),
        cost: played.cost,
        turn: None,
    }
}
