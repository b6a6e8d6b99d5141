//! The other agents that host debates in this project (`anvil install --agent NAME`): each
//! whose settings hold anvil's hook is checked, with its trust: a host that skips the
//! project's hook in a folder nobody trusted runs no debate there, and says nothing of it.

use super::environment::{Environment, read_json};
use super::finding::{Finding, Level};
use crate::agent::host::{Host, Trust, hosts};

/// The findings of each host wired into the project.
pub(super) fn check(env: &Environment) -> Vec<Finding> {
    let project = env.project();
    let mut out = Vec::new();
    for host in hosts().filter(|h| wired(h, &project)) {
        let title = host.agent().title();
        let wiring = host.wiring();
        let what = match (&wiring.hook, wiring.plugin) {
            (Some(hook), _) => format!("anvil's hook at its {} ({})", hook.event, hook.settings),
            (None, Some((plugin, _))) => format!("anvil's plugin ({plugin})"),
            (None, None) => continue,
        };
        out.push(Finding::new(
            "installation",
            "host-hook",
            Level::Ok,
            format!("{title} runs {what}"),
        ));
        match host.trust(&project, env.home.as_deref()) {
            Trust::NotAsked => {}
            Trust::Trusted(why) => out.push(Finding::new(
                "installation",
                "host-trust",
                Level::Ok,
                format!("{title}: {why}"),
            )),
            Trust::Untrusted { why, fix } => {
                out.push(Finding::new("installation", "host-trust", Level::Warn, why).hint(fix))
            }
        }
        out.extend(commands_and_mcp(host, &project, env.home.as_deref()));
    }
    out
}

/// Whether the host's custom commands and its MCP server are anvil's, where it has them.
fn commands_and_mcp(
    host: &dyn Host,
    project: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Vec<Finding> {
    use crate::claude::install::host::{mcp_wired, missing_commands};
    let (title, wiring) = (host.agent().title(), host.wiring());
    let again = format!(
        "`anvil install --agent {}` writes it again",
        host.agent().name()
    );
    let mut out = Vec::new();
    if wiring.command.is_some() {
        let missing = missing_commands(project, wiring);
        out.push(match missing.as_slice() {
            [] => Finding::new(
                "installation",
                "host-commands",
                Level::Ok,
                format!("{title} has anvil's commands"),
            ),
            missing => Finding::new(
                "installation",
                "host-commands",
                Level::Warn,
                format!("{title} lacks anvil's command {}", missing.join(", ")),
            )
            .hint(again.clone()),
        });
    }
    out.extend(mcp_wired(project, wiring).map(|wired| {
        match (wired, host.mcp_approval(project, home)) {
            (true, Trust::Untrusted { why, fix }) => {
                Finding::new("installation", "host-mcp", Level::Warn, why).hint(fix)
            }
            (true, _) => Finding::new(
                "installation",
                "host-mcp",
                Level::Ok,
                format!("{title} reaches anvil's MCP server (`anvil mcp`)"),
            ),
            (false, _) => Finding::new(
                "installation",
                "host-mcp",
                Level::Warn,
                format!("{title} has no entry for anvil's MCP server"),
            )
            .hint(again),
        }
    }));
    out
}

/// Does the project's settings file of `host` hold anvil's hook (or its plugin dir, anvil's
/// plugin)?
fn wired(host: &&dyn Host, project: &std::path::Path) -> bool {
    let wiring = host.wiring();
    match (&wiring.hook, wiring.plugin) {
        (Some(hook), _) => read_json(&project.join(hook.settings))
            .and_then(|settings| settings.as_object().cloned())
            .is_some_and(|settings| crate::claude::install::host::has_ours(&settings, hook)),
        (None, Some((plugin, _))) => std::fs::read_to_string(project.join(plugin))
            .is_ok_and(|text| crate::claude::install::host::is_anvils(&text)),
        (None, None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gemini CLI wired into a project: its hook found, and the folder untrusted until
    /// `~/.gemini/trustedFolders.json` trusts it (or a folder above it).
    #[test]
    fn a_wired_host_is_found_and_its_trust_checked() {
        let dir = tempfile::tempdir().unwrap();
        let (project, home) = (dir.path().join("p"), dir.path().join("home"));
        std::fs::create_dir_all(&project).unwrap();
        let env = Environment::for_test(project.clone(), Some(home.clone()));
        assert!(check(&env).is_empty(), "nothing wired");
        let gemini = crate::agent::host::find("gemini").unwrap();
        crate::claude::install::host::install(&project, gemini).unwrap();
        let findings = check(&env);
        assert_eq!(findings[0].check, "host-hook");
        assert_eq!(findings[1].level, Level::Warn, "{findings:?}");
        assert!(
            findings[1]
                .hint
                .as_deref()
                .unwrap()
                .contains("TRUST_FOLDER")
        );
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        let above = dir.path().canonicalize().unwrap();
        std::fs::write(
            home.join(".gemini/trustedFolders.json"),
            serde_json::json!({ above.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
        )
        .unwrap();
        assert_eq!(check(&env)[1].level, Level::Ok);
        std::fs::write(
            home.join(".gemini/trustedFolders.json"),
            serde_json::json!({
                above.to_str().unwrap(): "TRUST_FOLDER",
                above.join("p").to_str().unwrap(): "DO_NOT_TRUST",
            })
            .to_string(),
        )
        .unwrap();
        assert_eq!(check(&env)[1].level, Level::Warn, "the nearest rule wins");
    }

    /// The commands and the MCP server of a wired host are checked: each gone one is named,
    /// with the command that writes it again.
    #[test]
    fn a_hosts_commands_and_mcp_server_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().to_owned();
        let env = Environment::for_test(project.clone(), None);
        let level = |check_name: &str| {
            check(&env)
                .into_iter()
                .find(|f| f.check == check_name)
                .map(|f| (f.level, f.message))
        };
        for name in ["qwen", "codex", "copilot", "opencode"] {
            let host = crate::agent::host::find(name).unwrap();
            crate::claude::install::host::install(&project, host).unwrap();
        }
        let mcp = |title: &str| {
            check(&env)
                .into_iter()
                .filter(|f| f.check == "host-mcp")
                .find(|f| f.message.starts_with(title))
                .unwrap_or_else(|| panic!("no word of {title}'s MCP server"))
        };
        for title in ["Copilot CLI", "OpenCode"] {
            assert_eq!(mcp(title).level, Level::Ok, "{title}");
        }
        assert_eq!(level("host-commands").unwrap().0, Level::Ok);
        let commands = |title: &str| {
            check(&env)
                .into_iter()
                .find(|f| f.check == "host-commands" && f.message.starts_with(title))
                .unwrap_or_else(|| panic!("no word of {title}'s commands"))
        };
        for title in ["Qwen Code", "Codex CLI", "Copilot CLI", "OpenCode"] {
            assert_eq!(commands(title).level, Level::Ok, "{title}");
        }
        // Codex's skills, in the folder it reads them from.
        std::fs::remove_file(project.join(".agents/skills/anvil-status/SKILL.md")).unwrap();
        let codex = commands("Codex CLI");
        assert_eq!(codex.level, Level::Warn);
        assert!(
            codex
                .message
                .contains(".agents/skills/anvil-status/SKILL.md"),
            "{}",
            codex.message
        );
        assert!(
            check(&env)
                .iter()
                .filter(|f| f.check == "host-mcp")
                .all(|f| f.level == Level::Ok)
        );
        std::fs::remove_file(project.join(".qwen/commands/anvil-steer.md")).unwrap();
        let qwen = check(&env)
            .into_iter()
            .find(|f| f.check == "host-commands" && f.message.starts_with("Qwen Code"))
            .unwrap();
        let (lacking, message) = (qwen.level, qwen.message);
        assert_eq!(lacking, Level::Warn);
        assert!(message.contains("anvil-steer.md"), "{message}");
        std::fs::write(project.join(".codex/config.toml"), "").unwrap();
        let codex_mcp = check(&env)
            .into_iter()
            .filter(|f| f.check == "host-mcp")
            .find(|f| f.message.starts_with("Codex"))
            .unwrap();
        assert_eq!(codex_mcp.level, Level::Warn);
        assert!(codex_mcp.hint.unwrap().contains("--agent codex"));
        std::fs::write(project.join(".github/mcp.json"), r#"{"mcpServers": {}}"#).unwrap();
        std::fs::write(project.join("opencode.json"), "{}").unwrap();
        for (title, name) in [("Copilot CLI", "copilot"), ("OpenCode", "opencode")] {
            let lacking = mcp(title);
            assert_eq!(lacking.level, Level::Warn, "{title}");
            assert!(lacking.hint.unwrap().contains(&format!("--agent {name}")));
        }
    }
}
