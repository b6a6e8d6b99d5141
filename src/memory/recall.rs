//! Recall: when a debate starts, the earlier conclusions of this project related to its
//! question, found through the search index and read from the record, for the debaters to
//! build on or challenge.

use anvil_core::home::{Home, LineRef};
use anvil_core::model::state::Recalled;
use anvil_core::record::store::Record;
use anvil_core::review::history::{self, LineHistory};

use crate::error::CliError;
use crate::memory::index::Index;

/// At most this many conclusions are recalled.
pub const MAX_RECALLED: usize = 3;
/// Each conclusion's text is cut to this many bytes.
const MAX_TEXT: usize = 4 * 1024;

/// What was recalled: the entries for the setup, and their texts as one markdown document.
#[derive(Debug, Default)]
pub struct Recall {
    pub recalled: Vec<Recalled>,
    pub text: String,
}

/// The conclusions related to `question`, leaving out the debate `skip` names (the one a
/// `--follow-up` already brings). A project with no record yet recalls nothing.
pub fn recall(home: &Home, question: &str, skip: Option<&str>) -> Result<Recall, CliError> {
    let dir = home.record_dir();
    if !dir.join("HEAD").is_file() {
        return Ok(Recall::default());
    }
    let record = Record::open(&dir)?;
    let index = Index::open(home, &record)?;
    let skip = |debate: &str| skip.is_some_and(|s| !s.is_empty() && debate.starts_with(s));
    let mut out = Recall::default();
    for found in index.related(question, MAX_RECALLED, &skip)? {
        let line = LineRef::new(&found.debate, &found.line);
        let Some((question, text)) = read(&record, &line, &found.commit)? else {
            continue;
        };
        let recalled = Recalled {
            line: line.to_string(),
            commit: found.commit.clone(),
            question,
        };
        out.text.push_str(&format!(
            "### {} — {}\n\nSynthesis recorded {}, commit {} (`anvil show {}`); it shares {} of \
             the {} significant words of this question.\n\n{}\n\n",
            recalled.line,
            anvil_core::model::state::first_line(&recalled.question),
            crate::view::time(found.time),
            recalled.commit,
            recalled.commit,
            found.matched,
            found.of,
            cut(text.trim(), MAX_TEXT)
        ));
        out.recalled.push(recalled);
    }
    Ok(out)
}

/// The question of `line` and the text of its phase `commit`, from the record.
fn read(
    record: &Record,
    line: &LineRef,
    commit: &str,
) -> Result<Option<(String, String)>, CliError> {
    let Ok(id) = commit.parse::<gix::ObjectId>() else {
        return Ok(None);
    };
    let history = LineHistory::load(record, line)?;
    let Some(entry) = history.entries.iter().find(|e| e.commit == id) else {
        return Ok(None);
    };
    let question = history::state_at(record, entry.commit)?.setup.question;
    Ok(Some((question, crate::view::phase_text(record, entry)?)))
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let end = text.floor_char_boundary(max);
    format!(
        "{}\n\n[… cut here; the whole synthesis is in the record]",
        &text[..end]
    )
}
