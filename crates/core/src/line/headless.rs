//! Lines driven headless by `anvil run`: a live file per line (`headless.json`) says which
//! process drives the line and how its last run ended. `anvil serve` shows it ("running
//! headless", the run's end or failure), and a second `anvil run` of the same line is refused
//! while the first one lives.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::DebateError;
use crate::home::{Home, LineRef};
use crate::line::transaction::{self, Options, Plan};

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
    /// The `anvil run` process.
    pub pid: u32,
    /// When that process started (clock ticks since boot), so that another process given
    /// the same id later is not taken for it; absent where it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start: Option<u64>,
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

impl Run {
    /// Still running: its file says so and its process is alive. A run whose process died
    /// without a word (killed) is not.
    pub fn is_live(&self) -> bool {
        self.state == RunState::Running && crate::fsutil::running(self.pid, self.pid_start)
    }
}

/// How long the log of a run started from `anvil serve` is kept once nothing writes to it.
pub const LOG_KEPT: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Removes the logs under `.anvil/runs/` that nothing has written to for `kept`, except the
/// log of a run that still lives (one waiting for an answer writes nothing); how many went.
/// A log is named `DEBATE@LINE-SECONDS.log` after the line it ran.
pub fn prune_logs(home: &Home, kept: std::time::Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(home.root().join("runs")) else {
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
    home.line_dir(line).join("headless.json")
}

/// The line's last headless run, if it ever had one.
pub fn load(home: &Home, line: &LineRef) -> Option<Run> {
    let text = crate::fsutil::read_optional(&path(home, line)).ok()??;
    serde_json::from_str(&text).ok()
}

/// The run driving `line` now, if any.
pub fn current(home: &Home, line: &LineRef) -> Option<Run> {
    load(home, line).filter(Run::is_live)
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

/// Refuses a line that cannot be run headless now: it is over, or another process drives it.
fn check(
    line: &LineRef,
    state: &crate::model::state::State,
    now: Option<&Run>,
    pid: u32,
) -> Result<(), DebateError> {
    if state.progress.status.is_over() {
        return Err(DebateError::Invalid(format!(
            "{line} is {}; nothing to run (branch from one of its rounds instead)",
            state.progress.status.name()
        )));
    }
    if let Some(run) = now.filter(|r| r.is_live() && r.pid != pid) {
        return Err(DebateError::Invalid(format!(
            "{line} is already running headless (process {})",
            run.pid
        )));
    }
    Ok(())
}

/// Whether `line` could be run headless now (see [`claim`]), without claiming it.
pub fn can_run(home: &Home, line: &LineRef) -> Result<(), DebateError> {
    let state = transaction::view(home, line)?;
    check(line, &state, current(home, line).as_ref(), 0)
}

/// Marks `line` as driven by process `pid`, under the line's lock: refused when the line is
/// over or another live process drives it. Claiming again for the same process keeps the log
/// given first (`anvil serve` claims for the child it starts, then the child for itself).
pub fn claim(
    home: &Home,
    line: &LineRef,
    pid: u32,
    log: Option<String>,
) -> Result<Run, DebateError> {
    let done = transaction::run(home, line, Options::default(), |current| {
        let state = current.state()?;
        let before = load(home, line);
        check(line, &state, before.as_ref(), pid)?;
        let pid_start = crate::fsutil::process_start(pid);
        let mine = before
            .filter(|r| r.pid == pid && r.pid_start == pid_start && r.state == RunState::Running);
        let run = Run {
            pid,
            pid_start,
            state: RunState::Running,
            started: mine
                .as_ref()
                .map_or_else(|| crate::clock::now().as_second(), |r| r.started),
            ended: None,
            message: None,
            log: log.clone().or_else(|| mine.and_then(|r| r.log)),
        };
        save(home, line, &run)?;
        Ok(Plan::Keep(run))
    })?;
    Ok(done.value)
}

/// Records how the run of process `pid` ended: `Ok(report path)` or `Err(what went wrong)`.
/// Nothing happens when another process has claimed the line since.
pub fn finish(
    home: &Home,
    line: &LineRef,
    pid: u32,
    outcome: Result<String, String>,
) -> Result<(), DebateError> {
    let Some(mut run) = load(home, line).filter(|r| r.pid == pid) else {
        return Ok(());
    };
    let (state, message) = match outcome {
        Ok(m) => (RunState::Done, m),
        Err(m) => (RunState::Failed, m),
    };
    run.state = state;
    run.message = Some(message);
    run.ended = Some(crate::clock::now().as_second());
    save(home, line, &run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::line_with_debate as line;

    #[test]
    fn logs_nothing_wrote_to_for_a_month_go_unless_their_run_lives() {
        let (_dir, home, line) = line();
        let runs = home.root().join("runs");
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
        claim(
            &home,
            &line,
            std::process::id(),
            Some(format!(".anvil/runs/{line}-300.log")),
        )
        .unwrap();
        assert_eq!(prune_logs(&home, LOG_KEPT), 1);
        assert!(!ended.exists());
        assert!(fresh.exists() && waiting.exists() && other.exists());
        // Once that run has ended, its log goes too.
        finish(&home, &line, std::process::id(), Ok("done".into())).unwrap();
        assert_eq!(prune_logs(&home, LOG_KEPT), 1);
        assert!(!waiting.exists() && fresh.exists());
    }

    #[test]
    fn one_live_run_per_line_and_its_end_is_kept() {
        let (_dir, home, line) = line();
        assert_eq!(load(&home, &line), None);
        can_run(&home, &line).unwrap();
        let me = std::process::id();
        let run = claim(&home, &line, me, Some(".anvil/runs/x.log".into())).unwrap();
        assert!(run.is_live());
        assert_eq!(current(&home, &line), Some(run.clone()));
        // The same process again keeps its log; another live process is refused.
        let again = claim(&home, &line, me, None).unwrap();
        assert_eq!(again.log.as_deref(), Some(".anvil/runs/x.log"));
        let err = can_run(&home, &line).unwrap_err().to_string();
        assert!(err.contains("already running headless"), "{err}");
        finish(&home, &line, me, Err("claude failed".into())).unwrap();
        let ended = load(&home, &line).unwrap();
        assert_eq!(
            (ended.state, ended.message.as_deref()),
            (RunState::Failed, Some("claude failed"))
        );
        assert_eq!(current(&home, &line), None);
        can_run(&home, &line).unwrap();
    }

    #[test]
    fn a_dead_process_does_not_hold_the_line_and_a_finished_line_cannot_run() {
        let (_dir, home, line) = line();
        // A pid no process has (beyond the kernel's limit).
        let dead = Run {
            pid: 999_999_999,
            pid_start: None,
            state: RunState::Running,
            started: 1,
            ended: None,
            message: None,
            log: None,
        };
        save(&home, &line, &dead).unwrap();
        assert!(!dead.is_live());
        // This process's id, but a start time it does not have: the run of an earlier
        // process that had the same id.
        let me = std::process::id();
        let earlier = Run {
            pid: me,
            pid_start: crate::fsutil::process_start(me).map(|s| s - 1),
            ..dead.clone()
        };
        assert!(!earlier.is_live());
        claim(&home, &line, me, None).unwrap();
        assert!(load(&home, &line).unwrap().is_live());
        // Another process's end does not overwrite this one's run.
        finish(&home, &line, 999_999_999, Ok("x".into())).unwrap();
        assert_eq!(load(&home, &line).unwrap().state, RunState::Running);
        crate::line::control::cancel(&home, &line, "").unwrap();
        let err = can_run(&home, &line).unwrap_err().to_string();
        assert!(err.contains("cancelled"), "{err}");
    }
}
