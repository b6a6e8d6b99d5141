//! The live transcript of a line, `transcript.md`: the debate so far as readable markdown.
//!
//! It is derived data: every section also sits in the record as a phase's `NNN-role.response.md`, so
//! `anvil resume` can rebuild it. The hook only ever appends one section.

use std::io::Write;
use std::path::Path;

use crate::model::machine::Finished;
use crate::model::state::{Role, State};

/// The title block a new line's transcript starts with.
pub fn header(state: &State) -> String {
    let setup = &state.setup;
    let mut out = format!("# {}\n\n", crate::model::state::first_line(&setup.question));
    if setup.question.trim().lines().count() > 1 {
        out.push_str(&quote(setup.question.trim()));
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "_anvil debate `{}`, line `{}` · {} · {} round{}_\n",
        state.debate,
        state.line,
        setup.mode.name(),
        setup.rounds,
        if setup.rounds == 1 { "" } else { "s" }
    ));
    if let Some(position) = &setup.position {
        out.push_str(&format!("\nThe user's position: {position}\n"));
    }
    out
}

/// The heading of a phase, as the transcript and reports show it.
pub fn heading(role: Role, round: u32, voice: Option<&str>) -> String {
    match (role, voice) {
        (Role::Synthesizer, _) => "Synthesis".to_owned(),
        (Role::InteractivePause, _) => format!("Pause after round {round}"),
        (_, Some(voice)) => format!("Round {round} · {} · {voice}", role.title()),
        (_, None) => format!("Round {round} · {}", role.title()),
    }
}

/// The section one finished phase adds, with the agent that played it when a seat did
/// (`played_by`, see [`crate::model::provenance::Provenance::played_by`]). The completion
/// marker is a control token for anvil, not part of the argument: it is kept in the record's
/// response file, not here.
pub fn section(finished: &Finished, text: &str, played_by: Option<&str>) -> String {
    let mut out = format!(
        "\n## {}\n\n",
        heading(finished.role, finished.round, finished.voice.as_deref()),
    );
    if let Some(agent) = played_by {
        out.push_str(&format!("_Played by {}._\n\n", one_paragraph(agent)));
    }
    out.push_str(crate::model::markers::strip_complete(text).trim_end());
    out.push('\n');
    for steering in &finished.steering {
        out.push_str(&format!("\n> **Steering:** {}\n", one_paragraph(steering)));
    }
    out
}

/// Appends one section. A writer that dies half-way leaves a torn section behind; that is
/// harmless, because the state file still names the commit before, and the next transaction
/// rebuilds the transcript from the record.
pub(crate) fn append(path: &Path, section: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let mut half = section.len() / 2;
    while !section.is_char_boundary(half) {
        half -= 1;
    }
    file.write_all(&section.as_bytes()[..half])?;
    crate::fault::point("appending to the transcript")?;
    file.write_all(&section.as_bytes()[half..])
}

fn quote(text: &str) -> String {
    text.lines()
        .map(|l| format!("> {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
