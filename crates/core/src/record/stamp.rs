//! Did anything under `refs/anvil/` move? The one answer both caches of the refs use: the
//! index of recent debates ([`crate::record::recent`]) and the command line's search index.
//!
//! A ref is written by renaming its lock file into its debate's folder (anvil and git alike),
//! which changes that folder's stamp; a new or removed debate changes `refs/anvil/` itself (a
//! folder's link count moves with each sub-folder, even within one tick of the file system's
//! clock); packing or pruning rewrites `packed-refs`. Every ref anvil moves is first noted in
//! the index of recent debates, and a `git fetch` writes `FETCH_HEAD`: so [`Stamp::all`]
//! changes whenever anything a cache could care about did, and a cache that stored it can
//! tell "nothing moved" from five `stat` calls. What the stamps cannot see (a ref `git`
//! moves in an existing debate's folder, with no fetch) each cache says it its own docs.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// How old a stamped file must be for its stamp to be trusted next time: a change within the
/// same tick of a file system's clock would hide behind a younger one (as git treats an index
/// entry as racily clean). A younger stamp of the refs is trusted too once the journal was
/// written after them by the file system's own clock (see [`Stamp::refs_settled`]).
pub const RACY: Duration = Duration::from_secs(2);

/// The file name of the journal of recent debates (`crate::record::recent`), which anvil's
/// writers append to before every ref they move: a stamp of it sees those moves.
pub const JOURNAL: &str = "anvil-recent";

/// The stamps of the record's ref storage, taken at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// `refs/anvil/` and `packed-refs`: a debate added or removed, refs packed or pruned.
    pub refs: String,
    /// `packed-refs` alone (`-` when there is none): when it changed, every line may have.
    pub packed: String,
    /// [`Stamp::refs`] and the files a move inside an existing debate's folder touches: the
    /// index of recent debates (noted before every ref anvil moves) and `FETCH_HEAD`.
    pub all: String,
    /// No later change to `refs/anvil/` or `packed-refs` can leave their stamp as it is: they
    /// are older than [`RACY`], or older than the journal's last write. That write's time
    /// comes from the same file system's clock, read after theirs: a tick of that clock has
    /// passed since they changed, so a change from now on gets a later time (git's test of a
    /// racily clean index entry, which needs no agreement between the clocks).
    pub refs_settled: bool,
    /// Every stamped file is older than [`RACY`].
    pub settled: bool,
}

impl Stamp {
    pub fn of(record: &Path) -> Stamp {
        let now = SystemTime::now();
        let mut parts = Vec::with_capacity(4);
        let mut young = Vec::with_capacity(4);
        let mut times = Vec::with_capacity(4);
        // In this order: the journal's time is read after the refs' times.
        for file in [
            record.join("packed-refs"),
            record.join("refs/anvil"),
            record.join(JOURNAL),
            record.join("FETCH_HEAD"),
        ] {
            let meta = std::fs::symlink_metadata(&file).ok();
            let time = meta.as_ref().and_then(|m| m.modified().ok());
            young.push(time.is_some_and(|t| now.duration_since(t).map_or(true, |age| age < RACY)));
            times.push(time);
            parts.push(meta.map_or_else(|| "-".to_owned(), |m| of_file(&m)));
        }
        // A missing `packed-refs` cannot change unseen: its appearing changes the stamp.
        let written_after = |journal: SystemTime| times[..2].iter().flatten().all(|&t| t < journal);
        Stamp {
            refs: format!("{}/{}", parts[1], parts[0]),
            packed: parts[0].clone(),
            all: parts.join(" "),
            refs_settled: (!young[0] && !young[1]) || times[2].is_some_and(written_after),
            settled: !young.contains(&true),
        }
    }
}

/// A file's or folder's identity, size, link count and modification time, as one word.
#[cfg(unix)]
pub fn of_file(m: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!(
        "{:x}.{:x}.{:x}.{:x}.{:x}",
        m.ino(),
        m.len(),
        m.nlink(),
        m.mtime(),
        m.mtime_nsec()
    )
}

#[cfg(not(unix))]
pub fn of_file(m: &std::fs::Metadata) -> String {
    let time = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{time:x}.{:x}", m.len())
}

/// Each debate folder of `refs/anvil/` with its stamp, sorted; `None` when the folder cannot
/// be read (a caller then reads every line).
pub fn debate_folders(record: &Path) -> Option<Vec<(String, String)>> {
    let entries = match std::fs::read_dir(record.join("refs/anvil")) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.ok()?;
        let name = entry.file_name().into_string().ok()?;
        // Relative to the open folder: no path to walk for each of thousands of debates.
        out.push((name, of_file(&entry.metadata().ok()?)));
    }
    out.sort_unstable();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_debate_packed_refs_and_a_note_each_change_the_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path();
        std::fs::create_dir_all(record.join("refs/anvil/a")).unwrap();
        let first = Stamp::of(record);
        assert!(!first.settled, "just written");
        assert_eq!(first, Stamp::of(record), "nothing moved");

        // A debate's folder, even within one tick of the clock: the link count moves.
        std::fs::create_dir(record.join("refs/anvil/b")).unwrap();
        let second = Stamp::of(record);
        assert_ne!(first.refs, second.refs);
        assert_eq!(
            debate_folders(record)
                .unwrap()
                .into_iter()
                .map(|(d, _)| d)
                .collect::<Vec<_>>(),
            ["a", "b"]
        );

        std::fs::write(record.join("packed-refs"), "# pack-refs\n").unwrap();
        let third = Stamp::of(record);
        assert_ne!(second.packed, third.packed);
        assert_ne!(second.refs, third.refs);

        // A note in the index of recent debates: not the refs, but everything.
        std::fs::write(record.join(JOURNAL), "x\n").unwrap();
        let fourth = Stamp::of(record);
        assert_eq!(third.refs, fourth.refs);
        assert_ne!(third.all, fourth.all);
    }

    /// Young refs are settled once the journal was written after them, by the file system's
    /// clock, and only then: a journal written before them, or as long ago as they were, is
    /// no later tick.
    #[test]
    fn young_refs_are_settled_by_a_later_write_of_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path();
        std::fs::create_dir_all(record.join("refs/anvil/a")).unwrap();
        std::fs::write(record.join("packed-refs"), "# pack-refs\n").unwrap();
        std::fs::write(record.join(JOURNAL), "x\n").unwrap();
        let now = SystemTime::now();
        let set = |file: &str, ago: u64| {
            std::fs::File::open(record.join(file))
                .and_then(|f| f.set_modified(now - Duration::from_millis(ago)))
                .unwrap();
        };
        let settled = |refs: u64, packed: u64, journal: u64| {
            set("refs/anvil", refs);
            set("packed-refs", packed);
            set(JOURNAL, journal);
            Stamp::of(record).refs_settled
        };
        assert!(settled(500, 900, 100), "the journal written after both");
        assert!(
            !settled(500, 900, 700),
            "the journal written before the refs' folder"
        );
        assert!(
            !settled(500, 50, 100),
            "packed-refs written after the journal"
        );
        assert!(!settled(500, 900, 500), "the same tick is no later one");
        assert!(settled(3_000, 2_500, 2_900), "both older than RACY");
        std::fs::remove_file(record.join("packed-refs")).unwrap();
        set("refs/anvil", 500);
        set(JOURNAL, 100);
        assert!(
            Stamp::of(record).refs_settled,
            "no packed-refs: the refs' folder alone"
        );
        std::fs::remove_file(record.join(JOURNAL)).unwrap();
        assert!(!Stamp::of(record).refs_settled, "no journal, young refs");
    }
}
