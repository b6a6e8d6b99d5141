//! The env step: Claude Code's limit of Stop-hook blocks in a row, raised for a debate and put
//! back as it was. What the user had is remembered in `anvil-install.json`.

use serde_json::{Map, Value, json};

use super::{Changes, InstallError, Settings, Step, display_value, object_entry, shape};

/// Raises Claude Code's limit of consecutive Stop-hook blocks: an interactive 5-round debate
/// needs about 15 in a row, and the default (8) would end it midway.
pub const BLOCK_CAP_VAR: &str = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP";
pub const BLOCK_CAP: &str = "200";

pub(super) const STEP: Step = Step { add, remove };

/// The user's own value stays unless it is lower than anvil needs; a value anvil replaces is
/// remembered, once.
fn add(settings: &mut Settings, changes: &mut Changes) -> Result<(), InstallError> {
    let env = object_entry(&mut settings.root, "env", &settings.path)?;
    let current = env.get(BLOCK_CAP_VAR).cloned();
    let needed: u64 = BLOCK_CAP.parse().expect("a number");
    let memory = settings.memory.get_or_insert_with(|| json!({}));
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
                    .ok_or_else(|| shape(&settings.memory_path, "(top level)", "an object"))?;
                let env_memory = object_entry(memory, "env", &settings.memory_path)?;
                env_memory.insert(
                    BLOCK_CAP_VAR.into(),
                    json!({ "set": BLOCK_CAP, "previous": current }),
                );
            }
        }
    }
    Ok(())
}

/// Puts the block cap back as it was before `install`, and takes out an `env` left empty.
fn remove(settings: &mut Settings, changes: &mut Changes) {
    let Some(env) = settings.root.get_mut("env").and_then(Value::as_object_mut) else {
        return;
    };
    restore(env, settings.memory.as_ref(), settings.had_hooks, changes);
    if env.is_empty() {
        settings.root.remove("env");
    }
}

/// What the memory file says, when the value is still the one anvil set. Without a memory
/// file (an install by an older version, which set the cap without asking) anvil's own value
/// goes when anvil's hooks were there.
fn restore(
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

/// The block cap as a number, when it is one.
fn cap_value(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::install::steps_mirror;

    #[test]
    fn sets_the_cap_and_takes_it_out_again() {
        let installed = steps_mirror(&STEP, json!({ "env": { "EDITOR": "vi" } }));
        assert_eq!(installed["env"][BLOCK_CAP_VAR], BLOCK_CAP);
        assert_eq!(installed["env"]["EDITOR"], "vi");
    }

    #[test]
    fn raises_a_lower_cap_and_puts_it_back() {
        let installed = steps_mirror(&STEP, json!({ "env": { BLOCK_CAP_VAR: 12 } }));
        assert_eq!(installed["env"][BLOCK_CAP_VAR], BLOCK_CAP);
    }

    #[test]
    fn keeps_a_higher_cap_with_a_note() {
        let users = json!({ "env": { BLOCK_CAP_VAR: "500" } });
        let mut settings = Settings::for_test(users.clone());
        let mut changes = Changes::default();
        (STEP.add)(&mut settings, &mut changes).unwrap();
        assert!(changes.lines.is_empty());
        assert_eq!(
            changes.notes,
            ["kept your CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=500 (anvil needs at least 200)"]
        );
        (STEP.remove)(&mut settings, &mut changes);
        assert_eq!(Value::Object(settings.root), users);
    }

    #[test]
    fn after_an_older_install_the_cap_goes_with_the_hooks_only() {
        for (had_hooks, left) in [
            (true, json!({})),
            (false, json!({ "env": { BLOCK_CAP_VAR: BLOCK_CAP } })),
        ] {
            let mut settings = Settings::for_test(json!({ "env": { BLOCK_CAP_VAR: BLOCK_CAP } }));
            settings.memory = None;
            settings.had_hooks = had_hooks;
            (STEP.remove)(&mut settings, &mut Changes::default());
            assert_eq!(Value::Object(settings.root), left, "{had_hooks}");
        }
    }
}
