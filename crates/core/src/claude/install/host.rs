//! `anvil install --agent NAME` for an agent that hosts debates beside Claude Code (Qwen Code,
//! Gemini CLI, Codex): what its file says to wire ([`Wiring`]) written into the project, and
//! taken out again by `anvil uninstall --agent NAME`, mirrored step by step as for Claude Code.
//!
//! Three steps: anvil's Stop hook (`anvil-hook stop`) in the host's settings file, under its
//! event; the host's cap on continuations in a row raised where it has a setting for one (the
//! value it had is remembered); its custom command `anvil`, a file of anvil's (known by the
//! words `anvil-managed` in it; a file of the person's by that name is left alone).
//!
//! The person's own entries stay as they are. The settings file's bytes before the first
//! install are remembered in `anvil-install.json` beside it: when the uninstall leaves the
//! same settings as those, the file gets those very bytes back (or goes, when anvil created
//! it), and folders anvil's files alone filled go with them.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{
    Changes, InstallError, MEMORY_FILE, STOP_TIMEOUT, object_entry, pretty, read_settings, shape,
    write_in_place,
};
use crate::agent::host::{Host, Wiring};

/// The words that mark a command file as anvil's.
const MARKER: &str = "anvil-managed";

/// The hook's command in every host's settings.
fn command() -> String {
    super::hook_command("stop")
}

/// Wires `host` into the project at `project`.
pub fn install(project: &Path, host: &dyn Host) -> Result<Changes, InstallError> {
    let wiring = host.wiring();
    let path = project.join(wiring.settings);
    let memory_path = memory_path(&path);
    let original = crate::fsutil::read_optional(&path).map_err(|source| InstallError::Read {
        path: path.clone(),
        source,
    })?;
    let mut root = match read_settings(&path)? {
        Value::Object(root) => root,
        _ => return Err(shape(&path, "(top level)", "an object")),
    };
    let before = root.clone();
    let mut memory = match read_settings(&memory_path)? {
        Value::Object(m) if !m.is_empty() => m,
        _ => {
            let mut m = Map::new();
            m.insert(
                "about".into(),
                json!("written by `anvil install --agent`: the settings as they were, which `anvil uninstall --agent` restores"),
            );
            m.insert("original".into(), json!(original));
            m
        }
    };
    let mut changes = Changes::default();
    add_hook(&mut root, wiring, &path, &mut changes)?;
    raise_cap(&mut root, wiring, &mut memory, &mut changes);
    if root != before {
        write_in_place(&path, pretty(&Value::Object(root)).as_bytes())?;
    }
    let memory = Value::Object(memory);
    if read_settings(&memory_path)? != memory {
        write_in_place(&memory_path, pretty(&memory).as_bytes())?;
    }
    write_command(project, wiring, &mut changes)?;
    Ok(changes)
}

/// Takes out what [`install`] added for `host`.
pub fn uninstall(project: &Path, host: &dyn Host) -> Result<Changes, InstallError> {
    let wiring = host.wiring();
    let path = project.join(wiring.settings);
    let memory_path = memory_path(&path);
    let memory = match read_settings(&memory_path)? {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut changes = Changes::default();
    if path.exists()
        && let Value::Object(mut root) = read_settings(&path)?
    {
        let before = root.clone();
        remove_hook(&mut root, wiring, &mut changes);
        restore_cap(&mut root, wiring, &memory, &mut changes);
        if root != before {
            write_back(&path, root, &memory)?;
        }
    }
    if memory_path.exists() {
        std::fs::remove_file(&memory_path).map_err(|source| InstallError::Write {
            path: memory_path.clone(),
            source,
        })?;
    }
    remove_command(project, wiring, &mut changes)?;
    // The folders anvil's files leave empty (the command's, then the settings'); a folder with
    // anything of the person's in it stays.
    let command = command_path(project, wiring);
    for dir in [command.as_deref().and_then(Path::parent), path.parent()]
        .into_iter()
        .flatten()
        .filter(|dir| *dir != project)
    {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(changes)
}

/// `anvil-install.json` beside the settings file.
fn memory_path(settings: &Path) -> PathBuf {
    settings.with_file_name(MEMORY_FILE)
}

/// The settings written back: the bytes they had before the first install when they are the
/// same settings again (no file, when there was none), else as anvil writes JSON.
fn write_back(
    path: &Path,
    root: Map<String, Value>,
    memory: &Map<String, Value>,
) -> Result<(), InstallError> {
    let root = Value::Object(root);
    match memory.get("original") {
        Some(Value::Null) if root == json!({}) => {
            std::fs::remove_file(path).map_err(|source| InstallError::Write {
                path: path.to_owned(),
                source,
            })
        }
        Some(Value::String(text))
            if serde_json::from_str::<Value>(text).ok().as_ref() == Some(&root)
                || (text.trim().is_empty() && root == json!({})) =>
        {
            write_in_place(path, text.as_bytes())
        }
        _ => write_in_place(path, pretty(&root).as_bytes()),
    }
}

/// The hook entry of anvil's for this host.
fn hook_entry(wiring: &Wiring) -> Value {
    let (key, per_second) = wiring.timeout;
    let mut entry = Map::new();
    entry.insert("type".into(), json!("command"));
    entry.insert("command".into(), json!(command()));
    entry.insert(key.into(), json!(STOP_TIMEOUT * per_second));
    Value::Object(entry)
}

fn add_hook(
    root: &mut Map<String, Value>,
    wiring: &Wiring,
    path: &Path,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let entry = hook_entry(wiring);
    let hooks = object_entry(root, "hooks", path)?;
    let list = hooks
        .entry(wiring.event)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| shape(path, &format!("hooks.{}", wiring.event), "a list"))?;
    let ours: Vec<&Value> = list
        .iter()
        .flat_map(entries)
        .filter(|h| is_ours(h))
        .collect();
    if ours == [&entry] {
        return Ok(());
    }
    let had = !ours.is_empty();
    strip(list);
    list.push(json!({ "hooks": [entry] }));
    changes.lines.push(format!(
        "{} the {} hook (`{}`) in {}",
        if had { "updated" } else { "added" },
        wiring.event,
        command(),
        wiring.settings
    ));
    Ok(())
}

fn remove_hook(root: &mut Map<String, Value>, wiring: &Wiring, changes: &mut Changes) {
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(list) = hooks.get_mut(wiring.event).and_then(Value::as_array_mut)
        && strip(list)
    {
        changes.lines.push(format!(
            "removed the {} hook from {}",
            wiring.event, wiring.settings
        ));
        if list.is_empty() {
            hooks.remove(wiring.event);
        }
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
}

/// The hook entries of a group.
fn entries(group: &Value) -> Vec<&Value> {
    group["hooks"].as_array().into_iter().flatten().collect()
}

/// Is this hook entry anvil's Stop hook (of any path)?
fn is_ours(entry: &Value) -> bool {
    entry["command"]
        .as_str()
        .is_some_and(|c| super::hooks::is_anvil_hook(c, "stop"))
}

/// Takes anvil's entries out of a list of groups, and the groups they leave empty; whether it
/// took any.
fn strip(list: &mut Vec<Value>) -> bool {
    let mut took = false;
    list.retain_mut(|group| {
        let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = hooks.len();
        hooks.retain(|h| !is_ours(h));
        took |= hooks.len() != before;
        !(hooks.is_empty() && before > 0)
    });
    took
}

/// Raises the cap setting to what a debate needs, remembering the person's value once.
fn raise_cap(
    root: &mut Map<String, Value>,
    wiring: &Wiring,
    memory: &mut Map<String, Value>,
    changes: &mut Changes,
) {
    let Some(key) = wiring.cap_setting else {
        return;
    };
    let needed: u64 = super::BLOCK_CAP.parse().expect("a number");
    let current = root.get(key).cloned();
    if current
        .as_ref()
        .and_then(Value::as_u64)
        .is_some_and(|n| n >= needed)
    {
        return;
    }
    root.insert(key.into(), json!(needed));
    if !memory.contains_key("cap") {
        memory.insert("cap".into(), json!({ "set": needed, "previous": current }));
    }
    changes.lines.push(match current {
        None => format!("set {key} to {needed} in {}", wiring.settings),
        Some(old) => format!(
            "raised {key} from {old} to {needed} in {}: a debate needs that many continuations \
             in a row (`anvil uninstall --agent` puts {old} back)",
            wiring.settings
        ),
    });
}

/// Puts the cap setting back as it was, if it is still the value anvil set.
fn restore_cap(
    root: &mut Map<String, Value>,
    wiring: &Wiring,
    memory: &Map<String, Value>,
    changes: &mut Changes,
) {
    let (Some(key), Some(cap)) = (wiring.cap_setting, memory.get("cap")) else {
        return;
    };
    if root.get(key) != Some(&cap["set"]) {
        return;
    }
    match &cap["previous"] {
        Value::Null => {
            root.remove(key);
            changes
                .lines
                .push(format!("removed {key} from {}", wiring.settings));
        }
        previous => {
            root.insert(key.into(), previous.clone());
            changes.lines.push(format!(
                "put {key} back to {previous} in {}",
                wiring.settings
            ));
        }
    }
}

fn command_path(project: &Path, wiring: &Wiring) -> Option<PathBuf> {
    wiring.command.map(|(file, _)| project.join(file))
}

fn write_command(
    project: &Path,
    wiring: &Wiring,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let (Some(path), Some((name, text))) = (command_path(project, wiring), wiring.command) else {
        return Ok(());
    };
    match read_command(&path)? {
        Some(existing) if existing == text => {}
        Some(existing) if !existing.contains(MARKER) => changes
            .notes
            .push(format!("left {name} alone: it is not anvil's")),
        _ => {
            write_in_place(&path, text.as_bytes())?;
            changes
                .lines
                .push(format!("wrote the command /anvil ({name})"));
        }
    }
    Ok(())
}

fn remove_command(
    project: &Path,
    wiring: &Wiring,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let (Some(path), Some((name, _))) = (command_path(project, wiring), wiring.command) else {
        return Ok(());
    };
    if read_command(&path)?.is_some_and(|t| t.contains(MARKER)) {
        std::fs::remove_file(&path).map_err(|source| InstallError::Write {
            path: path.clone(),
            source,
        })?;
        changes
            .lines
            .push(format!("removed the command /anvil ({name})"));
    }
    Ok(())
}

fn read_command(path: &Path) -> Result<Option<String>, InstallError> {
    crate::fsutil::read_optional(path).map_err(|source| InstallError::Read {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const USERS: &str = "{\n  \"model\": {\"name\": \"mine\"},\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-done\"}]}]},\n  \"stopHookBlockingCap\": 3\n}\n";

    /// For each host: added once, nothing the second time, and the uninstall gives the
    /// person's file back byte for byte (or no file, and no folder, where there was none).
    #[test]
    fn each_host_is_installed_once_and_uninstalled_to_the_same_bytes() {
        for host in crate::agent::host::hosts() {
            let wiring = host.wiring();
            for users in [None, Some(USERS)] {
                let dir = tempfile::tempdir().unwrap();
                let project = dir.path();
                let settings = project.join(wiring.settings);
                if let Some(text) = users {
                    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
                    std::fs::write(&settings, text).unwrap();
                }
                let added = install(project, host).unwrap();
                let name = host.agent().name();
                assert!(
                    added.lines.iter().any(|l| l.contains("anvil-hook stop")),
                    "{name}: {:?}",
                    added.lines
                );
                let installed: Value =
                    serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
                let ours = &installed["hooks"][wiring.event];
                assert!(
                    ours.to_string().contains("anvil-hook stop"),
                    "{name}: {installed}"
                );
                if users.is_some() {
                    assert!(installed.to_string().contains("notify-done"), "{name}");
                }
                if let Some(key) = wiring.cap_setting {
                    assert_eq!(installed[key], 200, "{name}");
                }
                assert!(
                    install(project, host).unwrap().lines.is_empty(),
                    "{name}: twice"
                );
                let removed = uninstall(project, host).unwrap();
                assert!(!removed.lines.is_empty(), "{name}");
                match users {
                    Some(text) => assert_eq!(std::fs::read_to_string(&settings).unwrap(), text),
                    None => assert!(
                        std::fs::read_dir(project).unwrap().next().is_none(),
                        "{name}: something left in a project that had nothing"
                    ),
                }
            }
        }
    }

    #[test]
    fn a_command_file_of_the_persons_stays() {
        let host = crate::agent::host::find("qwen").unwrap();
        let (file, _) = host.wiring().command.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "my own anvil\n").unwrap();
        let added = install(dir.path(), host).unwrap();
        assert_eq!(added.notes.len(), 1, "{:?}", added.notes);
        uninstall(dir.path(), host).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "my own anvil\n");
    }
}
