//! The prompts a stop hands out: the next phase's, or the one that is out, rendered from the
//! line's state and the debate so far.

use crate::error::{DebateError, io};
use crate::fsutil;
use crate::home::{Home, LineRef};
use crate::model::machine::Cue;
use crate::model::prompt::{PhaseContext, Prompts};
use crate::model::state::{Role, State};
use crate::model::vote;

/// The prompt for `cue` on the line `state` describes, rendered as the hook renders it;
/// `transcript` is the debate so far when `full` is set. For commands that rebuild a line.
pub(crate) fn render_prompt(
    home: &Home,
    state: &State,
    cue: &Cue,
    full: bool,
    transcript: &str,
) -> Result<String, DebateError> {
    if cue.role == Role::Voter {
        return render_ballot(home, state, cue, None);
    }
    let prompts = Prompts::new(Some(home.prompts_dir()));
    let line = LineRef::new(&state.debate, &state.line);
    // A seat's phase is always given in full, as a participant's: it sees only what was said.
    let seat = cue.seat(state);
    // A draft of a round drafted blind is given in full too, with the debate up to the round
    // before: never another seat's draft of the same round, whoever plays it.
    let blind = cue.role.is_debating() && crate::model::machine::drafted(&state.setup, cue.round);
    let full = full || seat.is_some() || cue.role == Role::Triage || blind;
    // A triage answer is blind: it is given the question and the material, not what the
    // other seats answered.
    let transcript = if cue.role == Role::Triage {
        ""
    } else {
        transcript
    };
    let read;
    let transcript =
        if (seat.is_some() || blind) && transcript.is_empty() && cue.role != Role::Triage {
            read = read_transcript(home, &line)?;
            read.as_str()
        } else {
            transcript
        };
    let transcript = if blind {
        before_round(transcript, cue.round)
    } else {
        transcript
    };
    let mut ctx = PhaseContext::new(
        state,
        cue,
        full,
        transcript.to_owned(),
        &home.transcript_path(&line),
    );
    if let Some(seat) = seat {
        ctx = ctx.with_seat(seat.agent.name());
    }
    if !state.setup.inputs.is_empty() {
        // The material travels in full prompts only; later ones point to the file.
        let path = crate::review::context::bundle_path(home, &state.debate);
        let text = if full {
            fsutil::read_optional(&path).map_err(io("cannot read", &path))?
        } else {
            None
        };
        ctx = ctx.with_context(&path, text);
    }
    Ok(prompts.render_phase(&ctx)?)
}

/// The debate so far up to `round`: `transcript` cut where the round's first phase begins
/// (`## Round N · …`, a heading only anvil writes: a debater's own are pushed down).
pub(crate) fn before_round(transcript: &str, round: u32) -> &str {
    let heading = format!("\n## {}", crate::model::transcript::round_heading(round));
    transcript
        .find(&heading)
        .map_or(transcript, |at| &transcript[..at])
}

/// The line's `transcript.md`: the debate so far (empty before its first phase).
pub(crate) fn read_transcript(home: &Home, line: &LineRef) -> Result<String, DebateError> {
    let path = home.transcript_path(line);
    Ok(fsutil::read_optional(&path)
        .map_err(io("cannot read", &path))?
        .unwrap_or_default())
}

/// A phase being recorded, which the record does not hold yet.
pub(crate) struct Pending<'a> {
    pub role: Role,
    pub voice: Option<&'a str>,
    pub text: &'a str,
}

/// What a ballot's prompt says ([`crate::model::vote`]): the question, and the final phase of
/// every seat but the voter's, labelled in the voter's own shuffled order, without a name.
#[derive(Debug, serde::Serialize)]
struct BallotContext {
    tag: String,
    question: String,
    position: Option<String>,
    steering: Vec<String>,
    labels: Vec<String>,
    candidates: Vec<Candidate>,
    /// The tag that frames each candidate: none of their texts contains it.
    frame: String,
}

#[derive(Debug, serde::Serialize)]
struct Candidate {
    label: String,
    text: String,
}

/// The prompt of the ballot `cue` asks for; `pending` is the phase being recorded, when the
/// record does not hold it yet (the last debating phase, as the first ballot is handed out).
/// Every candidate's text is read as people read it (tags as words) with every name of a
/// seat, a role, an agent or a model taken out ([`anonymous`]).
pub(crate) fn render_ballot(
    home: &Home,
    state: &State,
    cue: &Cue,
    pending: Option<Pending<'_>>,
) -> Result<String, DebateError> {
    let voter = cue.voice.clone().unwrap_or_default();
    let shown = vote::shown(
        &vote::seed(&state.debate, &voter),
        &vote::candidates(&state.positions, &voter),
    );
    let line = LineRef::new(&state.debate, &state.line);
    let record = crate::record::store::Record::open(&home.record_dir())?;
    let history = match record.tip(&line.debate, &line.line)? {
        Some(_) => Some(crate::review::history::LineHistory::load(&record, &line)?),
        None => None,
    };
    let mut names = names_in(state);
    if let Some(history) = &history {
        for e in &history.entries {
            names.extend(e.meta.agent.iter().cloned());
            names.extend(e.meta.model.iter().cloned());
        }
    }
    let last_text = |seat: &str| -> Result<String, DebateError> {
        if let Some(p) = &pending
            && p.role.is_debating()
            && crate::model::positions::seat_label(p.role.name(), p.voice) == seat
        {
            return Ok(p.text.to_owned());
        }
        let Some(history) = &history else {
            return Ok(String::new());
        };
        let entry = history.entries.iter().rev().find(|e| {
            e.role.is_some_and(Role::is_debating)
                && e.role
                    .map(|r| crate::model::positions::seat_label(r.name(), e.meta.voice.as_deref()))
                    == Some(seat.to_owned())
        });
        Ok(match entry {
            Some(e) => crate::review::history::response(&record, e)?.unwrap_or_default(),
            None => String::new(),
        })
    };
    let mut candidates = Vec::new();
    for (i, seat) in shown.iter().enumerate() {
        let text = last_text(seat)?;
        let readable = crate::model::markers::readable(&text);
        candidates.push(Candidate {
            label: vote::label(i),
            text: anonymous(&readable, &names),
        });
    }
    let all: String = candidates.iter().map(|c| c.text.as_str()).collect();
    let frame = crate::model::prompt::frame_tag("statement", &all);
    let ctx = BallotContext {
        tag: crate::model::prompt::tag(&state.debate, &state.line),
        question: state.setup.question.clone(),
        position: state.setup.position.clone(),
        steering: cue.steering.clone(),
        labels: (0..candidates.len()).map(vote::label).collect(),
        candidates,
        frame: if frame.is_empty() {
            "statement".to_owned()
        } else {
            frame
        },
    };
    Ok(Prompts::new(Some(home.prompts_dir())).render(BALLOT, &ctx)?)
}

/// The template of a ballot's prompt.
const BALLOT: &str = "ballot.md";

/// Every name a ballot must not hold: the seats and voices, the roles, every agent anvil knows
/// (by name and title) and the seats' models.
fn names_in(state: &State) -> Vec<String> {
    let setup = &state.setup;
    let mut names: Vec<String> = vote::voters(setup).iter().map(vote::Voter::seat).collect();
    names.extend(setup.voices.iter().cloned());
    names.extend(
        [
            Role::Advocate,
            Role::Critic,
            Role::Stakeholder,
            Role::Persona,
            Role::Synthesizer,
        ]
        .map(|r| r.name().to_owned()),
    );
    for agent in crate::agent::AGENTS {
        names.push(agent.name().to_owned());
        names.push(agent.title().to_owned());
    }
    for (key, seat) in &setup.seats.roles {
        names.push(key.clone());
        names.push(seat.agent.name().to_owned());
        names.extend(seat.model.iter().cloned());
    }
    names
}

/// `text` with every name of `names` (ignoring case, as a whole word) replaced by
/// `[name removed]`.
pub(crate) fn anonymous(text: &str, names: &[String]) -> String {
    let mut names: Vec<&str> = names
        .iter()
        .map(|n| n.trim())
        .filter(|n| n.chars().count() >= 2)
        .collect();
    // The longest first, so a name inside another goes with it.
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    if names.is_empty() {
        return text.to_owned();
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let alternatives: Vec<String> = names
        .iter()
        .map(|n| {
            let escaped = regex_lite::escape(n);
            let start = if n.starts_with(word) { r"\b" } else { "" };
            let end = if n.ends_with(word) { r"\b" } else { "" };
            format!("{start}{escaped}{end}")
        })
        .collect();
    let pattern = format!("(?i)(?:{})", alternatives.join("|"));
    match regex_lite::Regex::new(&pattern) {
        Ok(re) => re.replace_all(text, "[name removed]").into_owned(),
        // A pattern too large to build: nothing of the text is shown rather than a name.
        Err(_) => "[the statement could not be shown without names]".to_owned(),
    }
}
