//! The host side of an agent: an agent whose session can run a debate through a Stop hook of
//! its own, as Claude Code's does. Qwen Code, Gemini CLI, Codex CLI and Copilot CLI each run a
//! command when a turn ends and continue the session with `{"decision":"block","reason":…}`;
//! OpenCode runs no hooks, and a plugin of anvil's hands the hook binary what a hook would.
//! anvil's one hook binary (`anvil-hook stop`) serves them all and tells them apart from what
//! each hands it ([`detect`]).
//!
//! What differs from one host to the next is in the host's own file, behind [`Host`]: how it
//! is recognised (an environment variable naming the very session that stops, or the hook
//! event's name), where the turn's text is when its input's is not the turn's own, what its
//! transcript says of the turn (model, tokens, version), its cap on continuations in a row,
//! and what `anvil install --agent NAME` writes ([`Wiring`]). Claude Code is the host when no
//! other is recognised: everything else of the Stop hook is the same for every host.

use std::path::Path;

use super::{Agent, Tokens};

/// What a Stop hook's input says, as every host hands it (Claude Code's names; absent fields
/// are `None`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stop<'a> {
    pub session: &'a str,
    /// `Stop` (Claude Code, Qwen Code, Codex) or `AfterAgent` (Gemini CLI).
    pub event: Option<&'a str>,
    pub transcript: Option<&'a Path>,
    pub last_message: Option<&'a str>,
    /// Codex: the turn that ended.
    pub turn_id: Option<&'a str>,
    /// Codex: the model of the session.
    pub model: Option<&'a str>,
    /// Gemini CLI: everything the agent answered since the person's prompt (a continued
    /// turn's answers, joined).
    pub prompt_response: Option<&'a str>,
    /// Copilot CLI: why the agent stopped (`end_turn`).
    pub stop_reason: Option<&'a str>,
    /// Copilot CLI: when the hook was called (milliseconds), as its log names the call.
    pub timestamp: Option<u64>,
    /// OpenCode's plugin: the reply's tokens, as its message info counts them.
    pub tokens: Option<&'a serde_json::Value>,
    /// OpenCode's plugin: the agent's version.
    pub version: Option<&'a str>,
}

/// What a host's own records say of the turn that ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostTurn {
    /// The host's version (`0.24.4`), where known.
    pub version: Option<String>,
    pub model: Option<String>,
    pub tokens: Tokens,
}

impl HostTurn {
    /// The host as its trailer names it: `qwen 0.24.4`.
    pub fn host(&self, agent: &dyn Agent) -> String {
        match &self.version {
            Some(v) => format!("{} {v}", agent.name()),
            None => agent.name().to_owned(),
        }
    }
}

/// What `anvil install --agent NAME` wires into a project for a host: a hook of anvil's in a
/// JSON settings file of the host's (in the shape that file holds hooks in), the host's cap
/// raised where it has a setting for it, a plugin of anvil's where the host has plugins in
/// place of hooks, and its custom command.
#[derive(Debug)]
pub struct Wiring {
    /// anvil's hook in the host's settings; `None` for a host without hooks (its plugin
    /// drives the debate).
    pub hook: Option<HookFile>,
    /// A plugin of anvil's that drives the debate where the host runs no hook: its file,
    /// relative to the project, and its text (marked `anvil-managed`).
    pub plugin: Option<(&'static str, &'static str)>,
    /// The custom command `anvil`: its file, relative to the project, and its text.
    pub command: Option<(&'static str, &'static str)>,
    /// The commands beside it that steer, show and cancel a debate (`anvil-steer`,
    /// `anvil-status`, `anvil-cancel`), in the same form.
    pub controls: &'static [(&'static str, &'static str)],
    /// The shell commands those commands run, allowed without asking in the hook's settings
    /// (a headless host offers no shell tool otherwise): the path of the list there
    /// (`["permissions", "allow"]`) and anvil's rules.
    pub allow: Option<(&'static [&'static str], &'static [&'static str])>,
    /// anvil's MCP server (`anvil mcp`), where the host speaks MCP.
    pub mcp: Option<Mcp>,
    /// The folder, relative to the project, of `anvil-install.json`: what the install
    /// remembers of the person's files, to give them back (the host's own folder, where it
    /// reads no such file: Copilot reads every `.json` of `.github/hooks/` as a hook file).
    pub memory_dir: &'static str,
    /// What the person types before a command's name: `/` (`/anvil`), or Codex's `$`, which
    /// names a skill (`$anvil`).
    pub mention: &'static str,
}

/// Where a host reads anvil's MCP server from.
#[derive(Debug)]
pub enum Mcp {
    /// `mcpServers.anvil` of the hook's settings file (Gemini CLI, Qwen Code), trusted: its
    /// tools only read the record, and a headless host leaves out a tool that would ask.
    Settings,
    /// `[mcp_servers.anvil]` of a TOML file of the project's (Codex: `.codex/config.toml`).
    Toml(&'static str),
    /// A JSON file of the project's that holds MCP servers by name under `key` (Copilot CLI:
    /// `.github/mcp.json`'s `mcpServers`; OpenCode: `opencode.json`'s `mcp`), anvil's being
    /// `entry` (JSON text) in the host's own form.
    Json {
        file: &'static str,
        key: &'static str,
        entry: &'static str,
        /// Keys the host writes into the file itself when it lacks them (OpenCode's
        /// `$schema`): written with anvil's entry, and gone with it where the person's file
        /// lacked them.
        header: &'static [(&'static str, &'static str)],
    },
}

/// A custom command as Markdown, its description in the frontmatter (Qwen Code's `{{args}}`,
/// OpenCode's `$ARGUMENTS`).
#[macro_export]
#[doc(hidden)]
macro_rules! host_markdown_command {
    ($description:literal, $words:ident, $args:literal) => {
        concat!(
            "---\ndescription: ",
            $description,
            " (anvil-managed)\n---\n",
            $crate::host_command_words!($words, $args)
        )
    };
}

/// A skill in the open agent-skills form (Copilot CLI's `.github/skills/NAME/SKILL.md`,
/// Codex's `.agents/skills/NAME/SKILL.md`): its name and description in the frontmatter, and
/// the words every host's command says. A skill is handed nothing of what the person typed
/// after its name: the model reads the rest from the prompt, after `$mention` and the name.
#[macro_export]
#[doc(hidden)]
macro_rules! host_skill {
    ($mention:literal, $name:literal, $description:literal, $words:ident) => {
        concat!(
            "---\nname: ",
            $name,
            "\ndescription: ",
            $description,
            " (anvil-managed)\n---\n",
            $crate::host_command_words!(
                $words,
                concat!("what the person typed after ", $mention, $name)
            )
        )
    };
}

/// anvil's command as a skill (`anvil`) and its controls beside it (`anvil-steer`,
/// `anvil-status`, `anvil-cancel`), each `NAME/SKILL.md` in a host's skills folder.
pub type Skills = (
    (&'static str, &'static str),
    &'static [(&'static str, &'static str)],
);

/// The [`Skills`] a host reads from the folder `$dir`, named after `$mention`.
#[macro_export]
#[doc(hidden)]
macro_rules! host_skills {
    ($dir:literal, $mention:literal) => {
        (
            (
                concat!($dir, "/anvil/SKILL.md"),
                $crate::host_skill!(
                    $mention,
                    "anvil",
                    "Start an anvil debate on a question",
                    start
                ),
            ),
            &[
                (
                    concat!($dir, "/anvil-steer/SKILL.md"),
                    $crate::host_skill!(
                        $mention,
                        "anvil-steer",
                        "Queue steering for the next phase of the running anvil debate",
                        steer
                    ),
                ),
                (
                    concat!($dir, "/anvil-status/SKILL.md"),
                    $crate::host_skill!(
                        $mention,
                        "anvil-status",
                        "Show where anvil debates stand",
                        status
                    ),
                ),
                (
                    concat!($dir, "/anvil-cancel/SKILL.md"),
                    $crate::host_skill!(
                        $mention,
                        "anvil-cancel",
                        "Cancel the running anvil debate",
                        cancel
                    ),
                ),
            ],
        )
    };
}

/// The words of a custom command, `$args` where the host puts what the person typed after it
/// (`{{args}}`, `$ARGUMENTS`), the same in every host's form of it: the model runs the command
/// with its shell tool, never a shell line of the command file's own with the person's text
/// in it.
#[macro_export]
#[doc(hidden)]
macro_rules! host_command_words {
    (start, $args:expr) => {
        concat!(
            "Run this command with your shell tool, passing the text after the colon as its \
             arguments, quoted as one question followed by any options it holds: `anvil start`: ",
            $args,
            "\n\nThen answer the prompt it prints, exactly as that prompt asks.\n"
        )
    };
    (steer, $args:expr) => {
        concat!(
            "Run this command with your shell tool, passing the text after the colon quoted as \
             one argument: `anvil steer`: ",
            $args,
            "\n\nThen tell the user in one sentence that the steering reaches the debate at its \
             next phase.\n"
        )
    };
    (status, $args:expr) => {
        "Run `anvil status` with your shell tool, and show the user what it prints as it is, \
         without commentary.\n"
    };
    (cancel, $args:expr) => {
        concat!(
            "Run this command with your shell tool, passing the text after the colon, if there \
             is any, as its argument: `anvil cancel`: ",
            $args,
            "\n\nThen tell the user the result in one sentence, and stop debating.\n"
        )
    };
}

impl Wiring {
    /// The file that makes the host run anvil: its settings holding the hook, or the plugin.
    pub fn main_file(&self) -> &'static str {
        match (&self.hook, self.plugin) {
            (Some(hook), _) => hook.settings,
            (None, Some((plugin, _))) => plugin,
            (None, None) => "",
        }
    }
}

/// The settings file a host reads its hooks from, and how anvil's hook is written there.
#[derive(Debug)]
pub struct HookFile {
    /// The file, relative to the project (`.qwen/settings.json`).
    pub settings: &'static str,
    /// The hook's event (`Stop`, `AfterAgent`, `agentStop`).
    pub event: &'static str,
    /// The key of the hook entry's timeout, and its unit per second (Gemini CLI counts
    /// milliseconds).
    pub timeout: (&'static str, u64),
    /// The setting of the host's cap on continuations in a row, raised by the install.
    pub cap_setting: Option<&'static str>,
    /// How the file holds a hook entry.
    pub shape: Shape,
}

/// How a settings file holds its hooks, under `hooks.EVENT`.
#[derive(Debug)]
pub struct Shape {
    /// The event's list holds groups of entries (`[{"hooks": [ENTRY]}]`), rather than the
    /// entries themselves.
    pub grouped: bool,
    /// The entry's key for the command to run.
    pub command: &'static str,
    /// Keys the file holds beside its hooks, with their values: written with anvil's hook
    /// into a file that lacks them, and gone with it from a file anvil created.
    pub header: &'static [(&'static str, u64)],
}

impl Shape {
    /// Claude Code's: `{"hooks": {"EVENT": [{"hooks": [{"type": "command", "command": …}]}]}}`
    /// (Qwen Code, Gemini CLI and Codex read the same).
    pub const CLAUDE: Shape = Shape {
        grouped: true,
        command: "command",
        header: &[],
    };
}

/// An agent that can host a debate. Its implementation is in the agent's own file, beside
/// its seat side.
pub trait Host: Sync {
    /// The agent it is.
    fn agent(&self) -> &'static dyn Agent;

    /// Is this stop its own? `var` reads the hook's environment.
    fn runs(&self, stop: &Stop<'_>, var: &dyn Fn(&str) -> Option<String>) -> bool;

    /// The turn's text, when the input's `last_assistant_message` is not it; `None`: that one.
    fn text(&self, _stop: &Stop<'_>) -> Option<String> {
        None
    }

    /// What its records say of the turn that ended.
    fn turn(&self, stop: &Stop<'_>, var: &dyn Fn(&str) -> Option<String>) -> HostTurn;

    /// How many continuations in a row it lets through for the project at `project` (the
    /// next `block` is dropped and the turn ends), `None` when it has no cap.
    fn block_cap(&self, _project: &Path, _var: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
        None
    }

    /// What the install writes.
    fn wiring(&self) -> &'static Wiring;

    /// Whether it runs the project's hook at `project`, for a person whose home is `home`:
    /// a host that loads a project's settings only in a folder the person trusted says so.
    fn trust(&self, _project: &Path, _home: Option<&Path>) -> Trust {
        Trust::NotAsked
    }

    /// Whether it connects anvil's MCP server of the project at `project`, for a person whose
    /// home is `home`: a host that waits for the person to approve a project's server says so.
    fn mcp_approval(&self, _project: &Path, _home: Option<&Path>) -> Trust {
        Trust::NotAsked
    }
}

/// Whether a host runs the hook anvil installed in a project ([`Host::trust`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// It asks nothing of the kind.
    NotAsked,
    /// It does: what says so.
    Trusted(String),
    /// It skips the hook: why, and what to do about it.
    Untrusted { why: String, fix: String },
}

/// The folder where an agent keeps what it knows of the person: `$VAR` when the person set it
/// (`CODEX_HOME`), else `DIR` in `home` (`.codex`).
pub(crate) fn agent_dir(var: &str, dir: &str, home: Option<&Path>) -> Option<std::path::PathBuf> {
    super::agent_home(var, dir)
        .filter(|_| std::env::var_os(var).is_some())
        .or_else(|| home.map(|h| h.join(dir)))
}

/// Folder trust as Gemini CLI and Qwen Code keep it in `HOME/DIR/`: `None` when the person's
/// `settings.json` there turns it off (or, when it is off unless turned on, does not turn it
/// on), else whether `DIR/trustedFolders.json` trusts `project`, and that file.
pub(crate) fn folder_trust(
    home: Option<&Path>,
    dir: &str,
    on_unless_off: bool,
    project: &Path,
) -> Option<(bool, std::path::PathBuf)> {
    let dir = home?.join(dir);
    let settings = std::fs::read_to_string(dir.join("settings.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .unwrap_or_default();
    let enabled = settings["security"]["folderTrust"]["enabled"].as_bool();
    if !enabled.unwrap_or(on_unless_off) {
        return None;
    }
    let rules = dir.join("trustedFolders.json");
    Some((trusted_folder(&rules, project) == Some(true), rules))
}

/// What a `trustedFolders.json` (Gemini CLI's and Qwen Code's) says of `project`: `Some(true)`
/// when a rule trusts it (`TRUST_FOLDER` on it or a folder above, `TRUST_PARENT` on a folder
/// whose parent holds it), `Some(false)` when one distrusts it (`DO_NOT_TRUST`), the rule
/// nearest the project winning; `None` when no rule speaks of it.
pub(crate) fn trusted_folder(rules: &Path, project: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(rules).ok()?;
    let rules: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).ok()?;
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_owned());
    let mut nearest: Option<(usize, bool)> = None;
    for (path, level) in &rules {
        let path = Path::new(path);
        let (folder, trusts) = match level.as_str() {
            Some("TRUST_FOLDER") => (Some(path), true),
            Some("TRUST_PARENT") => (path.parent(), true),
            Some("DO_NOT_TRUST") => (Some(path), false),
            _ => continue,
        };
        let Some(folder) = folder.filter(|f| project.starts_with(f)) else {
            continue;
        };
        let depth = folder.components().count();
        if nearest.is_none_or(|(d, _)| depth >= d) {
            nearest = Some((depth, trusts));
        }
    }
    nearest.map(|(_, trusts)| trusts)
}

/// The host of this stop among the agents that host, `None` for Claude Code (and for a host
/// nobody recognises, which is answered as Claude Code is).
pub fn detect(stop: &Stop<'_>, var: &dyn Fn(&str) -> Option<String>) -> Option<&'static dyn Host> {
    hosts().find(|h| h.runs(stop, var))
}

/// The agents that can host a debate, beside Claude Code.
pub fn hosts() -> impl Iterator<Item = &'static dyn Host> {
    super::AGENTS.iter().filter_map(|a| a.host())
}

/// The hosts beside Claude Code, for people, each with the file that wires it: `codex
/// (.codex/hooks.json), …, or opencode (.opencode/plugin/anvil.js)`.
pub fn described() -> String {
    let each: Vec<String> = hosts()
        .map(|h| format!("{} ({})", h.agent().name(), h.wiring().main_file()))
        .collect();
    match each.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The host named `name` (`qwen`).
pub fn find(name: &str) -> Option<&'static dyn Host> {
    hosts().find(|h| h.agent().name() == name)
}

/// The last line of a JSONL file whose parsed value `keep` accepts, read from its end (a
/// megabyte at most: a turn's records are at the end).
pub(crate) fn last_record(
    path: &Path,
    keep: impl Fn(&serde_json::Value) -> bool,
) -> Option<serde_json::Value> {
    tail_records(path).into_iter().rfind(|v| keep(v))
}

/// The lines of a JSONL file that parse, in its last megabyte (a turn's records are at the
/// end; a line cut at the megabyte's start does not parse).
pub(crate) fn tail_records(path: &Path) -> Vec<serde_json::Value> {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 1024 * 1024;
    let read = || -> Option<Vec<u8>> {
        let mut file = std::fs::File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        file.seek(SeekFrom::Start(meta.len().saturating_sub(TAIL)))
            .ok()?;
        let mut bytes = Vec::new();
        file.take(TAIL).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    };
    let bytes = read().unwrap_or_default();
    super::jsonl(&String::from_utf8_lossy(&bytes)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_is_recognised_by_its_own_marks_and_claude_code_by_none() {
        let none = |_: &str| None;
        let base = Stop {
            session: "s-1",
            event: Some("Stop"),
            ..Stop::default()
        };
        assert!(detect(&base, &none).is_none(), "Claude Code's stop");
        let qwen = |k: &str| (k == "QWEN_CODE_SESSION_ID").then(|| "s-1".to_owned());
        assert_eq!(detect(&base, &qwen).map(|h| h.agent().name()), Some("qwen"));
        // A variable inherited from an outer Qwen Code session speaks for no other session.
        let outer = |k: &str| (k == "QWEN_CODE_SESSION_ID").then(|| "s-0".to_owned());
        assert!(detect(&base, &outer).is_none());
        let gemini = Stop {
            event: Some("AfterAgent"),
            ..base
        };
        assert_eq!(
            detect(&gemini, &none).map(|h| h.agent().name()),
            Some("gemini")
        );
        let codex = Stop {
            turn_id: Some("t-1"),
            ..base
        };
        assert_eq!(
            detect(&codex, &none).map(|h| h.agent().name()),
            Some("codex")
        );
        let copilot = Stop {
            event: None,
            stop_reason: Some("end_turn"),
            ..base
        };
        assert_eq!(
            detect(&copilot, &none).map(|h| h.agent().name()),
            Some("copilot")
        );
        let opencode = Stop {
            event: Some("session.idle"),
            ..base
        };
        assert_eq!(
            detect(&opencode, &none).map(|h| h.agent().name()),
            Some("opencode")
        );
    }

    /// Qwen Code asks for folder trust only once the person turns it on; Gemini CLI unless
    /// they turn it off.
    #[test]
    fn folder_trust_is_asked_where_each_host_asks_it() {
        let dir = tempfile::tempdir().unwrap();
        let (home, project) = (dir.path().join("home"), dir.path().join("p"));
        std::fs::create_dir_all(&project).unwrap();
        let trust = |name: &str| find(name).unwrap().trust(&project, Some(&home));
        assert_eq!(trust("qwen"), Trust::NotAsked);
        assert!(matches!(trust("gemini"), Trust::Untrusted { .. }));
        for dir in [".qwen", ".gemini"] {
            std::fs::create_dir_all(home.join(dir)).unwrap();
        }
        std::fs::write(
            home.join(".qwen/settings.json"),
            r#"{"security": {"folderTrust": {"enabled": true}}}"#,
        )
        .unwrap();
        std::fs::write(
            home.join(".gemini/settings.json"),
            r#"{"security": {"folderTrust": {"enabled": false}}}"#,
        )
        .unwrap();
        assert!(matches!(trust("qwen"), Trust::Untrusted { .. }));
        assert_eq!(trust("gemini"), Trust::NotAsked);
    }
}
