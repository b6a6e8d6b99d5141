//! Questions from the debaters to the human: `anvil ask` and `anvil answer`.
//!
//! A debater that needs a fact only the user has runs `anvil ask "…"` with its Bash tool. The
//! line goes to `waiting_for_input` and the command waits for `anvil answer` (from a terminal,
//! or any other channel), then prints the answer as the tool's result, so the phase goes on
//! with it in the same turn. When nobody answers in time the debater is told to state its
//! assumption; when the asker is gone (Claude was interrupted), the answer is delivered with
//! the next phase's prompt instead. Every question and answer is a commit.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::error::{DebateError, Refusal, io};
use crate::home::{Home, LineRef};
use crate::line::transaction::{self, Change, Options, Plan};
use crate::model::state::{Question, State, Status};

/// How an `anvil ask` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    Answered(String),
    /// Nobody answered within the wait; the question is closed unanswered.
    NoAnswer,
}

/// The file an `anvil ask` process holds locked while it waits for the answer
/// ([`crate::fsutil::hold`]): the lock, not the file, says that it waits.
fn waiter_path(home: &Home, line: &LineRef) -> PathBuf {
    home.asking_path(line)
}

/// Where the line stands now (read only).
fn load(home: &Home, line: &LineRef) -> Result<State, DebateError> {
    transaction::view(home, line)
}

/// A question this process put to the human, with this process registered as its asker:
/// an answer, from wherever it comes, is handed to [`Asking::wait`]. The asker is registered
/// for as long as this value lives (it holds the waiter's lock), and no longer, however the
/// process ends.
#[must_use = "an asker that never waits loses its answers to the next phase"]
pub struct Asking {
    home: Home,
    line: LineRef,
    /// The line as the question left it.
    pub state: State,
    _waiter: std::fs::File,
}

/// Puts `question` to the human, with this process as the asker that waits for the answer.
///
/// The asker is registered in the same transaction that records the question, under the
/// line's lock: an answer can never see the question without its asker, however soon after
/// this returns it comes (before [`Asking::wait`] has begun, say).
pub fn ask(home: &Home, line: &LineRef, question: &str) -> Result<Asking, DebateError> {
    let path = waiter_path(home, line);
    let waiter = std::cell::RefCell::new(None);
    let state = put(home, line, question, || {
        if waiter.borrow().is_some() {
            // Decided again (the line moved under the first try): still registered.
            return Ok(());
        }
        // Under the line's lock, where every other asker registers and every answer looks:
        // the lock is free unless an asker of this line lives, which the line's status (a
        // question waiting) has already refused.
        let held = crate::fsutil::hold(&path, Duration::from_millis(100))
            .map_err(io("cannot take the lock of", &path))?
            .ok_or_else(|| DebateError::Io {
                what: "another anvil ask holds",
                path: path.clone(),
                source: std::io::Error::from(std::io::ErrorKind::WouldBlock),
            })?;
        *waiter.borrow_mut() = Some(held);
        Ok(())
    })?;
    // A question recorded means its asker was registered (and stays so: its commit is done).
    let waiter = waiter
        .into_inner()
        .expect("a recorded question has its asker");
    Ok(Asking {
        home: home.clone(),
        line: line.clone(),
        state,
        _waiter: waiter,
    })
}

/// Puts `question` to the human with nobody waiting for the answer: it goes with the next
/// phase's prompt. (A debater asks through [`ask`].)
pub fn open(home: &Home, line: &LineRef, question: &str) -> Result<State, DebateError> {
    put(home, line, question, || Ok(()))
}

/// Records the question; `register` runs under the line's lock once the question is
/// accepted, before it is committed.
fn put(
    home: &Home,
    line: &LineRef,
    question: &str,
    register: impl Fn() -> Result<(), DebateError>,
) -> Result<State, DebateError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(Refusal::EmptyQuestion.into());
    }
    // A debater's question enters anvil here. Nothing is printed: `anvil ask`'s output is the
    // debater's tool result; the person sees the question as it was recorded.
    let mut intake = crate::model::secrets::Intake::new(home.root());
    let question = intake.clean("a debater's question", question);
    let question = question.as_ref();
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        match (&state.progress.status, &state.question) {
            (Status::Active, _) => {}
            (Status::WaitingForInput, Some(open)) => {
                return Err(Refusal::AlreadyAsking {
                    line: line.clone(),
                    question: open.text.clone(),
                }
                .into());
            }
            (status, _) => {
                return Err(Refusal::NobodyToAsk {
                    line: line.clone(),
                    status: *status,
                }
                .into());
            }
        }
        register()?;
        state.progress.status = Status::WaitingForInput;
        state.question = Some(Question {
            text: question.to_owned(),
            answer: None,
        });
        state.updated = crate::clock::now().to_string();
        let subject = format!("ask: {}", crate::model::state::first_line(question));
        let mut change = Change::bookkeeping(state.clone(), "ask", subject);
        change.meta.question = Some(question.to_owned());
        Ok(Plan::Record(Box::new(change), state))
    })?;
    Ok(done.value)
}

impl Asking {
    /// Waits up to `timeout` for the answer, checking every `poll`; the asker is gone
    /// afterwards (an answer that comes later goes with the next phase's prompt).
    pub fn wait(self, timeout: Duration, poll: Duration) -> Result<Asked, DebateError> {
        wait_for_answer(&self.home, &self.line, timeout, poll)
        // Dropped here: the waiter's lock is let go.
    }
}

fn wait_for_answer(
    home: &Home,
    line: &LineRef,
    timeout: Duration,
    poll: Duration,
) -> Result<Asked, DebateError> {
    let deadline = Instant::now() + timeout;
    loop {
        let state = load(home, line)?;
        // Delivered as the tool's result. The answered question stays in the state (and the
        // record) until the next question replaces it.
        if let Some(answer) = state.question.as_ref().and_then(|q| q.answer.clone()) {
            return Ok(Asked::Answered(answer));
        }
        if state.progress.status.is_over() {
            return Err(Refusal::EndedWhileAsking {
                line: line.clone(),
                status: state.progress.status,
            }
            .into());
        }
        if state.question.is_none() {
            return Ok(Asked::NoAnswer);
        }
        if Instant::now() >= deadline {
            return close_unanswered(home, line);
        }
        std::thread::sleep(poll);
    }
}

/// Closes the open question unanswered, unless an answer came in the meantime.
fn close_unanswered(home: &Home, line: &LineRef) -> Result<Asked, DebateError> {
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        match state.question.as_ref().map(|q| q.answer.clone()) {
            Some(Some(answer)) => return Ok(Plan::Keep(Asked::Answered(answer))),
            None => return Ok(Plan::Keep(Asked::NoAnswer)),
            Some(None) => {}
        }
        state.question = None;
        if state.progress.status == Status::WaitingForInput {
            state.progress.status = Status::Active;
        }
        state.updated = crate::clock::now().to_string();
        let change = Change::bookkeeping(state, "ask", "ask: no answer in time".into());
        Ok(Plan::Record(Box::new(change), Asked::NoAnswer))
    })?;
    Ok(done.value)
}

/// What became of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// A waiting `anvil ask` delivers it at once (otherwise it goes with the next phase's
    /// prompt).
    pub now: bool,
    /// The answer as it was recorded: cleaned of credentials.
    pub text: String,
    /// What the person is told about it (what was redacted), if anything.
    pub note: Option<String>,
}

/// Answers the open question of `line`.
pub fn answer(home: &Home, line: &LineRef, text: &str) -> Result<Answered, DebateError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Refusal::EmptyAnswer.into());
    }
    // The human's answer enters anvil here (the command line, `anvil run`, the web room).
    let mut intake = crate::model::secrets::Intake::new(home.root());
    let text = intake.clean("your answer", text);
    let text = text.as_ref();
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        let Some(question) = state.question.clone().filter(|q| q.answer.is_none()) else {
            return Err(Refusal::NoQuestion {
                line: line.clone(),
                status: state.progress.status,
            }
            .into());
        };
        if state.progress.status.is_over() {
            return Err(Refusal::AnswerTooLate {
                line: line.clone(),
                status: state.progress.status,
            }
            .into());
        }
        // Under the line's lock: a waiter that gives up meanwhile closes the question in its
        // own transaction, before or after this one, never in between.
        let waiting = waiter_alive(home, line);
        state.progress.status = Status::Active;
        if waiting {
            state.question = Some(Question {
                answer: Some(text.to_owned()),
                ..question.clone()
            });
        } else {
            state.question = None;
            state.pending_steering.push(format!(
                "The human answered your question \"{}\": {text}",
                question.text
            ));
        }
        state.updated = crate::clock::now().to_string();
        let subject = format!("answer: {}", crate::model::state::first_line(text));
        let mut change = Change::bookkeeping(state, "answer", subject);
        change.meta.question = Some(question.text.clone());
        change.meta.answer = Some(text.to_owned());
        Ok(Plan::Record(Box::new(change), waiting))
    })?;
    let note = intake.note();
    let mut notes = done.notes;
    notes.extend(note.clone());
    crate::line::transaction::print_notes(&notes);
    Ok(Answered {
        now: done.value,
        text: text.to_owned(),
        note,
    })
}

/// Is an `anvil ask` process still waiting on this line?
fn waiter_alive(home: &Home, line: &LineRef) -> bool {
    crate::fsutil::held(&waiter_path(home, line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::line_with_debate;

    #[test]
    fn an_answer_reaches_the_waiting_asker() {
        let (_dir, home, line) = line_with_debate();
        let asking = ask(&home, &line, "Which database?").unwrap();
        assert_eq!(
            load(&home, &line).unwrap().progress.status,
            Status::WaitingForInput
        );
        let asker = std::thread::spawn(move || {
            asking.wait(Duration::from_secs(20), Duration::from_millis(10))
        });
        std::thread::sleep(Duration::from_millis(30));
        assert!(answer(&home, &line, "Postgres 16").unwrap().now);
        assert_eq!(
            asker.join().unwrap().unwrap(),
            Asked::Answered("Postgres 16".into())
        );
        let state = load(&home, &line).unwrap();
        assert_eq!(state.progress.status, Status::Active);
        assert_eq!(
            state.question.and_then(|q| q.answer).as_deref(),
            Some("Postgres 16")
        );
        assert!(state.pending_steering.is_empty());
        assert!(!waiter_alive(&home, &line), "the asker is gone");
    }

    /// Issue 10's race: the question was committed before its asker registered, so an answer
    /// that came in that gap went to the next phase's prompt, and the asker, waiting on,
    /// reported "no answer in time".
    #[test]
    fn an_answer_right_after_the_question_before_the_wait_begins_reaches_the_asker() {
        let (_dir, home, line) = line_with_debate();
        let asking = ask(&home, &line, "Which region?").unwrap();
        // Answered before the asker has begun to wait.
        assert!(answer(&home, &line, "eu-west-1").unwrap().now);
        let asked = asking
            .wait(Duration::from_secs(5), Duration::from_millis(5))
            .unwrap();
        assert_eq!(asked, Asked::Answered("eu-west-1".into()));
        let state = load(&home, &line).unwrap();
        assert!(state.pending_steering.is_empty(), "{state:?}");
        assert_eq!(state.progress.status, Status::Active);
    }

    #[test]
    fn a_refused_question_leaves_the_waiting_asker_registered() {
        let (_dir, home, line) = line_with_debate();
        let first = ask(&home, &line, "First?").unwrap();
        let err = ask(&home, &line, "Second?").err().unwrap().to_string();
        assert!(err.contains("already waits"), "{err}");
        assert!(waiter_alive(&home, &line));
        assert!(answer(&home, &line, "one").unwrap().now);
        assert_eq!(
            first
                .wait(Duration::from_secs(5), Duration::from_millis(5))
                .unwrap(),
            Asked::Answered("one".into())
        );
    }

    #[test]
    fn without_an_asker_the_answer_goes_with_the_next_prompt() {
        let (_dir, home, line) = line_with_debate();
        open(&home, &line, "Budget?").unwrap();
        assert!(!answer(&home, &line, "40k").unwrap().now);
        let state = load(&home, &line).unwrap();
        assert_eq!(state.progress.status, Status::Active);
        assert_eq!(
            state.pending_steering,
            ["The human answered your question \"Budget?\": 40k"]
        );
        // The next recorded phase hands it on, once.
        let reply = crate::line::stop::record_turn(&home, &line, "s-1", "ADVOCATE r1").unwrap();
        let crate::line::stop::Kind::Block { prompt } = &reply.kind else {
            panic!("{reply:?}")
        };
        assert!(prompt.contains("Budget?\": 40k"), "{prompt}");
        assert!(load(&home, &line).unwrap().pending_steering.is_empty());
        let reply = crate::line::stop::record_turn(&home, &line, "s-1", "CRITIC r1").unwrap();
        let crate::line::stop::Kind::Block { prompt } = &reply.kind else {
            panic!("{reply:?}")
        };
        assert!(!prompt.contains("40k"), "{prompt}");
    }

    #[test]
    fn no_answer_in_time_closes_the_question() {
        let (_dir, home, line) = line_with_debate();
        let asked = ask(&home, &line, "Deadline?")
            .unwrap()
            .wait(Duration::from_millis(30), Duration::from_millis(5))
            .unwrap();
        assert_eq!(asked, Asked::NoAnswer);
        let state = load(&home, &line).unwrap();
        assert_eq!(
            (state.progress.status, state.question),
            (Status::Active, None)
        );
        assert!(
            answer(&home, &line, "late")
                .unwrap_err()
                .to_string()
                .contains("no open question")
        );
    }

    #[test]
    fn one_question_at_a_time_and_none_on_a_finished_line() {
        let (_dir, home, line) = line_with_debate();
        open(&home, &line, "First?").unwrap();
        let err = open(&home, &line, "Second?").unwrap_err().to_string();
        assert!(err.contains("already waits"), "{err}");
        crate::line::control::cancel(&home, &line, "").unwrap();
        let err = open(&home, &line, "Third?").unwrap_err().to_string();
        assert!(err.contains("cancelled"), "{err}");
    }
}
