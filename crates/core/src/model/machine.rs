//! The debate as a pure state machine: (setup, progress, phase text, queued steering) →
//! (what to record, next progress, what to tell Claude).
//!
//! Nothing here touches files, git, clocks or processes, so every transition is tested as a
//! table and the Stop hook only has to carry out what the machine decides. Resume and replay
//! are folds of recorded phases through [`advance`].

use crate::model::markers::{self, Markers};
use crate::model::state::{Progress, Role, Rotation, Setup, State, Status};
use crate::model::vote;

/// One finished turn of Claude, as the machine sees it.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    pub text: &'a str,
    /// Steering queued by `anvil steer` (or the web page) since the last stop, oldest first.
    pub queued: &'a [String],
}

/// Which phase a prompt asks for, with what it must carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cue {
    pub role: Role,
    pub round: u32,
    /// The stakeholder or persona speaking, in a rotation.
    pub voice: Option<String>,
    /// Human steering this prompt delivers.
    pub steering: Vec<String>,
}

impl Cue {
    /// The seat that plays this phase of `state`'s line; `None` when the session that drives
    /// the line plays it: no seat is set for it, or the host has taken it over
    /// ([`State::seat_fallback`]). A ballot is cast by the seat that debated as its voter.
    pub fn seat<'s>(&self, state: &'s State) -> Option<&'s crate::model::seats::Seat> {
        if state.seat_fallback.is_some() {
            return None;
        }
        let seats = &state.setup.seats;
        if matches!(self.role, Role::Voter | Role::Triage) {
            let voter = self.voter(&state.setup)?;
            return seats.seat_for(voter.role.name(), voter.voice.as_deref());
        }
        seats.seat_for(self.role.name(), self.voice.as_deref())
    }

    /// Whether `other` asks for the same phase: the same role, round and voice (whatever
    /// steering each carries).
    pub fn same_phase(&self, other: &Cue) -> bool {
        (self.role, self.round, &self.voice) == (other.role, other.round, &other.voice)
    }

    /// For a ballot or a triage answer: the debating seat that gives it.
    pub fn voter(&self, setup: &Setup) -> Option<vote::Voter> {
        if !matches!(self.role, Role::Voter | Role::Triage) {
            return None;
        }
        let seat = self.voice.as_deref()?;
        vote::voters(setup).into_iter().find(|v| v.seat() == seat)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Block the stop and hand Claude this phase.
    Prompt(Cue),
    /// The debate is over: let Claude stop.
    Finish,
}

/// The phase that just ended, as it is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub role: Role,
    pub round: u32,
    pub voice: Option<String>,
    pub markers: Markers,
    /// Steering that arrived with this stop (pause answer first, then the queue).
    pub steering: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub finished: Finished,
    pub progress: Progress,
    pub next: Next,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MachineError {
    #[error("the line is {0}, so there is no phase to record")]
    NotActive(&'static str),
}

/// The progress of a new line, and the first phase's cue.
pub fn start(setup: &Setup) -> (Progress, Cue) {
    let role = if setup.triage && !vote::voters(setup).is_empty() {
        Role::Triage
    } else {
        first_role(setup)
    };
    let round = if role == Role::Triage { 0 } else { 1 };
    let progress = Progress {
        status: Status::Active,
        phase: role,
        round,
        step: 0,
        steering: Vec::new(),
        ended_early: false,
        voter: 0,
        ending: false,
    };
    let cue = cue_for(setup, role, round, 0, Vec::new());
    (progress, cue)
}

/// Whether `round` is drafted blind: every debating seat speaks in it, and none is shown
/// another's phase of the same round, only the rounds before (`--all-draft`, every round;
/// `--independent`, round 1 of an advocate/critic pair). The machine still records the round's
/// phases one by one, in speaking order; [`due`] hands them out together, so that the edges
/// can play them at once.
pub fn drafted(setup: &Setup, round: u32) -> bool {
    setup.all_draft || (setup.seats.independent && setup.rotation == Rotation::Pair && round == 1)
}

/// The phases due at once from where `progress` stands, in the order they are recorded: the
/// rest of a round drafted blind ([`drafted`]), the rest of the triage answers, the rest of
/// the ballots (each blind to the others' by construction); else the one phase that is out.
/// Each carries the steering the first does: steering between rounds reaches every seat.
pub fn due(setup: &Setup, progress: &Progress) -> Vec<Cue> {
    let first = current_cue(setup, progress);
    let role = progress.phase;
    let batched = progress.status == Status::Active
        && (matches!(role, Role::Triage | Role::Voter)
            || (role.is_debating() && drafted(setup, progress.round)));
    let mut cues = vec![first];
    if !batched {
        return cues;
    }
    let (mut at, mut voter) = (role, progress.voter);
    loop {
        let (next, round, next_voter) = successor(setup, at, progress.round, voter);
        let same = round == progress.round
            && if role.is_debating() {
                next.is_debating()
            } else {
                next == role
            };
        if !same || cues.len() > MAX_DUE {
            return cues;
        }
        cues.push(cue_for(
            setup,
            next,
            round,
            next_voter,
            progress.steering.clone(),
        ));
        (at, voter) = (next, next_voter);
    }
}

/// Whether the phase `finished` and the next one, `next`, are due together ([`due`]): two
/// drafts of one round drafted blind, two triage answers, two ballots.
pub fn together(setup: &Setup, finished: &Finished, next: &Cue) -> bool {
    match finished.role {
        Role::Triage | Role::Voter => next.role == finished.role,
        role if role.is_debating() => {
            next.role.is_debating()
                && next.round == finished.round
                && drafted(setup, finished.round)
        }
        _ => false,
    }
}

/// More phases than any round, triage or vote holds (a guard against a loop without end).
const MAX_DUE: usize = 64;

/// The cue of the phase `progress` stands at (the prompt that is out, or would be re-sent).
pub fn current_cue(setup: &Setup, progress: &Progress) -> Cue {
    cue_for(
        setup,
        progress.phase,
        progress.round,
        progress.voter,
        progress.steering.clone(),
    )
}

/// Records the phase that `progress` stands at with `turn`'s text and moves on.
pub(crate) fn advance(
    setup: &Setup,
    progress: &Progress,
    turn: Turn<'_>,
) -> Result<Outcome, MachineError> {
    if progress.status != Status::Active {
        return Err(MachineError::NotActive(progress.status.name()));
    }
    let role = progress.phase;
    let round = progress.round;
    let markers = markers::scan(turn.text);

    let mut steering: Vec<String> = Vec::new();
    if role == Role::InteractivePause
        && let Some(answer) = markers
            .steering
            .as_ref()
            .filter(|s| !s.is_empty() && !markers::keeps_course(s))
    {
        steering.push(answer.clone());
    }
    steering.extend(
        turn.queued
            .iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()),
    );

    let finished = Finished {
        role,
        round,
        voice: voice(setup, role, round, progress.voter),
        markers: markers.clone(),
        steering: steering.clone(),
    };

    if role == Role::Synthesizer {
        let progress = Progress {
            status: Status::Done,
            step: progress.step + 1,
            steering: Vec::new(),
            ..progress.clone()
        };
        return Ok(Outcome {
            finished,
            progress,
            next: Next::Finish,
        });
    }

    let natural = successor(setup, role, round, progress.voter);
    let steered_end = steering.iter().any(|s| markers::ends_debate(s));
    // In a round drafted blind every seat's draft is due: a debater's wish to end the debate
    // waits for the round's last draft.
    let mid_draft = role.is_debating()
        && drafted(setup, round)
        && natural.0.is_debating()
        && natural.1 == round;
    let asked_end = role.is_debating() && (markers.complete || progress.ending);
    let wants_end = (asked_end && !mid_draft) || steered_end;
    // A debater that ends the debate still leaves the vote to come; the human's word to
    // conclude (`synthesize`, `skip`) goes straight to the synthesis.
    let (next_role, next_round, next_voter) = if steered_end {
        (Role::Synthesizer, round, 0)
    } else if wants_end && role != Role::Voter {
        let (role, voter) = conclusion(setup);
        (role, round, voter)
    } else {
        natural
    };
    let fresh = steering.into_iter().filter(|s| !markers::ends_debate(s));
    // The steering of a round drafted blind reaches every draft of it.
    let carried: Vec<String> = if mid_draft && !steered_end {
        progress.steering.iter().cloned().chain(fresh).collect()
    } else {
        fresh.collect()
    };
    let progress = Progress {
        status: Status::Active,
        phase: next_role,
        round: next_round,
        step: progress.step + 1,
        steering: carried.clone(),
        ended_early: progress.ended_early
            || (wants_end && !matches!(natural.0, Role::Synthesizer | Role::Voter)),
        voter: next_voter,
        ending: mid_draft && !steered_end && asked_end,
    };
    let cue = cue_for(setup, next_role, next_round, next_voter, carried);
    Ok(Outcome {
        finished,
        progress,
        next: Next::Prompt(cue),
    })
}

fn first_role(setup: &Setup) -> Role {
    match setup.rotation {
        Rotation::Pair => setup.pair_order()[0],
        Rotation::Stakeholders => Role::Stakeholder,
        Rotation::Personas => Role::Persona,
    }
}

/// What follows the debating rounds: the first ballot with `--vote` (and voters to cast
/// one), else the synthesis; with the voter's index.
pub(crate) fn conclusion(setup: &Setup) -> (Role, u32) {
    if setup.vote && !vote::voters(setup).is_empty() {
        (Role::Voter, 0)
    } else {
        (Role::Synthesizer, 0)
    }
}

/// The phase after `role` in `round` (ballot `voter`, while voting) when nobody intervenes,
/// with the voter whose ballot is next.
fn successor(setup: &Setup, role: Role, round: u32, voter: u32) -> (Role, u32, u32) {
    let voters = u32::try_from(vote::voters(setup).len()).unwrap_or(u32::MAX);
    if role == Role::Voter {
        return if voter + 1 < voters {
            (Role::Voter, round, voter + 1)
        } else {
            (Role::Synthesizer, round, 0)
        };
    }
    if role == Role::Triage {
        // The line decides after the last answer whether the question is settled
        // (`line/stop/record.rs`); unsettled, the debate opens.
        return if voter + 1 < voters {
            (Role::Triage, round, voter + 1)
        } else {
            (first_role(setup), 1, 0)
        };
    }
    if role.is_debating()
        && setup.rotation != Rotation::Pair
        && drafted(setup, round)
        && usize::try_from(voter + 1).is_ok_and(|next| next < setup.voices.len())
    {
        return (role, round, voter + 1);
    }
    let (role, round) = debating_successor(setup, role, round);
    if role == Role::Synthesizer {
        let (role, voter) = conclusion(setup);
        return (role, round, voter);
    }
    (role, round, 0)
}

fn debating_successor(setup: &Setup, role: Role, round: u32) -> (Role, u32) {
    let opener = first_role(setup);
    let closes_round = match setup.rotation {
        Rotation::Pair => role == setup.pair_order()[1],
        Rotation::Stakeholders | Rotation::Personas => role.is_debating(),
    };
    if role == Role::InteractivePause {
        return (opener, round + 1);
    }
    if !closes_round {
        return (setup.pair_order()[1], round);
    }
    if round >= setup.rounds {
        (Role::Synthesizer, round)
    } else if setup.interactive {
        (Role::InteractivePause, round)
    } else {
        (opener, round + 1)
    }
}

fn voice(setup: &Setup, role: Role, round: u32, voter: u32) -> Option<String> {
    match role {
        Role::Voter | Role::Triage => {
            let index = usize::try_from(voter).ok()?;
            vote::voters(setup).get(index).map(vote::Voter::seat)
        }
        Role::Stakeholder | Role::Persona => {
            let index = if drafted(setup, round) {
                voter
            } else {
                round.saturating_sub(1)
            };
            let index = usize::try_from(index).ok()?;
            setup.voices.get(index).cloned()
        }
        _ => None,
    }
}

fn cue_for(setup: &Setup, role: Role, round: u32, voter: u32, steering: Vec<String>) -> Cue {
    Cue {
        role,
        round,
        voice: voice(setup, role, round, voter),
        steering,
    }
}

/// How many phases a line runs when nobody ends it early: used for progress displays.
pub fn planned_phases(setup: &Setup) -> u32 {
    let seats = u32::try_from(vote::voters(setup).len()).unwrap_or(0);
    let drafts: u32 = (1..=setup.rounds)
        .map(|round| match setup.rotation {
            Rotation::Pair => 2,
            _ if drafted(setup, round) => seats,
            _ => 1,
        })
        .sum();
    let pauses = if setup.interactive {
        setup.rounds.saturating_sub(1)
    } else {
        0
    };
    let ballots = match conclusion(setup).0 {
        Role::Voter => seats,
        _ => 0,
    };
    let triage = if setup.triage { seats } else { 0 };
    drafts + pauses + triage + ballots + 1
}

#[cfg(test)]
pub(crate) mod tests;
