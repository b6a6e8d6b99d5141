//! `anvil hook stop`: Claude Code's Stop hook.
//!
//! It runs at the end of every turn of every Claude session where anvil is installed, so the
//! path for "nothing to do here" is a JSON parse and a few `stat` calls. When this session
//! drives a line, the phase text goes to disk first, then the machine decides, then the record
//! and the live files follow. Whatever goes wrong, the hook answers with valid JSON that lets
//! Claude stop and says how to resume: a broken hook must never wedge a session.

use std::path::{Path, PathBuf};

use crate::claude::protocol::{HookInput, HookOutput};
use crate::home::{Home, LineRef};
use crate::line::stop::{self, Reply};

/// Handles one Stop event. `stdin` is the raw hook input; `cwd` is the process's directory,
/// used when the input names none.
pub fn stop(stdin: &[u8], cwd: &Path) -> HookOutput {
    let input: HookInput = match serde_json::from_slice(stdin) {
        Ok(input) => input,
        Err(e) => {
            // Without a session id nothing can be recorded; speak only where anvil lives.
            return match Home::find(cwd) {
                Some(_) => HookOutput::Message(format!(
                    "anvil: the Stop hook could not read its input ({e}); no phase was recorded. \
                     Run `anvil status` to see where the debate stands."
                )),
                None => HookOutput::Silent,
            };
        }
    };
    let Some((home, session)) = input.locate(cwd) else {
        return HookOutput::Silent;
    };
    let answer = match drive(&home, session, &input) {
        Ok(answer) => answer,
        Err(failure) => HookOutput::Message(failure.message()),
    };
    crate::claude::feedback::deliver(&home, session, answer)
}

/// Handles SessionStart: after a compaction or `/clear` the session no longer holds the debate
/// in its context, so the next phase's prompt must bring it up to date in full.
pub fn session_start(stdin: &[u8], cwd: &Path) -> HookOutput {
    let Ok(input) = serde_json::from_slice::<HookInput>(stdin) else {
        return HookOutput::Silent;
    };
    let Some((home, session)) = input.locate(cwd) else {
        return HookOutput::Silent;
    };
    crate::claude::feedback::register_start(&home, session, &input);
    if !matches!(input.source.as_deref(), Some("compact" | "clear")) {
        return HookOutput::Silent;
    }
    match crate::line::control::forget_session(&home, session) {
        Ok(()) => HookOutput::Silent,
        Err(e) => HookOutput::Message(format!("anvil: {e}")),
    }
}

struct Failure {
    line: Option<LineRef>,
    saved: Option<PathBuf>,
    error: String,
}

impl Failure {
    fn message(&self) -> String {
        let mut m = format!("anvil: {}", self.error);
        if let Some(path) = &self.saved {
            m.push_str(&format!(
                ". This phase's text is saved in {}",
                path.display()
            ));
        }
        match &self.line {
            Some(line) => m.push_str(&format!(
                ". The debate is paused; see `anvil status {line}`, fix the problem and continue it with `anvil resume {line}`."
            )),
            None => m.push('.'),
        }
        m
    }
}

fn drive(home: &Home, session: &str, input: &HookInput) -> Result<HookOutput, Failure> {
    let fail = |line: Option<&LineRef>, saved: Option<PathBuf>| {
        let line = line.cloned();
        move |e: &dyn std::fmt::Display| Failure {
            line,
            saved,
            error: e.to_string(),
        }
    };
    let (line, claimed) = match home.bound_line(session).map_err(|e| fail(None, None)(&e))? {
        Some(line) => (line, false),
        None => match home
            .claim_pending(session)
            .map_err(|e| fail(None, None)(&e))?
        {
            Some(line) => (line, true),
            None => return Ok(HookOutput::Silent),
        },
    };

    // The text, and the turn's provenance, from one read of the transcript's end: when the
    // hook input hands the text over, the transcript is read only for the provenance (it may
    // lag behind); when the text comes from the transcript, its tail already holds the turn.
    let handed = input
        .last_assistant_message
        .clone()
        .filter(|t| !t.trim().is_empty());
    let transcript = input.transcript_path.as_deref();
    let (text, from_tail) = match (handed, transcript) {
        (Some(text), _) => (Some(text), None),
        (None, Some(path)) => match read_tail(path, TAIL_BYTES) {
            Some(tail) => match assistant_text_in(&tail) {
                Some(text) => (Some(text), Some(tail)),
                None => (None, None),
            },
            None => (None, None),
        },
        (None, None) => (None, None),
    };

    // The phase text is on disk before anything else happens to it.
    let saved = match &text {
        Some(text) => {
            let path = home.incoming_path(&line);
            // A plain write: this copy only has to exist before anything else happens.
            std::fs::create_dir_all(home.line_dir(&line))
                .and_then(|()| std::fs::write(&path, text.as_bytes()))
                .map_err(|e| fail(Some(&line), None)(&e))?;
            Some(path)
        }
        None => None,
    };
    let seen = !claimed
        || transcript.is_some_and(|p| {
            saw_prompt(
                p,
                &crate::model::prompt::tag(&line.debate, &line.line),
                from_tail.is_some(),
            )
        });
    // What the turn cost, from the end of the transcript, only when there is a text to record.
    let provenance = match (transcript, &text, &from_tail) {
        (_, Some(text), Some(tail)) => crate::model::provenance::from_transcript_tail(
            tail_from_line(tail, PROVENANCE_BYTES as usize),
            Some(text),
        ),
        (Some(path), Some(text), None) => turn_provenance(path, text),
        _ => None,
    };
    // The one transaction of this stop: under the line's lock, from where the record says the
    // line stands; a second hook for the same stop waits, then sees a repeat.
    let reply = stop::stop(
        home,
        &line,
        stop::Stop {
            session,
            text: text.as_deref(),
            claimed,
            seen,
            provenance: provenance.as_ref(),
        },
    )
    .map_err(|e| fail(Some(&line), saved.clone())(&e))?;
    // Once the stop is answered, the safety copy has done its job (it stays after a failure).
    if let Some(path) = &saved {
        let _ = crate::fsutil::remove_if_present(path);
    }
    // A debate has just ended: the one stop where the record's maintenance is looked at (a
    // few directory listings; when it is due, a detached `anvil gc --auto` that nobody waits
    // for). Ordinary phases and sessions without a debate never pay for it.
    if matches!(reply, Reply::Finish { .. })
        && let Ok(config) = crate::model::config::Config::load(home.root())
    {
        crate::record::maintenance::start_if_due(&home.record_dir(), &config.gc_limits());
    }
    Ok(match reply {
        Reply::Block { prompt, notice } => HookOutput::Block {
            reason: prompt,
            notice,
        },
        Reply::Finish { notice } | Reply::Pause { notice } | Reply::Message { notice } => {
            HookOutput::Message(notice)
        }
        Reply::Silent => HookOutput::Silent,
    })
}

/// How much of the transcript's end is read for a turn's provenance: a turn's entries, short
/// of huge tool results (whose calls then go uncounted).
const PROVENANCE_BYTES: u64 = 512 * 1024;

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
fn turn_provenance(transcript: &Path, text: &str) -> Option<crate::model::provenance::Provenance> {
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
fn saw_prompt(transcript: &Path, needle: &str, has_text: bool) -> bool {
    let (patience, every) = (
        std::time::Duration::from_millis(1500),
        std::time::Duration::from_millis(5),
    );
    wait_for(patience, every, || {
        if mentions(transcript, needle) {
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
pub const TAIL_BYTES: u64 = 8 * 1024 * 1024;

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

/// The last `max` bytes of a regular file, from the start of a line: a first line cut by the
/// bound is left out. `None` for anything that is not a readable regular file.
fn read_tail(path: &Path, max: u64) -> Option<Vec<u8>> {
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
fn tail_from_line(bytes: &[u8], max: usize) -> &[u8] {
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
        if window.windows(needle.len()).any(|w| w == needle) {
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
pub fn last_assistant_text(transcript: &Path) -> Option<String> {
    assistant_text_in(&read_tail(transcript, TAIL_BYTES)?)
}

/// The text of the last assistant message in `tail`, the end of a transcript read from the
/// start of a line (see [`last_assistant_text`]).
fn assistant_text_in(tail: &[u8]) -> Option<String> {
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
    use super::*;
    use proptest::prelude::*;

    const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";

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

    /// A project whose debate is bound to [`SESSION`], one per property (made once: a
    /// record per case would cost more than the properties), used by one case at a time.
    fn project_with_debate(
        cell: &'static std::sync::OnceLock<std::sync::Mutex<(tempfile::TempDir, Home, LineRef)>>,
    ) -> std::sync::MutexGuard<'static, (tempfile::TempDir, Home, LineRef)> {
        cell.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let home = Home::init(dir.path()).unwrap();
            let setup = crate::model::options::Options {
                question: "Q?".into(),
                rounds: Some(10),
                ..Default::default()
            }
            .into_setup()
            .unwrap();
            let line = crate::line::start::start(&home, setup, Some(SESSION))
                .unwrap()
                .line;
            std::sync::Mutex::new((dir, home, line))
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
    }

    type Fixture = std::sync::OnceLock<std::sync::Mutex<(tempfile::TempDir, Home, LineRef)>>;
    static BYTES: Fixture = std::sync::OnceLock::new();
    static FIELDS: Fixture = std::sync::OnceLock::new();

    /// Whatever the hook answers is one JSON object that Claude Code can read.
    fn assert_protocol(answer: &HookOutput) {
        if let Some(json) = answer.to_json() {
            let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
            assert!(value.is_object(), "{json}");
            assert!(!json.contains('\n'), "one line: {json}");
        }
    }

    /// Any JSON value, a few levels deep, for the fields of the hook input.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            ".{0,40}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                    .prop_map(|m| { serde_json::Value::Object(m.into_iter().collect()) }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(2048)))]

        /// Bytes that are not Claude Code's hook input never panic the hook and never change
        /// the debate: at most a message, as one JSON line.
        #[test]
        fn any_bytes_as_hook_input_are_answered_without_a_panic(
            bytes in prop::collection::vec(any::<u8>(), 0..512),
        ) {
            let fixture = project_with_debate(&BYTES);
            let (dir, home, line) = &*fixture;
            let before = crate::fsutil::read_optional(&home.state_path(line)).unwrap();
            let answer = stop(&bytes, dir.path());
            assert_protocol(&answer);
            let after = crate::fsutil::read_optional(&home.state_path(line)).unwrap();
            prop_assert_eq!(before, after);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(1024)))]

        /// Hook input of the right shape with fields of any type or content: never a panic,
        /// always a protocol answer; a field of the wrong type is an unreadable input, and a
        /// turn of this session's debate is recorded (the step moves by one) or answered as
        /// before; once the debate is over the hook is silent for it.
        #[test]
        fn any_fields_in_hook_input_are_answered_without_a_panic(
            session in prop_oneof![Just(SESSION.to_owned()), ".{0,20}"],
            message in prop_oneof![
                any_json(),
                ".{0,200}".prop_map(serde_json::Value::from),
            ],
            transcript in prop_oneof![
                Just(serde_json::Value::Null),
                Just(serde_json::Value::from("/dev/null")),
                any_json(),
            ],
            active in prop_oneof![any::<bool>().prop_map(serde_json::Value::from), any_json()],
        ) {
            let fixture = project_with_debate(&FIELDS);
            let (dir, home, line) = &*fixture;
            let step = |home: &Home| {
                crate::model::state::State::load(&home.state_path(line)).unwrap().progress.step
            };
            let before = step(home);
            let input = serde_json::json!({
                "session_id": session,
                "cwd": dir.path(),
                "last_assistant_message": message,
                "transcript_path": transcript,
                "stop_hook_active": active,
                "hook_event_name": "Stop",
            });
            let answer = stop(input.to_string().as_bytes(), dir.path());
            assert_protocol(&answer);
            prop_assert!(step(home) <= before + 1, "one stop records at most one phase");
        }
    }
}
