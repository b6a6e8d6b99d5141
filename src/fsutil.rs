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

/// Is the process `pid` (as written in a live file) still running? Where that cannot be told
/// (no `/proc`), it is taken to be.
pub fn process_alive(pid: &str) -> bool {
    let pid = pid.trim();
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let proc = Path::new("/proc");
    if proc.is_dir() {
        proc.join(pid).exists()
    } else {
        true
    }
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
