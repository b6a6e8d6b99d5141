//! How the command line finds what a person named: a debate by any of its names (see
//! [`anvil_core::review::names`]; the words of a question are looked up in the search index),
//! a line, a revision; and, when nothing was named, which line a command takes and why, which
//! the command says on stderr (`anvil: report of …@cost, the line last active; …`), so that
//! nobody acts on a branch without knowing it.

use anvil_core::home::{Home, LineRef};
use anvil_core::record::store::Record;
use anvil_core::review::names::{self, Named, Questions};
use anvil_core::review::revision::{Resolved, RevisionError};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::say;

/// Candidates an ambiguous name lists at most (with their questions, each read from its line).
const LISTED: usize = 10;

/// The words of a debate's question, asked of the full-text index (`.anvil/search.sqlite`),
/// which is caught up with the record first: opened only when a name reaches that rule.
struct IndexQuestions<'a> {
    home: &'a Home,
    record: &'a Record,
}

impl Questions for IndexQuestions<'_> {
    fn holding(&self, words: &[String]) -> Result<Vec<String>, String> {
        let index =
            crate::memory::index::Index::open(self.home, self.record).map_err(|e| e.to_string())?;
        index.debates_asking(words).map_err(|e| e.to_string())
    }
}

/// The debates `name` names, by any rule; `anvil log` shows them all.
pub fn debates(home: &Home, record: &Record, name: &str) -> Result<Named, CliError> {
    let questions = IndexQuestions { home, record };
    names::debates(record, name, Some(&questions)).map_err(CliError::from_display)
}

/// The one debate `name` names, or an error that lists what it could mean.
pub fn debate(home: &Home, record: &Record, name: &str) -> Result<String, CliError> {
    let named = debates(home, record, name)?;
    match named.one() {
        Some(one) => Ok(one.to_owned()),
        None if named.rule.is_none() => Err(CliError::new(format!("no debate '{name}'"))
            .hint("name a debate by its id, its number in `anvil log`, words of its id or of its question")),
        None => Err(ambiguous(record, name, &named)),
    }
}

/// Why a command took a line nobody named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The Claude Code session the command runs in drives it.
    Session,
    /// It is the only line with a debate going on.
    OnlyActive,
    /// Its tip is the newest commit of the record.
    LastActive,
}

impl Why {
    fn words(self) -> &'static str {
        match self {
            Why::Session => "the line this Claude Code session drives",
            Why::OnlyActive => "the only active line",
            Why::LastActive => "the line last active",
        }
    }
}

/// A line a command acts on, and why, when it was not named.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub line: LineRef,
    pub why: Option<Why>,
}

impl Chosen {
    /// Says on stderr which line was taken and why, when none was named: `anvil: report of
    /// DEBATE@cost, the line last active; name another: anvil report NAME[@LINE]` (`what` is
    /// "report of", `usage` "anvil report NAME[@LINE]").
    pub fn tell(&self, what: &str, usage: &str) {
        if let Some(why) = self.why {
            say(&format!(
                "anvil: {} {}, {}; name another: {usage}",
                crate::term::visible(what),
                crate::term::visible(&self.line.to_string()),
                why.words()
            ));
        }
    }
}

/// The line bare revision names refer to: this session's line, else the only active one,
/// else the line recorded most recently; with why.
pub fn current_line(ctx: &Ctx, home: &Home, record: &Record) -> Option<Chosen> {
    let in_record = |line: &LineRef| {
        record
            .tip(&line.debate, &line.line)
            .ok()
            .flatten()
            .is_some()
    };
    if let Some(session) = ctx.session()
        && let Ok(Some(line)) = home.bound_line(&session)
        && in_record(&line)
    {
        return Some(Chosen {
            line,
            why: Some(Why::Session),
        });
    }
    if let Ok(active) = anvil_core::line::active::lines(home)
        && let [(line, _)] = active.as_slice()
        && in_record(line)
    {
        return Some(Chosen {
            line: line.clone(),
            why: Some(Why::OnlyActive),
        });
    }
    newest_line(record).map(|line| Chosen {
        line,
        why: Some(Why::LastActive),
    })
}

/// The line whose tip was committed last (the newest debate from the index of recent
/// debates, then its newest line).
pub fn newest_line(record: &Record) -> Option<LineRef> {
    let (debate, _) = anvil_core::record::recent::Newest::new(record, 1)
        .ok()?
        .next()?
        .ok()?;
    let mut times = record.commit_times();
    record
        .lines_of_debate(&debate)
        .ok()?
        .into_iter()
        .filter_map(|(line, tip)| Some((times.of(tip).ok()?, line)))
        .max()
        .map(|(_, line)| LineRef::new(&debate, line))
}

/// A line of the record by `NAME[@LINE]` (any name of its debate), or the current line when
/// none is named.
pub fn line(
    ctx: &Ctx,
    home: &Home,
    record: &Record,
    name: Option<&str>,
) -> Result<Chosen, CliError> {
    let Some(name) = name else {
        return current_line(ctx, home, record).ok_or_else(|| {
            CliError::new("no debates recorded yet")
                .hint("start one with `anvil start \"QUESTION\"`")
        });
    };
    let (debate_name, line) = name.split_once('@').unwrap_or((name, "main"));
    let debate = debate(home, record, debate_name)?;
    let lines: Vec<String> = record
        .lines_of_debate(&debate)?
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    if lines.iter().any(|l| l == line) {
        return Ok(Chosen {
            line: LineRef::new(&debate, line),
            why: None,
        });
    }
    Err(
        CliError::new(format!("debate {debate} has no line '{line}'"))
            .hint(format!("its lines: {}", lines.join(", "))),
    )
}

/// A revision resolved, and why its line was taken when the name did not say (a bare
/// `round-2`, `synthesis`…).
pub struct Picked {
    pub resolved: Resolved,
    pub chosen: Chosen,
}

/// Resolves a revision name against the current line.
pub fn resolve(ctx: &Ctx, home: &Home, record: &Record, name: &str) -> Result<Picked, CliError> {
    // A fully qualified name needs no current line, and finding it reads every live line.
    let current = if name.contains('@') {
        None
    } else {
        current_line(ctx, home, record)
    };
    let questions = IndexQuestions { home, record };
    let resolved = anvil_core::review::revision::resolve_with(
        record,
        name,
        current.as_ref().map(|c| &c.line),
        Some(&questions),
    )
    .map_err(|e| match e {
        RevisionError::Ambiguous { name, named } => ambiguous(record, &name, &named),
        e => CliError::new(e.to_string()).hint(
            "revisions: round-N, round-N/ROLE, synthesis, LINE, LINE:round-N, NAME@LINE:round-N, \
             LINE~K, or a commit id prefix; NAME is any name of a debate (its id, its number in \
             `anvil log`, words of its id or question)",
        ),
    })?;
    let bare = anvil_core::review::revision::is_bare(name) || name.trim().is_empty();
    let why = current
        .filter(|c| bare && c.line == resolved.history.line)
        .and_then(|c| c.why);
    let chosen = Chosen {
        line: resolved.history.line.clone(),
        why,
    };
    Ok(Picked { resolved, chosen })
}

/// The error for a name that matched several debates: the newest of them with their
/// questions, and how to name one.
pub fn ambiguous(record: &Record, name: &str, named: &Named) -> CliError {
    let how = named.rule.map_or("", |r| r.words());
    let mut list = String::from("name one of them:");
    let width = named
        .debates
        .iter()
        .take(LISTED)
        .map(|d| d.chars().count())
        .max()
        .unwrap_or(0);
    for debate in named.debates.iter().take(LISTED) {
        let question = question_of(record, debate).unwrap_or_default();
        list.push_str(&format!(
            "\n  {:<width$}  {}",
            crate::term::visible(debate),
            crate::term::visible(anvil_core::model::state::first_line(&question))
        ));
    }
    if named.debates.len() > LISTED {
        list.push_str(&format!("\n  … and {} more", named.debates.len() - LISTED));
    }
    CliError::new(format!(
        "'{}' names {} debates ({how})",
        crate::term::visible(name),
        named.debates.len()
    ))
    .hint(list)
}

/// The question of a debate, as its main line (or its first line) holds it.
fn question_of(record: &Record, debate: &str) -> Option<String> {
    let lines = anvil_core::review::history::lines_of(record, debate).ok()?;
    let (_, tip) = lines.first()?;
    anvil_core::review::history::state_at(record, *tip)
        .ok()
        .map(|s| s.setup.question)
}

impl Ctx {
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
                let id = self::debate(home, &record, debate)?;
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
