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
    /// Copilot CLI names it `sessionId`.
    #[serde(default, alias = "sessionId")]
    pub session_id: Option<String>,
    /// Copilot CLI names it `transcriptPath`.
    #[serde(default, alias = "transcriptPath")]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// Stop: whether this stop follows a turn a Stop hook kept going (any JSON; only `true`
    /// counts).
    #[serde(default)]
    pub stop_hook_active: serde_json::Value,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`.
    #[serde(default)]
    pub source: Option<String>,
    /// UserPromptExpansion: the slash command's name, as typed.
    #[serde(default)]
    pub command_name: Option<String>,
    /// UserPromptExpansion: the slash command's arguments, as typed.
    #[serde(default)]
    pub command_args: Option<String>,
    /// The event (`Stop`; Gemini CLI's `AfterAgent`).
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// Codex: the turn that ended.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// Codex: the session's model.
    #[serde(default)]
    pub model: Option<String>,
    /// Gemini CLI: the answers since the person's prompt.
    #[serde(default)]
    pub prompt_response: Option<String>,
    /// Copilot CLI: why the agent stopped.
    #[serde(default, rename = "stopReason")]
    pub stop_reason: Option<String>,
    /// Copilot CLI: when the hook was called, in milliseconds (any JSON: only a number counts).
    #[serde(default)]
    pub timestamp: serde_json::Value,
    /// OpenCode's plugin: what the turn was given (the prompt it answered, and what its tools
    /// returned), where no transcript says it.
    #[serde(default)]
    pub prompt: Option<String>,
    /// OpenCode's plugin: the reply's tokens, as its message info counts them (any JSON).
    #[serde(default)]
    pub tokens: serde_json::Value,
    /// OpenCode's plugin: the agent's version (any JSON: only a string counts).
    #[serde(default)]
    pub version: serde_json::Value,
}

impl HookInput {
    /// anvil's home for this session and the session id, or `None` when anvil has nothing to
    /// do here (no `.anvil` above the session's directory, or no usable session id).
    pub(crate) fn locate<'a>(&'a self, cwd: &Path) -> Option<(Home, &'a str)> {
        let home = Home::find(self.cwd.as_deref().unwrap_or(cwd))?;
        Some((home, self.session()?))
    }

    /// The input as every host's hook reads it ([`crate::agent::host`]).
    pub(crate) fn host_stop<'a>(&'a self, session: &'a str) -> crate::agent::host::Stop<'a> {
        crate::agent::host::Stop {
            session,
            event: self.hook_event_name.as_deref(),
            transcript: self.transcript_path.as_deref(),
            last_message: self.last_assistant_message.as_deref(),
            turn_id: self.turn_id.as_deref(),
            model: self.model.as_deref(),
            prompt_response: self.prompt_response.as_deref(),
            stop_reason: self.stop_reason.as_deref(),
            timestamp: self.timestamp.as_u64(),
            tokens: Some(&self.tokens).filter(|t| t.is_object()),
            version: self.version.as_str(),
        }
    }

    /// The session id, when it is a usable one.
    pub(crate) fn session(&self) -> Option<&str> {
        self.session_id
            .as_deref()
            .filter(|s| crate::home::valid_session(s))
    }
}

/// What a hook prints: the only line on stdout, or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOutput {
    /// Nothing to say: Claude stops as it would without anvil.
    Silent,
    /// Let Claude stop and show this message.
    Message(String),
    /// Keep Claude going with this prompt, as a Stop hook's `block` (every client knows it;
    /// the terminal shows the prompt under "Stop hook error").
    Block { reason: String, notice: String },
    /// Keep Claude going with this prompt, as the Stop hook's `additionalContext` (Claude Code
    /// 2.1.163 and later): the model reads it as a system reminder, the terminal shows no
    /// error, only the notice.
    Continue { reason: String, notice: String },
    /// Another answer, with escape sequences Claude Code writes to its terminal for the hook
    /// (`terminalSequence`: a title, the progress bar, a desktop notification). Claude Code
    /// lets only those kinds through.
    Signalled {
        answer: Box<HookOutput>,
        sequence: String,
    },
}

/// The first Claude Code version whose Stop hook may continue the turn with
/// `additionalContext` instead of `block`.
pub const CONTEXT_SINCE: (u32, u32, u32) = (2, 1, 163);

/// `2.1.197` → `(2, 1, 197)`; `None` for anything else.
pub fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim().split('.');
    let mut next = || parts.next()?.parse::<u32>().ok();
    let version = (next()?, next()?, next()?);
    Some(version)
}

impl HookOutput {
    /// This answer in the form a client of `version` reads best: a continuation becomes
    /// `additionalContext` where the client has it, and stays a `block` where it does not or
    /// where the version is unknown.
    pub fn for_client(self, version: Option<(u32, u32, u32)>) -> HookOutput {
        match self {
            HookOutput::Block { reason, notice } if version >= Some(CONTEXT_SINCE) => {
                HookOutput::Continue { reason, notice }
            }
            other => other,
        }
    }
}

impl HookOutput {
    pub fn to_json(&self) -> Option<String> {
        self.value().map(|v| v.to_string())
    }

    /// The answer as JSON. Claude Code shows the notice (`systemMessage`) in its terminal, and
    /// a block's reason too (under "Stop hook error"): both may carry an agent's words (its
    /// error, a model name it reported, a seat's reply quoted in the next prompt), so both are
    /// made [`visible`](crate::term::visible) here, the one place every answer passes. The
    /// `additionalContext` of a continuation is read by the model only, and stays as the
    /// record has it.
    fn value(&self) -> Option<serde_json::Value> {
        let shown = |text: &str| crate::term::visible(text).into_owned();
        let value = match self {
            HookOutput::Silent => return None,
            HookOutput::Signalled { answer, sequence } => {
                let mut value = answer.value().unwrap_or_else(|| serde_json::json!({}));
                value["terminalSequence"] = sequence.clone().into();
                value
            }
            HookOutput::Message(m) => serde_json::json!({ "systemMessage": shown(m) }),
            HookOutput::Block { reason, notice } => serde_json::json!({
                "decision": "block",
                "reason": shown(reason),
                "systemMessage": shown(notice),
            }),
            HookOutput::Continue { reason, notice } => serde_json::json!({
                "hookSpecificOutput": {
                    "hookEventName": "Stop",
                    "additionalContext": reason,
                },
                "systemMessage": shown(notice),
            }),
        };
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continuation_is_additional_context_from_2_1_163_and_a_block_before_or_unknown() {
        let block = || HookOutput::Block {
            reason: "[anvil d@main · round 1 of 1 · Critic] …".into(),
            notice: "anvil d@main: round 1/1 · critic".into(),
        };
        let json = |o: HookOutput| -> serde_json::Value {
            serde_json::from_str(&o.to_json().unwrap()).unwrap()
        };
        let new = json(block().for_client(parse_version("2.1.197")));
        assert_eq!(new["hookSpecificOutput"]["hookEventName"], "Stop");
        assert!(
            new["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap()
                .contains("Critic")
        );
        assert_eq!(new["systemMessage"], "anvil d@main: round 1/1 · critic");
        assert!(new.get("decision").is_none());
        assert_eq!(
            json(block().for_client(parse_version("2.1.163")))["hookSpecificOutput"]["hookEventName"],
            "Stop"
        );
        for old in [parse_version("2.1.162"), parse_version("1.9.999"), None] {
            assert_eq!(json(block().for_client(old))["decision"], "block");
        }
        let message = HookOutput::Message("m".into());
        assert_eq!(message.clone().for_client(parse_version("3.0.0")), message);
    }

    /// What Claude Code shows in its terminal (the notice, a block's reason) is shown, never
    /// obeyed; what only the model reads (`additionalContext`) stays as the record has it.
    #[test]
    fn what_a_terminal_shows_of_an_answer_is_made_visible() {
        const HOSTILE: &str = "gpt\x1b]0;owned\x07\x1b[2J\u{9b}x";
        const SHOWN: &str = "gpt\\x1b]0;owned\\x07\\x1b[2J\\u{9b}x";
        let answer = |o: HookOutput| -> serde_json::Value {
            serde_json::from_str(&o.to_json().unwrap()).unwrap()
        };
        let message = answer(HookOutput::Message(format!("played by {HOSTILE}")));
        assert_eq!(message["systemMessage"], format!("played by {SHOWN}"));
        let block = || HookOutput::Block {
            reason: format!("the critic said {HOSTILE}"),
            notice: format!("critic ({HOSTILE})"),
        };
        let old = answer(block());
        assert_eq!(old["reason"], format!("the critic said {SHOWN}"));
        assert_eq!(old["systemMessage"], format!("critic ({SHOWN})"));
        let new = answer(block().for_client(parse_version("2.1.197")));
        assert_eq!(
            new["hookSpecificOutput"]["additionalContext"],
            format!("the critic said {HOSTILE}")
        );
        assert_eq!(new["systemMessage"], format!("critic ({SHOWN})"));
    }
}
