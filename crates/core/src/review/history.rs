//! A line's recorded history, read back from the record.
//!
//! The record is the append-only log of a debate: one commit per phase transition, each with
//! `Anvil-*` trailers and a tree holding `state.md` and `NNN-role.{prompt,response}.md`.
//! Everything that looks back — log, show, diff, branch, resume, replay, report — is a fold over
//! the entries this module reads, so they all agree on what happened.
//!
//! A line's history is its tip's first-parent chain down to the debate's start, so a branched
//! line includes the phases it inherited from the line it was branched from.

use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::home::LineRef;
use crate::model::machine::Finished;
use crate::model::secrets;
use crate::model::state::{Role, State, StateError};
use crate::record::schema::{Meta, PhaseFile, phase_file};
use crate::record::store::{Record, RecordError};

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("there is no line {0} in the record")]
    NoLine(LineRef),
    #[error("commit {0} in the record is damaged: {1}")]
    Damaged(ObjectId, String),
}

/// One recorded commit of a line: what its trailers say, decoded once ([`Meta`]), and what
/// only the commit itself or its place in the chain tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub commit: ObjectId,
    pub parent: Option<ObjectId>,
    /// The role whose turn this commit records (from `meta.phase`); `None` for bookkeeping
    /// commits (start, branch, cancel, ask, answer, …).
    pub role: Option<Role>,
    /// Phases recorded on the line up to and including this commit; numbers the files `NNN-…`.
    pub step: u32,
    pub author: String,
    pub subject: String,
    /// Seconds since the epoch.
    pub time: i64,
    /// Everything the commit's trailers say. `meta.line` is the line that wrote the commit: an
    /// entry a branch inherited names the line it was recorded on.
    pub meta: Meta,
}

impl Entry {
    /// Where this phase's response sits in the commit's tree.
    pub(crate) fn response_path(&self) -> Option<String> {
        self.role
            .map(|role| phase_file(self.step, role.name(), PhaseFile::Response))
    }

    /// Where the prompt that asked for this phase sits.
    pub(crate) fn prompt_path(&self) -> Option<String> {
        self.role
            .map(|role| phase_file(self.step, role.name(), PhaseFile::Prompt))
    }

    /// How the transcript titles this entry: `Round 2 · Critic`, `Synthesis`, `Start`, …
    pub fn heading(&self) -> String {
        match self.role {
            Some(role) => {
                crate::model::transcript::heading(role, self.meta.round, self.meta.voice.as_deref())
            }
            None => {
                let mut name = self.meta.phase.clone();
                if let Some(first) = name.get_mut(0..1) {
                    first.make_ascii_uppercase();
                }
                name
            }
        }
    }

    /// A bookkeeping commit (start, branch, cancel, ask, answer, …) in words, for people; the
    /// terminal and the web room show the same text, each escaped for its medium.
    pub fn describe(&self) -> String {
        let meta = &self.meta;
        let mut text = match (meta.phase.as_str(), &meta.question) {
            ("ask", Some(question)) if meta.answer.is_none() => {
                format!("A debater asked: {question}")
            }
            ("answer", _) => format!(
                "The human answered: {}",
                meta.answer.as_deref().unwrap_or_default()
            ),
            ("branch", _) => format!(
                "Branched from {} with the steering: {}",
                meta.branched_from.as_deref().unwrap_or("?"),
                meta.steering.first().map_or("", String::as_str)
            ),
            ("adr", _) => format!(
                "Decision record written: {}",
                meta.decision_record.as_deref().unwrap_or("?")
            ),
            ("cancel", _) => match &meta.reason {
                Some(reason) => format!("Cancelled: {reason}"),
                None => "Cancelled.".to_owned(),
            },
            _ => self.subject.clone(),
        };
        if let Some(next) = meta.next.as_deref().filter(|_| meta.phase != "cancel") {
            text.push_str(&format!("\nNext: {next}"));
        }
        text
    }

    /// The subject without its `round N role:` prefix: the gist of the text.
    pub fn gist(&self) -> &str {
        match self.subject.split_once(": ") {
            Some((_, gist)) => gist,
            None => &self.subject,
        }
    }

    /// Did this debating phase close its round (the last debating phase with its number)?
    pub(crate) fn is_debating(&self) -> bool {
        self.role.is_some_and(Role::is_debating)
    }
}

/// A line's history, oldest entry first.
#[derive(Debug, Clone)]
pub struct LineHistory {
    pub line: LineRef,
    pub tip: ObjectId,
    pub entries: Vec<Entry>,
}

impl LineHistory {
    /// Reads `debate@line` from the record.
    pub fn load(record: &Record, line: &LineRef) -> Result<LineHistory, HistoryError> {
        let tip = record
            .tip(&line.debate, &line.line)?
            .ok_or_else(|| HistoryError::NoLine(line.clone()))?;
        LineHistory::at(record, line, tip)
    }

    /// Reads `line`'s history as it was when it stood at `tip`.
    pub fn at(record: &Record, line: &LineRef, tip: ObjectId) -> Result<LineHistory, HistoryError> {
        Ok(LineHistory {
            line: line.clone(),
            tip,
            entries: chain(record, tip)?,
        })
    }

    /// The commit that ends round `n`: the last debating phase of that round; round 0 is the
    /// start of the debate.
    pub fn round_end(&self, n: u32) -> Option<usize> {
        if n == 0 {
            return (!self.entries.is_empty()).then_some(0);
        }
        self.entries
            .iter()
            .rposition(|e| e.is_debating() && e.meta.round == n)
    }

    /// The phase of `role` in round `n`.
    pub(crate) fn phase_in_round(&self, n: u32, role: Role) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| e.role == Some(role) && e.meta.round == n)
    }

    /// The index of the line's synthesis phase, if it has one: where its conclusion is (see
    /// [`conclusion`]).
    pub fn synthesis(&self) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| e.role == Some(Role::Synthesizer))
    }

    /// Rounds with at least one recorded debating phase.
    pub fn rounds(&self) -> Vec<u32> {
        let mut rounds: Vec<u32> = self
            .entries
            .iter()
            .filter(|e| e.is_debating())
            .map(|e| e.meta.round)
            .collect();
        rounds.dedup();
        rounds
    }

    /// The index of the first entry this line wrote itself; entries before it are inherited
    /// from the line it was branched from. `None` when the line wrote nothing of its own.
    pub fn own_start(&self) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.meta.line == self.line.line)
    }

    /// The entries that close a round or finish the line, as `(name, index)`: what a revision
    /// can name on this line.
    pub fn names(&self) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        if !self.entries.is_empty() {
            out.push(("round-0".to_owned(), 0));
        }
        for round in self.rounds() {
            if let Some(i) = self.round_end(round) {
                out.push((format!("round-{round}"), i));
            }
        }
        if let Some(i) = self.synthesis() {
            out.push(("synthesis".to_owned(), i));
        }
        out
    }

    /// The entries of the round that `index` belongs to, up to and including it: for a round's
    /// end, its debating phases; for a synthesis or a single phase, just that one.
    pub(crate) fn round_of(&self, index: usize) -> Vec<usize> {
        let entry = &self.entries[index];
        if !entry.is_debating() {
            return vec![index];
        }
        (0..=index)
            .filter(|&i| {
                self.entries[i].is_debating() && self.entries[i].meta.round == entry.meta.round
            })
            .collect()
    }
}

/// The state file as it was at `commit`, its free texts cleaned of credentials (see
/// [`read_text`]).
pub fn state_at(record: &Record, commit: ObjectId) -> Result<State, HistoryError> {
    let bytes = record
        .read(commit, crate::record::schema::STATE_FILE)?
        .ok_or_else(|| HistoryError::Damaged(commit, "no state.md in its tree".into()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut state =
        State::from_markdown(&text, std::path::Path::new(&format!("{commit}:state.md")))?;
    secrets::read_back_all(
        record.path(),
        state.free_texts_mut().into_iter().map(|(_, t)| t),
    );
    Ok(state)
}

/// Where a line stood at `commit`: the progress of its `state.md`, read by itself
/// ([`State::progress_from_markdown`]) and cleaned as [`state_at`] cleans it. The line's
/// transaction compares it with the live state at every stop, at a cost that does not grow
/// with the debate.
pub fn progress_at(
    record: &Record,
    commit: ObjectId,
) -> Result<crate::model::state::Progress, HistoryError> {
    let bytes = record
        .read(commit, "state.md")?
        .ok_or_else(|| HistoryError::Damaged(commit, "no state.md in its tree".into()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut progress =
        State::progress_from_markdown(&text, std::path::Path::new(&format!("{commit}:state.md")))?;
    secrets::read_back_all(record.path(), progress.steering.iter_mut());
    Ok(progress)
}

/// Why `tip` cannot stand as a line's tip, if it cannot: it must be a commit with a readable
/// `state.md`, on a first-parent chain of commits anvil can read (checked before a line from
/// a remote enters the record, so that one foreign ref never breaks the readers).
pub(crate) fn check_line(record: &Record, tip: ObjectId) -> Result<(), String> {
    let kind = record.object_kind(tip).map_err(|e| e.to_string())?;
    if kind != gix::objs::Kind::Commit {
        return Err(format!("it points at a {kind}, not at a commit"));
    }
    state_at(record, tip).map_err(|e| match e {
        HistoryError::Damaged(_, why) => format!("commit {tip} is not anvil's: {why}"),
        e => format!("commit {tip} is not anvil's: {e}"),
    })?;
    let mut next = Some(tip);
    while let Some(id) = next {
        next = read_entry(record, id).map_err(|e| e.to_string())?.parent;
    }
    Ok(())
}

/// The state of `line` at `commit`: [`state_at`], named after the line it stands on. A line
/// pulled from a remote may stand under another name than the one it was recorded with.
pub fn line_state(
    record: &Record,
    line: &LineRef,
    commit: ObjectId,
) -> Result<State, HistoryError> {
    let mut state = state_at(record, commit)?;
    state.line = line.line.clone();
    Ok(state)
}

/// A file of `commit`'s tree as text, cleaned of credentials. What anvil recorded is clean
/// already; a commit pulled from a teammate, recorded by an older anvil or written with git
/// may not be, and everything that reads the record back (live files rebuilt from it, reports,
/// the search index, `show`, the web room) reads it through here. A state file is cleaned as
/// data and written again, never edited as text; `[secrets] redact = false` reads it as it is.
pub fn read_text(
    record: &Record,
    commit: ObjectId,
    path: &str,
) -> Result<Option<String>, HistoryError> {
    let Some(bytes) = record.read(commit, path)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if path == crate::record::schema::STATE_FILE
        && secrets::needs_cleaning(record.path(), &text)
        && let Ok(state) = state_at(record, commit)
    {
        return Ok(Some(state.to_markdown()));
    }
    // Any other file; or a state file anvil cannot read, which is shown, never parsed again.
    Ok(Some(secrets::read_back(record.path(), text)))
}

/// The response recorded by `entry`, if it records a phase.
pub fn response(record: &Record, entry: &Entry) -> Result<Option<String>, HistoryError> {
    match entry.response_path() {
        Some(path) => read_text(record, entry.commit, &path),
        None => Ok(None),
    }
}

/// The conclusion of `history`'s line: its synthesis phase and the text that phase recorded;
/// `None` for a line without one (cancelled before it, or still running). Only the record's
/// synthesis phase says what a line concluded: a heading in a debater's text says nothing.
pub fn conclusion<'h>(
    record: &Record,
    history: &'h LineHistory,
) -> Result<Option<(&'h Entry, String)>, HistoryError> {
    let Some(entry) = history.synthesis().map(|i| &history.entries[i]) else {
        return Ok(None);
    };
    Ok(Some((entry, response(record, entry)?.unwrap_or_default())))
}

/// The prompt that asked for `entry`'s phase (it was written by the commit before).
pub fn prompt(record: &Record, entry: &Entry) -> Result<Option<String>, HistoryError> {
    match entry.prompt_path() {
        Some(path) => read_text(record, entry.commit, &path),
        None => Ok(None),
    }
}

/// The transcript of `history` up to and including entry `upto`, as `transcript.md` would
/// read, headed for the line `state` describes.
pub fn transcript(
    record: &Record,
    history: &LineHistory,
    upto: usize,
    state: &State,
) -> Result<String, HistoryError> {
    let mut out = crate::model::transcript::header(state);
    out.push_str(&sections(record, history, upto)?);
    Ok(out)
}

/// The transcript's sections of `history` up to and including entry `upto`: one per recorded
/// phase, without the title block.
pub fn sections(
    record: &Record,
    history: &LineHistory,
    upto: usize,
) -> Result<String, HistoryError> {
    let mut out = String::new();
    for entry in &history.entries[..=upto] {
        let Some(role) = entry.role else { continue };
        let text = response(record, entry)?.unwrap_or_default();
        let finished = Finished {
            role,
            round: entry.meta.round,
            voice: entry.meta.voice.clone(),
            markers: Default::default(),
            steering: entry.meta.steering.clone(),
        };
        let played_by = crate::model::provenance::Provenance::read_from(&entry.meta)
            .and_then(|p| p.played_by());
        out.push_str(&crate::model::transcript::section(
            &finished,
            &text,
            played_by.as_deref(),
        ));
        out.push_str(&crate::model::transcript::notes_of(&entry.meta));
    }
    Ok(out)
}

/// The first-parent chain ending at `tip`, oldest first, with steps counted along it.
pub fn chain(record: &Record, tip: ObjectId) -> Result<Vec<Entry>, HistoryError> {
    let mut entries = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next {
        let entry = read_entry(record, id)?;
        next = entry.parent;
        entries.push(entry);
    }
    entries.reverse();
    let mut step = 0;
    for entry in &mut entries {
        if entry.role.is_some() {
            step += 1;
        }
        entry.step = step;
    }
    Ok(entries)
}

/// Reads one commit: its parent, author, time and trailers. `step` is left at 0; [`chain`]
/// fills it in.
pub(crate) fn read_entry(record: &Record, id: ObjectId) -> Result<Entry, HistoryError> {
    let damaged = |e: &dyn std::fmt::Display| HistoryError::Damaged(id, e.to_string());
    let mut buf = Vec::new();
    let decoded = record.find_commit(id, &mut buf).map_err(|e| damaged(&e))?;
    let parent = decoded.parents().next();
    let author = decoded.author().map_err(|e| damaged(&e))?;
    let time = author.seconds();
    let author_name = author.name.to_str_lossy().into_owned();
    let (subject, meta) = crate::record::schema::parse(&decoded.message.to_str_lossy());
    let mut entry = Entry {
        commit: id,
        parent,
        role: role_named(&meta.phase),
        step: 0,
        author: author_name,
        subject,
        time,
        meta,
    };
    // The words people and debaters wrote, cleaned as the files are (see [`read_text`]).
    let meta = &mut entry.meta;
    secrets::read_back_all(
        record.path(),
        [&mut entry.subject, &mut entry.author]
            .into_iter()
            .chain(meta.voice.iter_mut())
            .chain(meta.steering.iter_mut())
            .chain(meta.question.iter_mut())
            .chain(meta.answer.iter_mut())
            .chain(meta.reason.iter_mut())
            .chain(meta.other.iter_mut().map(|(_, value)| value)),
    );
    Ok(entry)
}

/// The role a phase name stands for.
pub(crate) fn role_named(name: &str) -> Option<Role> {
    Role::ALL.into_iter().find(|r| r.name() == name)
}

/// The lines of one debate in the record, `main` first.
pub fn lines_of(record: &Record, debate: &str) -> Result<Vec<(String, ObjectId)>, HistoryError> {
    let mut lines = record.lines_of_debate(debate)?;
    lines.sort_by_key(|(l, _)| (l != "main", l.clone()));
    Ok(lines)
}

/// Every debate among the lines the caller has listed, with the time of its newest commit,
/// newest first.
pub fn debates_newest_first_of(
    record: &Record,
    all: &[(String, String, ObjectId)],
) -> Result<Vec<(String, i64)>, HistoryError> {
    let mut newest: std::collections::BTreeMap<String, i64> = Default::default();
    let mut times = record.commit_times();
    for (debate, _, tip) in all.iter().cloned() {
        let time = times.of(tip)?;
        let slot = newest.entry(debate).or_insert(time);
        *slot = (*slot).max(time);
    }
    let mut out: Vec<(String, i64)> = newest.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    Ok(out)
}

/// Every line of `debate` anvil can read, `main` first (see [`load_debate_checked`] for the
/// others).
pub fn load_debate(record: &Record, debate: &str) -> Result<Vec<LineHistory>, HistoryError> {
    Ok(load_debate_checked(record, debate)?.0)
}

/// A line whose ref names something anvil cannot read as a debate: a commit without a
/// `state.md`, a blob, a tree, a tag (written into the record by git, or pulled before pulls
/// checked what they take). Readers show it marked; `anvil doctor --fix` sets it aside.
#[derive(Debug, Clone)]
pub struct DamagedLine {
    pub line: LineRef,
    pub tip: ObjectId,
    pub why: String,
}

/// Every line of `debate`, `main` first: those anvil can read, and those it cannot. An object
/// not found at this moment (a maintenance moving it) is an error, not damage.
pub fn load_debate_checked(
    record: &Record,
    debate: &str,
) -> Result<(Vec<LineHistory>, Vec<DamagedLine>), HistoryError> {
    let mut lines = record.lines_of_debate(debate)?;
    lines.sort_by_key(|(l, _)| (*l != "main", l.to_string()));
    let (mut sound, mut damaged) = (Vec::new(), Vec::new());
    for (line, tip) in lines {
        let line = LineRef::new(debate, line);
        let read = chain(record, tip).and_then(|entries| {
            state_at(record, tip)?;
            Ok(entries)
        });
        match read {
            Ok(entries) => sound.push(LineHistory { line, tip, entries }),
            Err(HistoryError::Record(e @ RecordError::Missing { .. })) => return Err(e.into()),
            Err(e) => damaged.push(DamagedLine {
                line,
                tip,
                why: match record.object_kind(tip) {
                    Ok(kind) if kind != gix::objs::Kind::Commit => {
                        format!("its ref points at a {kind}, not at a commit")
                    }
                    _ => e.to_string(),
                },
            }),
        }
    }
    Ok((sound, damaged))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names_round_trip() {
        for role in [Role::Advocate, Role::InteractivePause, Role::Synthesizer] {
            assert_eq!(role_named(role.name()), Some(role));
        }
        assert_eq!(role_named("start"), None);
    }

    fn bookkeeping(phase: &str, subject: &str, meta: Meta) -> Entry {
        Entry {
            commit: ObjectId::null(gix::hash::Kind::Sha1),
            parent: None,
            role: role_named(phase),
            step: 0,
            author: "anvil".into(),
            subject: subject.into(),
            time: 0,
            meta: Meta {
                phase: phase.into(),
                ..meta
            },
        }
    }

    #[test]
    fn bookkeeping_commits_are_told_in_words_from_their_trailers() {
        let cases = [
            (
                bookkeeping(
                    "ask",
                    "ask: Budget?",
                    Meta {
                        question: Some("Budget?".into()),
                        ..Meta::default()
                    },
                ),
                "A debater asked: Budget?",
            ),
            (
                bookkeeping("ask", "ask: no answer in time", Meta::default()),
                "ask: no answer in time",
            ),
            (
                bookkeeping(
                    "answer",
                    "answer: 40k",
                    Meta {
                        question: Some("Budget?".into()),
                        answer: Some("40k".into()),
                        ..Meta::default()
                    },
                ),
                "The human answered: 40k",
            ),
            (
                bookkeeping(
                    "branch",
                    "branch cost from main:round-1: x",
                    Meta {
                        branched_from: Some("main:round-1".into()),
                        steering: vec!["Think of cost.".into()],
                        next: Some("advocate".into()),
                        ..Meta::default()
                    },
                ),
                "Branched from main:round-1 with the steering: Think of cost.\nNext: advocate",
            ),
            (
                bookkeeping(
                    "cancel",
                    "cancel at round 2",
                    Meta {
                        reason: Some("enough".into()),
                        ..Meta::default()
                    },
                ),
                "Cancelled: enough",
            ),
            (
                bookkeeping("cancel", "cancel at round 2", Meta::default()),
                "Cancelled.",
            ),
            (
                bookkeeping(
                    "start",
                    "start: Q?",
                    Meta {
                        next: Some("advocate".into()),
                        ..Meta::default()
                    },
                ),
                "start: Q?\nNext: advocate",
            ),
        ];
        for (entry, words) in cases {
            assert_eq!(entry.describe(), words, "{entry:?}");
        }
    }
}
