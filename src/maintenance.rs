//! Keeping the record small: packed objects, packed refs and a commit-graph, as `git gc`
//! makes them, never on the Stop hook's path.
//!
//! The hook writes every phase as loose objects and a loose ref (fast, and flat whatever the
//! size of the record). Left alone, a team's record grows to hundreds of thousands of small
//! files. [`auto`] is the cheap check that CLI commands make after they write (a look at one
//! fan-out folder, as `git gc --auto` does); when the record needs it, maintenance runs in a
//! detached `anvil gc --auto`, so no command waits for it.
//!
//! The packing itself is done by the `git` binary. gix (0.90) can write a pack, but it
//! computes no deltas: a debate's phases (each commit's `state.md`, prompts that repeat their
//! instructions) shrink mostly through deltas, so a gix pack stays several times larger than
//! what git makes and misses the target of at most twice `git gc`. Without `git` on the
//! PATH, `anvil gc` says so and the automatic step does nothing; the record stays a valid,
//! loose repository.
//!
//! Safety against hooks committing at the same moment is git's own: `git gc` keeps
//! everything reachable from a ref, and prunes only unreachable loose objects older than its
//! grace period (`gc.pruneExpire`, two weeks by default), so the objects a hook has written
//! but not yet pointed its ref at (a window of milliseconds) are never candidates; a loose
//! ref that a hook holds locked is left loose by `pack-refs`, and a hook that meets a ref lock
//! while a maintenance runs waits for git to release it instead of taking it for a leftover
//! (see `transaction::clear_ref_lock`). Two maintenances never run together (an advisory lock
//! in the record, besides git's own `gc.pid`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Loose objects above which [`auto`] starts maintenance (git's `gc.auto` default).
pub const AUTO_LOOSE_OBJECTS: usize = 6_700;
/// Packs above which [`auto`] starts maintenance (git's `gc.autoPackLimit` default).
pub const AUTO_PACKS: usize = 50;
/// Set to anything to turn the automatic step off (tests, benchmarks).
pub const NO_AUTO_ENV: &str = "ANVIL_NO_AUTO_GC";

#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    #[error(
        "anvil gc needs the `git` binary to pack the record, and there is none on the PATH \
         (gix writes packs without deltas, several times larger than git's); install git, or \
         leave the record loose: it stays valid"
    )]
    NoGit,
    #[error("another maintenance of the record is running (lock {0})")]
    Busy(PathBuf),
    #[error("{what} in {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("git gc failed on {path}: {message}")]
    Git { path: PathBuf, message: String },
}

/// How the record sits on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    pub loose_objects: usize,
    pub packs: usize,
    /// Bytes allocated on disk under the record, as `du` counts them.
    pub bytes: u64,
}

/// What a maintenance did.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    pub before: Footprint,
    pub after: Footprint,
}

/// Does the record need maintenance? Counts the loose objects of one fan-out folder (a
/// 256th of them, as git estimates) and the packs: a few dozen directory entries.
pub fn needed(record: &Path) -> bool {
    let objects = record.join("objects");
    let sample = std::fs::read_dir(objects.join("17"))
        .map(|d| d.filter(|e| e.as_ref().is_ok_and(is_loose_name)).count())
        .unwrap_or(0);
    sample * 256 > AUTO_LOOSE_OBJECTS || count_packs(&objects) > AUTO_PACKS
}

/// The automatic step for CLI commands that wrote to the record: when it [`needed`]
/// maintenance and `git` is there, starts `anvil gc --auto` detached and returns at once.
/// Never fails the command that called it.
pub fn auto(record: &Path) {
    if std::env::var_os(NO_AUTO_ENV).is_some() || !record.join("HEAD").is_file() {
        return;
    }
    if !needed(record) || git().is_none() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = Command::new(exe);
    command
        .arg("gc")
        .arg("--auto")
        .arg("--record")
        .arg(record)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: a Ctrl+C meant for the command that started it does not
        // cut the maintenance short.
        command.process_group(0);
    }
    // Not waited for: the child outlives this process and is reaped by init.
    let _ = command.spawn();
}

/// Is a maintenance of `record` running now (is its lock held)? Asked only by a writer that
/// met a ref lock, which is rare: the answer costs an open and a lock call.
pub fn running(record: &Path) -> bool {
    let Ok(lock) = std::fs::File::open(record.join(GC_LOCK)) else {
        return false;
    };
    matches!(
        lock.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

/// The advisory lock a maintenance holds, in the record.
const GC_LOCK: &str = "anvil-gc.lock";

/// Packs the record: objects into a pack with deltas, refs into `packed-refs`, a
/// commit-graph for the tips' times; unreachable loose objects are pruned only past git's
/// grace period. With `only_if_needed`, returns `None` when the record does not need it or
/// another maintenance is running.
pub fn gc(record: &Path, only_if_needed: bool) -> Result<Option<Outcome>, MaintenanceError> {
    if only_if_needed && !needed(record) {
        return Ok(None);
    }
    let git = git().ok_or(MaintenanceError::NoGit)?;
    let lock_path = record.join(GC_LOCK);
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|source| MaintenanceError::Io {
            what: "cannot open the maintenance lock",
            path: lock_path.clone(),
            source,
        })?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) if only_if_needed => return Ok(None),
        Err(std::fs::TryLockError::WouldBlock) => return Err(MaintenanceError::Busy(lock_path)),
        Err(std::fs::TryLockError::Error(source)) => {
            return Err(MaintenanceError::Io {
                what: "cannot take the maintenance lock",
                path: lock_path,
                source,
            });
        }
    }
    let before = footprint(record);
    // The record's own settings win over a user's global ones that would weaken it.
    run_git(
        &git,
        record,
        &[
            "-c",
            "gc.auto=0",
            "-c",
            "gc.writeCommitGraph=true",
            "-c",
            "gc.packRefs=true",
            "gc",
            "--quiet",
        ],
        "cannot run git gc",
    )?;
    remove_empty_ref_folders(&record.join("refs/anvil"));
    // The refs are packed and their folders gone: the index of recent debates is written
    // anew from them, compactly. A cache: if that fails, the next reader rebuilds it.
    if let Ok(opened) = crate::record::Record::open(record) {
        let _ = crate::recent::rebuild(&opened);
    }
    drop(lock);
    Ok(Some(Outcome {
        before,
        after: footprint(record),
    }))
}

/// Takes away the folders that packing the refs left empty under `refs/anvil/` (one per
/// debate), so that listing the refs does not open thousands of empty folders. A folder a
/// hook is filling at that moment is not empty and stays; gix makes a ref lock's folders
/// race-proof (it retries when a folder vanishes under it, as git's own cleanup may do).
fn remove_empty_ref_folders(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_empty_ref_folders(&entry.path());
            // Fails, harmlessly, when the folder holds a ref.
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Loose objects, packs and bytes on disk of the record.
pub fn footprint(record: &Path) -> Footprint {
    let objects = record.join("objects");
    let mut loose = 0;
    if let Ok(fans) = std::fs::read_dir(&objects) {
        for fan in fans.flatten() {
            let name = fan.file_name();
            if name.len() == 2
                && let Ok(files) = std::fs::read_dir(fan.path())
            {
                loose += files
                    .filter(|e| e.as_ref().is_ok_and(is_loose_name))
                    .count();
            }
        }
    }
    Footprint {
        loose_objects: loose,
        packs: count_packs(&objects),
        bytes: disk_bytes(record),
    }
}

fn is_loose_name(entry: &std::fs::DirEntry) -> bool {
    let name = entry.file_name();
    name.len() == 38 && name.as_encoded_bytes().iter().all(u8::is_ascii_hexdigit)
}

fn count_packs(objects: &Path) -> usize {
    std::fs::read_dir(objects.join("pack"))
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".pack"))
            })
            .count()
        })
        .unwrap_or(0)
}

/// Bytes allocated on disk under `dir`, as `du` counts them.
pub fn disk_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            total += allocated(&meta);
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    total
}

#[cfg(unix)]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.blocks() * 512
}

#[cfg(not(unix))]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    meta.len()
}

/// The `git` binary, if there is one on the PATH (`ANVIL_GIT` names another).
pub fn git() -> Option<PathBuf> {
    if let Some(explicit) = std::env::var_os("ANVIL_GIT") {
        let path = PathBuf::from(explicit);
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("git"))
        .find(|candidate| candidate.is_file())
}

/// Runs `git --git-dir RECORD ARGS…` with no inherited repository variables; a failure is
/// `what` (git could not be run) or git's own message.
fn run_git(
    git: &Path,
    record: &Path,
    args: &[&str],
    what: &'static str,
) -> Result<(), MaintenanceError> {
    let output = Command::new(git)
        .arg("--git-dir")
        .arg(record)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .map_err(|source| MaintenanceError::Io {
            what,
            path: record.to_owned(),
            source,
        })?;
    if !output.status.success() {
        return Err(MaintenanceError::Git {
            path: record.to_owned(),
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(())
}
