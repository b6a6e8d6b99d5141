//! The permissions step: anvil's own commands (and its MCP tools) in `permissions.allow`, by
//! name, and their removal.

use std::path::Path;

use serde_json::{Value, json};

use super::{Changes, InstallError, MCP_PERMISSION, Settings, Step, object_entry, shape};

/// anvil's own subcommands that Claude may run, and that `permissions.allow` lists.
const ALLOWED_SUBCOMMANDS: [&str; 7] = [
    "start", "status", "cancel", "steer", "ask", "resume", "slash",
];

pub(super) const STEP: Step = Step { add, remove };

fn permissions() -> Vec<String> {
    ALLOWED_SUBCOMMANDS
        .iter()
        .map(|sub| format!("Bash(anvil {sub}:*)"))
        .chain([MCP_PERMISSION.to_owned()])
        .collect()
}

/// Adds what is missing; older versions also allowed anvil by this machine's path: those go.
fn add(settings: &mut Settings, changes: &mut Changes) -> Result<(), InstallError> {
    let perms = object_entry(&mut settings.root, "permissions", &settings.path)?;
    let allow = perms.entry("allow").or_insert_with(|| json!([]));
    let allow = allow
        .as_array_mut()
        .ok_or_else(|| shape(&settings.path, "permissions.allow", "a list"))?;
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
    Ok(())
}

/// Takes every permission of anvil's out, and the `allow` and `permissions` left empty.
fn remove(settings: &mut Settings, changes: &mut Changes) {
    let Some(perms) = settings
        .root
        .get_mut("permissions")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
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
        settings.root.remove("permissions");
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::install::steps_mirror;

    #[test]
    fn recognises_its_own_permissions_only() {
        assert!(is_anvil_permission("Bash(/x/anvil start:*)"));
        assert!(is_anvil_permission("Bash(anvil slash:*)"));
        assert!(is_anvil_permission(MCP_PERMISSION));
        assert!(!is_anvil_permission("Bash(npm test:*)"));
        assert!(!is_anvil_permission("Bash(anvil start --force:*)"));
    }

    #[test]
    fn allows_anvils_commands_beside_the_users_and_takes_only_them_out() {
        let users =
            json!({ "permissions": { "allow": ["Bash(npm test:*)"], "deny": ["Read(.env)"] } });
        let installed = steps_mirror(&STEP, users);
        let allow = installed["permissions"]["allow"].as_array().unwrap();
        assert_eq!(allow.len(), 1 + permissions().len());
        assert_eq!(allow[0], "Bash(npm test:*)");
    }

    #[test]
    fn a_path_specific_permission_of_an_older_version_is_replaced() {
        let mut settings =
            Settings::for_test(json!({ "permissions": { "allow": ["Bash(/old/anvil start:*)"] } }));
        let mut changes = Changes::default();
        (STEP.add)(&mut settings, &mut changes).unwrap();
        assert_eq!(
            changes.lines,
            ["allowed anvil's own commands by name (8 added, 1 path-specific removed)"]
        );
    }
}
