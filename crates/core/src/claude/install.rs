//! Merging anvil into Claude Code's settings and commands, and taking it out again.
//!
//! `install` and `uninstall` run the same steps, each a module here with what it adds and
//! how it is taken out side by side, and its own test: [`hooks`], [`env`] (the block cap),
//! [`permissions`] and [`mcp`] in `settings.json`, then [`commands`] (slash command files);
//! the project's `.mcp.json` is [`mcp::install_mcp`] and [`mcp::uninstall_mcp`].
//!
//! The user's own entries are never touched: anvil recognises its hooks by their commands
//! (`anvil-hook SUB`, or the `anvil hook SUB` of older versions, of any path), its environment
//! entries and permissions by their exact values, and its command files by a frontmatter key.
//! Installing twice changes nothing.
//!
//! What is written calls anvil's binaries by name (`anvil-hook stop`, `anvil slash start`),
//! never by this machine's path: `.claude/settings.json` is a file teams commit and share. The
//! binaries must then be on the PATH that Claude Code runs with; `anvil doctor` checks it.
//!
//! A value of the user's that anvil changes (the block cap) is remembered in
//! `anvil-install.json` next to the settings, so that `uninstall` puts it back. Settings files
//! are rewritten in place of their target (a symlinked `settings.json` stays a symlink) and
//! keep their permissions.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

mod commands;
mod env;
mod hooks;
pub mod host;
mod mcp;
mod memory;
mod permissions;
mod reach;

pub use commands::commands;
pub use env::{BLOCK_CAP, BLOCK_CAP_VAR};
pub(crate) use hooks::{
    HOOKS, SETTINGS_FILES, STOP_TIMEOUT, StopHookEntry, hook_entry, installed_hooks,
    managed_settings, stop_hook_entries, stop_timeout,
};
pub use hooks::{STOP_STATUS, has_stop_hook, hook_command, user_runs_stop_hook};
pub use mcp::{install_mcp, mcp_server, uninstall_mcp};

/// The hook binary, called by name.
pub const HOOK_PROGRAM: &str = "anvil-hook";
/// The MCP server (`anvil mcp`) that lets Claude consult the record, by its name in
/// `.mcp.json`, and the permission rule that lets Claude call its tools.
pub const MCP_SERVER: &str = "anvil";
pub const MCP_PERMISSION: &str = "mcp__anvil";
/// The project file Claude Code reads MCP servers from.
pub const MCP_FILE: &str = ".mcp.json";
/// What `install` changed of the user's own settings, next to the settings file.
pub(crate) const MEMORY_FILE: &str = "anvil-install.json";

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid JSON ({source}); fix or move it, then run the command again")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: '{key}' should be {expected}; fix it by hand, then run the command again")]
    Shape {
        path: PathBuf,
        key: String,
        expected: &'static str,
    },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What `install` / `uninstall` changed, for the user.
#[derive(Debug, Default)]
pub struct Changes {
    pub lines: Vec<String>,
    /// Things the user should know that changed nothing (a value kept, a note).
    pub notes: Vec<String>,
}

/// One part of what `install` adds to `settings.json`, with its removal beside it. A removal
/// takes out only what is anvil's, and the containers it leaves empty; it never fails (what
/// it does not recognise stays).
pub(crate) struct Step {
    pub(crate) add: fn(&mut Settings, &mut Changes) -> Result<(), InstallError>,
    pub(crate) remove: fn(&mut Settings, &mut Changes),
}

/// The steps in `settings.json`, in the order they run (and report).
const STEPS: [Step; 4] = [hooks::STEP, env::STEP, permissions::STEP, mcp::STEP];

/// `settings.json` as the steps see it, with the memory of the user's values that `install`
/// changed (`anvil-install.json`, next to it).
pub(crate) struct Settings {
    path: PathBuf,
    root: Map<String, Value>,
    memory_path: PathBuf,
    /// `None` when uninstalling after an older version that kept no memory.
    memory: Option<Value>,
    /// Were anvil's hooks in the file as it was read?
    had_hooks: bool,
}

impl Settings {
    fn new(claude: &Path, root: Map<String, Value>, memory: Option<Value>) -> Settings {
        Settings {
            path: claude.join("settings.json"),
            had_hooks: hooks::any(&root),
            root,
            memory_path: claude.join(MEMORY_FILE),
            memory,
        }
    }
}

/// Adds anvil to the `.claude` folder `claude`: each step in `settings.json` (written once,
/// when one changed something), the memory file, then the command files.
pub fn install(claude: &Path) -> Result<Changes, InstallError> {
    let settings_path = claude.join("settings.json");
    let memory_path = claude.join(MEMORY_FILE);
    let root = match read_settings(&settings_path)? {
        Value::Object(root) => root,
        _ => return Err(shape(&settings_path, "(top level)", "an object")),
    };
    let memory_before = read_settings(&memory_path)?;
    let mut settings = Settings::new(claude, root, Some(memory_before.clone()));
    let mut changes = Changes::default();
    for step in &STEPS {
        (step.add)(&mut settings, &mut changes)?;
    }
    if !changes.lines.is_empty() {
        write_json(&settings_path, &Value::Object(settings.root))?;
    }
    // The memory file exists after every install, even with nothing in it to restore: its
    // absence tells `uninstall` that an older version did the install.
    let mut memory = settings.memory.unwrap_or_else(|| json!({}));
    if let Some(object) = memory.as_object_mut()
        && !object.contains_key("about")
    {
        object.insert(
            "about".into(),
            json!("written by `anvil install`: settings of yours that it changed, which `anvil uninstall` restores"),
        );
    }
    if memory != memory_before {
        write_json(&memory_path, &memory)?;
    }
    commands::write(claude, &mut changes)?;
    Ok(changes)
}

/// Takes out what `install` added to `claude`, step by step in the same order, and puts back
/// what it changed of the user's.
pub fn uninstall(claude: &Path) -> Result<Changes, InstallError> {
    let settings_path = claude.join("settings.json");
    let memory_path = claude.join(MEMORY_FILE);
    let memory = if memory_path.exists() {
        Some(read_settings(&memory_path)?)
    } else {
        None
    };
    let mut changes = Changes::default();
    if settings_path.exists()
        && let Value::Object(root) = read_settings(&settings_path)?
    {
        let mut settings = Settings::new(claude, root, memory.clone());
        for step in &STEPS {
            (step.remove)(&mut settings, &mut changes);
        }
        if !changes.lines.is_empty() {
            write_json(&settings_path, &Value::Object(settings.root))?;
        }
    }
    if memory.is_some() {
        std::fs::remove_file(&memory_path).map_err(|source| InstallError::Write {
            path: memory_path.clone(),
            source,
        })?;
    }
    commands::remove(claude, &mut changes)?;
    Ok(changes)
}

/// The hook program for a settings file that only this run of this machine uses (`anvil
/// run`'s `--settings`): the `anvil-hook` beside this executable, else this executable's
/// `hook` subcommand; by name when neither path needs no quoting.
pub fn local_hook_program() -> String {
    let exe = std::env::current_exe().ok();
    let plain = |p: &Path| {
        p.to_str()
            .filter(|s| {
                s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
            })
            .map(str::to_owned)
    };
    let sibling = exe
        .as_deref()
        .and_then(Path::parent)
        .map(|dir| dir.join(HOOK_PROGRAM))
        .filter(|p| p.is_file());
    sibling
        .as_deref()
        .and_then(plain)
        .or_else(|| exe.as_deref().and_then(plain).map(|p| format!("{p} hook")))
        .unwrap_or_else(|| HOOK_PROGRAM.to_owned())
}

/// `.claude` of the project, or of the user with `user`.
pub fn claude_dir(project: &Path, user: bool) -> PathBuf {
    if user {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".claude")
    } else {
        project.join(".claude")
    }
}

fn display_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Settings that run anvil's Stop hook with the block cap raised, for `claude --settings`.
/// `program` runs the hooks (e.g. [`local_hook_program`]).
pub fn hook_settings(program: &str) -> Value {
    json!({
        "hooks": { "Stop": [{ "hooks": [hook_entry("Stop", &format!("{program} stop"))] }] },
        "env": { BLOCK_CAP_VAR: BLOCK_CAP },
    })
}

/// What the plugin (and the marketplace that lists it) says anvil is.
pub const PLUGIN_DESCRIPTION: &str =
    "Structured AI debates inside Claude Code, every step recorded in git";

/// Where the programs a plugin's hooks, MCP server and commands run are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginBinaries {
    /// On Claude Code's PATH, by name: a plugin folder for development (`claude --plugin-dir`),
    /// next to a `cargo install`.
    OnPath,
    /// In the plugin's own `bin/` (the npm package): the hooks and the MCP server name them
    /// under `${CLAUDE_PLUGIN_ROOT}`, and the commands find `anvil` on the PATH Claude Code
    /// gives its Bash tool, which holds the plugin's `bin/`. Nothing on the user's PATH.
    Inside,
}

/// The plugin's `bin/`, as Claude Code substitutes it in hooks and MCP server entries.
pub const PLUGIN_BIN: &str = "${CLAUDE_PLUGIN_ROOT}/bin";

/// The command of the plugin's hook `sub`. Inside the plugin the path is quoted: the plugin
/// root may hold spaces (a home folder's name), and the shell Claude Code runs the command
/// with would split it there.
pub fn plugin_hook_command(binaries: PluginBinaries, sub: &str) -> String {
    match binaries {
        PluginBinaries::OnPath => hook_command(sub),
        PluginBinaries::Inside => format!("\"{PLUGIN_BIN}/{HOOK_PROGRAM}\" {sub}"),
    }
}

/// Writes anvil as a Claude Code plugin into `dir`: `.claude-plugin/plugin.json`,
/// `hooks/hooks.json` (every hook), `.mcp.json` (the `anvil mcp` server) and `commands/` (the
/// same commands `install` writes), calling the binaries where `binaries` says.
/// Returns the files written. Load it with `claude --plugin-dir DIR`.
pub fn write_plugin(dir: &Path, binaries: PluginBinaries) -> Result<Vec<PathBuf>, InstallError> {
    let mut hooks = Map::new();
    for (event, sub) in HOOKS {
        let command = plugin_hook_command(binaries, sub);
        hooks.insert(
            event.to_owned(),
            json!([{ "hooks": [hook_entry(event, &command)] }]),
        );
    }
    let mcp_program = match binaries {
        PluginBinaries::OnPath => "anvil".to_owned(),
        PluginBinaries::Inside => format!("{PLUGIN_BIN}/anvil"),
    };
    let mut files: Vec<(PathBuf, String)> = vec![
        (
            dir.join(".claude-plugin/plugin.json"),
            pretty(&json!({
                "name": "anvil",
                "version": env!("CARGO_PKG_VERSION"),
                "description": PLUGIN_DESCRIPTION,
                "author": { "name": "the anvil authors" },
                "license": env!("CARGO_PKG_LICENSE"),
            })),
        ),
        (
            dir.join("hooks/hooks.json"),
            pretty(&json!({ "hooks": hooks })),
        ),
        (
            dir.join(MCP_FILE),
            pretty(&json!({ "mcpServers": { MCP_SERVER: mcp_server(&mcp_program) } })),
        ),
    ];
    for (name, text) in commands() {
        files.push((dir.join("commands").join(name), text));
    }
    let mut written = Vec::new();
    for (path, text) in files {
        write_in_place(&path, text.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON values always serialise");
    text.push('\n');
    text
}

fn object_entry<'a>(
    root: &'a mut Map<String, Value>,
    key: &str,
    path: &Path,
) -> Result<&'a mut Map<String, Value>, InstallError> {
    root.entry(key)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| shape(path, key, "an object"))
}

fn shape(path: &Path, key: &str, expected: &'static str) -> InstallError {
    InstallError::Shape {
        path: path.to_owned(),
        key: key.to_owned(),
        expected,
    }
}

fn read_settings(path: &Path) -> Result<Value, InstallError> {
    match crate::fsutil::read_optional(path).map_err(|source| InstallError::Read {
        path: path.to_owned(),
        source,
    })? {
        None => Ok(json!({})),
        Some(text) if text.trim().is_empty() => Ok(json!({})),
        Some(text) => serde_json::from_str(&text).map_err(|source| InstallError::Json {
            path: path.to_owned(),
            source,
        }),
    }
}

fn write_json(path: &Path, value: &Value) -> Result<(), InstallError> {
    write_in_place(path, pretty(value).as_bytes())
}

/// The file a path names once its symlinks are followed (up to a sane depth); the path itself
/// when it is not a symlink or does not exist yet.
pub(crate) fn resolve_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut path = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "too many levels of symbolic links at {}",
        path.display()
    )))
}

/// Replaces the contents of `path` atomically, in the file it names: through symlinks (the
/// link stays, its target changes), keeping the file's permissions (a private settings file
/// stays private). A new file gets ordinary permissions.
pub(crate) fn write_in_place(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    let failed = |source| InstallError::Write {
        path: path.to_owned(),
        source,
    };
    let target = resolve_symlinks(path).map_err(failed)?;
    let permissions = match std::fs::metadata(&target) {
        Ok(meta) => meta.permissions(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return crate::fsutil::write_atomic(&target, bytes).map_err(failed);
        }
        Err(e) => return Err(failed(e)),
    };
    // The new contents carry the old permissions before they take the file's place, so a
    // private file is never readable by others, not even for a moment.
    let dir = target.parent().unwrap_or(Path::new("."));
    let write = || -> std::io::Result<()> {
        let mut tmp = tempfile::Builder::new()
            .prefix(".anvil-tmp")
            .permissions(permissions)
            .tempfile_in(dir)?;
        std::io::Write::write_all(&mut tmp, bytes)?;
        tmp.persist(&target).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(failed)
}

#[cfg(test)]
impl Settings {
    /// `settings.json` holding `value`, after an install that remembered nothing.
    pub(crate) fn for_test(value: Value) -> Settings {
        let Value::Object(root) = value else {
            panic!("settings are an object");
        };
        Settings::new(Path::new(".claude"), root, Some(json!({})))
    }
}

/// Runs `step` on the user's `settings` as `install` and `uninstall` do, and checks that the
/// two mirror each other: adding says what it did, adding again changes nothing, removing
/// gives back exactly the user's settings. Returns the settings as installed.
#[cfg(test)]
pub(crate) fn steps_mirror(step: &Step, users: Value) -> Value {
    let mut settings = Settings::for_test(users.clone());
    let mut added = Changes::default();
    (step.add)(&mut settings, &mut added).unwrap();
    assert!(!added.lines.is_empty(), "added nothing");
    let installed = Value::Object(settings.root.clone());
    let mut again = Changes::default();
    (step.add)(&mut settings, &mut again).unwrap();
    assert!(again.lines.is_empty(), "twice: {:?}", again.lines);
    assert_eq!(Value::Object(settings.root.clone()), installed, "twice");
    let mut removed = Changes::default();
    (step.remove)(&mut settings, &mut removed);
    assert!(!removed.lines.is_empty(), "removed nothing");
    assert_eq!(Value::Object(settings.root), users, "not mirrored");
    installed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_of_settings_mirrors_its_install_on_a_fresh_file() {
        for step in &STEPS {
            steps_mirror(step, json!({}));
        }
    }

    #[test]
    fn install_then_uninstall_leaves_the_users_settings_and_no_memory() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path();
        let users = json!({
            "model": "opus",
            "env": { "EDITOR": "vi", BLOCK_CAP_VAR: "20" },
            "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": "notify-done" }] }] },
            "permissions": { "allow": ["Bash(npm test:*)"] },
        });
        std::fs::write(claude.join("settings.json"), pretty(&users)).unwrap();
        let installed = install(claude).unwrap();
        assert!(installed.lines.len() >= 5, "{:?}", installed.lines);
        assert!(install(claude).unwrap().lines.is_empty());
        uninstall(claude).unwrap();
        let left: Value =
            serde_json::from_slice(&std::fs::read(claude.join("settings.json")).unwrap()).unwrap();
        assert_eq!(left, users);
        assert!(!claude.join(MEMORY_FILE).exists());
        assert!(
            std::fs::read_dir(claude.join("commands"))
                .unwrap()
                .next()
                .is_none()
        );
    }
}
