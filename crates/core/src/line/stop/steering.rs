//! Steering in a line's queue as a stop sees it: what waits to be taken, and what came too
//! late to be delivered.

use crate::error::{DebateError, io};
use crate::home::{Home, LineRef, Queued};
use crate::model::state::{Role, State, Status};

/// Steering in the queue that the line has not taken yet, oldest first.
pub(super) fn waiting_steering(
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
pub(super) fn undelivered(
    home: &Home,
    line: &LineRef,
    state: &State,
) -> Result<Vec<Queued>, DebateError> {
    if state.progress.status == Status::Active && state.progress.phase != Role::Synthesizer {
        return Ok(Vec::new());
    }
    waiting_steering(home, line, state)
}
