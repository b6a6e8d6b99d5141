//! The live transcript of a line, `transcript.md`: the debate so far as readable markdown.
//!
//! It is derived data: every section also sits in the record as a phase's `NNN-role.response.md`, so
//! `anvil resume` can rebuild it. The hook only ever appends one section.
//!
//! It has two readers: people (it is the body of the report, and what they open on disk), and
//! the debaters that come next, to whom it is handed as the debate so far. Both get the same
//! text, and it is the text for people ([`crate::model::markers::readable`]): positions, open
//! points and steering as words, the completion marker gone. A debater loses nothing by it,
//! since the words say what the tags said, and the tags stay where the machine reads them (each
//! phase's own reply, kept whole in the record). What the next debater must not see is another
//! seat's tags as tags: a seat that quotes the debate so far would otherwise hand the machine
//! a position or a completion marker that was never its own.
//!
//! The headings are anvil's: `##` opens a phase and nothing else does. A debater's own headings
//! are pushed down under the phase's ([`nest`]), so no text can start a section of its own (a
//! `## Synthesis` written by an advocate reads as a sub-heading of the advocate's phase).
//! Nothing reads a phase or a conclusion back out of this file: the record is where they are.

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

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
    if let Some(protocol) = crate::model::options::protocol::words(setup) {
        out.push_str(&format!("\nProtocol: {protocol}.\n"));
    }
    if let Some(position) = &setup.position {
        out.push_str(&format!("\nThe user's position: {position}\n"));
    }
    out
}

/// The level of the heading that opens a phase (`##`): a phase's own headings sit below it.
pub const PHASE_LEVEL: usize = 2;

/// The heading of a phase, as the transcript and reports show it.
pub fn heading(role: Role, round: u32, voice: Option<&str>) -> String {
    match (role, voice) {
        (Role::Synthesizer, _) => "Synthesis".to_owned(),
        (Role::InteractivePause, _) => format!("Pause after round {round}"),
        (Role::Voter, Some(voter)) => format!("Ballot · {voter}"),
        (Role::Triage, Some(seat)) => format!("Triage · {seat}"),
        (Role::Triage, None) => "Triage".to_owned(),
        (Role::Voter, None) => "Ballot".to_owned(),
        (_, Some(voice)) => format!("{}{} · {voice}", round_heading(round), role.title()),
        (_, None) => format!("{}{}", round_heading(round), role.title()),
    }
}

/// How the heading of every debating phase of `round` begins: `Round 2 · `.
pub fn round_heading(round: u32) -> String {
    format!("Round {round} · ")
}

/// The note under a phase drafted blind within its round (`Anvil-Drafted`): the round is one
/// moment with several voices.
pub const DRAFTED: &str = "Drafted blind, at the same time as the round's other voices: it saw the rounds before, not theirs.";

/// The notes anvil adds under a phase of the record: that it was drafted blind, and what the
/// record says of a ballot or the vote's result.
pub fn notes_of(meta: &crate::record::schema::Meta) -> String {
    let mut lines = Vec::new();
    if meta.drafted {
        lines.push(DRAFTED.to_owned());
    }
    lines.extend(crate::model::vote::words(meta));
    notes(&lines)
}

/// Lines anvil adds under a phase, in italics, each its own paragraph: what the record says
/// of a ballot, and the vote's result (see [`crate::model::vote::words`]).
pub fn notes(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("\n_{}_\n", one_paragraph(l)))
        .collect()
}

/// The section one finished phase adds, with the agent that played it when a seat did
/// (`played_by`, see [`crate::model::provenance::Provenance::played_by`]): the phase's text as
/// people read it, its headings under the phase's. The tags, the completion marker among
/// them, are for anvil: they are kept in the record's response file, not here.
pub fn section(finished: &Finished, text: &str, played_by: Option<&str>) -> String {
    let mut out = format!(
        "\n## {}\n\n",
        heading(finished.role, finished.round, finished.voice.as_deref()),
    );
    if let Some(agent) = played_by {
        out.push_str(&format!("_Played by {}._\n\n", one_paragraph(agent)));
    }
    let shown = crate::model::markers::readable(text);
    out.push_str(nest(&shown, PHASE_LEVEL).trim_end());
    out.push('\n');
    // A pause's answer is its own steering marker, in words in its text already: said once.
    let answered = (finished.role == Role::InteractivePause)
        .then(|| crate::model::markers::scan(text).steering)
        .flatten();
    for (i, steering) in finished.steering.iter().enumerate() {
        if i == 0 && answered.as_deref() == Some(steering.as_str()) {
            continue;
        }
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

/// `text` with its headings pushed down to sit under a heading of level `under`: its highest
/// heading becomes level `under + 1` (one already below that stays), the others keep their
/// distance from it, none goes past `######`. Code is left alone. An underlined (setext)
/// heading, whose level its underline says, is written with `#` instead; inside a quote or a
/// list it is left as it is (there it can only stand for a heading within that quote or item).
pub fn nest(text: &str, under: usize) -> Cow<'_, str> {
    if !text.contains(['#', '=', '-']) {
        return text.into();
    }
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    // (where it starts, where it ends, its level, whether it stands in a quote or a list)
    let mut headings: Vec<(usize, usize, usize, bool)> = Vec::new();
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_) | Tag::List(_) | Tag::FootnoteDefinition(_)) => {
                depth += 1
            }
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::FootnoteDefinition) => {
                depth = depth.saturating_sub(1)
            }
            Event::Start(Tag::Heading { level, .. }) => {
                headings.push((range.start, range.end, level as usize, depth > 0))
            }
            _ => {}
        }
    }
    let Some(highest) = headings.iter().map(|h| h.2).min() else {
        return text.into();
    };
    let by = (under + 1).saturating_sub(highest);
    if by == 0 {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + headings.len() * by);
    let mut at = 0;
    for (start, end, level, contained) in headings {
        let new = (level + by).min(6);
        let first = start + text[start..end].len() - text[start..end].trim_start_matches(' ').len();
        if text[first..].starts_with('#') {
            out.push_str(&text[at..first]);
            out.push_str(&"#".repeat(new - level));
            at = first;
        } else if !contained {
            let whole = text[start..end].trim_end_matches(['\n', '\r']);
            let (content, _underline) = whole.rsplit_once('\n').unwrap_or((whole, ""));
            let mut words = content.split_whitespace().collect::<Vec<_>>().join(" ");
            // A `#` at the end would be read as the closing of the heading: escaped.
            if words.ends_with('#') {
                let keep = words.trim_end_matches('#').len();
                words.insert(keep, '\\');
            }
            out.push_str(&text[at..start]);
            out.push_str(&"#".repeat(new));
            out.push(' ');
            out.push_str(&words);
            at = start + whole.len();
        }
    }
    out.push_str(&text[at..]);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_cannot_write_a_heading_of_the_transcripts_level() {
        assert_eq!(nest("## First\n\nText.", 2), "### First\n\nText.");
        assert_eq!(nest("#### Deep already\n", 2), "#### Deep already\n");
        let text = "# Title\n\n## Synthesis\n\nForged.\n\n##### Deep\n\nSynthesis\n---------\n\nTop\n===\n\n\
                    ```\n# in code\n```\n\n> # Quoted\n>\n> Quote\n> ---\n\n- ## Listed\n\nEnds in #\n---\n";
        assert_eq!(
            nest(text, 2),
            "### Title\n\n#### Synthesis\n\nForged.\n\n###### Deep\n\n#### Synthesis\n\n### Top\n\n\
             ```\n# in code\n```\n\n> ### Quoted\n>\n> Quote\n> ---\n\n- #### Listed\n\n#### Ends in \\#\n"
        );
        assert!(matches!(nest("No heading.\n", 2), Cow::Borrowed(_)));
        assert!(matches!(nest("A - b = c.\n", 2), Cow::Borrowed(_)));
    }
}
