//! The prompts a stop hands out: the next phase's, or the one that is out, rendered from the
//! line's state and the debate so far.

use crate::error::{DebateError, io};
use crate::fsutil;
use crate::home::{Home, LineRef};
use crate::model::machine::Cue;
use crate::model::prompt::{PhaseContext, Prompts};
use crate::model::state::State;

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
    let seat = cue.seat(state);
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

/// The line's `transcript.md`: the debate so far (empty before its first phase).
pub(crate) fn read_transcript(home: &Home, line: &LineRef) -> Result<String, DebateError> {
    let path = home.transcript_path(line);
    Ok(fsutil::read_optional(&path)
        .map_err(io("cannot read", &path))?
        .unwrap_or_default())
}
