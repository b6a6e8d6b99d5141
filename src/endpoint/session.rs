//! An endpoint seat's conversation, kept between its turns as an agent CLI keeps its
//! sessions: one JSON file per session under `$XDG_STATE_HOME/anvil/endpoint-sessions/` (else
//! `~/.local/state/anvil/endpoint-sessions/`), readable by its owner only. It holds the seat's
//! own prompts and replies, which a resumed turn sends again, and nothing else: never the key.
//!
//! A session that is gone (another machine, a cleaned folder) is not an error: the turn starts
//! afresh from its prompt, which holds the whole debate so far.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One message of a conversation, as Chat Completions takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

/// A seat's conversation with its endpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Conversation {
    /// The endpoint's name, for a person who opens the file.
    #[serde(default)]
    endpoint: String,
    messages: Vec<Message>,
}

impl Conversation {
    pub fn push(&mut self, role: &str, content: &str) {
        self.messages.push(Message {
            role: role.to_owned(),
            content: content.to_owned(),
        });
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }
}

/// A session id as anvil makes them (a UUID): a file name, never a path.
pub fn check_id(id: &str) -> Result<(), String> {
    let groups: Vec<&str> = id.split('-').collect();
    let uuid = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()));
    if uuid {
        Ok(())
    } else {
        Err(format!(
            "the session `{}` is not a session id of anvil's (a UUID)",
            id.escape_debug()
        ))
    }
}

/// Where the sessions are kept.
fn dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(state.join("anvil/endpoint-sessions"))
}

/// The conversation of session `id` so far; empty when there is none to read.
pub fn load(id: &str) -> Conversation {
    let Some(path) = dir().map(|d| d.join(format!("{id}.json"))) else {
        return Conversation::default();
    };
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            eprintln!(
                "anvil: note: {} is not a conversation ({e}); this turn starts afresh",
                path.display()
            );
            Conversation::default()
        }),
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound {
                eprintln!(
                    "anvil: note: cannot read {} ({e}); this turn starts afresh",
                    path.display()
                );
            }
            Conversation::default()
        }
    }
}

/// Keeps `conversation` as session `id`, whole or not at all.
pub fn save(id: &str, endpoint: &str, conversation: &Conversation) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir =
        dir().ok_or_else(|| std::io::Error::other("neither $XDG_STATE_HOME nor $HOME is set"))?;
    std::fs::create_dir_all(&dir)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    let kept = Conversation {
        endpoint: endpoint.to_owned(),
        messages: conversation.messages.clone(),
    };
    // A temporary file is its owner's alone (0600), renamed over the old one.
    let mut file = tempfile::NamedTempFile::new_in(&dir)?;
    serde_json::to_writer(&mut file, &kept)?;
    file.persist(dir.join(format!("{id}.json")))
        .map_err(|e| e.error)?;
    Ok(())
}
