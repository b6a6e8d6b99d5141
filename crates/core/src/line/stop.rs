//! Where a phase is recorded: one stop of the Claude session that drives a line. The turn's
//! text becomes the phase that was out, the machine decides what follows, and the next
//! prompt is handed out, all in one [`transaction`](crate::line::transaction); or the prompt
//! that is out is handed out again (a repeat, a turn with no text, a session new to the line).

use crate::clock::now;
use crate::error::{DebateError, io};
use crate::fsutil;
use crate::home::{Home, LineRef, Queued};
use crate::line::transaction::{self, Change, Current, Options, Plan, Transcript};
use crate::model::machine::{self, Cue, Finished, Next, Turn};
use crate::model::positions::{self, Converged, Held, Share};
use crate::model::prompt::{PhaseContext, Prompts};
use crate::model::state::{Role, State, Status};
use crate::model::transcript;
use crate::record::schema::{Meta, PhaseFile, phase_file};

/// What the Stop hook should tell Claude.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Block the stop with this prompt; the notice is shown to the user.
    Block { prompt: String, notice: String },
    /// Let Claude stop, saying this.
    Finish { notice: String },
    /// Let Claude stop at an interactive pause: `anvil run` asks the human at the terminal.
    Pause { notice: String },
    /// The phase that is out is a seat's, played by another agent: `anvil run` plays it, or
    /// the Stop hook of the session that drives the line, before the host's next turn
    /// (`claude::seat_turns`). Claude is let stop when neither can.
    Seat { notice: String },
    /// Let Claude stop, saying this: a question waits for the human, or steering came too late.
    Message { notice: String },
    /// Nothing to say: the line is over, and Claude stops as it would without anvil.
    Silent,
}

impl Reply {
    /// Adds notes (a leftover lock removed, …) to what the user is shown.
    pub(crate) fn with_notes(self, notes: &[String]) -> Reply {
        if notes.is_empty() {
            return self;
        }
        let add = |notice: String| {
            let mut n = notice;
            for note in notes {
                if !n.is_empty() {
                    n.push('\n');
                }
                n.push_str(&format!("anvil: note: {note}"));
            }
            n
        };
        self.map_notice(add)
    }

    /// The same reply with `f` applied to what the user is shown; a silent one becomes a
    /// message of what `f` makes of nothing.
    pub(crate) fn map_notice(self, f: impl FnOnce(String) -> String) -> Reply {
        match self {
            Reply::Block { prompt, notice } => Reply::Block {
                prompt,
                notice: f(notice),
            },
            Reply::Finish { notice } => Reply::Finish { notice: f(notice) },
            Reply::Pause { notice } => Reply::Pause { notice: f(notice) },
            Reply::Seat { notice } => Reply::Seat { notice: f(notice) },
            Reply::Message { notice } => Reply::Message { notice: f(notice) },
            Reply::Silent => Reply::Message {
                notice: f(String::new()),
            },
        }
    }
}

/// One stop of a Claude session that drives a line, as the Stop hook sees it.
#[derive(Debug, Clone, Copy)]
pub struct Stop<'a> {
    pub session: &'a str,
    /// The text of the turn that just ended, if it had one.
    pub text: Option<&'a str>,
    /// The text an earlier stop of this line saved and could not record (its transaction
    /// failed: a lock another program held, a full disk). It was the reply to the prompt that
    /// is still out, so it is recorded in place of this turn's text, unless the record has it.
    pub kept: Option<&'a str>,
    /// The session claimed the line at this stop (it was waiting for a session).
    pub claimed: bool,
    /// The session has seen the line's prompt (always, unless it has just claimed the line).
    pub seen: bool,
    /// The model, tokens and duration of the turn, when the transcript tells them.
    pub provenance: Option<&'a crate::model::provenance::Provenance>,
    /// The text was played by a seat (another agent, in a session of its own): the session
    /// that drives the line has not seen it, so its next prompt brings it in full.
    pub seat: bool,
    /// The prompt the next phase was really given, when it is not the one anvil would
    /// render now (an independent opening, drafted blind): recorded as its prompt.
    pub next_prompt: Option<&'a str>,
    /// The line's step when the phase this text answers was handed out (a seat's turn, which
    /// takes minutes without the line's lock): if the line has moved since, the text is not
    /// recorded.
    pub at_step: Option<u32>,
}

impl<'a> Stop<'a> {
    /// A stop of `session`, which has seen the line's prompt, with nothing else to say: what
    /// the other fields add is written beside it (`Stop { text, ..Stop::of(session) }`).
    pub fn of(session: &'a str) -> Stop<'a> {
        Stop {
            session,
            text: None,
            kept: None,
            claimed: false,
            seen: true,
            provenance: None,
            seat: false,
            next_prompt: None,
            at_step: None,
        }
    }
}

/// Handles one stop of `line`'s session: records the turn's text as the phase that is out
/// and hands out the next one, or hands the prompt that is out again (a repeat, a turn with
/// no text, a session new to the line). This is where a phase is recorded.
pub fn stop(home: &Home, line: &LineRef, stop: Stop<'_>) -> Result<Reply, DebateError> {
    let kept_id = stop.kept.filter(|k| Some(*k) != stop.text).map(blob_id);
    let response_id = stop.text.map(blob_id);
    // What the kept text is to this stop: not there, not recorded yet, or recorded already.
    #[derive(Clone, Copy, PartialEq)]
    enum Kept {
        No,
        Unrecorded,
        Recorded,
    }
    let mut kept = Kept::No;
    let done = transaction::run(
        home,
        line,
        Options {
            patience: std::time::Duration::from_secs(5),
            ..Options::default()
        },
        |current| {
            // The kept text goes first when the record does not have it yet: it answered the
            // prompt that is out, while this turn answered the failure's message. One the
            // record has already was recorded by a stop that then failed to hand out the next
            // prompt: Claude never saw that prompt, so it is handed out again, and this turn
            // (an answer to the failure) is not recorded.
            let last = current
                .state
                .as_ref()
                .and_then(|s| s.last_response.as_deref());
            kept = match (stop.kept, kept_id.as_deref()) {
                (Some(_), Some(id)) if last == Some(id) => Kept::Recorded,
                (Some(_), Some(_)) => Kept::Unrecorded,
                _ => Kept::No,
            };
            match kept {
                Kept::No => decide_stop(home, current, stop, response_id.as_deref()),
                Kept::Unrecorded => {
                    let kept = Stop {
                        text: stop.kept,
                        ..stop
                    };
                    decide_stop(home, current, kept, kept_id.as_deref())
                }
                Kept::Recorded => decide_stop(home, current, Stop { text: None, ..stop }, None),
            }
        },
    )?;
    let mut notes = done.notes;
    if matches!(done.value, Reply::Block { .. } | Reply::Finish { .. }) {
        match kept {
            Kept::Unrecorded => notes.push(format!(
                "recorded the reply saved by a stop that could not record it ({}); this turn's \
                 reply was an answer to that failure and is not a phase",
                home.incoming_path(line).display()
            )),
            Kept::Recorded => notes.push(
                "the last stop recorded its reply but could not hand out the next prompt; it \
                 is handed out now (this turn's reply answered the failure and is not a phase)"
                    .to_owned(),
            ),
            Kept::No => {}
        }
    }
    if !matches!(done.value, Reply::Block { .. } | Reply::Pause { .. })
        && transaction::view(home, line).is_ok_and(|s| s.progress.status.is_over())
    {
        // The line is over: this session drives nothing now (a binding a cancel raced with
        // is dropped here too).
        home.unbind(stop.session)
            .map_err(io("cannot unbind the session in", home.root()))?;
    }
    Ok(done.value.with_notes(&notes))
}

/// Records `text` as the phase that is out on `line` (for `anvil run`, which answers the
/// interactive pauses itself), cleaned of credentials first. A text that is already recorded
/// is answered as before.
pub fn record_turn(
    home: &Home,
    line: &LineRef,
    session: &str,
    text: &str,
) -> Result<Reply, DebateError> {
    record_cleaned(home, line, "the pause's answer", text, Stop::of(session))
}

/// Records `text`, which entered anvil from `place` and is cleaned of credentials first, as
/// the phase that is out on `line`, with the rest of `stop`; says what was redacted.
pub(crate) fn record_cleaned(
    home: &Home,
    line: &LineRef,
    place: &str,
    text: &str,
    stop: Stop<'_>,
) -> Result<Reply, DebateError> {
    let mut intake = crate::model::secrets::Intake::new(home.root());
    let text = intake.clean(place, text);
    let reply = self::stop(
        home,
        line,
        Stop {
            text: Some(&text),
            ..stop
        },
    )?;
    let notes: Vec<String> = intake.note().into_iter().collect();
    transaction::print_notes(&notes);
    // Said where the text was recorded (`anvil run`'s terminal), and with the reply (the
    // notice of the Stop hook that played a seat).
    Ok(reply.with_notes(&notes))
}

/// The git blob id of `text`: how a response is known again when it is delivered twice.
fn blob_id(text: &str) -> String {
    gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        text.as_bytes(),
    )
    .expect("SHA-1 hashing cannot fail")
    .to_string()
}

fn decide_stop(
    home: &Home,
    current: &Current<'_>,
    stop: Stop<'_>,
    response_id: Option<&str>,
) -> Result<Plan<Reply>, DebateError> {
    let mut state = current.state()?;
    let line = current.line;
    match state.progress.status {
        Status::Active => {}
        Status::WaitingForInput => {
            // A debater asked the human something; the debate moves once it is answered.
            let question = state.question.as_ref().map_or("", |q| q.text.as_str());
            return Ok(Plan::Keep(Reply::Message {
                notice: format!(
                    "anvil: {line} waits for your answer to: {question}\nAnswer with `anvil answer \"…\"`, then type `continue` here."
                ),
            }));
        }
        Status::Done | Status::Cancelled => {
            let late = undelivered(home, line, &state)?;
            if !late.is_empty() {
                return Ok(Plan::Keep(Reply::Message {
                    notice: late_steering_notice(line, &state, &late),
                }));
            }
            if state.progress.status == Status::Done
                && response_id.is_some()
                && state.last_response.as_deref() == response_id
            {
                // The synthesis delivered again: answered as the first time.
                return Ok(Plan::Keep(finish_reply(home, line, &state)));
            }
            return Ok(Plan::Keep(Reply::Silent));
        }
    }
    let (Some(text), Some(response_id), true) = (stop.text, response_id, stop.seen) else {
        // A session that never saw the debate, or a turn with no text: hand out the prompt.
        return reissue(home, current, state, stop.session);
    };
    if stop.at_step.is_some_and(|step| step != state.progress.step) {
        // A seat's text for a phase that was recorded meanwhile (by another player).
        return reissue(home, current, state, stop.session);
    }
    let cue = machine::current_cue(&state.setup, &state.progress);
    if !stop.seat
        && state.seat_fallback.is_none()
        && let Some(seat) = state
            .setup
            .seats
            .seat_for(cue.role.name(), cue.voice.as_deref())
    {
        // The phase that is out is a seat's: the host's turn (an answer to a notice, to
        // `continue`) is not that phase, and the seat is due. The turn is remembered, so that
        // delivered again once the seat has played, it is not taken for the next phase.
        let reply = Reply::Seat {
            notice: seat_notice(&state, line, seat),
        };
        if state.aside_response.as_deref() == Some(response_id) {
            return Ok(Plan::Keep(reply));
        }
        state.aside_response = Some(response_id.to_owned());
        return Ok(Plan::Live(Box::new(state), reply));
    }
    if state.last_response.as_deref() == Some(response_id)
        || state.aside_response.as_deref() == Some(response_id)
    {
        // The same turn again (a second hook, a transcript that lags, a redelivery after a
        // writer died), or the host's turn that came while a seat played: answered as
        // before, recorded once.
        return reissue(home, current, state, stop.session);
    }
    if stop.claimed {
        // The session answered the first prompt it was given: it holds the debate.
        state.informed_session = Some(stop.session.to_owned());
    }
    let session = stop.session;
    // Steering queued since the last stop; the synthesis takes none (nothing follows it),
    // so what waits then is left in the queue and reported.
    let queued: Vec<Queued> = if state.progress.phase == Role::Synthesizer {
        Vec::new()
    } else {
        waiting_steering(home, line, &state)?
    };
    let pending = if state.progress.phase == Role::Synthesizer {
        Vec::new()
    } else {
        std::mem::take(&mut state.pending_steering)
    };
    let queued_texts: Vec<String> = pending
        .into_iter()
        .chain(queued.iter().map(|q| q.text.clone()))
        .collect();
    let mut outcome = machine::advance(
        &state.setup,
        &state.progress,
        Turn {
            text,
            queued: &queued_texts,
        },
    )?;
    let spent_before = state.spent;
    let finished_role = outcome.finished.role;
    if finished_role.is_debating() {
        let markers = &outcome.finished.markers;
        state.positions.push(Held {
            seat: positions::seat_label(finished_role.name(), outcome.finished.voice.as_deref()),
            round: outcome.finished.round,
            stance: markers.position.as_ref().map(|p| p.stance),
            confidence: markers
                .position
                .as_ref()
                .map_or(Share::HALF, |p| p.confidence),
            open: markers.open.clone(),
        });
    }
    // What the phase cost counts against the debate's budget; past it, the debate goes to its
    // synthesis instead of its next phase.
    if let Some(p) = stop.provenance {
        state.spent.tokens += p.input_tokens + p.output_tokens;
        state.spent.usd_nanos += p.cost.map_or(0, |c| c.nanos);
        state.spent.phases += 1;
    }
    let convergence = convergence(&mut state, &mut outcome);
    let budget = match &outcome.next {
        Next::Prompt(cue) if cue.role != Role::Synthesizer => {
            over_budget(&state.setup.seats, &state.spent)
        }
        _ => None,
    };
    if budget.is_some()
        && let Next::Prompt(cue) = &outcome.next
    {
        // The synthesis belongs to the last round debated, as when a debate ends on its own.
        let cue = Cue {
            role: Role::Synthesizer,
            round: outcome.finished.round,
            voice: None,
            steering: cue.steering.clone(),
        };
        outcome.progress.phase = Role::Synthesizer;
        outcome.progress.round = outcome.finished.round;
        outcome.progress.ended_early = true;
        outcome.next = Next::Prompt(cue);
    }
    let fallback = state.seat_fallback.take();
    let step = outcome.progress.step;
    let played_by = stop.provenance.and_then(|p| p.played_by());
    let section = transcript::section(&outcome.finished, text, played_by.as_deref());

    let mut files = vec![(
        phase_file(step, outcome.finished.role.name(), PhaseFile::Response),
        text.as_bytes().to_vec(),
    )];
    let next_seat = match &outcome.next {
        Next::Prompt(cue) => state
            .setup
            .seats
            .seat_for(cue.role.name(), cue.voice.as_deref())
            .cloned(),
        Next::Finish => None,
    };
    let prompt = match &outcome.next {
        Next::Prompt(cue) => {
            let full = state.informed_session.as_deref() != Some(session)
                || stop.seat
                || next_seat.is_some();
            let transcript_text = if full {
                let mut t = read_transcript(home, line)?;
                t.push_str(&section);
                t
            } else {
                String::new()
            };
            let prompt = match stop.next_prompt {
                Some(given) => given.to_owned(),
                None => render_prompt(home, &state, cue, full, &transcript_text)?,
            };
            files.push((
                phase_file(step + 1, cue.role.name(), PhaseFile::Prompt),
                prompt.clone().into_bytes(),
            ));
            Some(prompt)
        }
        Next::Finish => None,
    };

    state.progress = outcome.progress.clone();
    state.last_response = Some(response_id.to_owned());
    state.session = Some(session.to_owned());
    // A seat's text is news to the session that drives the line.
    state.informed_session = (!stop.seat).then(|| session.to_owned());
    state.updated = now().to_string();
    if let Some(last) = queued.last() {
        state.steering_taken = state.steering_taken.max(last.number);
    }

    let finished = &outcome.finished;
    let mut meta = Meta {
        debate: state.debate.clone(),
        line: state.line.clone(),
        phase: finished.role.name().into(),
        round: finished.round,
        step: Some(step),
        session: Some(session.to_owned()),
        voice: finished.voice.clone(),
        steering: finished.steering.clone(),
        complete: finished.markers.complete,
        response: Some(response_id.to_owned()),
        next: Some(match &outcome.next {
            Next::Prompt(cue) => cue.role.name().into(),
            Next::Finish => "done".into(),
        }),
        ..Meta::default()
    };
    if let Some(provenance) = stop.provenance {
        provenance.write_to(&mut meta);
    }
    meta.seat_fallback = fallback;
    meta.budget = budget;
    if let Some(p) = &finished.markers.position {
        meta.stance = Some(p.stance);
        meta.confidence = Some(p.confidence);
        meta.claim = Some(p.claim.clone());
    }
    if finished.role.is_debating() {
        meta.open = finished.markers.open.clone();
    }
    meta.converged = convergence.round;
    meta.converge_stop = convergence.stop;
    meta.converge_held = convergence.held;
    let mut unmentioned = Vec::new();
    if finished.role == Role::Synthesizer {
        let open = positions::still_open(&state.positions);
        unmentioned = positions::unmentioned(&open, text)
            .into_iter()
            .cloned()
            .collect();
        meta.dissent_missing = unmentioned.clone();
        meta.dissent = open;
        let finals: Vec<_> = positions::finals(&state.positions)
            .into_iter()
            .map(|(_, s, c)| (s, c))
            .collect();
        meta.consensus = positions::consensus(&finals);
        meta.saving = state
            .converged
            .filter(|c| !c.acted)
            .and_then(|c| saving(&c, step.saturating_sub(1), &spent_before));
    }
    let reply = match prompt {
        Some(_) if let Some(seat) = &next_seat => Reply::Seat {
            notice: seat_notice(&state, line, seat),
        },
        Some(prompt) if state.headless && state.progress.phase == Role::InteractivePause => {
            // `anvil run` asks the human itself: Claude stops until it has the answer.
            let _ = prompt;
            Reply::Pause {
                notice: format!(
                    "anvil: {line} pauses for steering after round {}",
                    state.progress.round
                ),
            }
        }
        Some(prompt) => Reply::Block {
            notice: progress_notice(&state),
            prompt,
        },
        None => {
            let mut reply = finish_reply(home, line, &state);
            if let (Reply::Finish { notice }, false) = (&mut reply, unmentioned.is_empty()) {
                let all = positions::still_open(&state.positions);
                for point in &unmentioned {
                    let label = all
                        .iter()
                        .position(|p| p == point)
                        .map(positions::OpenPoint::label)
                        .unwrap_or_default();
                    notice.push_str(&format!(
                        "\nanvil: the synthesis does not mention open point {label} ({}: {}); it is recorded as dissent",
                        point.seat, point.text
                    ));
                }
            }
            let late = undelivered(home, line, &state)?;
            if let (Reply::Finish { notice }, false) = (&mut reply, late.is_empty()) {
                notice.push('\n');
                notice.push_str(&late_steering_notice(line, &state, &late));
            }
            reply
        }
    };
    let change = Change {
        author: finished
            .voice
            .clone()
            .unwrap_or_else(|| finished.role.title().to_owned()),
        subject: subject(finished, text),
        meta,
        files,
        remove: Vec::new(),
        fork: None,
        transcript: Transcript::Append(section),
        report: outcome.next == Next::Finish,
        state,
    };
    Ok(Plan::Record(Box::new(change), reply))
}

/// What the convergence check decided at one stop.
#[derive(Default)]
struct Convergence {
    /// Positions stopped moving with this round (the first time on the line).
    round: Option<u32>,
    /// `--converge` sent the debate to its synthesis.
    stop: bool,
    /// `--converge` did not, and why.
    held: Option<String>,
}

/// After a phase that closed a round: did positions stop moving? The first time they do, the
/// line notes it (shadow mode, always on) with what it had spent by then; with `--converge`
/// the debate goes to its synthesis, unless steering is on its way, an interactive pause
/// comes next or a debater's question is open: a human's word is never overridden.
fn convergence(state: &mut State, outcome: &mut machine::Outcome) -> Convergence {
    let finished = &outcome.finished;
    let closes_round = finished.role.is_debating()
        && match &outcome.next {
            Next::Prompt(cue) => {
                cue.round != finished.round
                    || matches!(cue.role, Role::InteractivePause | Role::Synthesizer)
            }
            Next::Finish => true,
        };
    if !closes_round
        || state.converged.is_some()
        || !positions::converged(&state.positions, finished.round)
    {
        return Convergence::default();
    }
    let mut found = Converged {
        round: finished.round,
        step: outcome.progress.step,
        tokens: state.spent.tokens,
        priced: state.spent.phases,
        acted: false,
    };
    let mut out = Convergence {
        round: Some(finished.round),
        ..Convergence::default()
    };
    if let (true, Next::Prompt(cue)) = (state.setup.converge, &outcome.next)
        && cue.role != Role::Synthesizer
    {
        let question_open = state.question.as_ref().is_some_and(|q| q.answer.is_none());
        let held = if !cue.steering.is_empty() {
            Some("steering is on its way to the next phase")
        } else if cue.role == Role::InteractivePause {
            Some("an interactive pause comes next: the human decides")
        } else if question_open {
            Some("a debater's question is open")
        } else {
            None
        };
        match held {
            Some(why) => out.held = Some(why.to_owned()),
            None => {
                // The synthesis belongs to the round that converged, not to the next one.
                outcome.next = Next::Prompt(Cue {
                    role: Role::Synthesizer,
                    round: finished.round,
                    voice: None,
                    steering: Vec::new(),
                });
                outcome.progress.phase = Role::Synthesizer;
                outcome.progress.round = finished.round;
                outcome.progress.ended_early = true;
                found.acted = true;
                out.stop = true;
            }
        }
    }
    state.converged = Some(found);
    out
}

/// What stopping at `converged` would have saved, seen from the synthesis: the phases
/// recorded after it (`before` phases were recorded before the synthesis), and their tokens
/// when every one of them had a known cost. `None` when nothing came after it.
fn saving(
    converged: &Converged,
    before: u32,
    spent: &crate::model::state::Spent,
) -> Option<positions::Saving> {
    let phases = before.checked_sub(converged.step).filter(|p| *p > 0)?;
    let priced = spent.phases.saturating_sub(converged.priced);
    Some(positions::Saving {
        round: converged.round,
        phases,
        tokens: (priced == phases).then(|| spent.tokens.saturating_sub(converged.tokens)),
    })
}

/// Whether the next phase would take the line past its budget, judged by what its phases
/// took on average: why, when it would.
fn over_budget(
    seats: &crate::model::seats::Seats,
    spent: &crate::model::state::Spent,
) -> Option<String> {
    if spent.phases == 0 {
        return None;
    }
    let phases = u64::from(spent.phases);
    if let Some(limit) = seats.budget_tokens {
        let next = spent.tokens / phases;
        if spent.tokens + next > limit {
            return Some(format!(
                "{} of {limit} tokens spent; the next phase would take about {next} more",
                spent.tokens
            ));
        }
    }
    if let Some(limit) = seats.budget_usd() {
        let next = spent.usd_nanos / phases;
        if spent.usd_nanos + next > limit.nanos {
            let usd = |nanos| crate::record::usage::Usd { nanos }.human();
            return Some(format!(
                "{} of {} spent; the next phase would take about {} more",
                usd(spent.usd_nanos),
                limit.human(),
                usd(next)
            ));
        }
    }
    None
}

/// What the person is told when the next phase is a seat's.
fn seat_notice(state: &State, line: &LineRef, seat: &crate::seat::Seat) -> String {
    format!("anvil {line}: {} · played by {seat}", state.standing())
}

fn finish_reply(home: &Home, line: &LineRef, state: &State) -> Reply {
    let mut notice = format!(
        "anvil: debate {line} is done; report: {}",
        crate::review::report::output_path(home, state).display()
    );
    if state.setup.framework.as_deref() == Some("adr") {
        notice.push_str(&format!(
            "; `anvil adr {line}` writes it into the code as a decision record"
        ));
    }
    Reply::Finish { notice }
}

/// Steering in the queue that the line has not taken yet, oldest first.
fn waiting_steering(
    home: &Home,
    line: &LineRef,
    state: &State,
) -> Result<Vec<Queued>, DebateError> {
    Ok(home
        .queued_steering(line)
        .map_err(io("cannot read queued steering of", home.line_dir(line)))?
        .into_iter()
        .filter(|q| q.number > state.steering_taken)
        .collect())
}

/// Steering that can no longer be delivered: the line finished or was cancelled with it in
/// the queue (written by something that did not take the line's lock). It stays on disk.
fn undelivered(home: &Home, line: &LineRef, state: &State) -> Result<Vec<Queued>, DebateError> {
    if state.progress.status == Status::Active && state.progress.phase != Role::Synthesizer {
        return Ok(Vec::new());
    }
    waiting_steering(home, line, state)
}

fn late_steering_notice(line: &LineRef, state: &State, late: &[Queued]) -> String {
    let texts: Vec<String> = late
        .iter()
        .map(|q| {
            format!(
                "\"{}\" ({})",
                crate::model::state::first_line(&q.text),
                q.path.display()
            )
        })
        .collect();
    format!(
        "anvil: steering for {line} came after the debate's last phase began and was not delivered: {}. Branch from a round to use it: `anvil branch --from {}:round-{} --steer \"…\"`.",
        texts.join(", "),
        line.line,
        state.progress.round
    )
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
    if state.seat_fallback.is_none()
        && let Some(seat) = state
            .setup
            .seats
            .seat_for(cue.role.name(), cue.voice.as_deref())
    {
        // The phase that is out is a seat's: the session waits for it, never plays it.
        return Ok(Plan::Keep(Reply::Seat {
            notice: seat_notice(&state, current.line, seat),
        }));
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
        None => render_prompt(
            home,
            &state,
            &cue,
            true,
            &read_transcript(home, current.line)?,
        )?,
    };
    let reply = Reply::Block {
        notice: progress_notice(&state),
        prompt,
    };
    if informed && state.session.as_deref() == Some(session) {
        return Ok(Plan::Keep(reply));
    }
    state.session = Some(session.to_owned());
    state.informed_session = Some(session.to_owned());
    Ok(Plan::Live(Box::new(state), reply))
}

/// The prompt for `cue` on the line `state` describes, rendered as the hook renders it;
/// `transcript` is the debate so far when `full` is set. For commands that rebuild a line.
pub(crate) fn render_prompt(
    home: &Home,
    state: &State,
    cue: &Cue,
    full: bool,
    transcript: &str,
) -> Result<String, DebateError> {
    let prompts = Prompts::new(Some(home.prompts_dir()));
    let line = LineRef::new(&state.debate, &state.line);
    // A seat's phase is always given in full, as a participant's: it sees only what was said.
    let seat = state
        .setup
        .seats
        .seat_for(cue.role.name(), cue.voice.as_deref())
        .filter(|_| state.seat_fallback.is_none());
    let full = full || seat.is_some();
    let read;
    let transcript = if seat.is_some() && transcript.is_empty() {
        read = read_transcript(home, &line)?;
        read.as_str()
    } else {
        transcript
    };
    let mut ctx = PhaseContext::new(
        state,
        cue,
        full,
        transcript.to_owned(),
        &home.transcript_path(&line),
    );
    if let Some(seat) = seat {
        ctx = ctx.with_seat(seat.agent.name());
    }
    if !state.setup.inputs.is_empty() {
        // The material travels in full prompts only; later ones point to the file.
        let path = crate::review::context::bundle_path(home, &state.debate);
        let text = if full {
            fsutil::read_optional(&path).map_err(io("cannot read", &path))?
        } else {
            None
        };
        ctx = ctx.with_context(&path, text);
    }
    Ok(prompts.render_phase(&ctx)?)
}

fn read_transcript(home: &Home, line: &LineRef) -> Result<String, DebateError> {
    let path = home.transcript_path(line);
    Ok(fsutil::read_optional(&path)
        .map_err(io("cannot read", &path))?
        .unwrap_or_default())
}

fn subject(finished: &Finished, text: &str) -> String {
    let gist: String = crate::model::state::first_line(text)
        .trim_start_matches(['#', ' ', '*', '>', '-'])
        .chars()
        .take(60)
        .collect();
    let who = match (&finished.voice, finished.role) {
        (Some(voice), _) => format!(
            "{} ({})",
            finished.role.name(),
            voice.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
        (None, role) => role.name().to_owned(),
    };
    match finished.role {
        Role::Synthesizer => format!("synthesis: {gist}"),
        _ => format!("round {} {who}: {gist}", finished.round),
    }
}

/// A one-line status shown to the user between phases.
pub(crate) fn progress_notice(state: &State) -> String {
    format!(
        "anvil {}@{}: {}",
        state.debate,
        state.line,
        state.standing()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line::control::record_run;
    use crate::model::provenance::RunCost;
    use crate::record::usage::Usd;
    use crate::testkit::line_with_debate;

    fn deliver(home: &Home, line: &LineRef, text: &str) -> Reply {
        stop(
            home,
            line,
            Stop {
                text: Some(text),
                ..Stop::of("s-1")
            },
        )
        .unwrap()
    }

    /// `anvil run` records the human's words at an interactive pause through
    /// [`record_turn`]: a credential in them is cleaned before the state (YAML) and the record
    /// are written, and the debate goes on.
    #[test]
    fn a_pause_typed_at_the_terminal_is_recorded_clean_and_the_debate_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let setup = crate::model::options::Options {
            question: "Q?".into(),
            rounds: Some(2),
            interactive: Some(true),
            ..Default::default()
        }
        .into_setup()
        .unwrap();
        let line = crate::line::start::start(&home, setup, Some("s-1"))
            .unwrap()
            .line;
        deliver(&home, &line, "ADVOCATE r1.");
        deliver(&home, &line, "CRITIC r1.");
        let before = State::load(&home.state_path(&line)).unwrap();
        assert_eq!(before.progress.phase, Role::InteractivePause);
        let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let typed = format!(
            "Steered at the terminal.\n\n<anvil-steering>assume \"{token}\": leaked</anvil-steering>"
        );
        let reply = record_turn(&home, &line, "s-1", &typed).unwrap();
        let Reply::Block { prompt, .. } = reply else {
            panic!("the debate goes on: {reply:?}")
        };
        assert!(
            prompt.contains("assume \"[redacted: GitHub token]\": leaked"),
            "{prompt}"
        );
        let after = State::load(&home.state_path(&line)).expect("a valid state file");
        assert_eq!(after.progress.round, 2);
        assert_eq!(
            after.progress.steering,
            ["assume \"[redacted: GitHub token]\": leaked"]
        );
        let record = crate::record::store::Record::open(&home.record_dir()).unwrap();
        let history = crate::review::history::LineHistory::load(&record, &line).unwrap();
        let last = history.entries.last().unwrap();
        let raw = record
            .read(last.commit, &last.response_path().unwrap())
            .unwrap()
            .unwrap();
        assert!(!String::from_utf8(raw).unwrap().contains(&token));
        assert!(
            !std::fs::read_to_string(home.transcript_path(&line))
                .unwrap()
                .contains(&token)
        );
    }

    #[test]
    fn the_budget_stops_before_the_phase_that_would_pass_it() {
        use crate::model::seats::Seats;
        use crate::model::state::Spent;
        let spent = |tokens, usd_nanos, phases| Spent {
            tokens,
            usd_nanos,
            phases,
        };
        let tokens = Seats {
            budget_tokens: Some(1000),
            ..Seats::default()
        };
        // Nothing spent yet: nothing to judge the next phase by.
        assert_eq!(over_budget(&tokens, &spent(0, 0, 0)), None);
        // 600 over two phases: the next takes about 300, 900 stays within 1000.
        assert_eq!(over_budget(&tokens, &spent(600, 0, 2)), None);
        let why = over_budget(&tokens, &spent(800, 0, 2)).unwrap();
        assert_eq!(
            why,
            "800 of 1000 tokens spent; the next phase would take about 400 more"
        );
        let usd = Seats {
            budget_usd: Some("0.05".into()),
            ..Seats::default()
        };
        assert_eq!(over_budget(&usd, &spent(10_000, 20_000_000, 2)), None);
        let why = over_budget(&usd, &spent(10_000, 40_000_000, 2)).unwrap();
        assert_eq!(
            why,
            "$0.04 of $0.05 spent; the next phase would take about $0.02 more"
        );
    }

    #[test]
    fn a_runs_cost_is_a_commit_beside_the_phases_and_the_line_goes_on() {
        let (_dir, home, line) = line_with_debate();
        deliver(&home, &line, "The advocate's case.");
        let before = State::load(&home.state_path(&line)).unwrap();
        let cost = RunCost {
            runs: 1,
            cost: Usd { nanos: 1_500_000 },
            input_tokens: 10,
            turns: 2,
            ..RunCost::default()
        };
        record_run(&home, &line, "s-1", &cost).unwrap();
        let after = State::load(&home.state_path(&line)).unwrap();
        assert_eq!(after.progress, before.progress);
        // The text delivered again is still known as a repeat: nothing is recorded.
        assert!(matches!(
            deliver(&home, &line, "The advocate's case."),
            Reply::Block { .. }
        ));
        assert_eq!(
            State::load(&home.state_path(&line)).unwrap().progress.step,
            before.progress.step
        );
        deliver(&home, &line, "The critic's answer.");
        let record = crate::record::store::Record::open(&home.record_dir()).unwrap();
        let history = crate::review::history::LineHistory::load(&record, &line).unwrap();
        let phases: Vec<&str> = history
            .entries
            .iter()
            .map(|e| e.meta.phase.as_str())
            .collect();
        assert_eq!(phases, ["start", "advocate", "run", "critic"]);
        assert_eq!(RunCost::read_from(&history.entries[2].meta), Some(cost));
        assert_eq!(history.entries[3].step, 2);
    }
}
