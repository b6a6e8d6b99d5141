//! What `anvil diff` compares: two moments of a debate, as pairs of texts.
//!
//! Between two rounds the Advocate is compared with the Advocate and the Critic with the
//! Critic, so the diff shows how each position moved (in a round drafted blind, where every
//! voice of a rotation speaks, each voice with itself: the round is one moment of several
//! voices); between two lines at their syntheses
//! the syntheses are compared. A single phase against a single phase is compared directly.
//! The texts are the phases as people read them (tags as words, see
//! [`crate::model::markers::readable`]); positions move in the line `diff` opens with.

use crate::record::store::Record;
use crate::review::history::{self, HistoryError};
use crate::review::revision::Resolved;

/// Two texts to compare, and what each is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// What is compared: `advocate`, `critic`, `synthesizer`, `state`, `advocate → critic`.
    pub name: String,
    /// `(label, text)` of each side; `None` when one side has no such phase.
    pub a: Option<(String, String)>,
    pub b: Option<(String, String)>,
}

/// The line counts of a pair's diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    pub insertions: usize,
    pub deletions: usize,
}

impl Pair {
    pub fn old_text(&self) -> &str {
        self.a.as_ref().map_or("", |(_, t)| t.as_str())
    }

    pub fn new_text(&self) -> &str {
        self.b.as_ref().map_or("", |(_, t)| t.as_str())
    }

    pub fn stat(&self) -> Stat {
        let diff = similar::TextDiff::from_lines(self.old_text(), self.new_text());
        let mut stat = Stat::default();
        for change in diff.iter_all_changes() {
            match change.tag() {
                similar::ChangeTag::Insert => stat.insertions += 1,
                similar::ChangeTag::Delete => stat.deletions += 1,
                similar::ChangeTag::Equal => {}
            }
        }
        stat
    }

    /// A unified diff with `a/` and `b/` headers, as plain text.
    pub fn unified(&self) -> String {
        let label = |side: &Option<(String, String)>, prefix: &str| match side {
            Some((l, _)) => format!("{prefix}/{l}"),
            None => "/dev/null".to_owned(),
        };
        similar::TextDiff::from_lines(self.old_text(), self.new_text())
            .unified_diff()
            .context_radius(3)
            .header(&label(&self.a, "a"), &label(&self.b, "b"))
            .to_string()
    }
}

/// The sides of a revision: the phases of its round up to it, keyed by role.
fn sides(record: &Record, r: &Resolved) -> Result<Vec<(String, String, String)>, HistoryError> {
    let mut out = Vec::new();
    for i in r.history.round_of(r.index) {
        let entry = &r.history.entries[i];
        let label = format!("{}/{}", r.history.line.line, entry_label(entry));
        match entry.role {
            Some(role) => {
                let text = history::response(record, entry)?.unwrap_or_default();
                let text = crate::model::markers::readable(&text).into_owned();
                out.push((seat_key(entry, role), label, text));
            }
            None => {
                let state = history::read_text(record, entry.commit, "state.md")?;
                out.push(("state".to_owned(), label, state.unwrap_or_default()));
            }
        }
    }
    Ok(out)
}

/// What a phase is paired by: its role, and its voice when it was drafted blind with the
/// round's other voices (`stakeholder (Product/UX)`).
fn seat_key(entry: &history::Entry, role: crate::model::state::Role) -> String {
    match (&entry.meta.voice, entry.meta.drafted) {
        (Some(voice), true) => format!("{} ({voice})", role.name()),
        _ => role.name().to_owned(),
    }
}

/// `round-2/critic`, `synthesis`, `start`, …: how an entry is named in diff headers.
pub fn entry_label(entry: &history::Entry) -> String {
    match entry.role {
        Some(crate::model::state::Role::Synthesizer) => "synthesis".to_owned(),
        Some(role) => format!("round-{}/{}", entry.meta.round, seat_key(entry, role)),
        None => entry.meta.phase.clone(),
    }
}

/// The pairs to show for `anvil diff A B`.
pub fn pairs(record: &Record, a: &Resolved, b: &Resolved) -> Result<Vec<Pair>, HistoryError> {
    let mut left = sides(record, a)?;
    let mut right = sides(record, b)?;
    if left.len() == 1 && right.len() == 1 {
        let (ka, la, ta) = left.remove(0);
        let (kb, lb, tb) = right.remove(0);
        let name = if ka == kb {
            ka
        } else {
            format!("{ka} → {kb}")
        };
        return Ok(vec![Pair {
            name,
            a: Some((la, ta)),
            b: Some((lb, tb)),
        }]);
    }
    let mut out = Vec::new();
    for (key, label, text) in left {
        let other = right
            .iter()
            .position(|(k, _, _)| *k == key)
            .map(|i| right.remove(i));
        out.push(Pair {
            name: key,
            a: Some((label, text)),
            b: other.map(|(_, l, t)| (l, t)),
        });
    }
    for (key, label, text) in right {
        out.push(Pair {
            name: key,
            a: None,
            b: Some((label, text)),
        });
    }
    Ok(out)
}
