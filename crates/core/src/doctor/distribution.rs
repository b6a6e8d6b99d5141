//! How anvil reached this machine: the Claude Code plugin (its programs inside the plugin), the
//! npm package (the native programs in place of its launchers, or not), or anything that puts
//! `anvil` and `anvil-hook` on PATH (`cargo install`).
//!
//! The npm package's `bin/anvil` and `bin/anvil-hook` start as node launchers; its postinstall
//! replaces them with the native programs. When install scripts are blocked they stay
//! launchers, which work but pay node's start on every call, and the Stop hook is called at
//! the end of every turn. A launcher tells the program it starts by `ANVIL_NPM_LAUNCHER`.

use std::path::{Path, PathBuf};

use super::environment::{Environment, read_json};
use super::finding::{Finding, Level};
use crate::claude::install;

/// The plugin's name in its manifest and in Claude Code's `NAME@MARKETPLACE` keys.
const PLUGIN_NAME: &str = "anvil";
/// The npm package that carries the programs and the plugin.
pub(super) const NPM_PACKAGE: &str = "anvil-debate";

/// anvil as a Claude Code plugin, installed and enabled.
#[derive(Debug, Clone)]
pub(super) struct Plugin {
    /// `anvil@MARKETPLACE`.
    pub key: String,
    /// Where Claude Code unpacked it (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// The settings file that enables it.
    pub enabled_in: PathBuf,
}

impl Plugin {
    /// The plugin's own program `name` (its `bin/`).
    pub fn program(&self, name: &str) -> PathBuf {
        self.root.join("bin").join(name)
    }

    /// Does the plugin's `hooks/hooks.json` run anvil's hook `sub` for `event`?
    pub fn has_hook(&self, event: &str, sub: &str) -> bool {
        read_json(&self.root.join("hooks/hooks.json")).is_some_and(|file| {
            file["hooks"][event].as_array().is_some_and(|groups| {
                groups.iter().any(|group| {
                    group["hooks"].as_array().is_some_and(|hooks| {
                        hooks.iter().any(|hook| {
                            hook["command"]
                                .as_str()
                                .is_some_and(|c| is_plugin_hook(c, sub))
                        })
                    })
                })
            })
        })
    }
}

/// `"${CLAUDE_PLUGIN_ROOT}/bin/anvil-hook" SUB` (or the hook by name, in a plugin folder made
/// for development).
fn is_plugin_hook(command: &str, sub: &str) -> bool {
    command == install::plugin_hook_command(install::PluginBinaries::Inside, sub)
        || command == install::plugin_hook_command(install::PluginBinaries::OnPath, sub)
}

/// Where Claude Code keeps plugins: `~/.claude/plugins` (under `$CLAUDE_CONFIG_DIR` when set).
fn plugins_dir(env: &Environment) -> Option<PathBuf> {
    env.claude_config_dir
        .clone()
        .or_else(|| env.user_claude())
        .map(|dir| dir.join("plugins"))
}

/// The anvil plugin Claude Code has installed and enabled for this project or this user.
pub(super) fn enabled_plugin(env: &Environment) -> Option<Plugin> {
    let installed = read_json(&plugins_dir(env)?.join("installed_plugins.json"))?;
    let project = env.project();
    let settings: Vec<PathBuf> = install::SETTINGS_FILES
        .iter()
        .rev()
        .map(|name| project.join(".claude").join(name))
        .chain(env.user_claude().into_iter().flat_map(|dir| {
            install::SETTINGS_FILES
                .iter()
                .rev()
                .map(move |n| dir.join(n))
        }))
        .collect();
    let plugins = installed["plugins"].as_object()?;
    plugins
        .iter()
        .filter(|(key, _)| key.split('@').next() == Some(PLUGIN_NAME))
        .find_map(|(key, installs)| {
            let enabled_in = settings.iter().find(|file| {
                read_json(file).is_some_and(|s| s["enabledPlugins"][key.as_str()] == true)
            })?;
            let root = installs
                .as_array()?
                .iter()
                .filter_map(|i| i["installPath"].as_str().map(PathBuf::from))
                .find(|root| root.join(".claude-plugin/plugin.json").is_file())?;
            Some(Plugin {
                key: key.clone(),
                root,
                enabled_in: enabled_in.clone(),
            })
        })
}

/// What a program file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Program {
    /// A native executable (ELF, Mach-O or PE).
    Native,
    /// A script: the npm package's node launcher, where the native program was not put.
    Launcher,
    Missing,
}

pub(super) fn program(path: &Path) -> Program {
    use std::io::Read;
    let mut head = [0u8; 4];
    let Ok(mut file) = std::fs::File::open(path) else {
        return Program::Missing;
    };
    match file.read_exact(&mut head) {
        Ok(()) if head.starts_with(b"#!") => Program::Launcher,
        Ok(()) => Program::Native,
        Err(_) => Program::Missing,
    }
}

/// How to get the native programs in place of the launchers of the package at `root`.
fn native_hint(root: Option<&Path>) -> String {
    let script = root.map_or_else(
        || "its install.js".to_owned(),
        |r| format!("`node {}`", r.join("install.js").display()),
    );
    format!(
        "`npm rebuild -g {NPM_PACKAGE}` runs the package's install script, which puts the \
         native programs in place (or run {script}); to keep install scripts blocked, \
         `cargo install {NPM_PACKAGE}` builds native ones"
    )
}

/// The findings about how anvil was installed.
pub(super) fn check(env: &Environment, plugin: Option<&Plugin>) -> Vec<Finding> {
    let finding = |level, message: String| Finding::new("installation", "native", level, message);
    let mut out = Vec::new();
    if let Some(plugin) = plugin {
        out.push(Finding::new(
            "installation",
            "plugin",
            Level::Ok,
            format!(
                "anvil is the Claude Code plugin {} ({}, enabled in {}): its hooks, commands and \
                 MCP server run the programs in its bin/, whatever the PATH",
                plugin.key,
                plugin.root.display(),
                plugin.enabled_in.display()
            ),
        ));
        let hook = plugin.program(install::HOOK_PROGRAM);
        out.push(match program(&hook) {
            Program::Native => finding(
                Level::Ok,
                format!("the plugin's {} is a native program", hook.display()),
            ),
            Program::Launcher => finding(
                Level::Note,
                format!(
                    "the plugin's {} is still its node launcher (Claude Code installs plugins \
                     without install scripts): the first hook of a session puts the native \
                     program in its place",
                    hook.display()
                ),
            )
            .hint("start a session (`claude`) once; if this stays, the plugin's folder is not writable"),
            Program::Missing => finding(
                Level::Fail,
                format!("the plugin has no {}: its hooks cannot run", hook.display()),
            )
            .hint("reinstall it: `claude plugin uninstall anvil`, then `claude plugin install`"),
        });
    }
    if let Some(launcher) = &env.npm_launcher {
        let root = launcher.parent().and_then(Path::parent);
        out.push(
            finding(
                Level::Warn,
                format!(
                    "this anvil runs through the node launcher {} of the npm package: npm did \
                     not run its install script (install scripts blocked), so `anvil` and \
                     `anvil-hook` pay node's start at every call, the Stop hook at every turn",
                    launcher.display()
                ),
            )
            .hint(native_hint(root)),
        );
    } else if let Some(hook) = env
        .path
        .as_deref()
        .and_then(|p| super::environment::find_in(p, install::HOOK_PROGRAM))
        && program(&hook) == Program::Launcher
    {
        let real = hook.canonicalize().unwrap_or(hook.clone());
        let root = real.parent().and_then(Path::parent);
        out.push(
            finding(
                Level::Warn,
                format!(
                    "`{}` on PATH ({}) is the npm package's node launcher, not the native \
                     program: the Stop hook pays node's start at every turn",
                    install::HOOK_PROGRAM,
                    hook.display()
                ),
            )
            .hint(native_hint(root)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(dir: &Path) -> Environment {
        Environment::for_test(dir.join("project"), Some(dir.join("user")))
    }

    /// A plugin unpacked where Claude Code puts one, listed in installed_plugins.json.
    fn install_plugin(dir: &Path, hook: &[u8]) -> PathBuf {
        let root = dir.join("user/.claude/plugins/cache/anvil/anvil/0.1.0");
        install::write_plugin(&root, install::PluginBinaries::Inside).unwrap();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(root.join("bin/anvil-hook"), hook).unwrap();
        let listed = json!({"version": 2, "plugins": {"anvil@anvil": [
            {"scope": "user", "installPath": root, "version": "0.1.0"}
        ]}});
        std::fs::write(
            dir.join("user/.claude/plugins/installed_plugins.json"),
            listed.to_string(),
        )
        .unwrap();
        root
    }

    fn enable(dir: &Path, on: bool) {
        std::fs::write(
            dir.join("user/.claude/settings.json"),
            json!({"enabledPlugins": {"anvil@anvil": on}}).to_string(),
        )
        .unwrap();
    }

    #[test]
    fn an_enabled_plugin_is_found_with_its_hooks_and_its_programs_kind() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("project")).unwrap();
        assert!(
            enabled_plugin(&env(tmp.path())).is_none(),
            "nothing installed"
        );

        let root = install_plugin(tmp.path(), b"#!/usr/bin/env node\n");
        enable(tmp.path(), false);
        assert!(
            enabled_plugin(&env(tmp.path())).is_none(),
            "installed, disabled"
        );

        enable(tmp.path(), true);
        let plugin = enabled_plugin(&env(tmp.path())).expect("enabled");
        assert_eq!(plugin.key, "anvil@anvil");
        assert_eq!(plugin.root, root);
        for (event, sub) in install::HOOKS {
            assert!(plugin.has_hook(event, sub), "{event}");
        }
        let found = check(&env(tmp.path()), Some(&plugin));
        let native = found.iter().find(|f| f.check == "native").unwrap();
        assert_eq!(native.level, Level::Note, "{native:?}");
        assert!(
            native.message.contains("node launcher"),
            "{}",
            native.message
        );

        std::fs::write(root.join("bin/anvil-hook"), b"\x7fELF\x02\x01\x01").unwrap();
        let found = check(&env(tmp.path()), Some(&plugin));
        let native = found.iter().find(|f| f.check == "native").unwrap();
        assert_eq!(native.level, Level::Ok, "{native:?}");
    }

    #[test]
    fn a_launcher_says_how_to_get_the_native_programs() {
        let tmp = tempfile::tempdir().unwrap();
        let mut env = env(tmp.path());
        assert!(check(&env, None).is_empty(), "nothing to say");
        env.npm_launcher = Some(tmp.path().join("lib/node_modules/anvil-debate/bin/anvil"));
        let found = check(&env, None);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].level, Level::Warn);
        let hint = found[0].hint.as_deref().unwrap();
        assert!(hint.contains("npm rebuild -g anvil-debate"), "{hint}");
        assert!(hint.contains("anvil-debate/install.js"), "{hint}");
    }
}
