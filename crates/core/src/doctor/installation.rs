//! Is anvil wired into Claude Code: its hooks, the programs they run, the workspace's trust,
//! the block cap and the command files.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::distribution::Plugin;
use super::environment::{Environment, find_in, is_executable, read_json};
use super::finding::{Finding, Fix, Level};
use crate::claude::install;

/// The installation's findings.
pub(super) fn check(env: &Environment) -> Vec<Finding> {
    let project_claude = env.project().join(".claude");
    let user_claude = env.user_claude();
    let places: Vec<&Path> = std::iter::once(project_claude.as_path())
        .chain(user_claude.as_deref())
        .collect();
    // The plugin brings its hooks, commands and MCP server, and its own programs.
    let plugin = super::distribution::enabled_plugin(env);
    let mut out = Vec::new();
    let mut programs: Vec<String> = Vec::new();
    for (event, sub) in install::HOOKS {
        out.extend(hook(
            event,
            sub,
            &places,
            plugin.as_ref(),
            &project_claude,
            &mut programs,
        ));
    }
    out.extend(super::hook_timeout::check(env, &places, plugin.as_ref()));

    // The programs the hooks and command files call must be found where Claude Code looks (the
    // plugin's commands find `anvil` in its own bin/).
    if plugin.is_none() {
        programs.push("anvil".into());
    }
    programs.sort();
    programs.dedup();
    let path = claude_path(env, &places);
    for program in programs {
        out.push(program_finding(&path, &program));
    }

    out.extend(super::distribution::check(env, plugin.as_ref()));
    out.extend(trust(env, &project_claude));
    out.extend(mcp(env, &places, plugin.as_ref()));
    out.push(block_cap(&places));
    out.extend(super::client::check(env, &path));
    out.extend(command_files(&places));
    out
}

/// anvil's hook `sub` for `event`: from the plugin, missing, or each entry of it in the
/// settings files of `places` (whose programs are added to `programs`).
fn hook(
    event: &str,
    sub: &str,
    places: &[&Path],
    plugin: Option<&Plugin>,
    project_claude: &Path,
    programs: &mut Vec<String>,
) -> Vec<Finding> {
    let wired: Vec<(PathBuf, String)> = places
        .iter()
        .flat_map(|claude| install::installed_hooks(claude, event, sub))
        .collect();
    let check = match sub {
        "stop" => "stop-hook",
        "session-start" => "session-start-hook",
        _ => "prompt-expansion-hook",
    };
    if let Some(plugin) = plugin.filter(|p| p.has_hook(event, sub))
        && wired.is_empty()
    {
        return vec![Finding::new(
            "installation",
            check,
            Level::Ok,
            format!("{event} hook from the plugin {}", plugin.key),
        )];
    }
    if wired.is_empty() {
        let (level, why) = match sub {
            "stop" => (
                Level::Fail,
                "debates do not advance past their first prompt",
            ),
            "session-start" => (
                Level::Warn,
                "after a compaction the next prompt does not bring the session up to date",
            ),
            _ => (
                Level::Warn,
                "/anvil, /anvil-steer and /anvil-cancel cannot receive their arguments",
            ),
        };
        return vec![
            Finding::new(
                "installation",
                check,
                level,
                format!("no {event} hook in Claude Code's settings: {why}"),
            )
            .hint("run `anvil install` (or load the plugin that `anvil plugin` writes)"),
        ];
    }
    let mut out = Vec::new();
    for (file, command) in &wired {
        let program = command.split_whitespace().next().unwrap_or_default();
        programs.push(program.to_owned());
        let shared = file == &project_claude.join("settings.json");
        out.push(wired_hook(event, check, file, command, shared));
    }
    out
}

/// One entry of anvil's hook in `file`: a machine's path in a shared file, the older wiring
/// (`anvil hook …`), or as `anvil install` writes it.
fn wired_hook(
    event: &str,
    check: &'static str,
    file: &Path,
    command: &str,
    shared: bool,
) -> Finding {
    let program = command.split_whitespace().next().unwrap_or_default();
    if Path::new(program).is_absolute() && shared {
        Finding::new(
            "installation",
            check,
            Level::Warn,
            format!(
                "{event} hook `{command}` in {} names this machine's path, in a file teams share",
                file.display()
            ),
        )
        .hint("`anvil install` rewrites it to call `anvil-hook` by name")
    } else if !command.starts_with(install::HOOK_PROGRAM)
        && !Path::new(program).ends_with(install::HOOK_PROGRAM)
    {
        Finding::new(
            "installation",
            check,
            Level::Note,
            format!(
                "{event} hook `{command}` ({}) is the older wiring; it works",
                file.display()
            ),
        )
        .hint("`anvil install` switches it to the smaller `anvil-hook` binary")
    } else {
        Finding::new(
            "installation",
            check,
            Level::Ok,
            format!("{event} hook `{command}` ({})", file.display()),
        )
    }
}

/// The PATH that Claude Code gives hooks and commands: a `PATH` in the settings' `env` (the
/// most local file that sets one), else the one it was started with, taken to be this one.
fn claude_path(env: &Environment, places: &[&Path]) -> (Option<OsString>, String) {
    most_local_first(places)
        .into_iter()
        .find_map(|file| {
            let path = read_json(&file)?["env"]["PATH"]
                .as_str()
                .map(OsString::from)?;
            Some((Some(path), format!("the PATH set in {}", file.display())))
        })
        .unwrap_or_else(|| (env.path.clone(), "PATH".to_owned()))
}

/// The settings files of `places` in Claude Code's precedence, highest first: project local,
/// project shared, user local, user.
fn most_local_first(places: &[&Path]) -> Vec<PathBuf> {
    places
        .iter()
        .flat_map(|claude| {
            install::SETTINGS_FILES
                .iter()
                .rev()
                .map(|name| claude.join(name))
        })
        .collect()
}

fn program_finding((search, which): &(Option<OsString>, String), program: &str) -> Finding {
    let path = Path::new(program);
    if path.is_absolute() {
        return if is_executable(path) {
            Finding::new(
                "installation",
                "binaries",
                Level::Ok,
                format!("{program} exists"),
            )
        } else {
            Finding::new(
                "installation",
                "binaries",
                Level::Fail,
                format!("{program}, which a hook runs, is missing or not executable"),
            )
            .hint("run `anvil install` again with the anvil you use now")
        };
    }
    match search.as_deref().and_then(|p| find_in(p, program)) {
        Some(found) => Finding::new(
            "installation",
            "binaries",
            Level::Ok,
            format!("{program} is on {which}: {}", found.display()),
        ),
        None => Finding::new(
            "installation",
            "binaries",
            Level::Fail,
            format!(
                "{program} is not on {which}: Claude Code runs the hooks and commands with the \
                 PATH it was started with (or the one its settings set), and cannot run `{program}`"
            ),
        )
        .hint(
            "`npm install -g anvil-debate` (or, with Rust, `cargo install anvil-debate`) puts \
             `anvil` and `anvil-hook` on PATH; make sure its bin directory is on the PATH of \
             the shell (or desktop session) that starts Claude Code. Or use the Claude Code \
             plugin, which needs nothing on PATH",
        ),
    }
}

/// Claude Code ignores a project's `permissions.allow` until the user trusts the workspace
/// (the dialog at the first interactive start; `claude -p` never shows it).
fn trust(env: &Environment, project_claude: &Path) -> Option<Finding> {
    let allow: Vec<String> = install::SETTINGS_FILES
        .iter()
        .filter_map(|name| read_json(&project_claude.join(name)))
        .flat_map(|s| {
            s["permissions"]["allow"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|v| v.as_str().map(str::to_owned))
        .filter(|p| p.starts_with("Bash(anvil") || p == install::MCP_PERMISSION)
        .collect();
    if allow.is_empty() {
        return None;
    }
    let config = env.claude_json();
    let project = env.project();
    let project = project.canonicalize().unwrap_or(project);
    let trusted = config.as_deref().and_then(read_json).is_some_and(|config| {
        project.ancestors().any(|dir| {
            config["projects"][dir.to_string_lossy().as_ref()]["hasTrustDialogAccepted"].as_bool()
                == Some(true)
        })
    });
    Some(if trusted {
        Finding::new(
            "installation",
            "permissions",
            Level::Ok,
            "the workspace is trusted: the project's permissions for anvil apply".into(),
        )
    } else {
        Finding::new(
            "installation",
            "permissions",
            Level::Warn,
            format!(
                "Claude Code has not been told to trust {}: until it is, Claude Code ignores the \
                 project's permissions.allow ({}), so a debater's `anvil ask` waits for your \
                 approval, and `claude -p` refuses it and says so at every start (`anvil run` \
                 passes its sessions what they need on their command line instead)",
                project.display(),
                allow.join(", ")
            ),
        )
        .hint(
            "start `claude` in the project once and accept the trust dialog, or install for \
             your user with `anvil install --user`; the hooks and slash commands work either way",
        )
    })
}

/// Can Claude consult the record: is `anvil mcp` registered (the project's `.mcp.json`, or the
/// user's `~/.claude.json`), approved when it is the project's, and are its tools allowed?
fn mcp(
    env: &Environment,
    places: &[&Path],
    plugin: Option<&super::distribution::Plugin>,
) -> Vec<Finding> {
    let finding = |level, message: String| Finding::new("installation", "mcp", level, message);
    let project_file = env.project().join(install::MCP_FILE);
    let in_project = read_json(&project_file)
        .is_some_and(|f| f["mcpServers"].get(install::MCP_SERVER).is_some());
    let in_user = env
        .claude_json()
        .as_deref()
        .and_then(read_json)
        .is_some_and(|c| c["mcpServers"].get(install::MCP_SERVER).is_some());
    if let Some(plugin) = plugin.filter(|_| !in_project && !in_user) {
        return vec![finding(
            Level::Ok,
            format!(
                "MCP server 'anvil' from the plugin {} (its tools are mcp__plugin_anvil_anvil__…)",
                plugin.key
            ),
        )];
    }
    if !in_project && !in_user {
        return vec![
            finding(
                Level::Warn,
                "no MCP server 'anvil' for Claude Code: Claude cannot search or read earlier \
                 debates (the debates themselves run)"
                    .into(),
            )
            .hint("run `anvil install` in the project (or load the plugin `anvil plugin` writes)"),
        ];
    }
    let settings: Vec<Value> = places
        .iter()
        .flat_map(|claude| install::SETTINGS_FILES.iter().map(|n| claude.join(n)))
        .filter_map(|p| read_json(&p))
        .collect();
    let mut out = Vec::new();
    if in_project && !in_user {
        let approved = settings.iter().any(|s| {
            s["enableAllProjectMcpServers"].as_bool() == Some(true)
                || s["enabledMcpjsonServers"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|v| v.as_str() == Some(install::MCP_SERVER)))
        });
        out.push(if approved {
            finding(
                Level::Ok,
                format!("MCP server 'anvil' in {}, approved", project_file.display()),
            )
        } else {
            finding(
                Level::Warn,
                format!(
                    "MCP server 'anvil' in {} is not approved: Claude Code does not start it \
                     until you say so",
                    project_file.display()
                ),
            )
            .hint("`anvil install` adds it to enabledMcpjsonServers, or approve it in `claude`")
        });
    } else {
        out.push(finding(
            Level::Ok,
            "MCP server 'anvil' for your user".into(),
        ));
    }
    let allowed = settings.iter().any(|s| {
        s["permissions"]["allow"].as_array().is_some_and(|l| {
            l.iter().any(|v| {
                v.as_str()
                    .is_some_and(|p| p == install::MCP_PERMISSION || p.starts_with("mcp__anvil__"))
            })
        })
    });
    if !allowed {
        out.push(
            finding(
                Level::Warn,
                format!(
                    "no `{}` in permissions.allow: Claude asks before each search of the record, \
                     and `claude -p` refuses it",
                    install::MCP_PERMISSION
                ),
            )
            .hint("`anvil install` allows it"),
        );
    }
    out
}

/// The block cap Claude Code will use: the most local settings file that sets it wins.
fn block_cap(places: &[&Path]) -> Finding {
    let found = most_local_first(places).into_iter().find_map(|file| {
        let value = read_json(&file)?["env"]
            .get(install::BLOCK_CAP_VAR)?
            .clone();
        Some((file, value))
    });
    let needed: u64 = install::BLOCK_CAP.parse().expect("a number");
    match found {
        None => Finding::new(
            "installation",
            "block-cap",
            Level::Warn,
            format!(
                "{} is not set: Claude Code ends a turn after 8 Stop-hook blocks in a row, which \
                 cuts debates of more than 8 phases",
                install::BLOCK_CAP_VAR
            ),
        )
        .hint("`anvil install` sets it; a debate cut short continues with `continue` or `anvil resume`"),
        Some((file, value)) => {
            let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            match text.trim().parse::<u64>() {
                Ok(n) if n >= needed => Finding::new(
                    "installation",
                    "block-cap",
                    Level::Ok,
                    format!("{}={n} ({})", install::BLOCK_CAP_VAR, file.display()),
                ),
                _ => Finding::new(
                    "installation",
                    "block-cap",
                    Level::Warn,
                    format!(
                        "{}={text} in {} is below the {} a long interactive debate needs",
                        install::BLOCK_CAP_VAR,
                        file.display(),
                        install::BLOCK_CAP
                    ),
                )
                .hint("`anvil install` raises it (and `anvil uninstall` puts yours back)"),
            }
        }
    }
}

fn command_files(places: &[&Path]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut any = false;
    for claude in places {
        for (name, text) in install::commands() {
            let path = claude.join("commands").join(name);
            let Ok(existing) = std::fs::read_to_string(&path) else {
                continue;
            };
            any = true;
            if existing == text || !existing.contains("anvil-managed: true") {
                continue;
            }
            out.push(
                Finding::new(
                    "installation",
                    "commands",
                    Level::Warn,
                    format!(
                        "{} is an older version's: questions with backticks, quotes or `$` break it",
                        path.display()
                    ),
                )
                .hint("`anvil install` (or `anvil doctor --fix`) rewrites it")
                .fix(Fix::Rewrite { path }),
            );
        }
    }
    if !any {
        out.push(
            Finding::new(
                "installation",
                "commands",
                Level::Note,
                "no /anvil command files here or for your user (fine when anvil is loaded as a plugin)"
                    .into(),
            )
            .hint("`anvil install` writes them"),
        );
    } else if out.is_empty() {
        out.push(Finding::new(
            "installation",
            "commands",
            Level::Ok,
            "the /anvil command files are current".into(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Project {
        dir: tempfile::TempDir,
    }

    impl Project {
        fn new() -> Project {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("project")).unwrap();
            crate::home::Home::init(&dir.path().join("project")).unwrap();
            Project { dir }
        }

        fn project(&self) -> PathBuf {
            self.dir.path().join("project")
        }

        fn claude(&self) -> PathBuf {
            self.project().join(".claude")
        }

        /// A PATH holding executable `anvil` and `anvil-hook`.
        fn bin_path(&self) -> OsString {
            use std::os::unix::fs::PermissionsExt;
            let bin = self.dir.path().join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            for name in ["anvil", install::HOOK_PROGRAM] {
                let file = bin.join(name);
                std::fs::write(&file, "#!/bin/sh\n").unwrap();
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            bin.into_os_string()
        }

        fn env(&self, path: Option<OsString>) -> Environment {
            Environment {
                path,
                ..Environment::for_test(self.project(), Some(self.dir.path().join("user")))
            }
        }

        fn settings(&self, name: &str) -> Value {
            read_json(&self.claude().join(name)).unwrap_or_else(|| serde_json::json!({}))
        }

        fn write_settings(&self, name: &str, settings: &Value) {
            std::fs::create_dir_all(self.claude()).unwrap();
            let text = serde_json::to_string_pretty(settings).unwrap();
            std::fs::write(self.claude().join(name), text).unwrap();
        }
    }

    fn find<'a>(findings: &'a [Finding], check: &str) -> Vec<&'a Finding> {
        findings.iter().filter(|f| f.check == check).collect()
    }

    fn worst(findings: &[Finding], check_name: &str) -> Level {
        find(findings, check_name)
            .iter()
            .map(|f| f.level)
            .max()
            .unwrap_or_else(|| panic!("no {check_name} finding in {findings:#?}"))
    }

    #[test]
    fn without_hooks_the_stop_hook_fails_and_the_others_warn() {
        let project = Project::new();
        let found = check(&project.env(Some(project.bin_path())));
        assert_eq!(worst(&found, "stop-hook"), Level::Fail);
        assert_eq!(worst(&found, "session-start-hook"), Level::Warn);
        assert_eq!(worst(&found, "block-cap"), Level::Warn);
        assert_eq!(worst(&found, "commands"), Level::Note);
    }

    #[test]
    fn the_mcp_server_is_reported_missing_unapproved_or_not_allowed() {
        let project = Project::new();
        let found = check(&project.env(Some(project.bin_path())));
        assert_eq!(worst(&found, "mcp"), Level::Warn, "{found:#?}");
        assert!(
            find(&found, "mcp")[0]
                .message
                .contains("no MCP server 'anvil'")
        );

        // The server in .mcp.json, but neither approved nor allowed.
        install::install_mcp(&project.project()).unwrap();
        let found = check(&project.env(Some(project.bin_path())));
        let mcp = find(&found, "mcp");
        assert!(
            mcp.iter().any(|f| f.message.contains("is not approved")),
            "{mcp:#?}"
        );
        assert!(
            mcp.iter().any(|f| f.message.contains("mcp__anvil")),
            "{mcp:#?}"
        );

        // Everything `anvil install` writes.
        install::install(&project.claude()).unwrap();
        let found = check(&project.env(Some(project.bin_path())));
        assert_eq!(worst(&found, "mcp"), Level::Ok, "{found:#?}");
    }

    #[test]
    fn an_installed_project_is_healthy_when_its_programs_are_on_path() {
        let project = Project::new();
        install::install(&project.claude()).unwrap();
        let found = check(&project.env(Some(project.bin_path())));
        for name in [
            "stop-hook",
            "session-start-hook",
            "block-cap",
            "commands",
            "binaries",
        ] {
            assert_eq!(worst(&found, name), Level::Ok, "{name}: {found:#?}");
        }
        // The same installation with programs Claude Code cannot find.
        let found = check(&project.env(Some(OsString::from("/nowhere"))));
        let missing = find(&found, "binaries");
        assert!(missing.iter().any(|f| f.level == Level::Fail
            && f.message.contains(install::HOOK_PROGRAM)
            && f.message.contains("is not on PATH")));
    }

    #[test]
    fn a_machine_path_in_shared_settings_and_a_low_block_cap_are_warnings() {
        let project = Project::new();
        install::install(&project.claude()).unwrap();
        let mut settings = project.settings("settings.json");
        let command = &mut settings["hooks"]["Stop"][0]["hooks"][0]["command"];
        assert!(command.as_str().unwrap().starts_with(install::HOOK_PROGRAM));
        *command = Value::from("/home/someone/.cargo/bin/anvil-hook stop");
        project.write_settings("settings.json", &settings);
        project.write_settings(
            "settings.local.json",
            &serde_json::json!({"env": {install::BLOCK_CAP_VAR: "8"}}),
        );
        let found = check(&project.env(Some(project.bin_path())));
        let stop = find(&found, "stop-hook");
        assert!(
            stop.iter()
                .any(|f| f.level == Level::Warn && f.message.contains("names this machine's path")),
            "{stop:#?}"
        );
        let cap = find(&found, "block-cap");
        assert_eq!(cap[0].level, Level::Warn);
        assert!(
            cap[0].message.contains("settings.local.json"),
            "{}",
            cap[0].message
        );
    }

    #[test]
    fn the_projects_permissions_count_only_in_a_trusted_workspace() {
        let project = Project::new();
        project.write_settings(
            "settings.json",
            &serde_json::json!({"permissions": {"allow": ["Bash(anvil ask:*)"]}}),
        );
        let env = project.env(Some(project.bin_path()));
        assert_eq!(worst(&check(&env), "permissions"), Level::Warn);
        let user = project.dir.path().join("user");
        std::fs::create_dir_all(&user).unwrap();
        let key = project.project().canonicalize().unwrap();
        let config = serde_json::json!({
            "projects": {key.to_string_lossy(): {"hasTrustDialogAccepted": true}}
        });
        std::fs::write(user.join(".claude.json"), config.to_string()).unwrap();
        assert_eq!(worst(&check(&env), "permissions"), Level::Ok);
    }

    #[test]
    fn an_older_command_file_of_anvils_is_offered_a_rewrite_and_a_users_own_is_left() {
        let project = Project::new();
        install::install(&project.claude()).unwrap();
        let (name, _) = install::commands().into_iter().next().unwrap();
        let path = project.claude().join("commands").join(name);
        std::fs::write(
            &path,
            "---\nanvil-managed: true\n---\n!`anvil slash \"$ARGUMENTS\"`\n",
        )
        .unwrap();
        let found = check(&project.env(Some(project.bin_path())));
        let commands = find(&found, "commands");
        assert_eq!(commands.len(), 1);
        assert_eq!(commands[0].level, Level::Warn);
        assert_eq!(commands[0].fix, Some(Fix::Rewrite { path: path.clone() }));

        std::fs::write(&path, "my own command\n").unwrap();
        let found = check(&project.env(Some(project.bin_path())));
        assert_eq!(worst(&found, "commands"), Level::Ok);
    }
}
