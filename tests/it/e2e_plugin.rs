//! anvil as a Claude Code plugin: `anvil plugin` writes it, Claude Code's own validator accepts
//! it, `claude --plugin-dir` loads it, and its hooks and commands drive a debate to the
//! synthesis in an untrusted project without `anvil install`.

use std::path::Path;
use std::process::Command;

use crate::both_clients;
use crate::support::anvil::{Project, phase_text, turn_tag};
use crate::support::claude::{Claude, Client, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

/// Runs Claude Code with the plugin at `plugin` on `prompt` in `project`, and asserts that it
/// succeeded after exactly one round: advocate, critic, synthesis.
fn one_round_with_plugin(client: Client, project: &Project, plugin: &Path, prompt: &str) {
    one_round(client, project, prompt, |claude| {
        claude.arg("--plugin-dir").arg(plugin.display().to_string())
    });
}

/// Runs Claude Code (as `setup` makes it) on `prompt` in `project`, and asserts that it
/// succeeded after exactly one round: advocate, critic, synthesis.
fn one_round(
    client: Client,
    project: &Project,
    prompt: &str,
    setup: impl FnOnce(Claude) -> Claude,
) {
    let server = ModelServer::start(debater);
    let out = setup(
        Claude::new(&server, project.path(), prompt)
            .client(client)
            .session_id(new_session_id()),
    )
    .run();
    out.assert_success();
    let keys: Vec<String> = server
        .main_turns()
        .iter()
        .filter_map(|t| turn_tag(t).map(|t| t.key()))
        .collect();
    assert_eq!(
        keys,
        ["ADVOCATE r1", "CRITIC r1", "SYNTHESIS"],
        "{}",
        out.describe()
    );
}

both_clients!(the_plugin_written_by_anvil_plugin_drives_a_debate);
fn the_plugin_written_by_anvil_plugin_drives_a_debate(client: Client) {
    let project = Project::new();
    project.anvil(&["plugin", "--out", "anvil-plugin"]).ok();
    let plugin = project.path().join("anvil-plugin");
    for file in [
        ".claude-plugin/plugin.json",
        "hooks/hooks.json",
        "commands/anvil.md",
        "commands/anvil-status.md",
    ] {
        assert!(plugin.join(file).is_file(), "{file} missing");
    }
    assert!(!project.path().join(".claude/settings.json").exists());

    let started = project.start(&["Should we ship a plugin?", "--rounds", "1"]);
    one_round_with_plugin(client, &project, &plugin, &started.prompt);
    assert!(project.state_md(&started.debate).contains("status: done"));
}

both_clients!(claude_plugin_validate_accepts_the_plugin);
/// `claude plugin validate` on what `anvil plugin` writes: no error (regression: the unquoted
/// `argument-hint` of /anvil was not YAML, so Claude Code dropped the command's frontmatter).
fn claude_plugin_validate_accepts_the_plugin(client: Client) {
    let project = Project::new();
    project.anvil(&["plugin", "--out", "anvil-plugin"]).ok();
    let home = tempfile::tempdir().unwrap();
    let plugin = project.path().join("anvil-plugin");
    let text = claude_cli(
        client,
        home.path(),
        &["plugin", "validate", plugin.to_str().unwrap()],
    );
    assert!(!text.to_lowercase().contains("error"), "{text}");
    assert!(text.contains("Validation passed"), "{text}");
}

both_clients!(the_plugins_slash_command_starts_a_debate_with_any_question);
fn the_plugins_slash_command_starts_a_debate_with_any_question(client: Client) {
    let project = Project::new();
    project.anvil(&["plugin", "--out", "anvil-plugin"]).ok();
    let plugin = project.path().join("anvil-plugin");
    let question = "Ship `anvil` as a \"plugin\"? $PLUGIN_ROOT !";
    one_round_with_plugin(
        client,
        &project,
        &plugin,
        &format!("/anvil:anvil '{question}' --rounds 1"),
    );
    let state = project.only_state();
    assert_eq!(state.setup.question, question);
    assert_eq!(state.progress.status.name(), "done");
}

/// `claude ARGS` (plugin management: no model involved) with `home` as HOME; its stdout and
/// stderr together, after asserting that it succeeded.
fn claude_cli(client: Client, home: &Path, args: &[&str]) -> String {
    let out = Command::new(client.bin())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .expect("run claude");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "claude {args:?}: {text}");
    text
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The repository is a Claude Code plugin marketplace whose plugin is the npm package
/// (installed from a registry in tests/it/npm_dist.rs), at this version; Claude Code's
/// validator accepts it. The committed `plugin/`, for `claude --plugin-dir plugin` during
/// development, is byte for byte what `anvil plugin` writes today.
#[test]
fn the_repository_is_a_marketplace_of_the_npm_package_and_plugin_is_current() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let project = Project::new();
    project.anvil(&["plugin", "--out", "fresh"]).ok();
    let fresh = project.path().join("fresh");
    let committed = repo.join("plugin");
    assert_eq!(
        files_under(&fresh),
        files_under(&committed),
        "plugin/ is not what `anvil plugin --out plugin` writes: run it and commit"
    );
    for file in files_under(&fresh) {
        assert_eq!(
            std::fs::read_to_string(fresh.join(&file)).unwrap(),
            std::fs::read_to_string(committed.join(&file)).unwrap(),
            "plugin/{} is stale: run `anvil plugin --out plugin` and commit",
            file.display()
        );
    }
    let marketplace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".claude-plugin/marketplace.json")).unwrap(),
    )
    .unwrap();
    let plugin = &marketplace["plugins"][0];
    assert_eq!(
        plugin["source"],
        serde_json::json!({
            "source": "npm",
            "package": "anvil-debate",
            "version": env!("CARGO_PKG_VERSION"),
        })
    );
    assert_eq!(
        plugin["version"],
        env!("CARGO_PKG_VERSION"),
        "the marketplace lists this version"
    );

    let home = crate::support::claude::ClaudeHome::new();
    let validated = claude_cli(
        Client::Oldest,
        home.path(),
        &["plugin", "validate", repo.to_str().unwrap()],
    );
    assert!(validated.contains("Validation passed"), "{validated}");
    assert!(!validated.contains("warning"), "{validated}");
}
