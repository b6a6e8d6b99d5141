//! Which Claude Code runs a session, and so in which form the Stop hook hands it the next
//! phase (see [`HookOutput::for_client`]).
//!
//! The form matters to the person: a `block` is shown as an error ("Stop hook error" in
//! 2.1.19x, "Stop hook reported a problem" plus a lasting notice in 2.1.33x), while the
//! `additionalContext` of 2.1.163 and later reads as progress. So the version must be known
//! at every stop, the first of a session included. Where it comes from, first to last:
//!
//! 1. `ANVIL_STOP_FORM=block` or `=context` in the hook's environment: the person's choice.
//! 2. The hook's environment as Claude Code sets it: `AI_AGENT=claude-code_2-1-332_harness`
//!    (seen from 2.1.197 on), believed only together with `CLAUDE_CODE_SESSION_ID` naming the
//!    very session that stops, so that a variable inherited from an outer session (an
//!    `anvil run` started from inside Claude Code, whose own client may be older) never
//!    speaks for another client.
//! 3. The newest entry of the session's transcript that carries a `version`. Not the last
//!    line: at the first stop of a 2.1.33x session the transcript ends with metadata records
//!    (`last-prompt`, `mode`, `permission-mode`, `atis-latch`) that carry none, behind an
//!    attachment of tens of kilobytes.
//!
//! When none of them tells, the hook answers with a `block`, which every client reads.
//!
//! [`HookOutput::for_client`]: crate::claude::protocol::HookOutput::for_client

use std::path::Path;

use crate::claude::protocol::{CONTEXT_SINCE, parse_version};

/// A Claude Code version, `(major, minor, patch)`.
pub type Version = (u32, u32, u32);

/// What the hook found out about the client of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// The version, when one of the sources named it.
    pub version: Option<Version>,
    /// Where the answer came from.
    pub source: Source,
}

/// Where a [`Client`] was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `ANVIL_STOP_FORM` chose the form; no version was looked for.
    Forced(Form),
    /// `AI_AGENT` in the hook's environment, for this session.
    Environment,
    /// The newest entry of the session's transcript that names a version.
    Transcript,
    /// Nothing told.
    Unknown,
}

/// How a continuation reaches the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `{"decision":"block"}`: every client reads it; shown as an error.
    Block,
    /// `hookSpecificOutput.additionalContext` (2.1.163 and later): shown as progress.
    Context,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::Block => "block",
            Form::Context => "additional context",
        }
    }
}

impl Client {
    /// The form a continuation takes for this client.
    pub fn form(&self) -> Form {
        match self.source {
            Source::Forced(form) => form,
            _ if self.version >= Some(CONTEXT_SINCE) => Form::Context,
            _ => Form::Block,
        }
    }

    /// The version to hand [`HookOutput::for_client`]: a forced form is expressed as the
    /// versions that get it.
    ///
    /// [`HookOutput::for_client`]: crate::claude::protocol::HookOutput::for_client
    pub fn effective_version(&self) -> Option<Version> {
        match self.source {
            Source::Forced(Form::Block) => None,
            Source::Forced(Form::Context) => Some(CONTEXT_SINCE),
            _ => self.version,
        }
    }

    /// One line for a person: "Claude Code 2.1.332 (from the hook's environment, AI_AGENT)".
    pub fn describe(&self) -> String {
        let version = |v: Option<Version>| match v {
            Some((a, b, c)) => format!("Claude Code {a}.{b}.{c}"),
            None => "a Claude Code of unknown version".to_owned(),
        };
        match self.source {
            Source::Forced(form) => format!("ANVIL_STOP_FORM chooses the {}", form.name()),
            Source::Environment => format!(
                "{} (from the hook's environment, AI_AGENT)",
                version(self.version)
            ),
            Source::Transcript => {
                format!("{} (from the session's transcript)", version(self.version))
            }
            Source::Unknown => {
                "no version found (neither AI_AGENT nor the transcript names one)".to_owned()
            }
        }
    }
}

/// The client of `session`, from the process's environment and then the transcript at
/// `transcript` (see the module's documentation for the order).
pub fn detect(session: &str, transcript: Option<&Path>) -> Client {
    detect_with(|key| std::env::var(key).ok(), session, transcript)
}

/// [`detect`] with the environment read through `var`.
pub fn detect_with(
    var: impl Fn(&str) -> Option<String>,
    session: &str,
    transcript: Option<&Path>,
) -> Client {
    match var("ANVIL_STOP_FORM").as_deref() {
        Some("block") => return forced(Form::Block),
        Some("context") => return forced(Form::Context),
        _ => {}
    }
    if let Some(version) = from_environment(&var, session) {
        return Client {
            version: Some(version),
            source: Source::Environment,
        };
    }
    match transcript.and_then(crate::claude::session_log::newest_version) {
        Some(version) => Client {
            version: Some(version),
            source: Source::Transcript,
        },
        None => Client {
            version: None,
            source: Source::Unknown,
        },
    }
}

fn forced(form: Form) -> Client {
    Client {
        version: None,
        source: Source::Forced(form),
    }
}

/// The version `AI_AGENT` names, when `CLAUDE_CODE_SESSION_ID` says that the environment is
/// this session's own.
fn from_environment(var: impl Fn(&str) -> Option<String>, session: &str) -> Option<Version> {
    if var("CLAUDE_CODE_SESSION_ID")?.trim() != session {
        return None;
    }
    agent_version(&var("AI_AGENT")?)
}

/// `claude-code_2-1-332_harness` → `(2, 1, 332)`; `None` for another agent or another shape.
pub fn agent_version(agent: &str) -> Option<Version> {
    let rest = agent.trim().strip_prefix("claude-code_")?;
    let version = rest.split('_').next()?;
    parse_version(&version.replace('-', "."))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |key| {
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_agent_variable_names_the_version() {
        assert_eq!(
            agent_version("claude-code_2-1-332_harness"),
            Some((2, 1, 332))
        );
        assert_eq!(agent_version("claude-code_2-1-197"), Some((2, 1, 197)));
        for other in [
            "codex_0-169-0",
            "claude-code_beta_harness",
            "",
            "claude-code_2-1",
        ] {
            assert_eq!(agent_version(other), None, "{other}");
        }
    }

    #[test]
    fn the_environment_speaks_only_for_its_own_session() {
        let own = [
            ("AI_AGENT", "claude-code_2-1-332_harness"),
            ("CLAUDE_CODE_SESSION_ID", SESSION),
        ];
        let client = detect_with(env(&own), SESSION, None);
        assert_eq!(client.version, Some((2, 1, 332)));
        assert_eq!(client.source, Source::Environment);
        assert_eq!(client.form(), Form::Context);

        // Inherited from an outer session, or without the session id: not believed.
        let outer = [
            ("AI_AGENT", "claude-code_2-1-332_harness"),
            (
                "CLAUDE_CODE_SESSION_ID",
                "11111111-2222-4333-8444-555555555555",
            ),
        ];
        let alone = [("AI_AGENT", "claude-code_2-1-332_harness")];
        for vars in [&outer[..], &alone[..], &[]] {
            let client = detect_with(env(vars), SESSION, None);
            assert_eq!(client.source, Source::Unknown, "{vars:?}");
            assert_eq!(client.form(), Form::Block);
        }
    }

    #[test]
    fn the_person_can_force_either_form() {
        let vars = [
            ("ANVIL_STOP_FORM", "block"),
            ("AI_AGENT", "claude-code_2-1-332_harness"),
            ("CLAUDE_CODE_SESSION_ID", SESSION),
        ];
        let client = detect_with(env(&vars), SESSION, None);
        assert_eq!(client.form(), Form::Block);
        assert_eq!(client.effective_version(), None);
        let client = detect_with(env(&[("ANVIL_STOP_FORM", "context")]), SESSION, None);
        assert_eq!(client.form(), Form::Context);
        assert_eq!(client.effective_version(), Some(CONTEXT_SINCE));
    }

    /// The first stop of a 2.1.332 session: a long attachment, then metadata records without
    /// a version.
    #[test]
    fn the_transcript_answers_from_its_newest_versioned_entry_behind_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let big = "x".repeat(60 * 1024);
        let text = format!(
            "{{\"type\":\"user\",\"version\":\"2.1.300\"}}\n\
             {{\"type\":\"assistant\",\"version\":\"2.1.332\",\"message\":{{}}}}\n\
             {{\"type\":\"attachment\",\"version\":\"2.1.332\",\"attachment\":\"{big}\"}}\n\
             {{\"type\":\"last-prompt\",\"lastPrompt\":\"/anvil\"}}\n\
             {{\"type\":\"atis-latch\"}}\n\
             {{\"type\":\"permission-mode\",\"permissionMode\":\"default\"}}\n"
        );
        std::fs::write(&path, text).unwrap();
        let client = detect_with(env(&[]), SESSION, Some(&path));
        assert_eq!(client.version, Some((2, 1, 332)));
        assert_eq!(client.source, Source::Transcript);
        assert_eq!(client.form(), Form::Context);
        assert!(
            client.describe().contains("transcript"),
            "{}",
            client.describe()
        );

        std::fs::write(&path, "{\"type\":\"last-prompt\"}\n").unwrap();
        assert_eq!(
            detect_with(env(&[]), SESSION, Some(&path)).source,
            Source::Unknown
        );
    }
}
