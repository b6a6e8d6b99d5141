//! Commands racing running hooks, through the library in threads (the line's lock is a `flock`
//! per open file, so threads exclude each other as processes do): cancel always wins once it
//! said so, steering that was accepted reaches exactly one prompt, an answer is recorded once
//! and reaches the debater, and two branches of one name make one line.

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use anvil_core::claude::hooks;
use anvil_core::claude::protocol::HookOutput;
use anvil_core::home::{Home, LineRef};
use anvil_core::line::{control, start};
use anvil_core::record::store::Record;
use anvil_core::review::history::{Entry, LineHistory};
use serde_json::json;

const S1: &str = "11111111-1111-4111-8111-111111111111";

/// A project, shared by the iterations of a test (each starts its own debate).
fn project() -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::init(dir.path()).unwrap();
    (dir, home)
}

/// A new debate bound to `S1` (which drops whatever it drove before).
fn debate(home: &Home, rounds: u32) -> LineRef {
    let setup = anvil_core::model::options::Options {
        question: "Should we race?".into(),
        rounds: Some(rounds),
        ..Default::default()
    }
    .into_setup()
    .unwrap();
    start::start(home, setup, Some(S1)).unwrap().line
}

/// One stop of `S1` with `text`, as Claude Code runs the hook.
fn stop(project: &Path, text: &str) -> HookOutput {
    let input = json!({
        "session_id": S1,
        "cwd": project,
        "last_assistant_message": text,
    });
    hooks::stop(input.to_string().as_bytes(), project)
}

/// Stops with a new text each time while the hook keeps blocking (at most `phases`).
fn drive(project: &Path, phases: usize, pause: Duration) -> Vec<HookOutput> {
    let mut answers = Vec::new();
    for k in 0..phases {
        let answer = stop(project, &format!("phase {k}: an argument."));
        let go_on = matches!(answer, HookOutput::Block { .. });
        answers.push(answer);
        if !go_on {
            break;
        }
        std::thread::sleep(pause);
    }
    answers
}

fn history(home: &Home, line: &LineRef) -> Vec<Entry> {
    let record = Record::open(&home.record_dir()).unwrap();
    LineHistory::load(&record, line).unwrap().entries
}

/// A small deterministic spread of delays, so the races hit every phase.
fn delay(i: u32, spread_ms: u32) -> Duration {
    Duration::from_micros(u64::from((i * 7919) % (spread_ms * 1000)))
}

#[test]
fn cancel_always_wins_once_it_said_so() {
    let (dir, home) = project();
    let (mut won, mut late) = (0, 0);
    for i in 0..30 {
        let line = debate(&home, 3);
        let project = dir.path().to_owned();
        let hooks = std::thread::spawn(move || drive(&project, 7, Duration::from_micros(500)));
        std::thread::sleep(delay(i, 12));
        let cancelled = control::cancel(&home, &line, "race");
        let answers = hooks.join().unwrap();
        let entries = history(&home, &line);
        let phases: Vec<&str> = entries.iter().map(|e| e.meta.phase.as_str()).collect();
        match cancelled {
            Ok(state) => {
                won += 1;
                assert_eq!(phases.last(), Some(&"cancel"), "{phases:?}");
                assert_eq!(phases.iter().filter(|p| **p == "cancel").count(), 1);
                assert_eq!(state.progress.status.name(), "cancelled");
                let live = anvil_core::model::state::State::load(&home.state_path(&line)).unwrap();
                assert_eq!(live.progress.status.name(), "cancelled");
                // Every phase the hooks were told was recorded is in the record, before it.
                let blocked = answers
                    .iter()
                    .filter(|a| matches!(a, HookOutput::Block { .. }))
                    .count();
                assert_eq!(phases.len(), blocked + 2, "{phases:?} {answers:?}");
            }
            Err(e) => {
                late += 1;
                assert!(e.to_string().contains("already done"), "{e}");
                assert_eq!(phases.last(), Some(&"synthesizer"), "{phases:?}");
            }
        }
    }
    eprintln!("cancel won {won} races, came after the synthesis {late} times");
    // The race went both ways at least once in a while; what matters is that it never lost.
    assert!(won > 0, "cancel never ran before the end ({late} late)");
}

#[test]
fn steering_that_was_accepted_reaches_exactly_one_prompt() {
    let (dir, home) = project();
    let mut accepted_total = 0;
    for i in 0..20 {
        let line = debate(&home, 2);
        let project = dir.path().to_owned();
        let start = Arc::new(Barrier::new(2));
        let go = start.clone();
        let hooks = std::thread::spawn(move || {
            go.wait();
            drive(&project, 5, Duration::from_micros(300))
        });
        start.wait();
        std::thread::sleep(delay(i, 2));
        let mut accepted = Vec::new();
        let mut refused = Vec::new();
        for j in 0..12 {
            let text = format!("steer {i}-{j}");
            match control::steer(&home, &line, &text) {
                Ok(_) => accepted.push(text),
                Err(e) => {
                    assert!(
                        e.to_string().contains("nothing to steer")
                            || e.to_string().contains("synthesis"),
                        "{e}"
                    );
                    refused.push(text);
                }
            }
            std::thread::sleep(Duration::from_micros(400));
        }
        let answers = hooks.join().unwrap();
        // Whatever was still queued when the hooks stopped driving goes with the next stop.
        if matches!(answers.last(), Some(HookOutput::Block { .. })) {
            drive(dir.path(), 5, Duration::ZERO);
        }
        let record = Record::open(&home.record_dir()).unwrap();
        let entries = history(&home, &line);
        assert_eq!(entries.last().unwrap().meta.phase, "synthesizer");
        for text in &accepted {
            let carriers: Vec<&Entry> = entries
                .iter()
                .filter(|e| e.meta.steering.contains(text))
                .collect();
            assert_eq!(carriers.len(), 1, "{text}: {entries:#?}");
            let carrier = carriers[0];
            let next = carrier.meta.next.clone().unwrap();
            assert_ne!(next, "done", "{text} came with the last phase");
            let prompt = record
                .read(
                    carrier.commit,
                    &format!("{:03}-{next}.prompt.md", carrier.step + 1),
                )
                .unwrap()
                .unwrap();
            assert!(
                String::from_utf8_lossy(&prompt).contains(text.as_str()),
                "{text} is not in the prompt it was delivered with"
            );
        }
        for text in &refused {
            assert!(entries.iter().all(|e| !e.meta.steering.contains(text)));
        }
        let queue = home.queued_steering(&line).unwrap();
        assert!(queue.is_empty(), "left in the queue: {queue:?}");
        accepted_total += accepted.len();
    }
    assert!(accepted_total > 0);
}

#[test]
fn an_answer_is_recorded_once_and_reaches_the_debater() {
    let (dir, home) = project();
    for i in 0..20 {
        let line = debate(&home, 2);
        let project = dir.path().to_owned();
        let asker = {
            let (home, line) = (home.clone(), line.clone());
            std::thread::spawn(move || {
                std::thread::sleep(delay(i, 3));
                let asking = anvil_core::line::ask::ask(&home, &line, "Budget?").ok()?;
                Some(asking.wait(delay(i, 4), Duration::from_micros(200)))
            })
        };
        let hooks = std::thread::spawn(move || {
            let mut answers = Vec::new();
            for k in 0..40 {
                let answer = stop(&project, &format!("phase {k}"));
                let done = matches!(&answer, HookOutput::Message(m) if m.contains("is done"));
                answers.push(answer);
                if done {
                    break;
                }
                std::thread::sleep(Duration::from_micros(500));
            }
            answers
        });
        std::thread::sleep(delay(i + 3, 5));
        let answered = debate_answer(&home, &line, i);
        let asked = asker.join().unwrap();
        hooks.join().unwrap();
        let entries = history(&home, &line);
        let Some(waiting) = answered else { continue };
        let text = format!("answer {i}");
        let answers: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.meta.answer.as_deref() == Some(text.as_str()))
            .collect();
        assert_eq!(answers.len(), 1, "{entries:#?}");
        if waiting {
            assert_eq!(
                asked.unwrap().unwrap(),
                anvil_core::line::ask::Asked::Answered(text.clone())
            );
        } else {
            // It goes with the next phase's prompt, unless nothing followed.
            let record = Record::open(&home.record_dir()).unwrap();
            let after = entries
                .iter()
                .skip_while(|e| e.commit != answers[0].commit)
                .find(|e| e.role.is_some());
            if let Some(next) = after.filter(|e| e.meta.next.as_deref() != Some("done")) {
                let role = next.meta.next.clone().unwrap();
                let prompt = record
                    .read(
                        next.commit,
                        &format!("{:03}-{role}.prompt.md", next.step + 1),
                    )
                    .unwrap()
                    .unwrap();
                assert!(String::from_utf8_lossy(&prompt).contains(&text));
            }
        }
    }
}

/// Answers the open question as soon as there is one; `None` when there never was.
fn debate_answer(home: &Home, line: &LineRef, i: u32) -> Option<bool> {
    for _ in 0..200 {
        match anvil_core::line::ask::answer(home, line, &format!("answer {i}")) {
            Ok(answered) => return Some(answered.now),
            Err(e) => assert!(
                e.to_string().contains("no open question") || e.to_string().contains("is done"),
                "{e}"
            ),
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    None
}

#[test]
fn two_branches_of_one_name_against_running_hooks_make_one_line() {
    let (dir, home) = project();
    for i in 0..10 {
        let line = debate(&home, 3);
        drive(dir.path(), 2, Duration::ZERO);
        let project = dir.path().to_owned();
        let hooks = std::thread::spawn(move || drive(&project, 5, Duration::ZERO));
        let gate = Arc::new(Barrier::new(2));
        let branches: Vec<_> = (0..2)
            .map(|_| {
                let (home, line, gate) = (home.clone(), line.clone(), gate.clone());
                std::thread::spawn(move || {
                    let record = Record::open(&home.record_dir()).unwrap();
                    let from =
                        anvil_core::review::revision::resolve(&record, "round-1", Some(&line))
                            .unwrap();
                    gate.wait();
                    std::thread::sleep(delay(i, 1));
                    anvil_core::line::restore::branch(
                        &home,
                        &record,
                        anvil_core::line::restore::Branch {
                            from: &from,
                            steer: "focus on cost",
                            name: Some("cost"),
                            session: None,
                        },
                    )
                    .map(|r| r.commit)
                })
            })
            .collect();
        let results: Vec<_> = branches.into_iter().map(|b| b.join().unwrap()).collect();
        hooks.join().unwrap();
        let made: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(made.len(), 1, "{results:?}");
        let refused = results.iter().find_map(|r| r.as_ref().err()).unwrap();
        assert!(refused.to_string().contains("exists already"), "{refused}");
        let main: Vec<String> = history(&home, &line)
            .iter()
            .map(|e| e.meta.phase.clone())
            .collect();
        assert_eq!(
            main,
            [
                "start",
                "advocate",
                "critic",
                "advocate",
                "critic",
                "advocate",
                "critic",
                "synthesizer"
            ]
        );
        let cost = history(&home, &LineRef::new(&line.debate, "cost"));
        assert_eq!(cost.last().unwrap().commit, *made[0]);
        assert_eq!(cost.last().unwrap().meta.phase, "branch");
        assert_eq!(cost.len(), 4);
    }
}
