//! Earlier results that a new debate builds on (`--follow-up`) or weighs against each other
//! (`--versus`): a file, or the conclusion of a debate recorded here.
//!
//! A debate's conclusion is what its synthesis phase recorded, read from the record (the live
//! files only help find the debate by a prefix of its id): a heading in a debater's text
//! cannot pass for it. A line without a synthesis gives its whole debate, headed by a line
//! that says it reached no conclusion. Both read as people read them: tags as words.
//!
//! Reading one needs the live lines and the record's layout, which [`crate::home`] and [`crate::record::schema`] own;
//! [`crate::review::context`] only bundles the texts, so the debate can depend on it and not the
//! other way round.

use std::path::Path;

use crate::home::{Home, LineRef};
use crate::model::markers::readable;
use crate::model::state::Inputs;
use crate::record::store::Record;
use crate::review::context::{ContextError, Earlier};
use crate::review::history::{self, LineHistory};

/// Reads the earlier results `inputs` names. Relative paths are found from `cwd`.
pub fn read(home: &Home, cwd: &Path, inputs: &Inputs) -> Result<Earlier, ContextError> {
    let follow_up = match &inputs.follow_up {
        Some(source) => Some((source.clone(), read_result(home, cwd, "follow-up", source)?)),
        None => None,
    };
    let mut versus = Vec::new();
    for source in &inputs.versus {
        versus.push((source.clone(), read_result(home, cwd, "versus", source)?));
    }
    Ok(Earlier {
        follow_up,
        versus,
        recalled: None,
    })
}

/// An earlier result: a file, or the conclusion of a recorded debate `DEBATE[@LINE]` (see the
/// module's documentation).
fn read_result(
    home: &Home,
    cwd: &Path,
    option: &'static str,
    source: &str,
) -> Result<String, ContextError> {
    let path = cwd.join(source);
    if path.is_file() {
        return std::fs::read_to_string(&path)
            .map_err(|source| ContextError::Read { path, source });
    }
    let fail = |message: String| ContextError::Source {
        option,
        name: source.to_owned(),
        message,
    };
    let Some(wanted) = LineRef::parse(source) else {
        return Err(fail(
            "no such file, and not a debate name (DEBATE or DEBATE@LINE)".into(),
        ));
    };
    // A number is a place in `anvil log`'s order (see `review::names`), found in the record.
    let lines = match crate::review::names::number(&wanted.debate) {
        Some(_) => Vec::new(),
        None => home.live_lines().map_err(|source| ContextError::Read {
            path: home.debates_dir(),
            source,
        })?,
    };
    let matches: Vec<&LineRef> = lines
        .iter()
        .filter(|l| l.line == wanted.line && l.debate.starts_with(&wanted.debate))
        .collect();
    let exact = match matches.as_slice() {
        [one] => Some(*one),
        [] => None,
        many => {
            return Err(fail(format!(
                "ambiguous: it matches {}",
                many.iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };
    from_record(
        home,
        option,
        source,
        exact.unwrap_or(&wanted),
        exact.is_some(),
    )?
    .ok_or_else(|| {
        fail(
            "no such file, and no recorded debate of that name; `anvil status` lists debates"
                .into(),
        )
    })
}

/// The conclusion of `wanted`'s line in the record (its debate named in full when `exact`,
/// else by a prefix), or its whole debate when it has none; `None` when the record has no
/// such line.
fn from_record(
    home: &Home,
    option: &'static str,
    name: &str,
    wanted: &LineRef,
    exact: bool,
) -> Result<Option<String>, ContextError> {
    if !home.record_dir().join("HEAD").is_file() {
        return Ok(None);
    }
    let record_error = |source| ContextError::Record {
        option,
        name: name.to_owned(),
        source,
    };
    let history_error = |source| ContextError::History {
        option,
        name: name.to_owned(),
        source,
    };
    let record = Record::open(&home.record_dir()).map_err(record_error)?;
    let debates = if exact {
        vec![wanted.debate.clone()]
    } else {
        // Any name but words of a question: see `review::names`.
        crate::review::names::in_record(&record, &wanted.debate)
            .map_err(record_error)?
            .debates
    };
    // The first debate the name names that has the line.
    let mut found = None;
    for debate in debates {
        if let Some(tip) = record.tip(&debate, &wanted.line).map_err(record_error)? {
            found = Some((LineRef::new(&debate, &wanted.line), tip));
            break;
        }
    }
    let Some((line, tip)) = found else {
        return Ok(None);
    };
    let history = LineHistory::at(&record, &line, tip).map_err(history_error)?;
    if let Some((_, text)) = history::conclusion(&record, &history).map_err(history_error)? {
        return Ok(Some(format!("## Synthesis\n\n{}", readable(&text).trim())));
    }
    let state = history::line_state(&record, &line, tip).map_err(history_error)?;
    let debate = history::transcript(&record, &history, history.entries.len() - 1, &state)
        .map_err(history_error)?;
    Ok(Some(format!(
        "_{line} reached no conclusion: it has no synthesis ({}). What follows is its debate, \
         not a conclusion._\n\n{debate}",
        state.standing()
    )))
}
