//! `anvil install --agent NAME` for an agent that hosts debates beside Claude Code (Codex,
//! Copilot CLI, Qwen Code, Gemini CLI, OpenCode): what its file says to wire ([`Wiring`])
//! written into the project, and taken out again by `anvil uninstall --agent NAME`, mirrored
//! step by step as for Claude Code.
//!
//! The steps: anvil's Stop hook (`anvil-hook stop`) in the host's settings file, under its
//! event and in the shape that file holds hooks in ([`Shape`]: Claude Code's groups, or
//! Copilot's entries with their `bash` command and the file's `version`); the host's cap on
//! continuations in a row raised where it has a setting for one (the value it had is
//! remembered); its plugin, where it has plugins in place of hooks, and its custom command
//! `anvil`: files of anvil's (known by the words `anvil-managed` in them; a file of the
//! person's by that name is left alone).
//!
//! The person's own entries stay as they are. The settings file's bytes before the first
//! install, when it had any, are remembered in `anvil-install.json` in the host's own folder
//! (`.qwen/`, …; `.github/` for Copilot, which reads every `.json` of `.github/hooks/` as a
//! hook file and logs any other as invalid), beside what the MCP step remembers of the file it
//! changed: when the uninstall leaves the same settings as those, the file gets those very
//! bytes back (or goes, when anvil created it), and folders anvil's files alone filled go with
//! them.
//!
//! [`Shape`]: crate::agent::host::Shape

use std::path::Path;

use serde_json::{Map, Value, json};

use super::memory::{memory_path, read_memory, say_what_memory_is, write_back};
use super::{
    Changes, InstallError, STOP_TIMEOUT, object_entry, pretty, read_settings, shape, write_in_place,
};
use crate::agent::host::{HookFile, Host, Wiring};

/// The words that mark a command or plugin file as anvil's.
const MARKER: &str = "anvil-managed";

/// The hook's command in every host's settings.
fn command() -> String {
    super::hook_command("stop")
}

/// Wires `host` into the project at `project`.
pub fn install(project: &Path, host: &dyn Host) -> Result<Changes, InstallError> {
    let wiring = host.wiring();
    let mut changes = Changes::default();
    if let Some(hook) = &wiring.hook {
        install_hook(project, wiring, hook, &mut changes)?;
    }
    super::reach::install_files(project, wiring, &mut changes)?;
    for (name, text) in files(wiring) {
        write_file(project, wiring, name, text, &mut changes)?;
    }
    Ok(changes)
}

/// Takes out what [`install`] added for `host`.
pub fn uninstall(project: &Path, host: &dyn Host) -> Result<Changes, InstallError> {
    let wiring = host.wiring();
    let mut changes = Changes::default();
    let memory_path = memory_path(project, wiring);
    let memory = read_memory(&memory_path)?;
    super::reach::uninstall_files(project, wiring, &memory, &mut changes)?;
    if let Some(hook) = &wiring.hook {
        uninstall_hook(project, wiring, hook, &memory, &mut changes)?;
    }
    for (name, _) in files(wiring) {
        remove_file(project, wiring, name, &mut changes)?;
    }
    if memory_path.exists() {
        std::fs::remove_file(&memory_path).map_err(|source| InstallError::Write {
            path: memory_path.clone(),
            source,
        })?;
    }
    // The folders anvil's files leave empty (its files', then the settings' and the
    // memory's); a folder with anything of the person's in it stays.
    let settings = wiring.hook.as_ref().map(|h| project.join(h.settings));
    let dirs = files(wiring)
        .map(|(name, _)| project.join(name))
        .chain(settings)
        .chain(super::reach::mcp_file(wiring).map(|f| project.join(f)))
        .chain([memory_path]);
    for dir in dirs.collect::<Vec<_>>().iter().filter_map(|f| f.parent()) {
        for dir in dir
            .ancestors()
            .take_while(|d| *d != project && d.starts_with(project))
        {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
    Ok(changes)
}

/// The files of anvil's a host is given: its plugin, its custom commands.
fn files(wiring: &Wiring) -> impl Iterator<Item = (&'static str, &'static str)> {
    wiring
        .plugin
        .into_iter()
        .chain(wiring.command)
        .chain(wiring.controls.iter().copied())
}

/// The custom commands of anvil's that `wiring` gives the host and the project lacks (gone,
/// or a file of the person's in their place).
pub(crate) fn missing_commands(project: &Path, wiring: &Wiring) -> Vec<&'static str> {
    wiring
        .command
        .into_iter()
        .chain(wiring.controls.iter().copied())
        .filter(|(name, _)| {
            !std::fs::read_to_string(project.join(name)).is_ok_and(|t| is_anvils(&t))
        })
        .map(|(name, _)| name)
        .collect()
}

/// Does the project hold anvil's MCP server for the host? `None` when it speaks no MCP.
pub(crate) fn mcp_wired(project: &Path, wiring: &Wiring) -> Option<bool> {
    super::reach::mcp_wired(project, wiring)
}

/// anvil's hook in the host's settings, its cap raised; the settings' bytes remembered the
/// first time, when there were any.
fn install_hook(
    project: &Path,
    wiring: &Wiring,
    hook: &HookFile,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let path = project.join(hook.settings);
    let memory_path = memory_path(project, wiring);
    let original = crate::fsutil::read_optional(&path).map_err(|source| InstallError::Read {
        path: path.clone(),
        source,
    })?;
    let mut root = match read_settings(&path)? {
        Value::Object(root) => root,
        _ => return Err(shape(&path, "(top level)", "an object")),
    };
    let before = root.clone();
    let mut memory = read_memory(&memory_path)?;
    // The settings as the person had them, before anvil's first install: none is a file anvil
    // creates, and takes away again.
    if !memory.contains_key("original")
        && !has_ours(&root, hook)
        && let Some(text) = original
    {
        memory.insert("original".into(), json!(text));
    }
    add_hook(&mut root, hook, &path, changes)?;
    raise_cap(&mut root, hook, &mut memory, changes);
    super::reach::add(&mut root, wiring, &path, changes)?;
    if root != before {
        write_in_place(&path, pretty(&Value::Object(root)).as_bytes())?;
    }
    if !memory.is_empty() {
        say_what_memory_is(&mut memory);
        let memory = Value::Object(memory);
        if read_settings(&memory_path)? != memory {
            write_in_place(&memory_path, pretty(&memory).as_bytes())?;
        }
    }
    Ok(())
}

fn uninstall_hook(
    project: &Path,
    wiring: &Wiring,
    hook: &HookFile,
    memory: &Map<String, Value>,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let path = project.join(hook.settings);
    if path.exists()
        && let Value::Object(mut root) = read_settings(&path)?
    {
        let before = root.clone();
        remove_hook(&mut root, hook, changes);
        restore_cap(&mut root, hook, memory, changes);
        super::reach::remove(&mut root, wiring, changes);
        if root != before {
            write_back(
                &path,
                root,
                hook.shape.header.iter().map(|(key, _)| *key),
                memory.get("original"),
            )?;
        }
    }
    Ok(())
}

/// The hook entry of anvil's for this host.
fn hook_entry(hook: &HookFile) -> Value {
    let (key, per_second) = hook.timeout;
    let mut entry = Map::new();
    entry.insert("type".into(), json!("command"));
    entry.insert(hook.shape.command.into(), json!(command()));
    entry.insert(key.into(), json!(STOP_TIMEOUT * per_second));
    Value::Object(entry)
}

/// Do the settings hold anvil's hook?
pub(crate) fn has_ours(root: &Map<String, Value>, hook: &HookFile) -> bool {
    root.get("hooks")
        .and_then(|h| h.get(hook.event))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|item| entries(item, hook))
        .any(|h| is_ours(h, hook))
}

fn add_hook(
    root: &mut Map<String, Value>,
    hook: &HookFile,
    path: &Path,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let entry = hook_entry(hook);
    for (key, value) in hook.shape.header {
        root.entry(*key).or_insert_with(|| json!(value));
    }
    let hooks = object_entry(root, "hooks", path)?;
    let list = hooks
        .entry(hook.event)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| shape(path, &format!("hooks.{}", hook.event), "a list"))?;
    let ours: Vec<&Value> = list
        .iter()
        .flat_map(|item| entries(item, hook))
        .filter(|h| is_ours(h, hook))
        .collect();
    if ours == [&entry] {
        return Ok(());
    }
    let had = !ours.is_empty();
    strip(list, hook);
    list.push(match hook.shape.grouped {
        true => json!({ "hooks": [entry] }),
        false => entry,
    });
    changes.lines.push(format!(
        "{} the {} hook (`{}`) in {}",
        if had { "updated" } else { "added" },
        hook.event,
        command(),
        hook.settings
    ));
    Ok(())
}

fn remove_hook(root: &mut Map<String, Value>, hook: &HookFile, changes: &mut Changes) {
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(list) = hooks.get_mut(hook.event).and_then(Value::as_array_mut)
        && strip(list, hook)
    {
        changes.lines.push(format!(
            "removed the {} hook from {}",
            hook.event, hook.settings
        ));
        if list.is_empty() {
            hooks.remove(hook.event);
        }
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
}

/// The hook entries of an item of an event's list: a group's, or the item itself where the
/// file holds no groups.
fn entries<'v>(item: &'v Value, hook: &HookFile) -> Vec<&'v Value> {
    match hook.shape.grouped {
        true => item["hooks"].as_array().into_iter().flatten().collect(),
        false => vec![item],
    }
}

/// Is this hook entry anvil's Stop hook (of any path)?
fn is_ours(entry: &Value, hook: &HookFile) -> bool {
    entry[hook.shape.command]
        .as_str()
        .is_some_and(|c| super::hooks::is_anvil_hook(c, "stop"))
}

/// Takes anvil's entries out of an event's list, and the groups they leave empty; whether it
/// took any.
fn strip(list: &mut Vec<Value>, hook: &HookFile) -> bool {
    let before = list.len();
    if !hook.shape.grouped {
        list.retain(|h| !is_ours(h, hook));
        return list.len() != before;
    }
    let mut took = false;
    list.retain_mut(|group| {
        let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = hooks.len();
        hooks.retain(|h| !is_ours(h, hook));
        took |= hooks.len() != before;
        !(hooks.is_empty() && before > 0)
    });
    took
}

/// Raises the cap setting to what a debate needs, remembering the person's value once.
fn raise_cap(
    root: &mut Map<String, Value>,
    hook: &HookFile,
    memory: &mut Map<String, Value>,
    changes: &mut Changes,
) {
    let Some(key) = hook.cap_setting else {
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
        None => format!("set {key} to {needed} in {}", hook.settings),
        Some(old) => format!(
            "raised {key} from {old} to {needed} in {}: a debate needs that many continuations \
             in a row (`anvil uninstall --agent` puts {old} back)",
            hook.settings
        ),
    });
}

/// Puts the cap setting back as it was, if it is still the value anvil set.
fn restore_cap(
    root: &mut Map<String, Value>,
    hook: &HookFile,
    memory: &Map<String, Value>,
    changes: &mut Changes,
) {
    let (Some(key), Some(cap)) = (hook.cap_setting, memory.get("cap")) else {
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
                .push(format!("removed {key} from {}", hook.settings));
        }
        previous => {
            root.insert(key.into(), previous.clone());
            changes
                .lines
                .push(format!("put {key} back to {previous} in {}", hook.settings));
        }
    }
}

/// Writes a file of anvil's (a plugin, a custom command) unless a file of the person's is there.
fn write_file(
    project: &Path,
    wiring: &Wiring,
    name: &str,
    text: &str,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let path = project.join(name);
    match read_command(&path)? {
        Some(existing) if existing == text => {}
        Some(existing) if !is_anvils(&existing) => changes
            .notes
            .push(format!("left {name} alone: it is not anvil's")),
        _ => {
            write_in_place(&path, text.as_bytes())?;
            changes.lines.push(format!("wrote {}", what(wiring, name)));
        }
    }
    Ok(())
}

/// Is this file's text anvil's (marked as such)?
pub(crate) fn is_anvils(text: &str) -> bool {
    text.contains(MARKER)
}

/// The command a file of anvil's gives the host: its name (`anvil-steer.md`), or its folder's
/// for a skill (`anvil-steer/SKILL.md`).
pub fn command_name(file: &str) -> &str {
    let path = Path::new(file);
    match path.file_stem().and_then(|s| s.to_str()) {
        Some("SKILL") | None => path
            .parent()
            .and_then(Path::file_name)
            .and_then(|s| s.to_str())
            .unwrap_or("anvil"),
        Some(stem) => stem,
    }
}

/// What the person types for the command a file of anvil's gives the host (`/anvil-steer`,
/// Codex's `$anvil-steer`).
pub fn typed(wiring: &Wiring, file: &str) -> String {
    format!("{}{}", wiring.mention, command_name(file))
}

/// What a file of anvil's is, for people: its plugin, or the command it gives.
fn what(wiring: &Wiring, name: &str) -> String {
    match name.ends_with(".js") {
        true => format!("anvil's plugin ({name})"),
        false => format!("the command {} ({name})", typed(wiring, name)),
    }
}

fn remove_file(
    project: &Path,
    wiring: &Wiring,
    name: &str,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let path = project.join(name);
    if read_command(&path)?.is_some_and(|t| is_anvils(&t)) {
        std::fs::remove_file(&path).map_err(|source| InstallError::Write {
            path: path.clone(),
            source,
        })?;
        changes
            .lines
            .push(format!("removed {}", what(wiring, name)));
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
    use crate::claude::install::MEMORY_FILE;

    const USERS: &str = "{\n  \"model\": {\"name\": \"mine\"},\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-done\"}]}]},\n  \"stopHookBlockingCap\": 3\n}\n";

    /// For each host: added once, nothing the second time, and the uninstall gives the
    /// person's file back byte for byte (or no file, and no folder, where there was none).
    #[test]
    fn each_host_is_installed_once_and_uninstalled_to_the_same_bytes() {
        for host in crate::agent::host::hosts() {
            let wiring = host.wiring();
            let name = host.agent().name();
            for users in [None, Some(USERS)] {
                let dir = tempfile::tempdir().unwrap();
                let project = dir.path();
                let settings = wiring.hook.as_ref().map(|h| project.join(h.settings));
                if let (Some(text), Some(settings)) = (users, &settings) {
                    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
                    std::fs::write(settings, text).unwrap();
                }
                let added = install(project, host).unwrap();
                assert!(!added.lines.is_empty(), "{name}");
                if let (Some(hook), Some(settings)) = (&wiring.hook, &settings) {
                    assert!(
                        added.lines.iter().any(|l| l.contains("anvil-hook stop")),
                        "{name}: {:?}",
                        added.lines
                    );
                    let installed: Value =
                        serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
                    let ours = &installed["hooks"][hook.event];
                    assert!(
                        ours.to_string().contains("anvil-hook stop"),
                        "{name}: {installed}"
                    );
                    for (key, value) in hook.shape.header {
                        assert_eq!(installed[key], *value, "{name}");
                    }
                    if users.is_some() {
                        assert!(installed.to_string().contains("notify-done"), "{name}");
                    }
                    if let Some(key) = hook.cap_setting {
                        assert_eq!(installed[key], 200, "{name}");
                    }
                }
                for (file, text) in wiring.plugin.into_iter().chain(wiring.command) {
                    assert_eq!(
                        std::fs::read_to_string(project.join(file)).unwrap(),
                        text,
                        "{name}"
                    );
                }
                assert!(
                    install(project, host).unwrap().lines.is_empty(),
                    "{name}: twice"
                );
                let removed = uninstall(project, host).unwrap();
                assert!(!removed.lines.is_empty(), "{name}");
                match (users, &settings) {
                    (Some(text), Some(settings)) => {
                        assert_eq!(std::fs::read_to_string(settings).unwrap(), text)
                    }
                    _ => assert!(
                        std::fs::read_dir(project).unwrap().next().is_none(),
                        "{name}: something left in a project that had nothing"
                    ),
                }
            }
        }
    }

    /// A person's own `.github/hooks/anvil.json`, which anvil merges into: its bytes are
    /// remembered outside `.github/hooks/`, where Copilot would read the memory as one more
    /// hook file, and come back with the uninstall.
    #[test]
    fn copilots_memory_stays_out_of_its_hooks_folder() {
        let host = crate::agent::host::find("copilot").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let hooks = dir.path().join(".github/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        let theirs = "{\"version\": 1, \"hooks\": {\"sessionStart\": [{\"type\": \"command\", \"bash\": \"echo hi\"}]}}\n";
        std::fs::write(hooks.join("anvil.json"), theirs).unwrap();
        install(dir.path(), host).unwrap();
        let in_hooks: Vec<_> = std::fs::read_dir(&hooks)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(in_hooks, ["anvil.json"]);
        let memory = read_memory(&dir.path().join(".github").join(MEMORY_FILE)).unwrap();
        assert_eq!(memory["original"], theirs);
        uninstall(dir.path(), host).unwrap();
        assert_eq!(
            std::fs::read_to_string(hooks.join("anvil.json")).unwrap(),
            theirs
        );
        assert!(!dir.path().join(".github").join(MEMORY_FILE).exists());
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
