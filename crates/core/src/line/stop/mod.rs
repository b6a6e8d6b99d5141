//! Where a phase is recorded: one stop of the Claude session that drives a line. The turn's
//! text becomes the phase that was out, the machine decides what follows, and the next
//! prompt is handed out, all in one [`transaction`](crate::line::transaction); or the prompt
//! that is out is handed out again (a repeat, a turn with no text, a session new to the line).
//!
//! A stop goes through three steps, each in a file of its own:
//!
//! 1. [`guard`]: is the turn the phase that is out? Every other stop is answered there (a line
//!    that is over or waits for the human, a repeat, a session new to the line, a host's turn
//!    while a seat's phase is out), and nothing is recorded;
//! 2. [`record`]: the machine decides what follows, the line counts the phase (position,
//!    cost, convergence, budget: [`converge`]), the next prompt is rendered ([`prompt`]), and
//!    all of it becomes one commit;
//! 3. [`reply`]: what the hook tells Claude and the person.

mod converge;
mod guard;
mod prompt;
mod record;
mod reply;
mod steering;

use crate::error::{DebateError, io};
use crate::home::{Home, LineRef};
use crate::line::transaction::{self, Current, Options, Plan};

pub(crate) use prompt::{read_transcript, render_prompt};
pub use reply::{Kind, Reply};

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
    /// The prompt the next phase was really given, when it was played already (the phases
    /// due at once, [`crate::model::machine::due`]): recorded as its prompt, when the phase
    /// that follows is that cue's (a line that turned elsewhere gets its own prompt).
    pub next_prompt: Option<(&'a crate::model::machine::Cue, &'a str)>,
    /// The phase this text answers, beside [`Stop::at_step`]: the line must stand at this cue
    /// (the same role, round and voice) for the text to be recorded.
    pub at_cue: Option<&'a crate::model::machine::Cue>,
    /// The line's step when the phase this text answers was handed out (a seat's turn, which
    /// takes minutes without the line's lock): if the line has moved since, the text is not
    /// recorded; if not, it is that phase, even in the words of the phase before (the text
    /// is known by its step, not taken for a repeated stop).
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
            at_cue: None,
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
    let mut kept = Kept::No;
    // Whether the line is over once the stop is decided, as the transaction leaves it.
    let mut over = false;
    let done = transaction::run(
        home,
        line,
        Options {
            patience: std::time::Duration::from_secs(5),
            ..Options::default()
        },
        |current| {
            kept = Kept::of(stop, kept_id.as_deref(), current);
            let plan = match kept {
                Kept::No => decide_stop(home, current, stop, response_id.as_deref()),
                Kept::Unrecorded => {
                    let kept = Stop {
                        text: stop.kept,
                        ..stop
                    };
                    decide_stop(home, current, kept, kept_id.as_deref())
                }
                Kept::Recorded => decide_stop(home, current, Stop { text: None, ..stop }, None),
            }?;
            let after = match &plan {
                Plan::Keep(_) => current.state.as_ref(),
                Plan::Live(state, _) => Some(&**state),
                Plan::Record(change, _) => Some(&change.state),
            };
            over = after.is_some_and(|s| s.progress.status.is_over());
            Ok(plan)
        },
    )?;
    let mut notes = done.notes;
    if matches!(done.value.kind, Kind::Block { .. } | Kind::Finish) {
        notes.extend(kept.note(home, line));
    }
    if over && !matches!(done.value.kind, Kind::Block { .. } | Kind::Pause) {
        // The line is over: this session drives nothing now (a binding a cancel raced with
        // is dropped here too; a cancel that comes after this stop unbinds the line's
        // sessions itself).
        home.unbind(stop.session)
            .map_err(io("cannot unbind the session in", home.root()))?;
    }
    Ok(done.value.with_notes(&notes))
}

/// What the kept text ([`Stop::kept`]) is to a stop: not there, not recorded yet, or recorded
/// already.
#[derive(Clone, Copy, PartialEq)]
enum Kept {
    No,
    Unrecorded,
    Recorded,
}

impl Kept {
    /// The kept text of `stop` (known by `kept_id`) to the line `current` shows. It goes first
    /// when the record does not have it yet: it answered the prompt that is out, while this
    /// turn answered the failure's message. One the record has already was recorded by a stop
    /// that then failed to hand out the next prompt: Claude never saw that prompt, so it is
    /// handed out again, and this turn (an answer to the failure) is not recorded.
    fn of(stop: Stop<'_>, kept_id: Option<&str>, current: &Current<'_>) -> Kept {
        let last = current
            .state
            .as_ref()
            .and_then(|s| s.last_response.as_deref());
        match (stop.kept, kept_id) {
            (Some(_), Some(id)) if last == Some(id) => Kept::Recorded,
            (Some(_), Some(_)) => Kept::Unrecorded,
            _ => Kept::No,
        }
    }

    /// What the person is told of it, once the stop has handed out a prompt or the end.
    fn note(self, home: &Home, line: &LineRef) -> Option<String> {
        match self {
            Kept::Unrecorded => Some(format!(
                "recorded the reply saved by a stop that could not record it ({}); this turn's \
                 reply was an answer to that failure and is not a phase",
                home.incoming_path(line).display()
            )),
            Kept::Recorded => Some(
                "the last stop recorded its reply but could not hand out the next prompt; it \
                 is handed out now (this turn's reply answered the failure and is not a phase)"
                    .to_owned(),
            ),
            Kept::No => None,
        }
    }
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
    let mut intake = crate::model::secrets::Intake::new(home.root());
    record_cleaned(
        home,
        line,
        "the pause's answer",
        text,
        Stop::of(session),
        &mut intake,
    )
}

/// Records `text`, which entered anvil from `place` and is cleaned of credentials first (by
/// `intake`), as the phase that is out on `line`, with the rest of `stop`; says what was
/// redacted.
pub(crate) fn record_cleaned(
    home: &Home,
    line: &LineRef,
    place: &str,
    text: &str,
    stop: Stop<'_>,
    intake: &mut crate::model::secrets::Intake,
) -> Result<Reply, DebateError> {
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

/// Decides one stop of the line `current` shows: the guard answers every turn that is not the
/// phase that is out; the phase is recorded, and the reply says what follows.
fn decide_stop(
    home: &Home,
    current: &Current<'_>,
    stop: Stop<'_>,
    response_id: Option<&str>,
) -> Result<Plan<Reply>, DebateError> {
    let phase = match guard::guard(home, current, stop, response_id)? {
        guard::Guarded::Answered(plan) => return Ok(plan),
        guard::Guarded::Phase(phase) => phase,
    };
    let recorded = record::record(home, current.line, phase)?;
    let reply = reply::after_phase(
        home,
        current.line,
        &recorded.change.state,
        recorded.prompt,
        recorded.next_seat.as_ref(),
        &recorded.unmentioned,
    )?;
    Ok(Plan::Record(Box::new(recorded.change), reply))
}

#[cfg(test)]
mod tests {
    use super::converge::over_budget;
    use super::*;
    use crate::line::control::record_run;
    use crate::model::provenance::RunCost;
    use crate::model::state::{Role, State};
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
        let Kind::Block { prompt } = &reply.kind else {
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
        assert_eq!(over_budget(&tokens, &spent(0, 0, 0), 1), None);
        // 600 over two phases: the next takes about 300, 900 stays within 1000.
        assert_eq!(over_budget(&tokens, &spent(600, 0, 2), 1), None);
        let why = over_budget(&tokens, &spent(800, 0, 2), 1).unwrap();
        assert_eq!(
            why,
            "800 of 1000 tokens spent; the next phase would take about 400 more"
        );
        // The phases due together are judged together: two drafts of 300 would pass 1000.
        let why = over_budget(&tokens, &spent(600, 0, 2), 2).unwrap();
        assert_eq!(
            why,
            "600 of 1000 tokens spent; the next 2 phases, due together, would take about 600 more"
        );
        let usd = Seats {
            budget_usd: Some("0.05".into()),
            ..Seats::default()
        };
        assert_eq!(over_budget(&usd, &spent(10_000, 20_000_000, 2), 1), None);
        let why = over_budget(&usd, &spent(10_000, 40_000_000, 2), 1).unwrap();
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
            deliver(&home, &line, "The advocate's case.").kind,
            Kind::Block { .. }
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
