//! The MCP step: anvil's server enabled in the settings (`enabledMcpjsonServers`), and its
//! entry in the project's `.mcp.json`; each with its removal.

use std::path::Path;

use serde_json::{Value, json};

use super::{
    Changes, InstallError, MCP_FILE, MCP_SERVER, Settings, Step, object_entry, read_settings,
    shape, write_json,
};

pub(super) const STEP: Step = Step { add, remove };

/// A project's `.mcp.json` server runs only once approved: anvil's is, by name.
fn add(settings: &mut Settings, changes: &mut Changes) -> Result<(), InstallError> {
    let enabled = settings
        .root
        .entry("enabledMcpjsonServers")
        .or_insert_with(|| json!([]));
    let enabled = enabled
        .as_array_mut()
        .ok_or_else(|| shape(&settings.path, "enabledMcpjsonServers", "a list"))?;
    if !enabled.iter().any(|v| v.as_str() == Some(MCP_SERVER)) {
        enabled.push(json!(MCP_SERVER));
        changes.lines.push(format!(
            "enabled the MCP server '{MCP_SERVER}' of {MCP_FILE}"
        ));
    }
    Ok(())
}

fn remove(settings: &mut Settings, changes: &mut Changes) {
    let Some(enabled) = settings
        .root
        .get_mut("enabledMcpjsonServers")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    let before = enabled.len();
    enabled.retain(|v| v.as_str() != Some(MCP_SERVER));
    if enabled.len() != before {
        changes
            .lines
            .push(format!("no longer enabled the MCP server '{MCP_SERVER}'"));
    }
    if enabled.is_empty() {
        settings.root.remove("enabledMcpjsonServers");
    }
}

/// The `.mcp.json` entry of anvil's MCP server, calling `program` (by name when installed).
pub fn mcp_server(program: &str) -> Value {
    json!({ "type": "stdio", "command": program, "args": ["mcp"] })
}

/// Is `entry` of `.mcp.json` anvil's own server (`anvil mcp`, by name or by any path)?
pub(super) fn is_anvil_mcp(entry: &Value) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::install::steps_mirror;

    #[test]
    fn enables_the_server_beside_the_users_and_disables_only_it() {
        let installed = steps_mirror(&STEP, json!({ "enabledMcpjsonServers": ["github"] }));
        assert_eq!(
            installed["enabledMcpjsonServers"],
            json!(["github", "anvil"])
        );
        steps_mirror(&STEP, json!({}));
    }

    #[test]
    fn the_server_in_mcp_json_goes_in_beside_the_users_and_comes_out_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MCP_FILE);
        let users = json!({ "mcpServers": { "github": { "command": "gh-mcp" } } });
        std::fs::write(&path, users.to_string()).unwrap();
        assert_eq!(install_mcp(dir.path()).unwrap().lines.len(), 1);
        assert!(install_mcp(dir.path()).unwrap().lines.is_empty(), "twice");
        let installed: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(installed["mcpServers"][MCP_SERVER], mcp_server("anvil"));
        assert_eq!(uninstall_mcp(dir.path()).unwrap().lines.len(), 1);
        let left: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(left, users);
        // A file that held only anvil's server goes with it.
        std::fs::remove_file(&path).unwrap();
        install_mcp(dir.path()).unwrap();
        uninstall_mcp(dir.path()).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn a_users_own_server_named_anvil_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MCP_FILE);
        let users = json!({ "mcpServers": { "anvil": { "command": "blacksmith" } } });
        std::fs::write(&path, users.to_string()).unwrap();
        let changes = install_mcp(dir.path()).unwrap();
        assert!(changes.lines.is_empty() && changes.notes.len() == 1);
        assert!(uninstall_mcp(dir.path()).unwrap().lines.is_empty());
        let left: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(left, users);
    }
}
