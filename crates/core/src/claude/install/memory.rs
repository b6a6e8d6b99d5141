//! `anvil-install.json`, what `anvil install --agent NAME` remembers of a host's files before
//! it changed them (the settings file's bytes, the MCP file's), so that `anvil uninstall
//! --agent NAME` gives them back: read and written by the hook's step (`host.rs`) and the MCP
//! step (`reach.rs`) alike.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{InstallError, MEMORY_FILE, pretty, read_settings, write_in_place};
use crate::agent::host::Wiring;

/// `anvil-install.json` in the host's memory folder (never `.github/hooks/`, whose every
/// `.json` Copilot reads as a hook file).
pub(crate) fn memory_path(project: &Path, wiring: &Wiring) -> PathBuf {
    project.join(wiring.memory_dir).join(MEMORY_FILE)
}

/// What `anvil-install.json` at `path` remembers (nothing, when there is none).
pub(crate) fn read_memory(path: &Path) -> Result<Map<String, Value>, InstallError> {
    Ok(match read_settings(path)? {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

/// The words `anvil-install.json` says of itself, once.
pub(crate) fn say_what_memory_is(memory: &mut Map<String, Value>) {
    memory.entry("about").or_insert_with(|| {
        json!("written by `anvil install --agent`: the settings as they were, which `anvil uninstall --agent` restores")
    });
}

/// A JSON file of the person's written back once anvil's entries are out of it (`root`): the
/// bytes it had before the first install (`original`) when it holds the same again (the
/// `header` keys anvil added aside), no file when anvil created it and nothing else is in it,
/// else as anvil writes JSON.
pub(crate) fn write_back(
    path: &Path,
    root: Map<String, Value>,
    header: impl Iterator<Item = &'static str> + Clone,
    original: Option<&Value>,
) -> Result<(), InstallError> {
    // The settings less the header keys `before` lacked (a header anvil wrote).
    let without_header = |before: &Map<String, Value>| {
        let mut root = root.clone();
        for key in header.clone() {
            if !before.contains_key(key) {
                root.remove(key);
            }
        }
        root
    };
    match original {
        None | Some(Value::Null) if without_header(&Map::new()).is_empty() => {
            std::fs::remove_file(path).map_err(|source| InstallError::Write {
                path: path.to_owned(),
                source,
            })
        }
        Some(Value::String(text))
            if serde_json::from_str::<Map<String, Value>>(text)
                .ok()
                .is_some_and(|before| without_header(&before) == before)
                || (text.trim().is_empty() && without_header(&Map::new()).is_empty()) =>
        {
            write_in_place(path, text.as_bytes())
        }
        _ => write_in_place(path, pretty(&Value::Object(root)).as_bytes()),
    }
}
