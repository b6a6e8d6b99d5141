//! Putting a line back on disk from the record: resuming a line that stopped for any reason,
//! and branching a new line from a past moment of a debate.
//!
//! Both are folds over the recorded phases: the state comes from the chosen commit's
//! `state.md`, the transcript is rebuilt from its responses, and the prompt is rendered in
//! full, because the session that picks the line up does not hold the debate in its context.

use gix::ObjectId;

use crate::error::{DebateError, Refusal};
use crate::fsutil;
use crate::home::{Home, LineRef};
use crate::line::transaction::{self, Change, Options, Plan, Transcript};
use crate::model::machine;
use crate::model::markers;
use crate::model::state::{Role, State, Status};
use crate::record::schema::{PhaseFile, phase_file};
use crate::record::store::Record;
use crate::review::history::{self, HistoryError};
use crate::review::revision::Resolved;

/// A line put back on disk, ready for a Claude session.
#[derive(Debug, Clone)]
pub struct Restored {
    pub line: LineRef,
    pub state: State,
    /// The full prompt for the phase that is out.
    pub prompt: String,
    /// The session it is bound to; `None` when it waits for the next session to claim it.
    pub session: Option<String>,
    /// The commit the line stands at.
    pub commit: ObjectId,
    /// What the person is told about the steering (what was redacted), if anything.
    pub note: Option<String>,
}

/// Restores `line`'s live files (state and transcript) from its tip in the record and
/// binds it to `session`, or offers it to the next session that stops. The session is not
/// marked as informed, so the hook keeps sending it the whole debate until it has seen it.
/// A damaged state file is moved aside and rebuilt.
pub fn resume(
    home: &Home,
    record: &Record,
    line: &LineRef,
    session: Option<&str>,
) -> Result<Restored, DebateError> {
    if record.tip(&line.debate, &line.line)?.is_none() {
        return Err(HistoryError::NoLine(line.clone()).into());
    }
    let options = Options {
        rebuild: true,
        ..Options::default()
    };
    let done = transaction::run(home, line, options, |current| {
        let mut state = current.state()?;
        if state.progress.status.is_over() {
            return Err(Refusal::NothingToResume {
                line: line.clone(),
                status: state.progress.status,
            }
            .into());
        }
        let transcript = fsutil::read_optional(&home.transcript_path(line))
            .map_err(|source| DebateError::Io {
                what: "cannot read",
                path: home.transcript_path(line),
                source,
            })?
            .unwrap_or_default();
        state.session = session.map(str::to_owned);
        let prompt = full_prompt(home, &state, &transcript)?;
        Ok(Plan::Live(Box::new(state.clone()), (state, prompt)))
    })?;
    crate::line::transaction::print_notes(&done.notes);
    let (state, prompt) = done.value;
    bind(home, line, session)?;
    Ok(Restored {
        line: line.clone(),
        state,
        prompt,
        session: session.map(str::to_owned),
        commit: done.tip.expect("the line exists"),
        note: None,
    })
}

/// What `anvil branch` creates.
#[derive(Debug, Clone)]
pub struct Branch<'a> {
    pub from: &'a Resolved,
    pub steer: &'a str,
    /// The new line's name; derived from the steering when `None`.
    pub name: Option<&'a str>,
    pub session: Option<&'a str>,
}

/// Creates a line that continues from `from` as if the human had steered with `steer` at the
/// pause after that point: its first commit has the chosen commit as parent, and the phase
/// that is out is the next round's first phase, carrying the steering.
pub fn branch(home: &Home, record: &Record, req: Branch<'_>) -> Result<Restored, DebateError> {
    let from = req.from;
    let entry = from.entry();
    let base = history::state_at(record, entry.commit)?;
    if base.progress.status.is_over() {
        return Err(Refusal::BranchFromEnd {
            at: from.canonical(),
            line: from.history.line.clone(),
            status: base.progress.status,
            round: entry.meta.round,
        }
        .into());
    }
    let steer = req.steer.trim();
    if steer.is_empty() {
        return Err(Refusal::EmptyBranchSteering.into());
    }
    // The branch's steering enters anvil here: cleaned before the line is named after it.
    let mut intake = crate::model::secrets::Intake::new(home.root());
    let steer = intake.clean("the branch's steering", steer);
    let steer = steer.as_ref();
    let debate_id = from.history.line.debate.clone();
    let name = match req.name {
        Some(n) => n.to_owned(),
        None => free_name(record, &debate_id, steer)?,
    };
    if !crate::record::store::valid_name(&name) {
        return Err(Refusal::BadName(name).into());
    }
    let line = LineRef::new(&debate_id, &name);
    if record.tip(&debate_id, &name)?.is_some() {
        return Err(Refusal::NameTaken(line).into());
    }

    let mut progress = base.progress.clone();
    progress.status = Status::Active;
    let ends = markers::ends_debate(steer);
    if ends {
        progress.phase = Role::Synthesizer;
        progress.steering = Vec::new();
        progress.ended_early = true;
    } else {
        if progress.phase == Role::InteractivePause {
            // The pause is where this steering would have been given: go on past it.
            progress.phase = machine::start(&base.setup).1.role;
            progress.round += 1;
        }
        progress.steering = vec![steer.to_owned()];
    }
    let now = crate::clock::now();
    let from_name = from
        .canonical()
        .trim_start_matches(&format!("{}@", from.history.line.debate))
        .to_owned();
    let mut state = base.clone();
    state.line = name.clone();
    state.session = req.session.map(str::to_owned);
    state.informed_session = None;
    state.last_response = None;
    state.aside_response = None;
    state.branched_from = Some(format!("{}@{}", from.history.line.line, entry.commit));
    state.tip = None;
    state.created = now.to_string();
    state.updated = now.to_string();
    state.progress = progress;

    let transcript = history::transcript(record, &from.history, from.index, &state)?;
    let prompt = full_prompt(home, &state, &transcript)?;
    let cue = machine::current_cue(&state.setup, &state.progress);
    let step = state.progress.step + 1;
    let prompt_path = phase_file(step, cue.role.name(), PhaseFile::Prompt);
    // The prompt that was out at the branch point is not this line's future.
    let stale = phase_file(step, base.progress.phase.name(), PhaseFile::Prompt);
    // The new line is created under its own lock: two `anvil branch` with one name make one
    // line, and the other is told it exists.
    let done = transaction::run(home, &line, Options::default(), |current| {
        if current.tip.is_some() {
            return Err(Refusal::NameTaken(line.clone()).into());
        }
        let subject = format!(
            "branch {name} from {from_name}: {}",
            crate::model::state::first_line(steer)
        );
        let mut change = Change::bookkeeping(state.clone(), "branch", subject);
        change.meta.round = entry.meta.round;
        change.meta.branched_from = Some(from_name.clone());
        change.meta.steering = vec![steer.to_owned()];
        change.meta.session = req.session.map(str::to_owned);
        change.meta.next = Some(cue.role.name().to_owned());
        change.files = vec![(prompt_path.clone(), prompt.clone().into_bytes())];
        if stale != prompt_path {
            change.remove = vec![stale.clone()];
        }
        change.fork = Some(entry.commit);
        change.transcript = Transcript::Replace(transcript.clone());
        Ok(Plan::Record(Box::new(change), ()))
    })?;
    let note = intake.note();
    let mut notes = done.notes;
    notes.extend(note.clone());
    crate::line::transaction::print_notes(&notes);
    bind(home, &line, req.session)?;
    Ok(Restored {
        line,
        state,
        prompt,
        session: req.session.map(str::to_owned),
        commit: done.tip.expect("a new line has a commit"),
        note,
    })
}

/// A line name from the first words of the steering, numbered if it is taken.
fn free_name(record: &Record, debate: &str, steer: &str) -> Result<String, DebateError> {
    let words: Vec<String> = steer
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !matches!(w.as_str(), "a" | "an" | "the" | "on" | "of" | "to" | "and"))
        .take(3)
        .collect();
    let base = if words.is_empty() {
        "branch".to_owned()
    } else {
        words.join("-")
    };
    let mut name = base.clone();
    let mut n = 2;
    while record.tip(debate, &name)?.is_some() || name == "main" {
        name = format!("{base}-{n}");
        n += 1;
    }
    Ok(name)
}

fn full_prompt(home: &Home, state: &State, transcript: &str) -> Result<String, DebateError> {
    let cue = machine::current_cue(&state.setup, &state.progress);
    crate::line::stop::render_prompt(home, state, &cue, true, transcript)
}

/// Binds `line` to `session` alone, or offers it to the next session that stops.
fn bind(home: &Home, line: &LineRef, session: Option<&str>) -> Result<(), DebateError> {
    let io = |source| DebateError::Io {
        what: "cannot bind a session in",
        path: home.root().to_owned(),
        source,
    };
    for other in home.sessions_of(line).map_err(io)? {
        if Some(other.as_str()) != session {
            home.unbind(&other).map_err(io)?;
        }
    }
    match session {
        Some(s) => {
            home.remove_pending(line).map_err(io)?;
            home.bind(s, line).map_err(io)
        }
        None => home.add_pending(line).map_err(io),
    }
}
