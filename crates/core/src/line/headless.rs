//! Lines driven headless by `anvil run`: a live file per line (`headless.json`) says which
//! process drove the line last and how its run ended, and the process that runs holds the
//! line's `headless.lock` for as long as it lives ([`crate::fsutil::hold`]). `anvil serve`
//! shows it ("running headless", the run's end or failure, "stopped" for a run whose process
//! died without a word), and a second `anvil run` of the same line is refused while the first
//! one holds the lock. Whether a run lives is asked of the lock alone, never of a process id.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{DebateError, Refusal, io};
use crate::home::{Home, LineRef};
use crate::line::transaction::{self, Options, Plan};
use crate::model::state::State;

/// How a headless run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Running,
    Done,
    Failed,
}

/// One headless run of a line, as its file has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// The `anvil run` process, for people (its process group is what stops it); whether it
    /// lives is [`running`]'s business.
    pub pid: u32,
    pub state: RunState,
    /// Seconds since the epoch.
    pub started: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<i64>,
    /// How it ended: the report's path, or what went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Where its output goes, when it is not a terminal (a run started by `anvil serve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// Does an `anvil run` drive `line` now (it holds the line's headless lock)?
pub fn running(home: &Home, line: &LineRef) -> bool {
    crate::fsutil::held(&lock_path(home, line))
}

/// How long the log of a run started from `anvil serve` is kept once nothing writes to it.
pub const LOG_KEPT: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Removes the logs under `.anvil/runs/` that nothing has written to for `kept`, except the
/// log of a run that still lives (one waiting for an answer writes nothing); how many went.
/// A log is named `DEBATE@LINE-SECONDS.log` after the line it ran.
pub fn prune_logs(home: &Home, kept: std::time::Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(home.runs_dir()) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".log") else {
            continue;
        };
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > kept);
        if !stale {
            continue;
        }
        let live = stem
            .rsplit_once('-')
            .and_then(|(line, _)| LineRef::parse(line))
            .and_then(|line| current(home, &line))
            .and_then(|run| run.log)
            .is_some_and(|log| log.ends_with(&name));
        if !live && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn path(home: &Home, line: &LineRef) -> PathBuf {
    home.headless_path(line)
}

fn lock_path(home: &Home, line: &LineRef) -> PathBuf {
    home.headless_lock_path(line)
}

/// The line's last headless run, if it ever had one.
pub fn load(home: &Home, line: &LineRef) -> Option<Run> {
    let text = crate::fsutil::read_optional(&path(home, line)).ok()??;
    serde_json::from_str(&text).ok()
}

/// The run driving `line` now, if any.
pub fn current(home: &Home, line: &LineRef) -> Option<Run> {
    load(home, line).filter(|run| run.state == RunState::Running && running(home, line))
}

fn save(home: &Home, line: &LineRef, run: &Run) -> Result<(), DebateError> {
    let path = path(home, line);
    let json = serde_json::to_vec_pretty(run).expect("a run serialises");
    crate::fsutil::write_atomic(&path, &json).map_err(|source| DebateError::Io {
        what: "cannot write",
        path,
        source,
    })
}

/// Refuses a line that cannot be run headless now: it is over, or a run holds it.
fn check(home: &Home, line: &LineRef, state: &State) -> Result<(), DebateError> {
    if state.progress.status.is_over() {
        return Err(Refusal::NothingToRun {
            line: line.clone(),
            status: state.progress.status,
        }
        .into());
    }
    if running(home, line) {
        return Err(already_running(home, line));
    }
    Ok(())
}

fn already_running(home: &Home, line: &LineRef) -> DebateError {
    Refusal::AlreadyRunning {
        line: line.clone(),
        pid: load(home, line).map(|run| run.pid),
    }
    .into()
}

/// Whether `line` could be run headless now (see [`claim`]), without claiming it.
pub fn can_run(home: &Home, line: &LineRef) -> Result<(), DebateError> {
    let state = transaction::view(home, line)?;
    check(home, line, &state)
}

/// A headless run that holds its line: no other run can claim the line while this lives,
/// and a run whose process ends, however it ends, holds nothing.
#[must_use = "the line is held only while the claim lives"]
pub struct Claim {
    home: Home,
    line: LineRef,
    pub run: Run,
    _lock: std::fs::File,
}

/// Takes `line` for a headless run of this process, under the line's lock: refused when the
/// line is over or another run holds it. `log` is where the run's output goes, when it is not
/// a terminal (a run started by `anvil serve`).
pub fn claim(home: &Home, line: &LineRef, log: Option<String>) -> Result<Claim, DebateError> {
    let lock_file = lock_path(home, line);
    let held = std::cell::RefCell::new(None);
    let done = transaction::run(home, line, Options::default(), |current| {
        let state = current.state()?;
        if held.borrow().is_none() {
            check(home, line, &state)?;
            // Under the line's lock, where every claim is made: free unless a run holds it;
            // the wait covers a question asked at this instant.
            let lock = crate::fsutil::hold(&lock_file, std::time::Duration::from_millis(100))
                .map_err(io("cannot take the lock of", &lock_file))?
                .ok_or_else(|| already_running(home, line))?;
            *held.borrow_mut() = Some(lock);
        } else if state.progress.status.is_over() {
            check(home, line, &state)?;
        }
        let run = Run {
            pid: std::process::id(),
            state: RunState::Running,
            started: crate::clock::now().as_second(),
            ended: None,
            message: None,
            log: log.clone(),
        };
        save(home, line, &run)?;
        Ok(Plan::Keep(run))
    })?;
    Ok(Claim {
        home: home.clone(),
        line: line.clone(),
        run: done.value,
        _lock: held.into_inner().expect("a claimed line is held"),
    })
}

impl Claim {
    /// Records how the run ended, `Ok(report path)` or `Err(what went wrong)`, and lets the
    /// line go.
    pub fn finish(mut self, outcome: Result<String, String>) -> Result<(), DebateError> {
        let (state, message) = match outcome {
            Ok(m) => (RunState::Done, m),
            Err(m) => (RunState::Failed, m),
        };
        self.run.state = state;
        self.run.message = Some(message);
        self.run.ended = Some(crate::clock::now().as_second());
        save(&self.home, &self.line, &self.run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::line_with_debate as line;

    #[test]
    fn logs_nothing_wrote_to_for_a_month_go_unless_their_run_lives() {
        let (_dir, home, line) = line();
        let runs = home.runs_dir();
        std::fs::create_dir_all(&runs).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 24 * 3600);
        let file = |name: &str, aged: bool| {
            let path = runs.join(name);
            let f = std::fs::File::create(&path).unwrap();
            if aged {
                f.set_modified(old).unwrap();
            }
            path
        };
        let ended = file(&format!("{line}-100.log"), true);
        let fresh = file(&format!("{line}-200.log"), false);
        let waiting = file(&format!("{line}-300.log"), true);
        let other = file("notes.txt", true);
        // This test's own process stands for a run that still lives, silent for a month.
        let claim = claim(&home, &line, Some(format!(".anvil/runs/{line}-300.log"))).unwrap();
        assert_eq!(prune_logs(&home, LOG_KEPT), 1);
        assert!(!ended.exists());
        assert!(fresh.exists() && waiting.exists() && other.exists());
        // Once that run has ended, its log goes too.
        claim.finish(Ok("done".into())).unwrap();
        assert_eq!(prune_logs(&home, LOG_KEPT), 1);
        assert!(!waiting.exists() && fresh.exists());
    }

    #[test]
    fn one_live_run_per_line_and_its_end_is_kept() {
        let (_dir, home, line) = line();
        assert_eq!(load(&home, &line), None);
        can_run(&home, &line).unwrap();
        let claimed = claim(&home, &line, Some(".anvil/runs/x.log".into())).unwrap();
        assert!(running(&home, &line));
        assert_eq!(current(&home, &line), Some(claimed.run.clone()));
        // Another claim, or a check, is refused while this one holds the line.
        let err = can_run(&home, &line).unwrap_err().to_string();
        assert!(err.contains("already running headless"), "{err}");
        let err = claim(&home, &line, None).err().unwrap().to_string();
        assert!(err.contains("already running headless"), "{err}");
        claimed.finish(Err("claude failed".into())).unwrap();
        let ended = load(&home, &line).unwrap();
        assert_eq!(
            (ended.state, ended.message.as_deref()),
            (RunState::Failed, Some("claude failed"))
        );
        assert_eq!(current(&home, &line), None);
        can_run(&home, &line).unwrap();
    }

    #[test]
    fn a_run_whose_process_is_gone_holds_nothing_and_a_finished_line_cannot_run() {
        let (_dir, home, line) = line();
        // What a run killed halfway leaves (or an older anvil that named its process by id):
        // a file that says running, and no lock held.
        std::fs::create_dir_all(home.line_dir(&line)).unwrap();
        std::fs::write(
            path(&home, &line),
            r#"{"pid": 4242, "pid_start": 17, "state": "running", "started": 1}"#,
        )
        .unwrap();
        assert_eq!(load(&home, &line).map(|r| r.pid), Some(4242));
        assert!(!running(&home, &line));
        assert_eq!(current(&home, &line), None);
        let claimed = claim(&home, &line, None).unwrap();
        assert_eq!(current(&home, &line), Some(claimed.run.clone()));
        drop(claimed);
        assert!(!running(&home, &line), "dropped, as a process that ends");
        crate::line::control::cancel(&home, &line, "").unwrap();
        let err = can_run(&home, &line).unwrap_err().to_string();
        assert!(err.contains("cancelled"), "{err}");
    }
}
