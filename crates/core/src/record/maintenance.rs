//! Keeping the record small: packed objects, packed refs and a commit-graph, made by
//! `git gc`, never on the Stop hook's path.
//!
//! The hook writes every phase as loose objects and a loose ref (fast, and flat whatever the
//! size of the record). Left alone, a team's record grows to hundreds of thousands of small
//! files. [`needed`] is the cheap check, as `git gc --auto` makes it: one fan-out folder of
//! loose objects (a 256th of them), the list of packs and the list of debates with loose
//! refs, against [`Limits`] (`[gc]` of `.anvil/config.toml`). Commands that write make it when
//! they are done; the Stop hook makes it only after recording a synthesis. When maintenance is
//! due, [`start_if_due`] starts a detached `anvil gc --auto` (its own process group, no
//! inherited stdio), so neither the command nor Claude Code waits for it. After a synthesis,
//! [`start_after_debate`] also starts it when the project has a search index, which it brings
//! up to date with the debate that ended.
//!
//! The packing is `git gc`'s: deltas, packed refs and a commit-graph. anvil needs the `git`
//! binary for this as it does for push, pull and `--pr`; without it, `anvil gc` says so and
//! the record stays loose, which costs disk and nothing else (every reader and writer works
//! on loose objects and refs).
//!
//! Safety against hooks committing at the same moment: `git gc` keeps everything reachable
//! from a ref, and prunes only unreachable loose objects older than its grace period
//! (`gc.pruneExpire`, two weeks by default), so the objects a hook has written but not yet
//! pointed its ref at (a window of milliseconds) are never candidates; a loose ref that a hook
//! holds locked is left loose by `pack-refs`, and a hook that meets a ref lock while a
//! maintenance runs waits for git to release it instead of taking it for a leftover (see
//! `line::transaction`). Two maintenances never run together: the one that runs holds an
//! advisory lock on `anvil-gc.lock` in the record, which the system releases when its holder
//! dies, so a killed maintenance leaves no lock behind; whether one runs is asked of that lock
//! ([`running`]), never of a process id.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::record::git::{Git, GitError};

/// Loose objects above which maintenance is due by default (git's `gc.auto` default).
pub(crate) const AUTO_LOOSE_OBJECTS: usize = 6_700;
/// Packs above which maintenance is due by default (git's `gc.autoPackLimit` default).
pub(crate) const AUTO_PACKS: usize = 50;
/// Debates with loose refs above which maintenance is due by default: about as many debates
/// as make [`AUTO_LOOSE_OBJECTS`] loose objects.
pub(crate) const AUTO_LOOSE_DEBATES: usize = 100;
/// Set to anything to turn the automatic step off (benchmarks).
pub(crate) const NO_AUTO_ENV: &str = "ANVIL_NO_AUTO_GC";
/// The lock file that keeps two maintenances apart, in the record.
pub(crate) const LOCK_FILE: &str = "anvil-gc.lock";

#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    #[error(
        "another maintenance of the record is running (an `anvil gc`, or the `git gc` of one \
         that was stopped: it holds {0}); it packs the record, so there is nothing to do but \
         let it finish"
    )]
    Busy(std::path::PathBuf),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot pack {path}: {source}")]
    Git {
        path: std::path::PathBuf,
        #[source]
        source: GitError,
    },
}

/// When maintenance is due: `[gc]` of `.anvil/config.toml`, git's defaults otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Loose objects, estimated from one fan-out folder; 0: never automatically.
    pub loose_objects: usize,
    /// Packs; 0: not looked at.
    pub packs: usize,
    /// Debates with loose refs; 0: not looked at.
    pub loose_debates: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            loose_objects: AUTO_LOOSE_OBJECTS,
            packs: AUTO_PACKS,
            loose_debates: AUTO_LOOSE_DEBATES,
        }
    }
}

/// The folder of loose objects that stands for all 256, as in git.
const SAMPLE_FOLDER: &str = "17";

/// Is maintenance due? A few directory listings: the loose objects of one fan-out folder (a
/// 256th of them: due when it holds more than `loose_objects / 256`, rounded up, as git
/// estimates), the packs, and the debates holding loose refs (`refs/anvil/<debate>/`; a
/// maintenance removes the folders it emptied).
pub fn needed(record: &Path, limits: &Limits) -> bool {
    if limits.loose_objects == 0 {
        return false;
    }
    let objects = record.join("objects");
    let per_folder = limits.loose_objects.div_ceil(256);
    count_loose(&objects.join(SAMPLE_FOLDER)) > per_folder
        || (limits.packs > 0 && count_packs(&objects) > limits.packs)
        || (limits.loose_debates > 0
            && count_entries(&record.join("refs/anvil")) > limits.loose_debates)
}

/// Is a maintenance of `record` running now? Asked of its lock ([`crate::fsutil::held`]): a
/// maintenance holds it while it works, and the system releases it when the holder ends,
/// however it ends. A maintenance that starts at the instant of the question waits it out.
pub fn running(record: &Path) -> bool {
    crate::fsutil::held(&record.join(LOCK_FILE))
}

/// The automatic step, for CLI commands that wrote to the record: when maintenance is
/// [`needed`] under `limits` and there is a `git` to do it, starts `anvil gc --auto` detached
/// and returns at once. Costs a few directory listings when nothing is due; never fails its
/// caller.
pub fn start_if_due(record: &Path, limits: &Limits) {
    start_auto(record, limits, || false);
}

/// The automatic step for the Stop hook when a debate has ended: as [`start_if_due`], and
/// also when the project has a search index at `search_index` (someone searched, or a debate
/// recalled earlier ones), which `anvil gc --auto` then brings up to date with the new
/// synthesis, so that the next search or recall finds it done. Never on any other stop.
pub fn start_after_debate(record: &Path, search_index: &Path, limits: &Limits) {
    start_auto(record, limits, || search_index.is_file());
}

/// Starts `anvil gc --auto` on `record`, detached, when maintenance is due (and there is a
/// `git` to do it) or `also` says so, and returns at once.
fn start_auto(record: &Path, limits: &Limits, also: impl FnOnce() -> bool) {
    if std::env::var_os(NO_AUTO_ENV).is_some() || !record.join("HEAD").is_file() {
        return;
    }
    if !(needed(record, limits) && Git::find().is_some() || also()) {
        return;
    }
    let Some(anvil) = cli_binary() else {
        return;
    };
    let mut command = std::process::Command::new(anvil);
    command
        .arg("gc")
        .arg("--auto")
        .arg("--record")
        .arg(record)
        .current_dir(record)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: a Ctrl+C meant for the command, or Claude Code ending its
        // hook's group, does not cut the maintenance short. (A new session would need
        // `setsid` in an unsafe pre-exec hook; the group is enough, stdio being null.)
        command.process_group(0);
    }
    // Not waited for: the child outlives this process and is reaped by init.
    let _ = command.spawn();
}

/// The `anvil` binary to run `anvil gc --auto` with: this one, or the `anvil` beside the
/// `anvil-hook` binary. `None` in any other process (a test harness, a benchmark), which must
/// never be started with `gc` arguments.
fn cli_binary() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let cli = match exe.file_stem()?.to_str()? {
        "anvil" => exe,
        "anvil-hook" => exe.with_file_name(format!("anvil{}", std::env::consts::EXE_SUFFIX)),
        _ => return None,
    };
    cli.is_file().then_some(cli)
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

/// Whether [`gc`] runs whatever the record looks like, or only when it is due.
#[derive(Debug, Clone, Copy)]
pub enum When {
    Always,
    /// `anvil gc --auto`: only when [`needed`] with these limits; another maintenance that
    /// runs is not an error then (it does the work).
    IfDue(Limits),
}

/// How long a maintenance waits for its lock before it takes another for the holder: a
/// [`running`] question holds it for microseconds.
const LOCK_PATIENCE: Duration = Duration::from_millis(100);

/// Packs the record with `git gc` (see the module's documentation). Returns `None` with
/// [`When::IfDue`] when nothing is due or another maintenance is running.
pub fn gc(record: &Path, when: When, git: &Git) -> Result<Option<Outcome>, MaintenanceError> {
    if let When::IfDue(limits) = when
        && !needed(record, &limits)
    {
        return Ok(None);
    }
    let Some(lock) = take_lock(record, when)? else {
        return Ok(None);
    };
    // Another `gc --auto` may have done the work between the look above and the lock.
    if let When::IfDue(limits) = when
        && !needed(record, &limits)
    {
        return Ok(None);
    }
    let before = footprint(record);
    let packed = pack(git, record, &lock);
    // The refs are packed and their folders gone: the index of recent debates is written
    // anew from them, compactly. A cache: if that fails, the next reader rebuilds it.
    if packed.is_ok()
        && let Ok(opened) = crate::record::store::Record::open(record)
    {
        let _ = crate::record::recent::rebuild(&opened);
    }
    drop(lock);
    packed?;
    Ok(Some(Outcome {
        before,
        after: footprint(record),
    }))
}

/// Takes the maintenance lock: `None` when another maintenance holds it and `when` is
/// [`When::IfDue`] (that one does the work), [`MaintenanceError::Busy`] when it is
/// [`When::Always`].
fn take_lock(record: &Path, when: When) -> Result<Option<std::fs::File>, MaintenanceError> {
    let path = record.join(LOCK_FILE);
    match crate::fsutil::hold(&path, LOCK_PATIENCE) {
        Ok(Some(lock)) => Ok(Some(lock)),
        Ok(None) => match when {
            When::IfDue(_) => Ok(None),
            When::Always => Err(MaintenanceError::Busy(path)),
        },
        Err(source) => Err(MaintenanceError::Io {
            what: "cannot take the maintenance lock",
            path,
            source,
        }),
    }
}

/// Runs `git gc` on the record. git is given the maintenance lock as its standard input, so
/// that the lock lives as long as git and its children do: an `anvil gc` killed meanwhile
/// leaves a maintenance that still counts as running (to the hook, waiting for its ref
/// locks, and to the next `anvil gc`) until git is done.
fn pack(git: &Git, record: &Path, lock: &std::fs::File) -> Result<(), MaintenanceError> {
    let lock_path = record.join(LOCK_FILE);
    // The record's own settings win over a user's global ones that would weaken it.
    git.record(record)
        .holding(lock)
        .map_err(|source| MaintenanceError::Io {
            what: "cannot hand the maintenance lock to git",
            path: lock_path,
            source,
        })?
        .args([
            "-c",
            "gc.auto=0",
            "-c",
            "gc.writeCommitGraph=true",
            "-c",
            "gc.packRefs=true",
            "gc",
            "--quiet",
        ])
        .output()
        .map_err(|source| MaintenanceError::Git {
            path: record.to_owned(),
            source,
        })?;
    remove_empty_ref_folders(&record.join("refs/anvil"));
    Ok(())
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
pub(crate) fn footprint(record: &Path) -> Footprint {
    let objects = record.join("objects");
    let mut loose = 0;
    if let Ok(fans) = std::fs::read_dir(&objects) {
        for fan in fans.flatten() {
            if fan.file_name().len() == 2 {
                loose += count_loose(&fan.path());
            }
        }
    }
    Footprint {
        loose_objects: loose,
        packs: count_packs(&objects),
        bytes: disk_bytes(record),
    }
}

/// Loose objects in one fan-out folder.
fn count_loose(folder: &Path) -> usize {
    std::fs::read_dir(folder)
        .map(|d| {
            d.filter(|e| {
                e.as_ref().is_ok_and(|e| {
                    let name = e.file_name();
                    name.len() == 38 && name.as_encoded_bytes().iter().all(u8::is_ascii_hexdigit)
                })
            })
            .count()
        })
        .unwrap_or(0)
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

fn count_entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, Iterator::count)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::line_with_debate;

    /// `n` files named like loose objects in fan-out folder `fan` of `record`.
    fn fake_loose(record: &Path, fan: &str, n: usize) {
        let dir = record.join("objects").join(fan);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..n {
            std::fs::write(dir.join(format!("{i:038x}")), b"").unwrap();
        }
    }

    #[test]
    fn due_when_the_sample_folder_holds_more_than_its_share_of_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path();
        // 512 loose objects in all: 2 per folder.
        let limits = Limits {
            loose_objects: 512,
            packs: 0,
            loose_debates: 0,
        };
        assert!(!needed(record, &limits), "an empty record");
        // Other folders are not looked at, as in git.
        fake_loose(record, "18", 50);
        fake_loose(record, "17", 2);
        assert!(!needed(record, &limits), "at the limit");
        fake_loose(record, "17", 3);
        assert!(needed(record, &limits), "over the limit");
        // A lock or temporary file is no loose object.
        let limits = Limits {
            loose_objects: 1024,
            ..limits
        };
        std::fs::write(record.join("objects/17/tmp_obj_x"), b"").unwrap();
        assert!(!needed(record, &limits));
        // `auto = 0` turns it off, whatever the record holds.
        fake_loose(record, "17", 100);
        assert!(needed(record, &limits));
        let off = Limits {
            loose_objects: 0,
            packs: 1,
            loose_debates: 1,
        };
        assert!(!needed(record, &off));
    }

    #[test]
    fn due_when_packs_or_debates_with_loose_refs_pile_up() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path();
        let limits = Limits {
            loose_objects: 6_700,
            packs: 2,
            loose_debates: 3,
        };
        let pack = record.join("objects/pack");
        std::fs::create_dir_all(&pack).unwrap();
        for i in 0..2 {
            std::fs::write(pack.join(format!("pack-{i}.pack")), b"").unwrap();
            std::fs::write(pack.join(format!("pack-{i}.idx")), b"").unwrap();
        }
        assert!(!needed(record, &limits));
        std::fs::write(pack.join("pack-2.pack"), b"").unwrap();
        assert!(needed(record, &limits), "three packs");
        assert!(
            !needed(record, &Limits { packs: 0, ..limits }),
            "packs not looked at"
        );

        let limits = Limits { packs: 0, ..limits };
        for i in 0..3 {
            std::fs::create_dir_all(record.join(format!("refs/anvil/d-{i}"))).unwrap();
        }
        assert!(!needed(record, &limits));
        std::fs::create_dir_all(record.join("refs/anvil/d-3")).unwrap();
        assert!(needed(record, &limits), "four debates with loose refs");
    }

    fn git() -> Git {
        Git::find().expect("the tests need git on the PATH")
    }

    #[test]
    fn a_maintenance_holding_the_lock_turns_the_next_one_away() {
        let (_dir, home, _line) = line_with_debate();
        let record = home.record_dir();
        let held = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(record.join(LOCK_FILE))
            .unwrap();
        held.lock().unwrap();
        let err = gc(&record, When::Always, &git()).unwrap_err();
        assert!(matches!(err, MaintenanceError::Busy(_)), "{err}");
        let due = Limits {
            loose_objects: 1,
            packs: 0,
            loose_debates: 1,
        };
        // Two debates with loose refs: this one, and one a hook is writing.
        std::fs::create_dir_all(record.join("refs/anvil/20261122-other-0000")).unwrap();
        assert!(needed(&record, &due));
        assert!(gc(&record, When::IfDue(due), &git()).unwrap().is_none());
        assert_eq!(footprint(&record).packs, 0);
        // Released (as when its holder dies): the next one runs; the file left is no lock.
        drop(held);
        assert!(gc(&record, When::Always, &git()).unwrap().is_some());
    }
}
