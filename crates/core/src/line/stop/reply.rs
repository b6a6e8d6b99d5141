//! The last step of a stop: what the Stop hook tells Claude and the person. Every reply shows
//! the person a notice; its [`Kind`] says what Claude is told besides (the next prompt, or to
//! stop), and carries only what differs between kinds.

use crate::error::DebateError;
use crate::home::{Home, LineRef, Queued};
use crate::model::positions::{self, OpenPoint};
use crate::model::state::{Role, State};

/// What the Stop hook should tell Claude.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// What the person is shown. A silent reply shows nothing, whatever this holds.
    pub notice: String,
    pub kind: Kind,
}

/// What a [`Reply`] tells Claude besides its notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Block the stop with this prompt.
    Block { prompt: String },
    /// Let Claude stop: the debate is done.
    Finish,
    /// Let Claude stop at an interactive pause: `anvil run` asks the human at the terminal.
    Pause,
    /// The phase that is out is a seat's, played by another agent: `anvil run` plays it, or
    /// the Stop hook of the session that drives the line, before the host's next turn
    /// (`seat::hook`). Claude is let stop when neither can.
    Seat,
    /// Let Claude stop: a question waits for the human, or steering came too late.
    Message,
    /// Nothing to say: the line is over, and Claude stops as it would without anvil.
    Silent,
}

impl Reply {
    /// Block the stop with `prompt`, showing `notice`.
    pub fn block(prompt: String, notice: String) -> Reply {
        Reply {
            notice,
            kind: Kind::Block { prompt },
        }
    }

    /// Let Claude stop, the debate done, saying `notice`.
    pub fn finish(notice: String) -> Reply {
        Reply {
            notice,
            kind: Kind::Finish,
        }
    }

    /// Let Claude stop at an interactive pause that `anvil run` asks, saying `notice`.
    pub fn pause(notice: String) -> Reply {
        Reply {
            notice,
            kind: Kind::Pause,
        }
    }

    /// A seat's phase is out, saying `notice`.
    pub fn seat(notice: String) -> Reply {
        Reply {
            notice,
            kind: Kind::Seat,
        }
    }

    /// Let Claude stop, saying `notice`.
    pub fn message(notice: String) -> Reply {
        Reply {
            notice,
            kind: Kind::Message,
        }
    }

    /// Let Claude stop as it would without anvil.
    pub fn silent() -> Reply {
        Reply {
            notice: String::new(),
            kind: Kind::Silent,
        }
    }

    /// The prompt a blocking reply hands Claude.
    pub fn into_prompt(self) -> Option<String> {
        match self.kind {
            Kind::Block { prompt } => Some(prompt),
            _ => None,
        }
    }

    /// Is a seat's phase out?
    pub fn is_seat(&self) -> bool {
        self.kind == Kind::Seat
    }

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
        match self.kind {
            Kind::Silent => Reply::message(f(String::new())),
            kind => Reply {
                notice: f(self.notice),
                kind,
            },
        }
    }
}

/// The reply to a stop that recorded a phase: the next prompt, the seat that plays it, the
/// pause that `anvil run` asks, or the end. `state` is the line's after the phase,
/// `next_seat` the seat of the phase that follows, `unmentioned` the open points a synthesis
/// left out.
pub(super) fn after_phase(
    home: &Home,
    line: &LineRef,
    state: &State,
    prompt: Option<String>,
    next_seat: Option<&crate::model::seats::Seat>,
    unmentioned: &[OpenPoint],
) -> Result<Reply, DebateError> {
    Ok(match prompt {
        Some(_) if let Some(seat) = next_seat => Reply::seat(seat_notice(state, line, seat)),
        // `anvil run` asks the human itself: Claude stops until it has the answer.
        Some(_) if state.headless && state.progress.phase == Role::InteractivePause => {
            Reply::pause(format!(
                "anvil: {line} pauses for steering after round {}",
                state.progress.round
            ))
        }
        Some(prompt) => Reply::block(prompt, progress_notice(state)),
        None => finished(home, line, state, unmentioned)?,
    })
}

/// The reply to the synthesis: the report, and what the synthesis left out (open points it
/// does not mention, steering that came too late).
fn finished(
    home: &Home,
    line: &LineRef,
    state: &State,
    unmentioned: &[OpenPoint],
) -> Result<Reply, DebateError> {
    let mut reply = finish_reply(home, line, state);
    if !unmentioned.is_empty() {
        let all = positions::still_open(&state.positions);
        for point in unmentioned {
            let label = all
                .iter()
                .position(|p| p == point)
                .map(positions::OpenPoint::label)
                .unwrap_or_default();
            reply.notice.push_str(&format!(
                "\nanvil: the synthesis does not mention open point {label} ({}: {}); it is recorded as dissent",
                point.seat, point.text
            ));
        }
    }
    let late = super::steering::undelivered(home, line, state)?;
    if !late.is_empty() {
        reply.notice.push('\n');
        reply
            .notice
            .push_str(&late_steering_notice(line, state, &late));
    }
    Ok(reply)
}

/// What the person is told when the next phase is a seat's.
pub(super) fn seat_notice(
    state: &State,
    line: &LineRef,
    seat: &crate::model::seats::Seat,
) -> String {
    format!("anvil {line}: {} · played by {seat}", state.standing())
}

/// The reply of a debate that is done: where its report is.
pub(super) fn finish_reply(home: &Home, line: &LineRef, state: &State) -> Reply {
    let mut notice = format!(
        "anvil: debate {line} is done; report: {}",
        crate::review::report::output_path(home, state).display()
    );
    if state.setup.framework.as_deref() == Some("adr") {
        notice.push_str(&format!(
            "; `anvil adr {line}` writes it into the code as a decision record"
        ));
    }
    Reply::finish(notice)
}

/// What the person is told of steering that came too late for the line's last phase.
pub(super) fn late_steering_notice(line: &LineRef, state: &State, late: &[Queued]) -> String {
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

/// A one-line status shown to the user between phases.
pub(super) fn progress_notice(state: &State) -> String {
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

    /// Notes go under what the person is shown and leave what Claude is told alone; a silent
    /// reply with notes becomes a message of the notes alone; no notes change nothing.
    #[test]
    fn notes_keep_the_kind_and_make_a_silent_reply_a_message() {
        let notes = ["a leftover lock was removed".to_owned()];
        let block = Reply::block("PROMPT".into(), "anvil d@main: round 2".into());
        assert_eq!(
            block.clone().with_notes(&notes),
            Reply::block(
                "PROMPT".into(),
                "anvil d@main: round 2\nanvil: note: a leftover lock was removed".into()
            )
        );
        assert_eq!(
            Reply::silent().with_notes(&notes),
            Reply::message("anvil: note: a leftover lock was removed".into())
        );
        assert_eq!(Reply::silent().with_notes(&[]), Reply::silent());
        assert_eq!(block.clone().with_notes(&[]), block);
        let seat = Reply::seat("critic · played by codex".into())
            .map_notice(|n| format!("anvil: advocate played by qwen\n{n}"));
        assert!(seat.is_seat());
        assert_eq!(
            seat.notice,
            "anvil: advocate played by qwen\ncritic · played by codex"
        );
        assert_eq!(block.into_prompt().as_deref(), Some("PROMPT"));
        assert_eq!(Reply::finish("done".into()).into_prompt(), None);
    }
}
