//! When a debate goes to its synthesis before its last round: its positions stopped moving
//! (`--converge`; noted always, as a shadow), or its next phase would pass its budget.

use crate::model::machine::{self, Cue, Next};
use crate::model::positions::{self, Converged};
use crate::model::state::{Role, State};

/// What the convergence check decided at one stop.
#[derive(Default)]
pub(super) struct Convergence {
    /// Positions stopped moving with this round (the first time on the line).
    pub round: Option<u32>,
    /// `--converge` sent the debate to its synthesis.
    pub stop: bool,
    /// `--converge` did not, and why.
    pub held: Option<String>,
}

/// After a phase that closed a round: did positions stop moving? The first time they do, the
/// line notes it (shadow mode, always on) with what it had spent by then; with `--converge`
/// the debate goes to its synthesis, unless steering is on its way, an interactive pause
/// comes next or a debater's question is open: a human's word is never overridden.
pub(super) fn convergence(state: &mut State, outcome: &mut machine::Outcome) -> Convergence {
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
        && !matches!(cue.role, Role::Synthesizer | Role::Voter)
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
                // The synthesis (and the vote before it) belongs to the round that
                // converged, not to the next one.
                conclusion_next(&state.setup, outcome);
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
pub(super) fn saving(
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

/// Whether the next `coming` phases would take the line past its budget, judged by what its
/// phases took on average: why, when they would. The phases due together come at once (a
/// budget cannot stop half of them, which are played together).
pub(super) fn over_budget(
    seats: &crate::model::seats::Seats,
    spent: &crate::model::state::Spent,
    coming: u64,
) -> Option<String> {
    if spent.phases == 0 {
        return None;
    }
    let phases = u64::from(spent.phases);
    let what = if coming > 1 {
        format!("the next {coming} phases, due together,")
    } else {
        "the next phase".to_owned()
    };
    if let Some(limit) = seats.budget_tokens {
        let next = spent.tokens / phases * coming;
        if spent.tokens + next > limit {
            return Some(format!(
                "{} of {limit} tokens spent; {what} would take about {next} more",
                spent.tokens
            ));
        }
    }
    if let Some(limit) = seats.budget_usd() {
        let next = spent.usd_nanos / phases * coming;
        if spent.usd_nanos + next > limit.nanos {
            let usd = |nanos| crate::record::usage::Usd { nanos }.human();
            return Some(format!(
                "{} of {} spent; {what} would take about {} more",
                usd(spent.usd_nanos),
                limit.human(),
                usd(next)
            ));
        }
    }
    None
}

/// Sends the debate to its synthesis when its next phase would take it past its budget, as
/// when a debate ends on its own; says why it did.
pub(super) fn stop_at_budget(state: &State, outcome: &mut machine::Outcome) -> Option<String> {
    let budget = match &outcome.next {
        // The phases due together with the one just recorded were played with it already.
        Next::Prompt(cue)
            if cue.role != Role::Synthesizer
                && !machine::together(&state.setup, &outcome.finished, cue) =>
        {
            let coming = machine::due(&state.setup, &outcome.progress).len();
            over_budget(
                &state.setup.seats,
                &state.spent,
                u64::try_from(coming).unwrap_or(1),
            )
        }
        _ => None,
    };
    if budget.is_some()
        && let Next::Prompt(cue) = &outcome.next
    {
        // The synthesis belongs to the last round debated, as when a debate ends on its own.
        let steering = cue.steering.clone();
        synthesis_next(outcome, steering);
    }
    budget
}

/// Sends the debate to what concludes it (the vote, with `--vote`, else the synthesis) before
/// its last round, in the round just debated.
fn conclusion_next(setup: &crate::model::state::Setup, outcome: &mut machine::Outcome) {
    let (role, voter) = machine::conclusion(setup);
    if role == Role::Synthesizer {
        return synthesis_next(outcome, Vec::new());
    }
    let round = outcome.finished.round;
    outcome.progress.phase = role;
    outcome.progress.round = round;
    outcome.progress.voter = voter;
    outcome.progress.ended_early = true;
    outcome.next = Next::Prompt(machine::current_cue(setup, &outcome.progress));
}

/// Sends the debate to its synthesis before its last round (a budget skips the vote too), in
/// the round just debated, with `steering` for it.
fn synthesis_next(outcome: &mut machine::Outcome, steering: Vec<String>) {
    let round = outcome.finished.round;
    outcome.next = Next::Prompt(Cue {
        role: Role::Synthesizer,
        round,
        voice: None,
        steering,
    });
    outcome.progress.phase = Role::Synthesizer;
    outcome.progress.round = round;
    outcome.progress.voter = 0;
    outcome.progress.ended_early = true;
}

/// After the last triage answer (`--triage`): what triage decided, in the record's words;
/// settled, the debate goes straight to its synthesis.
pub(super) fn triage(state: &mut State, outcome: &mut machine::Outcome) -> Option<String> {
    if outcome.finished.role != Role::Triage {
        return None;
    }
    if let Next::Prompt(cue) = &outcome.next
        && cue.role == Role::Triage
    {
        return None;
    }
    let decided = positions::settled(&state.triage, state.setup.triage_threshold());
    if matches!(decided, positions::Triage::Settled { .. })
        && let Next::Prompt(cue) = &outcome.next
        && cue.role != Role::Synthesizer
    {
        let steering = cue.steering.clone();
        synthesis_next(outcome, steering);
        outcome.progress.ended_early = false;
    }
    Some(decided.words())
}

/// In a debate run without triage: once every seat has spoken, each stating a position, what
/// triage would have decided from their first positions, noted once with what had been spent by then (the
/// synthesis records what it would have saved). The words, on the phase that decides it.
pub(super) fn triage_shadow(state: &mut State, outcome: &machine::Outcome) -> Option<String> {
    if state.setup.triage || state.triage_shadow.is_some() || !outcome.finished.role.is_debating() {
        return None;
    }
    let seats: Vec<String> = crate::model::vote::voters(&state.setup)
        .iter()
        .map(crate::model::vote::Voter::seat)
        .collect();
    let firsts: Vec<positions::Held> = seats
        .iter()
        .filter_map(|seat| state.positions.iter().find(|h| h.seat == *seat).cloned())
        .collect();
    // Nothing can be said before every seat has spoken, nor of seats that state no
    // position (triage asks for one).
    if seats.is_empty() || firsts.len() < seats.len() || firsts.iter().any(|h| h.stance.is_none()) {
        return None;
    }
    let decided = positions::settled(&firsts, state.setup.triage_threshold());
    state.triage_shadow = Some(positions::Shadow {
        settled: matches!(decided, positions::Triage::Settled { .. }),
        step: outcome.progress.step,
        tokens: state.spent.tokens,
        priced: state.spent.phases,
    });
    Some(format!("would have {}", decided.words()))
}
