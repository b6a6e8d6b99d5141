//! The changes of a line that are not phases: steering queued for the next stop, a cancel, a
//! session forgetting the debate (compaction), a headless run taking the line and recording
//! what it cost. Each is one [`transaction`](crate::line::transaction).

use crate::clock::now;
use crate::error::{DebateError, Refusal, io};
use crate::home::{Home, LineRef};
use crate::line::transaction::{self, Change, Options, Plan, print_notes};
use crate::model::state::{Role, State, Status};

/// `line` is driven by `anvil run`, which asks the human at the terminal at interactive
/// pauses (a fact about this machine, kept in the live state only).
pub fn drive_headless(home: &Home, line: &LineRef) -> Result<(), DebateError> {
    transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        if state.headless {
            return Ok(Plan::Keep(()));
        }
        state.headless = true;
        Ok(Plan::Live(Box::new(state), ()))
    })?;
    Ok(())
}

/// Records what the `claude -p` runs of one `anvil run` of `line` cost, once they are over
/// (done, paused for good, or failed): one bookkeeping commit with the `Anvil-Run-*`
/// trailers; the line's state stays as it is. The runs' phases were recorded by the hook
/// meanwhile, each with its own figures from the transcript.
pub fn record_run(
    home: &Home,
    line: &LineRef,
    session: &str,
    cost: &crate::model::provenance::RunCost,
) -> Result<(), DebateError> {
    // The models' names came from Claude Code's output: cleaned before they are recorded.
    let mut cost = cost.clone();
    let mut intake = crate::model::secrets::Intake::new(home.root());
    cost.clean(&mut intake);
    if let Some(note) = intake.note() {
        transaction::print_notes(&[note]);
    }
    transaction::run(home, line, Options::default(), |current| {
        let state = current.state()?;
        let subject = format!("headless run: {}", cost.summary());
        let mut change = Change::bookkeeping(state, "run", subject);
        change.meta.session = Some(session.to_owned());
        cost.write_to(&mut change.meta);
        Ok(Plan::Record(Box::new(change), ()))
    })?;
    Ok(())
}

/// Records that `anvil adr` wrote the decision record `path` (relative to the project) from
/// `line`: a bookkeeping commit, so that `log`, `show`, the web room and teammates who pull
/// know which record the debate produced.
pub fn record_decision(home: &Home, line: &LineRef, path: &str) -> Result<(), DebateError> {
    transaction::run(home, line, Options::default(), |current| {
        let state = current.state()?;
        let subject = format!("decision record: {path}");
        let mut change = Change::bookkeeping(state, "adr", subject);
        change.meta.decision_record = Some(path.to_owned());
        Ok(Plan::Record(Box::new(change), ()))
    })?;
    Ok(())
}

/// A session's context was compacted or cleared (Claude Code's SessionStart hook): it no
/// longer holds the debate, so the next prompt it gets brings it up to date in full.
pub(crate) fn forget_session(home: &Home, session: &str) -> Result<(), DebateError> {
    let Some(line) = home
        .bound_line(session)
        .map_err(io("cannot read the session binding in", home.root()))?
    else {
        return Ok(());
    };
    transaction::run(home, &line, Options::default(), |current| {
        let mut state = current.state()?;
        if state.informed_session.as_deref() != Some(session) {
            return Ok(Plan::Keep(()));
        }
        state.informed_session = None;
        Ok(Plan::Live(Box::new(state), ()))
    })?;
    Ok(())
}

/// Ends a line for good: recorded, unbound, and no longer offered to sessions. Once this
/// returns, no hook records anything more on the line.
pub fn cancel(home: &Home, line: &LineRef, reason: &str) -> Result<State, DebateError> {
    let mut intake = crate::model::secrets::Intake::new(home.root());
    let reason = intake.clean("the reason", reason);
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        if state.progress.status.is_over() {
            return Err(Refusal::AlreadyOver {
                line: line.clone(),
                status: state.progress.status,
            }
            .into());
        }
        state.progress.status = Status::Cancelled;
        state.updated = now().to_string();
        let subject = format!("cancel at round {}", state.progress.round);
        let mut change = Change::bookkeeping(state.clone(), "cancel", subject);
        change.meta.reason = Some(reason.to_string()).filter(|r| !r.is_empty());
        Ok(Plan::Record(Box::new(change), state))
    })?;
    let mut notes = done.notes;
    notes.extend(intake.note());
    print_notes(&notes);
    Ok(done.value)
}

/// What became of `anvil steer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steered {
    /// The steering's place in the line's queue.
    pub number: u64,
    /// The steering as it was queued: cleaned of credentials.
    pub text: String,
    /// What the person is told about it (what was redacted), if anything.
    pub note: Option<String>,
}

/// Queues steering for `line`'s next phase. Checked and queued under the line's lock, so
/// either it is refused (the line is over, or only its synthesis is left) or it reaches the
/// next prompt; it is never accepted and then lost.
pub fn steer(home: &Home, line: &LineRef, text: &str) -> Result<Steered, DebateError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Refusal::EmptySteering.into());
    }
    // Steering enters anvil here (the command line, the web room): cleaned before it is queued.
    let mut intake = crate::model::secrets::Intake::new(home.root());
    let text = intake.clean("steering", text);
    let done = transaction::run(home, line, Options::default(), |current| {
        let state = current.state()?;
        if state.progress.status.is_over() {
            return Err(Refusal::SteerOver {
                line: line.clone(),
                status: state.progress.status,
            }
            .into());
        }
        if state.progress.phase == Role::Synthesizer {
            return Err(Refusal::SteerTooLate {
                line: line.clone(),
                round: state.progress.round,
            }
            .into());
        }
        // Numbered after everything the line has taken or has waiting: under the lock, so
        // two `anvil steer` never take the same number.
        let queued = home
            .queued_steering(line)
            .map_err(io("cannot read queued steering of", home.line_dir(line)))?;
        let number = queued
            .iter()
            .map(|q| q.number)
            .chain([state.steering_taken])
            .max()
            .unwrap_or(0)
            + 1;
        let path = home.steering_dir(line);
        crate::fault::point("queueing steering")
            .and_then(|()| home.write_queued(line, number, &text))
            .map_err(io("cannot queue steering in", path))?;
        Ok(Plan::Keep(number))
    })?;
    let note = intake.note();
    let mut notes = done.notes;
    notes.extend(note.clone());
    print_notes(&notes);
    Ok(Steered {
        number: done.value,
        text: text.into_owned(),
        note,
    })
}
