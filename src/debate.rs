//! Carrying out what the machine decides: creating a line, recording a turn ([`stop`]),
//! re-issuing the prompt that is out, steering, cancelling. Each is one
//! [`transaction`](crate::transaction): the record first, the live files after.

use std::path::PathBuf;

use gix::ObjectId;

use crate::commit::Meta;
use crate::home::{Home, LineRef, Queued};
use crate::machine::{self, Cue, Finished, Next, Turn};
use crate::prompt::{PhaseContext, PromptError, Prompts};
use crate::record::RecordError;
use crate::state::{FORMAT, Role, Setup, State, StateError, Status};
use crate::transaction::{self, Change, Current, Options, Plan, Transcript};
use crate::{fsutil, transcript};

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
        pending_steering: Vec::new(),
        steering_taken: 0,
        tip: None,
        created: stamp.clone(),
        updated: stamp,
        setup,
        progress,
    };
    if !state.setup.inputs.is_empty() {
        let bundle = crate::context::bundle_path(home, &state.debate);
        fsutil::write_atomic(&bundle, inputs.material.bundle.as_bytes())
            .map_err(io("cannot write", &bundle))?;
    }
    let prompt = render_prompt(home, &state, &cue, true, "")?;
    let done = transaction::run(home, &line, Options::default(), |current| {
        if current.tip.is_some() {
            return Err(DebateError::Invalid(format!(
                "{line} exists already; try again"
            )));
        }
        let subject = format!("start: {}", crate::state::first_line(&state.setup.question));
        let mut change = Change::bookkeeping(state.clone(), "start", subject);
        change.meta.round = 0;
        change.meta.session = session.map(str::to_owned);
        change.meta.next = Some(cue.role.name().into());
        change.files = std::iter::once((
            phase_file(1, cue.role, PhaseFile::Prompt),
            prompt.clone().into_bytes(),
        ))
        .chain(inputs.material.files.iter().cloned())
        .collect();
        change.transcript = Transcript::Replace(transcript::header(&state));
        Ok(Plan::Record(Box::new(change), ()))
    })?;
    match session {
        Some(s) => home.bind(s, &line),
        None => home.add_pending(&line),
    }
    .map_err(io("cannot bind the session for", home.root()))?;
    Ok(Started {
        line,
        state,
        prompt,
        commit: done.tip.expect("a new line has a commit"),
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
    /// Let Claude stop, saying this: a question waits for the human, or steering came too late.
    Message { notice: String },
    /// Nothing to say: the line is over, and Claude stops as it would without anvil.
    Silent,
}

impl Reply {
    /// Adds notes (a leftover lock removed, …) to what the user is shown.
    fn with_notes(self, notes: &[String]) -> Reply {
        if notes.is_empty() {
            return self;
        }
        let add = |notice: String| {
            let mut n = notice;
            for note in notes {
                if !n.is_empty() {
                    n.push('\n');
                }
                n.push_str(&format!("anvil: note: {note}"));
            }
            n
        };
        match self {
            Reply::Block { prompt, notice } => Reply::Block {
                prompt,
                notice: add(notice),
            },
            Reply::Finish { notice } => Reply::Finish {
                notice: add(notice),
            },
            Reply::Pause { notice } => Reply::Pause {
                notice: add(notice),
            },
            Reply::Message { notice } => Reply::Message {
                notice: add(notice),
            },
            Reply::Silent => Reply::Message {
                notice: add(String::new()),
            },
        }
    }
}

/// One stop of a Claude session that drives a line, as the Stop hook sees it.
#[derive(Debug, Clone, Copy)]
pub struct Stop<'a> {
    pub session: &'a str,
    /// The text of the turn that just ended, if it had one.
    pub text: Option<&'a str>,
    /// The session claimed the line at this stop (it was waiting for a session).
    pub claimed: bool,
    /// The session has seen the line's prompt (always, unless it has just claimed the line).
    pub seen: bool,
    /// The model, tokens and duration of the turn, when the transcript tells them.
    pub provenance: Option<&'a crate::provenance::Provenance>,
}

/// Handles one stop of `line`'s session: records the turn's text as the phase that is out
/// and hands out the next one, or hands the prompt that is out again (a repeat, a turn with
/// no text, a session new to the line). This is where a phase is recorded.
pub fn stop(home: &Home, line: &LineRef, stop: Stop<'_>) -> Result<Reply, DebateError> {
    let response_id = stop.text.map(blob_id);
    let done = transaction::run(
        home,
        line,
        Options {
            patience: std::time::Duration::from_secs(5),
            ..Options::default()
        },
        |current| decide_stop(home, current, stop, response_id.as_deref()),
    )?;
    if !matches!(done.value, Reply::Block { .. } | Reply::Pause { .. })
        && transaction::view(home, line).is_ok_and(|s| s.progress.status.is_over())
    {
        // The line is over: this session drives nothing now (a binding a cancel raced with
        // is dropped here too).
        home.unbind(stop.session)
            .map_err(io("cannot unbind the session in", home.root()))?;
    }
    Ok(done.value.with_notes(&done.notes))
}

/// Records `text` as the phase that is out on `line` (for `anvil run`, which answers the
/// interactive pauses itself). A text that is already recorded is answered as before.
pub fn record_turn(
    home: &Home,
    line: &LineRef,
    session: &str,
    text: &str,
) -> Result<Reply, DebateError> {
    stop(
        home,
        line,
        Stop {
            session,
            text: Some(text),
            claimed: false,
            seen: true,
            provenance: None,
        },
    )
}

/// The git blob id of `text`: how a response is known again when it is delivered twice.
fn blob_id(text: &str) -> String {
    gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        text.as_bytes(),
    )
    .expect("SHA-1 hashing cannot fail")
    .to_string()
}

fn decide_stop(
    home: &Home,
    current: &Current<'_>,
    stop: Stop<'_>,
    response_id: Option<&str>,
) -> Result<Plan<Reply>, DebateError> {
    let mut state = current.state()?;
    let line = current.line;
    match state.progress.status {
        Status::Active => {}
        Status::WaitingForInput => {
            // A debater asked the human something; the debate moves once it is answered.
            let question = state.question.as_ref().map_or("", |q| q.text.as_str());
            return Ok(Plan::Keep(Reply::Message {
                notice: format!(
                    "anvil: {line} waits for your answer to: {question}\nAnswer with `anvil answer \"…\"`, then type `continue` here."
                ),
            }));
        }
        Status::Done | Status::Cancelled => {
            let late = undelivered(home, line, &state)?;
            if !late.is_empty() {
                return Ok(Plan::Keep(Reply::Message {
                    notice: late_steering_notice(line, &state, &late),
                }));
            }
            if state.progress.status == Status::Done
                && response_id.is_some()
                && state.last_response.as_deref() == response_id
            {
                // The synthesis delivered again: answered as the first time.
                return Ok(Plan::Keep(finish_reply(home, line, &state)));
            }
            return Ok(Plan::Keep(Reply::Silent));
        }
    }
    let (Some(text), Some(response_id), true) = (stop.text, response_id, stop.seen) else {
        // A session that never saw the debate, or a turn with no text: hand out the prompt.
        return reissue(home, current, state, stop.session);
    };
    if state.last_response.as_deref() == Some(response_id) {
        // The same turn again (a second hook, a transcript that lags, a redelivery after a
        // writer died): answered as before, recorded once.
        return reissue(home, current, state, stop.session);
    }
    if stop.claimed {
        // The session answered the first prompt it was given: it holds the debate.
        state.informed_session = Some(stop.session.to_owned());
    }
    let session = stop.session;
    // Steering queued since the last stop; the synthesis takes none (nothing follows it),
    // so what waits then is left in the queue and reported.
    let queued: Vec<Queued> = if state.progress.phase == Role::Synthesizer {
        Vec::new()
    } else {
        waiting_steering(home, line, &state)?
    };
    let pending = if state.progress.phase == Role::Synthesizer {
        Vec::new()
    } else {
        std::mem::take(&mut state.pending_steering)
    };
    let queued_texts: Vec<String> = pending
        .into_iter()
        .chain(queued.iter().map(|q| q.text.clone()))
        .collect();
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
    state.last_response = Some(response_id.to_owned());
    state.session = Some(session.to_owned());
    state.informed_session = Some(session.to_owned());
    state.updated = now().to_string();
    if let Some(last) = queued.last() {
        state.steering_taken = state.steering_taken.max(last.number);
    }

    let finished = &outcome.finished;
    let mut meta = Meta {
        debate: state.debate.clone(),
        line: state.line.clone(),
        phase: finished.role.name().into(),
        round: finished.round,
        step: Some(step),
        session: Some(session.to_owned()),
        voice: finished.voice.clone(),
        steering: finished.steering.clone(),
        complete: finished.markers.complete,
        response: Some(response_id.to_owned()),
        next: Some(match &outcome.next {
            Next::Prompt(cue) => cue.role.name().into(),
            Next::Finish => "done".into(),
        }),
        ..Meta::default()
    };
    if let Some(provenance) = stop.provenance {
        provenance.write_to(&mut meta);
    }
    let reply = match prompt {
        Some(prompt) if state.headless && state.progress.phase == Role::InteractivePause => {
            // `anvil run` asks the human itself: Claude stops until it has the answer.
            let _ = prompt;
            Reply::Pause {
                notice: format!(
                    "anvil: {line} pauses for steering after round {}",
                    state.progress.round
                ),
            }
        }
        Some(prompt) => Reply::Block {
            notice: progress_notice(&state),
            prompt,
        },
        None => {
            let mut reply = finish_reply(home, line, &state);
            let late = undelivered(home, line, &state)?;
            if let (Reply::Finish { notice }, false) = (&mut reply, late.is_empty()) {
                notice.push('\n');
                notice.push_str(&late_steering_notice(line, &state, &late));
            }
            reply
        }
    };
    let change = Change {
        author: finished
            .voice
            .clone()
            .unwrap_or_else(|| finished.role.title().to_owned()),
        subject: subject(finished, text),
        meta,
        files,
        remove: Vec::new(),
        fork: None,
        transcript: Transcript::Append(section),
        report: outcome.next == Next::Finish,
        state,
    };
    Ok(Plan::Record(Box::new(change), reply))
}

fn finish_reply(home: &Home, line: &LineRef, state: &State) -> Reply {
    Reply::Finish {
        notice: format!(
            "anvil: debate {line} is done; report: {}",
            crate::report::output_path(home, state).display()
        ),
    }
}

/// Steering in the queue that the line has not taken yet, oldest first.
fn waiting_steering(
    home: &Home,
    line: &LineRef,
    state: &State,
) -> Result<Vec<Queued>, DebateError> {
    Ok(home
        .queued_steering(line)
        .map_err(io("cannot read queued steering of", home.line_dir(line)))?
        .into_iter()
        .filter(|q| q.number > state.steering_taken)
        .collect())
}

/// Steering that can no longer be delivered: the line finished or was cancelled with it in
/// the queue (written by something that did not take the line's lock). It stays on disk.
fn undelivered(home: &Home, line: &LineRef, state: &State) -> Result<Vec<Queued>, DebateError> {
    if state.progress.status == Status::Active && state.progress.phase != Role::Synthesizer {
        return Ok(Vec::new());
    }
    waiting_steering(home, line, state)
}

fn late_steering_notice(line: &LineRef, state: &State, late: &[Queued]) -> String {
    let texts: Vec<String> = late
        .iter()
        .map(|q| {
            format!(
                "\"{}\" ({})",
                crate::state::first_line(&q.text),
                q.path.display()
            )
        })
        .collect();
    format!(
        "anvil: steering for {line} came after the debate's last phase began and was not delivered: {}. Branch from a round to use it: `anvil branch --from {}:round-{} --steer \"…\"`.",
        texts.join(", "),
        line.line,
        state.progress.round
    )
}

/// Hands `session` the prompt that is out again, in full if the session has not seen the
/// debate, and binds the line to it.
fn reissue(
    home: &Home,
    current: &Current<'_>,
    mut state: State,
    session: &str,
) -> Result<Plan<Reply>, DebateError> {
    let informed = state.informed_session.as_deref() == Some(session);
    let cue = machine::current_cue(&state.setup, &state.progress);
    // The prompt that is out, as the record holds it; in full for a session that has not seen
    // the debate.
    let recorded = match (informed, current.tip) {
        (true, Some(tip)) => current.record.read(
            tip,
            &phase_file(state.progress.step + 1, cue.role, PhaseFile::Prompt),
        )?,
        _ => None,
    };
    let prompt = match recorded {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => render_prompt(
            home,
            &state,
            &cue,
            true,
            &read_transcript(home, current.line)?,
        )?,
    };
    let reply = Reply::Block {
        notice: progress_notice(&state),
        prompt,
    };
    if informed && state.session.as_deref() == Some(session) {
        return Ok(Plan::Keep(reply));
    }
    state.session = Some(session.to_owned());
    state.informed_session = Some(session.to_owned());
    Ok(Plan::Live(Box::new(state), reply))
}

/// `line` is driven by `anvil run`, which asks the human at the terminal at interactive
/// pauses (a fact about this machine, kept in the live state only).
pub fn drive_headless(home: &Home, line: &LineRef) -> Result<(), DebateError> {
    transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        if state.headless {
            return Ok(Plan::Keep(()));
        }
        state.headless = true;
        Ok(Plan::Live(Box::new(state), ()))
    })?;
    Ok(())
}

/// Records what the `claude -p` runs of one `anvil run` of `line` cost, once they are over
/// (done, paused for good, or failed): one bookkeeping commit with the `Anvil-Run-*`
/// trailers; the line's state stays as it is. The runs' phases were recorded by the hook
/// meanwhile, each with its own figures from the transcript.
pub fn record_run(
    home: &Home,
    line: &LineRef,
    session: &str,
    cost: &crate::provenance::RunCost,
) -> Result<(), DebateError> {
    transaction::run(home, line, Options::default(), |current| {
        let state = current.state()?;
        let subject = format!("headless run: {}", cost.summary());
        let mut change = Change::bookkeeping(state, "run", subject);
        change.meta.session = Some(session.to_owned());
        cost.write_to(&mut change.meta);
        Ok(Plan::Record(Box::new(change), ()))
    })?;
    Ok(())
}

/// A session's context was compacted or cleared (Claude Code's SessionStart hook): it no
/// longer holds the debate, so the next prompt it gets brings it up to date in full.
pub fn forget_session(home: &Home, session: &str) -> Result<(), DebateError> {
    let Some(line) = home
        .bound_line(session)
        .map_err(io("cannot read the session binding in", home.root()))?
    else {
        return Ok(());
    };
    transaction::run(home, &line, Options::default(), |current| {
        let mut state = current.state()?;
        if state.informed_session.as_deref() != Some(session) {
            return Ok(Plan::Keep(()));
        }
        state.informed_session = None;
        Ok(Plan::Live(Box::new(state), ()))
    })?;
    Ok(())
}

/// Ends a line for good: recorded, unbound, and no longer offered to sessions. Once this
/// returns, no hook records anything more on the line.
pub fn cancel(home: &Home, line: &LineRef, reason: &str) -> Result<State, DebateError> {
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        if state.progress.status.is_over() {
            return Err(DebateError::Invalid(format!(
                "{line} is already {}",
                state.progress.status.name()
            )));
        }
        state.progress.status = Status::Cancelled;
        state.updated = now().to_string();
        let subject = format!("cancel at round {}", state.progress.round);
        let mut change = Change::bookkeeping(state.clone(), "cancel", subject);
        change.meta.reason = Some(reason.to_owned()).filter(|r| !r.is_empty());
        Ok(Plan::Record(Box::new(change), state))
    })?;
    print_notes(&done.notes);
    Ok(done.value)
}

/// What became of `anvil steer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steered {
    /// The steering's place in the line's queue.
    pub number: u64,
}

/// Queues steering for `line`'s next phase. Checked and queued under the line's lock, so
/// either it is refused (the line is over, or only its synthesis is left) or it reaches the
/// next prompt; it is never accepted and then lost.
pub fn steer(home: &Home, line: &LineRef, text: &str) -> Result<Steered, DebateError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DebateError::Invalid("nothing to steer with".into()));
    }
    let done = transaction::run(home, line, Options::default(), |current| {
        let state = current.state()?;
        if state.progress.status.is_over() {
            return Err(DebateError::Invalid(format!(
                "{line} is {}; there is nothing to steer",
                state.progress.status.name()
            )));
        }
        if state.progress.phase == Role::Synthesizer {
            return Err(DebateError::Invalid(format!(
                "{line} is writing its synthesis; steering can no longer reach it. Branch from a round instead: `anvil branch --from {}:round-{} --steer \"…\"`",
                line.line, state.progress.round
            )));
        }
        // Numbered after everything the line has taken or has waiting: under the lock, so
        // two `anvil steer` never take the same number.
        let queued = home
            .queued_steering(line)
            .map_err(io("cannot read queued steering of", home.line_dir(line)))?;
        let number = queued
            .iter()
            .map(|q| q.number)
            .chain([state.steering_taken])
            .max()
            .unwrap_or(0)
            + 1;
        let path = home.line_dir(line).join("steering");
        crate::fault::point("queueing steering")
            .and_then(|()| home.write_queued(line, number, text))
            .map_err(io("cannot queue steering in", path))?;
        Ok(Plan::Keep(Steered { number }))
    })?;
    print_notes(&done.notes);
    Ok(done.value)
}

/// Notes of a transaction run by a command (not the hook, which shows them to Claude's user).
pub(crate) fn print_notes(notes: &[String]) {
    for note in notes {
        eprintln!("anvil: note: {note}");
    }
}

/// All lines with live files, sorted by debate id (oldest first).
pub fn live_lines(home: &Home) -> std::io::Result<Vec<LineRef>> {
    live_lines_with_prefix(home, "")
}

/// The lines with live files whose debate id starts with `prefix`, sorted by debate id: one
/// listing of the debates folder, then only the matching debates are opened.
pub fn live_lines_with_prefix(home: &Home, prefix: &str) -> std::io::Result<Vec<LineRef>> {
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
        if !debate_name.starts_with(prefix) {
            continue;
        }
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

fn subject(finished: &Finished, text: &str) -> String {
    let gist: String = crate::state::first_line(text)
        .trim_start_matches(['#', ' ', '*', '>', '-'])
        .chars()
        .take(60)
        .collect();
    let who = match (&finished.voice, finished.role) {
        (Some(voice), _) => format!(
            "{} ({})",
            finished.role.name(),
            voice.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::{RunCost, Usd};
    use crate::testkit::line_with_debate;

    fn deliver(home: &Home, line: &LineRef, text: &str) -> Reply {
        stop(
            home,
            line,
            Stop {
                session: "s-1",
                text: Some(text),
                claimed: false,
                seen: true,
                provenance: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn a_runs_cost_is_a_commit_beside_the_phases_and_the_line_goes_on() {
        let (_dir, home, line) = line_with_debate();
        deliver(&home, &line, "The advocate's case.");
        let before = State::load(&home.state_path(&line)).unwrap();
        let cost = RunCost {
            runs: 1,
            cost: Usd { nanos: 1_500_000 },
            input_tokens: 10,
            turns: 2,
            ..RunCost::default()
        };
        record_run(&home, &line, "s-1", &cost).unwrap();
        let after = State::load(&home.state_path(&line)).unwrap();
        assert_eq!(after.progress, before.progress);
        // The text delivered again is still known as a repeat: nothing is recorded.
        assert!(matches!(
            deliver(&home, &line, "The advocate's case."),
            Reply::Block { .. }
        ));
        assert_eq!(
            State::load(&home.state_path(&line)).unwrap().progress.step,
            before.progress.step
        );
        deliver(&home, &line, "The critic's answer.");
        let record = crate::record::Record::open(&home.record_dir()).unwrap();
        let history = crate::history::LineHistory::load(&record, &line).unwrap();
        let phases: Vec<&str> = history.entries.iter().map(|e| e.phase.as_str()).collect();
        assert_eq!(phases, ["start", "advocate", "run", "critic"]);
        assert_eq!(RunCost::read_from(&history.entries[2].meta), Some(cost));
        assert_eq!(history.entries[3].step, 2);
    }
}
