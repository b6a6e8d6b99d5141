//! Where the doctor looks: the project, the user's Claude Code settings, the PATH.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::home::Home;

/// Where the doctor looks: passed in, so tests need no real HOME or PATH.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Where the command runs (the project, or inside it).
    pub cwd: PathBuf,
    /// The user's home (`~/.claude`, `~/.claude.json`).
    pub home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`, when set: where Claude Code keeps `.claude.json` instead.
    pub claude_config_dir: Option<PathBuf>,
    /// `$PATH`.
    pub path: Option<OsString>,
    /// When Claude Code started this process (its Bash tool, a `!` line): the session's id
    /// (`$CLAUDE_CODE_SESSION_ID`) and `$AI_AGENT`, which names the client's version.
    pub claude_session: Option<(String, Option<String>)>,
    /// `$ANVIL_NPM_LAUNCHER`: the npm package's node launcher that started this anvil, when
    /// one did (the native program was not put in its place).
    pub npm_launcher: Option<PathBuf>,
    /// Where Claude Code reads the managed settings of this system, whose hooks run too.
    pub managed_settings: Option<PathBuf>,
    pub now: SystemTime,
}

impl Environment {
    /// This process's environment.
    pub fn current(cwd: PathBuf) -> Environment {
        Environment {
            cwd,
            home: std::env::var_os("HOME").map(PathBuf::from),
            claude_config_dir: std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from),
            path: std::env::var_os("PATH"),
            claude_session: std::env::var("CLAUDE_CODE_SESSION_ID")
                .ok()
                .filter(|s| crate::home::valid_session(s))
                .map(|s| (s, std::env::var("AI_AGENT").ok())),
            npm_launcher: std::env::var_os("ANVIL_NPM_LAUNCHER").map(PathBuf::from),
            managed_settings: crate::claude::install::managed_settings(),
            now: SystemTime::now(),
        }
    }

    /// The project: the directory holding `.anvil`, else the working directory.
    pub(super) fn project(&self) -> PathBuf {
        Home::find(&self.cwd)
            .map(|h| h.project().to_owned())
            .unwrap_or_else(|| self.cwd.clone())
    }

    pub(super) fn user_claude(&self) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(".claude"))
    }

    /// The user's `.claude.json` (trusted workspaces, the user's MCP servers): in
    /// `$CLAUDE_CONFIG_DIR` when set, else in the home.
    pub(super) fn claude_json(&self) -> Option<PathBuf> {
        self.claude_config_dir
            .as_ref()
            .or(self.home.as_ref())
            .map(|dir| dir.join(".claude.json"))
    }

    /// Working in `cwd`, with the user's home at `home` and nothing else set: no PATH, no
    /// Claude Code session, no managed settings.
    #[cfg(test)]
    pub(super) fn for_test(cwd: PathBuf, home: Option<PathBuf>) -> Environment {
        Environment {
            cwd,
            home,
            claude_config_dir: None,
            path: None,
            claude_session: None,
            npm_launcher: None,
            managed_settings: None,
            now: SystemTime::now(),
        }
    }
}

/// A JSON file (Claude Code's settings, `.claude.json`, a plugin's files); `None` when it is
/// missing or cannot be read as JSON, which the checks report as the setting being absent.
pub(super) fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Finds `name` as an executable file in the directories of `path`.
pub(crate) fn find_in(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Finds `name` on this process's `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    find_in(&std::env::var_os("PATH")?, name)
}

pub(super) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_only_where_they_are_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (bin, other) = (dir.path().join("bin"), dir.path().join("other"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::write(other.join("tool"), "not executable").unwrap();
        let path = std::env::join_paths([&other, &bin]).unwrap();
        assert_eq!(find_in(&path, "tool"), None, "not executable yet");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_in(&path, "tool"), Some(tool));
        assert_eq!(find_in(&path, "missing"), None);
    }
}
