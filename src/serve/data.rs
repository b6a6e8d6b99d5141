//! What the web room shows, read from the record and the live files into plain values that the
//! JSON API returns as they are and the templates render.
//!
//! The record is the truth about what happened; a line's live state file says where it stands
//! now (question, queued steering). A line with no live files (pulled from a remote, say) is
//! shown from its record alone.

use std::collections::BTreeMap;

use anvil_core::home::{Home, LineRef};
use anvil_core::model::state::{Role, State, Status};
use anvil_core::record::store::Record;
use anvil_core::review::history::{self, LineHistory};
use serde::Serialize;

use super::error::ApiError;

/// One debate in the list.
#[derive(Debug, Clone, Serialize)]
pub struct DebateSummary {
    pub id: String,
    pub question: String,
    pub mode: String,
    /// `running`, `paused`, `waiting`, `done` or `cancelled`: how the debate as a whole stands.
    pub status: String,
    pub lines: usize,
    /// The furthest round any line reached.
    pub rounds: u32,
    /// Seconds since the epoch of the newest commit.
    pub last_activity: i64,
}

/// One debate in full.
#[derive(Debug, Clone, Serialize)]
pub struct DebateView {
    pub id: String,
    pub question: String,
    pub mode: String,
    pub status: String,
    pub lines: Vec<LineView>,
    /// Earlier conclusions the debate was given when it started.
    pub recalled: Vec<RecalledView>,
}

/// An earlier conclusion recalled at the start of a debate.
#[derive(Debug, Clone, Serialize)]
pub struct RecalledView {
    pub debate: String,
    pub line: String,
    pub commit: String,
    pub question: String,
}

/// One phase that matched a search of the whole record.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    #[serde(flatten)]
    pub hit: crate::memory::index::Hit,
    /// The snippet, split at the matched words: even pieces plain, odd ones matched.
    pub pieces: Vec<String>,
}

/// The phases of every debate that match `query`, best first (at most 50).
pub fn search(home: &Home, query: &str) -> Result<Vec<SearchHit>, ApiError> {
    if query.trim().is_empty() {
        return Ok(Vec::new());
    }
    let dir = home.record_dir();
    if !dir.join("HEAD").is_file() {
        return Ok(Vec::new());
    }
    let record = Record::open(&dir).map_err(ApiError::internal)?;
    let index = crate::memory::index::Index::open(home, &record)
        .map_err(|e| ApiError::internal(crate::error::CliError::from(e).to_text()))?;
    let hits = index
        .search(&crate::memory::index::Query {
            text: query.to_owned(),
            limit: 50,
            ..Default::default()
        })
        .map_err(|e| match e {
            // Punctuation alone, or a query longer than a search takes: the asker's to change.
            crate::memory::index::SearchError::Query(q) => ApiError::bad_request(q.to_string()),
            e => ApiError::internal(crate::error::CliError::from(e).to_text()),
        })?;
    Ok(hits
        .into_iter()
        .map(|hit| SearchHit {
            // The snippet's markers, `memory::index::OPEN` and `CLOSE`.
            pieces: hit
                .snippet
                .split(['\u{1}', '\u{2}'])
                .map(str::to_owned)
                .collect(),
            hit,
        })
        .collect())
}

#[derive(Debug, Clone, Serialize)]
pub struct LineView {
    pub name: String,
    /// The state machine's status: `active`, `waiting_for_input`, `done`, `cancelled`.
    pub status: String,
    /// `running`, `paused`, `waiting`, `done`, `cancelled`.
    pub stage: String,
    /// In a few words: `round 2/3 · critic`, `waiting for your answer to: …`.
    pub standing: String,
    pub phase: String,
    pub round: u32,
    pub rounds: u32,
    pub session: Option<String>,
    pub branched_from: Option<BranchPoint>,
    pub question: Option<QuestionView>,
    /// Steering of this line: queued (waiting for the next stop) and delivered.
    pub steering: Vec<Steering>,
    pub phases: Vec<PhaseView>,
    /// Revision names of this line, e.g. `DEBATE@main:round-2`, for compare and branch.
    pub revisions: Vec<Revision>,
    pub tip: String,
    /// Seconds since the epoch of the line's newest commit.
    pub updated: i64,
    /// The line's last headless run (`anvil run`), if it had one.
    pub headless: Option<Headless>,
    /// The line can be run headless now: it is not over and no `anvil run` drives it.
    pub runnable: bool,
    /// Where the seats stand, when any phase stated a position.
    pub positions: Option<PositionsView>,
    /// The blind vote's result (`--vote`), once it is counted.
    pub vote: Option<VoteView>,
}

/// A line's vote for the debate page: the result as a bar chart (SVG made here), in words,
/// and each ballot in words.
#[derive(Debug, Clone, Serialize)]
pub struct VoteView {
    pub chart: String,
    pub result: String,
    pub ballots: Vec<String>,
}

/// The vote of `entries` (a line), or `None` before it is counted.
pub fn vote_view(entries: &[anvil_core::review::history::Entry], label: &str) -> Option<VoteView> {
    use anvil_core::model::vote;
    let counted = entries.iter().rev().find(|e| !e.meta.vote.is_empty())?;
    let rows: Vec<(String, u32)> = counted
        .meta
        .vote
        .iter()
        .map(|t| (t.name.clone(), t.value.parse().unwrap_or(0)))
        .collect();
    Some(VoteView {
        chart: anvil_core::review::positions::vote_svg(&rows, label),
        result: vote::result_words(&counted.meta).unwrap_or_default(),
        ballots: entries
            .iter()
            .filter(|e| e.meta.ballot.is_some())
            .flat_map(|e| {
                let mut meta = e.meta.clone();
                meta.vote.clear();
                vote::words(&meta)
            })
            .collect(),
    })
}

/// A line's positions for the debate page: the chart (SVG made here) and what it says.
#[derive(Debug, Clone, Serialize)]
pub struct PositionsView {
    /// The chart, an `<svg>` element made on the server (every text in it escaped).
    pub chart: String,
    /// Each seat's last position, `critic: mixed 0.6`.
    pub last: Vec<String>,
    pub consensus: Option<f64>,
    pub converged: Option<u32>,
    /// `--converge` acted on it.
    pub stopped: bool,
    /// What that means, in the words `log` and `show` use (`positions steady: would have
    /// stopped after round 2`); `None` when there is nothing worth saying, as when stopping
    /// would have saved nothing.
    pub steady: Option<String>,
    /// The points still open at the synthesis, and whether it mentions each.
    pub dissent: Vec<DissentView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DissentView {
    pub label: String,
    pub seat: String,
    pub text: String,
    pub missing: bool,
}

/// The positions of `entries` (a line, or its first part), or `None` when nothing stated one.
pub fn positions_view(
    entries: &[anvil_core::review::history::Entry],
    label: &str,
) -> Option<PositionsView> {
    use anvil_core::review::positions;
    let chart = positions::chart(entries);
    if chart.is_empty() {
        return None;
    }
    let synthesis = entries.iter().rev().find(|e| e.meta.phase == "synthesizer");
    let dissent = synthesis
        .map(|e| {
            e.meta
                .dissent
                .iter()
                .enumerate()
                .map(|(i, d)| DissentView {
                    label: anvil_core::model::positions::OpenPoint::label(i),
                    seat: d.seat.clone(),
                    text: d.text.clone(),
                    missing: e.meta.dissent_missing.contains(d),
                })
                .collect()
        })
        .unwrap_or_default();
    Some(PositionsView {
        last: chart
            .last()
            .iter()
            .map(|(seat, p)| format!("{seat}: {}", p.short()))
            .collect(),
        consensus: chart.consensus.map(|c| c.as_f64()),
        converged: chart.converged.map(|c| c.0),
        stopped: chart.converged.is_some_and(|c| c.1),
        steady: chart.converged.map(|(round, acted)| {
            format!("positions steady: {}", positions::stop_words(round, acted))
        }),
        dissent,
        chart: positions::svg(&chart, label),
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct Headless {
    /// `running`, `done`, `failed`, or `stopped` (its process ended without a word).
    pub state: String,
    pub pid: u32,
    /// Seconds since the epoch.
    pub started: i64,
    pub ended: Option<i64>,
    /// The report's path, or what went wrong.
    pub message: Option<String>,
    /// Its log, relative to the project (runs started by the page).
    pub log: Option<String>,
}

fn headless(run: anvil_core::line::headless::Run, running: bool) -> Headless {
    use anvil_core::line::headless::RunState;
    let state = match run.state {
        RunState::Running if running => "running",
        RunState::Running => "stopped",
        RunState::Done => "done",
        RunState::Failed => "failed",
    };
    Headless {
        state: state.to_owned(),
        pid: run.pid,
        started: run.started,
        ended: run.ended,
        message: run.message,
        log: run.log,
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Revision {
    /// `round-2`, `synthesis`.
    pub name: String,
    /// `DEBATE@LINE:round-2`.
    pub rev: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct BranchPoint {
    pub line: String,
    /// What the branch was made from, e.g. `main:round-1`.
    pub from: String,
    pub round: u32,
    pub steering: String,
    pub time: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct QuestionView {
    pub text: String,
    pub answer: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Steering {
    pub text: String,
    /// `queued` or `delivered`.
    pub state: String,
    /// The round whose prompt carried it, once delivered.
    pub round: Option<u32>,
    /// Seconds since the epoch: when it was queued (queued) or recorded (delivered).
    pub time: i64,
}

/// One recorded commit of a line: a phase (with a role) or a bookkeeping step.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseView {
    pub step: u32,
    pub commit: String,
    /// `advocate`, `critic`, …, or the bookkeeping phase (`start`, `ask`, `answer`, `branch`).
    pub phase: String,
    pub role: Option<String>,
    pub title: String,
    pub round: u32,
    pub voice: Option<String>,
    pub time: i64,
    pub steering: Vec<String>,
    /// The response for a phase; a short description for bookkeeping steps.
    pub text: String,
    /// Recorded on the line this one was branched from.
    pub inherited: bool,
    /// The revision that names this moment (`DEBATE@LINE:round-2`), when it closes a round.
    pub rev: Option<String>,
    /// Recorded a phase that has a prompt to show.
    pub has_prompt: bool,
    /// The agent that played it, when a seat did (`codex 0.169.0 (gpt-5.4)`).
    pub played_by: Option<String>,
    /// What the phase cost, when the record says (`… tokens · 5.5 s`).
    pub usage: Option<String>,
    /// A ballot (`--vote`), in words: the labels its voter saw, what was counted, and the
    /// result on the last one.
    pub vote: Vec<String>,
    /// Drafted blind within its round (`Anvil-Drafted`): the round is one moment.
    pub drafted: bool,
    /// On the first phase of a round drafted blind: the moment it opens, in words (`Round 2 ·
    /// 3 voices, drafted blind at once`).
    pub moment: Option<String>,
}

fn stage(state: &State) -> &'static str {
    match (state.progress.status, state.progress.phase) {
        (Status::WaitingForInput, _) => "waiting",
        (Status::Active, Role::InteractivePause) => "paused",
        (Status::Active, _) => "running",
        (Status::Done, _) => "done",
        (Status::Cancelled, _) => "cancelled",
    }
}

/// How a debate stands, from its lines: anything needing the human first, then anything
/// running; done once a line is done.
fn overall(stages: &[&str]) -> String {
    for s in ["waiting", "paused", "running", "done", "cancelled"] {
        if stages.contains(&s) {
            return s.to_owned();
        }
    }
    "running".to_owned()
}

/// The record, or `None` while nothing has been recorded.
pub fn record(home: &Home) -> Result<Option<Record>, ApiError> {
    let dir = home.record_dir();
    if !dir.join("HEAD").is_file() {
        return Ok(None);
    }
    Ok(Some(Record::open(&dir).map_err(ApiError::internal)?))
}

/// The record, for a request that names `names` (a debate, a line): `not_found` when a name
/// could not be one or nothing has been recorded yet.
pub fn named_record(
    home: &Home,
    names: &[&str],
    not_found: impl Fn() -> ApiError,
) -> Result<Record, ApiError> {
    if !names
        .iter()
        .all(|n| anvil_core::record::store::valid_name(n))
    {
        return Err(not_found());
    }
    record(home)?.ok_or_else(not_found)
}

/// The moment `name` names (a revision, read from `debate@main` when it names no line), 400 if
/// it names none or a moment of another debate.
pub fn moment(
    record: &Record,
    debate: &str,
    name: &str,
) -> Result<anvil_core::review::revision::Resolved, ApiError> {
    let main = LineRef::new(debate, "main");
    let r = anvil_core::review::revision::resolve(record, name, Some(&main))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    if r.history.line.debate != debate {
        return Err(ApiError::bad_request(format!(
            "'{name}' is not a moment of {debate}"
        )));
    }
    Ok(r)
}

/// The line's state: its live file when there is one, else its tip's `state.md`.
fn state_of(home: &Home, record: &Record, line: &LineRef, tip: gix::ObjectId) -> Option<State> {
    let path = home.state_path(line);
    if path.is_file()
        && let Ok(state) = State::load(&path)
    {
        return Some(state);
    }
    history::state_at(record, tip).ok()
}

/// Every debate, newest first; `query` keeps those whose id or question contains it.
pub fn debates(home: &Home, query: &str) -> Result<Vec<DebateSummary>, ApiError> {
    let Some(record) = record(home)? else {
        return Ok(Vec::new());
    };
    let all = record.lines().map_err(ApiError::internal)?;
    let newest = history::debates_newest_first_of(&record, &all).map_err(ApiError::internal)?;
    let mut by_debate: BTreeMap<&str, Vec<(&str, gix::ObjectId)>> = BTreeMap::new();
    for (d, l, tip) in &all {
        by_debate.entry(d).or_default().push((l, *tip));
    }
    let query = query.trim().to_lowercase();
    let mut out = Vec::new();
    for (id, time) in newest {
        let lines = by_debate.get(id.as_str()).cloned().unwrap_or_default();
        let states: Vec<State> = lines
            .iter()
            .filter_map(|(l, tip)| state_of(home, &record, &LineRef::new(&id, *l), *tip))
            .collect();
        let Some(first) = states.iter().find(|s| s.line == "main").or(states.first()) else {
            continue;
        };
        let question = first.setup.question.clone();
        if !query.is_empty()
            && !question.to_lowercase().contains(&query)
            && !id.to_lowercase().contains(&query)
        {
            continue;
        }
        let stages: Vec<&str> = states.iter().map(stage).collect();
        out.push(DebateSummary {
            id: id.clone(),
            mode: first.setup.mode.name().to_owned(),
            status: overall(&stages),
            lines: lines.len(),
            rounds: states.iter().map(|s| s.progress.round).max().unwrap_or(0),
            question,
            last_activity: time,
        });
    }
    Ok(out)
}

/// One debate with every line, or 404.
pub fn debate(home: &Home, id: &str) -> Result<DebateView, ApiError> {
    let not_found = || ApiError::not_found(format!("no debate '{id}'"));
    let record = named_record(home, &[id], not_found)?;
    let histories = history::load_debate(&record, id).map_err(ApiError::internal)?;
    if histories.is_empty() {
        return Err(not_found());
    }
    let mut lines = Vec::new();
    for history in &histories {
        lines.push(line_view(home, &record, history)?);
    }
    let main = histories
        .iter()
        .find(|h| h.line.line == "main")
        .unwrap_or(&histories[0]);
    let setup_state = state_of(home, &record, &main.line, main.tip)
        .ok_or_else(|| ApiError::internal("no state"))?;
    let stages: Vec<&str> = lines.iter().map(|l| l.stage.as_str()).collect();
    Ok(DebateView {
        id: id.to_owned(),
        question: setup_state.setup.question.clone(),
        mode: setup_state.setup.mode.name().to_owned(),
        status: overall(&stages),
        lines,
        recalled: setup_state
            .setup
            .inputs
            .recalled
            .iter()
            .map(|r| RecalledView {
                debate: r.line.split('@').next().unwrap_or(&r.line).to_owned(),
                line: r.line.split_once('@').map_or("main", |(_, l)| l).to_owned(),
                commit: r.commit.clone(),
                question: r.question.clone(),
            })
            .collect(),
    })
}

fn line_view(home: &Home, record: &Record, h: &LineHistory) -> Result<LineView, ApiError> {
    let line = &h.line;
    let state =
        state_of(home, record, line, h.tip).ok_or_else(|| ApiError::internal("no state"))?;
    let own = h.own_start().unwrap_or(h.entries.len());
    let names = h.names();
    let mut phases = Vec::new();
    let mut steering = Vec::new();
    for (i, entry) in h.entries.iter().enumerate() {
        if i >= own && entry.role.is_some() {
            steering.extend(delivered_steering(h, i, &state));
        }
        let rev = names
            .iter()
            .rev()
            .find(|(_, at)| *at == i)
            .map(|(n, _)| format!("{line}:{n}"));
        let mut view = phase_view(record, entry, i < own, rev)?;
        view.moment = drafted_moment(h, i);
        phases.push(view);
    }
    steering.extend(queued_steering(home, line));
    let running = anvil_core::line::headless::running(home, line);
    let headless = anvil_core::line::headless::load(home, line).map(|run| headless(run, running));
    let runnable = !state.progress.status.is_over() && home.state_path(line).is_file() && !running;
    Ok(LineView {
        headless,
        runnable,
        name: line.line.clone(),
        status: state.progress.status.name().to_owned(),
        stage: stage(&state).to_owned(),
        standing: state.standing(),
        phase: state.progress.phase.name().to_owned(),
        round: state.progress.round,
        rounds: state.setup.rounds,
        session: state.session.clone(),
        branched_from: branch_point(h, own),
        question: state.question.as_ref().map(|q| QuestionView {
            text: q.text.clone(),
            answer: q.answer.clone(),
        }),
        steering,
        phases,
        revisions: names
            .iter()
            .map(|(n, _)| Revision {
                name: n.clone(),
                rev: format!("{line}:{n}"),
            })
            .collect(),
        tip: h.tip.to_string(),
        updated: h.entries.last().map_or(0, |e| e.time),
        positions: positions_view(&h.entries, &line.line),
        vote: vote_view(&h.entries, &line.line),
    })
}

/// The moment a round drafted blind opens, on its first phase (entry `i`): how many voices
/// drafted it, at once.
fn drafted_moment(h: &LineHistory, i: usize) -> Option<String> {
    let entry = &h.entries[i];
    let round = entry.meta.round;
    let drafted = |e: &history::Entry| e.meta.drafted && e.meta.round == round;
    if !drafted(entry)
        || h.entries[..i]
            .iter()
            .rev()
            .find(|e| e.role.is_some())
            .is_some_and(drafted)
    {
        return None;
    }
    let voices = h.entries[i..]
        .iter()
        .filter(|e| e.role.is_some())
        .take_while(|e| drafted(e))
        .count();
    Some(format!(
        "Round {round} · {voices} voices, drafted blind at once: none saw another's draft of this round"
    ))
}

/// One recorded phase (or event) of a line, with its text; `inherited` when it was recorded
/// before the line branched off, `rev` the revision named at it.
fn phase_view(
    record: &Record,
    entry: &history::Entry,
    inherited: bool,
    rev: Option<String>,
) -> Result<PhaseView, ApiError> {
    let text = match entry.role {
        Some(_) => history::response(record, entry)
            .map_err(ApiError::internal)?
            .unwrap_or_default(),
        None => entry.describe(),
    };
    let provenance = anvil_core::model::provenance::Provenance::read_from(&entry.meta);
    Ok(PhaseView {
        step: entry.step,
        commit: entry.commit.to_string(),
        phase: entry.meta.phase.clone(),
        role: entry.role.map(|r| r.name().to_owned()),
        title: entry.heading(),
        round: entry.meta.round,
        voice: entry.meta.voice.clone(),
        time: entry.time,
        steering: entry.meta.steering.clone(),
        text,
        inherited,
        rev,
        has_prompt: entry.role.is_some(),
        played_by: provenance.as_ref().and_then(|p| p.played_by()),
        usage: provenance.as_ref().map(|p| p.summary()),
        vote: anvil_core::model::vote::words(&entry.meta),
        drafted: entry.meta.drafted,
        moment: None,
    })
}

/// The steering delivered with the phase at `i`, in the round of the next phase (the one it
/// steered), or the round the line stands in.
fn delivered_steering(h: &LineHistory, i: usize, state: &State) -> Vec<Steering> {
    let entry = &h.entries[i];
    let round = h.entries[i + 1..]
        .iter()
        .find(|e| e.role.is_some())
        .map_or(state.progress.round, |e| e.meta.round);
    entry
        .meta
        .steering
        .iter()
        .map(|s| Steering {
            text: s.clone(),
            state: "delivered".into(),
            round: Some(round),
            time: entry.time,
        })
        .collect()
}

/// The steering queued for the line's next phase.
fn queued_steering(home: &Home, line: &LineRef) -> Vec<Steering> {
    home.queued_steering(line)
        .into_iter()
        .flatten()
        .map(|queued| Steering {
            time: queued_time(&queued.path),
            text: queued.text,
            state: "queued".into(),
            round: None,
        })
        .collect()
}

/// Where the line branched off, when its own history begins with a branch.
fn branch_point(h: &LineHistory, own: usize) -> Option<BranchPoint> {
    h.entries
        .get(own)
        .filter(|e| e.meta.phase == "branch")
        .map(|e| BranchPoint {
            line: e
                .meta
                .branched_from
                .as_deref()
                .and_then(|f| f.split(':').next())
                .unwrap_or("main")
                .to_owned(),
            from: e.meta.branched_from.clone().unwrap_or_default(),
            round: e.meta.round,
            steering: e.meta.steering.first().cloned().unwrap_or_default(),
            time: e.time,
        })
}

/// When a steering file was queued: its modification time.
fn queued_time(path: &std::path::Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64)
}

/// The line `debate@line` if the debate has it in the record or on disk, else 404.
pub fn line_ref(home: &Home, debate: &str, line: &str) -> Result<LineRef, ApiError> {
    let not_found = || ApiError::not_found(format!("no line '{debate}@{line}'"));
    if !anvil_core::record::store::valid_name(debate)
        || !anvil_core::record::store::valid_name(line)
    {
        return Err(not_found());
    }
    let line = LineRef::new(debate, line);
    if home.state_path(&line).is_file() {
        return Ok(line);
    }
    Err(not_found())
}

/// The prompt that asked for the phase recorded at `step` on `line`.
pub fn prompt(home: &Home, debate: &str, line: &str, step: u32) -> Result<String, ApiError> {
    let not_found = || ApiError::not_found(format!("no phase {step} on {debate}@{line}"));
    let record = named_record(home, &[debate, line], not_found)?;
    let history =
        LineHistory::load(&record, &LineRef::new(debate, line)).map_err(|_| not_found())?;
    let entry = history
        .entries
        .iter()
        .find(|e| e.role.is_some() && e.step == step)
        .ok_or_else(not_found)?;
    Ok(history::prompt(&record, entry)
        .map_err(ApiError::internal)?
        .unwrap_or_else(|| "(no prompt recorded)".to_owned()))
}

/// The report of a line, built from its record (finished or not).
pub fn report(
    home: &Home,
    debate: &str,
    line: &str,
) -> Result<anvil_core::review::report::Report, ApiError> {
    let not_found = || ApiError::not_found(format!("no line '{debate}@{line}'"));
    let record = named_record(home, &[debate, line], not_found)?;
    let line = LineRef::new(debate, line);
    let history = LineHistory::load(&record, &line).map_err(|_| not_found())?;
    let state = history::state_at(&record, history.tip).map_err(ApiError::internal)?;
    anvil_core::review::report::Report::of_line(&record, &history, &state)
        .map_err(ApiError::internal)
}
