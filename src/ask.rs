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

use crate::debate::DebateError;
use crate::home::{Home, LineRef};
use crate::state::{Question, State, Status};
use crate::transaction::{self, Change, Options, Plan};

/// How an `anvil ask` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    Answered(String),
    /// Nobody answered within the wait; the question is closed unanswered.
    NoAnswer,
}

/// The file that says an `anvil ask` process is waiting (it holds its pid).
fn waiter_path(home: &Home, line: &LineRef) -> PathBuf {
    home.line_dir(line).join("asking")
}

/// Where the line stands now (read only).
fn load(home: &Home, line: &LineRef) -> Result<State, DebateError> {
    transaction::view(home, line)
}

/// Puts `question` to the human: the line waits for input until it is answered.
pub fn open(home: &Home, line: &LineRef, question: &str) -> Result<State, DebateError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(DebateError::Invalid("the question is empty".into()));
    }
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        match (&state.progress.status, &state.question) {
            (Status::Active, _) => {}
            (Status::WaitingForInput, Some(open)) => {
                return Err(DebateError::Invalid(format!(
                    "{line} already waits for an answer to: {}",
                    open.text
                )));
            }
            (status, _) => {
                return Err(DebateError::Invalid(format!(
                    "{line} is {}; there is nobody to ask",
                    status.name()
                )));
            }
        }
        state.progress.status = Status::WaitingForInput;
        state.question = Some(Question {
            text: question.to_owned(),
            answer: None,
        });
        state.updated = crate::debate::now().to_string();
        let subject = format!("ask: {}", crate::state::first_line(question));
        let mut change = Change::bookkeeping(state.clone(), "ask", subject);
        change.meta.question = Some(question.to_owned());
        Ok(Plan::Record(Box::new(change), state))
    })?;
    Ok(done.value)
}

/// Waits up to `timeout` for the answer to the open question, checking every `poll`.
pub fn wait(
    home: &Home,
    line: &LineRef,
    timeout: Duration,
    poll: Duration,
) -> Result<Asked, DebateError> {
    let waiter = waiter_path(home, line);
    crate::fsutil::write_atomic(&waiter, std::process::id().to_string().as_bytes()).map_err(
        |source| DebateError::Io {
            what: "cannot write",
            path: waiter.clone(),
            source,
        },
    )?;
    let result = wait_for_answer(home, line, timeout, poll);
    let _ = crate::home::remove_if_present(&waiter);
    result
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
            return Err(DebateError::Invalid(format!(
                "{line} was {} while waiting for the answer",
                state.progress.status.name()
            )));
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
        state.updated = crate::debate::now().to_string();
        let change = Change::bookkeeping(state, "ask", "ask: no answer in time".into());
        Ok(Plan::Record(Box::new(change), Asked::NoAnswer))
    })?;
    Ok(done.value)
}

/// Answers the open question of `line`. Returns whether a waiting `anvil ask` will deliver it
/// at once (otherwise it goes with the next phase's prompt).
pub fn answer(home: &Home, line: &LineRef, text: &str) -> Result<bool, DebateError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DebateError::Invalid("the answer is empty".into()));
    }
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        let Some(question) = state.question.clone().filter(|q| q.answer.is_none()) else {
            return Err(DebateError::Invalid(format!(
                "{line} has no open question (it is {})",
                state.progress.status.name()
            )));
        };
        if state.progress.status.is_over() {
            return Err(DebateError::Invalid(format!(
                "{line} is {}; the answer cannot reach it",
                state.progress.status.name()
            )));
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
        state.updated = crate::debate::now().to_string();
        let subject = format!("answer: {}", crate::state::first_line(text));
        let mut change = Change::bookkeeping(state, "answer", subject);
        change.meta.question = Some(question.text.clone());
        change.meta.answer = Some(text.to_owned());
        Ok(Plan::Record(Box::new(change), waiting))
    })?;
    crate::debate::print_notes(&done.notes);
    Ok(done.value)
}

/// Is an `anvil ask` process still waiting on this line?
fn waiter_alive(home: &Home, line: &LineRef) -> bool {
    let Ok(Some(pid)) = crate::fsutil::read_optional(&waiter_path(home, line)) else {
        return false;
    };
    let proc = std::path::Path::new("/proc");
    if proc.is_dir() {
        proc.join(pid.trim()).exists()
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_with_debate() -> (tempfile::TempDir, Home, LineRef) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let setup = crate::options::Options {
            question: "Q?".into(),
            ..Default::default()
        }
        .into_setup()
        .unwrap();
        let started = crate::debate::start(&home, setup, Some("s-1")).unwrap();
        (dir, home, started.line)
    }

    #[test]
    fn an_answer_reaches_the_waiting_asker() {
        let (_dir, home, line) = line_with_debate();
        open(&home, &line, "Which database?").unwrap();
        assert_eq!(
            load(&home, &line).unwrap().progress.status,
            Status::WaitingForInput
        );
        let (home2, line2) = (home.clone(), line.clone());
        let asker = std::thread::spawn(move || {
            wait(
                &home2,
                &line2,
                Duration::from_secs(20),
                Duration::from_millis(10),
            )
        });
        while !waiter_path(&home, &line).exists() {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(answer(&home, &line, "Postgres 16").unwrap());
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
    }

    #[test]
    fn without_an_asker_the_answer_goes_with_the_next_prompt() {
        let (_dir, home, line) = line_with_debate();
        open(&home, &line, "Budget?").unwrap();
        assert!(!answer(&home, &line, "40k").unwrap());
        let state = load(&home, &line).unwrap();
        assert_eq!(state.progress.status, Status::Active);
        assert_eq!(
            state.pending_steering,
            ["The human answered your question \"Budget?\": 40k"]
        );
        // The next recorded phase hands it on, once.
        let reply = crate::debate::record_turn(&home, &line, "s-1", "ADVOCATE r1").unwrap();
        let crate::debate::Reply::Block { prompt, .. } = reply else {
            panic!("{reply:?}")
        };
        assert!(prompt.contains("Budget?\": 40k"), "{prompt}");
        assert!(load(&home, &line).unwrap().pending_steering.is_empty());
        let reply = crate::debate::record_turn(&home, &line, "s-1", "CRITIC r1").unwrap();
        let crate::debate::Reply::Block { prompt, .. } = reply else {
            panic!("{reply:?}")
        };
        assert!(!prompt.contains("40k"), "{prompt}");
    }

    #[test]
    fn no_answer_in_time_closes_the_question() {
        let (_dir, home, line) = line_with_debate();
        open(&home, &line, "Deadline?").unwrap();
        let asked = wait(
            &home,
            &line,
            Duration::from_millis(30),
            Duration::from_millis(5),
        )
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
        crate::debate::cancel(&home, &line, "").unwrap();
        let err = open(&home, &line, "Third?").unwrap_err().to_string();
        assert!(err.contains("cancelled"), "{err}");
    }
}
