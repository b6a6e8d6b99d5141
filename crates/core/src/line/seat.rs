//! A line's seats: the phase that is out for another agent to play, recording what it said
//! (with who played it and what it cost), and the host taking over a seat that failed. The
//! agents themselves are run by [`crate::seat`]; `anvil run` ties the two together.

use crate::error::{DebateError, io};
use crate::home::{Home, LineRef};
use crate::line::stop::{self, Reply, Stop};
use crate::line::transaction::{self, Options, Plan};
use crate::model::machine::{self, Cue};
use crate::model::provenance::Provenance;
use crate::model::state::{Role, Status};
use crate::record::schema::{PhaseFile, phase_file};
use crate::record::store::Record;
use crate::review::history::LineHistory;
use crate::seat::Seat;

/// A phase that is out for a seat.
#[derive(Debug, Clone)]
pub struct Out {
    pub seat: Seat,
    pub role: Role,
    pub round: u32,
    pub voice: Option<String>,
    /// The prompt it was given, as the record holds it.
    pub prompt: String,
    /// The agent's session from this role's last turn, to resume.
    pub resume: Option<String>,
    /// `round 2/3 · critic`, for people.
    pub label: String,
}

/// The phase that is out on `line`, if a seat plays it (and the host has not taken it over).
pub fn out(home: &Home, line: &LineRef) -> Result<Option<Out>, DebateError> {
    let state = transaction::view(home, line)?;
    if state.progress.status != Status::Active || state.seat_fallback.is_some() {
        return Ok(None);
    }
    let cue = machine::current_cue(&state.setup, &state.progress);
    let Some(seat) = state
        .setup
        .seats
        .seat_for(cue.role, cue.voice.as_deref())
        .cloned()
    else {
        return Ok(None);
    };
    let record = Record::open(&home.record_dir())?;
    let history = LineHistory::load(&record, line)?;
    let recorded = match history.entries.last() {
        Some(tip) => record.read(
            tip.commit,
            &phase_file(state.progress.step + 1, cue.role.name(), PhaseFile::Prompt),
        )?,
        None => None,
    };
    let prompt = match recorded {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => stop::render_prompt(home, &state, &cue, true, "")?,
    };
    Ok(Some(Out {
        resume: last_session(&history, &cue, &seat),
        label: state.standing(),
        seat,
        role: cue.role,
        round: cue.round,
        voice: cue.voice,
        prompt,
    }))
}

/// The agent session that played this role (this voice) on the line last, by this agent.
fn last_session(history: &LineHistory, cue: &Cue, seat: &Seat) -> Option<String> {
    history
        .entries
        .iter()
        .rev()
        .find(|e| {
            e.role == Some(cue.role)
                && e.meta.voice == cue.voice
                && e.meta.agent.as_deref() == Some(seat.agent.name())
        })
        .and_then(|e| e.meta.agent_session.clone())
}

/// The prompt `role` would get in round 1 with nothing said yet: an opening drafted blind
/// (`--independent`), in a seat's words.
pub fn blind_prompt(home: &Home, line: &LineRef, role: Role) -> Result<String, DebateError> {
    let mut state = transaction::view(home, line)?;
    let cue = Cue {
        role,
        round: 1,
        voice: None,
        steering: state.progress.steering.clone(),
    };
    state.seat_fallback = None;
    // Rendered with an empty debate so far, whatever the transcript holds by now.
    let mut blind = state.clone();
    blind
        .setup
        .seats
        .roles
        .entry(role.name().to_owned())
        .or_insert(Seat {
            agent: crate::seat::Agent::Claude,
            model: None,
        });
    let path = home.transcript_path(line);
    let header = crate::fsutil::read_optional(&path)
        .map_err(io("cannot read", &path))?
        .unwrap_or_default();
    // The transcript's title block only: its first phase section starts with "\n## ".
    let header = header.split("\n## ").next().unwrap_or_default().to_owned();
    stop::render_prompt(home, &blind, &cue, true, &header)
}

/// Records `text`, played by a seat, as the phase that is out, cleaned of credentials first
/// (another agent's text enters anvil here); `provenance` names the agent and what it cost.
/// `next_prompt` is what the next phase was really given, when it was drafted already (an
/// independent opening).
pub fn record(
    home: &Home,
    line: &LineRef,
    session: &str,
    text: &str,
    provenance: &Provenance,
    next_prompt: Option<&str>,
) -> Result<Reply, DebateError> {
    stop::record_cleaned(
        home,
        line,
        "the seat's text",
        text,
        Stop {
            session,
            text: None,
            kept: None,
            claimed: false,
            seen: true,
            provenance: Some(provenance),
            seat: true,
            next_prompt,
        },
    )
}

/// The host takes over the seat of the phase that is out, which failed (`--fallback host`):
/// the phase is recorded with `why` when the host's text arrives. Returns the prompt for the
/// host, in full.
pub fn fall_back(home: &Home, line: &LineRef, why: &str) -> Result<String, DebateError> {
    let done = transaction::run(home, line, Options::default(), |current| {
        let mut state = current.state()?;
        state.seat_fallback = Some(why.to_owned());
        state.informed_session = None;
        let cue = machine::current_cue(&state.setup, &state.progress);
        let transcript = {
            let path = home.transcript_path(line);
            crate::fsutil::read_optional(&path)
                .map_err(io("cannot read", &path))?
                .unwrap_or_default()
        };
        let prompt = stop::render_prompt(home, &state, &cue, true, &transcript)?;
        Ok(Plan::Live(Box::new(state), prompt))
    })?;
    Ok(done.value)
}
