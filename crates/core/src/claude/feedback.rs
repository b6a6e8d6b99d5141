//! Feedback to any Claude Code session of the project, debate or not.
//!
//! `anvil serve` lists the sessions that started in the project (SessionStart registers each
//! one) and lets a person type a message to any of them. The message waits in the session's
//! inbox until that session's next stop, when the Stop hook delivers everything queued in one
//! `block` and moves it to `delivered/`. A session with nothing queued pays one failed
//! `read_dir` per stop.
//!
//! ```text
//! .anvil/inbox/<session>/session.json        when it started, how, and its transcript
//! .anvil/inbox/<session>/queued/<nanos>-<pid>.md
//! .anvil/inbox/<session>/delivered/<nanos>-<pid>.md
//! ```

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::claude::protocol::HookOutput;
use crate::fsutil;
use crate::home::{Home, valid_session};

/// A session as SessionStart registered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    pub session: String,
    /// RFC 3339.
    pub started: String,
    /// SessionStart's `source`: `startup`, `resume`, `clear` or `compact`.
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
}

/// One message typed to a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    /// The file name, unique in the session's inbox.
    pub id: String,
    pub text: String,
    /// Seconds since the epoch.
    pub queued_at: i64,
    pub delivered: bool,
}

fn invalid(session: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("'{session}' is not a Claude Code session id"),
    )
}

/// Registers `session` when it starts; a session seen before keeps its first registration.
pub fn register(
    home: &Home,
    session: &str,
    source: Option<&str>,
    transcript_path: Option<&Path>,
    now: jiff::Timestamp,
) -> io::Result<()> {
    let path = home
        .inbox(session)
        .ok_or_else(|| invalid(session))?
        .registration();
    if path.is_file() {
        return Ok(());
    }
    let registration = Registration {
        session: session.to_owned(),
        started: now.to_string(),
        source: source.map(str::to_owned),
        transcript_path: transcript_path.map(Path::to_path_buf),
    };
    let json = serde_json::to_vec_pretty(&registration).map_err(io::Error::other)?;
    fsutil::write_atomic(&path, &json)
}

/// When `session` first started in this project, as its SessionStart registration's file
/// says (the file's time, not its content's clock: comparable with other files' times).
pub(crate) fn registered_at(home: &Home, session: &str) -> Option<std::time::SystemTime> {
    let path = home.inbox(session)?.registration();
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// SessionStart's registration of the session it reports. A failure costs only the listing of
/// this session in the web room, so it is not worth a word in the user's session.
pub(crate) fn register_start(
    home: &Home,
    session: &str,
    input: &crate::claude::protocol::HookInput,
) {
    let _ = register(
        home,
        session,
        input.source.as_deref(),
        input.transcript_path.as_deref(),
        crate::clock::now(),
    );
}

/// Every registered session, newest first.
pub fn sessions(home: &Home) -> io::Result<Vec<Registration>> {
    let entries = match std::fs::read_dir(home.inboxes_dir()) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let name = entry?.file_name();
        let Some(inbox) = name.to_str().and_then(|name| home.inbox(name)) else {
            continue;
        };
        let Some(text) = fsutil::read_optional(&inbox.registration())? else {
            continue;
        };
        if let Ok(registration) = serde_json::from_str::<Registration>(&text)
            && valid_session(&registration.session)
        {
            out.push(registration);
        }
    }
    out.sort_by(|a, b| {
        b.started
            .cmp(&a.started)
            .then_with(|| a.session.cmp(&b.session))
    });
    Ok(out)
}

/// The registration of one session, if it registered.
pub fn session(home: &Home, session: &str) -> io::Result<Option<Registration>> {
    let Some(inbox) = home.inbox(session) else {
        return Ok(None);
    };
    Ok(fsutil::read_optional(&inbox.registration())?
        .and_then(|text| serde_json::from_str(&text).ok()))
}

/// Queues `text` for `session`'s next stop, cleaned of credentials first; returns the
/// message's id, and what the person is told about it (what was redacted), if anything.
pub fn queue(
    home: &Home,
    session: &str,
    text: &str,
    now_nanos: u128,
) -> io::Result<(String, Option<String>)> {
    let inbox = home.inbox(session).ok_or_else(|| invalid(session))?;
    let mut intake = crate::model::secrets::Intake::new(home.root());
    let text = intake.clean("the feedback", text);
    let id = format!("{now_nanos:032}-{}.md", std::process::id());
    fsutil::write_atomic(&inbox.queued_dir().join(&id), text.as_bytes())?;
    Ok((id, intake.note()))
}

/// The messages of `session`, queued and delivered, oldest first.
pub fn messages(home: &Home, session: &str) -> io::Result<Vec<Message>> {
    let Some(inbox) = home.inbox(session) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (folder, delivered) in [(inbox.delivered_dir(), true), (inbox.queued_dir(), false)] {
        for (id, path) in fsutil::visible_entries(&folder)? {
            if let Some(text) = fsutil::read_optional(&path)? {
                out.push(Message {
                    queued_at: queued_at(&id),
                    id,
                    text,
                    delivered,
                });
            }
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

fn queued_at(id: &str) -> i64 {
    id.split('-')
        .next()
        .and_then(|n| n.parse::<u128>().ok())
        .map_or(0, |n| (n / 1_000_000_000) as i64)
}

/// Takes every queued message of `session` for delivery: each file is moved to `delivered/`
/// (a rename, so when two hooks see one stop, each message goes out once) and its text
/// returned, oldest first.
pub fn take(home: &Home, session: &str) -> io::Result<Vec<String>> {
    let Some(inbox) = home.inbox(session) else {
        return Ok(Vec::new());
    };
    let queued = fsutil::visible_entries(&inbox.queued_dir())?;
    if queued.is_empty() {
        return Ok(Vec::new());
    }
    let delivered = inbox.delivered_dir();
    std::fs::create_dir_all(&delivered)?;
    let mut out = Vec::new();
    for (name, path) in queued {
        let target = delivered.join(&name);
        match std::fs::rename(&path, &target) {
            Ok(()) => out.push(std::fs::read_to_string(&target)?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue, // another hook took it
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The Stop hook's last step: adds the session's queued messages to its answer. With nothing
/// queued the answer is unchanged; otherwise Claude is kept going with the messages (after the
/// debate's own prompt, when there is one).
pub(crate) fn deliver(home: &Home, session: &str, answer: HookOutput) -> HookOutput {
    let messages = match take(home, session) {
        Ok(messages) if messages.is_empty() => return answer,
        Ok(messages) => messages,
        Err(e) => {
            return match answer {
                HookOutput::Silent => HookOutput::Message(format!(
                    "anvil: cannot deliver the messages queued for this session: {e}"
                )),
                other => other,
            };
        }
    };
    let text = compose(&messages);
    let notice = format!(
        "anvil: delivered {} message{} from the web room",
        messages.len(),
        if messages.len() == 1 { "" } else { "s" }
    );
    with_messages(answer, &text, notice)
}

/// `answer` that also hands Claude `text` (the composed messages), saying `notice`.
fn with_messages(answer: HookOutput, text: &str, notice: String) -> HookOutput {
    let text = text.to_owned();
    match answer {
        HookOutput::Block { reason, notice: n } | HookOutput::Continue { reason, notice: n } => {
            HookOutput::Block {
                reason: format!("{reason}\n\n---\n\n{text}"),
                notice: format!("{n}\n{notice}"),
            }
        }
        HookOutput::Message(m) => HookOutput::Block {
            reason: text,
            notice: format!("{m}\n{notice}"),
        },
        HookOutput::Silent => HookOutput::Block {
            reason: text,
            notice,
        },
        // Signals are added after delivery; one that came here keeps them.
        HookOutput::Signalled { answer, sequence } => HookOutput::Signalled {
            answer: Box::new(with_messages(*answer, &text, notice)),
            sequence,
        },
    }
}

/// The messages as one injection.
fn compose(messages: &[String]) -> String {
    let mut out = if messages.len() == 1 {
        "The user sent you this message from anvil's web room while you were working. Take it \
         into account and go on:\n\n"
            .to_owned()
    } else {
        "The user sent you these messages from anvil's web room while you were working. Take \
         them into account and go on:\n\n"
            .to_owned()
    };
    for (i, m) in messages.iter().enumerate() {
        if messages.len() > 1 {
            out.push_str(&format!("{}. ", i + 1));
        }
        out.push_str(m.trim());
        out.push_str("\n\n");
    }
    out.trim_end().to_owned()
}

/// The first line of the first prompt the user typed in a Claude Code transcript (JSONL).
pub fn first_prompt(transcript: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = std::fs::File::open(transcript).ok()?;
    for line in io::BufReader::new(file).lines().take(200) {
        let Ok(line) = line else { break };
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if entry.get("type").and_then(|t| t.as_str()) != Some("user")
            || entry.get("isMeta").and_then(|m| m.as_bool()) == Some(true)
        {
            continue;
        }
        let content = entry.get("message").and_then(|m| m.get("content"));
        let text = match content {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Array(blocks)) => blocks
                .iter()
                .find(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
                .and_then(|b| b.get("text").and_then(|t| t.as_str()).map(str::to_owned)),
            _ => None,
        };
        if let Some(text) = text.filter(|t| !t.trim().is_empty() && !t.starts_with('<')) {
            let first: String = crate::model::state::first_line(&text)
                .chars()
                .take(160)
                .collect();
            return Some(first);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        (dir, home)
    }

    #[test]
    fn a_session_with_nothing_queued_stops_as_it_would() {
        let (_dir, home) = home();
        assert_eq!(
            deliver(&home, "s-1", HookOutput::Silent),
            HookOutput::Silent
        );
        let message = HookOutput::Message("done".into());
        assert_eq!(deliver(&home, "s-1", message.clone()), message);
        // No inbox appears for a session that was never written to.
        assert!(!home.inboxes_dir().exists());
    }

    #[test]
    fn all_queued_messages_go_out_in_one_block_and_are_marked_delivered() {
        let (_dir, home) = home();
        queue(&home, "s-1", "look at the tests too", 1).unwrap();
        queue(&home, "s-1", "and keep it short", 2).unwrap();
        queue(&home, "s-2", "not for s-1", 3).unwrap();
        let HookOutput::Block { reason, notice } = deliver(&home, "s-1", HookOutput::Silent) else {
            panic!("expected a block");
        };
        assert!(reason.contains("1. look at the tests too"), "{reason}");
        assert!(reason.contains("2. and keep it short"), "{reason}");
        assert!(!reason.contains("not for s-1"), "{reason}");
        assert!(notice.contains("2 messages"), "{notice}");
        let messages = messages(&home, "s-1").unwrap();
        assert_eq!(messages.len(), 2);
        assert!(messages.iter().all(|m| m.delivered));
        // Delivered once: the next stop is silent again.
        assert_eq!(
            deliver(&home, "s-1", HookOutput::Silent),
            HookOutput::Silent
        );
    }

    #[test]
    fn feedback_rides_after_a_debate_prompt() {
        let (_dir, home) = home();
        queue(&home, "s-1", "mind the budget", 1).unwrap();
        let answer = HookOutput::Block {
            reason: "PROMPT".into(),
            notice: "round 2".into(),
        };
        let HookOutput::Block { reason, .. } = deliver(&home, "s-1", answer) else {
            panic!("expected a block");
        };
        assert!(reason.starts_with("PROMPT\n"), "{reason}");
        assert!(reason.ends_with("mind the budget"), "{reason}");
    }

    #[test]
    fn registration_keeps_the_first_start_and_lists_newest_first() {
        let (_dir, home) = home();
        let t1: jiff::Timestamp = "2026-01-01T10:00:00Z".parse().unwrap();
        let t2: jiff::Timestamp = "2026-01-02T10:00:00Z".parse().unwrap();
        register(&home, "old", Some("startup"), None, t1).unwrap();
        register(&home, "new", Some("startup"), None, t2).unwrap();
        register(&home, "old", Some("resume"), None, t2).unwrap();
        let listed: Vec<(String, Option<String>)> = sessions(&home)
            .unwrap()
            .into_iter()
            .map(|r| (r.session, r.source))
            .collect();
        assert_eq!(
            listed,
            [
                ("new".to_owned(), Some("startup".to_owned())),
                ("old".to_owned(), Some("startup".to_owned()))
            ]
        );
        assert!(register(&home, "../x", None, None, t1).is_err());
        assert!(queue(&home, "../x", "hi", 1).is_err());
    }

    #[test]
    fn the_first_prompt_skips_meta_and_tool_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(
            &path,
            concat!(
                "{\"type\":\"user\",\"isMeta\":true,\"message\":{\"content\":\"caveat\"}}\n",
                "{\"type\":\"user\",\"message\":{\"content\":\"<command-name>x</command-name>\"}}\n",
                "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Fix the login bug\\nplease\"}]}}\n",
            ),
        )
        .unwrap();
        assert_eq!(first_prompt(&path).as_deref(), Some("Fix the login bug"));
    }
}
