//! What every command gets: where it runs, anvil's home, the session it runs in, and the line
//! it is about.

use std::path::PathBuf;

use anvil_core::home::{Home, LineRef};

use crate::error::CliError;

/// What every command gets: where it runs, and anvil's home if there is one.
pub struct Ctx {
    pub cwd: PathBuf,
}

impl Ctx {
    /// The `.anvil` of this project, or an error that says how to make one.
    pub fn home(&self) -> Result<Home, CliError> {
        Home::find(&self.cwd).ok_or_else(|| {
            CliError::new("no .anvil here or in any parent directory")
                .hint("run `anvil init` in your project first")
        })
    }

    /// The Claude Code session this command runs in, if it runs inside one.
    pub fn session(&self) -> Option<String> {
        std::env::var("CLAUDE_CODE_SESSION_ID")
            .ok()
            .filter(|s| anvil_core::home::valid_session(s))
    }

    /// The session a command binds to: the one given (checked), else the one it runs in.
    pub fn session_or(&self, given: Option<String>) -> Result<Option<String>, CliError> {
        match given {
            Some(s) if anvil_core::home::valid_session(&s) => Ok(Some(s)),
            Some(s) => Err(CliError::new(format!("'{s}' is not a Claude Code session id")).usage()),
            None => Ok(self.session()),
        }
    }

    /// The line a command is about: the one named (a prefix of a live line's debate id, else
    /// any name of a debate in the record: see [`crate::naming`]), else this session's, else
    /// the only active one. Only the named debates, or the active lines, are read.
    pub fn resolve_line(&self, home: &Home, name: Option<&str>) -> Result<LineRef, CliError> {
        if let Some(name) = name {
            let (debate, line) = name.split_once('@').unwrap_or((name, "main"));
            // A number is a place in `anvil log`'s order, never a prefix of an id (which begins
            // with its date).
            let mut lines = match anvil_core::review::names::number(debate) {
                Some(_) => Vec::new(),
                None => home
                    .live_lines_with_prefix(debate)
                    .map_err(CliError::from_display)?,
            };
            // Not a prefix of a live line's id: any other name of a debate (its number, words
            // of its id or question), looked up in the record.
            if lines.is_empty()
                && let Ok(record) = crate::view::record(home)
            {
                let id = crate::naming::debate(home, &record, debate)?;
                lines = home
                    .live_lines_with_prefix(&id)
                    .map_err(CliError::from_display)?
                    .into_iter()
                    .filter(|l| l.debate == id)
                    .collect();
                return match_line(&format!("{id}@{line}"), &lines).map_err(|e| {
                    e.hint(format!(
                        "{id} has no live line '{line}': `anvil resume {id}@{line}` restores it"
                    ))
                });
            }
            return match_line(name, &lines).map_err(|e| {
                if lines.is_empty() {
                    e.hint("`anvil status --all` lists the debates here")
                } else {
                    e
                }
            });
        }
        if let Some(session) = self.session()
            && let Some(line) = home.bound_line(&session).map_err(CliError::from_display)?
        {
            return Ok(line);
        }
        let active: Vec<LineRef> = anvil_core::line::active::lines(home)
            .map_err(CliError::from_display)?
            .into_iter()
            .map(|(line, _)| line)
            .collect();
        match active.as_slice() {
            [one] => Ok(one.clone()),
            [] => {
                Err(CliError::new("no active debate")
                    .hint("start one with `anvil start \"QUESTION\"`"))
            }
            many => Err(CliError::new("several debates are active; name one")
                .hint(join(many.iter().map(|l| l.to_string())))),
        }
    }
}

/// The line `name` (`DEBATE[@LINE]`, a prefix of the debate id is enough) names among
/// `lines`; an exact id wins over prefixes. The errors list what there is.
pub fn match_line(name: &str, lines: &[LineRef]) -> Result<LineRef, CliError> {
    let (debate, line) = name.split_once('@').unwrap_or((name, "main"));
    let matches: Vec<&LineRef> = lines
        .iter()
        .filter(|l| l.line == line && l.debate.starts_with(debate))
        .collect();
    if let Some(exact) = matches.iter().find(|l| l.debate == debate) {
        return Ok((*exact).clone());
    }
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(CliError::new(format!("no debate line '{name}'")).hint(list_hint(lines))),
        many => Err(
            CliError::new(format!("'{name}' is ambiguous")).hint(format!(
                "it matches {}",
                join(many.iter().map(|l| l.to_string()))
            )),
        ),
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn list_hint(lines: &[LineRef]) -> String {
    if lines.is_empty() {
        "there are no debates yet".into()
    } else {
        format!(
            "debates here: {}",
            join(lines.iter().map(|l| l.to_string()))
        )
    }
}
