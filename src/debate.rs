//! Carrying out what the machine decides: creating a line, recording a turn, re-issuing the
//! prompt that is out, cancelling. Each step touches the record first and the live files
//! after, so the record is never behind what people and the hook read.

use std::path::PathBuf;

use gix::ObjectId;

use crate::home::{Home, LineRef};
use crate::machine::{self, Cue, Finished, Next, Turn};
use crate::prompt::{PhaseContext, PromptError, Prompts};
use crate::record::{Base, NewCommit, Record, RecordError};
use crate::state::{FORMAT, Role, Setup, State, StateError, Status};
use crate::{fsutil, report, transcript};

#[derive(Debug, thiserror::Error)]
pub enum DebateError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error(transparent)]
    Machine(#[from] machine::MachineError),
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

fn io(what: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> DebateError {
    let path = path.into();
    move |source| DebateError::Io { what, path, source }
}

/// The clock: `ANVIL_NOW` (RFC 3339) pins it for reproducible tests and demos.
pub fn now() -> jiff::Timestamp {
    std::env::var("ANVIL_NOW")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(jiff::Timestamp::now)
}

/// A new debate's id: date, a slug of the question, and four hex digits.
pub fn new_id(question: &str, now: jiff::Timestamp) -> String {
    use std::hash::BuildHasher;
    let slug: String = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| w.is_ascii())
        .take(5)
        .collect::<Vec<_>>()
        .join("-");
    let mut slug: String = slug.chars().take(32).collect();
    slug.truncate(slug.trim_end_matches('-').len());
    if slug.is_empty() {
        slug.push_str("debate");
    }
    let noise = std::collections::hash_map::RandomState::new().hash_one((
        question,
        now.as_nanosecond(),
        std::process::id(),
    ));
    let date = now.strftime("%Y%m%d");
    format!("{date}-{slug}-{:04x}", noise & 0xffff)
}

pub struct Started {
    pub line: LineRef,
    pub state: State,
    pub prompt: String,
    pub commit: ObjectId,
}

/// What a debate may start with besides its setup.
#[derive(Debug, Clone, Default)]
pub struct StartInputs {
    /// The material of `setup.inputs`, gathered by [`crate::context::gather`].
    pub material: crate::context::Material,
    /// Where the report goes when `setup.output` is not set: `<dir>/<debate>.md`.
    pub output_dir: Option<PathBuf>,
}

/// Creates a debate's main line: live files, the first commit, the first prompt. With a
/// session it is bound at once; otherwise the next Claude session that stops here claims it.
pub fn start(home: &Home, setup: Setup, session: Option<&str>) -> Result<Started, DebateError> {
    start_with(home, setup, session, StartInputs::default())
}

/// [`start`], with the debate's material (recorded under `context/` in the first commit) and
/// a default report directory.
pub fn start_with(
    home: &Home,
    mut setup: Setup,
    session: Option<&str>,
    inputs: StartInputs,
) -> Result<Started, DebateError> {
    let now = now();
    let debate = new_id(&setup.question, now);
    if setup.output.is_none()
        && let Some(dir) = inputs.output_dir
    {
        setup.output = Some(dir.join(format!("{debate}.md")));
    }
    let line = LineRef::new(&debate, "main");
    let (progress, cue) = machine::start(&setup);
    let stamp = now.to_string();
    let state = State {
        format: FORMAT,
        debate,
        line: line.line.clone(),
        session: session.map(str::to_owned),
        informed_session: session.map(str::to_owned),
        last_response: None,
        branched_from: None,
        question: None,
        headless: false,
        created: stamp.clone(),
        updated: stamp,
        setup,
        progress,
    };
    let dir = home.line_dir(&line);
    if dir.exists() {
        return Err(DebateError::Invalid(format!(
            "{} already exists; try again",
            dir.display()
        )));
    }
    std::fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    if !state.setup.inputs.is_empty() {
        let bundle = crate::context::bundle_path(home, &state.debate);
        fsutil::write_atomic(&bundle, inputs.material.bundle.as_bytes())
            .map_err(io("cannot write", &bundle))?;
    }
    let header = transcript::header(&state);
    let prompt = render_prompt(home, &state, &cue, true, "")?;

    let record = Record::open_or_init(&home.record_dir())?;
    let mut trailers = trailers(&state, "start", 0, session);
    trailers.push(("Anvil-Next".into(), cue.role.name().into()));
    let commit = record.commit(&NewCommit {
        debate: state.debate.clone(),
        line: state.line.clone(),
        author: "anvil".into(),
        subject: format!("start: {}", crate::state::first_line(&state.setup.question)),
        body: String::new(),
        trailers,
        files: [
            ("state.md".into(), state.to_markdown().into_bytes()),
            (
                phase_file(1, cue.role, PhaseFile::Prompt),
                prompt.clone().into_bytes(),
            ),
        ]
        .into_iter()
        .chain(inputs.material.files)
        .collect(),
        time: now.as_second(),
        remove: Vec::new(),
        base: Base::Tip(None),
    })?;

    let transcript_path = home.transcript_path(&line);
    fsutil::write_atomic(&transcript_path, header.as_bytes())
        .map_err(io("cannot write", &transcript_path))?;
    state.save(&home.state_path(&line))?;
    match session {
        Some(s) => home.bind(s, &line),
        None => home.add_pending(&line),
    }
    .map_err(io("cannot bind the session for", home.root()))?;
    Ok(Started {
        line,
        state,
        prompt,
        commit,
    })
}

/// What the Stop hook should tell Claude.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Block the stop with this prompt; the notice is shown to the user.
    Block { prompt: String, notice: String },
    /// Let Claude stop, saying this.
    Finish { notice: String },
    /// Let Claude stop at an interactive pause: `anvil run` asks the human at the terminal.
    Pause { notice: String },
}

/// Records `text` as the phase that is out on `line` and works out what comes next.
pub fn record_turn(
    home: &Home,
    line: &LineRef,
    mut state: State,
    session: &str,
    text: &str,
) -> Result<Reply, DebateError> {
    let response_id = gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        text.as_bytes(),
    )
    .map_err(|e| DebateError::Invalid(e.to_string()))?
    .to_string();
    if state.last_response.as_deref() == Some(response_id.as_str()) {
        // The same turn again (a second hook, or a transcript that lags): answer as before.
        return reissue(home, line, state, session);
    }
    let queued = home
        .queued_steering(line)
        .map_err(io("cannot read queued steering of", home.line_dir(line)))?;
    let queued_texts: Vec<String> = queued.iter().map(|(_, t)| t.clone()).collect();
    let outcome = machine::advance(
        &state.setup,
        &state.progress,
        Turn {
            text,
            queued: &queued_texts,
        },
    )?;
    let step = outcome.progress.step;
    let section = transcript::section(&outcome.finished, text);
    let now = now();

    let mut files = vec![(
        phase_file(step, outcome.finished.role, PhaseFile::Response),
        text.as_bytes().to_vec(),
    )];
    let prompt = match &outcome.next {
        Next::Prompt(cue) => {
            let full = state.informed_session.as_deref() != Some(session);
            let transcript_text = if full {
                let mut t = read_transcript(home, line)?;
                t.push_str(&section);
                t
            } else {
                String::new()
            };
            let prompt = render_prompt(home, &state, cue, full, &transcript_text)?;
            files.push((
                phase_file(step + 1, cue.role, PhaseFile::Prompt),
                prompt.clone().into_bytes(),
            ));
            Some(prompt)
        }
        Next::Finish => None,
    };

    state.progress = outcome.progress.clone();
    state.last_response = Some(response_id);
    state.session = Some(session.to_owned());
    state.informed_session = Some(session.to_owned());
    state.updated = now.to_string();
    let state_text = state.to_markdown();
    files.insert(0, ("state.md".into(), state_text.clone().into_bytes()));

    let record = Record::open_or_init(&home.record_dir())?;
    let parent = record.tip(&state.debate, &state.line)?;
    let mut trailers = trailers(
        &state,
        outcome.finished.role.name(),
        outcome.finished.round,
        Some(session),
    );
    if let Some(voice) = &outcome.finished.voice {
        trailers.push(("Anvil-Voice".into(), voice.clone()));
    }
    for s in &outcome.finished.steering {
        trailers.push(("Anvil-Steering".into(), s.clone()));
    }
    if outcome.finished.markers.complete {
        trailers.push(("Anvil-Complete".into(), "yes".into()));
    }
    let next_name = match &outcome.next {
        Next::Prompt(cue) => cue.role.name(),
        Next::Finish => "done",
    };
    trailers.push(("Anvil-Next".into(), next_name.into()));
    record.commit(&NewCommit {
        debate: state.debate.clone(),
        line: state.line.clone(),
        author: outcome
            .finished
            .voice
            .clone()
            .unwrap_or_else(|| outcome.finished.role.title().to_owned()),
        subject: subject(&outcome.finished, text),
        body: String::new(),
        trailers,
        files,
        remove: Vec::new(),
        time: now.as_second(),
        base: Base::Tip(parent),
    })?;

    let transcript_path = home.transcript_path(line);
    transcript::append(&transcript_path, &section)
        .map_err(io("cannot append to", &transcript_path))?;
    let state_path = home.state_path(line);
    fsutil::write_atomic(&state_path, state_text.as_bytes())
        .map_err(io("cannot write", &state_path))?;
    for (path, _) in &queued {
        crate::home::remove_if_present(path).map_err(io("cannot remove", path))?;
    }
    match prompt {
        Some(prompt) => {
            if state.headless && state.progress.phase == Role::InteractivePause {
                // `anvil run` asks the human itself: Claude stops until it has the answer.
                return Ok(Reply::Pause {
                    notice: format!(
                        "anvil: {line} pauses for steering after round {}",
                        state.progress.round
                    ),
                });
            }
            Ok(Reply::Block {
                notice: progress_notice(&state),
                prompt,
            })
        }
        None => {
            let report = report::output_path(home, &state);
            report::write(&report, &state, &read_transcript(home, line)?)
                .map_err(io("cannot write the report", report.clone()))?;
            home.unbind(session)
                .map_err(io("cannot unbind the session in", home.root()))?;
            Ok(Reply::Finish {
                notice: format!("anvil: debate {line} is done; report: {}", report.display()),
            })
        }
    }
}

/// Hands `session` the prompt that is out again, in full if the session has not seen the
/// debate, and binds the line to it.
pub fn reissue(
    home: &Home,
    line: &LineRef,
    mut state: State,
    session: &str,
) -> Result<Reply, DebateError> {
    // The prompt that is out, as the record holds it; in full for a session that has not seen
    // the debate.
    let informed = state.informed_session.as_deref() == Some(session);
    let cue = machine::current_cue(&state.setup, &state.progress);
    let recorded = if informed {
        let record = Record::open_or_init(&home.record_dir())?;
        match record.tip(&line.debate, &line.line)? {
            Some(tip) => record.read(
                tip,
                &phase_file(state.progress.step + 1, cue.role, PhaseFile::Prompt),
            )?,
            None => None,
        }
    } else {
        None
    };
    let prompt = match recorded {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => render_prompt(home, &state, &cue, true, &read_transcript(home, line)?)?,
    };
    if !informed || state.session.as_deref() != Some(session) {
        state.session = Some(session.to_owned());
        state.informed_session = Some(session.to_owned());
        state.save(&home.state_path(line))?;
    }
    Ok(Reply::Block {
        notice: progress_notice(&state),
        prompt,
    })
}

/// Ends a line for good: recorded, unbound, and no longer offered to sessions.
pub fn cancel(home: &Home, line: &LineRef, reason: &str) -> Result<State, DebateError> {
    let state_path = home.state_path(line);
    let mut state = State::load(&state_path)?;
    if state.progress.status.is_over() {
        return Err(DebateError::Invalid(format!(
            "{line} is already {}",
            state.progress.status.name()
        )));
    }
    state.progress.status = Status::Cancelled;
    let mut extra = Vec::new();
    if !reason.is_empty() {
        extra.push(("Anvil-Reason".to_owned(), reason.to_owned()));
    }
    let subject = format!("cancel at round {}", state.progress.round);
    commit_state(home, line, &mut state, "cancel", &subject, extra)?;
    home.remove_pending(line)
        .map_err(io("cannot remove pending", home.root()))?;
    for session in home
        .sessions_of(line)
        .map_err(io("cannot read sessions in", home.root()))?
    {
        home.unbind(&session)
            .map_err(io("cannot unbind", home.root()))?;
    }
    Ok(state)
}

/// Records a change of the state alone (no phase): a commit with the new `state.md` on the
/// line, then the live state file. `state.updated` is set to now.
pub fn commit_state(
    home: &Home,
    line: &LineRef,
    state: &mut State,
    phase: &str,
    subject: &str,
    extra_trailers: Vec<(String, String)>,
) -> Result<(), DebateError> {
    let now = now();
    state.updated = now.to_string();
    let record = Record::open_or_init(&home.record_dir())?;
    let parent = record.tip(&line.debate, &line.line)?;
    let mut trailers = trailers(state, phase, state.progress.round, None);
    trailers.extend(extra_trailers);
    let text = state.to_markdown();
    record.commit(&NewCommit {
        debate: line.debate.clone(),
        line: line.line.clone(),
        author: "anvil".into(),
        subject: subject.to_owned(),
        body: String::new(),
        trailers,
        files: vec![("state.md".into(), text.clone().into_bytes())],
        remove: Vec::new(),
        time: now.as_second(),
        base: Base::Tip(parent),
    })?;
    let path = home.state_path(line);
    fsutil::write_atomic(&path, text.as_bytes()).map_err(io("cannot write", &path))
}

/// All lines with live files, sorted by debate id (oldest first).
pub fn live_lines(home: &Home) -> std::io::Result<Vec<LineRef>> {
    let mut out = Vec::new();
    let debates = match std::fs::read_dir(home.debates_dir()) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for debate in debates {
        let debate = debate?;
        let Ok(debate_name) = debate.file_name().into_string() else {
            continue;
        };
        for line in std::fs::read_dir(debate.path())? {
            let line = line?;
            if let Ok(line_name) = line.file_name().into_string()
                && line.path().join("state.md").is_file()
            {
                out.push(LineRef::new(&debate_name, line_name));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The prompt for `cue` on the line `state` describes, rendered as the hook renders it;
/// `transcript` is the debate so far when `full` is set. For commands that rebuild a line.
pub fn render_prompt(
    home: &Home,
    state: &State,
    cue: &Cue,
    full: bool,
    transcript: &str,
) -> Result<String, DebateError> {
    let prompts = Prompts::new(Some(home.prompts_dir()));
    let line = LineRef::new(&state.debate, &state.line);
    let mut ctx = PhaseContext::new(
        state,
        cue,
        full,
        transcript.to_owned(),
        &home.transcript_path(&line),
    );
    if !state.setup.inputs.is_empty() {
        // The material travels in full prompts only; later ones point to the file.
        let path = crate::context::bundle_path(home, &state.debate);
        let text = if full {
            fsutil::read_optional(&path).map_err(io("cannot read", &path))?
        } else {
            None
        };
        ctx = ctx.with_context(&path, text);
    }
    Ok(prompts.render_phase(&ctx)?)
}

fn read_transcript(home: &Home, line: &LineRef) -> Result<String, DebateError> {
    let path = home.transcript_path(line);
    Ok(fsutil::read_optional(&path)
        .map_err(io("cannot read", &path))?
        .unwrap_or_default())
}

/// The two files a phase leaves in the record: the prompt that asked for it and the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseFile {
    Prompt,
    Response,
}

/// `003-critic.response.md`: numbered so that a tree listing reads in order, and at the tree's
/// root, next to `state.md`, so that a commit writes one tree and no more.
pub fn phase_file(step: u32, role: Role, file: PhaseFile) -> String {
    let kind = match file {
        PhaseFile::Prompt => "prompt",
        PhaseFile::Response => "response",
    };
    format!("{step:03}-{}.{kind}.md", role.name())
}

fn trailers(
    state: &State,
    phase: &str,
    round: u32,
    session: Option<&str>,
) -> Vec<(String, String)> {
    let mut t = vec![
        ("Anvil-Debate".to_owned(), state.debate.clone()),
        ("Anvil-Line".to_owned(), state.line.clone()),
        ("Anvil-Phase".to_owned(), phase.to_owned()),
        ("Anvil-Round".to_owned(), round.to_string()),
    ];
    if let Some(s) = session {
        t.push(("Anvil-Session".to_owned(), s.to_owned()));
    }
    t
}

fn subject(finished: &Finished, text: &str) -> String {
    let gist: String = crate::state::first_line(text)
        .trim_start_matches(['#', ' ', '*', '>', '-'])
        .chars()
        .take(60)
        .collect();
    let who = match (&finished.voice, finished.role) {
        (Some(voice), _) => format!("{} ({voice})", finished.role.name()),
        (None, role) => role.name().to_owned(),
    };
    match finished.role {
        Role::Synthesizer => format!("synthesis: {gist}"),
        _ => format!("round {} {who}: {gist}", finished.round),
    }
}

/// A one-line status shown to the user between phases.
pub fn progress_notice(state: &State) -> String {
    format!(
        "anvil {}@{}: {}",
        state.debate,
        state.line,
        state.standing()
    )
}
