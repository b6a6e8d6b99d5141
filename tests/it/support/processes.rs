//! The processes of this machine as `/proc` shows them. Tests look here to prove that nothing
//! they started outlives its owner: a Claude Code after its `HOME` is removed, a seat's agent
//! after its timeout or its hook.

use std::path::PathBuf;

/// A process that still runs (or sleeps): not a zombie, which is gone already and waits only
/// for its parent to reap it.
pub struct Process {
    pub pid: u32,
    /// Its process group.
    pub group: u32,
    /// Its folder under `/proc`.
    dir: PathBuf,
}

impl Process {
    /// Whether one of its environment variables (`NAME=VALUE`) satisfies `matches`; false when
    /// its environment cannot be read (it ended, or belongs to someone else).
    pub fn has_env(&self, matches: impl Fn(&[u8]) -> bool) -> bool {
        std::fs::read(self.dir.join("environ"))
            .is_ok_and(|environ| environ.split(|b| *b == 0).any(matches))
    }

    /// Its working directory, while it can be read.
    pub fn cwd(&self) -> Option<PathBuf> {
        std::fs::read_link(self.dir.join("cwd")).ok()
    }
}

/// The living processes other than this test binary.
pub fn living() -> Vec<Process> {
    let own = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        // /proc/PID/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let fields: Vec<&str> = stat[stat.rfind(')').map_or(0, |i| i + 1)..]
            .split_whitespace()
            .collect();
        if matches!(fields.first(), Some(&("Z" | "X")) | None) {
            continue;
        }
        if let Some(group) = fields.get(2).and_then(|g| g.parse().ok()) {
            found.push(Process {
                pid,
                group,
                dir: entry.path(),
            });
        }
    }
    found
}
