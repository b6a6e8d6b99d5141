//! Small file-system helpers shared by the live files and the session bindings.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// concurrent reader never sees a half-written file. Creates the parent directory if needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".anvil-tmp");
    // Temporary files are private by default; these are ordinary project files.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Reads a file that may legitimately be absent.
pub fn read_optional(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes a file that may be gone already.
pub fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// This process as a live file names it: `PID@START`, its id and its start time (clock ticks
/// since boot, from `/proc`), so that a later process that is given the same id is not taken
/// for it; just `PID` where the start time cannot be read.
pub fn process_token() -> String {
    let pid = std::process::id();
    match process_start(pid) {
        Some(start) => format!("{pid}@{start}"),
        None => pid.to_string(),
    }
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat`, field 22); `None`
/// for a process that is gone or a zombie (dead, not yet reaped), or without `/proc`.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name in parentheses may hold spaces and parentheses: count fields after the last.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    // Field 3 was the state; the start time is field 22.
    fields.nth(18)?.parse().ok()
}

/// Is the process a live file names still running? The file holds a [`process_token`] (or
/// a bare `PID`, as older builds wrote): the process must exist, not be a zombie, and, when
/// the token has a start time, have started then (its id was not given to another process
/// since): [`running`].
pub fn process_alive(token: &str) -> bool {
    let token = token.trim();
    let (pid, start) = match token.split_once('@') {
        Some((pid, start)) => (pid, Some(start)),
        None => (token, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || start.is_some_and(|s| !digits(s)) {
        return false;
    }
    match (pid.parse(), start.map(str::parse)) {
        (Ok(pid), None) => running(pid, None),
        (Ok(pid), Some(Ok(start))) => running(pid, Some(start)),
        _ => false,
    }
}

/// Is process `pid` running, not a zombie, and, when `start` is given, the one that started
/// then? Where `/proc` is missing, it is taken to be.
pub fn running(pid: u32, start: Option<u64>) -> bool {
    if !Path::new("/proc/self/stat").is_file() {
        return true;
    }
    process_start(pid).is_some_and(|now| start.is_none_or(|then| then == now))
}

/// `(name, path)` of the visible entries of `dir` (names not starting with `.`), sorted by
/// name; an absent directory has none.
pub fn visible_entries(dir: &Path) -> std::io::Result<Vec<(String, std::path::PathBuf)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out: Vec<(String, std::path::PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            (!name.starts_with('.')).then(|| (name, e.path()))
        })
        .collect();
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_known_by_its_id_and_start_time() {
        let me = process_token();
        assert!(process_alive(&me), "{me}");
        let (pid, start) = me.split_once('@').expect("Linux has /proc");
        assert!(process_alive(pid), "a bare id, as older builds wrote");
        // The same id with another start time: a process that had this id before.
        let earlier = start.parse::<u64>().unwrap() - 1;
        assert!(!process_alive(&format!("{pid}@{earlier}")));
        for bad in ["", "x", "12x", "1@", "@1", "1@x", "99999999999"] {
            assert!(!process_alive(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_dead_or_zombie_process_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not yet reaped: a zombie once it has exited.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while process_start(pid).is_some() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(
            Path::new(&format!("/proc/{pid}")).exists(),
            "exited, not yet reaped: a zombie"
        );
        assert!(!process_alive(&pid.to_string()), "a zombie is dead");
        child.wait().unwrap();
        assert!(!process_alive(&pid.to_string()), "reaped");
    }
}
