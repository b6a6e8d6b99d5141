//! Putting a line back on disk from the record: resuming a line that stopped for any reason,
//! and branching a new line from a past moment of a debate.
//!
//! Both are folds over the recorded phases: the state comes from the chosen commit's
//! `state.md`, the transcript is rebuilt from its responses, and the prompt is rendered in
//! full, because the session that picks the line up does not hold the debate in its context.

use gix::ObjectId;

use crate::debate::{self, DebateError, PhaseFile};
use crate::history::{self, HistoryError, LineHistory};
use crate::home::{Home, LineRef};
use crate::machine;
use crate::record::{Base, NewCommit, Record};
use crate::revision::Resolved;
use crate::state::{Role, State, Status};
use crate::{fsutil, markers};

impl From<HistoryError> for DebateError {
    fn from(e: HistoryError) -> DebateError {
        match e {
            HistoryError::Record(e) => DebateError::Record(e),
            HistoryError::State(e) => DebateError::State(e),
            other => DebateError::Invalid(other.to_string()),
        }
    }
}

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
}

/// Restores `line`'s live files (state and transcript) from its tip in the record and
/// binds it to `session`, or offers it to the next session that stops. The session is not
/// marked as informed, so the hook keeps sending it the whole debate until it has seen it.
pub fn resume(
    home: &Home,
    record: &Record,
    line: &LineRef,
    session: Option<&str>,
) -> Result<Restored, DebateError> {
    let history = LineHistory::load(record, line)?;
    let last = history.entries.len() - 1;
    let mut state = history::state_at(record, history.tip)?;
    if state.progress.status.is_over() {
        return Err(DebateError::Invalid(format!(
            "{line} is {}; nothing to resume (branch from it with `anvil branch --from {}:round-N`)",
            state.progress.status.name(),
            line.line
        )));
    }
    // A line pulled from a remote may stand under another name than it was recorded with.
    state.line = line.line.clone();
    let transcript = history::transcript(record, &history, last, &state)?;
    state.session = session.map(str::to_owned);
    let prompt = full_prompt(home, &state, &transcript)?;
    write_live(home, line, &state, &transcript)?;
    bind(home, line, session)?;
    Ok(Restored {
        line: line.clone(),
        state,
        prompt,
        session: session.map(str::to_owned),
        commit: history.tip,
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
        return Err(DebateError::Invalid(format!(
            "{} is where {} ended ({}); branch from a round before it, e.g. {}:round-{}",
            from.canonical(),
            from.history.line,
            base.progress.status.name(),
            from.history.line.line,
            entry.round
        )));
    }
    let steer = req.steer.trim();
    if steer.is_empty() {
        return Err(DebateError::Invalid("--steer needs some text".into()));
    }
    let debate_id = from.history.line.debate.clone();
    let name = match req.name {
        Some(n) => n.to_owned(),
        None => free_name(record, &debate_id, steer)?,
    };
    if !crate::record::valid_name(&name) {
        return Err(DebateError::Invalid(format!(
            "'{name}' cannot name a line (letters, digits, '-', '_' and '.')"
        )));
    }
    let line = LineRef::new(&debate_id, &name);
    if record.tip(&debate_id, &name)?.is_some() || home.line_dir(&line).exists() {
        return Err(DebateError::Invalid(format!(
            "{line} exists already; pick another --name"
        )));
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
    let now = debate::now();
    let from_name = from
        .canonical()
        .trim_start_matches(&format!("{}@", from.history.line.debate))
        .to_owned();
    let mut state = base.clone();
    state.line = name.clone();
    state.session = req.session.map(str::to_owned);
    state.informed_session = None;
    state.last_response = None;
    state.branched_from = Some(format!("{}@{}", from.history.line.line, entry.commit));
    state.created = now.to_string();
    state.updated = now.to_string();
    state.progress = progress;

    let transcript = history::transcript(record, &from.history, from.index, &state)?;
    let prompt = full_prompt(home, &state, &transcript)?;
    let cue = machine::current_cue(&state.setup, &state.progress);
    let step = state.progress.step + 1;
    let prompt_path = debate::phase_file(step, cue.role, PhaseFile::Prompt);
    // The prompt that was out at the branch point is not this line's future.
    let stale = debate::phase_file(step, base.progress.phase, PhaseFile::Prompt);
    let mut trailers = vec![
        ("Anvil-Debate".to_owned(), debate_id.clone()),
        ("Anvil-Line".to_owned(), name.clone()),
        ("Anvil-Phase".to_owned(), "branch".to_owned()),
        ("Anvil-Round".to_owned(), entry.round.to_string()),
        ("Anvil-Branched-From".to_owned(), from_name.clone()),
        ("Anvil-Steering".to_owned(), steer.to_owned()),
    ];
    if let Some(s) = req.session {
        trailers.push(("Anvil-Session".to_owned(), s.to_owned()));
    }
    trailers.push(("Anvil-Next".to_owned(), cue.role.name().to_owned()));
    let commit = record.commit(&NewCommit {
        debate: debate_id.clone(),
        line: name.clone(),
        author: "anvil".into(),
        subject: format!(
            "branch {name} from {from_name}: {}",
            crate::state::first_line(steer)
        ),
        body: String::new(),
        trailers,
        files: vec![
            ("state.md".into(), state.to_markdown().into_bytes()),
            (prompt_path.clone(), prompt.clone().into_bytes()),
        ],
        remove: if stale == prompt_path {
            Vec::new()
        } else {
            vec![stale]
        },
        time: now.as_second(),
        base: Base::Fork(entry.commit),
    })?;
    write_live(home, &line, &state, &transcript)?;
    bind(home, &line, req.session)?;
    Ok(Restored {
        line,
        state,
        prompt,
        session: req.session.map(str::to_owned),
        commit,
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
    debate::render_prompt(home, state, &cue, true, transcript)
}

/// Puts a line's live files (transcript, then state) on disk.
fn write_live(
    home: &Home,
    line: &LineRef,
    state: &State,
    transcript: &str,
) -> Result<(), DebateError> {
    let path = home.transcript_path(line);
    fsutil::write_atomic(&path, transcript.as_bytes()).map_err(|source| DebateError::Io {
        what: "cannot write",
        path: path.clone(),
        source,
    })?;
    state.save(&home.state_path(line))?;
    crate::active::mark(home, line).map_err(|source| DebateError::Io {
        what: "cannot write the active index in",
        path: home.root().to_owned(),
        source,
    })?;
    Ok(())
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
