//! Earlier results that a new debate builds on (`--follow-up`) or weighs against each other
//! (`--versus`): a file, or the synthesis of a debate recorded here.
//!
//! Reading one needs the live lines and the record's layout, which [`crate::home`] and [`crate::record::schema`] own;
//! [`crate::review::context`] only bundles the texts, so the debate can depend on it and not the
//! other way round.

use std::path::Path;

use crate::home::{Home, LineRef};
use crate::model::state::{Inputs, Role, State};
use crate::record::store::Record;
use crate::review::context::{ContextError, Earlier};

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

/// An earlier result: a file, or the synthesis of a recorded debate `DEBATE[@LINE]` (from its
/// live files, else from the record); a line without a synthesis gives its whole transcript.
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
    match matches.as_slice() {
        [one] => {
            let path = home.transcript_path(one);
            let transcript = crate::fsutil::read_optional(&path)
                .map_err(|source| ContextError::Read { path, source })?
                .unwrap_or_default();
            return Ok(synthesis_of(&transcript).unwrap_or(transcript));
        }
        [] => {}
        many => {
            return Err(fail(format!(
                "ambiguous: it matches {}",
                many.iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    from_record(home, option, source, &wanted)?.ok_or_else(|| {
        fail(
            "no such file, and no recorded debate of that name; `anvil status` lists debates"
                .into(),
        )
    })
}

fn synthesis_of(transcript: &str) -> Option<String> {
    transcript
        .rsplit_once("\n## Synthesis\n")
        .map(|(_, s)| format!("## Synthesis\n{}", s.trim_start()))
}

/// The synthesis a line's record holds, if the line is in the record and finished.
fn from_record(
    home: &Home,
    option: &'static str,
    name: &str,
    wanted: &LineRef,
) -> Result<Option<String>, ContextError> {
    if !home.record_dir().join("HEAD").is_file() {
        return Ok(None);
    }
    let record_error = |source| ContextError::Record {
        option,
        name: name.to_owned(),
        source,
    };
    let record = Record::open(&home.record_dir()).map_err(record_error)?;
    // The first debate the name names that has the line (any name but words of a question:
    // see `review::names`).
    let mut found = None;
    for debate in crate::review::names::in_record(&record, &wanted.debate)
        .map_err(record_error)?
        .debates
    {
        if let Some(tip) = record.tip(&debate, &wanted.line).map_err(record_error)? {
            found = Some((debate, tip));
            break;
        }
    }
    let Some((debate, tip)) = found else {
        return Ok(None);
    };
    let read = |path: &str| -> Result<Option<String>, ContextError> {
        Ok(record
            .read(tip, path)
            .map_err(record_error)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    };
    let Some(state_text) = read(crate::record::schema::STATE_FILE)? else {
        return Ok(None);
    };
    let state = State::from_markdown(&state_text, Path::new(crate::record::schema::STATE_FILE))
        .map_err(|source| ContextError::State {
            option,
            name: name.to_owned(),
            source,
        })?;
    let path = crate::record::schema::phase_file(
        state.progress.step,
        Role::Synthesizer.name(),
        crate::record::schema::PhaseFile::Response,
    );
    match read(&path)? {
        Some(text) => Ok(Some(format!("## Synthesis\n\n{text}"))),
        None => Err(ContextError::Source {
            option,
            name: name.to_owned(),
            message: format!(
                "debate {debate}@{} has no synthesis yet; wait until it is done",
                wanted.line
            ),
        }),
    }
}
