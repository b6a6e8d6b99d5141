//! The hooks step: one entry of anvil's per hook in `hooks.EVENT`, and its removal.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{Changes, HOOK_PROGRAM, InstallError, Settings, Step, object_entry, read_settings};

/// The hooks anvil installs: (Claude Code event, hook word). Stop drives the debate;
/// SessionStart notices a compacted or cleared context, so the next prompt is sent in full;
/// UserPromptExpansion hands the slash commands' arguments over without a shell.
pub(crate) const HOOKS: [(&str, &str); 3] = [
    ("Stop", "stop"),
    ("SessionStart", "session-start"),
    ("UserPromptExpansion", "prompt-expansion"),
];

pub(super) const STEP: Step = Step { add, remove };

/// One entry of ours per hook, replacing any older one (`anvil hook stop`, another path).
fn add(settings: &mut Settings, changes: &mut Changes) -> Result<(), InstallError> {
    for (event, sub) in HOOKS {
        let command = hook_command(sub);
        let list = hook_list(&mut settings.root, event, &settings.path)?;
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
    Ok(())
}

/// Takes anvil's entries out (by their commands, of any version), and the lists and the
/// `hooks` object they leave empty.
fn remove(settings: &mut Settings, changes: &mut Changes) {
    let Some(hooks) = settings
        .root
        .get_mut("hooks")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
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
        settings.root.remove("hooks");
    }
}

/// Do the settings hold any hook of anvil's?
pub(super) fn any(root: &Map<String, Value>) -> bool {
    HOOKS.iter().any(|(event, sub)| {
        root.get("hooks")
            .and_then(|h| h.get(event))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(group_commands)
            .any(|c| is_anvil_hook(c, sub))
    })
}

/// The command of hook `sub`, calling the hook binary by name.
pub fn hook_command(sub: &str) -> String {
    format!("{HOOK_PROGRAM} {sub}")
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
fn remove_anvil_hooks(list: &mut Vec<Value>, sub: &str) -> bool {
    let before: usize = list.iter().map(|g| group_commands(g).len()).sum();
    for group in list.iter_mut() {
        if let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) {
            hooks.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_anvil_hook(c, sub))
            });
        }
    }
    list.retain(|g| {
        g.get("hooks")
            .and_then(Value::as_array)
            .is_none_or(|h| !h.is_empty())
    });
    let after: usize = list.iter().map(|g| group_commands(g).len()).sum();
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
        .ok_or_else(|| super::shape(path, &format!("hooks.{event}"), "a list"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::install::steps_mirror;

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
    }

    #[test]
    fn adds_one_entry_per_hook_beside_the_users_and_removes_only_its_own() {
        let users = json!({ "hooks": { "Stop": [
            { "hooks": [{ "type": "command", "command": "notify-done" }] }
        ] } });
        let installed = steps_mirror(&STEP, users);
        let stop = &installed["hooks"]["Stop"];
        assert_eq!(stop.as_array().unwrap().len(), 2, "{installed}");
        assert_eq!(stop[1]["hooks"][0]["command"], "anvil-hook stop");
        for (event, _) in HOOKS {
            let entries = installed["hooks"][event].as_array().unwrap().len();
            assert_eq!(entries, if event == "Stop" { 2 } else { 1 }, "{event}");
        }
        assert!(any(installed.as_object().unwrap()));
    }

    #[test]
    fn an_older_hook_is_replaced_and_goes_on_removal() {
        let older = json!({ "hooks": { "Stop": [
            { "hooks": [{ "type": "command", "command": "/home/x/.cargo/bin/anvil hook stop" }] }
        ] } });
        let mut settings = Settings::for_test(older);
        let mut changes = Changes::default();
        (STEP.add)(&mut settings, &mut changes).unwrap();
        assert_eq!(
            changes.lines[0],
            "updated the Stop hook (`anvil-hook stop`, was `/home/x/.cargo/bin/anvil hook stop`)"
        );
        assert_eq!(installed_commands(&settings.root), 3);
        (STEP.remove)(&mut settings, &mut changes);
        assert_eq!(Value::Object(settings.root), json!({}));
    }

    fn installed_commands(root: &Map<String, Value>) -> usize {
        root["hooks"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|list| list.as_array().unwrap())
            .map(|g| group_commands(g).len())
            .sum()
    }
}
