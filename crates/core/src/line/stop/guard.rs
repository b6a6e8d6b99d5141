//! The first step of a stop: is the turn a phase to record? A line that is over or waits for
//! the human, a turn with no text, a session that never saw the debate, a repeat, a host's turn
//! while a seat's phase is out: each is answered here, and nothing is recorded.
//!
//! A repeat is a turn the line knows by its text (its blob id): the same stop delivered again.
//! The same words are a new phase when they come from another turn: a seat's text by the step
//! it was given for (a seat plays once per phase), the host's by the client's id of its turn
//! when the client names one. Either way a canned refusal is recorded again, never handed the
//! same prompt (or the same seat played) without end.

use crate::error::DebateError;
use crate::home::{Home, LineRef};
use crate::line::transaction::{Current, Plan};
use crate::model::machine;
use crate::model::state::{State, Status};
use crate::record::schema::{PhaseFile, phase_file};

use super::reply::{Reply, finish_reply, late_steering_notice, progress_notice, seat_notice};
use super::steering::undelivered;
use super::{Stop, prompt};

/// What the guard made of a stop.
pub(super) enum Guarded<'a> {
    /// Answered without recording a phase.
    Answered(Plan<Reply>),
    /// The turn is the phase that is out: the next step records it.
    Phase(Box<Phase<'a>>),
}

/// A turn that is the phase that is out, with the line as it stood when it arrived.
pub(super) struct Phase<'a> {
    pub state: State,
    pub text: &'a str,
    /// The git blob id of `text`: how the turn is known again if it is delivered twice.
    pub response_id: &'a str,
    pub stop: Stop<'a>,
}

/// Lets through the turn of `stop` when it is the phase that is out on the line `current`
/// shows; answers every other stop.
pub(super) fn guard<'a>(
    home: &Home,
    current: &Current<'_>,
    stop: Stop<'a>,
    response_id: Option<&'a str>,
) -> Result<Guarded<'a>, DebateError> {
    let mut state = current.state()?;
    let line = current.line;
    if let Some(reply) = not_active(home, line, &state, response_id)? {
        return Ok(Guarded::Answered(Plan::Keep(reply)));
    }
    let (Some(text), Some(response_id), true) = (stop.text, response_id, stop.seen) else {
        // A session that never saw the debate, or a turn with no text: hand out the prompt.
        return reissue(home, current, state, stop.session).map(Guarded::Answered);
    };
    if let Some(step) = stop.at_step {
        let elsewhere = stop.at_cue.is_some_and(|given| {
            !given.same_phase(&machine::current_cue(&state.setup, &state.progress))
        });
        if step != state.progress.step || elsewhere {
            // A seat's text for a phase that was recorded meanwhile (by another player).
            return reissue(home, current, state, stop.session).map(Guarded::Answered);
        }
        // A seat's text given for the phase that is out is that phase, whatever it says: the
        // same words as the phase before (a canned refusal, one error text twice) are recorded
        // again, never taken for a repeated stop (which would play the seat again, without end).
        return Ok(phase(state, text, response_id, stop));
    }
    let cue = machine::current_cue(&state.setup, &state.progress);
    if !stop.seat
        && let Some(seat) = cue.seat(&state)
    {
        // The phase that is out is a seat's: the host's turn (an answer to a notice, to
        // `continue`) is not that phase, and the seat is due. The turn is remembered, so that
        // delivered again once the seat has played, it is not taken for the next phase.
        let reply = Reply::seat(seat_notice(&state, line, seat));
        if state.aside_response.as_deref() == Some(response_id) {
            return Ok(Guarded::Answered(Plan::Keep(reply)));
        }
        state.aside_response = Some(response_id.to_owned());
        return Ok(Guarded::Answered(Plan::Live(Box::new(state), reply)));
    }
    if (state.last_response.as_deref() == Some(response_id) && !another_turn(&state, stop))
        || state.aside_response.as_deref() == Some(response_id)
    {
        // The same turn again (a second hook, a transcript that lags, a redelivery after a
        // writer died), or the host's turn that came while a seat played: answered as
        // before, recorded once.
        return reissue(home, current, state, stop.session).map(Guarded::Answered);
    }
    Ok(phase(state, text, response_id, stop))
}

/// Does `stop` bring the text recorded last from another turn of the client's? Only when the
/// client names both turns (Claude Code's message ids, read from its transcript) and they
/// differ: the same words again (a refusal, an error text) are then a phase of their own; a
/// turn the client does not name is taken for the one recorded, as a second hook's is.
fn another_turn(state: &State, stop: Stop<'_>) -> bool {
    let this = stop.provenance.and_then(|p| p.turn.as_deref());
    matches!((state.last_turn.as_deref(), this), (Some(last), Some(this)) if last != this)
}

fn phase<'a>(state: State, text: &'a str, response_id: &'a str, stop: Stop<'a>) -> Guarded<'a> {
    Guarded::Phase(Box::new(Phase {
        state,
        text,
        response_id,
        stop,
    }))
}

/// The answer of a line that does not take phases now: it waits for the human's answer, or it
/// is over (steering that came too late, the synthesis delivered again, or nothing).
fn not_active(
    home: &Home,
    line: &LineRef,
    state: &State,
    response_id: Option<&str>,
) -> Result<Option<Reply>, DebateError> {
    match state.progress.status {
        Status::Active => Ok(None),
        Status::WaitingForInput => {
            // A debater asked the human something; the debate moves once it is answered.
            let question = state.question.as_ref().map_or("", |q| q.text.as_str());
            Ok(Some(Reply::message(format!(
                "anvil: {line} waits for your answer to: {question}\nAnswer with `anvil answer \"…\"`, then type `continue` here."
            ))))
        }
        Status::Done | Status::Cancelled => {
            let late = undelivered(home, line, state)?;
            if !late.is_empty() {
                return Ok(Some(Reply::message(late_steering_notice(
                    line, state, &late,
                ))));
            }
            if state.progress.status == Status::Done
                && response_id.is_some()
                && state.last_response.as_deref() == response_id
            {
                // The synthesis delivered again: answered as the first time.
                return Ok(Some(finish_reply(home, line, state)));
            }
            Ok(Some(Reply::silent()))
        }
    }
}

/// Hands `session` the prompt that is out again, in full if the session has not seen the
/// debate, and binds the line to it.
fn reissue(
    home: &Home,
    current: &Current<'_>,
    mut state: State,
    session: &str,
) -> Result<Plan<Reply>, DebateError> {
    let informed = state.informed_session.as_deref() == Some(session);
    let cue = machine::current_cue(&state.setup, &state.progress);
    if let Some(seat) = cue.seat(&state) {
        // The phase that is out is a seat's: the session waits for it, never plays it.
        return Ok(Plan::Keep(Reply::seat(seat_notice(
            &state,
            current.line,
            seat,
        ))));
    }
    // The prompt that is out, as the record holds it; in full for a session that has not seen
    // the debate.
    let recorded = match (informed, current.tip) {
        (true, Some(tip)) => crate::review::history::read_text(
            current.record,
            tip,
            &phase_file(state.progress.step + 1, cue.role.name(), PhaseFile::Prompt),
        )?,
        _ => None,
    };
    let prompt = match recorded {
        Some(prompt) => prompt,
        None => prompt::render_prompt(
            home,
            &state,
            &cue,
            true,
            &prompt::read_transcript(home, current.line)?,
        )?,
    };
    let reply = Reply::block(prompt, progress_notice(&state));
    if informed && state.session.as_deref() == Some(session) {
        return Ok(Plan::Keep(reply));
    }
    state.session = Some(session.to_owned());
    state.informed_session = Some(session.to_owned());
    Ok(Plan::Live(Box::new(state), reply))
}
