//! Claude Code's own record of a session: the transcript it writes as JSONL, one line per
//! content block, whose path every hook input names. anvil reads its end for the text of the
//! turn that ended (when the hook input does not hand it over), for what that turn cost, and
//! to see whether a session was shown a debate's prompt.
//!
//! Claude Code writes a turn a moment after the turn ends, so some reads wait for it, briefly;
//! and a hook input may name anything, so only regular files are read, and only their end.

use std::path::Path;

/// How much of the transcript's end is read for a turn's provenance: a turn's entries, short
/// of huge tool results (whose calls then go uncounted).
pub(crate) const PROVENANCE_BYTES: u64 = 512 * 1024;

/// What one look at a transcript that may lag behind the turn found.
enum Look<T> {
    Found(T),
    /// Not there yet: look again.
    NotYet,
    /// Will not come: stop looking.
    Never,
}

/// Claude Code writes a turn to its transcript a moment after the turn ends (at the first stop
/// of a `claude -p` run the file may not even exist yet): look again every `every` until
/// something is found, a look says it never will be, or `patience` has passed.
fn wait_for<T>(
    patience: std::time::Duration,
    every: std::time::Duration,
    mut look: impl FnMut() -> Look<T>,
) -> Option<T> {
    let deadline = std::time::Instant::now() + patience;
    loop {
        match look() {
            Look::Found(found) => return Some(found),
            Look::Never => return None,
            Look::NotYet if std::time::Instant::now() >= deadline => return None,
            Look::NotYet => std::thread::sleep(every),
        }
    }
}

/// The provenance of the turn that ended with `text`, handed over by the hook input, read
/// from the end of the transcript, waited for while the transcript lags (25 ms apart, a
/// second at most: a busy machine lags that long); a transcript that does not catch up
/// records nothing. (A text read from the transcript needs no wait: its tail already holds
/// the turn, and `drive` reads the provenance from that tail.)
pub(crate) fn turn_provenance(
    transcript: &Path,
    text: &str,
) -> Option<crate::model::provenance::Provenance> {
    let (patience, every) = (
        std::time::Duration::from_secs(1),
        std::time::Duration::from_millis(25),
    );
    wait_for(patience, every, || {
        match read_tail(transcript, PROVENANCE_BYTES) {
            None if may_appear(transcript) => Look::NotYet,
            None => Look::Never,
            Some(tail) => match crate::model::provenance::from_transcript_tail(&tail, Some(text)) {
                Some(found) => Look::Found(found),
                None => Look::NotYet,
            },
        }
    })
}

/// Is `path` a transcript that Claude Code has not created yet? At the first stop of a
/// `claude -p` run the hook may come before the file: a `.jsonl` that is missing in a folder
/// that exists is waited for like one that lags.
fn may_appear(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
        && path.parent().is_some_and(Path::is_dir)
        && !path.exists()
}

/// Did the session that claims a line see its prompt (`needle`, the line's tag)? The
/// transcript is looked at again (5 ms apart, 1.5 s at most) until it holds an assistant text
/// before deciding that the session never saw the prompt. This runs once per claimed line,
/// never per stop. `has_text`: the transcript is already known to hold an assistant text (no
/// wait, no re-read).
pub(crate) fn saw_prompt(transcript: &Path, needles: &[String], has_text: bool) -> bool {
    let (patience, every) = (
        std::time::Duration::from_millis(1500),
        std::time::Duration::from_millis(5),
    );
    wait_for(patience, every, || {
        if needles.iter().any(|needle| mentions(transcript, needle)) {
            Look::Found(())
        } else if has_text || last_assistant_text(transcript).is_some() {
            Look::Never
        } else {
            Look::NotYet
        }
    })
    .is_some()
}

/// The most of a transcript's end that is read for the last assistant text. The text is at
/// the end; a message larger than this is not looked for in the transcript (Claude Code hands
/// it over whole as `last_assistant_message`, which has no such bound).
pub(crate) const TAIL_BYTES: u64 = 8 * 1024 * 1024;

/// The most of a transcript's end that is searched for a prompt's tag: it was handed out in
/// the turn that just ended, so it is near the end.
const SCAN_BYTES: u64 = 64 * 1024 * 1024;

/// Opens `path` for reading only if it is a regular file. A FIFO, a device (`/dev/zero`), a
/// socket or a directory is refused: the hook must never block on, or read without end from,
/// whatever a hook input names. The open itself does not wait for a FIFO's writer.
fn open_regular(path: &Path) -> Option<(std::fs::File, u64)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).ok()?;
    let meta = file.metadata().ok()?;
    meta.is_file().then_some((file, meta.len()))
}

/// The Claude Code version the newest entry of a transcript's tail names that names one (each
/// conversation entry carries `"version":"2.1.197"`; metadata records carry none).
pub(crate) fn client_version_in(tail: &[u8]) -> Option<(u32, u32, u32)> {
    tail.split(|b| *b == b'\n').rev().find_map(|line| {
        let key = b"\"version\":\"";
        let at = gix::bstr::ByteSlice::find(line, key)? + key.len();
        let rest = &line[at..];
        let end = rest.iter().position(|b| *b == b'"')?;
        crate::claude::protocol::parse_version(std::str::from_utf8(&rest[..end]).ok()?)
    })
}

/// The version of the newest transcript entry that names one, however many metadata records
/// (and however long an attachment) came after it: the end of the file is read in windows
/// that grow fourfold from 16 KB, up to [`TAIL_BYTES`]. Ordinary stops find it in the first.
pub(crate) fn newest_version(transcript: &Path) -> Option<(u32, u32, u32)> {
    let (_, len) = open_regular(transcript)?;
    let mut window: u64 = 16 * 1024;
    loop {
        let tail = read_tail(transcript, window)?;
        if let Some(version) = client_version_in(&tail) {
            return Some(version);
        }
        if window >= len || window >= TAIL_BYTES {
            return None;
        }
        window = (window * 4).min(TAIL_BYTES);
    }
}

/// The last `max` bytes of a regular file, from the start of a line: a first line cut by the
/// bound is left out. `None` for anything that is not a readable regular file.
pub(crate) fn read_tail(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut file, len) = open_regular(path)?;
    let start = len.saturating_sub(max);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    // A file that grows while it is read is still read up to the bound only.
    file.take(max).read_to_end(&mut bytes).ok()?;
    if start > 0 {
        let cut = bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..cut);
    }
    Some(bytes)
}

/// The last `max` bytes of `bytes` (a tail that starts at a line), from the start of a line:
/// a first line cut by the bound is left out, as [`read_tail`] leaves it out of the file.
pub(crate) fn tail_from_line(bytes: &[u8], max: usize) -> &[u8] {
    let start = bytes.len().saturating_sub(max);
    if start == 0 {
        return bytes;
    }
    let rest = &bytes[start..];
    let cut = rest
        .iter()
        .position(|b| *b == b'\n')
        .map_or(rest.len(), |i| i + 1);
    &rest[cut..]
}

/// Does the session's transcript contain `needle`? Searches the end of the file, a block at a
/// time, so memory stays small whatever the file's size.
fn mentions(transcript: &Path, needle: &str) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let needle = needle.as_bytes();
    let Some((mut file, len)) = open_regular(transcript) else {
        return false;
    };
    if needle.is_empty()
        || file
            .seek(SeekFrom::Start(len.saturating_sub(SCAN_BYTES)))
            .is_err()
    {
        return false;
    }
    let mut file = file.take(SCAN_BYTES);
    let mut window: Vec<u8> = Vec::with_capacity(64 * 1024 + needle.len());
    let mut block = vec![0u8; 64 * 1024];
    loop {
        let n = match file.read(&mut block) {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        window.extend_from_slice(&block[..n]);
        if gix::bstr::ByteSlice::contains_str(window.as_slice(), needle) {
            return true;
        }
        // Keep what could be the start of a needle cut by the block's end.
        let keep = needle.len().saturating_sub(1).min(window.len());
        window.drain(..window.len() - keep);
    }
}

/// The text of the last assistant message in a Claude Code transcript (JSONL, one line per
/// content block). Tool calls and thinking are skipped; several text blocks of one message are
/// joined. A line that is not JSON (a write in progress) is ignored. Only the end of the file
/// ([`TAIL_BYTES`]) is read, and only if it is a regular file.
pub(crate) fn last_assistant_text(transcript: &Path) -> Option<String> {
    assistant_text_in(&read_tail(transcript, TAIL_BYTES)?)
}

/// The text of the last assistant message in `tail`, the end of a transcript read from the
/// start of a line (see [`last_assistant_text`]).
pub(crate) fn assistant_text_in(tail: &[u8]) -> Option<String> {
    let mut message_id: Option<String> = None;
    let mut texts: Vec<String> = Vec::new();
    for line in tail.split(|b| *b == b'\n') {
        let Ok(entry) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        if entry.get("type").and_then(|t| t.as_str()) != Some("assistant") {
            continue;
        }
        let Some(message) = entry.get("message") else {
            continue;
        };
        let block_texts: Vec<String> = message
            .get("content")
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
            .filter_map(|b| b.get("text").and_then(|t| t.as_str()).map(str::to_owned))
            .filter(|t| !t.trim().is_empty())
            .collect();
        if block_texts.is_empty() {
            continue;
        }
        let id = message
            .get("id")
            .and_then(|i| i.as_str())
            .map(str::to_owned);
        if id.is_none() || id != message_id {
            texts.clear();
            message_id = id;
        }
        texts.extend(block_texts);
    }
    (!texts.is_empty()).then(|| texts.join("\n\n"))
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_client_version_is_the_newest_entrys() {
        let tail = b"{\"type\":\"user\",\"version\":\"2.1.100\"}\n\
            {\"type\":\"assistant\",\"version\":\"2.1.197\",\"message\":{}}\n\
            {\"type\":\"attachment\"}\n";
        assert_eq!(client_version_in(tail), Some((2, 1, 197)));
        assert_eq!(client_version_in(b"{\"version\":\"beta\"}\n"), None);
        assert_eq!(client_version_in(b""), None);
    }

    use super::*;

    #[test]
    fn only_a_missing_jsonl_in_a_folder_that_exists_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        assert!(may_appear(&dir.path().join("session.jsonl")));
        assert!(!may_appear(&dir.path().join("session.txt")));
        assert!(!may_appear(&dir.path().join("gone/session.jsonl")));
        assert!(!may_appear(Path::new("session.jsonl")));
        std::fs::write(dir.path().join("there.jsonl"), b"").unwrap();
        assert!(!may_appear(&dir.path().join("there.jsonl")));
    }

    #[test]
    fn a_tail_cut_from_read_bytes_is_the_tail_read_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let lines: Vec<String> = (0..200).map(|i| format!("{{\"n\":{i}}}")).collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let whole = read_tail(&path, 10_000).unwrap();
        for max in [0, 1, 7, 100, 999, 2000, 10_000] {
            assert_eq!(
                tail_from_line(&whole, max),
                read_tail(&path, max as u64).unwrap().as_slice(),
                "max {max}"
            );
        }
    }
}
