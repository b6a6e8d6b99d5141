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

/// The Stop hook's `timeout`, in seconds: long enough for the seats' turns the hook plays
/// (`seat::hook`), each ten minutes at most by default, two of them in a row with
/// room to spare. Claude Code kills a hook past its timeout (600 s when the entry has none).
pub(crate) const STOP_TIMEOUT: u64 = 1800;
/// Claude Code's timeout for a command hook whose entry names none, in seconds.
const CLAUDE_DEFAULT_TIMEOUT: u64 = 600;

/// The `timeout` of anvil's hook for `event`: the Stop hook may play seats; the others take
/// milliseconds.
fn hook_timeout(event: &str) -> u64 {
    if event == "Stop" { STOP_TIMEOUT } else { 60 }
}

/// What Claude Code's spinner says while the Stop hook runs: most stops take milliseconds,
/// but one that plays a seat takes as long as the seat's agent (the spinner counts the
/// seconds).
pub const STOP_STATUS: &str = "anvil: recording the phase, or a seat playing its turn";

/// The entry of a hook list that runs `command` for `event`.
pub(crate) fn hook_entry(event: &str, command: &str) -> Value {
    let mut entry =
        json!({ "type": "command", "command": command, "timeout": hook_timeout(event) });
    if event == "Stop" {
        entry["statusMessage"] = json!(STOP_STATUS);
    }
    entry
}

/// One entry of ours per hook, replacing any older one (`anvil hook stop`, another path, a
/// timeout too short for a seat's turn).
fn add(settings: &mut Settings, changes: &mut Changes) -> Result<(), InstallError> {
    for (event, sub) in HOOKS {
        let command = hook_command(sub);
        let entry = hook_entry(event, &command);
        let list = hook_list(&mut settings.root, event, &settings.path)?;
        let ours: Vec<&Value> = list
            .iter()
            .flat_map(group_entries)
            .filter(|h| h["command"].as_str().is_some_and(|c| is_anvil_hook(c, sub)))
            .collect();
        if ours == [&entry] {
            continue;
        }
        let line = match ours.as_slice() {
            [] => format!("added the {event} hook (`{command}`)"),
            [was] if was["command"] == entry["command"] => {
                let before = was["timeout"]
                    .as_f64()
                    .map_or(format!("Claude Code's {CLAUDE_DEFAULT_TIMEOUT} s"), |t| {
                        format!("{t} s")
                    });
                format!(
                    "updated the {event} hook (`{command}`; timeout {} s, was {before})",
                    hook_timeout(event)
                )
            }
            _ => format!(
                "updated the {event} hook (`{command}`, was `{}`)",
                ours.iter()
                    .filter_map(|h| h["command"].as_str())
                    .collect::<Vec<_>>()
                    .join("`, `")
            ),
        };
        remove_anvil_hooks(list, sub);
        list.push(json!({ "hooks": [entry] }));
        changes.lines.push(line);
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

/// Whether a Claude Code session that reads none of the project's settings runs anvil's Stop
/// hook already: the user's settings (`~/.claude`), the system's managed settings (read
/// whatever the sources a session is given), or an anvil plugin the user enabled. `anvil run`,
/// whose headless sessions read the user's settings only, gives them its own hook when none
/// of these does, and never a second one: a stop recorded twice would answer twice.
pub fn user_runs_stop_hook() -> bool {
    runs_stop_hook(
        &super::claude_dir(Path::new(""), true),
        managed_settings().as_deref(),
    )
}

fn runs_stop_hook(user_claude: &Path, managed: Option<&Path>) -> bool {
    let files: Vec<PathBuf> = SETTINGS_FILES
        .iter()
        .map(|name| user_claude.join(name))
        .chain(managed.map(Path::to_owned))
        .collect();
    let plugin = |settings: &Value| {
        settings["enabledPlugins"]
            .as_object()
            .is_some_and(|plugins| {
                plugins
                    .iter()
                    .any(|(key, on)| key.split('@').next() == Some("anvil") && *on == true)
            })
    };
    !stop_hook_entries(&files).is_empty()
        || files
            .iter()
            .any(|f| read_settings(f).is_ok_and(|s| plugin(&s)))
}

fn group_commands(group: &Value) -> Vec<&str> {
    group_hooks(group).into_iter().map(|(c, _)| c).collect()
}

/// The hook entries of a group.
fn group_entries(group: &Value) -> Vec<&Value> {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect()
}

/// The commands of a group of hooks, each with its `timeout` (seconds) when it has one.
fn group_hooks(group: &Value) -> Vec<(&str, Option<u64>)> {
    group_entries(group)
        .into_iter()
        .filter_map(|h| {
            let command = h.get("command").and_then(Value::as_str)?;
            let timeout = h.get("timeout").and_then(|t| {
                t.as_u64()
                    .or_else(|| t.as_f64().filter(|f| *f > 0.0).map(|f| f.ceil() as u64))
            });
            Some((command, timeout))
        })
        .collect()
}

/// How long Claude Code lets anvil's Stop hook run here, and which file says so: the
/// plugin's `hooks/hooks.json` when the hook runs from a plugin (`$CLAUDE_PLUGIN_ROOT`), else
/// the project's settings files and the user's (`~/.claude/settings.json`), and in both cases
/// the managed settings of this system ([`managed_settings`]); the shortest when several run
/// it. An entry without a `timeout` has Claude Code's default; none found, the same (a file
/// passed with `claude --settings` is not known to the hook).
pub(crate) fn stop_timeout(project: &Path) -> (u64, Option<PathBuf>) {
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(root) = std::env::var_os("CLAUDE_PLUGIN_ROOT").filter(|r| !r.is_empty()) {
        files.push(PathBuf::from(root).join("hooks/hooks.json"));
    } else {
        let claude = project.join(".claude");
        files.extend(SETTINGS_FILES.iter().map(|name| claude.join(name)));
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            files.push(PathBuf::from(home).join(".claude/settings.json"));
        }
    }
    files.extend(managed_settings());
    shortest_stop_timeout(&files)
}

/// Where Claude Code reads the settings an administrator manages on this system (they take
/// precedence over every other file, and their hooks run beside the others).
pub(crate) fn managed_settings() -> Option<PathBuf> {
    if cfg!(target_os = "macos") {
        Some(PathBuf::from(
            "/Library/Application Support/ClaudeCode/managed-settings.json",
        ))
    } else if cfg!(windows) {
        Some(PathBuf::from(
            r"C:\ProgramData\ClaudeCode\managed-settings.json",
        ))
    } else if cfg!(unix) {
        Some(PathBuf::from("/etc/claude-code/managed-settings.json"))
    } else {
        None
    }
}

/// One entry of anvil's Stop hook in a settings file (or a plugin's `hooks.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StopHookEntry {
    pub file: PathBuf,
    /// Its `timeout` in seconds; `None` when it names none (Claude Code's default applies).
    pub timeout: Option<u64>,
}

impl StopHookEntry {
    /// How long Claude Code lets it run, in seconds.
    pub fn seconds(&self) -> u64 {
        self.timeout.unwrap_or(CLAUDE_DEFAULT_TIMEOUT)
    }
}

/// Every entry of anvil's Stop hook in `files`, in their order.
pub(crate) fn stop_hook_entries(files: &[PathBuf]) -> Vec<StopHookEntry> {
    let mut out = Vec::new();
    for path in files {
        let Ok(settings) = read_settings(path) else {
            continue;
        };
        for group in settings["hooks"]["Stop"].as_array().into_iter().flatten() {
            for (command, timeout) in group_hooks(group) {
                if is_anvil_hook(&command.replace('"', ""), "stop") {
                    out.push(StopHookEntry {
                        file: path.to_owned(),
                        timeout,
                    });
                }
            }
        }
    }
    out
}

/// The shortest `timeout` of anvil's Stop hook in `files` (settings files or a plugin's
/// `hooks.json`), with the file; Claude Code's default when none holds the hook.
fn shortest_stop_timeout(files: &[PathBuf]) -> (u64, Option<PathBuf>) {
    match stop_hook_entries(files)
        .into_iter()
        .min_by_key(StopHookEntry::seconds)
    {
        Some(entry) => (entry.seconds(), Some(entry.file)),
        None => (CLAUDE_DEFAULT_TIMEOUT, None),
    }
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

    #[test]
    fn a_users_own_hook_or_plugin_is_seen_beside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join(".claude");
        std::fs::create_dir_all(&user).unwrap();
        assert!(!runs_stop_hook(&user, None));
        std::fs::write(
            user.join("settings.json"),
            json!({"enabledPlugins": {"anvil@anvil": false, "other@x": true}}).to_string(),
        )
        .unwrap();
        assert!(!runs_stop_hook(&user, None), "a plugin turned off");
        std::fs::write(
            user.join("settings.json"),
            json!({"enabledPlugins": {"anvil@team-marketplace": true}}).to_string(),
        )
        .unwrap();
        assert!(runs_stop_hook(&user, None), "the plugin runs it");
        std::fs::remove_file(user.join("settings.json")).unwrap();
        let managed = dir.path().join("managed-settings.json");
        std::fs::write(
            &managed,
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "anvil-hook stop"}]}]}})
                .to_string(),
        )
        .unwrap();
        assert!(
            runs_stop_hook(&user, Some(&managed)),
            "the system's settings run it"
        );
        std::fs::write(
            user.join("settings.local.json"),
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/anvil/anvil-hook stop"}]}]}})
                .to_string(),
        )
        .unwrap();
        assert!(runs_stop_hook(&user, None), "the user's settings run it");
    }
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

    #[test]
    fn a_stop_hook_with_a_short_timeout_is_given_one_for_the_seats() {
        let older = json!({ "hooks": { "Stop": [
            { "hooks": [{ "type": "command", "command": "anvil-hook stop", "timeout": 60 }] }
        ] } });
        let mut settings = Settings::for_test(older);
        let mut changes = Changes::default();
        (STEP.add)(&mut settings, &mut changes).unwrap();
        assert_eq!(
            changes.lines[0],
            format!(
                "updated the Stop hook (`anvil-hook stop`; timeout {STOP_TIMEOUT} s, was 60 s)"
            )
        );
        let stop = &settings.root["hooks"]["Stop"];
        assert_eq!(stop.as_array().unwrap().len(), 1, "{stop}");
        assert_eq!(stop[0]["hooks"][0]["timeout"], STOP_TIMEOUT);
        assert_eq!(stop[0]["hooks"][0]["statusMessage"], STOP_STATUS);
        // The other hooks take milliseconds: a minute is plenty.
        assert_eq!(
            settings.root["hooks"]["SessionStart"][0]["hooks"][0]["timeout"],
            60
        );
    }

    #[test]
    fn the_stop_hooks_own_timeout_is_read_from_its_entries_the_shortest_first() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, value: Value| {
            let path = dir.path().join(name);
            std::fs::write(&path, value.to_string()).unwrap();
            path
        };
        let entry = |command: &str, timeout: Option<u64>| {
            let mut hook = json!({ "type": "command", "command": command });
            if let Some(t) = timeout {
                hook["timeout"] = json!(t);
            }
            json!({ "hooks": { "Stop": [{ "hooks": [hook] }] } })
        };
        let project = write("settings.json", entry("anvil-hook stop", Some(1800)));
        let local = write("settings.local.json", entry("notify-done", Some(5)));
        let user = write("user.json", entry("/opt/anvil hook stop", None));
        let plugin = write(
            "hooks.json",
            entry("\"${CLAUDE_PLUGIN_ROOT}/bin/anvil-hook\" stop", Some(900)),
        );
        let missing = dir.path().join("missing.json");
        assert_eq!(
            shortest_stop_timeout(&[project.clone(), local.clone()]),
            (1800, Some(project.clone()))
        );
        // Another hook's timeout is not anvil's; an entry without one has Claude Code's.
        assert_eq!(
            shortest_stop_timeout(&[project.clone(), local, user.clone()]),
            (CLAUDE_DEFAULT_TIMEOUT, Some(user))
        );
        assert_eq!(
            shortest_stop_timeout(std::slice::from_ref(&plugin)),
            (900, Some(plugin))
        );
        assert_eq!(
            shortest_stop_timeout(&[missing]),
            (CLAUDE_DEFAULT_TIMEOUT, None)
        );
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
