//! What lets another host's commands and model reach anvil, beside its hook
//! ([`super::host`]): the rules that let its shell tool run anvil's commands without asking
//! (a headless Gemini CLI or Qwen Code offers no shell tool otherwise, and `/anvil` could not
//! start a debate), and anvil's MCP server (`anvil mcp`) where the host speaks MCP. Each step
//! adds only anvil's entries and takes out only those, beside the person's.
//!
//! The rules and a JSON host's server entry go into the hook's settings file, whose bytes the
//! hook step remembers and gives back. Codex reads MCP servers from a TOML file of the
//! project's (`.codex/config.toml`), which may hold comments and a layout of the person's:
//! anvil's server goes in as a block of its own at the end, and comes out as that block; the
//! file's bytes before the first install are remembered (`toml` in the host's
//! `anvil-install.json`), and given back when what is left is the same TOML. Copilot CLI and
//! OpenCode read servers from a JSON file of the project's of their own (`.github/mcp.json`,
//! `opencode.json`): anvil's entry goes in beside the person's, in the host's form, the file's
//! bytes remembered (`json`) and given back when what is left is the same.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{
    Changes, InstallError, MCP_SERVER, object_entry, pretty, read_settings, shape, write_in_place,
};
use crate::agent::host::{Mcp, Wiring};

/// The server entry a JSON host reads: trusted, since its tools only read the record.
fn json_server() -> Value {
    json!({ "command": "anvil", "args": ["mcp"], "trust": true })
}

/// Adds the rules and the MCP server entry to the hook's settings (`root`, read from `path`).
pub(super) fn add(
    root: &mut Map<String, Value>,
    wiring: &Wiring,
    path: &Path,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let file = wiring.hook.as_ref().map_or("", |h| h.settings);
    if let Some((keys, rules)) = wiring.allow {
        let list = list_at(root, keys, path)?;
        let missing: Vec<&str> = rules
            .iter()
            .filter(|r| !list.iter().any(|v| v.as_str() == Some(**r)))
            .copied()
            .collect();
        if !missing.is_empty() {
            list.extend(missing.iter().map(|r| json!(r)));
            changes.lines.push(format!(
                "allowed its shell tool to run anvil's commands ({}) in {file}",
                keys.join(".")
            ));
        }
    }
    if matches!(wiring.mcp, Some(Mcp::Settings)) {
        let servers = object_entry(root, "mcpServers", path)?;
        match servers.get(MCP_SERVER) {
            Some(entry) if *entry == json_server() => {}
            Some(entry) if !super::mcp::is_anvil_mcp(entry) => changes.notes.push(format!(
                "left the MCP server '{MCP_SERVER}' of {file} alone: it is not anvil's"
            )),
            _ => {
                servers.insert(MCP_SERVER.into(), json_server());
                changes.lines.push(format!(
                    "added the MCP server '{MCP_SERVER}' (`anvil mcp`) to {file}"
                ));
            }
        }
    }
    Ok(())
}

/// Takes anvil's rules and server entry out of the hook's settings, and the containers they
/// leave empty.
pub(super) fn remove(root: &mut Map<String, Value>, wiring: &Wiring, changes: &mut Changes) {
    if let Some((keys, rules)) = wiring.allow {
        let took = remove_from_list(root, keys, |v| {
            v.as_str().is_some_and(|s| rules.contains(&s))
        });
        if took {
            changes
                .lines
                .push(format!("took anvil's commands out of {}", keys.join(".")));
        }
    }
    if matches!(wiring.mcp, Some(Mcp::Settings))
        && let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut)
        && servers
            .get(MCP_SERVER)
            .is_some_and(super::mcp::is_anvil_mcp)
    {
        servers.remove(MCP_SERVER);
        if servers.is_empty() {
            root.remove("mcpServers");
        }
        changes
            .lines
            .push(format!("removed the MCP server '{MCP_SERVER}'"));
    }
}

/// The list at `keys` (objects on the way made where missing).
fn list_at<'a>(
    root: &'a mut Map<String, Value>,
    keys: &[&str],
    path: &Path,
) -> Result<&'a mut Vec<Value>, InstallError> {
    let (last, objects) = keys.split_last().expect("a key");
    let mut at = root;
    for key in objects {
        at = object_entry(at, key, path)?;
    }
    at.entry(*last)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| shape(path, &keys.join("."), "a list"))
}

/// Takes the items `ours` accepts out of the list at `keys`, then the list and the objects
/// on the way when that left them empty; whether it took any.
fn remove_from_list(
    object: &mut Map<String, Value>,
    keys: &[&str],
    ours: impl Fn(&Value) -> bool + Copy,
) -> bool {
    let Some((first, rest)) = keys.split_first() else {
        return false;
    };
    let took = match (rest.is_empty(), object.get_mut(*first)) {
        (true, Some(Value::Array(list))) => {
            let before = list.len();
            list.retain(|v| !ours(v));
            list.len() != before
        }
        (false, Some(Value::Object(inner))) => remove_from_list(inner, rest, ours),
        _ => false,
    };
    let empty = match object.get(*first) {
        Some(Value::Array(list)) => list.is_empty(),
        Some(Value::Object(inner)) => inner.is_empty(),
        _ => false,
    };
    if took && empty {
        object.remove(*first);
    }
    took
}

/// anvil's block in a TOML file: known by its first line, taken out whole.
const TOML_BLOCK: &str = "# anvil-managed: anvil's MCP server (`anvil uninstall --agent` takes it out)\n\
[mcp_servers.anvil]\ncommand = \"anvil\"\nargs = [\"mcp\"]\n";

/// The file of the project's own that the host reads anvil's MCP server from, where it is
/// not the hook's settings.
pub(super) fn mcp_file(wiring: &Wiring) -> Option<&'static str> {
    match wiring.mcp.as_ref()? {
        Mcp::Settings => None,
        Mcp::Toml(file) | Mcp::Json { file, .. } => Some(file),
    }
}

/// Adds anvil's MCP server to the file of the host's that holds it, where that is not the
/// hook's settings.
pub(super) fn install_files(
    project: &Path,
    wiring: &Wiring,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    match wiring.mcp {
        Some(Mcp::Toml(file)) => install_toml(project, wiring, file, changes),
        Some(Mcp::Json { file, .. }) => install_json(project, wiring, file, changes),
        _ => Ok(()),
    }
}

/// Takes anvil's MCP server out of the file of the host's that holds it (given back as it
/// was, by what the install remembered, `memory`).
pub(super) fn uninstall_files(
    project: &Path,
    wiring: &Wiring,
    memory: &Map<String, Value>,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    match wiring.mcp {
        Some(Mcp::Toml(file)) => uninstall_toml(project, file, memory, changes),
        Some(Mcp::Json { file, .. }) => uninstall_json(project, wiring, file, memory, changes),
        _ => Ok(()),
    }
}

/// Remembers, under `key` of the host's `anvil-install.json`, the bytes a file of the
/// person's had before anvil's first change to it (`null`: there was no file), once.
fn remember(
    project: &Path,
    wiring: &Wiring,
    key: &str,
    original: Option<String>,
) -> Result<(), InstallError> {
    let memory_path = super::memory::memory_path(project, wiring);
    let mut memory = super::memory::read_memory(&memory_path)?;
    if memory.contains_key(key) {
        return Ok(());
    }
    memory.insert(key.into(), json!(original));
    super::memory::say_what_memory_is(&mut memory);
    write_in_place(&memory_path, pretty(&Value::Object(memory)).as_bytes())
}

/// Is this server entry anvil's: `anvil mcp`, its command a string with its arguments apart
/// or (OpenCode's) one list?
fn is_ours(entry: &Value) -> bool {
    let list = entry["command"].as_array().map(|list| {
        let words: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
        json!({ "command": words.first(), "args": words.get(1..) })
    });
    super::mcp::is_anvil_mcp(list.as_ref().unwrap_or(entry))
}

/// anvil's server in a JSON file of the project's (Copilot's `.github/mcp.json`, OpenCode's
/// `opencode.json`), beside the person's servers; the keys the host itself would write into
/// the file, where it lacks them.
fn install_json(
    project: &Path,
    wiring: &Wiring,
    file: &str,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let Some(Mcp::Json {
        key, entry, header, ..
    }) = wiring.mcp
    else {
        return Ok(());
    };
    let path = project.join(file);
    let original = read(&path)?;
    let wanted: Value = serde_json::from_str(entry).expect("anvil's entry is JSON");
    let mut root = match read_settings(&path)? {
        Value::Object(root) => root,
        _ => return Err(shape(&path, "(top level)", "an object")),
    };
    for (name, value) in header {
        root.entry(*name).or_insert_with(|| json!(value));
    }
    let servers = object_entry(&mut root, key, &path)?;
    match servers.get(MCP_SERVER) {
        Some(found) if *found == wanted => return Ok(()),
        Some(found) if !is_ours(found) => {
            changes.notes.push(format!(
                "left the MCP server '{MCP_SERVER}' of {file} alone: it is not anvil's"
            ));
            return Ok(());
        }
        _ => {}
    }
    servers.insert(MCP_SERVER.into(), wanted);
    remember(project, wiring, "json", original)?;
    write_in_place(&path, pretty(&Value::Object(root)).as_bytes())?;
    changes.lines.push(format!(
        "added the MCP server '{MCP_SERVER}' (`anvil mcp`) to {file}"
    ));
    Ok(())
}

/// Takes anvil's server out of the JSON file: the file's bytes before the install come back
/// when what is left is the same (no file, when anvil made it).
fn uninstall_json(
    project: &Path,
    wiring: &Wiring,
    file: &str,
    memory: &Map<String, Value>,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let Some(Mcp::Json { key, header, .. }) = wiring.mcp else {
        return Ok(());
    };
    let path = project.join(file);
    if !path.exists() {
        return Ok(());
    }
    let Value::Object(mut root) = read_settings(&path)? else {
        return Ok(());
    };
    let Some(servers) = root.get_mut(key).and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if !servers.get(MCP_SERVER).is_some_and(is_ours) {
        return Ok(());
    }
    servers.remove(MCP_SERVER);
    if servers.is_empty() {
        root.remove(key);
    }
    super::memory::write_back(
        &path,
        root,
        header.iter().map(|(name, _)| *name),
        memory.get("json"),
    )?;
    changes
        .lines
        .push(format!("removed the MCP server '{MCP_SERVER}' from {file}"));
    Ok(())
}

/// anvil's server as a block of its own at the end of the host's TOML file.
fn install_toml(
    project: &Path,
    wiring: &Wiring,
    file: &str,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let path = project.join(file);
    let original = read(&path)?;
    let text = original.clone().unwrap_or_default();
    if text.contains(TOML_BLOCK) {
        return Ok(());
    }
    let table: toml::Table =
        toml::from_str(&text).map_err(|_| shape(&path, "(the file)", "valid TOML"))?;
    if table
        .get("mcp_servers")
        .and_then(|s| s.get(MCP_SERVER))
        .is_some()
    {
        changes.notes.push(format!(
            "left the MCP server '{MCP_SERVER}' of {file} alone: it is not anvil's"
        ));
        return Ok(());
    }
    remember(project, wiring, "toml", original)?;
    let separator = match text.as_str() {
        "" => "",
        t if t.ends_with('\n') => "\n",
        _ => "\n\n",
    };
    write_in_place(&path, format!("{text}{separator}{TOML_BLOCK}").as_bytes())?;
    changes.lines.push(format!(
        "added the MCP server '{MCP_SERVER}' (`anvil mcp`) to {file}"
    ));
    Ok(())
}

/// Takes anvil's block out of the host's TOML file: the file's bytes before the install come
/// back when what is left is the same TOML (no file, when anvil made it).
fn uninstall_toml(
    project: &Path,
    file: &str,
    memory: &Map<String, Value>,
    changes: &mut Changes,
) -> Result<(), InstallError> {
    let path = project.join(file);
    let Some(text) = read(&path)? else {
        return Ok(());
    };
    let Some(at) = text.find(TOML_BLOCK) else {
        return Ok(());
    };
    let left = format!(
        "{}{}",
        text[..at].trim_end_matches('\n'),
        &text[at + TOML_BLOCK.len()..]
    );
    let same = |before: &str| {
        toml::from_str::<toml::Table>(before).ok() == toml::from_str::<toml::Table>(&left).ok()
    };
    match memory.get("toml") {
        Some(Value::Null) if left.trim().is_empty() => {
            std::fs::remove_file(&path).map_err(|source| InstallError::Write {
                path: path.clone(),
                source,
            })?
        }
        Some(Value::String(before)) if same(before) => write_in_place(&path, before.as_bytes())?,
        _ if left.trim().is_empty() => write_in_place(&path, b"")?,
        _ => write_in_place(&path, format!("{left}\n").as_bytes())?,
    }
    changes
        .lines
        .push(format!("removed the MCP server '{MCP_SERVER}' from {file}"));
    Ok(())
}

/// Does the project hold anvil's MCP server where `wiring` says the host reads it? `None`
/// when the host speaks no MCP.
pub(crate) fn mcp_wired(project: &Path, wiring: &Wiring) -> Option<bool> {
    let server = match wiring.mcp.as_ref()? {
        Mcp::Settings => {
            let file = wiring.hook.as_ref()?.settings;
            read_settings(&project.join(file)).ok()?["mcpServers"][MCP_SERVER].clone()
        }
        Mcp::Json { file, key, .. } => {
            read_settings(&project.join(file)).ok()?[key][MCP_SERVER].clone()
        }
        Mcp::Toml(file) => {
            let text = read(&project.join(file)).ok().flatten().unwrap_or_default();
            let table: toml::Table = toml::from_str(&text).unwrap_or_default();
            let server = table.get("mcp_servers").and_then(|s| s.get(MCP_SERVER));
            serde_json::to_value(server).unwrap_or_default()
        }
    };
    Some(is_ours(&server))
}

fn read(path: &Path) -> Result<Option<String>, InstallError> {
    crate::fsutil::read_optional(path).map_err(|source| InstallError::Read {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codex() -> &'static Wiring {
        crate::agent::host::find("codex").unwrap().wiring()
    }

    /// The uninstall's MCP step, with what the install remembered in the project.
    fn uninstalled(project: &Path, wiring: &Wiring) {
        let memory =
            super::super::memory::read_memory(&super::super::memory::memory_path(project, wiring))
                .unwrap();
        uninstall_files(project, wiring, &memory, &mut Changes::default()).unwrap();
    }

    /// The person's TOML, with its comments and layout, comes back byte for byte; a file
    /// without its last line's end too; a file anvil made goes.
    #[test]
    fn the_toml_server_goes_in_as_a_block_and_comes_out_to_the_same_bytes() {
        for before in [
            Some("# mine\nmodel = \"o4\"\n\n[mcp_servers.github]\ncommand = \"gh\"  # hers\n"),
            Some("model = \"o4\""),
            Some(""),
            None,
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(".codex/config.toml");
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            if let Some(text) = before {
                std::fs::write(&path, text).unwrap();
            }
            let mut changes = Changes::default();
            install_files(dir.path(), codex(), &mut changes).unwrap();
            assert_eq!(changes.lines.len(), 1, "{before:?}");
            let installed: toml::Table =
                toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(
                installed["mcp_servers"]["anvil"]["command"].as_str(),
                Some("anvil")
            );
            let mut again = Changes::default();
            install_files(dir.path(), codex(), &mut again).unwrap();
            assert!(again.lines.is_empty(), "twice: {before:?}");
            uninstalled(dir.path(), codex());
            assert_eq!(
                std::fs::read_to_string(&path).ok().as_deref(),
                before,
                "{before:?}"
            );
        }
    }

    /// Copilot's `.github/mcp.json` and OpenCode's `opencode.json`: anvil's entry goes in
    /// beside the person's servers, in the host's form, and the file comes back byte for byte
    /// (no file, where anvil made it); a server of the person's named `anvil` stays.
    #[test]
    fn the_json_server_entry_comes_out_to_the_same_bytes() {
        for (host, key) in [("copilot", "mcpServers"), ("opencode", "mcp")] {
            let wiring = crate::agent::host::find(host).unwrap().wiring();
            let file = mcp_file(wiring).unwrap();
            let theirs =
                format!("{{\n    \"{key}\": {{\"github\": {{\"command\": \"gh\"}}}},\n \"x\": 1}}");
            for before in [Some(theirs.as_str()), Some("{}"), None] {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                if let Some(text) = before {
                    std::fs::write(&path, text).unwrap();
                }
                let mut changes = Changes::default();
                install_files(dir.path(), wiring, &mut changes).unwrap();
                assert_eq!(changes.lines.len(), 1, "{host} {before:?}");
                assert_eq!(mcp_wired(dir.path(), wiring), Some(true), "{host}");
                let installed = read_settings(&path).unwrap();
                if before.is_some_and(|b| b.contains("github")) {
                    assert_eq!(installed[key]["github"]["command"], "gh");
                }
                let mut again = Changes::default();
                install_files(dir.path(), wiring, &mut again).unwrap();
                assert!(again.lines.is_empty(), "{host}: twice");
                uninstalled(dir.path(), wiring);
                assert_eq!(
                    std::fs::read_to_string(&path).ok().as_deref(),
                    before,
                    "{host} {before:?}"
                );
                assert_eq!(mcp_wired(dir.path(), wiring), Some(false), "{host}");
            }
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let own = format!("{{\"{key}\": {{\"anvil\": {{\"command\": \"blacksmith\"}}}}}}");
            std::fs::write(&path, &own).unwrap();
            let mut changes = Changes::default();
            install_files(dir.path(), wiring, &mut changes).unwrap();
            assert!(
                changes.lines.is_empty() && changes.notes.len() == 1,
                "{host}"
            );
            uninstall_files(dir.path(), wiring, &Map::new(), &mut Changes::default()).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), own);
        }
    }

    #[test]
    fn a_server_of_the_persons_named_anvil_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".codex/config.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let theirs = "[mcp_servers.anvil]\ncommand = \"blacksmith\"\n";
        std::fs::write(&path, theirs).unwrap();
        let mut changes = Changes::default();
        install_files(dir.path(), codex(), &mut changes).unwrap();
        assert!(changes.lines.is_empty() && changes.notes.len() == 1);
        uninstalled(dir.path(), codex());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), theirs);
    }

    /// The rules and the server entry go in beside the person's and come out alone, with the
    /// containers they made.
    #[test]
    fn the_rules_and_the_server_entry_come_out_alone() {
        let gemini = crate::agent::host::find("gemini").unwrap().wiring();
        let path = Path::new(".gemini/settings.json");
        for before in [
            json!({}),
            json!({"tools": {"allowed": ["run_shell_command(npm test)"]},
                   "mcpServers": {"github": {"command": "gh"}}}),
        ] {
            let mut root = before.as_object().unwrap().clone();
            let mut changes = Changes::default();
            add(&mut root, gemini, path, &mut changes).unwrap();
            assert_eq!(changes.lines.len(), 2, "{root:?}");
            assert_eq!(root["mcpServers"]["anvil"], json_server());
            let mut again = Changes::default();
            add(&mut root, gemini, path, &mut again).unwrap();
            assert!(again.lines.is_empty());
            remove(&mut root, gemini, &mut Changes::default());
            assert_eq!(Value::Object(root), before);
        }
    }
}
