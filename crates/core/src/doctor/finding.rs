//! What a check found: how bad, what to do, and the repair `--fix` may make.

use std::path::PathBuf;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// As it should be.
    Ok,
    /// Worth knowing; nothing is wrong.
    Note,
    /// Works, but something will go wrong or is being lost.
    Warn,
    /// Broken: debates cannot run, or the record is damaged.
    Fail,
}

/// What `--fix` may do about a finding; nothing of the user's is lost by any of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Fix {
    /// Delete a stale temporary file (never a lock: see [`Fix::ClearRefLock`]).
    Remove { path: PathBuf },
    /// Remove what an anvil killed while it moved the ref `reference` left behind: its ref
    /// lock and its temporary file, each only if it is provably anvil's.
    ClearRefLock { reference: String },
    /// Rebuild a line's live files from its tip in the record.
    RollForward { line: String },
    /// Keep a state file that disagrees with the record as `state.md.edited`, then rebuild
    /// the line's live files from the record.
    Overrule { line: String },
    /// Write anvil's own command file as this version writes it.
    Rewrite { path: PathBuf },
    /// Rebuild the index of recent debates from the refs (it is a cache of them).
    RebuildIndex,
    /// Move a line anvil cannot read from `refs/anvil/` to `refs/anvil-damaged/`.
    SetAside { line: String, tip: String },
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// `installation`, `record` or `debates`.
    pub area: &'static str,
    /// A short name of the check, e.g. `stop-hook`.
    pub check: &'static str,
    pub level: Level,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
    /// What `--fix` did, or why it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<String>,
}

impl Finding {
    pub(super) fn new(
        area: &'static str,
        check: &'static str,
        level: Level,
        message: String,
    ) -> Finding {
        Finding {
            area,
            check,
            level,
            message,
            hint: None,
            fix: None,
            fixed: None,
        }
    }

    pub(super) fn hint(mut self, hint: impl Into<String>) -> Finding {
        self.hint = Some(hint.into());
        self
    }

    pub(super) fn fix(mut self, fix: Fix) -> Finding {
        self.fix = Some(fix);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_serializes_with_its_fix_tagged_and_empty_parts_left_out() {
        let plain = Finding::new("record", "objects", Level::Ok, "fine".into());
        let json = serde_json::to_value(&plain).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"area": "record", "check": "objects", "level": "ok", "message": "fine"})
        );
        let fixable = Finding::new("record", "leftovers", Level::Warn, "stale".into())
            .hint("remove it")
            .fix(Fix::Remove {
                path: PathBuf::from("/x.lock"),
            });
        let json = serde_json::to_value(&fixable).unwrap();
        assert_eq!(json["level"], "warn");
        assert_eq!(json["hint"], "remove it");
        assert_eq!(
            json["fix"],
            serde_json::json!({"kind": "remove", "path": "/x.lock"})
        );
        let json = serde_json::to_value(Fix::RollForward {
            line: "d@main".into(),
        })
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "roll-forward", "line": "d@main"})
        );
    }

    #[test]
    fn levels_order_from_fine_to_broken() {
        assert!(Level::Ok < Level::Note && Level::Note < Level::Warn && Level::Warn < Level::Fail);
    }
}
