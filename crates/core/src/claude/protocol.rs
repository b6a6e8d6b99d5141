//! Claude Code's hook protocol, as anvil speaks it: the JSON a hook reads on stdin, and the JSON
//! it prints on stdout. Every hook of `claude/` reads a [`HookInput`] and answers a
//! [`HookOutput`]; nothing else knows the field names.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::home::Home;

/// The fields of Claude Code's hook input that anvil reads (Stop, SessionStart and
/// UserPromptExpansion).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`.
    #[serde(default)]
    pub source: Option<String>,
    /// UserPromptExpansion: the slash command's name, as typed.
    #[serde(default)]
    pub command_name: Option<String>,
    /// UserPromptExpansion: the slash command's arguments, as typed.
    #[serde(default)]
    pub command_args: Option<String>,
}

impl HookInput {
    /// anvil's home for this session and the session id, or `None` when anvil has nothing to
    /// do here (no `.anvil` above the session's directory, or no usable session id).
    pub(crate) fn locate<'a>(&'a self, cwd: &Path) -> Option<(Home, &'a str)> {
        let home = Home::find(self.cwd.as_deref().unwrap_or(cwd))?;
        let session = self
            .session_id
            .as_deref()
            .filter(|s| crate::home::valid_session(s))?;
        Some((home, session))
    }
}

/// What a hook prints: the only line on stdout, or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOutput {
    /// Nothing to say: Claude stops as it would without anvil.
    Silent,
    /// Let Claude stop and show this message.
    Message(String),
    /// Keep Claude going with this prompt.
    Block { reason: String, notice: String },
}

impl HookOutput {
    pub fn to_json(&self) -> Option<String> {
        let value = match self {
            HookOutput::Silent => return None,
            HookOutput::Message(m) => serde_json::json!({ "systemMessage": m }),
            HookOutput::Block { reason, notice } => serde_json::json!({
                "decision": "block",
                "reason": reason,
                "systemMessage": notice,
            }),
        };
        Some(value.to_string())
    }
}
