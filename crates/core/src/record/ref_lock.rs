//! How anvil moves a line's ref, and how it tells its own ref locks from other programs'.
//!
//! A loose ref moves the way git moves it: whoever creates `<ref>.lock` holds the ref, writes
//! the new value into the lock, checks that the ref still holds what it expected and renames
//! the lock over the ref (a loose ref overrides a packed one). git and gix create the lock
//! first and fill it afterwards, so a writer killed between the two leaves an empty lock that
//! says nothing of who made it; Claude Code kills hooks (a timeout, Ctrl+C), and such a lock
//! held every later phase of the line up.
//!
//! anvil never leaves a lock it cannot recognise as its own:
//!
//! 1. it writes the new value into a temporary file beside the lock, `<line>..anvil.lock` (a
//!    name no ref can have, which git and gix skip as they skip every lock), and holds an
//!    advisory lock (`flock`) on that file for as long as it works;
//! 2. it takes the ref's lock by hard-linking that file to `<line>.lock`: the link fails if the
//!    lock exists, and a lock made this way never exists empty;
//! 3. it compares, renames the lock over the ref, then removes the temporary file.
//!
//! So a ref lock is anvil's exactly when it is the same file as the line's temporary file
//! (same device and inode: nothing else makes such a link), and the anvil that made it is
//! alive exactly when someone holds the `flock` on it, which the kernel releases however its
//! holder ends. A killed anvil's lock is told apart by ownership, never by its age, and is
//! cleared by the next writer of the line ([`clear`]); any other lock belongs to another
//! program (git packing the refs, a person's `git update-ref`) and is never removed here.
//!
//! Where the file system has no hard links, the lock is created and then filled, as git does,
//! and recognised by its content: the temporary file's, a commit no ref names yet.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::fault;

/// The files of one line's ref: the ref, its lock and anvil's temporary file beside them.
#[derive(Debug, Clone)]
pub(crate) struct RefFiles {
    pub(crate) reference: PathBuf,
    pub(crate) lock: PathBuf,
    pub(crate) temp: PathBuf,
}

/// The suffix of anvil's temporary file, after the line's name: `..` makes it a name no ref
/// can have, so no program takes it for the lock of a ref; `.lock` makes git and gix skip it
/// when they list refs (and `git refs verify` too).
pub(crate) const TEMP_SUFFIX: &str = "..anvil.lock";

impl RefFiles {
    /// The files of the loose ref `name` (`refs/anvil/<debate>/<line>`) in the record at
    /// `record`.
    pub(crate) fn new(record: &Path, name: &str) -> RefFiles {
        let reference = record.join(name);
        let mut lock = reference.clone().into_os_string();
        lock.push(".lock");
        let mut temp = reference.clone().into_os_string();
        temp.push(TEMP_SUFFIX);
        RefFiles {
            reference,
            lock: lock.into(),
            temp: temp.into(),
        }
    }
}

/// Who made a ref lock, as far as anvil can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    /// There is no lock.
    Nobody,
    /// An anvil that is moving the ref right now.
    Anvil,
    /// An anvil that was killed while it moved the ref: the lock is its leftover.
    KilledAnvil,
    /// Not anvil: git or another program holds it, or one that was killed left it.
    Other,
}

/// Who holds the lock of the ref whose files are `files`; `current` reads the ref's value.
pub(crate) fn holder(
    files: &RefFiles,
    current: impl FnOnce() -> Option<ObjectId>,
) -> io::Result<Holder> {
    let lock = match std::fs::symlink_metadata(&files.lock) {
        Ok(lock) => lock,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Holder::Nobody),
        Err(e) => return Err(e),
    };
    let temp = match std::fs::symlink_metadata(&files.temp) {
        Ok(temp) => temp,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Holder::Other),
        Err(e) => return Err(e),
    };
    if !made_by_anvil(files, &lock, &temp, current) {
        return Ok(Holder::Other);
    }
    Ok(if crate::fsutil::held(&files.temp) {
        Holder::Anvil
    } else {
        Holder::KilledAnvil
    })
}

/// Is the lock (whose metadata is `lock`) the one anvil made from its temporary file (whose
/// metadata is `temp`)? The same file; or, where anvil had to write the lock itself (no hard
/// links), a lock with the temporary file's content, a commit the ref does not name yet.
fn made_by_anvil(
    files: &RefFiles,
    lock: &Metadata,
    temp: &Metadata,
    current: impl FnOnce() -> Option<ObjectId>,
) -> bool {
    if same_file(lock, temp) {
        return true;
    }
    match std::fs::read(&files.temp) {
        Ok(value) => holds_new_value(&files.lock, &value, current),
        Err(_) => false,
    }
}

/// Does the lock at `lock` hold `value` (a commit id and a newline, as a ref holds it), while
/// the ref names some other commit? Such a value is a commit no program but the one that wrote
/// it knows of: a lock that holds it was made by that writer.
pub(crate) fn holds_new_value(
    lock: &Path,
    value: &[u8],
    current: impl FnOnce() -> Option<ObjectId>,
) -> bool {
    let Some(id) = std::str::from_utf8(value)
        .ok()
        .and_then(|v| ObjectId::from_hex(v.trim().as_bytes()).ok())
    else {
        return false;
    };
    let held = std::fs::read(lock).unwrap_or_default();
    held.trim_ascii() == value.trim_ascii() && current() != Some(id)
}

/// Removes what an anvil killed while it moved the ref left behind: its lock, when the lock
/// is anvil's ([`Holder::KilledAnvil`]), and its temporary file. Says whether it removed a
/// lock. The lock of a live anvil or of another program is left as it is. Safe against
/// writers and other clearers at any moment: the temporary file's `flock` is taken first, and
/// the file is checked to be still the one the name points to.
pub(crate) fn clear(
    files: &RefFiles,
    current: impl FnOnce() -> Option<ObjectId>,
) -> io::Result<bool> {
    Ok(clear_temp(files, current)? == Temp::Cleared { lock: true })
}

/// What [`clear_temp`] found.
#[derive(Debug, PartialEq, Eq)]
enum Temp {
    /// No temporary file, or it changed hands while looking: nothing to clear now.
    Absent,
    /// A live anvil holds it.
    InUse,
    /// It was a killed anvil's, and is removed (with its lock, if `lock`).
    Cleared { lock: bool },
}

fn clear_temp(files: &RefFiles, current: impl FnOnce() -> Option<ObjectId>) -> io::Result<Temp> {
    // Written to, never: opened for writing because some systems take an exclusive lock only
    // on a file opened so (NFS).
    let file = match OpenOptions::new().write(true).open(&files.temp) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Temp::Absent),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Temp::InUse),
        Err(std::fs::TryLockError::Error(e)) => return Err(e),
    }
    let temp = file.metadata()?;
    if !names(&files.temp, &temp)? {
        // Removed, or made again, since it was opened: by a writer that has the name now.
        return Ok(Temp::Absent);
    }
    let mut lock = false;
    if let Ok(lock_meta) = std::fs::symlink_metadata(&files.lock)
        && made_by_anvil(files, &lock_meta, &temp, current)
    {
        crate::fsutil::remove_if_present(&files.lock)?;
        lock = true;
    }
    crate::fsutil::remove_if_present(&files.temp)?;
    Ok(Temp::Cleared { lock })
}

/// What a ref must stand at for a move to go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    /// The ref must not exist (a new line).
    Absent,
    /// The ref must name this commit.
    At(ObjectId),
}

/// Why a move did not happen; `E` is what reading the ref can fail with.
#[derive(Debug)]
pub(crate) enum Refused<E> {
    /// The ref's lock is there: another program's, or a live anvil's.
    Locked,
    /// The ref does not stand where it was expected.
    Moved,
    /// Writing `path` failed (a full disk, a refused permission).
    Write { path: PathBuf, source: io::Error },
    /// Reading the ref failed.
    Read(E),
}

/// Moves the ref whose files are `files` from `expected` to `new` (see the module's
/// documentation); `current` reads the ref's value (its loose file, else `packed-refs`). A
/// killed anvil's leftovers in the way are cleared first; a lock anyone else holds is
/// reported at once ([`Refused::Locked`]), not waited for.
pub(crate) fn update<E>(
    files: &RefFiles,
    expected: Expected,
    new: ObjectId,
    current: impl Fn() -> Result<Option<ObjectId>, E>,
) -> Result<(), Refused<E>> {
    let write = |path: &Path| {
        let path = path.to_owned();
        move |source| Refused::Write { path, source }
    };
    fault::point("before the ref update").map_err(write(&files.lock))?;
    let mut temp = take_temp(files, || current().ok().flatten())?;
    let value = format!("{new}\n");
    // From here until the lock is taken, a failure removes the temporary file.
    let filled = fault::point("filling the ref's new value")
        .and_then(|()| temp.write_all(value.as_bytes()))
        .and_then(|()| fault::point("taking the ref's lock"));
    if let Err(source) = filled {
        let _ = std::fs::remove_file(&files.temp);
        return Err(Refused::Write {
            path: files.temp.clone(),
            source,
        });
    }
    if let Err(refused) = take_lock(files, value.as_bytes()) {
        let _ = std::fs::remove_file(&files.temp);
        return Err(refused);
    }
    // The lock is anvil's now: a failure before the rename removes it (and the temporary file).
    let give_up = |refused: Refused<E>| {
        let _ = std::fs::remove_file(&files.lock);
        let _ = std::fs::remove_file(&files.temp);
        refused
    };
    fault::point("while the ref is locked").map_err(|e| give_up(write(&files.lock)(e)))?;
    let stands = current().map_err(|e| give_up(Refused::Read(e)))?;
    let fits = match expected {
        Expected::At(id) => stands == Some(id),
        // A ref that names the new commit already is where the move would take it.
        Expected::Absent => stands.is_none() || stands == Some(new),
    };
    if !fits {
        return Err(give_up(Refused::Moved));
    }
    fault::point("moving the ref into place")
        .and_then(|()| std::fs::rename(&files.lock, &files.reference))
        .map_err(|e| give_up(write(&files.reference)(e)))?;
    // The ref has moved; the temporary file (the same file as the ref now) is let go last, so
    // that a writer killed before this point is still recognised by it.
    fault::point("removing the ref's temporary file")
        .and_then(|()| std::fs::remove_file(&files.temp))
        .map_err(write(&files.temp))?;
    drop(temp);
    fault::point("after the ref update").map_err(write(&files.reference))?;
    Ok(())
}

/// How many times a writer tries to make its temporary file while others take and clear it.
const TEMP_ATTEMPTS: u32 = 8;

/// Creates the line's temporary file afresh, empty, and holds its `flock`. One that is there
/// already is a killed anvil's leftover, cleared (with the lock made from it), or a live
/// anvil's, which is moving the ref now: [`Refused::Locked`].
fn take_temp<E>(
    files: &RefFiles,
    current: impl Fn() -> Option<ObjectId>,
) -> Result<File, Refused<E>> {
    let fail = |source| Refused::Write {
        path: files.temp.clone(),
        source,
    };
    for _ in 0..TEMP_ATTEMPTS {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&files.temp)
        {
            Ok(file) => match file.try_lock() {
                // A clearer that opened the new file first removes it: make another.
                Ok(()) if names(&files.temp, &file.metadata().map_err(fail)?).map_err(fail)? => {
                    return Ok(file);
                }
                Ok(()) | Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(fail(e)),
            },
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if clear_temp(files, &current).map_err(fail)? == Temp::InUse {
                    return Err(Refused::Locked);
                }
            }
            // The debate's folder is new, or a maintenance removed it as empty meanwhile.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let dir = files.temp.parent().expect("a ref has a folder");
                std::fs::create_dir_all(dir).map_err(|source| Refused::Write {
                    path: dir.to_owned(),
                    source,
                })?;
            }
            Err(e) => return Err(fail(e)),
        }
    }
    Err(Refused::Locked)
}

/// Takes the ref's lock with `value` in it: a hard link of the filled temporary file, or, on a
/// file system without hard links, a lock created and filled as git does.
fn take_lock<E>(files: &RefFiles, value: &[u8]) -> Result<(), Refused<E>> {
    let taken = match std::fs::hard_link(&files.temp, &files.lock) {
        Err(e) if no_hard_links(&e) => write_lock(&files.lock, value),
        taken => taken,
    };
    match taken {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(Refused::Locked),
        Err(source) => Err(Refused::Write {
            path: files.lock.clone(),
            source,
        }),
    }
}

/// Takes the lock at `lock` as git does: created (failing if it exists), then filled.
fn write_lock(lock: &Path, value: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(lock)?;
    file.write_all(value).inspect_err(|_| {
        let _ = std::fs::remove_file(lock);
    })
}

/// Does this failure of `link` say that the file system makes no hard links (FAT, some network
/// and virtual machine shares)?
fn no_hard_links(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::Unsupported | io::ErrorKind::PermissionDenied
    )
}

/// Does the name `path` still point to the file whose metadata is `meta`?
fn names(path: &Path, meta: &Metadata) -> io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(now) => Ok(same_file(&now, meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Without inode numbers, two names are taken for the same file only by content (see
/// [`made_by_anvil`]).
#[cfg(not(unix))]
fn same_file(_: &Metadata, _: &Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "1111111111111111111111111111111111111111";
    const NEW: &str = "2222222222222222222222222222222222222222";

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex.as_bytes()).unwrap()
    }

    /// A record folder with the loose ref `refs/anvil/d/main` at `OLD`, and a reader of it.
    fn setup() -> (tempfile::TempDir, RefFiles) {
        let dir = tempfile::tempdir().unwrap();
        let files = RefFiles::new(dir.path(), "refs/anvil/d/main");
        std::fs::create_dir_all(files.reference.parent().unwrap()).unwrap();
        std::fs::write(&files.reference, format!("{OLD}\n")).unwrap();
        (dir, files)
    }

    fn read(files: &RefFiles) -> Result<Option<ObjectId>, io::Error> {
        match std::fs::read_to_string(&files.reference) {
            Ok(text) => Ok(Some(id(text.trim()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn current(files: &RefFiles) -> impl Fn() -> Option<ObjectId> + '_ {
        move || read(files).unwrap()
    }

    /// What a writer killed after it took the lock leaves: its temporary file, linked.
    fn killed_holding_the_lock(files: &RefFiles, value: &str) {
        std::fs::write(&files.temp, format!("{value}\n")).unwrap();
        std::fs::hard_link(&files.temp, &files.lock).unwrap();
    }

    #[test]
    fn a_move_leaves_the_ref_and_nothing_else() {
        let (_dir, files) = setup();
        update(&files, Expected::At(id(OLD)), id(NEW), || read(&files)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&files.reference).unwrap(),
            format!("{NEW}\n")
        );
        assert!(!files.lock.exists() && !files.temp.exists());
        // A new ref in a folder that does not exist yet.
        let fresh = RefFiles::new(files.reference.parent().unwrap(), "x/y");
        update(&fresh, Expected::Absent, id(NEW), || read(&fresh)).unwrap();
        assert_eq!(read(&fresh).unwrap(), Some(id(NEW)));
    }

    #[test]
    fn a_ref_that_moved_or_a_lock_that_is_held_stops_the_move_and_leaves_no_file_of_anvil() {
        let (_dir, files) = setup();
        let refused = update(&files, Expected::At(id(NEW)), id(NEW), || read(&files));
        assert!(matches!(refused, Err(Refused::Moved)), "{refused:?}");
        let refused = update(&files, Expected::Absent, id(NEW), || read(&files));
        assert!(matches!(refused, Err(Refused::Moved)), "{refused:?}");
        assert_eq!(read(&files).unwrap(), Some(id(OLD)));
        assert!(!files.lock.exists() && !files.temp.exists());

        // git's lock, empty (its writer was killed between creating and filling it) or not.
        for held in ["", NEW] {
            std::fs::write(&files.lock, held).unwrap();
            let refused = update(&files, Expected::At(id(OLD)), id(NEW), || read(&files));
            assert!(matches!(refused, Err(Refused::Locked)), "{refused:?}");
            assert_eq!(std::fs::read_to_string(&files.lock).unwrap(), held);
            assert!(!files.temp.exists());
            assert_eq!(holder(&files, current(&files)).unwrap(), Holder::Other);
            assert!(!clear(&files, current(&files)).unwrap());
            assert!(
                files.lock.exists(),
                "another program's lock is never removed"
            );
            std::fs::remove_file(&files.lock).unwrap();
        }
    }

    #[test]
    fn a_killed_anvils_lock_is_recognised_and_cleared_a_live_ones_is_left() {
        let (_dir, files) = setup();
        killed_holding_the_lock(&files, NEW);
        assert_eq!(
            holder(&files, current(&files)).unwrap(),
            Holder::KilledAnvil
        );

        // While its writer lives (holds the flock), it is anvil's, in use, and not cleared.
        let alive = File::open(&files.temp).unwrap();
        alive.lock().unwrap();
        assert_eq!(holder(&files, current(&files)).unwrap(), Holder::Anvil);
        assert!(!clear(&files, current(&files)).unwrap());
        let refused = update(&files, Expected::At(id(OLD)), id(NEW), || read(&files));
        assert!(matches!(refused, Err(Refused::Locked)), "{refused:?}");
        assert!(files.lock.exists() && files.temp.exists());
        drop(alive);

        assert!(clear(&files, current(&files)).unwrap());
        assert!(!files.lock.exists() && !files.temp.exists());
        assert_eq!(holder(&files, current(&files)).unwrap(), Holder::Nobody);

        // The next writer clears it on its way too.
        killed_holding_the_lock(&files, NEW);
        update(&files, Expected::At(id(OLD)), id(NEW), || read(&files)).unwrap();
        assert_eq!(read(&files).unwrap(), Some(id(NEW)));
        assert!(!files.lock.exists() && !files.temp.exists());
    }

    #[test]
    fn leftovers_of_a_writer_killed_before_or_after_it_held_the_lock_are_cleared() {
        let (_dir, files) = setup();
        // Killed between creating its temporary file and filling it.
        std::fs::write(&files.temp, "").unwrap();
        assert_eq!(holder(&files, current(&files)).unwrap(), Holder::Nobody);
        assert!(!clear(&files, current(&files)).unwrap());
        assert!(!files.temp.exists());

        // Killed after the rename, before removing its temporary file (the ref's file now):
        // the ref keeps its value; a lock git takes meanwhile is git's, even with that value.
        std::fs::remove_file(&files.reference).unwrap();
        std::fs::write(&files.temp, format!("{OLD}\n")).unwrap();
        std::fs::hard_link(&files.temp, &files.reference).unwrap();
        std::fs::write(&files.lock, format!("{OLD}\n")).unwrap();
        assert_eq!(holder(&files, current(&files)).unwrap(), Holder::Other);
        assert!(!clear(&files, current(&files)).unwrap());
        assert!(files.lock.exists() && !files.temp.exists());
        assert_eq!(read(&files).unwrap(), Some(id(OLD)));
    }

    #[test]
    fn without_hard_links_a_lock_holding_the_temporary_files_new_value_is_anvils() {
        let (_dir, files) = setup();
        // What the fallback leaves: a lock written as git writes it, with the same content.
        std::fs::write(&files.temp, format!("{NEW}\n")).unwrap();
        std::fs::write(&files.lock, format!("{NEW}\n")).unwrap();
        assert_eq!(
            holder(&files, current(&files)).unwrap(),
            Holder::KilledAnvil
        );
        // The same lock once the ref names that commit is not evidence of anything.
        std::fs::write(&files.reference, format!("{NEW}\n")).unwrap();
        assert_eq!(holder(&files, current(&files)).unwrap(), Holder::Other);
        std::fs::write(&files.reference, format!("{OLD}\n")).unwrap();
        assert!(clear(&files, current(&files)).unwrap());
        assert!(!files.lock.exists() && !files.temp.exists());

        // The fallback itself: the lock created and filled, refused when it is there.
        assert!(no_hard_links(&io::Error::from(io::ErrorKind::Unsupported)));
        let value = format!("{NEW}\n");
        write_lock(&files.lock, value.as_bytes()).unwrap();
        assert_eq!(std::fs::read_to_string(&files.lock).unwrap(), value);
        let again = write_lock(&files.lock, b"");
        assert_eq!(again.unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&files.lock).unwrap(), value);
    }

    #[test]
    fn the_temporary_file_is_no_ref_and_no_refs_lock() {
        let files = RefFiles::new(Path::new("/r"), "refs/anvil/d/main");
        assert_eq!(files.lock, Path::new("/r/refs/anvil/d/main.lock"));
        assert_eq!(files.temp, Path::new("/r/refs/anvil/d/main..anvil.lock"));
        // Its name less `.lock` is no valid name of a line, nor of any ref.
        assert!(!crate::record::store::valid_name("main..anvil"));
        assert!(gix::refs::FullName::try_from("refs/anvil/d/main..anvil").is_err());
    }
}
