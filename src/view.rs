//! What the commands that look back (log, show, diff, replay, report, branch, resume) share:
//! opening the record, colour, markdown for the terminal, and a phase as `show` prints it.
//! (What a name means, and which line a command takes without one: [`crate::naming`].)

use std::io::IsTerminal;

use crate::term::visible;
use anvil_core::home::Home;
use anvil_core::record::store::Record;
use anvil_core::review::history::{Entry, LineHistory};

use crate::error::CliError;

/// The record of this project, or an error saying there is nothing recorded yet.
pub fn record(home: &Home) -> Result<Record, CliError> {
    let dir = home.record_dir();
    if !dir.join("HEAD").is_file() {
        return Err(CliError::new("no debates recorded yet")
            .hint("start one with `anvil start \"QUESTION\"`"));
    }
    Ok(Record::open(&dir)?)
}

/// Colour for stdout: only on a terminal, never with `NO_COLOR`; `CLICOLOR_FORCE` forces it.
#[derive(Debug, Clone, Copy)]
pub struct Paint {
    pub on: bool,
}

impl Paint {
    pub fn stdout() -> Paint {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let forced = std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0");
        Paint {
            on: !no_color && (forced || std::io::stdout().is_terminal()),
        }
    }

    fn wrap(self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn red(self, t: &str) -> String {
        self.wrap("31", t)
    }
    pub fn green(self, t: &str) -> String {
        self.wrap("32", t)
    }
    pub fn yellow(self, t: &str) -> String {
        self.wrap("33", t)
    }
    pub fn cyan(self, t: &str) -> String {
        self.wrap("36", t)
    }
    pub fn bold(self, t: &str) -> String {
        self.wrap("1", t)
    }
    pub fn dim(self, t: &str) -> String {
        self.wrap("2", t)
    }
}

/// UTC `YYYY-MM-DD HH:MM` for a commit time.
pub fn time(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|t| t.strftime("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

pub fn short(id: &gix::ObjectId) -> String {
    id.to_string()[..7].to_owned()
}

/// Markdown for the terminal: headings and emphasis in bold, code dimmed, quotes marked.
/// Without colour the markdown is printed as it is, which already reads well.
pub fn markdown(text: &str, paint: Paint) -> String {
    if !paint.on {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut in_code = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_code = !in_code;
            out.push_str(&paint.dim(line));
        } else if in_code {
            out.push_str(&paint.dim(line));
        } else if trimmed.starts_with('#') {
            out.push_str(&paint.bold(&paint.cyan(trimmed.trim_start_matches('#').trim())));
        } else if trimmed.starts_with('>') {
            out.push_str(&paint.yellow(line));
        } else {
            out.push_str(&inline(line, paint));
        }
        out.push('\n');
    }
    out
}

/// `**bold**` in bold and `` `code` `` dimmed, markers removed.
fn inline(line: &str, paint: Paint) -> String {
    let mut out = String::new();
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("**")
            && let Some(end) = after.find("**")
        {
            out.push_str(&paint.bold(&after[..end]));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('`')
            && let Some(end) = after.find('`')
        {
            out.push_str(&paint.dim(&after[..end]));
            rest = &after[end + 1..];
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// One phase as `show` and `replay` print it: a heading with who, when and which commit, the
/// steering that came with it, and the text (or the prompt).
pub fn render_entry(
    record: &Record,
    history: &LineHistory,
    entry: &Entry,
    prompt: bool,
    paint: Paint,
) -> Result<String, CliError> {
    let mut out = String::new();
    let heading = visible(&entry.heading()).into_owned();
    let title = if prompt {
        format!("## Prompt for {heading}")
    } else {
        format!("## {heading}")
    };
    out.push_str(&paint.bold(&title));
    out.push('\n');
    out.push_str(&paint.dim(&format!(
        "{} · {} · commit {} · {}",
        visible(&history.line.to_string()),
        visible(&anvil_core::review::compare::entry_label(entry)),
        short(&entry.commit),
        time(entry.time)
    )));
    out.push_str("\n\n");
    let body = if prompt {
        anvil_core::review::history::prompt(record, entry)?
            .or_else(|| entry.role.is_none().then(|| entry.subject.clone()))
            .unwrap_or_else(|| "(no prompt recorded)".to_owned())
    } else {
        match entry.role {
            Some(_) => phase_text(record, entry)?,
            None => entry.describe(),
        }
    };
    // Recorded text is made visible before any colour of ours is put around it.
    out.push_str(&markdown(&visible(body.trim_end()), paint));
    if !body.ends_with('\n') && !paint.on {
        out.push('\n');
    }
    for s in &entry.meta.steering {
        out.push_str(&paint.yellow(&format!("\n> **Steering:** {}\n", visible(s))));
    }
    let recalled = recalled(record, entry);
    if !recalled.is_empty() {
        out.push_str(&paint.bold("\nRecalled earlier conclusions, given to the debaters:\n"));
        for r in recalled {
            out.push_str(&format!(
                "  {}  {}  {}\n",
                paint.cyan(&visible(&r.line)),
                paint.yellow(&r.commit.chars().take(7).collect::<String>()),
                visible(anvil_core::model::state::first_line(&r.question))
            ));
        }
    }
    Ok(out)
}

/// The text `entry`'s phase recorded, as people read it: the tags debaters write for anvil as
/// words (see `anvil_core::model::markers::readable`). What `show`, `replay` and the MCP server
/// print of a phase.
pub fn phase_text(record: &Record, entry: &Entry) -> Result<String, CliError> {
    let text = anvil_core::review::history::response(record, entry)?.unwrap_or_default();
    Ok(anvil_core::model::markers::readable(&text).into_owned())
}

/// The earlier conclusions a debate's `start` commit recalled (none for any other commit).
pub fn recalled(record: &Record, entry: &Entry) -> Vec<anvil_core::model::state::Recalled> {
    if entry.role.is_some() || entry.meta.phase != "start" {
        return Vec::new();
    }
    anvil_core::review::history::state_at(record, entry.commit)
        .map(|s| s.setup.inputs.recalled)
        .unwrap_or_default()
}

/// What to do next with a line that `branch` or `resume` put on disk.
pub fn how_to_continue(restored: &anvil_core::line::restore::Restored) -> String {
    let line = &restored.line;
    match &restored.session {
        Some(s) => format!(
            "bound to Claude Code session {s}; continue with \
             `claude --resume {s} \"$(anvil resume {line} --session {s})\"` \
             (`--session-id {s}` instead of `--resume` for a new session)"
        ),
        None => format!(
            "the next Claude Code session that stops in this project picks it up; continue with \
             `claude \"$(anvil resume {line})\"`"
        ),
    }
}

pub fn restored_json(restored: &anvil_core::line::restore::Restored) -> serde_json::Value {
    serde_json::json!({
        "debate": restored.line.debate,
        "line": restored.line.line,
        "commit": restored.commit.to_string(),
        "session": restored.session,
        "phase": restored.state.progress.phase.name(),
        "round": restored.state.progress.round,
        "steering": restored.state.progress.steering,
        "branched_from": restored.state.branched_from,
        "prompt": restored.prompt,
    })
}
