//! Keeping the record small: packed objects, packed refs and a commit-graph, as `git gc`
//! makes them, never on the Stop hook's path.
//!
//! The hook writes every phase as loose objects and a loose ref (fast, and flat whatever the
//! size of the record). Left alone, a team's record grows to hundreds of thousands of small
//! files. [`start_if_due`] is the cheap check, as `git gc --auto` makes it: one fan-out folder
//! of loose objects (a 256th of them), the list of packs and the list of debates with loose
//! refs, against the limits of `[gc]` in `.anvil/config.toml` ([`Limits`]). CLI commands that
//! write make it when they are done; the Stop hook makes it only after recording a synthesis.
//! When maintenance is due, it runs in a detached `anvil gc --auto` (its own process group,
//! no inherited stdio), so neither the command nor Claude Code waits for it.
//!
//! The packing is done by the `git` binary when there is one: `git gc` computes deltas, packs
//! the refs and writes a commit-graph. gix (0.90) writes packs too, but computes no deltas (it
//! only copies the deltas of packs that exist), and a debate's phases shrink mostly through
//! deltas (every commit's `state.md` and root tree, prompts that repeat their instructions).
//! Without `git` on the PATH, [`gc`] packs the objects with gix ([`Packer::Gix`]), and
//! [`crate::record::delta`] turns the loose ones into deltas on their way into the pack: about 1.5
//! times git's size (`cargo bench --bench scale`), one file instead of thousands. The refs
//! then stay loose and no commit-graph is written.
//!
//! Safety against hooks committing at the same moment. With git: `git gc` keeps everything
//! reachable from a ref, and prunes only unreachable loose objects older than its grace
//! period (`gc.pruneExpire`, two weeks by default), so the objects a hook has written but not
//! yet pointed its ref at (a window of milliseconds) are never candidates; a loose ref that a
//! hook holds locked is left loose by `pack-refs`, and a hook that meets a ref lock (or
//! `packed-refs.lock`) while a maintenance runs waits for git to release it instead of taking
//! it for a leftover (see `transaction::clear_ref_lock`). With gix: only loose objects that are in the new pack are
//! removed, after the pack and its index are in place, and an old pack is removed only when
//! every object it holds is in the new one; nothing unreachable is ever pruned. Two
//! maintenances never run together: an advisory lock on `anvil-gc.lock` in the record, which
//! the system releases when its holder dies, so a killed maintenance leaves no stale lock
//! behind (git's own `gc.pid` names its process, and a dead one does not count either).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Loose objects above which maintenance is due by default (git's `gc.auto` default).
pub const AUTO_LOOSE_OBJECTS: usize = 6_700;
/// Packs above which maintenance is due by default (git's `gc.autoPackLimit` default).
pub const AUTO_PACKS: usize = 50;
/// Debates with loose refs above which maintenance is due by default: about as many debates
/// as make [`AUTO_LOOSE_OBJECTS`] loose objects.
pub const AUTO_LOOSE_DEBATES: usize = 100;
/// Set to anything to turn the automatic step off (benchmarks).
pub const NO_AUTO_ENV: &str = "ANVIL_NO_AUTO_GC";
/// The lock file that keeps two maintenances apart, in the record.
pub const LOCK_FILE: &str = "anvil-gc.lock";

#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    #[error("another maintenance of the record is running (lock {0})")]
    Busy(PathBuf),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("git gc failed on {path}: {message}")]
    Git { path: PathBuf, message: String },
    #[error("cannot pack {path} with gix: {message}")]
    Pack { path: PathBuf, message: String },
    #[error(
        "cannot pack {path} with gix: the new pack lacks {missing} of the objects it was to hold \
         (a loose object whose content does not match its name?); the pack was removed and \
         every loose object kept"
    )]
    Incomplete { path: PathBuf, missing: usize },
    #[error(transparent)]
    Config(#[from] crate::model::config::ConfigError),
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

impl Limits {
    pub fn from_config(gc: Option<&crate::model::config::Gc>) -> Limits {
        let default = Limits::default();
        let Some(gc) = gc else { return default };
        Limits {
            loose_objects: gc.auto.unwrap_or(default.loose_objects),
            packs: gc.auto_pack_limit.unwrap_or(default.packs),
            loose_debates: gc.auto_loose_debates.unwrap_or(default.loose_debates),
        }
    }

    /// The limits of the project whose record is `record` (`.anvil/record`).
    pub fn of_record(record: &Path) -> Result<Limits, crate::model::config::ConfigError> {
        let root = record.parent().unwrap_or(record);
        let config = crate::model::config::Config::load(root)?;
        Ok(Limits::from_config(config.gc.as_ref()))
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

/// Is a maintenance of `record` running now? Its lock file names the process while it works
/// (and is emptied after); a process that is gone (killed) does not count. Read without
/// touching the lock itself, so that asking never turns a maintenance away.
pub fn running(record: &Path) -> bool {
    std::fs::read_to_string(record.join(LOCK_FILE))
        .is_ok_and(|token| crate::fsutil::process_alive(&token))
}

/// The automatic step, for CLI commands that wrote to the record and for the Stop hook after
/// a synthesis: when maintenance is [`needed`], starts `anvil gc --auto` detached and returns
/// at once. Costs a few directory listings when nothing is due; never fails its caller.
pub fn start_if_due(home: &crate::home::Home) {
    if std::env::var_os(NO_AUTO_ENV).is_some() {
        return;
    }
    let record = home.record_dir();
    if !record.join("HEAD").is_file() {
        return;
    }
    let Ok(config) = crate::model::config::Config::load(home.root()) else {
        return;
    };
    if !needed(&record, &Limits::from_config(config.gc.as_ref())) {
        return;
    }
    let Some(anvil) = cli_binary() else {
        return;
    };
    let mut command = Command::new(anvil);
    command
        .arg("gc")
        .arg("--auto")
        .arg("--record")
        .arg(&record)
        .current_dir(home.root())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
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
fn cli_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let cli = match exe.file_stem()?.to_str()? {
        "anvil" => exe,
        "anvil-hook" => exe.with_file_name(format!("anvil{}", std::env::consts::EXE_SUFFIX)),
        _ => return None,
    };
    cli.is_file().then_some(cli)
}

/// What packs the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packer {
    /// The `git` binary: deltas, packed refs, a commit-graph, pruning past the grace period.
    Git(PathBuf),
    /// gix, when there is no `git`: the reachable objects in one pack without new deltas;
    /// refs stay loose, nothing is pruned.
    Gix,
}

impl Packer {
    /// `git` when it is on the PATH (or named by `ANVIL_GIT`), else gix.
    pub fn find() -> Packer {
        git().map_or(Packer::Gix, Packer::Git)
    }
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
#[derive(Debug, Clone)]
pub struct Outcome {
    pub packer: Packer,
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

/// Packs the record (see the module's documentation). Returns `None` with [`When::IfDue`] when
/// nothing is due or another maintenance is running.
pub fn gc(record: &Path, when: When, packer: &Packer) -> Result<Option<Outcome>, MaintenanceError> {
    if let When::IfDue(limits) = when
        && !needed(record, &limits)
    {
        return Ok(None);
    }
    let lock_path = record.join(LOCK_FILE);
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
    match (lock.try_lock(), when) {
        (Ok(()), _) => {}
        (Err(std::fs::TryLockError::WouldBlock), When::IfDue(_)) => return Ok(None),
        (Err(std::fs::TryLockError::WouldBlock), When::Always) => {
            return Err(MaintenanceError::Busy(lock_path));
        }
        (Err(std::fs::TryLockError::Error(source)), _) => {
            return Err(MaintenanceError::Io {
                what: "cannot take the maintenance lock",
                path: lock_path,
                source,
            });
        }
    }
    // Another `gc --auto` may have done the work between the look above and the lock.
    if let When::IfDue(limits) = when
        && !needed(record, &limits)
    {
        return Ok(None);
    }
    // Who holds it, for the writers that meet a ref lock meanwhile (see [`running`]).
    let mut lock = lock;
    let _ = lock.set_len(0).and_then(|()| {
        std::io::Write::write_all(&mut lock, crate::fsutil::process_token().as_bytes())
    });
    let before = footprint(record);
    let packed = match packer {
        Packer::Git(git) => pack_with_git(git, record),
        Packer::Gix => pack_with_gix(record),
    };
    // The refs are packed (with git) and their folders gone: the index of recent debates is
    // written anew from them, compactly. A cache: if that fails, the next reader rebuilds it.
    if packed.is_ok()
        && let Ok(opened) = crate::record::store::Record::open(record)
    {
        let _ = crate::record::recent::rebuild(&opened);
    }
    let _ = lock.set_len(0);
    drop(lock);
    packed?;
    Ok(Some(Outcome {
        packer: packer.clone(),
        before,
        after: footprint(record),
    }))
}

fn pack_with_git(git: &Path, record: &Path) -> Result<(), MaintenanceError> {
    // The record's own settings win over a user's global ones that would weaken it.
    run_git(
        git,
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
        "cannot run git gc on",
    )?;
    remove_empty_ref_folders(&record.join("refs/anvil"));
    Ok(())
}

/// Every object reachable from a ref, in one new pack written by gix: loose objects
/// compressed, as deltas where that pays ([`crate::record::delta`]), objects of existing packs copied
/// as they are (their deltas kept). Then, once the new pack's index is checked to name every
/// one of them, the loose objects that are in the new pack are removed, and the old packs
/// whose every object is in it. Objects written meanwhile (a hook committing) are not in the
/// pack and stay.
fn pack_with_gix(record: &Path) -> Result<(), MaintenanceError> {
    use gix::odb::pack;

    let fail = pack_failed(record);
    let repo =
        gix::open_opts(record, gix::open::Options::isolated()).map_err(|e| fail(e.to_string()))?;
    let mut tips = Vec::new();
    for reference in repo
        .references()
        .map_err(|e| fail(e.to_string()))?
        .all()
        .map_err(|e| fail(e.to_string()))?
    {
        let mut reference = reference.map_err(|e| fail(e.to_string()))?;
        tips.push(
            reference
                .peel_to_id()
                .map_err(|e| fail(e.to_string()))?
                .detach(),
        );
    }
    if tips.is_empty() {
        return Ok(());
    }
    // Each line's history together, newest first, down to where it meets one already met:
    // the pack then holds a debate's phases side by side, and each version of a file follows
    // the newer one it is stored as a delta of (see `delta::Deltify`).
    let mut commits = Vec::new();
    let mut met = std::collections::HashSet::new();
    for tip in tips {
        let mut stack = vec![tip];
        while let Some(id) = stack.pop() {
            if !met.insert(id) {
                continue;
            }
            commits.push(id);
            let object = repo.find_object(id).map_err(|e| fail(e.to_string()))?;
            if object.kind == gix::objs::Kind::Commit {
                let commit = object.into_commit();
                let parents: Vec<_> = commit.parent_ids().map(|p| p.detach()).collect();
                // The first parent is walked next.
                stack.extend(parents.into_iter().rev());
            }
        }
    }
    let objects_dir = record.join("objects");
    let pack_dir = objects_dir.join("pack");
    // The packs there are before this one, opened once: which objects are loose is asked of
    // them, and so is which of them the new pack makes useless.
    let old_packs: Vec<(PathBuf, pack::index::File)> = pack_indices(&pack_dir)
        .into_iter()
        .filter_map(|path| {
            let index = pack::index::File::at(&path, gix::hash::Kind::Sha1).ok()?;
            Some((path, index))
        })
        .collect();
    let (ids, written) = match write_pack(record, &commits, &old_packs, true) {
        Ok(done) => done,
        // Never seen: `delta` is tested to give back every object. Should a pack still lack
        // one, it is removed unused, and the objects are packed whole.
        Err(MaintenanceError::Incomplete { .. }) => {
            write_pack(record, &commits, &old_packs, false)?
        }
        Err(e) => return Err(e),
    };
    let new_index = written.index_path.clone();

    // Only now that the pack can be read: the loose copies of what it holds go.
    for id in &ids {
        remove_if_there(
            &crate::record::store::loose_path(&objects_dir, *id),
            "cannot remove the packed loose object",
        )?;
    }
    // The fan-out folders left empty go too, as `git prune-packed` removes them (a writer
    // makes its folder again; one that holds a file is not removed).
    for fan in 0..=0xffu8 {
        let _ = std::fs::remove_dir(objects_dir.join(format!("{fan:02x}")));
    }
    let packed: std::collections::HashSet<gix::ObjectId> = ids.into_iter().collect();
    // A multi-pack index names the packs it covers: then no pack is removed (git would
    // rewrite it; gix cannot).
    if pack_dir.join("multi-pack-index").exists() {
        return Ok(());
    }
    for (index, file) in &old_packs {
        if Some(index) == new_index.as_ref() || index.with_extension("keep").exists() {
            continue;
        }
        if file.iter().all(|entry| packed.contains(&entry.oid)) {
            // The index first, so that no reader finds a pack about to go.
            for ext in ["idx", "pack", "rev", "bitmap"] {
                remove_if_there(&index.with_extension(ext), "cannot remove the repacked")?;
            }
        }
    }
    Ok(())
}

/// One new pack in `record` of every object reachable from `commits` (in that order), the
/// loose ones turned into deltas by [`crate::record::delta::Deltify`] when `deltas`, indexed into
/// place by gix; then checked: its index must name every object counted, or the pack is
/// removed and the answer is [`MaintenanceError::Incomplete`]. Gives the objects packed.
fn write_pack(
    record: &Path,
    commits: &[gix::ObjectId],
    old_packs: &[(PathBuf, gix_pack::index::File)],
    deltas: bool,
) -> Result<(Vec<gix::ObjectId>, gix_pack::bundle::write::Outcome), MaintenanceError> {
    use gix::odb::pack;
    use std::sync::atomic::AtomicBool;

    let fail = pack_failed(record);
    let io = |what: &'static str, path: &Path| {
        let path = path.to_owned();
        move |source| MaintenanceError::Io { what, path, source }
    };
    let objects_dir = record.join("objects");
    let pack_dir = objects_dir.join("pack");
    let mut db = gix::odb::at(&objects_dir, gix::hash::Kind::Sha1)
        .and_then(|db| db.into_arc())
        .map_err(io("cannot open the objects of", &objects_dir))?;
    // Pack locations are kept from counting to copying: the packs must stay mapped meanwhile.
    db.prevent_pack_unload();
    let interrupt = AtomicBool::new(false);
    let (counts, _) = pack::data::output::count::objects_unthreaded(
        &db,
        &mut commits.iter().copied().map(Ok),
        &gix::progress::Discard,
        &interrupt,
        pack::data::output::count::objects::ObjectExpansion::TreeContents,
    )
    .map_err(|e| fail(e.to_string()))?;
    let ids: Vec<gix::ObjectId> = counts.iter().map(|c| c.id).collect();
    // gix writes the loose objects first, in the order counted; they may become deltas. (An
    // entry counted loose here that a pack written meanwhile holds is only a missed delta or
    // an extra one: either way the pack is whole.)
    let loose = ids
        .iter()
        .filter(|id| {
            old_packs
                .iter()
                .all(|(_, index)| index.lookup(id).is_none())
        })
        .count();
    let entries = pack::data::output::entry::iter_from_counts(
        counts,
        db,
        Box::new(gix::progress::Discard),
        pack::data::output::entry::iter_from_counts::Options {
            thread_limit: Some(1),
            ..Default::default()
        },
    )
    .map_err(|e| fail(e.to_string()))?;
    let mut deltify = crate::record::delta::Deltify::new(if deltas { loose } else { 0 });
    let in_order = gix::parallel::InOrderIter::from(entries).map(move |chunk| {
        chunk.map(|mut entries| {
            entries.iter_mut().for_each(|entry| deltify.entry(entry));
            entries
        })
    });

    // The pack's bytes go to a file beside the packs, then gix indexes them into place.
    std::fs::create_dir_all(&pack_dir).map_err(io("cannot create", &pack_dir))?;
    let mut data = tempfile::Builder::new()
        .prefix("tmp_pack_anvil_")
        .tempfile_in(&pack_dir)
        .map_err(io("cannot create a pack in", &pack_dir))?;
    {
        let writer = std::io::BufWriter::new(data.as_file_mut());
        let count = u32::try_from(ids.len()).map_err(|_| fail("too many objects".into()))?;
        let mut bytes = pack::data::output::bytes::FromEntriesIter::new(
            in_order,
            writer,
            count,
            pack::data::Version::V2,
            gix::hash::Kind::Sha1,
        );
        for written in &mut bytes {
            written.map_err(|e| fail(e.to_string()))?;
        }
        let mut writer = bytes.into_write();
        std::io::Write::flush(&mut writer).map_err(io("cannot write", &pack_dir))?;
    }
    let mut reader = std::io::BufReader::new(
        data.reopen()
            .map_err(io("cannot read back the pack in", &pack_dir))?,
    );
    let written = pack::Bundle::write_to_directory(
        &mut reader,
        Some(&pack_dir),
        &mut gix::progress::Discard,
        &interrupt,
        None::<gix::objs::find::Never>,
        gix::hash::Kind::Sha1,
        pack::bundle::write::Options::default(),
    )
    .map_err(|e| fail(e.to_string()))?;
    drop(data);
    // Read-only, as git leaves its packs (gix writes them private to their owner).
    #[cfg(unix)]
    for path in [&written.data_path, &written.index_path]
        .into_iter()
        .flatten()
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444))
            .map_err(io("cannot make read-only", path))?;
    }
    if let Some(keep) = &written.keep_path {
        std::fs::remove_file(keep).map_err(io("cannot remove", keep))?;
    }
    let missing = written
        .index_path
        .as_ref()
        .and_then(|path| pack::index::File::at(path, gix::hash::Kind::Sha1).ok())
        .map_or(ids.len(), |index| {
            ids.iter().filter(|id| index.lookup(id).is_none()).count()
        });
    if missing > 0 {
        for path in [&written.index_path, &written.data_path]
            .into_iter()
            .flatten()
        {
            let _ = std::fs::remove_file(path);
        }
        return Err(MaintenanceError::Incomplete {
            path: record.to_owned(),
            missing,
        });
    }
    Ok((ids, written))
}

/// The error of packing `record` with gix, from what gix said.
fn pack_failed(record: &Path) -> impl Fn(String) -> MaintenanceError + '_ {
    move |message| MaintenanceError::Pack {
        path: record.to_owned(),
        message,
    }
}

/// Removes `path`; one already gone is fine.
fn remove_if_there(path: &Path, what: &'static str) -> Result<(), MaintenanceError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(MaintenanceError::Io {
            what,
            path: path.to_owned(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// The `.idx` files of the packs in `dir`.
fn pack_indices(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "idx"))
                .collect()
        })
        .unwrap_or_default()
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

    #[test]
    fn limits_come_from_the_gc_table_with_gits_defaults() {
        assert_eq!(Limits::from_config(None), Limits::default());
        let gc = crate::model::config::Gc {
            auto: Some(0),
            auto_pack_limit: None,
            auto_loose_debates: Some(7),
        };
        assert_eq!(
            Limits::from_config(Some(&gc)),
            Limits {
                loose_objects: 0,
                packs: AUTO_PACKS,
                loose_debates: 7,
            }
        );
        let (dir, home, _line) = line_with_debate();
        std::fs::write(home.root().join("config.toml"), "[gc]\nauto = 9\n").unwrap();
        assert_eq!(
            Limits::of_record(&home.record_dir()).unwrap().loose_objects,
            9
        );
        drop(dir);
    }

    /// The phases' texts of `line`, read back from the record.
    fn responses(home: &crate::home::Home, line: &crate::home::LineRef) -> Vec<String> {
        let record = crate::record::store::Record::open(&home.record_dir()).unwrap();
        let history = crate::review::history::LineHistory::load(&record, line).unwrap();
        history
            .entries
            .iter()
            .filter_map(|e| crate::review::history::response(&record, e).unwrap())
            .collect()
    }

    fn record_phase(home: &crate::home::Home, line: &crate::home::LineRef, text: &str) {
        crate::line::stop::stop(
            home,
            line,
            crate::line::stop::Stop {
                session: "s-1",
                text: Some(text),
                claimed: false,
                seen: true,
                provenance: None,
            },
        )
        .unwrap();
    }

    #[test]
    fn gix_packs_every_reachable_object_keeps_the_rest_and_replaces_its_old_pack() {
        let (_dir, home, line) = line_with_debate();
        record_phase(&home, &line, "The advocate's first point.");
        let record = home.record_dir();
        // What a hook leaves between writing its objects and moving its ref.
        let in_flight = {
            let repo = gix::open(&record).unwrap();
            repo.write_blob(b"a phase whose ref has not moved yet")
                .unwrap()
                .detach()
        };
        let before = footprint(&record);
        assert_eq!(before.packs, 0);

        let outcome = gc(&record, When::Always, &Packer::Gix).unwrap().unwrap();
        assert_eq!(outcome.packer, Packer::Gix);
        assert_eq!((outcome.after.packs, outcome.after.loose_objects), (1, 1));
        assert_eq!(responses(&home, &line), ["The advocate's first point."]);
        assert!(crate::record::store::loose_path(&record.join("objects"), in_flight).is_file());

        // Written after the first pack: the next one holds both, and the first one goes.
        record_phase(&home, &line, "The critic's answer.");
        let first_pack = pack_indices(&record.join("objects/pack"));
        let again = gc(&record, When::Always, &Packer::Gix).unwrap().unwrap();
        assert_eq!((again.after.packs, again.after.loose_objects), (1, 1));
        assert_ne!(pack_indices(&record.join("objects/pack")), first_pack);
        assert_eq!(
            responses(&home, &line),
            ["The advocate's first point.", "The critic's answer."]
        );
        // And the line goes on from the packed record.
        record_phase(&home, &line, "Round two.");
        assert_eq!(responses(&home, &line).len(), 3);
    }

    #[test]
    fn a_corrupt_loose_object_stops_the_gix_pack_and_nothing_is_removed() {
        let (_dir, home, line) = line_with_debate();
        record_phase(&home, &line, "The advocate's first point.");
        let record = home.record_dir();
        // The loose file of the phase's response, rewritten with other content.
        let response = {
            let repo = gix::open(&record).unwrap();
            let tree = repo
                .find_reference(&crate::record::store::Record::ref_name(
                    &line.debate,
                    &line.line,
                ))
                .unwrap()
                .peel_to_commit()
                .unwrap()
                .tree()
                .unwrap();
            tree.iter()
                .map(|entry| entry.unwrap())
                .find(|entry| entry.filename().ends_with(b".response.md"))
                .unwrap()
                .oid()
                .to_owned()
        };
        let loose = crate::record::store::loose_path(&record.join("objects"), response);
        let other = b"The advocate's fist point.";
        let corrupt = {
            use std::io::Write;
            let mut zlib = gix::zlib::stream::deflate::Write::new(
                Vec::new(),
                gix::zlib::Compression::BEST_SPEED,
            );
            write!(zlib, "blob {}\0", other.len()).unwrap();
            zlib.write_all(other).unwrap();
            zlib.flush().unwrap();
            zlib.into_inner()
        };
        std::fs::remove_file(&loose).unwrap();
        std::fs::write(&loose, &corrupt).unwrap();
        let before = footprint(&record);

        let err = gc(&record, When::Always, &Packer::Gix).unwrap_err();
        assert!(
            matches!(err, MaintenanceError::Incomplete { missing: 1, .. }),
            "{err}"
        );
        // Not one loose object removed, no pack left behind.
        assert_eq!(footprint(&record).loose_objects, before.loose_objects);
        assert_eq!(std::fs::read(&loose).unwrap(), corrupt);
        assert_eq!(
            pack_indices(&record.join("objects/pack")),
            Vec::<PathBuf>::new()
        );
        let left: Vec<_> = std::fs::read_dir(record.join("objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
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
        let err = gc(&record, When::Always, &Packer::Gix).unwrap_err();
        assert!(matches!(err, MaintenanceError::Busy(_)), "{err}");
        let due = Limits {
            loose_objects: 1,
            packs: 0,
            loose_debates: 1,
        };
        // Two debates with loose refs: this one, and one a hook is writing.
        std::fs::create_dir_all(record.join("refs/anvil/20261122-other-0000")).unwrap();
        assert!(needed(&record, &due));
        assert!(
            gc(&record, When::IfDue(due), &Packer::Gix)
                .unwrap()
                .is_none()
        );
        assert_eq!(footprint(&record).packs, 0);
        // Released (as when its holder dies): the next one runs; the file left is no lock.
        drop(held);
        assert!(gc(&record, When::Always, &Packer::Gix).unwrap().is_some());
    }
}
