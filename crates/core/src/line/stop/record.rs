//! The middle step of a stop: the turn recorded as the phase that was out. The machine decides
//! what follows; the line counts the phase (its speaker's position, what it cost, whether the
//! positions stopped moving); the next prompt is rendered; and all of it becomes one commit of
//! the line ([`Change`]), its trailers included.

use crate::clock::now;
use crate::error::DebateError;
use crate::home::{Home, LineRef, Queued};
use crate::line::transaction::{Change, Transcript};
use crate::model::machine::{self, Finished, Next, Outcome, Turn};
use crate::model::positions::{self, Held, OpenPoint, Share};
use crate::model::provenance::Provenance;
use crate::model::state::{Role, Spent, State};
use crate::model::transcript;
use crate::model::vote;
use crate::record::schema::{Meta, PhaseFile, phase_file};
use crate::record::stance::Tabbed;

use super::converge::{self, Convergence};
use super::guard::Phase;
use super::steering::waiting_steering;
use super::{Stop, prompt};

/// A phase recorded: the commit, and what the reply says of it.
pub(super) struct Recorded {
    pub change: Change,
    /// The next phase's prompt; `None` when the debate is done.
    pub prompt: Option<String>,
    /// The seat that plays the next phase, when it is a seat's.
    pub next_seat: Option<crate::model::seats::Seat>,
    /// The open points a synthesis does not mention (recorded as dissent).
    pub unmentioned: Vec<OpenPoint>,
}

/// Records `phase` on `line`: what the machine makes of it, and the commit that says so.
pub(super) fn record(
    home: &Home,
    line: &LineRef,
    phase: Box<Phase<'_>>,
) -> Result<Recorded, DebateError> {
    let Phase {
        mut state,
        text,
        response_id,
        stop,
    } = *phase;
    if stop.claimed {
        // The session answered the first prompt it was given: it holds the debate.
        state.informed_session = Some(stop.session.to_owned());
    }
    let (queued, steering) = take_steering(home, line, &mut state)?;
    let mut outcome = machine::advance(
        &state.setup,
        &state.progress,
        Turn {
            text,
            queued: &steering,
        },
    )?;
    let spent_before = state.spent;
    count(&mut state, &outcome, stop.provenance);
    let shadow = converge::triage_shadow(&mut state, &outcome);
    let triaged = converge::triage(&mut state, &mut outcome);
    let ballot = cast(&mut state, &outcome.finished);
    let convergence = converge::convergence(&mut state, &mut outcome);
    let budget = converge::stop_at_budget(&state, &mut outcome);
    let fallback = state.seat_fallback.take();
    let step = outcome.progress.step;
    let played_by = stop.provenance.and_then(|p| p.played_by());
    let mut voted = Meta::default();
    with_ballot(&mut voted, &state, &outcome, ballot.as_ref());
    let mut section = transcript::section(&outcome.finished, text, played_by.as_deref());
    section.push_str(&transcript::notes_of(&Meta {
        voice: outcome.finished.voice.clone(),
        drafted: drafted(&state, &outcome.finished),
        ..voted.clone()
    }));
    let mut files = vec![(
        phase_file(step, outcome.finished.role.name(), PhaseFile::Response),
        text.as_bytes().to_vec(),
    )];
    let pending = prompt::Pending {
        role: outcome.finished.role,
        voice: outcome.finished.voice.as_deref(),
        text,
    };
    let (prompt, next_seat) = next_prompt(home, line, &state, &outcome, stop, &section, pending)?;
    if let (Some(prompt), Next::Prompt(cue)) = (&prompt, &outcome.next) {
        files.push((
            phase_file(step + 1, cue.role.name(), PhaseFile::Prompt),
            prompt.clone().into_bytes(),
        ));
    }
    settle(&mut state, &outcome, response_id, stop, &queued);
    let mut meta = meta(&state, &outcome, response_id, stop);
    meta.seat_fallback = fallback;
    meta.budget = budget;
    with_positions(&mut meta, &outcome.finished, convergence);
    meta.triage = triaged;
    meta.triage_shadow = shadow;
    meta.ballot_shown = voted.ballot_shown;
    meta.ballot = voted.ballot;
    meta.vote = voted.vote;
    meta.vote_cast = voted.vote_cast;
    let unmentioned = match outcome.finished.role {
        Role::Synthesizer => with_dissent(&mut meta, &state, text, step, &spent_before),
        _ => Vec::new(),
    };
    let finished = &outcome.finished;
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
    Ok(Recorded {
        change,
        prompt,
        next_seat,
        unmentioned,
    })
}

/// The steering the next phase takes: what the line held back, then what was queued since the
/// last stop (returned too, to be marked taken). The synthesis takes none (nothing follows
/// it), so what waits then is left in the queue and reported.
fn take_steering(
    home: &Home,
    line: &LineRef,
    state: &mut State,
) -> Result<(Vec<Queued>, Vec<String>), DebateError> {
    if state.progress.phase == Role::Synthesizer {
        return Ok((Vec::new(), Vec::new()));
    }
    let queued = waiting_steering(home, line, state)?;
    let texts = std::mem::take(&mut state.pending_steering)
        .into_iter()
        .chain(queued.iter().map(|q| q.text.clone()))
        .collect();
    Ok((queued, texts))
}

/// What the phase adds to the line's tally: the position its speaker holds, and what it cost,
/// which counts against the debate's budget.
fn count(state: &mut State, outcome: &Outcome, provenance: Option<&Provenance>) {
    let finished = &outcome.finished;
    if finished.role == Role::Triage {
        let markers = &finished.markers;
        state.triage.push(Held {
            seat: finished.voice.clone().unwrap_or_default(),
            round: 0,
            stance: markers.position.as_ref().map(|p| p.stance),
            confidence: markers
                .position
                .as_ref()
                .map_or(Share::HALF, |p| p.confidence),
            open: Vec::new(),
        });
    }
    if finished.role.is_debating() {
        let markers = &finished.markers;
        state.positions.push(Held {
            seat: positions::seat_label(finished.role.name(), finished.voice.as_deref()),
            round: finished.round,
            stance: markers.position.as_ref().map(|p| p.stance),
            confidence: markers
                .position
                .as_ref()
                .map_or(Share::HALF, |p| p.confidence),
            open: markers.open.clone(),
        });
    }
    if let Some(p) = provenance {
        state.spent.tokens += p.input_tokens + p.output_tokens;
        state.spent.usd_nanos += p.cost.map_or(0, |c| c.nanos);
        state.spent.phases += 1;
    }
}

/// The next phase's prompt (`None` when the debate is done), and the seat that plays it. It
/// is given in full to a session that has not seen the debate so far, after a seat's phase,
/// and to a seat; `section` is the phase being recorded, which the transcript lacks yet.
fn next_prompt(
    home: &Home,
    line: &LineRef,
    state: &State,
    outcome: &Outcome,
    stop: Stop<'_>,
    section: &str,
    pending: prompt::Pending<'_>,
) -> Result<(Option<String>, Option<crate::model::seats::Seat>), DebateError> {
    let Next::Prompt(cue) = &outcome.next else {
        return Ok((None, None));
    };
    let seat = cue.seat(state).cloned();
    // What the next phase was given already, when it was played with this one.
    let given = stop
        .next_prompt
        .filter(|(played, _)| played.same_phase(cue))
        .map(|(_, prompt)| prompt);
    if cue.role == Role::Voter && given.is_none() {
        // A ballot never carries the debate so far: only the unnamed final phases.
        let prompt = prompt::render_ballot(home, state, cue, Some(pending))?;
        return Ok((Some(prompt), seat));
    }
    let full =
        state.informed_session.as_deref() != Some(stop.session) || stop.seat || seat.is_some();
    let transcript_text = if full {
        let mut t = prompt::read_transcript(home, line)?;
        t.push_str(section);
        t
    } else {
        String::new()
    };
    let prompt = match given {
        Some(given) => given.to_owned(),
        None => prompt::render_prompt(home, state, cue, full, &transcript_text)?,
    };
    Ok((Some(prompt), seat))
}

/// The line's state once the phase is recorded: where it stands, the turn known again by its
/// id, the session that drives it (informed, unless a seat spoke: that is news to it), and
/// the queued steering taken.
fn settle(
    state: &mut State,
    outcome: &Outcome,
    response_id: &str,
    stop: Stop<'_>,
    queued: &[Queued],
) {
    let session = stop.session;
    state.progress = outcome.progress.clone();
    state.last_response = Some(response_id.to_owned());
    state.last_turn = stop.provenance.and_then(|p| p.turn.clone());
    state.session = Some(session.to_owned());
    state.informed_session = (!stop.seat).then(|| session.to_owned());
    state.updated = now().to_string();
    if let Some(last) = queued.last() {
        state.steering_taken = state.steering_taken.max(last.number);
    }
}

/// The trailers of the phase's commit: who spoke in which phase, what came next, what it cost.
fn meta(state: &State, outcome: &Outcome, response_id: &str, stop: Stop<'_>) -> Meta {
    let finished = &outcome.finished;
    let mut meta = Meta {
        debate: state.debate.clone(),
        line: state.line.clone(),
        phase: finished.role.name().into(),
        round: finished.round,
        step: Some(outcome.progress.step),
        session: Some(stop.session.to_owned()),
        voice: finished.voice.clone(),
        steering: finished.steering.clone(),
        complete: finished.markers.complete,
        drafted: drafted(state, finished),
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
    meta
}

/// Whether `finished` was drafted blind within its round (`Anvil-Drafted`).
fn drafted(state: &State, finished: &Finished) -> bool {
    finished.role.is_debating() && machine::drafted(&state.setup, finished.round)
}

/// A ballot, when the phase is one: read against the labels its voter was shown, and kept in
/// the line's state, which the vote's result is counted from.
fn cast(state: &mut State, finished: &Finished) -> Option<vote::Ballot> {
    if finished.role != Role::Voter {
        return None;
    }
    let voter = finished.voice.clone().unwrap_or_default();
    let shown = vote::shown(
        &vote::seed(&state.debate, &voter),
        &vote::candidates(&state.positions, &voter),
    );
    let order = finished.markers.rank.as_ref().map(|r| r.order.as_str());
    let ballot = vote::Ballot {
        cast: vote::read(&shown, order),
        voter,
        shown,
    };
    state.ballots.push(ballot.clone());
    Some(ballot)
}

/// The ballot's trailers (the labels it was shown, what it cast) and, when the synthesis comes
/// next, the vote's result.
fn with_ballot(meta: &mut Meta, state: &State, outcome: &Outcome, ballot: Option<&vote::Ballot>) {
    let Some(ballot) = ballot else {
        return;
    };
    meta.ballot_shown = ballot
        .shown
        .iter()
        .enumerate()
        .map(|(i, seat)| Tabbed::new(vote::label(i), seat.clone()))
        .collect();
    meta.ballot = Some(ballot.cast.clone());
    if let Next::Prompt(cue) = &outcome.next
        && cue.role == Role::Synthesizer
    {
        let result = vote::tally(&state.ballots, &state.positions);
        meta.vote = result
            .iter()
            .map(|s| Tabbed::new(s.seat.clone(), s.points.to_string()))
            .collect();
        meta.vote_cast = Some(format!(
            "{}/{}",
            vote::cast(&state.ballots),
            state.ballots.len()
        ));
    }
}

/// The trailers of the speaker's position and open points, and of the convergence check.
fn with_positions(meta: &mut Meta, finished: &Finished, convergence: Convergence) {
    if let Some(p) = &finished.markers.position
        && (finished.role.is_debating() || finished.role == Role::Triage)
    {
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
}

/// The synthesis's trailers: the points still open (and those it does not mention, which are
/// returned), the consensus, and what stopping at convergence would have saved. `step` is the
/// synthesis's, `spent_before` what the line had spent before it.
fn with_dissent(
    meta: &mut Meta,
    state: &State,
    text: &str,
    step: u32,
    spent_before: &Spent,
) -> Vec<OpenPoint> {
    let open = positions::still_open(&state.positions);
    let unmentioned: Vec<OpenPoint> = positions::unmentioned(&open, text)
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
        .and_then(|c| converge::saving(&c, step.saturating_sub(1), spent_before));
    meta.triage_saving = state.triage_shadow.filter(|s| s.settled).and_then(|s| {
        let at = crate::model::positions::Converged {
            round: 1,
            step: s.step,
            tokens: s.tokens,
            priced: s.priced,
            acted: false,
        };
        converge::saving(&at, step.saturating_sub(1), spent_before)
    });
    unmentioned
}

/// The commit's subject: who spoke in which round, and the gist of what they said (its first
/// line as people read it: a phase that opens with its position opens with it in words).
fn subject(finished: &Finished, text: &str) -> String {
    let text = crate::model::markers::readable(text);
    let gist: String = crate::model::state::first_line(&text)
        .replace("**", "")
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
        Role::Voter => format!(
            "ballot of {}: {gist}",
            finished.voice.as_deref().unwrap_or("?")
        ),
        _ => format!("round {} {who}: {gist}", finished.round),
    }
}
