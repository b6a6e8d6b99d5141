//! A new debate: its id, its main line's first commit, its first prompt.

use std::path::PathBuf;

use gix::ObjectId;

use crate::clock::now;
use crate::error::{DebateError, Refusal, io};
use crate::fsutil;
use crate::home::{Home, LineRef};
use crate::line::stop::render_prompt;
use crate::line::transaction::{self, Change, Options, Plan, Transcript};
use crate::model::machine;
use crate::model::state::{FORMAT, Setup, State};
use crate::model::transcript;
use crate::record::schema::{PhaseFile, phase_file};

/// A new debate's id that no debate of this home has: [`new_id`] drawn again while the one
/// drawn names live files or lines in the record (the same question asked twice on one day
/// has one chance in 65,536 to draw the same four hex digits).
fn free_id(home: &Home, question: &str, now: jiff::Timestamp) -> Result<String, DebateError> {
    let record = transaction::open_record(home)?;
    let mut attempt = 0u32;
    loop {
        let id = new_id(question, now, attempt);
        let taken = home.debate_dir(&id).exists() || !record.lines_of_debate(&id)?.is_empty();
        if !taken || attempt >= 64 {
            return Ok(id);
        }
        attempt += 1;
    }
}

/// A debate's id: date, a slug of the question, and four hex digits (`attempt` draws others).
pub(crate) fn new_id(question: &str, now: jiff::Timestamp, attempt: u32) -> String {
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
    // The moment, the process and the attempt, hashed with fixed keys: the same draw for
    // the same inputs, a different one for each attempt.
    let noise = std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default().hash_one((
        question,
        now.as_nanosecond(),
        std::process::id(),
        attempt,
    ));
    let date = now.strftime("%Y%m%d");
    format!("{date}-{slug}-{:04x}", noise & 0xffff)
}

pub struct Started {
    pub line: LineRef,
    pub state: State,
    /// What the session that drives the debate is given first: the first phase's prompt, or,
    /// when a seat plays that phase, the word to end its turn.
    pub prompt: String,
    pub commit: ObjectId,
    /// Things worth telling the person (what was redacted from the setup and the material).
    pub notes: Vec<String>,
}

/// What a debate may start with besides its setup.
#[derive(Debug, Clone, Default)]
pub struct StartInputs {
    /// The material of `setup.inputs`, gathered by [`crate::review::context::gather`].
    pub material: crate::review::context::Material,
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
    mut inputs: StartInputs,
) -> Result<Started, DebateError> {
    // The question, the position and the other words of the setup enter anvil here: cleaned
    // before the debate's id is made from the question, and before anything is written.
    let mut intake = crate::model::secrets::Intake::new(home.root());
    for (place, text) in setup.free_texts_mut() {
        intake.clean_in_place(place, text);
    }
    intake.absorb(std::mem::take(&mut inputs.material.intake));
    let now = now();
    let debate = free_id(home, &setup.question, now)?;
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
        last_turn: None,
        aside_response: None,
        branched_from: None,
        question: None,
        headless: false,
        pending_steering: Vec::new(),
        steering_taken: 0,
        tip: None,
        seat_fallback: None,
        spent: Default::default(),
        positions: Vec::new(),
        converged: None,
        ballots: Vec::new(),
        triage: Vec::new(),
        triage_shadow: None,
        created: stamp.clone(),
        updated: stamp,
        setup,
        progress,
    };
    if !state.setup.inputs.is_empty() {
        let bundle = crate::review::context::bundle_path(home, &state.debate);
        fsutil::write_atomic(&bundle, inputs.material.bundle.as_bytes())
            .map_err(io("cannot write", &bundle))?;
    }
    let prompt = render_prompt(home, &state, &cue, true, "")?;
    let done = transaction::run(home, &line, Options::default(), |current| {
        if current.tip.is_some() {
            return Err(Refusal::IdTaken(line.clone()).into());
        }
        let subject = format!(
            "start: {}",
            crate::model::state::first_line(&state.setup.question)
        );
        let mut change = Change::bookkeeping(state.clone(), "start", subject);
        change.meta.round = 0;
        change.meta.session = session.map(str::to_owned);
        change.meta.next = Some(cue.role.name().into());
        change.files = std::iter::once((
            phase_file(1, cue.role.name(), PhaseFile::Prompt),
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
    // The first phase is another agent's: the session that drives the debate is asked only
    // to end its turn, and its Stop hook plays the seat (`anvil run` plays it before claude).
    let prompt = match state
        .setup
        .seats
        .seat_for(cue.role.name(), cue.voice.as_deref())
    {
        Some(seat) => crate::model::prompt::Prompts::new(Some(home.prompts_dir())).render(
            "seat-first.md",
            &serde_json::json!({
                "tag": crate::model::prompt::tag(&line.debate, &line.line),
                "label": state.standing(),
                "seat": seat.to_string(),
            }),
        )?,
        None => prompt,
    };
    let mut notes = done.notes;
    notes.extend(intake.note());
    Ok(Started {
        line,
        state,
        prompt,
        commit: done.tip.expect("a new line has a commit"),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_debate_never_takes_the_id_of_one_that_exists() {
        let (_dir, home, line) = crate::testkit::line_with_debate();
        let now = jiff::Timestamp::now();
        let draws: Vec<String> = (0..4).map(|n| new_id("Q?", now, n)).collect();
        assert_eq!(free_id(&home, "Q?", now).unwrap(), draws[0]);
        // The first draw has live files; the second is only in the record (pulled, or its
        // live files removed): start takes the third.
        std::fs::create_dir_all(home.debate_dir(&draws[0])).unwrap();
        let record = transaction::open_record(&home).unwrap();
        let tip = record.tip(&line.debate, &line.line).unwrap().unwrap();
        record
            .set_line(&draws[1], "main", None, tip, "test")
            .unwrap();
        assert_eq!(free_id(&home, "Q?", now).unwrap(), draws[2]);
    }
}
