//! What the person sees and types while `anvil run` plays: a progress line per phase, and the
//! answers read from stdin.

use std::io::{BufRead, IsTerminal};
use std::sync::mpsc;
use std::time::Instant;

use anvil_core::home::{Home, LineRef};
use anvil_core::model::state::State;

use crate::output::say;

/// What the human types: lines of stdin, read by a thread (started at the first question) so
/// that an answer given elsewhere meanwhile is seen at once. Never read with --no-stdin.
pub(super) struct Input {
    reads_stdin: bool,
    lines: Option<mpsc::Receiver<String>>,
}

impl Input {
    pub(super) fn new(reads_stdin: bool) -> Input {
        Input {
            reads_stdin,
            lines: None,
        }
    }

    /// Shows `question` and starts listening for its answer.
    pub(super) fn prompt(&mut self, question: &str) {
        if !self.reads_stdin {
            say(&format!(
                "{} (answer with `anvil answer`, `anvil steer` or the page of `anvil serve`)",
                question.trim_end_matches(['>', ' ', '\n'])
            ));
            return;
        }
        let terminal = std::io::stdin().is_terminal();
        let lines = self.lines.get_or_insert_with(|| {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
                // End of input: the sender goes, and every question after gets an empty answer.
            });
            rx
        });
        // At a terminal, what was typed before the question (for one answered elsewhere) is
        // stale; piped answers are read one a question, in order.
        if terminal {
            while lines.try_recv().is_ok() {}
        }
        eprint!("{question}");
    }

    /// The line typed for the question asked last, if it came; at the end of input, an
    /// empty line.
    pub(super) fn poll(&mut self) -> Option<String> {
        match self.lines.as_ref()?.try_recv() {
            Ok(line) => Some(line.trim_end_matches('\r').to_owned()),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => Some(String::new()),
        }
    }
}

/// Progress lines on stderr: one per phase, even for a phase that began and ended between two
/// looks at the state file (those are read from the record).
pub(super) struct Progress {
    began: Instant,
    /// The last phase shown (phases are numbered from 1).
    shown: u32,
    last: String,
}

impl Progress {
    pub(super) fn new(home: &Home, line: &LineRef, began: Instant) -> Progress {
        let shown = State::load(&home.state_path(line)).map_or(0, |s| s.progress.step);
        Progress {
            began,
            shown,
            last: String::new(),
        }
    }

    /// Shows what happened since the last look; returns the state it saw.
    pub(super) fn look(&mut self, home: &Home, line: &LineRef) -> Option<State> {
        let state = State::load(&home.state_path(line)).ok()?;
        let planned = anvil_core::model::machine::planned_phases(&state.setup);
        let stamp = format!("[{:>5.1}s]", self.began.elapsed().as_secs_f64());
        for (step, label) in phases_between(home, &state, self.shown) {
            let label = crate::term::visible(&label);
            say(&format!("{stamp} {label} (phase {step} of {planned})"));
            self.shown = step;
        }
        let current = state.progress.step + 1;
        let now = format!(
            "{} (phase {current} of {planned})",
            crate::term::visible(&state.standing())
        );
        if !state.progress.status.is_over() && (current > self.shown || now != self.last) {
            say(&format!("{stamp} {now}"));
            self.shown = self.shown.max(current);
            self.last = now;
        }
        Some(state)
    }
}

/// The phases recorded after phase `after` up to where `state` stands, as progress labels.
fn phases_between(home: &Home, state: &State, after: u32) -> Vec<(u32, String)> {
    if state.progress.step <= after {
        return Vec::new();
    }
    let Ok(record) = anvil_core::record::store::Record::open(&home.record_dir()) else {
        return Vec::new();
    };
    let line = LineRef::new(&state.debate, &state.line);
    let Ok(history) = anvil_core::review::history::LineHistory::load(&record, &line) else {
        return Vec::new();
    };
    history
        .entries
        .iter()
        .filter(|e| e.step > after && e.step <= state.progress.step)
        .filter_map(|e| {
            e.role.map(|role| {
                (
                    e.step,
                    anvil_core::model::state::phase_label(role, e.meta.round, state.setup.rounds),
                )
            })
        })
        .collect()
}
