//! `anvil hook stop`: Claude Code's Stop hook.
//!
//! It runs at the end of every turn of every Claude session where anvil is installed, so the
//! path for "nothing to do here" is a JSON parse and a few `stat` calls. When this session
//! drives a line, the phase text goes to disk first, then the machine decides, then the record
//! and the live files follow. Whatever goes wrong, the hook answers with valid JSON that lets
//! Claude stop and says how to resume: a broken hook must never wedge a session.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::debate::{self, Reply};
use crate::home::{Home, LineRef};
use crate::state::{State, Status};

/// The fields of Claude Code's hook input that anvil reads (Stop and SessionStart).
#[derive(Debug, Default, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub stop_hook_active: bool,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`.
    #[serde(default)]
    pub source: Option<String>,
}

impl HookInput {
    /// anvil's home for this session and the session id, or `None` when anvil has nothing to
    /// do here (no `.anvil` above the session's directory, or no usable session id).
    fn locate<'a>(&'a self, cwd: &Path) -> Option<(Home, &'a str)> {
        let home = Home::find(self.cwd.as_deref().unwrap_or(cwd))?;
        let session = self
            .session_id
            .as_deref()
            .filter(|s| crate::home::valid_session(s))?;
        Some((home, session))
    }
}

/// The hook's answer, printed as the only line on stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Nothing to say: Claude stops as it would without anvil.
    Silent,
    /// Let Claude stop and show this message.
    Message(String),
    /// Keep Claude going with this prompt.
    Block { reason: String, notice: String },
}

impl Answer {
    pub fn to_json(&self) -> Option<String> {
        let value = match self {
            Answer::Silent => return None,
            Answer::Message(m) => serde_json::json!({ "systemMessage": m }),
            Answer::Block { reason, notice } => serde_json::json!({
                "decision": "block",
                "reason": reason,
                "systemMessage": notice,
            }),
        };
        Some(value.to_string())
    }
}

/// Handles one Stop event. `stdin` is the raw hook input; `cwd` is the process's directory,
/// used when the input names none.
pub fn stop(stdin: &[u8], cwd: &Path) -> Answer {
    let input: HookInput = match serde_json::from_slice(stdin) {
        Ok(input) => input,
        Err(e) => {
            // Without a session id nothing can be recorded; speak only where anvil lives.
            return match Home::find(cwd) {
                Some(_) => Answer::Message(format!(
                    "anvil: the Stop hook could not read its input ({e}); no phase was recorded. \
                     Run `anvil status` to see where the debate stands."
                )),
                None => Answer::Silent,
            };
        }
    };
    let Some((home, session)) = input.locate(cwd) else {
        return Answer::Silent;
    };
    let answer = match drive(&home, session, &input) {
        Ok(answer) => answer,
        Err(failure) => Answer::Message(failure.message()),
    };
    crate::feedback::deliver(&home, session, answer)
}

/// Handles SessionStart: after a compaction or `/clear` the session no longer holds the debate
/// in its context, so the next phase's prompt must bring it up to date in full.
pub fn session_start(stdin: &[u8], cwd: &Path) -> Answer {
    let Ok(input) = serde_json::from_slice::<HookInput>(stdin) else {
        return Answer::Silent;
    };
    let Some((home, session)) = input.locate(cwd) else {
        return Answer::Silent;
    };
    crate::feedback::register_start(&home, session, &input);
    if !matches!(input.source.as_deref(), Some("compact" | "clear")) {
        return Answer::Silent;
    }
    let forget = || -> Result<(), crate::debate::DebateError> {
        let Some(line) =
            home.bound_line(session)
                .map_err(|source| crate::debate::DebateError::Io {
                    what: "cannot read the session binding in",
                    path: home.root().to_owned(),
                    source,
                })?
        else {
            return Ok(());
        };
        let path = home.state_path(&line);
        let mut state = State::load(&path)?;
        if state.informed_session.as_deref() == Some(session) {
            state.informed_session = None;
            state.save(&path)?;
        }
        Ok(())
    };
    match forget() {
        Ok(()) => Answer::Silent,
        Err(e) => Answer::Message(format!("anvil: {e}")),
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

fn drive(home: &Home, session: &str, input: &HookInput) -> Result<Answer, Failure> {
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
            None => return Ok(Answer::Silent),
        },
    };

    let text = input
        .last_assistant_message
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| {
            input
                .transcript_path
                .as_deref()
                .and_then(last_assistant_text)
        });

    // The phase text is on disk before anything else happens to it.
    let saved = match &text {
        Some(text) => {
            let path = home.incoming_path(&line);
            // A plain write: this copy only has to exist before anything else happens.
            std::fs::write(&path, text.as_bytes()).map_err(|e| fail(Some(&line), None)(&e))?;
            Some(path)
        }
        None => None,
    };
    // One stop at a time per line: a second hook for the same stop waits, then sees a repeat.
    let _lock = home
        .lock_line(&line, std::time::Duration::from_secs(5))
        .map_err(|e| fail(Some(&line), saved.clone())(&e))?;
    let state =
        State::load(&home.state_path(&line)).map_err(|e| fail(Some(&line), saved.clone())(&e))?;
    // Once the stop is answered, the safety copy has done its job (it stays after a failure).
    let drop_saved = || {
        if let Some(path) = &saved {
            let _ = crate::home::remove_if_present(path);
        }
    };
    match state.progress.status {
        Status::Active => {}
        Status::WaitingForInput => {
            // A debater asked the human something; the debate moves once it is answered.
            let question = state.question.as_ref().map_or("", |q| q.text.as_str());
            drop_saved();
            return Ok(Answer::Message(format!(
                "anvil: {line} waits for your answer to: {question}\nAnswer with `anvil answer \"…\"`, then type `continue` here."
            )));
        }
        Status::Done | Status::Cancelled => {
            home.unbind(session)
                .map_err(|e| fail(Some(&line), None)(&e))?;
            drop_saved();
            return Ok(Answer::Silent);
        }
    }

    let seen = !claimed
        || input
            .transcript_path
            .as_deref()
            .is_some_and(|p| saw_prompt(p, &crate::prompt::tag(&line.debate, &line.line)));
    let reply = match text {
        // A session that never saw the debate, or a turn with no text: hand out the prompt.
        None => debate::reissue(home, &line, state, session),
        Some(_) if !seen => debate::reissue(home, &line, state, session),
        Some(text) => {
            let mut state = state;
            if claimed {
                // The session answered the first prompt it was given: it holds the debate.
                state.informed_session = Some(session.to_owned());
            }
            debate::record_turn(home, &line, state, session, &text)
        }
    }
    .map_err(|e| fail(Some(&line), saved.clone())(&e))?;
    drop_saved();
    Ok(match reply {
        Reply::Block { prompt, notice } => Answer::Block {
            reason: prompt,
            notice,
        },
        Reply::Finish { notice } | Reply::Pause { notice } => Answer::Message(notice),
    })
}

/// Did the session that claims a line see its prompt (`needle`, the line's tag)? Claude Code
/// writes its transcript a moment after the turn ends (observed: absent at the first stop of a
/// `claude -p` run), so give it until the transcript holds an assistant text before deciding
/// that the session never saw the prompt. This runs once per claimed line, never per stop.
fn saw_prompt(transcript: &Path, needle: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1500);
    loop {
        if mentions(transcript, needle) {
            return true;
        }
        if last_assistant_text(transcript).is_some() || std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Does the session's transcript contain `needle`?
fn mentions(transcript: &Path, needle: &str) -> bool {
    std::fs::read(transcript)
        .map(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        .unwrap_or(false)
}

/// The text of the last assistant message in a Claude Code transcript (JSONL, one line per
/// content block). Tool calls and thinking are skipped; several text blocks of one message are
/// joined. A line that is not JSON (a write in progress) is ignored.
pub fn last_assistant_text(transcript: &Path) -> Option<String> {
    let file = std::fs::File::open(transcript).ok()?;
    let mut message_id: Option<String> = None;
    let mut texts: Vec<String> = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(&line) else {
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
