//! Does Claude Code give anvil's Stop hook long enough for a seat's turn? The hook plays an
//! external seat (`seat::hook`) under the shorter of the seat's own timeout and what
//! is left of the hook's; a hook whose entry allows less than a whole turn cuts every long
//! turn short, and Claude Code kills it past its timeout (600 s when the entry names none).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::distribution::Plugin;
use super::environment::Environment;
use super::finding::{Finding, Level};
use crate::claude::install::{self, STOP_TIMEOUT, StopHookEntry};
use crate::home::Home;
use crate::model::config::Config;
use crate::seat::hook::MARGIN;

/// What a seat's turn needs of the Stop hook: the seat's timeout (`[seats] timeout`, ten
/// minutes by default) and the time to record its text.
fn needed(config: &Config) -> Duration {
    config.seat_timeout() + MARGIN
}

/// One finding per entry of anvil's Stop hook too short for a seat's turn, or one saying the
/// shortest is long enough. The files: the settings of the project and of the user
/// (`places`), the managed settings of this system, and the enabled plugin's `hooks.json`.
pub(super) fn check(env: &Environment, places: &[&Path], plugin: Option<&Plugin>) -> Vec<Finding> {
    let config = Home::find(&env.cwd)
        .and_then(|home| Config::load(&home).ok())
        .unwrap_or_default();
    let needed = needed(&config);
    let mut files: Vec<PathBuf> = places
        .iter()
        .flat_map(|claude| install::SETTINGS_FILES.iter().map(|name| claude.join(name)))
        .collect();
    files.extend(env.managed_settings.clone());
    files.extend(plugin.map(|p| p.root.join("hooks/hooks.json")));
    let entries = install::stop_hook_entries(&files);
    let short: Vec<&StopHookEntry> = entries
        .iter()
        .filter(|e| Duration::from_secs(e.seconds()) < needed)
        .collect();
    if short.is_empty() {
        return entries
            .iter()
            .min_by_key(|e| e.seconds())
            .map(|e| {
                Finding::new(
                    "installation",
                    "stop-hook-timeout",
                    Level::Ok,
                    format!(
                        "the Stop hook may run {} (in {}): a seat's turn needs {} s",
                        seconds(e),
                        e.file.display(),
                        needed.as_secs()
                    ),
                )
            })
            .into_iter()
            .collect();
    }
    short
        .into_iter()
        .map(|e| too_short(e, needed, env, places, plugin))
        .collect()
}

/// `1800 s`, or `600 s (Claude Code's default: the entry names no timeout)`.
fn seconds(entry: &StopHookEntry) -> String {
    match entry.timeout {
        Some(t) => format!("{t} s"),
        None => format!(
            "{} s (Claude Code's default: the entry names no timeout)",
            entry.seconds()
        ),
    }
}

/// The warning for one entry, with the way to lengthen it that fits its file.
fn too_short(
    entry: &StopHookEntry,
    needed: Duration,
    env: &Environment,
    places: &[&Path],
    plugin: Option<&Plugin>,
) -> Finding {
    let needed_s = needed.as_secs();
    let by_hand = format!(
        "set `\"timeout\": {needed_s}` (or more) on anvil's Stop hook entry in {}, or lower \
         `[seats] timeout` in .anvil/config.toml",
        entry.file.display()
    );
    let installs_here = |claude: &Path| entry.file == claude.join("settings.json");
    let hint = if needed_s > STOP_TIMEOUT {
        // Even what `anvil install` writes is too short for this seat timeout.
        by_hand
    } else if places.first().is_some_and(|p| installs_here(p)) {
        format!("`anvil install` gives the entry {STOP_TIMEOUT} s; or {by_hand}")
    } else if places.get(1).is_some_and(|p| installs_here(p)) {
        format!("`anvil install --user` gives the entry {STOP_TIMEOUT} s; or {by_hand}")
    } else if env.managed_settings.as_ref() == Some(&entry.file) {
        format!("these are the system's managed settings: ask whoever manages them to {by_hand}")
    } else if plugin.is_some_and(|p| entry.file.starts_with(&p.root)) {
        format!(
            "update the anvil plugin (this version's hooks.json gives {STOP_TIMEOUT} s); or \
             {by_hand}"
        )
    } else {
        by_hand
    };
    Finding::new(
        "installation",
        "stop-hook-timeout",
        Level::Warn,
        format!(
            "anvil's Stop hook in {} may run {}, less than a seat's turn needs ({needed_s} s: \
             the seat's timeout and {} s to record it): a longer turn is cut short and \
             fails, and the debate waits for it to be tried again",
            entry.file.display(),
            seconds(entry),
            MARGIN.as_secs()
        ),
    )
    .hint(hint)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Setup {
        dir: tempfile::TempDir,
    }

    impl Setup {
        fn new() -> Setup {
            let dir = tempfile::tempdir().unwrap();
            let project = dir.path().join("project");
            std::fs::create_dir_all(&project).unwrap();
            Home::init(&project).unwrap();
            Setup { dir }
        }

        fn project(&self) -> PathBuf {
            self.dir.path().join("project")
        }

        fn user(&self) -> PathBuf {
            self.dir.path().join("user")
        }

        fn managed(&self) -> PathBuf {
            self.dir.path().join("etc/managed-settings.json")
        }

        fn env(&self) -> Environment {
            Environment {
                managed_settings: Some(self.managed()),
                ..Environment::for_test(self.project(), Some(self.user()))
            }
        }

        fn findings(&self) -> Vec<Finding> {
            let env = self.env();
            let (project, user) = (self.project().join(".claude"), self.user().join(".claude"));
            check(&env, &[&project, &user], None)
        }
    }

    /// Settings whose Stop hook runs `anvil-hook stop`, with `timeout` when given.
    fn write_stop_hook(file: &Path, timeout: Option<u64>) {
        let mut entry = json!({ "type": "command", "command": "anvil-hook stop" });
        if let Some(t) = timeout {
            entry["timeout"] = json!(t);
        }
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let settings = json!({ "hooks": { "Stop": [{ "hooks": [entry] }] } });
        std::fs::write(file, settings.to_string()).unwrap();
    }

    #[test]
    fn a_stop_hook_shorter_than_a_seats_turn_is_a_warning_that_says_how_to_fix_it() {
        let setup = Setup::new();
        let project_settings = setup.project().join(".claude/settings.json");

        // No timeout on the entry: Claude Code's 600 s, less than a ten-minute turn and its
        // recording.
        write_stop_hook(&project_settings, None);
        let found = setup.findings();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].level, Level::Warn);
        assert!(
            found[0].message.contains("600 s (Claude Code's default")
                && found[0].message.contains("(610 s:"),
            "{}",
            found[0].message
        );
        let hint = found[0].hint.as_deref().unwrap();
        assert!(
            hint.starts_with(&format!("`anvil install` gives the entry {STOP_TIMEOUT} s"))
                && hint.contains("\"timeout\": 610"),
            "{hint}"
        );

        // What `anvil install` writes is enough.
        install::install(&setup.project().join(".claude")).unwrap();
        let found = setup.findings();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].level, Level::Ok, "{found:#?}");
        assert!(found[0].message.contains("1800 s"), "{}", found[0].message);

        // The user's settings and the system's managed ones run the hook too, each with its
        // own way to fix it.
        write_stop_hook(&setup.user().join(".claude/settings.json"), Some(300));
        write_stop_hook(&setup.managed(), Some(60));
        let found = setup.findings();
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(found.iter().all(|f| f.level == Level::Warn), "{found:#?}");
        assert!(found[0].message.contains("300 s"), "{}", found[0].message);
        let user_hint = found[0].hint.as_deref().unwrap();
        assert!(
            user_hint.starts_with("`anvil install --user`"),
            "{user_hint}"
        );
        assert!(found[1].message.contains("60 s"), "{}", found[1].message);
        let managed_hint = found[1].hint.as_deref().unwrap();
        assert!(
            managed_hint.contains("managed settings")
                && managed_hint.contains(&setup.managed().display().to_string()),
            "{managed_hint}"
        );
    }

    #[test]
    fn a_seat_timeout_longer_than_what_anvil_install_writes_asks_for_a_longer_entry() {
        let setup = Setup::new();
        install::install(&setup.project().join(".claude")).unwrap();
        std::fs::write(
            setup.project().join(".anvil/config.toml"),
            "[seats]\ntimeout = 1795\n",
        )
        .unwrap();
        let found = setup.findings();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].level, Level::Warn);
        let hint = found[0].hint.as_deref().unwrap();
        assert!(
            !hint.contains("anvil install") && hint.contains("\"timeout\": 1805"),
            "{hint}"
        );
    }

    #[test]
    fn the_plugins_stop_hook_is_held_to_the_same_need() {
        let setup = Setup::new();
        let root = setup.user().join(".claude/plugins/cache/anvil/anvil/0.1.0");
        install::write_plugin(&root, install::PluginBinaries::Inside).unwrap();
        let listed = json!({"version": 2, "plugins": {"anvil@anvil": [
            {"scope": "user", "installPath": root, "version": "0.1.0"}
        ]}});
        std::fs::write(
            setup.user().join(".claude/plugins/installed_plugins.json"),
            listed.to_string(),
        )
        .unwrap();
        std::fs::write(
            setup.user().join(".claude/settings.json"),
            json!({"enabledPlugins": {"anvil@anvil": true}}).to_string(),
        )
        .unwrap();
        let env = setup.env();
        let plugin = super::super::distribution::enabled_plugin(&env).expect("enabled");
        let (project, user) = (
            setup.project().join(".claude"),
            setup.user().join(".claude"),
        );
        let found = check(&env, &[&project, &user], Some(&plugin));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].level, Level::Ok, "{found:#?}");

        // An older plugin's hook, with a minute.
        write_stop_hook(&root.join("hooks/hooks.json"), Some(60));
        let found = check(&env, &[&project, &user], Some(&plugin));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].level, Level::Warn);
        let hint = found[0].hint.as_deref().unwrap();
        assert!(hint.starts_with("update the anvil plugin"), "{hint}");
    }

    #[test]
    fn without_anvils_stop_hook_nothing_is_said_of_its_timeout() {
        let setup = Setup::new();
        assert!(setup.findings().is_empty());
    }
}
