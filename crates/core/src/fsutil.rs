//! Small file-system helpers: atomic writes, files that may be absent, and the advisory locks
//! by which a process says it is alive (line locks, a waiting `anvil ask`, a headless run, a
//! maintenance).

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
pub(crate) fn read_optional(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes a file that may be gone already.
pub(crate) fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Takes an exclusive advisory lock (`flock`) on `path`, creating the file if need be, and
/// waits up to `patience` while another holder has it: `Ok(None)` when it still does. The lock
/// lasts as long as the returned file is open, and the system releases it when its process
/// ends, however it ends, so a lock says "its holder is alive" without a process id.
///
/// [`held`] asks the same lock by taking it shared for an instant; `patience` should cover
/// such an instant (milliseconds), so that a question never turns a taker away.
pub fn hold(path: &Path, patience: std::time::Duration) -> std::io::Result<Option<std::fs::File>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let deadline = std::time::Instant::now() + patience;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// Does a live process hold `path` locked ([`hold`])? A missing file is held by nobody. The
/// question takes the lock shared for an instant and lets it go.
pub fn held(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    matches!(
        file.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
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

/// What to do about an I/O error, in a few words, for messages that name the file.
pub(crate) fn advice(kind: std::io::ErrorKind) -> &'static str {
    use std::io::ErrorKind::*;
    match kind {
        StorageFull | QuotaExceeded => {
            "the disk is full: free some space, then run the command again"
        }
        PermissionDenied | ReadOnlyFilesystem => {
            "permission denied: check the owner and mode of the file and its folder"
        }
        NotFound => "a file or folder is missing: `anvil doctor` checks the record",
        _ => "fix the cause, then run the command again",
    }
}

/// What to do about a full disk or a refused permission, after an I/O error's message (other
/// errors say enough by themselves).
pub(crate) fn advice_after(kind: std::io::ErrorKind) -> String {
    use std::io::ErrorKind::*;
    match kind {
        StorageFull | QuotaExceeded | PermissionDenied | ReadOnlyFilesystem => {
            format!("; {}", advice(kind))
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_held_while_its_file_is_open_and_a_question_turns_no_taker_away() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/holder.lock");
        assert!(!held(&path), "no file, no holder");
        let first = hold(&path, std::time::Duration::ZERO)
            .unwrap()
            .expect("free");
        assert!(held(&path));
        assert!(
            hold(&path, std::time::Duration::from_millis(20))
                .unwrap()
                .is_none(),
            "a second taker is turned away while the first holds it"
        );
        drop(first);
        assert!(!held(&path), "released with its file; the file stays");
        assert!(path.is_file());
        // A question at the very moment a taker comes: the taker waits it out.
        let probe = std::fs::File::open(&path).unwrap();
        probe.lock_shared().unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(5));
            drop(probe);
        });
        assert!(
            hold(&path, std::time::Duration::from_secs(5))
                .unwrap()
                .is_some()
        );
        releaser.join().unwrap();
    }

    #[test]
    fn a_killed_holder_holds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("holder.lock");
        // `flock` in a child process, which is then killed (`-o`: its command does not inherit
        // the lock).
        let mut child = std::process::Command::new("flock")
            .arg("-o")
            .arg(&path)
            .args(["sleep", "30"])
            .spawn()
            .expect("flock(1), from util-linux");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !held(&path) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(held(&path), "the child holds it");
        child.kill().unwrap();
        child.wait().unwrap();
        // flock(1) forks its command before the command closes its copy of the descriptor
        // (`-o`); killed in between, that copy holds the lock until `sleep` starts.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while held(&path) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!held(&path), "a killed holder holds nothing");
    }
}
