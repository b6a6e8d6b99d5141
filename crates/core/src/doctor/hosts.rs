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
    }
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
}
