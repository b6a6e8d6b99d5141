//! Which Claude Code the Stop hook talks to, and so in which form each phase reaches it
//! (see [`crate::claude::client`]): the `claude` on the hooks' PATH, the session this doctor
//! runs in when Claude Code started it, and each session that drives a debate here, as the
//! hook would find it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::environment::Environment;
use super::finding::{Finding, Level};
use crate::claude::client::{self, Client, Form, Source};
use crate::claude::protocol::{CONTEXT_SINCE, parse_version};
use crate::home::{Home, LineRef};

/// The findings about the client: the installed one, then the sessions.
pub(super) fn check(env: &Environment, hooks_path: &(Option<OsString>, String)) -> Vec<Finding> {
    let mut out = vec![installed(claude_version(hooks_path))];
    if let Some((session, agent)) = &env.claude_session {
        let vars = |key: &str| match key {
            "CLAUDE_CODE_SESSION_ID" => Some(session.clone()),
            "AI_AGENT" => agent.clone(),
            _ => None,
        };
        let found = client::detect_with(vars, session, transcript(env, session).as_deref());
        out.push(session_finding(
            &format!("this Claude Code session ({session})"),
            &found,
        ));
    }
    if let Some(home) = Home::find(&env.cwd) {
        for (session, line) in bound_sessions(&home) {
            if env
                .claude_session
                .as_ref()
                .is_some_and(|(s, _)| *s == session)
            {
                continue;
            }
            // Outside its session the environment is not there to read: what the transcript
            // tells, as the hook finds it when the environment is silent.
            let found =
                client::detect_with(|_| None, &session, transcript(env, &session).as_deref());
            out.push(session_finding(
                &format!("the session {session}, which drives {line}"),
                &found,
            ));
        }
    }
    out
}

/// `claude --version` of the Claude Code on `path` (the PATH Claude Code gives hooks), if there
/// is one that answers.
fn claude_version(path: &(Option<OsString>, String)) -> Option<String> {
    let dirs = path.0.clone().or_else(|| std::env::var_os("PATH"))?;
    let claude = std::env::split_paths(&dirs)
        .map(|dir| dir.join("claude"))
        .find(|candidate| candidate.is_file())?;
    let out = std::process::Command::new(claude)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(text.split_whitespace().next()?.to_owned())
}

/// How the Stop hook hands each phase to the installed Claude Code (see
/// [`crate::claude::protocol::HookOutput::for_client`]).
fn installed(version: Option<String>) -> Finding {
    let finding =
        |level, message: String| Finding::new("installation", "continuation", level, message);
    let (major, minor, patch) = CONTEXT_SINCE;
    match version.as_deref().map(|v| (v, parse_version(v))) {
        Some((v, Some(parsed))) if parsed >= CONTEXT_SINCE => finding(
            Level::Ok,
            format!(
                "Claude Code {v} on the hooks' PATH: each phase is handed over as the Stop hook's \
                 additional context (shown as progress, never as an error), with a one-line \
                 notice"
            ),
        ),
        Some((v, _)) => finding(
            Level::Note,
            format!(
                "Claude Code {v} on the hooks' PATH is older than {major}.{minor}.{patch}: each \
                 phase is handed over as a Stop-hook block, which its terminal labels \"Stop \
                 hook error\""
            ),
        )
        .hint("update Claude Code (`claude update`); the debate works either way"),
        None => finding(
            Level::Note,
            "no `claude` on the hooks' PATH to ask its version: the Stop hook tells each \
             session's client at every stop, from AI_AGENT in its environment or the newest \
             versioned entry of its transcript (additional context from 2.1.163, a block before)"
                .to_owned(),
        ),
    }
}

/// What the hook finds about `who`'s client, and the form its phases take.
fn session_finding(who: &str, found: &Client) -> Finding {
    let form = found.form();
    let shown = match form {
        Form::Context => "shown as progress",
        Form::Block => "shown as an error by Claude Code 2.1.19x and later",
    };
    let message = format!(
        "{who}: {}; each phase is handed over as a {} ({shown})",
        found.describe(),
        form.name()
    );
    match (found.source, form) {
        (Source::Unknown, _) => Finding::new("installation", "client", Level::Note, message).hint(
            "at each stop the hook also reads AI_AGENT from its environment (Claude Code sets \
             it from 2.1.197 on); `ANVIL_STOP_FORM=context` in the settings' env forces the \
             additional context",
        ),
        (Source::Forced(_), _) | (_, Form::Context) => {
            Finding::new("installation", "client", Level::Ok, message)
        }
        (_, Form::Block) => Finding::new("installation", "client", Level::Note, message)
            .hint("update Claude Code (`claude update`); the debate works either way"),
    }
}

/// The sessions bound to a line here, read only (no marker is cleared).
fn bound_sessions(home: &Home) -> Vec<(String, LineRef)> {
    let entries = crate::fsutil::visible_entries(&home.sessions_dir()).unwrap_or_default();
    let mut out: Vec<(String, LineRef)> = entries
        .into_iter()
        .filter_map(|(session, path)| {
            let text = crate::fsutil::read_optional(&path).ok().flatten()?;
            let line = LineRef::parse(&text)?;
            let state = crate::model::state::State::load(&home.state_path(&line)).ok()?;
            (!state.progress.status.is_over()).then_some((session, line))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The transcript of `session`: `projects/<folder>/<session>.jsonl` under Claude Code's
/// configuration directory (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
fn transcript(env: &Environment, session: &str) -> Option<PathBuf> {
    if !crate::home::valid_session(session) {
        return None;
    }
    let base = env
        .claude_config_dir
        .clone()
        .or_else(|| env.user_claude())?;
    let file = format!("{session}.jsonl");
    std::fs::read_dir(base.join("projects"))
        .ok()?
        .flatten()
        .map(|project| project.path().join(&file))
        .find(|path| Path::is_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";

    #[test]
    fn the_continuation_form_follows_the_installed_version() {
        let ok = installed(Some("2.1.197".into()));
        assert_eq!(ok.level, Level::Ok);
        assert!(ok.message.contains("additional context"), "{}", ok.message);
        let old = installed(Some("2.1.100".into()));
        assert_eq!(old.level, Level::Note);
        assert!(old.message.contains("Stop hook error"), "{}", old.message);
        let unknown = installed(None);
        assert!(unknown.message.contains("AI_AGENT"), "{}", unknown.message);
    }

    fn env(dir: &Path, claude_session: Option<(String, Option<String>)>) -> Environment {
        Environment {
            path: Some(OsString::new()),
            claude_session,
            ..Environment::for_test(dir.join("project"), Some(dir.join("user")))
        }
    }

    /// A project whose debate is driven by [`SESSION`], whose transcript ends as a 2.1.332
    /// session's does at its first stop.
    fn project_with_a_session(dir: &Path) {
        crate::testkit::Debate::new()
            .session(SESSION)
            .start_at(&dir.join("project"));
        let folder = dir.join("user/.claude/projects/-project");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(format!("{SESSION}.jsonl")),
            format!(
                "{{\"type\":\"assistant\",\"version\":\"2.1.332\"}}\n\
                 {{\"type\":\"attachment\",\"version\":\"2.1.332\",\"a\":\"{}\"}}\n\
                 {{\"type\":\"last-prompt\"}}\n{{\"type\":\"mode\"}}\n",
                "x".repeat(40_000)
            ),
        )
        .unwrap();
    }

    #[test]
    fn each_session_that_drives_a_debate_is_reported_with_its_version_and_form() {
        let dir = tempfile::tempdir().unwrap();
        project_with_a_session(dir.path());
        let findings = check(
            &env(dir.path(), None),
            &(Some(OsString::new()), String::new()),
        );
        let session = findings
            .iter()
            .find(|f| f.check == "client")
            .expect("a finding for the session");
        assert_eq!(session.level, Level::Ok, "{}", session.message);
        for part in [SESSION, "2.1.332", "transcript", "additional context"] {
            assert!(
                session.message.contains(part),
                "{part}: {}",
                session.message
            );
        }
    }

    #[test]
    fn inside_a_session_the_environment_names_the_client() {
        let dir = tempfile::tempdir().unwrap();
        project_with_a_session(dir.path());
        let inside = Some((
            SESSION.to_owned(),
            Some("claude-code_2-1-400_harness".to_owned()),
        ));
        let findings = check(
            &env(dir.path(), inside),
            &(Some(OsString::new()), String::new()),
        );
        let clients: Vec<_> = findings.iter().filter(|f| f.check == "client").collect();
        assert_eq!(
            clients.len(),
            1,
            "the session is reported once: {clients:?}"
        );
        assert!(clients[0].message.contains("this Claude Code session"));
        assert!(
            clients[0].message.contains("2.1.400"),
            "{}",
            clients[0].message
        );
        assert!(
            clients[0].message.contains("AI_AGENT"),
            "{}",
            clients[0].message
        );

        // No version anywhere: a block, and the hint says how the hook could know.
        let unknown = Some((SESSION.to_owned(), None));
        std::fs::remove_dir_all(dir.path().join("user/.claude/projects")).unwrap();
        let findings = check(
            &env(dir.path(), unknown),
            &(Some(OsString::new()), String::new()),
        );
        let client = findings.iter().find(|f| f.check == "client").unwrap();
        assert_eq!(client.level, Level::Note);
        assert!(client.message.contains("block"), "{}", client.message);
        assert!(client.hint.as_deref().unwrap().contains("AI_AGENT"));
    }
}
