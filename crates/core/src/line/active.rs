//! Which lines can still move, found without reading every debate.
//!
//! A project that has debated for years holds thousands of finished lines; `anvil status` and
//! every command that needs "the active line" care about the few that are not over. Each
//! line that becomes active (start, branch, resume) leaves an empty marker
//! `.anvil/active/DEBATE@LINE`; readers load only the marked lines and take away the markers
//! of lines that have ended since. The Stop hook never touches the index: a line only ends
//! there, and an ended line's marker is cleared by the next reader.
//!
//! A home made before the index existed has no `active/.complete`: the first reader scans all
//! live files once and writes the markers.

use std::io;
use std::path::PathBuf;

use crate::home::{Home, LineRef};
use crate::model::state::State;

const COMPLETE: &str = ".complete";

fn dir(home: &Home) -> PathBuf {
    home.active_dir()
}

/// Notes that `line` is active.
pub fn mark(home: &Home, line: &LineRef) -> io::Result<()> {
    let path = dir(home).join(line.to_string());
    if path.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir(home))?;
    std::fs::write(path, b"")
}

/// Takes `line` out of the index.
pub(crate) fn unmark(home: &Home, line: &LineRef) -> io::Result<()> {
    crate::fsutil::remove_if_present(&dir(home).join(line.to_string()))
}

/// The active lines with their live state, sorted by line. Markers of lines that are over or
/// whose live files are gone are cleared on the way.
pub fn lines(home: &Home) -> io::Result<Vec<(LineRef, State)>> {
    if !dir(home).join(COMPLETE).is_file() {
        rebuild(home)?;
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir(home))? {
        let name = entry?.file_name();
        let Some(line) = name
            .to_str()
            .filter(|n| !n.starts_with('.'))
            .and_then(parse)
        else {
            continue;
        };
        match State::load(&home.state_path(&line)) {
            Ok(state) if !state.progress.status.is_over() => out.push((line, state)),
            // A state file edited to say "over" does not hide a line the record has active
            // (the next transaction rebuilds the file from the record).
            Ok(_) if let Some(recorded) = active_in_record(home, &line) => {
                out.push((line, recorded))
            }
            // A damaged state file is not the index's business: the line stays listed.
            Err(crate::model::state::StateError::Read { source, .. })
                if source.kind() == io::ErrorKind::NotFound =>
            {
                unmark(home, &line)?
            }
            Err(_) => {}
            Ok(_) => unmark(home, &line)?,
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The line's state as the record has it, when the record has it active.
fn active_in_record(home: &Home, line: &LineRef) -> Option<State> {
    let record = crate::record::store::Record::open(&home.record_dir()).ok()?;
    let tip = record.tip(&line.debate, &line.line).ok()??;
    let state = crate::review::history::line_state(&record, line, tip).ok()?;
    (!state.progress.status.is_over()).then_some(state)
}

/// A marker's name back to the line it stands for (`DEBATE@LINE`, both valid names).
fn parse(name: &str) -> Option<LineRef> {
    let (debate, line) = name.split_once('@')?;
    LineRef::valid(debate, line)
}

/// Marks every live line that is not over, then records that the index is whole. Lines that
/// become active meanwhile mark themselves, so nothing is missed.
fn rebuild(home: &Home) -> io::Result<()> {
    std::fs::create_dir_all(dir(home))?;
    for line in home.live_lines()? {
        if State::load(&home.state_path(&line)).is_ok_and(|s| !s.progress.status.is_over()) {
            mark(home, &line)?;
        }
    }
    crate::fsutil::write_atomic(&dir(home).join(COMPLETE), b"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(question: &str) -> crate::model::state::Setup {
        serde_saphyr::from_str(&format!(
            "question: \"{question}\"\nmode: analyst\nrounds: 1\n"
        ))
        .unwrap()
    }

    #[test]
    fn the_index_lists_active_lines_builds_itself_once_and_forgets_ended_ones() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let a = crate::line::start::start(&home, setup("first?"), None)
            .unwrap()
            .line;
        let b = crate::line::start::start(&home, setup("second?"), None)
            .unwrap()
            .line;
        // A home from before the index: the first reader rebuilds it from the live files.
        std::fs::remove_dir_all(home.active_dir()).unwrap();
        let listed: Vec<LineRef> = lines(&home).unwrap().into_iter().map(|(l, _)| l).collect();
        let mut both = vec![a.clone(), b.clone()];
        both.sort();
        assert_eq!(listed, both);
        crate::line::control::cancel(&home, &a, "enough").unwrap();
        let listed: Vec<LineRef> = lines(&home).unwrap().into_iter().map(|(l, _)| l).collect();
        assert_eq!(listed, std::slice::from_ref(&b));
        assert!(!home.active_dir().join(a.to_string()).exists());
        assert_eq!(
            home.live_lines_with_prefix(&b.debate[..b.debate.len() - 2])
                .unwrap(),
            [b]
        );
    }
}
