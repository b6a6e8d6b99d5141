//! Headless runs started from the page: `anvil run --line DEBATE@LINE --no-stdin` as a child
//! process of the server, in its own process group (Ctrl+C on the server leaves it running),
//! its output in a log under `.anvil/runs/`. The request returns once the run has taken the
//! line (or ended at once); the page follows it through the record and the line's
//! `headless.json`.

use std::process::{Command, Stdio};

use anvil_core::home::LineRef;
use anvil_core::line::headless::Run;

use super::App;
use super::error::ApiError;

/// Starts a headless run of `line`; refused (409) when the line is over or already runs.
pub fn launch(app: &App, line: &LineRef) -> Result<Run, ApiError> {
    let home = &app.home;
    // One check-and-start at a time: two clicks start one run.
    let _one = app.launching.lock().unwrap_or_else(|e| e.into_inner());
    anvil_core::line::headless::can_run(home, line).map_err(ApiError::from_debate)?;

    let dir = home.runs_dir();
    std::fs::create_dir_all(&dir).map_err(ApiError::internal)?;
    let name = format!(
        "{}@{}-{}.log",
        line.debate,
        line.line,
        anvil_core::clock::now().as_second()
    );
    let path = dir.join(&name);
    let log = std::fs::File::create(&path).map_err(ApiError::internal)?;
    let shown = path
        .strip_prefix(home.project())
        .unwrap_or(&path)
        .display()
        .to_string();
    let exe = std::env::current_exe().map_err(ApiError::internal)?;
    let mut command = Command::new(exe);
    command
        .args([
            "run",
            "--line",
            &line.to_string(),
            "--no-stdin",
            // Its log is a progress line per phase: the page shows the phases themselves.
            "--quiet",
            "--log",
            &shown,
        ])
        .current_dir(home.project())
        // The run is a session of its own, whatever session started the server.
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(ApiError::internal)?)
        .stderr(log);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| ApiError::internal(format!("cannot start anvil run: {e}")))?;
    let pid = child.id();
    let taken = wait_until_taken(home, line, &mut child);
    // Reaped when it ends, so it never lingers as a zombie of the server.
    let reaper = std::thread::Builder::new()
        .name(format!("anvil-serve-run-{pid}"))
        .spawn(move || {
            let _ = child.wait();
        });
    if reaper.is_err() {
        return Err(ApiError::internal("cannot follow the headless run"));
    }
    taken.ok_or_else(|| {
        let said = std::fs::read_to_string(&path).unwrap_or_default();
        let last = said
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        ApiError::conflict(format!("the headless run ended at once: {last}"))
    })
}

/// Waits until the child `anvil run` has taken `line` (or ended: its run record then says
/// how), twenty seconds at most; `None` when it ended without taking it (refused: another run
/// took the line meanwhile, say).
fn wait_until_taken(
    home: &anvil_core::home::Home,
    line: &LineRef,
    child: &mut std::process::Child,
) -> Option<Run> {
    use anvil_core::line::headless;
    let pid = child.id();
    let ours = |run: &Run| run.pid == pid;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(run) = headless::current(home, line).filter(ours) {
            return Some(run);
        }
        if matches!(child.try_wait(), Ok(Some(_))) || std::time::Instant::now() >= deadline {
            return headless::load(home, line).filter(ours);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
