//! Revision names: how every command points at a moment of a debate.
//!
//! ```text
//! round-2                 end of round 2 on the current line (round-0 is the start)
//! round-2/advocate        one phase inside a round
//! synthesis               the current line's synthesis
//! cost, DEBATE@cost       the tip of a line
//! cost:round-2            a name on another line of the current debate
//! DEBATE@LINE:round-2     … of any debate (any name of it: see [`crate::review::names`])
//! LINE~1, round-3~1       one commit further back along the line
//! 3f2a9c1                 a commit id prefix (at least 4 hex digits)
//! ```
//!
//! A name resolves to an entry of a line's history, so the caller gets the line it was
//! resolved on as well as the commit.

use crate::home::LineRef;
use crate::record::store::{Record, valid_name};
use crate::review::history::{HistoryError, LineHistory};
use crate::review::names::{self, NameError, Named, Questions};

#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error("'{name}': {message}")]
    Unknown { name: String, message: String },
    /// The debate part of the name matched several debates (newest id first).
    #[error("'{name}' names {} debates", named.debates.len())]
    Ambiguous { name: String, named: Named },
    #[error(transparent)]
    Name(NameError),
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
    pub fn entry(&self) -> &crate::review::history::Entry {
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
/// A debate is named by its id, its number or a prefix of the id, or by words of its id;
/// [`resolve_with`] adds words of its question.
pub fn resolve(
    record: &Record,
    name: &str,
    current: Option<&LineRef>,
) -> Result<Resolved, RevisionError> {
    resolve_with(record, name, current, None)
}

/// [`resolve`], with `questions` to find a debate by words of its question (see
/// [`crate::review::names`]).
pub fn resolve_with(
    record: &Record,
    name: &str,
    current: Option<&LineRef>,
    questions: Option<&dyn Questions>,
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
        Some(target) => find_target(record, target, current, questions).map_err(|e| match e {
            Found::Error(e) => e,
            Found::Missing(m) => unknown(m),
            Found::Several { name, named } => RevisionError::Ambiguous { name, named },
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

/// Is `text` a name of a moment of the current line (`round-2`, `round-2/critic`,
/// `synthesis`, `start`, `tip`), perhaps with `~K`, rather than of a line, a debate or a
/// commit?
pub fn is_bare(text: &str) -> bool {
    split_back(text.trim()).is_some_and(|(body, _)| is_selector(body))
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
                Some((n, role)) => history
                    .phase_in_round(n.parse().ok()?, crate::review::history::role_named(role)?),
                None => history.round_end(rest.parse().ok()?),
            }
        }
    }
}

enum Found {
    Error(RevisionError),
    Missing(String),
    /// `name`, the debate part of a revision, matched several debates.
    Several {
        name: String,
        named: Named,
    },
}

impl From<NameError> for Found {
    fn from(e: NameError) -> Found {
        match e {
            NameError::Record(e) => e.into(),
            e @ NameError::Search(_) => Found::Error(RevisionError::Name(e)),
        }
    }
}

impl From<HistoryError> for Found {
    fn from(e: HistoryError) -> Found {
        Found::Error(e.into())
    }
}

impl From<crate::record::store::RecordError> for Found {
    fn from(e: crate::record::store::RecordError) -> Found {
        Found::Error(HistoryError::from(e).into())
    }
}

/// A line (its tip) or a commit, by `DEBATE@LINE`, `LINE`, `DEBATE` or an id prefix. Only
/// the refs of the debates the name can mean are read, never a listing of every line; the
/// words of an id or a question are looked for last, after a commit id.
fn find_target(
    record: &Record,
    target: &str,
    current: Option<&LineRef>,
    questions: Option<&dyn Questions>,
) -> Result<(LineHistory, usize), Found> {
    let tip_of = |line: LineRef| -> Result<(LineHistory, usize), Found> {
        let history = LineHistory::load(record, &line)?;
        let index = history.entries.len() - 1;
        Ok((history, index))
    };
    let line_list = |debate: &str| -> Result<String, Found> {
        Ok(record
            .lines_of_debate(debate)?
            .into_iter()
            .map(|(l, _)| l)
            .collect::<Vec<_>>()
            .join(", "))
    };
    let has_line = |debate: &str, line: &str| -> Result<bool, Found> {
        Ok(valid_name(debate) && valid_name(line) && record.tip(debate, line)?.is_some())
    };
    if let Some((debate, line)) = target.split_once('@') {
        let debate = match_debate(record, debate, questions)?;
        let line = if line.is_empty() { "main" } else { line };
        if !has_line(&debate, line)? {
            return Err(Found::Missing(format!(
                "debate {debate} has no line '{line}'; its lines: {}",
                line_list(&debate)?
            )));
        }
        return tip_of(LineRef::new(debate, line));
    }
    if let Some(current) = current
        && has_line(&current.debate, target)?
    {
        return tip_of(LineRef::new(&current.debate, target));
    }
    let named = names::by_id(record, target)?;
    if named.rule.is_some() {
        return tip_of(LineRef::new(one_of(target, named)?, "main"));
    }
    if target.len() >= 4 && target.chars().all(|c| c.is_ascii_hexdigit()) {
        match find_commit(record, &target.to_ascii_lowercase()) {
            Err(Found::Missing(_)) => {}
            found => return found,
        }
    }
    let named = names::by_words(record, target, questions)?;
    if named.rule.is_some() {
        return tip_of(LineRef::new(one_of(target, named)?, "main"));
    }
    let mut message = format!("no line, debate or commit named '{target}'");
    if let Some(current) = current {
        message.push_str(&format!(
            "; lines of {}: {}",
            current.debate,
            line_list(&current.debate)?
        ));
    }
    Err(Found::Missing(message))
}

/// The one debate `name` names (see [`crate::review::names`]).
fn match_debate(
    record: &Record,
    name: &str,
    questions: Option<&dyn Questions>,
) -> Result<String, Found> {
    let named = names::debates(record, name, questions)?;
    if named.rule.is_none() {
        return Err(Found::Missing(format!("no debate '{name}' in the record")));
    }
    one_of(name, named)
}

/// The debate of a name that matched one; several are [`Found::Several`].
fn one_of(name: &str, named: Named) -> Result<String, Found> {
    match named.one() {
        Some(one) => Ok(one.to_owned()),
        None => Err(Found::Several {
            name: name.to_owned(),
            named,
        }),
    }
}

/// Finds the commit whose id starts with `prefix`, on the line that wrote it (its trailers
/// name it) or, failing that, on another line of its debate that holds it.
fn find_commit(record: &Record, prefix: &str) -> Result<(LineHistory, usize), Found> {
    let ids = record.commits_with_prefix(prefix)?;
    let id = match ids.as_slice() {
        [one] => *one,
        [] => {
            return Err(Found::Missing(format!(
                "no commit starting with '{prefix}' on any line"
            )));
        }
        many => {
            return Err(Found::Missing(format!(
                "the commit prefix '{prefix}' is ambiguous ({} commits)",
                many.len()
            )));
        }
    };
    let entry = crate::review::history::read_entry(record, id)?;
    let debate = entry.meta.debate.clone();
    let mut lines: Vec<String> = record
        .lines_of_debate(&debate)?
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    // The line that wrote it first, then the others (a line branched off later inherits it).
    lines.sort_by_key(|l| *l != entry.meta.line);
    for line in lines {
        let history = LineHistory::load(record, &LineRef::new(&debate, &line))?;
        if let Some(i) = history.entries.iter().position(|e| e.commit == id) {
            return Ok((history, i));
        }
    }
    Err(Found::Missing(format!(
        "commit {id} is on no line of the record"
    )))
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

    mod properties {
        use super::*;
        use crate::home::Home;
        use proptest::prelude::*;

        const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";

        /// A record with one debate: three phases recorded on `main`, and a branch `cost` from
        /// round 1. Built once: the properties only read it.
        fn fixture() -> &'static (tempfile::TempDir, Home, LineRef) {
            static FIXTURE: std::sync::OnceLock<(tempfile::TempDir, Home, LineRef)> =
                std::sync::OnceLock::new();
            FIXTURE.get_or_init(|| {
                let (dir, home, line) = crate::testkit::Debate::new()
                    .rounds(3)
                    .session(SESSION)
                    .phases(&["ADVOCATE one", "CRITIC one", "ADVOCATE two"])
                    .start();
                let record = Record::open(&home.record_dir()).unwrap();
                let from = resolve(&record, "round-1", Some(&line)).unwrap();
                crate::line::restore::branch(
                    &home,
                    &record,
                    crate::line::restore::Branch {
                        from: &from,
                        steer: "focus on cost",
                        name: Some("cost"),
                        session: None,
                    },
                )
                .unwrap();
                (dir, home, line)
            })
        }

        /// Names built from the grammar: targets, selectors and `~K`, valid or not.
        fn grammar_name() -> impl Strategy<Value = String> {
            let target = prop_oneof![
                Just(String::new()),
                Just("main".to_owned()),
                Just("cost".to_owned()),
                Just("nope".to_owned()),
                "[0-9]{8}-q-[0-9a-f]{0,4}".prop_map(|d| format!("{d}@main")),
                "[0-9a-f]{1,12}",
            ];
            let selector = prop_oneof![
                Just(None),
                (0u32..6).prop_map(|n| Some(format!("round-{n}"))),
                (
                    0u32..6,
                    prop_oneof![Just("advocate"), Just("critic"), Just("persona")]
                )
                    .prop_map(|(n, r)| Some(format!("round-{n}/{r}"))),
                Just(Some("synthesis".to_owned())),
            ];
            let back = prop_oneof![
                Just(String::new()),
                (0u32..12).prop_map(|k| format!("~{k}"))
            ];
            (target, selector, back).prop_map(|(t, s, b)| match s {
                Some(s) if t.is_empty() => format!("{s}{b}"),
                Some(s) => format!("{t}:{s}{b}"),
                None => format!("{t}{b}"),
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(2048)))]

            /// Any text as a revision name: an answer or an error that names it, never a panic;
            /// what resolves is a commit of the line it names.
            #[test]
            fn any_text_resolves_or_is_refused_by_name(
                name in prop_oneof![".{0,40}", grammar_name()],
            ) {
                let (_dir, home, line) = fixture();
                let record = Record::open(&home.record_dir()).unwrap();
                match resolve(&record, &name, Some(line)) {
                    Ok(found) => prop_assert!(found.index < found.history.entries.len()),
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                }
            }

            /// What a resolved name prints as (`canonical`) names the same commit again.
            #[test]
            fn canonical_names_round_trip(name in grammar_name()) {
                let (_dir, home, line) = fixture();
                let record = Record::open(&home.record_dir()).unwrap();
                if let Ok(found) = resolve(&record, &name, Some(line)) {
                    let again = resolve(&record, &found.canonical(), Some(line)).unwrap();
                    prop_assert_eq!(again.entry().commit, found.entry().commit);
                }
            }
        }
    }
}
