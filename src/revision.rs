//! Revision names: how every command points at a moment of a debate.
//!
//! ```text
//! round-2                 end of round 2 on the current line (round-0 is the start)
//! round-2/advocate        one phase inside a round
//! synthesis               the current line's synthesis
//! cost, DEBATE@cost       the tip of a line
//! cost:round-2            a name on another line of the current debate
//! DEBATE@LINE:round-2     … of any debate (a prefix of the debate id is enough)
//! LINE~1, round-3~1       one commit further back along the line
//! 3f2a9c1                 a commit id prefix (at least 4 hex digits)
//! ```
//!
//! A name resolves to an entry of a line's history, so the caller gets the line it was
//! resolved on as well as the commit.

use crate::history::{HistoryError, LineHistory};
use crate::home::LineRef;
use crate::record::Record;

#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error("'{name}': {message}")]
    Unknown { name: String, message: String },
}

/// A revision resolved to one entry of one line.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// What the user wrote.
    pub name: String,
    pub history: LineHistory,
    pub index: usize,
}

impl Resolved {
    pub fn entry(&self) -> &crate::history::Entry {
        &self.history.entries[self.index]
    }

    /// A short canonical name: `DEBATE@LINE:round-2`, `…:synthesis`, or `…~K`.
    pub fn canonical(&self) -> String {
        let named = self
            .history
            .names()
            .into_iter()
            .rev()
            .find(|(_, i)| *i == self.index)
            .map(|(n, _)| n);
        let line = &self.history.line;
        match named {
            Some(n) => format!("{line}:{n}"),
            None => {
                let back = self.history.entries.len() - 1 - self.index;
                if back == 0 {
                    line.to_string()
                } else {
                    format!("{line}~{back}")
                }
            }
        }
    }
}

/// Resolves `name`; `current` is the line that bare names (`round-2`, `synthesis`) refer to.
pub fn resolve(
    record: &Record,
    name: &str,
    current: Option<&LineRef>,
) -> Result<Resolved, RevisionError> {
    let unknown = |message: String| RevisionError::Unknown {
        name: name.to_owned(),
        message,
    };
    let text = name.trim();
    let (body, back) = split_back(text).ok_or_else(|| unknown("bad '~K' suffix".into()))?;
    let (target, selector) = match body.split_once(':') {
        Some((t, s)) => (Some(t), Some(s)),
        None if is_selector(body) => (None, Some(body)),
        None => (Some(body), None),
    };

    let (history, index) = match target {
        None | Some("") => {
            let line = current.ok_or_else(|| {
                unknown("there is no current line here; name one, as DEBATE@LINE:…".into())
            })?;
            let history = LineHistory::load(record, line)?;
            let index = history.entries.len() - 1;
            (history, index)
        }
        Some(target) => find_target(record, target, current).map_err(|e| match e {
            Found::Error(e) => e,
            Found::Missing(m) => unknown(m),
        })?,
    };
    let index = match selector {
        None => index,
        Some(sel) => select(&history, sel).ok_or_else(|| {
            let names: Vec<String> = history.names().into_iter().map(|(n, _)| n).collect();
            unknown(format!(
                "no '{sel}' on {}; it has {}",
                history.line,
                if names.is_empty() {
                    "nothing yet".to_owned()
                } else {
                    names.join(", ")
                }
            ))
        })?,
    };
    let index = index.checked_sub(back).ok_or_else(|| {
        unknown(format!(
            "{} has only {} commits before that point",
            history.line, index
        ))
    })?;
    Ok(Resolved {
        name: name.to_owned(),
        history,
        index,
    })
}

/// `X~K` → (`X`, K); a bare `X~` means one back, as in git.
fn split_back(text: &str) -> Option<(&str, usize)> {
    match text.rsplit_once('~') {
        None => Some((text, 0)),
        Some((body, "")) => Some((body, 1)),
        Some((body, k)) => k.parse().ok().map(|k| (body, k)),
    }
}

fn is_selector(text: &str) -> bool {
    text == "synthesis" || text == "start" || text == "tip" || text.starts_with("round-")
}

/// The index a selector names on `history`.
fn select(history: &LineHistory, selector: &str) -> Option<usize> {
    match selector {
        "synthesis" => history.synthesis(),
        "start" => history.round_end(0),
        "tip" | "" => history.entries.len().checked_sub(1),
        _ => {
            let rest = selector.strip_prefix("round-")?;
            match rest.split_once('/') {
                Some((n, role)) => {
                    history.phase_in_round(n.parse().ok()?, crate::history::role_named(role)?)
                }
                None => history.round_end(rest.parse().ok()?),
            }
        }
    }
}

enum Found {
    Error(RevisionError),
    Missing(String),
}

impl From<HistoryError> for Found {
    fn from(e: HistoryError) -> Found {
        Found::Error(e.into())
    }
}

impl From<crate::record::RecordError> for Found {
    fn from(e: crate::record::RecordError) -> Found {
        Found::Error(HistoryError::from(e).into())
    }
}

/// A line (its tip) or a commit, by `DEBATE@LINE`, `LINE`, `DEBATE` or an id prefix.
fn find_target(
    record: &Record,
    target: &str,
    current: Option<&LineRef>,
) -> Result<(LineHistory, usize), Found> {
    let all = record.lines()?;
    let tip_of = |line: LineRef| -> Result<(LineHistory, usize), Found> {
        let history = LineHistory::load(record, &line)?;
        let index = history.entries.len() - 1;
        Ok((history, index))
    };
    let line_list = |debate: &str| {
        all.iter()
            .filter(|(d, _, _)| d == debate)
            .map(|(_, l, _)| l.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some((debate, line)) = target.split_once('@') {
        let debate = match_debate(&all, debate)?;
        let line = if line.is_empty() { "main" } else { line };
        if !all.iter().any(|(d, l, _)| *d == debate && l == line) {
            return Err(Found::Missing(format!(
                "debate {debate} has no line '{line}'; its lines: {}",
                line_list(&debate)
            )));
        }
        return tip_of(LineRef::new(debate, line));
    }
    if let Some(current) = current
        && all
            .iter()
            .any(|(d, l, _)| *d == current.debate && l == target)
    {
        return tip_of(LineRef::new(&current.debate, target));
    }
    if let Ok(debate) = match_debate(&all, target) {
        return tip_of(LineRef::new(debate, "main"));
    }
    if target.len() >= 4 && target.chars().all(|c| c.is_ascii_hexdigit()) {
        return find_commit(record, &all, &target.to_ascii_lowercase());
    }
    let mut message = format!("no line, debate or commit named '{target}'");
    if let Some(current) = current {
        message.push_str(&format!(
            "; lines of {}: {}",
            current.debate,
            line_list(&current.debate)
        ));
    }
    Err(Found::Missing(message))
}

fn match_debate(all: &[(String, String, gix::ObjectId)], prefix: &str) -> Result<String, Found> {
    let mut debates: Vec<&str> = all
        .iter()
        .map(|(d, _, _)| d.as_str())
        .filter(|d| *d == prefix || (!prefix.is_empty() && d.starts_with(prefix)))
        .collect();
    debates.dedup();
    if debates.contains(&prefix) {
        return Ok(prefix.to_owned());
    }
    match debates.as_slice() {
        [one] => Ok((*one).to_owned()),
        [] => Err(Found::Missing(format!(
            "no debate '{prefix}' in the record"
        ))),
        many => Err(Found::Missing(format!(
            "'{prefix}' matches several debates: {}",
            many.join(", ")
        ))),
    }
}

/// Finds the commit whose id starts with `prefix` on some line, preferring the line that
/// wrote it over lines that inherited it.
fn find_commit(
    record: &Record,
    all: &[(String, String, gix::ObjectId)],
    prefix: &str,
) -> Result<(LineHistory, usize), Found> {
    let mut found: Option<(LineHistory, usize)> = None;
    let mut ids = std::collections::BTreeSet::new();
    for (debate, line, _) in all {
        let history = LineHistory::load(record, &LineRef::new(debate, line))?;
        for (i, entry) in history.entries.iter().enumerate() {
            if !entry.commit.to_string().starts_with(prefix) {
                continue;
            }
            ids.insert(entry.commit);
            let own = entry.line == history.line.line;
            let better = match &found {
                None => true,
                Some((h, j)) => own && h.entries[*j].line != h.line.line,
            };
            if better {
                found = Some((history.clone(), i));
            }
        }
    }
    if ids.len() > 1 {
        return Err(Found::Missing(format!(
            "the commit prefix '{prefix}' is ambiguous ({} commits)",
            ids.len()
        )));
    }
    found.ok_or_else(|| Found::Missing(format!("no commit starting with '{prefix}' on any line")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_suffixes_parse() {
        assert_eq!(split_back("main~2"), Some(("main", 2)));
        assert_eq!(split_back("main~"), Some(("main", 1)));
        assert_eq!(split_back("round-2"), Some(("round-2", 0)));
        assert_eq!(split_back("main~x"), None);
    }

    #[test]
    fn bare_selectors_are_recognised() {
        assert!(is_selector("round-2"));
        assert!(is_selector("round-2/critic"));
        assert!(is_selector("synthesis"));
        assert!(!is_selector("cost"));
    }
}
