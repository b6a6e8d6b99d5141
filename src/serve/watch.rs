//! Change detection for the live page: a thread looks at the record's refs and the live files
//! every 200 ms and sends one event per debate (or for the sessions) that changed.
//!
//! Polling a few directories with `stat` is simple, portable and cheap next to a debate's
//! pace; every change anvil makes replaces a file through a rename, so a file's inode,
//! size and mtime together always move when its content does.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::Duration;

use anvil_core::home::{Home, LineRef};
use serde::Serialize;
use tokio::sync::broadcast;

pub const PERIOD: Duration = Duration::from_millis(200);

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// Anything of one debate: a phase, its state, its queued steering, a new line.
    Debate { debate: String },
    /// A session registered, or a message to one was queued or delivered.
    Sessions,
}

/// A fingerprint per debate and one for the sessions.
#[derive(Debug, Default, PartialEq, Eq)]
struct Snapshot {
    debates: BTreeMap<String, u64>,
    sessions: u64,
}

/// Watches `home` until the receiving side is gone.
pub fn spawn(home: Home, tx: broadcast::Sender<Change>) {
    std::thread::Builder::new()
        .name("anvil-serve-watch".into())
        .spawn(move || {
            let mut last = snapshot(&home);
            loop {
                std::thread::sleep(PERIOD);
                let now = snapshot(&home);
                for change in changes(&last, &now) {
                    // No subscriber is fine: nobody is looking.
                    let _ = tx.send(change);
                }
                last = now;
            }
        })
        .expect("spawn the watch thread");
}

fn changes(old: &Snapshot, new: &Snapshot) -> Vec<Change> {
    let mut out: Vec<Change> = new
        .debates
        .iter()
        .filter(|(id, fp)| old.debates.get(*id) != Some(fp))
        .map(|(id, _)| Change::Debate { debate: id.clone() })
        .collect();
    if old.sessions != new.sessions {
        out.push(Change::Sessions);
    }
    out
}

fn snapshot(home: &Home) -> Snapshot {
    let mut debates: BTreeMap<String, std::collections::hash_map::DefaultHasher> = BTreeMap::new();
    // Live files: state, transcript and queued steering of every line.
    for (debate, debate_dir) in children(&home.debates_dir()) {
        let h = debates.entry(debate.clone()).or_default();
        for (line, _) in children(&debate_dir) {
            line.hash(h);
            let line = LineRef::new(&debate, line);
            stat(&home.state_path(&line), h);
            stat(&home.transcript_path(&line), h);
            stat(&home.headless_path(&line), h);
            for (name, _) in children(&home.steering_dir(&line)) {
                name.hash(h);
            }
        }
    }
    // The record's refs: a phase recorded by another anvil (or pulled) shows up here.
    let refs = home.record_dir().join("refs").join("anvil");
    for (debate, dir) in children(&refs) {
        let h = debates.entry(debate).or_default();
        for (line, path) in children(&dir) {
            line.hash(h);
            stat(&path, h);
        }
    }
    let mut packed = std::collections::hash_map::DefaultHasher::new();
    stat(&home.record_dir().join("packed-refs"), &mut packed);
    let packed = packed.finish();

    let mut sessions = std::collections::hash_map::DefaultHasher::new();
    for (session, _) in children(&home.inboxes_dir()) {
        session.hash(&mut sessions);
        let Some(inbox) = home.inbox(&session) else {
            continue;
        };
        stat(&inbox.registration(), &mut sessions);
        for (folder, dir) in [
            ("queued", inbox.queued_dir()),
            ("delivered", inbox.delivered_dir()),
        ] {
            for (name, _) in children(&dir) {
                (folder, name).hash(&mut sessions);
            }
        }
    }
    // A session's binding changes which debate it drives.
    for (name, path) in children(&home.sessions_dir()) {
        name.hash(&mut sessions);
        stat(&path, &mut sessions);
    }
    Snapshot {
        debates: debates
            .into_iter()
            .map(|(id, h)| (id, h.finish() ^ packed))
            .collect(),
        sessions: sessions.finish(),
    }
}

/// Visible entries of `dir` as (name, path), sorted; none when it is absent or unreadable.
fn children(dir: &Path) -> Vec<(String, std::path::PathBuf)> {
    anvil_core::fsutil::visible_entries(dir).unwrap_or_default()
}

fn stat(path: &Path, h: &mut impl Hasher) {
    match std::fs::metadata(path) {
        Ok(m) => {
            #[cfg(unix)]
            std::os::unix::fs::MetadataExt::ino(&m).hash(h);
            m.len().hash(h);
            m.modified().ok().hash(h);
        }
        Err(_) => 0u8.hash(h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_state_file_is_one_event_for_its_debate() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let line = anvil_core::home::LineRef::new("d-1", "main");
        std::fs::create_dir_all(home.line_dir(&line)).unwrap();
        anvil_core::fsutil::write_atomic(&home.state_path(&line), b"one").unwrap();
        let before = snapshot(&home);
        assert_eq!(changes(&before, &snapshot(&home)), []);
        anvil_core::fsutil::write_atomic(&home.state_path(&line), b"two").unwrap();
        let after = snapshot(&home);
        assert_eq!(
            changes(&before, &after),
            [Change::Debate {
                debate: "d-1".into()
            }]
        );
        anvil_core::claude::feedback::queue(&home, "s-1", "hi", 1).unwrap();
        assert_eq!(changes(&after, &snapshot(&home)), [Change::Sessions]);
    }
}
