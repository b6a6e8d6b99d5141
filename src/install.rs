//! Merging anvil into Claude Code's settings and commands, and taking it out again.
//!
//! The user's own entries are never touched: anvil recognises its hook by its command
//! (`… hook stop` of an `anvil` binary), its environment entries and permissions by their exact
//! values, and its command files by a frontmatter key. Installing twice changes nothing.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// Raises Claude Code's limit of consecutive Stop-hook blocks: an interactive 5-round debate
/// needs about 15 in a row, and the default (8) would end it midway.
pub const BLOCK_CAP_VAR: &str = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP";
pub const BLOCK_CAP: &str = "200";
const MARKER_KEY: &str = "anvil-managed";

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
}

/// The shell word that runs this anvil: its absolute path when that needs no quoting.
pub fn program() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_owned))
        .filter(|p| {
            p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
        })
        .unwrap_or_else(|| "anvil".to_owned())
}

/// The hooks anvil installs: (Claude Code event, `anvil hook` subcommand). Stop drives the
/// debate; SessionStart notices a compacted or cleared context, so the next prompt is sent in
/// full.
const HOOKS: [(&str, &str); 2] = [("Stop", "stop"), ("SessionStart", "session-start")];

fn hook_command(program: &str, sub: &str) -> String {
    format!("{program} hook {sub}")
}

/// Is `command` the `anvil hook SUB` of some anvil binary?
fn is_anvil_hook(command: &str, sub: &str) -> bool {
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    name.starts_with("anvil") && words.collect::<Vec<_>>() == ["hook", sub]
}

fn permissions(program: &str) -> Vec<String> {
    ["start", "status", "cancel", "steer", "ask", "resume"]
        .iter()
        .flat_map(|sub| {
            let mut v = vec![format!("Bash(anvil {sub}:*)")];
            if program != "anvil" {
                v.push(format!("Bash({program} {sub}:*)"));
            }
            v
        })
        .collect()
}

/// The slash commands anvil adds, as (file name, contents).
pub fn commands(program: &str) -> Vec<(&'static str, String)> {
    let allowed = |sub: &str| {
        let mut v = vec![format!("Bash(anvil {sub}:*)")];
        if program != "anvil" {
            v.push(format!("Bash({program} {sub}:*)"));
        }
        v.join(", ")
    };
    vec![
        (
            "anvil.md",
            format!(
                "---\n{MARKER_KEY}: true\ndescription: Start an anvil debate on a question\nargument-hint: \"QUESTION\" [--rounds N] [--mode analyst|philosopher|devils-advocate|stakeholders] [--interactive]\nallowed-tools: {}\n---\n!`{program} start --slash $ARGUMENTS`\n",
                allowed("start")
            ),
        ),
        (
            "anvil-status.md",
            format!(
                "---\n{MARKER_KEY}: true\ndescription: Show where anvil debates stand\nallowed-tools: {}\n---\n!`{program} status --slash`\n\nShow the status above to the user as it is, without commentary.\n",
                allowed("status")
            ),
        ),
        (
            "anvil-cancel.md",
            format!(
                "---\n{MARKER_KEY}: true\ndescription: Cancel the anvil debate this session is running\nargument-hint: \"[DEBATE[@LINE]]\"\nallowed-tools: {}\n---\n!`{program} cancel --slash $ARGUMENTS`\n\nTell the user the result above in one sentence, and stop debating.\n",
                allowed("cancel")
            ),
        ),
        (
            "anvil-steer.md",
            format!(
                "---\n{MARKER_KEY}: true\ndescription: Queue steering for the next phase of the running anvil debate\nargument-hint: \"TEXT\"\nallowed-tools: {}\n---\n!`{program} steer --slash $ARGUMENTS`\n\nAcknowledge the steering above in one sentence; it reaches the debate at the next phase.\n",
                allowed("steer")
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

pub fn install(claude: &Path, program: &str) -> Result<Changes, InstallError> {
    let settings_path = claude.join("settings.json");
    let mut settings = read_settings(&settings_path)?;
    let mut changes = Changes::default();
    let root = settings
        .as_object_mut()
        .ok_or_else(|| shape(&settings_path, "(top level)", "an object"))?;

    // One entry of ours per hook, replacing any older one (e.g. another binary path).
    for (event, sub) in HOOKS {
        let command = hook_command(program, sub);
        let list = hook_list(root, event, &settings_path)?;
        let before = list.len();
        let ours_present = list
            .iter()
            .any(|group| group_commands(group).iter().any(|c| *c == command));
        if !ours_present {
            remove_anvil_hooks(list, sub);
            list.push(
                json!({ "hooks": [{ "type": "command", "command": command, "timeout": 60 }] }),
            );
            changes.lines.push(if list.len() > before {
                format!("added the {event} hook")
            } else {
                format!("updated the {event} hook")
            });
        }
    }

    let env = object_entry(root, "env", &settings_path)?;
    if env.get(BLOCK_CAP_VAR).and_then(Value::as_str) != Some(BLOCK_CAP) {
        env.insert(BLOCK_CAP_VAR.into(), json!(BLOCK_CAP));
        changes
            .lines
            .push(format!("set env {BLOCK_CAP_VAR}={BLOCK_CAP}"));
    }

    let perms = object_entry(root, "permissions", &settings_path)?;
    let allow = perms.entry("allow").or_insert_with(|| json!([]));
    let allow = allow
        .as_array_mut()
        .ok_or_else(|| shape(&settings_path, "permissions.allow", "a list"))?;
    let mut added = 0;
    for p in permissions(program) {
        if !allow.iter().any(|v| v.as_str() == Some(p.as_str())) {
            allow.push(json!(p));
            added += 1;
        }
    }
    if added > 0 {
        changes.lines.push(format!(
            "allowed anvil's own commands ({added} permissions)"
        ));
    }
    if !changes.lines.is_empty() {
        write_json(&settings_path, &settings)?;
    }

    let commands_dir = claude.join("commands");
    for (name, text) in commands(program) {
        let path = commands_dir.join(name);
        match crate::fsutil::read_optional(&path).map_err(|source| InstallError::Read {
            path: path.clone(),
            source,
        })? {
            Some(existing) if existing == text => {}
            Some(existing) if !is_ours(&existing) => {
                changes
                    .lines
                    .push(format!("left {} alone: it is not anvil's", path.display()));
            }
            _ => {
                crate::fsutil::write_atomic(&path, text.as_bytes()).map_err(|source| {
                    InstallError::Write {
                        path: path.clone(),
                        source,
                    }
                })?;
                changes
                    .lines
                    .push(format!("wrote /{}", name.trim_end_matches(".md")));
            }
        }
    }
    Ok(changes)
}

/// Does `.claude` (its `settings.json` or `settings.local.json`) already run anvil's Stop hook?
pub fn has_stop_hook(claude: &Path) -> bool {
    ["settings.json", "settings.local.json"].iter().any(|name| {
        read_settings(&claude.join(name)).is_ok_and(|settings| {
            settings["hooks"]["Stop"].as_array().is_some_and(|groups| {
                groups.iter().any(|g| {
                    group_commands(g)
                        .into_iter()
                        .any(|c| is_anvil_hook(c, "stop"))
                })
            })
        })
    })
}

/// Settings that run anvil's Stop hook with the block cap raised, for `claude --settings`.
pub fn hook_settings(program: &str) -> Value {
    json!({
        "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": hook_command(program, "stop"), "timeout": 60 }] }] },
        "env": { BLOCK_CAP_VAR: BLOCK_CAP },
    })
}

/// Writes anvil as a Claude Code plugin into `dir`: `.claude-plugin/plugin.json`,
/// `hooks/hooks.json` (both hooks) and `commands/` (the same commands `install` writes).
/// Returns the files written. Load it with `claude --plugin-dir DIR`.
pub fn write_plugin(dir: &Path, program: &str) -> Result<Vec<PathBuf>, InstallError> {
    let mut hooks = Map::new();
    for (event, sub) in HOOKS {
        hooks.insert(
            event.to_owned(),
            json!([{ "hooks": [{ "type": "command", "command": hook_command(program, sub), "timeout": 60 }] }]),
        );
    }
    let mut files: Vec<(PathBuf, String)> = vec![
        (
            dir.join(".claude-plugin/plugin.json"),
            pretty(&json!({
                "name": "anvil",
                "version": env!("CARGO_PKG_VERSION"),
                "description": env!("CARGO_PKG_DESCRIPTION"),
            })),
        ),
        (
            dir.join("hooks/hooks.json"),
            pretty(&json!({ "hooks": hooks })),
        ),
    ];
    for (name, text) in commands(program) {
        files.push((dir.join("commands").join(name), text));
    }
    let mut written = Vec::new();
    for (path, text) in files {
        crate::fsutil::write_atomic(&path, text.as_bytes()).map_err(|source| {
            InstallError::Write {
                path: path.clone(),
                source,
            }
        })?;
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
    let mut changes = Changes::default();
    if settings_path.exists() {
        let mut settings = read_settings(&settings_path)?;
        if let Some(root) = settings.as_object_mut() {
            if let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) {
                for (event, sub) in HOOKS {
                    if let Some(list) = hooks.get_mut(event).and_then(Value::as_array_mut)
                        && remove_anvil_hooks(list, sub)
                    {
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
                if env.get(BLOCK_CAP_VAR).and_then(Value::as_str) == Some(BLOCK_CAP) {
                    env.remove(BLOCK_CAP_VAR);
                    changes.lines.push(format!("removed env {BLOCK_CAP_VAR}"));
                }
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
        }
        if !changes.lines.is_empty() {
            write_json(&settings_path, &settings)?;
        }
    }
    for (name, _) in commands("anvil") {
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
        && words.next().is_some_and(|sub| {
            ["start", "status", "cancel", "steer", "ask", "resume"].contains(&sub)
        })
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
    let text = pretty(value);
    crate::fsutil::write_atomic(path, text.as_bytes()).map_err(|source| InstallError::Write {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_its_own_hook_only() {
        assert!(is_anvil_hook("/usr/local/bin/anvil hook stop", "stop"));
        assert!(is_anvil_hook("anvil hook stop", "stop"));
        assert!(is_anvil_hook("anvil hook session-start", "session-start"));
        assert!(!is_anvil_hook("anvil hook session-start", "stop"));
        assert!(!is_anvil_hook("anvil hook stop --debug", "stop"));
        assert!(!is_anvil_hook("my-linter hook stop", "stop"));
        assert!(is_anvil_permission("Bash(/x/anvil start:*)"));
        assert!(!is_anvil_permission("Bash(npm test:*)"));
    }
}
