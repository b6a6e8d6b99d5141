//! Claude Code's own record of a session: the transcript it writes as JSONL, one line per
//! content block, whose path every hook input names. anvil reads its end for the text of the
//! turn that ended (when the hook input does not hand it over), for what that turn cost, and
//! to see whether a session was shown a debate's prompt.
//!
//! A session's transcript grows to tens of megabytes (every tool's output is in it), and the
//! Stop hook runs at every turn: so the turn is read from the end backwards, a block at a
//! time, and only as far back as it goes ([`read_turn`]): a stop costs the same after 150 KB
//! of session as after 50 MB. A hook input may name anything, so only regular files are read,
//! and only their end.
//!
//! When is the turn there? Claude Code 2.1.332 writes the turn's assistant entry before it
//! runs the Stop hook (at every stop of the end-to-end tests' `claude -p` runs), so its
//! turn is read in one look, and a transcript that lacks it records the phase without its
//! cost rather than keep the person waiting. 2.1.197 writes the entry a moment after the hook
//! starts (its phases had no model and no tokens when read in one look): for it, and for a
//! client the hook cannot tell, the turn is looked for again, 5 ms apart (each look reads a
//! few kilobytes at the end), up to [`LAG_PATIENCE`]; only a transcript that never catches up
//! waits that long. A claim waits too ([`saw_prompt`], once per line): at the first stop of
//! `claude -p "$(anvil start …)"` the prompt may be written a moment after the hook starts.

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

/// How long a client that writes its turn after the Stop hook starts (2.1.197, or one the hook
/// cannot tell) is waited for: a busy machine lags that long.
pub(crate) const LAG_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// The first Claude Code seen to write a turn before running the Stop hook (see the module's
/// documentation); its turn is read in one look.
pub(crate) const WRITES_TURN_FIRST: (u32, u32, u32) = (2, 1, 332);

/// The provenance of the turn that ended with `text`, handed over by the hook input: read
/// from the turn at the end of the transcript. `lags` tells whether the client may still be
/// writing the turn, and then which turn was recorded last (Claude Code's message id): such a
/// client may not even have written the prompt of this turn yet, and a turn before it in the
/// same words (a canned refusal) must not be taken for this one. So for it a transcript whose
/// last turn is not this one is looked at again, 5 ms apart, up to [`LAG_PATIENCE`]; `None`
/// when the turn never comes. At the first stop of a `claude -p` run the file itself may come
/// after the hook: a `.jsonl` that is missing in a folder that exists is waited for like one
/// that lags.
pub(crate) fn turn_provenance(
    transcript: &Path,
    text: &str,
    lags: impl FnOnce() -> Option<Option<String>>,
) -> Option<crate::model::provenance::Provenance> {
    let look = |recorded: Option<&str>| match read_turn(transcript, false) {
        None if may_appear(transcript) => Look::NotYet,
        None => Look::Never,
        Some(turn) => match crate::model::provenance::from_turn(&turn.entries, Some(text)) {
            Some(found) if recorded.is_some() && found.turn.as_deref() == recorded => Look::NotYet,
            Some(found) => Look::Found(found),
            None => Look::NotYet,
        },
    };
    match lags() {
        None => match look(None) {
            Look::Found(found) => Some(found),
            Look::NotYet | Look::Never => None,
        },
        Some(recorded) => wait_for(LAG_PATIENCE, std::time::Duration::from_millis(5), || {
            look(recorded.as_deref())
        }),
    }
}

/// Is `path` a transcript that Claude Code has not created yet: a `.jsonl` that is missing in
/// a folder that exists?
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
        } else if has_text || read_turn(transcript, true).is_some_and(|t| t.text.is_some()) {
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

/// Does the session's transcript contain `needle`? Searches from the end backwards, a block
/// at a time, at most [`SCAN_BYTES`] back: the tag was handed out in the turn that just ended,
/// so a claim finds it in the first blocks however long the session, and memory stays small
/// whatever the file's size.
fn mentions(transcript: &Path, needle: &str) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    const SCAN_BLOCK: u64 = 64 * 1024;
    let needle = needle.as_bytes();
    let Some((mut file, len)) = open_regular(transcript) else {
        return false;
    };
    if needle.is_empty() {
        return false;
    }
    let floor = len.saturating_sub(SCAN_BYTES);
    let mut end = len;
    // The start of the block read before (the one after this in the file): a needle cut by
    // the boundary is whole in the block and what follows it.
    let mut carry: Vec<u8> = Vec::new();
    while end > floor {
        let from = end.saturating_sub(SCAN_BLOCK).max(floor);
        let mut window = vec![0u8; (end - from) as usize];
        if file.seek(SeekFrom::Start(from)).is_err() || file.read_exact(&mut window).is_err() {
            return false;
        }
        window.extend_from_slice(&carry);
        if gix::bstr::ByteSlice::contains_str(window.as_slice(), needle) {
            return true;
        }
        let keep = needle.len().saturating_sub(1).min(window.len());
        window.truncate(keep);
        carry = window;
        end = from;
    }
    false
}

/// The end of a transcript: its last turn and, when it was looked for, its last assistant
/// text.
pub(crate) struct TurnEnd {
    /// The last turn's entries, oldest first, led by the entry that started it (the prompt,
    /// or the Stop hook's continuation) when that is within [`PROVENANCE_BYTES`] of the end.
    pub entries: Vec<serde_json::Value>,
    /// The text of the last assistant message that has one (its text blocks joined; Claude
    /// Code writes one line per content block), within [`TAIL_BYTES`] of the end.
    pub text: Option<String>,
}

/// Reads the end of the transcript at `path` backwards, as far as it must: the last turn (up
/// to its start, within [`PROVENANCE_BYTES`]) and, with `text`, the last assistant text
/// (within [`TAIL_BYTES`]). Past the turn only lines that can be an assistant's entry are
/// parsed; a turn is usually a few kilobytes at the end of a file of any size. `None` for
/// anything that is not a readable regular file.
pub(crate) fn read_turn(path: &Path, text: bool) -> Option<TurnEnd> {
    use crate::model::provenance::is_turn_start;
    let reach = if text { TAIL_BYTES } else { PROVENANCE_BYTES };
    let mut lines = Backwards::open(path, reach)?;
    let mut turn = Vec::new();
    let mut in_turn = true;
    let mut last = if text {
        LastText::Looking
    } else {
        LastText::Off
    };
    while in_turn || last.looking() {
        let Some(line) = lines.next_line() else {
            break;
        };
        in_turn &= lines.consumed() <= PROVENANCE_BYTES;
        let may_answer = gix::bstr::ByteSlice::contains_str(line.as_slice(), "\"assistant\"");
        if !in_turn && !may_answer {
            continue;
        }
        // A line that is not JSON (a write in progress) is passed over.
        let Ok(entry) = serde_json::from_slice::<serde_json::Value>(&line) else {
            continue;
        };
        if last.looking() {
            last.see(&entry);
        }
        if in_turn {
            in_turn = !is_turn_start(&entry);
            turn.push(entry);
        }
    }
    turn.reverse();
    Some(TurnEnd {
        entries: turn,
        text: last.found(),
    })
}

/// The last assistant text, looked for from the end backwards: the text blocks of the last
/// assistant message that has any, gathered across its lines (newest first) until a line of
/// another message with text, or the start of its turn.
enum LastText {
    Off,
    Looking,
    Gathering { id: String, texts: Vec<Vec<String>> },
    Found(String),
}

impl LastText {
    fn looking(&self) -> bool {
        matches!(self, LastText::Looking | LastText::Gathering { .. })
    }

    fn see(&mut self, entry: &serde_json::Value) {
        *self = match std::mem::replace(self, LastText::Off) {
            LastText::Looking => match assistant_texts(entry) {
                None => LastText::Looking,
                Some((None, texts)) => LastText::Found(texts.join("\n\n")),
                Some((Some(id), texts)) => LastText::Gathering {
                    id,
                    texts: vec![texts],
                },
            },
            LastText::Gathering { texts, .. } if crate::model::provenance::is_turn_start(entry) => {
                LastText::Found(joined(texts))
            }
            LastText::Gathering { id, mut texts } => match assistant_texts(entry) {
                None => LastText::Gathering { id, texts },
                Some((Some(other), more)) if other == id => {
                    texts.push(more);
                    LastText::Gathering { id, texts }
                }
                Some(_) => LastText::Found(joined(texts)),
            },
            done => done,
        };
    }

    fn found(self) -> Option<String> {
        match self {
            LastText::Found(text) => Some(text),
            LastText::Gathering { texts, .. } => Some(joined(texts)),
            LastText::Off | LastText::Looking => None,
        }
    }
}

/// Texts gathered newest line first, in the order they were written.
fn joined(texts: Vec<Vec<String>>) -> String {
    texts
        .into_iter()
        .rev()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The message id and the non-empty text blocks of an assistant entry that has any. Tool
/// calls and thinking are not text.
fn assistant_texts(entry: &serde_json::Value) -> Option<(Option<String>, Vec<String>)> {
    if entry.get("type").and_then(|t| t.as_str()) != Some("assistant") {
        return None;
    }
    let message = entry.get("message")?;
    let texts: Vec<String> = message
        .get("content")
        .and_then(|c| c.as_array())
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
        .filter_map(|b| b.get("text").and_then(|t| t.as_str()).map(str::to_owned))
        .filter(|t| !t.trim().is_empty())
        .collect();
    if texts.is_empty() {
        return None;
    }
    let id = message
        .get("id")
        .and_then(|i| i.as_str())
        .map(str::to_owned);
    Some((id, texts))
}

/// Lines of a regular file from its end backwards, read a block at a time, never further back
/// than `max` bytes from the end: a line that starts before that bound is left out, as
/// [`read_tail`] leaves it out. Each block is as long as what is held already, so a long line
/// costs its length in copies, not its square.
struct Backwards {
    file: std::fs::File,
    /// Where the bytes held in `pending` start in the file.
    start: u64,
    /// How far back the lines may start.
    floor: u64,
    len: u64,
    /// The bytes from `start` that have not been handed out yet.
    pending: Vec<u8>,
}

impl Backwards {
    fn open(path: &Path, max: u64) -> Option<Backwards> {
        let (file, len) = open_regular(path)?;
        Some(Backwards {
            file,
            start: len,
            floor: len.saturating_sub(max),
            len,
            pending: Vec::new(),
        })
    }

    /// How many bytes from the end the lines handed out so far take.
    fn consumed(&self) -> u64 {
        self.len - self.start - self.pending.len() as u64
    }

    /// The next line from the end, without its newline; `None` once no whole line within the
    /// bound is left (or the file cannot be read).
    fn next_line(&mut self) -> Option<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        loop {
            if let Some(at) = self.pending.iter().rposition(|b| *b == b'\n') {
                let line = self.pending.split_off(at + 1);
                self.pending.truncate(at);
                return Some(line);
            }
            if self.start == self.floor {
                // The file's first line, whole; or a line the bound cut, left out.
                return (self.start == 0 && !self.pending.is_empty())
                    .then(|| std::mem::take(&mut self.pending));
            }
            let block = (self.pending.len() as u64)
                .max(BLOCK)
                .min(self.start - self.floor);
            let from = self.start - block;
            let mut read = vec![0u8; block as usize];
            self.file.seek(SeekFrom::Start(from)).ok()?;
            self.file.read_exact(&mut read).ok()?;
            read.append(&mut self.pending);
            self.pending = read;
            self.start = from;
        }
    }
}

/// What [`Backwards`] reads at once, at least.
const BLOCK: u64 = 16 * 1024;

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

    /// A transcript that lacks the turn is looked at once for a client that writes its turn
    /// first, and waited for (up to [`LAG_PATIENCE`]) for one that may still be writing it; a
    /// turn that comes meanwhile is found, and the turn recorded last is never taken for it.
    #[test]
    fn a_lagging_transcript_is_waited_for_only_when_the_client_may_lag() {
        let (_dir, path) = transcript(&[prompt("go"), said(Some("m1"), &["Before."])]);
        let started = std::time::Instant::now();
        assert!(turn_provenance(&path, "Now.", || None).is_none());
        assert!(started.elapsed() < LAG_PATIENCE / 2);
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                let mut text = std::fs::read_to_string(&path).unwrap();
                text.push_str(&format!("{}\n", said(Some("m2"), &["Now."])));
                std::fs::write(&path, text).unwrap();
            })
        };
        let found = turn_provenance(&path, "Now.", || Some(None)).expect("the turn, once written");
        assert_eq!(found.turn.as_deref(), Some("m2"));
        writer.join().unwrap();
        // In the words of the turn recorded last: that turn is not this one; this one, once
        // written, is.
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                let mut text = std::fs::read_to_string(&path).unwrap();
                text.push_str(&format!(
                    "{}\n{}\n",
                    prompt("again"),
                    said(Some("m3"), &["Now."])
                ));
                std::fs::write(&path, text).unwrap();
            })
        };
        let found = turn_provenance(&path, "Now.", || Some(Some("m2".into()))).unwrap();
        assert_eq!(found.turn.as_deref(), Some("m3"));
        writer.join().unwrap();
        // The turn recorded last, delivered again: nothing, after the wait.
        let started = std::time::Instant::now();
        assert!(turn_provenance(&path, "Now.", || Some(Some("m3".into()))).is_none());
        assert!(started.elapsed() >= LAG_PATIENCE);
    }

    /// A needle is found wherever it is: at the start, at the end, across the boundary of two
    /// blocks read backwards; a file without it, or with only part of it, does not mention it.
    #[test]
    fn a_needle_is_found_anywhere_in_the_end_read_backwards() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let needle = "<anvil-line id=\"d@main\">";
        let filler = "x".repeat(200 * 1024);
        for at in [0, 1, 64 * 1024 - 5, 128 * 1024 - 12, 200 * 1024] {
            let text = format!("{}{needle}{}", &filler[..at], &filler[at..]);
            std::fs::write(&path, &text).unwrap();
            assert!(mentions(&path, needle), "at {at}");
        }
        std::fs::write(&path, format!("{filler}{}", &needle[..needle.len() - 1])).unwrap();
        assert!(!mentions(&path, needle));
        assert!(!mentions(&path, ""));
        assert!(!mentions(Path::new("/dev/zero"), needle));
    }

    /// Read backwards, block by block, a file gives the lines its tail gives read forwards,
    /// under every bound: a line the bound cuts is left out, a line longer than a block is
    /// whole.
    #[test]
    fn lines_read_backwards_are_the_tails_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut lines: Vec<String> = (0..200).map(|i| format!("{{\"n\":{i}}}")).collect();
        lines.insert(150, format!("{{\"long\":\"{}\"}}", "x".repeat(70_000)));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        for max in [
            0,
            1,
            7,
            100,
            999,
            2000,
            10_000,
            75_000,
            size - 1,
            size,
            size + 9,
        ] {
            let tail = read_tail(&path, max).unwrap();
            let mut forwards: Vec<&[u8]> = tail.split(|b| *b == b'\n').collect();
            let mut backwards = Backwards::open(&path, max).unwrap();
            let mut read = Vec::new();
            while let Some(line) = backwards.next_line() {
                read.push(line);
            }
            read.reverse();
            if forwards.last().is_some_and(|l| l.is_empty())
                && read.last().is_some_and(Vec::is_empty)
            {
                forwards.pop();
                read.pop();
            }
            let forwards: Vec<Vec<u8>> = forwards
                .into_iter()
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect();
            let read: Vec<Vec<u8>> = read.into_iter().filter(|l| !l.is_empty()).collect();
            assert_eq!(read, forwards, "max {max}");
        }
    }

    fn transcript(lines: &[serde_json::Value]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn said(id: Option<&str>, texts: &[&str]) -> serde_json::Value {
        let content: Vec<_> = texts
            .iter()
            .map(|t| serde_json::json!({"type": "text", "text": t}))
            .collect();
        serde_json::json!({"type": "assistant", "message": {"id": id, "content": content}})
    }

    fn prompt(text: &str) -> serde_json::Value {
        serde_json::json!({"type": "user", "message": {"role": "user", "content": text}})
    }

    /// The last assistant text is the last message's text blocks, across its lines, and
    /// nothing of another message; the turn is what follows its prompt, with the prompt.
    #[test]
    fn the_turn_and_its_text_are_read_from_the_end() {
        let tool = serde_json::json!({"type": "assistant", "message": {"id": "m2",
            "content": [{"type": "tool_use", "name": "Bash"}]}});
        let result = serde_json::json!({"type": "user", "message": {"role": "user",
            "content": [{"type": "tool_result", "content": "x".repeat(100_000)}]}});
        let (_dir, path) = transcript(&[
            prompt("first"),
            said(Some("m1"), &["Earlier."]),
            prompt("second"),
            tool.clone(),
            result.clone(),
            said(Some("m3"), &["Part one."]),
            said(Some("m3"), &["Part two."]),
            serde_json::json!({"type": "last-prompt"}),
        ]);
        let turn = read_turn(&path, true).unwrap();
        assert_eq!(turn.text.as_deref(), Some("Part one.\n\nPart two."));
        let kinds: Vec<&str> = turn
            .entries
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "user",
                "assistant",
                "user",
                "assistant",
                "assistant",
                "last-prompt"
            ]
        );
        assert_eq!(turn.entries[0]["message"]["content"], "second");
        // Without the text, the same turn.
        let turn = read_turn(&path, false).unwrap();
        assert_eq!((turn.entries.len(), turn.text), (6, None));
        // A turn without text: its own calls, and the text of the turn before (as ever).
        let (_dir, path) = transcript(&[
            prompt("first"),
            said(Some("m1"), &["Earlier."]),
            prompt("second"),
            tool,
            result,
        ]);
        let turn = read_turn(&path, true).unwrap();
        assert_eq!(turn.text.as_deref(), Some("Earlier."));
        assert_eq!(turn.entries.len(), 3);
        // A message without an id stands alone.
        let (_dir, path) = transcript(&[said(None, &["A."]), said(None, &["B."])]);
        assert_eq!(read_turn(&path, true).unwrap().text.as_deref(), Some("B."));
    }

    /// Past the end's reach nothing is read: a turn longer than [`PROVENANCE_BYTES`] is cut
    /// (its oldest lines left out), and a text further back than [`TAIL_BYTES`] is not found.
    #[test]
    fn the_turn_is_read_within_its_reach() {
        let big = serde_json::json!({"type": "user", "message": {"role": "user",
            "content": [{"type": "tool_result", "content": "x".repeat(300 * 1024)}]}});
        let (_dir, path) =
            transcript(&[prompt("go"), big.clone(), big, said(Some("m"), &["Done."])]);
        let turn = read_turn(&path, true).unwrap();
        assert_eq!(turn.text.as_deref(), Some("Done."));
        assert_eq!(
            turn.entries.len(),
            2,
            "the prompt and one result are out of reach"
        );
        assert!(read_turn(Path::new("/dev/zero"), true).is_none());
    }
}
