//! The one way anvil runs the `git` binary.
//!
//! The Stop hook never runs git: the record is written with gix. The `git` binary does what
//! it does best and what gix (0.90) does not: packing (`anvil gc`), the transport of
//! `anvil push`/`anvil pull` (every protocol and credential helper a team already uses), and
//! the project's own repository (`--diff`, `--pr`, its remotes and `user.name`).
//!
//! Every run starts from a clean slate: git's repository variables (`GIT_DIR`,
//! `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`, `GIT_CONFIG_PARAMETERS`, …, as a git hook that
//! runs anvil would pass them on) are all removed, so git works on the repository anvil names
//! and nothing else. Only the variables that say how to reach a remote are kept (ssh, askpass,
//! proxy and TLS settings: [`KEPT`]). Its stdin is empty: git never waits for a person.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `GIT_*` variables that are passed on: they say how to reach and authenticate to a remote,
/// never which repository git works on.
pub(crate) const KEPT: &[&str] = &[
    "GIT_ASKPASS",
    "GIT_HTTP_PROXY_AUTHMETHOD",
    "GIT_PROXY_COMMAND",
    "GIT_PROXY_SSL_CAINFO",
    "GIT_PROXY_SSL_CERT",
    "GIT_PROXY_SSL_KEY",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "GIT_SSL_CERT",
    "GIT_SSL_KEY",
    "GIT_SSL_NO_VERIFY",
    "GIT_TERMINAL_PROMPT",
];

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("this needs the `git` binary, and there is none on the PATH")]
    NotFound,
    #[error("cannot run git {what}")]
    Spawn {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("git {what} failed: {message}")]
    Failed { what: String, message: String },
}

/// The `git` binary: `ANVIL_GIT` when set, else the first `git` on the `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Git {
    program: PathBuf,
}

impl Git {
    /// The `git` to run, if there is one.
    pub fn find() -> Option<Git> {
        if let Some(explicit) = std::env::var_os("ANVIL_GIT") {
            let program = PathBuf::from(explicit);
            return program.is_file().then_some(Git { program });
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join("git"))
            .find(|candidate| candidate.is_file())
            .map(|program| Git { program })
    }

    /// [`Git::find`], or [`GitError::NotFound`].
    pub(crate) fn require() -> Result<Git, GitError> {
        Git::find().ok_or(GitError::NotFound)
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    /// `git --git-dir RECORD …`: a command on anvil's record.
    pub fn record(&self, record: &Path) -> Run {
        let mut command = self.command();
        command.arg("--git-dir").arg(record);
        Run { command }
    }

    /// `git -C PROJECT …`: a command on the project's own repository.
    pub fn project(&self, project: &Path) -> Run {
        let mut command = self.command();
        command.arg("-C").arg(project);
        Run { command }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        for (name, _) in std::env::vars_os() {
            if scrubbed(&name) {
                command.env_remove(name);
            }
        }
        command.stdin(Stdio::null());
        command
    }
}

/// Is `name` a variable git must not see (a `GIT_*` variable not in [`KEPT`])? A name that
/// is not UTF-8 is none of git's.
fn scrubbed(name: &OsStr) -> bool {
    name.to_str()
        .is_some_and(|name| name.starts_with("GIT_") && !KEPT.contains(&name))
}

/// One git command being put together.
#[derive(Debug)]
pub struct Run {
    command: Command,
}

impl Run {
    pub fn args<I, S>(mut self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Gives git `lock` (an open file holding a `flock`) as its standard input: the lock then
    /// lives as long as git and every process git starts, even if this process is killed.
    pub(crate) fn holding(mut self, lock: &std::fs::File) -> std::io::Result<Run> {
        self.command.stdin(Stdio::from(lock.try_clone()?));
        Ok(self)
    }

    /// Runs it to the end; its stdout on success, else what it said on stderr (and stdout).
    pub fn output(mut self) -> Result<String, GitError> {
        let what = self.what();
        let output = self.command.output().map_err(|source| GitError::Spawn {
            what: what.clone(),
            source,
        })?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let mut message = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !stdout.trim().is_empty() {
            message.push('\n');
            message.push_str(stdout.trim());
        }
        if message.is_empty() {
            message = output.status.to_string();
        }
        Err(GitError::Failed { what, message })
    }

    /// The git subcommand, for messages: the first argument that is not an option of git's
    /// own (`fetch`, `push`, `gc`, …).
    fn what(&self) -> String {
        let mut args = self.command.get_args().map(|a| a.to_string_lossy());
        while let Some(arg) = args.next() {
            match arg.as_ref() {
                "--git-dir" | "-C" | "-c" => {
                    args.next();
                }
                a if a.starts_with('-') => {}
                a => return a.to_owned(),
            }
        }
        "(no subcommand)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_variables_are_scrubbed_and_transport_ones_kept() {
        for name in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_COMMON_DIR",
            "GIT_NAMESPACE",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_GLOBAL",
            "GIT_QUARANTINE_PATH",
            "GIT_ANYTHING_NEW",
        ] {
            assert!(scrubbed(OsStr::new(name)), "{name}");
        }
        for name in ["GIT_SSH_COMMAND", "GIT_ASKPASS", "HOME", "PATH", "GITX"] {
            assert!(!scrubbed(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn a_command_names_its_subcommand_and_says_what_git_said() {
        let Some(git) = Git::find() else {
            panic!("the tests need git on the PATH");
        };
        let dir = tempfile::tempdir().unwrap();
        let run = git.record(&dir.path().join("nothing-here")).args([
            "-c",
            "gc.auto=0",
            "rev-parse",
            "HEAD",
        ]);
        assert_eq!(run.what(), "rev-parse");
        let err = run.output().unwrap_err();
        assert!(
            matches!(&err, GitError::Failed { what, message } if what == "rev-parse" && !message.is_empty()),
            "{err}"
        );
    }
}
