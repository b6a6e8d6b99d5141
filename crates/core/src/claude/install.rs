//! Merging anvil into Claude Code's settings and commands, and taking it out again.
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

/// Raises Claude Code's limit of consecutive Stop-hook blocks: an interactive 5-round debate
/// needs about 15 in a row, and the default (8) would end it midway.
pub const BLOCK_CAP_VAR: &str = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP";
pub const BLOCK_CAP: &str = "200";
const MARKER_KEY: &str = "anvil-managed";
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
    #[error("cannot read {path}: {source}")]
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
    #[error("cannot write {path}: {source}")]
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

/// The hooks anvil installs: (Claude Code event, hook word). Stop drives the debate;
/// SessionStart notices a compacted or cleared context, so the next prompt is sent in full;
/// UserPromptExpansion hands the slash commands' arguments over without a shell.
pub(crate) const HOOKS: [(&str, &str); 3] = [
    ("Stop", "stop"),
    ("SessionStart", "session-start"),
    ("UserPromptExpansion", "prompt-expansion"),
];

/// The command of hook `sub`, calling the hook binary by name.
pub fn hook_command(sub: &str) -> String {
    format!("{HOOK_PROGRAM} {sub}")
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

/// Is `command` anvil's hook `sub`: `anvil-hook SUB`, or `anvil hook SUB` of older versions,
/// by name or by any path?
pub(crate) fn is_anvil_hook(command: &str, sub: &str) -> bool {
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let rest: Vec<&str> = words.collect();
    if name == HOOK_PROGRAM {
        return rest == [sub];
    }
    name.starts_with("anvil") && rest == ["hook", sub]
}

/// anvil's own subcommands that Claude may run, and that `permissions.allow` lists.
const ALLOWED_SUBCOMMANDS: [&str; 7] = [
    "start", "status", "cancel", "steer", "ask", "resume", "slash",
];

fn permissions() -> Vec<String> {
    ALLOWED_SUBCOMMANDS
        .iter()
        .map(|sub| format!("Bash(anvil {sub}:*)"))
        .chain([MCP_PERMISSION.to_owned()])
        .collect()
}

/// The `.mcp.json` entry of anvil's MCP server, calling `program` (by name when installed).
pub fn mcp_server(program: &str) -> Value {
    json!({ "type": "stdio", "command": program, "args": ["mcp"] })
}

/// Is `entry` of `.mcp.json` anvil's own server (`anvil mcp`, by name or by any path)?
fn is_anvil_mcp(entry: &Value) -> bool {
    let name = entry
        .get("command")
        .and_then(Value::as_str)
        .and_then(|c| Path::new(c).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    name.starts_with("anvil") && entry.get("args") == Some(&json!(["mcp"]))
}

/// Adds anvil's MCP server to the project's `.mcp.json`, keeping every other server. A
/// server of the user's named `anvil` is left alone, with a note.
pub fn install_mcp(project: &Path) -> Result<Changes, InstallError> {
    let path = project.join(MCP_FILE);
    let mut file = read_settings(&path)?;
    let mut changes = Changes::default();
    let root = file
        .as_object_mut()
        .ok_or_else(|| shape(&path, "(top level)", "an object"))?;
    let servers = object_entry(root, "mcpServers", &path)?;
    let wanted = mcp_server("anvil");
    match servers.get(MCP_SERVER) {
        Some(entry) if *entry == wanted => return Ok(changes),
        Some(entry) if !is_anvil_mcp(entry) => {
            changes.notes.push(format!(
                "left the MCP server '{MCP_SERVER}' of {} alone: it is not anvil's",
                path.display()
            ));
            return Ok(changes);
        }
        _ => {}
    }
    servers.insert(MCP_SERVER.into(), wanted);
    write_json(&path, &file)?;
    changes.lines.push(format!(
        "added the MCP server '{MCP_SERVER}' (`anvil mcp`) to {MCP_FILE}"
    ));
    Ok(changes)
}

/// Takes anvil's MCP server out of the project's `.mcp.json` (the file goes when nothing
/// else was in it).
pub fn uninstall_mcp(project: &Path) -> Result<Changes, InstallError> {
    let path = project.join(MCP_FILE);
    let mut changes = Changes::default();
    if !path.exists() {
        return Ok(changes);
    }
    let mut file = read_settings(&path)?;
    let Some(root) = file.as_object_mut() else {
        return Ok(changes);
    };
    let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return Ok(changes);
    };
    if !servers.get(MCP_SERVER).is_some_and(is_anvil_mcp) {
        return Ok(changes);
    }
    servers.remove(MCP_SERVER);
    if servers.is_empty() {
        root.remove("mcpServers");
    }
    changes.lines.push(format!(
        "removed the MCP server '{MCP_SERVER}' from {MCP_FILE}"
    ));
    if root.is_empty() {
        std::fs::remove_file(&path).map_err(|source| InstallError::Write {
            path: path.clone(),
            source,
        })?;
    } else {
        write_json(&path, &file)?;
    }
    Ok(changes)
}

/// The slash commands anvil adds, as (file name, contents). Their shell lines carry no user
/// text: the arguments arrive through the UserPromptExpansion hook (see [`crate::claude::slash`]).
pub fn commands() -> Vec<(&'static str, String)> {
    let file = |description: &str, hint: Option<&str>, shell: &str, after: &str| {
        let mut text = format!("---\n{MARKER_KEY}: true\ndescription: {description}\n");
        if let Some(hint) = hint {
            // Single-quoted YAML: the hint holds double quotes, `[` and `|`.
            text.push_str(&format!("argument-hint: '{}'\n", hint.replace('\'', "''")));
        }
        let program = shell
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        text.push_str(&format!(
            "allowed-tools: Bash({program}:*)\n---\n!`{shell}`\n"
        ));
        if !after.is_empty() {
            text.push_str(&format!("\n{after}\n"));
        }
        text
    };
    vec![
        (
            "anvil.md",
            file(
                "Start an anvil debate on a question",
                Some(
                    "\"QUESTION\" [--rounds N] [--mode analyst|philosopher|devils-advocate|stakeholders] [--interactive]",
                ),
                "anvil slash start",
                "",
            ),
        ),
        (
            "anvil-status.md",
            file(
                "Show where anvil debates stand",
                None,
                "anvil status --slash",
                "Show the status above to the user as it is, without commentary.",
            ),
        ),
        (
            "anvil-cancel.md",
            file(
                "Cancel the anvil debate this session is running",
                Some("[DEBATE[@LINE]]"),
                "anvil slash cancel",
                "Tell the user the result above in one sentence, and stop debating.",
            ),
        ),
        (
            "anvil-steer.md",
            file(
                "Queue steering for the next phase of the running anvil debate",
                Some("TEXT"),
                "anvil slash steer",
                "Acknowledge the steering above in one sentence; it reaches the debate at the next phase.",
            ),
        ),
    ]
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

/// The block cap as a number, when it is one.
fn cap_value(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

pub fn install(claude: &Path) -> Result<Changes, InstallError> {
    let settings_path = claude.join("settings.json");
    let memory_path = claude.join(MEMORY_FILE);
    let mut settings = read_settings(&settings_path)?;
    let mut memory = read_settings(&memory_path)?;
    let memory_before = memory.clone();
    let mut changes = Changes::default();
    let root = settings
        .as_object_mut()
        .ok_or_else(|| shape(&settings_path, "(top level)", "an object"))?;

    // One entry of ours per hook, replacing any older one (`anvil hook stop`, another path).
    for (event, sub) in HOOKS {
        let command = hook_command(sub);
        let list = hook_list(root, event, &settings_path)?;
        let ours: Vec<String> = list
            .iter()
            .flat_map(|g| group_commands(g).into_iter().map(str::to_owned))
            .filter(|c| is_anvil_hook(c, sub))
            .collect();
        if ours == [command.clone()] {
            continue;
        }
        remove_anvil_hooks(list, sub);
        list.push(json!({ "hooks": [{ "type": "command", "command": command, "timeout": 60 }] }));
        changes.lines.push(if ours.is_empty() {
            format!("added the {event} hook (`{command}`)")
        } else {
            format!(
                "updated the {event} hook (`{command}`, was `{}`)",
                ours.join("`, `")
            )
        });
    }

    // The block cap: the user's own value stays unless it is lower than anvil needs.
    let env = object_entry(root, "env", &settings_path)?;
    let current = env.get(BLOCK_CAP_VAR).cloned();
    let needed: u64 = BLOCK_CAP.parse().expect("a number");
    let remembered = memory
        .get("env")
        .and_then(|e| e.get(BLOCK_CAP_VAR))
        .is_some();
    match cap_value(current.as_ref()) {
        Some(n) if n >= needed => {
            if !remembered && n != needed {
                changes.notes.push(format!(
                    "kept your {BLOCK_CAP_VAR}={n} (anvil needs at least {BLOCK_CAP})"
                ));
            }
        }
        _ => {
            env.insert(BLOCK_CAP_VAR.into(), json!(BLOCK_CAP));
            match &current {
                None => changes
                    .lines
                    .push(format!("set env {BLOCK_CAP_VAR}={BLOCK_CAP}")),
                Some(old) => changes.lines.push(format!(
                    "raised env {BLOCK_CAP_VAR} from {} to {BLOCK_CAP}: a debate needs that many \
                     Stop-hook blocks in a row (`anvil uninstall` puts {} back)",
                    display_value(old),
                    display_value(old)
                )),
            }
            if !remembered {
                let memory = memory
                    .as_object_mut()
                    .ok_or_else(|| shape(&memory_path, "(top level)", "an object"))?;
                let env_memory = object_entry(memory, "env", &memory_path)?;
                env_memory.insert(
                    BLOCK_CAP_VAR.into(),
                    json!({ "set": BLOCK_CAP, "previous": current }),
                );
            }
        }
    }

    let perms = object_entry(root, "permissions", &settings_path)?;
    let allow = perms.entry("allow").or_insert_with(|| json!([]));
    let allow = allow
        .as_array_mut()
        .ok_or_else(|| shape(&settings_path, "permissions.allow", "a list"))?;
    // Older versions also allowed anvil by this machine's path: those go.
    let wanted = permissions();
    let before = allow.len();
    allow.retain(|v| {
        v.as_str()
            .is_none_or(|p| !is_anvil_permission(p) || wanted.iter().any(|w| w == p))
    });
    let removed = before - allow.len();
    let mut added = 0;
    for p in wanted {
        if !allow.iter().any(|v| v.as_str() == Some(p.as_str())) {
            allow.push(json!(p));
            added += 1;
        }
    }
    if added > 0 || removed > 0 {
        changes.lines.push(format!(
            "allowed anvil's own commands by name ({added} added, {removed} path-specific removed)"
        ));
    }
    // A project's `.mcp.json` server runs only once approved: anvil's is, by name.
    let enabled = root
        .entry("enabledMcpjsonServers")
        .or_insert_with(|| json!([]));
    let enabled = enabled
        .as_array_mut()
        .ok_or_else(|| shape(&settings_path, "enabledMcpjsonServers", "a list"))?;
    if !enabled.iter().any(|v| v.as_str() == Some(MCP_SERVER)) {
        enabled.push(json!(MCP_SERVER));
        changes.lines.push(format!(
            "enabled the MCP server '{MCP_SERVER}' of {MCP_FILE}"
        ));
    }
    if !changes.lines.is_empty() {
        write_json(&settings_path, &settings)?;
    }
    // The memory file exists after every install, even with nothing in it to restore: its
    // absence tells `uninstall` that an older version did the install.
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

    let commands_dir = claude.join("commands");
    for (name, text) in commands() {
        let path = commands_dir.join(name);
        match crate::fsutil::read_optional(&path).map_err(|source| InstallError::Read {
            path: path.clone(),
            source,
        })? {
            Some(existing) if existing == text => {}
            Some(existing) if !is_ours(&existing) => {
                changes
                    .notes
                    .push(format!("left {} alone: it is not anvil's", path.display()));
            }
            _ => {
                write_in_place(&path, text.as_bytes())?;
                changes
                    .lines
                    .push(format!("wrote /{}", name.trim_end_matches(".md")));
            }
        }
    }
    Ok(changes)
}

fn display_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The settings files of `.claude` that Claude Code reads, shared one first.
pub(crate) const SETTINGS_FILES: [&str; 2] = ["settings.json", "settings.local.json"];

/// The commands of anvil's hook `sub` in `.claude`'s settings files, with the file.
pub(crate) fn installed_hooks(claude: &Path, event: &str, sub: &str) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for name in SETTINGS_FILES {
        let path = claude.join(name);
        let Ok(settings) = read_settings(&path) else {
            continue;
        };
        for group in settings["hooks"][event].as_array().into_iter().flatten() {
            for command in group_commands(group) {
                if is_anvil_hook(command, sub) {
                    out.push((path.clone(), command.to_owned()));
                }
            }
        }
    }
    out
}

/// Does `.claude` (its `settings.json` or `settings.local.json`) already run anvil's Stop hook?
pub fn has_stop_hook(claude: &Path) -> bool {
    !installed_hooks(claude, "Stop", "stop").is_empty()
}

/// Settings that run anvil's Stop hook with the block cap raised, for `claude --settings`.
/// `program` runs the hooks (e.g. [`local_hook_program`]).
pub fn hook_settings(program: &str) -> Value {
    json!({
        "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": format!("{program} stop"), "timeout": 60 }] }] },
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
            json!([{ "hooks": [{ "type": "command", "command": command, "timeout": 60 }] }]),
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

pub fn uninstall(claude: &Path) -> Result<Changes, InstallError> {
    let settings_path = claude.join("settings.json");
    let memory_path = claude.join(MEMORY_FILE);
    let memory = if memory_path.exists() {
        Some(read_settings(&memory_path)?)
    } else {
        None
    };
    let mut changes = Changes::default();
    if settings_path.exists() {
        let mut settings = read_settings(&settings_path)?;
        if let Some(root) = settings.as_object_mut() {
            let mut had_hooks = false;
            if let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) {
                for (event, sub) in HOOKS {
                    if let Some(list) = hooks.get_mut(event).and_then(Value::as_array_mut)
                        && remove_anvil_hooks(list, sub)
                    {
                        had_hooks = true;
                        changes.lines.push(format!("removed the {event} hook"));
                    }
                    if hooks
                        .get(event)
                        .and_then(Value::as_array)
                        .is_some_and(Vec::is_empty)
                    {
                        hooks.remove(event);
                    }
                }
                if hooks.is_empty() {
                    root.remove("hooks");
                }
            }
            if let Some(env) = root.get_mut("env").and_then(Value::as_object_mut) {
                restore_block_cap(env, memory.as_ref(), had_hooks, &mut changes);
                if env.is_empty() {
                    root.remove("env");
                }
            }
            if let Some(perms) = root.get_mut("permissions").and_then(Value::as_object_mut) {
                if let Some(allow) = perms.get_mut("allow").and_then(Value::as_array_mut) {
                    let before = allow.len();
                    allow.retain(|v| !v.as_str().is_some_and(is_anvil_permission));
                    if allow.len() != before {
                        changes.lines.push("removed anvil's permissions".into());
                    }
                    if allow.is_empty() {
                        perms.remove("allow");
                    }
                }
                if perms.is_empty() {
                    root.remove("permissions");
                }
            }
            if let Some(enabled) = root
                .get_mut("enabledMcpjsonServers")
                .and_then(Value::as_array_mut)
            {
                let before = enabled.len();
                enabled.retain(|v| v.as_str() != Some(MCP_SERVER));
                if enabled.len() != before {
                    changes
                        .lines
                        .push(format!("no longer enabled the MCP server '{MCP_SERVER}'"));
                }
                if enabled.is_empty() {
                    root.remove("enabledMcpjsonServers");
                }
            }
        }
        if !changes.lines.is_empty() {
            write_json(&settings_path, &settings)?;
        }
    }
    if memory.is_some() {
        std::fs::remove_file(&memory_path).map_err(|source| InstallError::Write {
            path: memory_path.clone(),
            source,
        })?;
    }
    for (name, _) in commands() {
        let path = claude.join("commands").join(name);
        if let Some(text) =
            crate::fsutil::read_optional(&path).map_err(|source| InstallError::Read {
                path: path.clone(),
                source,
            })?
            && is_ours(&text)
        {
            std::fs::remove_file(&path).map_err(|source| InstallError::Write {
                path: path.clone(),
                source,
            })?;
            changes
                .lines
                .push(format!("removed /{}", name.trim_end_matches(".md")));
        }
    }
    Ok(changes)
}

/// Puts the block cap back as it was before `install`: what the memory file says, when the
/// value is still the one anvil set. Without a memory file (an install by an older version,
/// which set the cap without asking) anvil's own value goes when anvil's hooks were there.
fn restore_block_cap(
    env: &mut Map<String, Value>,
    memory: Option<&Value>,
    had_hooks: bool,
    changes: &mut Changes,
) {
    let current = env.get(BLOCK_CAP_VAR).cloned();
    let Some(memory) = memory else {
        if had_hooks && current.as_ref().and_then(Value::as_str) == Some(BLOCK_CAP) {
            env.remove(BLOCK_CAP_VAR);
            changes.lines.push(format!("removed env {BLOCK_CAP_VAR}"));
        }
        return;
    };
    let Some(entry) = memory.get("env").and_then(|e| e.get(BLOCK_CAP_VAR)) else {
        return; // anvil kept the user's value: it stays.
    };
    if current.as_ref() != entry.get("set") {
        if let Some(current) = &current {
            changes.notes.push(format!(
                "left env {BLOCK_CAP_VAR}={}: it changed since `anvil install`",
                display_value(current)
            ));
        }
        return;
    }
    match entry.get("previous").filter(|v| !v.is_null()) {
        Some(previous) => {
            env.insert(BLOCK_CAP_VAR.into(), previous.clone());
            changes.lines.push(format!(
                "restored env {BLOCK_CAP_VAR}={}",
                display_value(previous)
            ));
        }
        None => {
            env.remove(BLOCK_CAP_VAR);
            changes.lines.push(format!("removed env {BLOCK_CAP_VAR}"));
        }
    }
}

fn is_ours(command_file: &str) -> bool {
    command_file
        .strip_prefix("---\n")
        .and_then(|rest| rest.split("\n---").next())
        .is_some_and(|front| {
            front
                .lines()
                .any(|l| l.trim() == format!("{MARKER_KEY}: true"))
        })
}

fn is_anvil_permission(p: &str) -> bool {
    if p == MCP_PERMISSION {
        return true;
    }
    let Some(inner) = p.strip_prefix("Bash(").and_then(|r| r.strip_suffix(":*)")) else {
        return false;
    };
    let mut words = inner.split_whitespace();
    let program = words.next().unwrap_or("");
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    name.starts_with("anvil")
        && words
            .next()
            .is_some_and(|sub| ALLOWED_SUBCOMMANDS.contains(&sub))
        && words.next().is_none()
}

fn group_commands(group: &Value) -> Vec<&str> {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str))
        .collect()
}

/// Removes anvil's `hook SUB` entries (and groups left empty); says whether anything went.
fn remove_anvil_hooks(stop: &mut Vec<Value>, sub: &str) -> bool {
    let before: usize = stop.iter().map(|g| group_commands(g).len()).sum();
    for group in stop.iter_mut() {
        if let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) {
            hooks.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_anvil_hook(c, sub))
            });
        }
    }
    stop.retain(|g| {
        g.get("hooks")
            .and_then(Value::as_array)
            .is_none_or(|h| !h.is_empty())
    });
    let after: usize = stop.iter().map(|g| group_commands(g).len()).sum();
    after != before
}

fn hook_list<'a>(
    root: &'a mut Map<String, Value>,
    event: &str,
    path: &Path,
) -> Result<&'a mut Vec<Value>, InstallError> {
    let hooks = object_entry(root, "hooks", path)?;
    hooks
        .entry(event)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| shape(path, &format!("hooks.{event}"), "a list"))
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
mod tests {
    use super::*;

    #[test]
    fn recognises_its_own_hook_only() {
        assert!(is_anvil_hook("anvil-hook stop", "stop"));
        assert!(is_anvil_hook(
            "/opt/bin/anvil-hook prompt-expansion",
            "prompt-expansion"
        ));
        assert!(!is_anvil_hook("anvil-hook stop", "session-start"));
        assert!(!is_anvil_hook("anvil-hook hook stop", "stop"));
        assert!(is_anvil_hook("/usr/local/bin/anvil hook stop", "stop"));
        assert!(is_anvil_hook("anvil hook stop", "stop"));
        assert!(is_anvil_hook("anvil hook session-start", "session-start"));
        assert!(!is_anvil_hook("anvil hook session-start", "stop"));
        assert!(!is_anvil_hook("anvil hook stop --debug", "stop"));
        assert!(!is_anvil_hook("my-linter hook stop", "stop"));
        assert!(is_anvil_permission("Bash(/x/anvil start:*)"));
        assert!(is_anvil_permission("Bash(anvil slash:*)"));
        assert!(!is_anvil_permission("Bash(npm test:*)"));
    }
}
