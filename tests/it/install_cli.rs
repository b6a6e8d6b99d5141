//! `anvil install` / `anvil uninstall` on real files: the user's own settings and commands are
//! kept, installing twice changes nothing, and uninstalling takes out exactly what was added.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::anvil::{Project, Run, anvil_dir};
use crate::support::snap::Filters;

const COMMANDS: [&str; 4] = [
    "anvil.md",
    "anvil-status.md",
    "anvil-cancel.md",
    "anvil-steer.md",
];

/// Settings a user might already have: a Stop hook of their own, another hook, env, permissions.
fn users_settings() -> Value {
    json!({
        "model": "opus",
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "/usr/local/bin/notify-done"}]}
            ],
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}
            ]
        },
        "env": {"MY_VAR": "1"},
        "permissions": {
            "allow": ["Bash(npm test:*)"],
            "deny": ["Read(./.env)"]
        }
    })
}

fn write_settings(dir: &Path, settings: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings).unwrap();
}

/// `.claude/settings.json` holding the user's own entries (see [`users_settings`]).
fn write_users_settings(dir: &Path) {
    write_settings(
        dir,
        &serde_json::to_string_pretty(&users_settings()).unwrap(),
    );
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Every file under `dir`, by relative path, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn hook_command() -> String {
    "anvil-hook stop".to_owned()
}

/// Every hook command under `hooks.Stop`.
fn stop_commands(settings: &Value) -> Vec<String> {
    settings["hooks"]["Stop"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(str::to_owned))
        .collect()
}

fn allowed(settings: &Value) -> Vec<String> {
    settings["permissions"]["allow"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// Asserts what `anvil install` adds to `claude` (a `.claude` directory).
fn assert_installed(claude: &Path) -> Value {
    let settings = read_json(&claude.join("settings.json"));
    let ours: Vec<String> = stop_commands(&settings)
        .into_iter()
        .filter(|c| *c == hook_command())
        .collect();
    assert_eq!(ours.len(), 1, "{settings:#}");
    for (event, command) in [
        ("SessionStart", "anvil-hook session-start"),
        ("UserPromptExpansion", "anvil-hook prompt-expansion"),
    ] {
        let found: Vec<&Value> = settings["hooks"][event]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
            .filter(|h| h["command"] == command)
            .collect();
        assert_eq!(found.len(), 1, "{event}: {settings:#}");
    }
    assert_eq!(
        settings["env"]["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"], "200",
        "{settings:#}"
    );
    let allow = allowed(&settings);
    assert!(
        allow.contains(&"Bash(anvil start:*)".to_owned()),
        "{allow:?}"
    );
    // The record's MCP tools: allowed, and the project's server approved by name.
    assert!(allow.contains(&"mcp__anvil".to_owned()), "{allow:?}");
    assert_eq!(
        settings["enabledMcpjsonServers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| *v == "anvil")
            .count(),
        1,
        "{settings:#}"
    );
    // Nothing of this machine goes into the settings a team shares.
    let text = std::fs::read_to_string(claude.join("settings.json")).unwrap();
    let here = anvil_dir().display().to_string();
    assert!(!text.contains(&here), "{text}");
    for name in COMMANDS {
        let text = std::fs::read_to_string(claude.join("commands").join(name))
            .unwrap_or_else(|e| panic!("no {name}: {e}"));
        assert!(text.starts_with("---\n"), "{text}");
        assert!(text.contains("anvil-managed: true"), "{text}");
        assert!(
            text.contains("!`anvil "),
            "{name} does not run anvil: {text}"
        );
        // No user text in a shell line: the arguments come through the hook.
        assert!(!text.contains("$ARGUMENTS"), "{name}: {text}");
        assert!(!text.contains(&here), "{name}: {text}");
    }
    let slash = std::fs::read_to_string(claude.join("commands/anvil.md")).unwrap();
    assert!(slash.contains("!`anvil slash start`"), "{slash}");
    settings
}

fn install(project: &Project) -> Run {
    project.anvil(&["install"]).ok()
}

#[test]
fn install_keeps_the_users_settings_and_adds_anvils() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    write_users_settings(&claude);
    install(&project);
    let settings = assert_installed(&claude);

    assert_eq!(settings["model"], "opus");
    assert_eq!(
        settings["hooks"]["PreToolUse"],
        users_settings()["hooks"]["PreToolUse"]
    );
    let stops = stop_commands(&settings);
    assert_eq!(
        stops,
        ["/usr/local/bin/notify-done".to_owned(), hook_command()]
    );
    assert_eq!(settings["env"]["MY_VAR"], "1");
    assert_eq!(allowed(&settings)[0], "Bash(npm test:*)");
    assert_eq!(settings["permissions"]["deny"], json!(["Read(./.env)"]));
}

/// What `anvil install` or `uninstall` told the person, for a snapshot; without the warning
/// that anvil is not on this machine's PATH, which says where the test runs, not what anvil
/// does.
fn said(project: &Project, run: &Run) -> String {
    let text: String = run
        .stderr
        .lines()
        .filter(|l| !l.starts_with("anvil: warning: anvil and anvil-hook not on PATH here"))
        .map(|l| format!("{l}\n"))
        .collect();
    Filters::of(project).redact(&text)
}

#[test]
fn installing_twice_changes_nothing() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    write_users_settings(&claude);
    install(&project);
    let first = snapshot(&claude);
    let again = install(&project);
    assert_eq!(snapshot(&claude), first, "a second install changed files");
    insta::assert_snapshot!("install_again", said(&project, &again));
}

#[test]
fn an_older_anvil_hook_is_replaced_not_duplicated() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    let mut settings = users_settings();
    settings["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [{"type": "command", "command": "/old/bin/anvil hook stop"}]}));
    settings["hooks"]["SessionStart"] =
        json!([{"hooks": [{"type": "command", "command": "anvil hook session-start"}]}]);
    settings["permissions"]["allow"]
        .as_array_mut()
        .unwrap()
        .push(json!("Bash(/old/bin/anvil start:*)"));
    write_settings(&claude, &settings.to_string());
    let run = install(&project);
    insta::assert_snapshot!("install_over_an_older_hook", said(&project, &run));
    let settings = assert_installed(&claude);
    assert_eq!(
        stop_commands(&settings),
        ["/usr/local/bin/notify-done".to_owned(), hook_command()]
    );
    assert!(
        !allowed(&settings).iter().any(|p| p.contains("/old/bin")),
        "{settings:#}"
    );
}

#[test]
fn uninstall_takes_out_an_older_versions_install() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    let mut settings = users_settings();
    settings["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [{"type": "command", "command": "/old/bin/anvil hook stop"}]}));
    settings["env"]["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = json!("200");
    settings["permissions"]["allow"]
        .as_array_mut()
        .unwrap()
        .push(json!("Bash(/old/bin/anvil start:*)"));
    write_settings(&claude, &settings.to_string());
    project.anvil(&["uninstall"]).ok();
    assert_eq!(read_json(&claude.join("settings.json")), users_settings());
}

#[test]
fn uninstall_removes_exactly_what_install_added() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    write_users_settings(&claude);
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    std::fs::write(claude.join("commands/deploy.md"), "Deploy the app.\n").unwrap();
    install(&project);
    project.anvil(&["uninstall"]).ok();

    assert_eq!(read_json(&claude.join("settings.json")), users_settings());
    let left = snapshot(&claude);
    let names: Vec<&String> = left.keys().collect();
    assert_eq!(names, ["commands/deploy.md", "settings.json"]);

    // Uninstalling again finds nothing of anvil's.
    let again = project.anvil(&["uninstall"]).ok();
    assert_eq!(snapshot(&claude), left);
    insta::assert_snapshot!("uninstall_again", said(&project, &again));
}

#[test]
fn install_then_uninstall_in_a_fresh_project_leaves_empty_settings() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    install(&project);
    assert_installed(&claude);
    project.anvil(&["uninstall"]).ok();
    assert_eq!(read_json(&claude.join("settings.json")), json!({}));
    for name in COMMANDS {
        assert!(!claude.join("commands").join(name).exists(), "{name} left");
    }
}

#[test]
fn install_adds_anvils_mcp_server_beside_the_users_and_uninstall_takes_only_it() {
    let project = Project::new();
    let theirs = json!({"mcpServers": {"docs": {"command": "docs-server", "args": ["--stdio"]}}});
    std::fs::write(
        project.path().join(".mcp.json"),
        serde_json::to_string_pretty(&theirs).unwrap(),
    )
    .unwrap();
    let run = install(&project);
    insta::assert_snapshot!("install_beside_the_users_mcp_server", said(&project, &run));
    let file = read_json(&project.path().join(".mcp.json"));
    assert_eq!(file["mcpServers"]["docs"], theirs["mcpServers"]["docs"]);
    assert_eq!(
        file["mcpServers"]["anvil"],
        json!({"type": "stdio", "command": "anvil", "args": ["mcp"]})
    );
    // Twice changes nothing.
    let before = std::fs::read(project.path().join(".mcp.json")).unwrap();
    install(&project);
    assert_eq!(
        std::fs::read(project.path().join(".mcp.json")).unwrap(),
        before
    );

    project.anvil(&["uninstall"]).ok();
    assert_eq!(read_json(&project.path().join(".mcp.json")), theirs);

    // Alone, the file goes with it; a server of the user's named anvil is left alone.
    let fresh = Project::new();
    install(&fresh);
    fresh.anvil(&["uninstall"]).ok();
    assert!(!fresh.path().join(".mcp.json").exists());
    let own = json!({"mcpServers": {"anvil": {"command": "blacksmith", "args": []}}});
    std::fs::write(fresh.path().join(".mcp.json"), own.to_string()).unwrap();
    let run = install(&fresh);
    insta::assert_snapshot!(
        "install_beside_an_mcp_server_named_anvil",
        said(&fresh, &run)
    );
    fresh.anvil(&["uninstall"]).ok();
    assert_eq!(read_json(&fresh.path().join(".mcp.json")), own);
}

#[test]
fn user_install_writes_under_home() {
    let project = Project::new();
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Run::from_output(
            project
                .command(args)
                .env("HOME", home.path())
                .output()
                .unwrap(),
        )
        .ok();
    };
    run(&["install", "--user"]);
    assert_installed(&home.path().join(".claude"));
    assert!(
        !project.path().join(".claude").exists(),
        "--user wrote into the project"
    );
    run(&["uninstall", "--user"]);
    let settings = read_json(&home.path().join(".claude/settings.json"));
    assert!(stop_commands(&settings).is_empty(), "{settings:#}");
    assert!(!home.path().join(".claude/commands/anvil.md").exists());
}

#[test]
fn a_users_own_anvil_command_is_left_alone() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    let mine = "---\ndescription: my own anvil command\n---\nForge something.\n";
    std::fs::write(claude.join("commands/anvil.md"), mine).unwrap();

    let run = install(&project);
    assert_eq!(
        std::fs::read_to_string(claude.join("commands/anvil.md")).unwrap(),
        mine
    );
    insta::assert_snapshot!("install_leaves_the_users_command", said(&project, &run));
    assert!(claude.join("commands/anvil-status.md").exists());

    project.anvil(&["uninstall"]).ok();
    assert_eq!(
        std::fs::read_to_string(claude.join("commands/anvil.md")).unwrap(),
        mine
    );
    assert!(!claude.join("commands/anvil-status.md").exists());
}

#[test]
fn invalid_settings_are_an_error_naming_the_file_and_stay_untouched() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    let broken = "{\n  \"hooks\": {\n    \"Stop\": [\n  // a comment\n";
    write_settings(&claude, broken);
    let path = claude.join("settings.json");

    for args in [&["install"][..], &["uninstall"][..]] {
        let run = project.anvil(args);
        assert_ne!(run.code, Some(0), "{args:?}: {}", run.describe());
        // The file is named, and what is wrong with it.
        insta::assert_snapshot!(
            format!("{}_invalid_settings", args[0]),
            said(&project, &run)
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    }
    assert!(!claude.join("commands").exists(), "commands written anyway");

    // Valid JSON of the wrong shape: the key is named too.
    write_settings(&claude, "{\"hooks\": []}");
    let run = project.anvil(&["install"]);
    assert_ne!(run.code, Some(0), "{}", run.describe());
    insta::assert_snapshot!("install_hooks_not_an_object", said(&project, &run));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"hooks\": []}");
}

fn block_cap(claude: &Path) -> Value {
    read_json(&claude.join("settings.json"))["env"]["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"].clone()
}

#[test]
fn a_users_higher_block_cap_stays_and_survives_uninstall() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    write_settings(
        &claude,
        &json!({"env": {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "500"}}).to_string(),
    );
    let run = install(&project);
    assert_eq!(block_cap(&claude), "500");
    insta::assert_snapshot!("install_keeps_a_higher_block_cap", said(&project, &run));
    project.anvil(&["uninstall"]).ok();
    assert_eq!(
        read_json(&claude.join("settings.json")),
        json!({"env": {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "500"}})
    );
}

#[test]
fn a_users_lower_block_cap_is_raised_with_a_note_and_restored_by_uninstall() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    write_settings(
        &claude,
        &json!({"env": {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "16"}}).to_string(),
    );
    let run = install(&project);
    assert_eq!(block_cap(&claude), "200");
    insta::assert_snapshot!("install_raises_a_lower_block_cap", said(&project, &run));
    // A second install remembers the user's value, not anvil's own.
    install(&project);
    let run = project.anvil(&["uninstall"]).ok();
    insta::assert_snapshot!("uninstall_restores_the_block_cap", said(&project, &run));
    assert_eq!(
        read_json(&claude.join("settings.json")),
        json!({"env": {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "16"}})
    );
    assert!(!claude.join("anvil-install.json").exists());
}

#[test]
fn a_block_cap_changed_after_install_is_left_by_uninstall() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    install(&project);
    let mut settings = read_json(&claude.join("settings.json"));
    settings["env"]["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = json!("300");
    write_settings(&claude, &settings.to_string());
    let run = project.anvil(&["uninstall"]).ok();
    assert_eq!(block_cap(&claude), "300");
    insta::assert_snapshot!("uninstall_leaves_a_changed_block_cap", said(&project, &run));
}

#[test]
fn a_private_settings_file_stays_private() {
    use std::os::unix::fs::PermissionsExt;
    let project = Project::new();
    let claude = project.path().join(".claude");
    write_users_settings(&claude);
    let path = claude.join("settings.json");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    install(&project);
    assert_installed(&claude);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    project.anvil(&["uninstall"]).ok();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn a_symlinked_settings_file_stays_a_symlink_and_its_target_is_updated() {
    let project = Project::new();
    let claude = project.path().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let dotfiles = tempfile::tempdir().unwrap();
    let target = dotfiles.path().join("claude-settings.json");
    std::fs::write(
        &target,
        serde_json::to_string_pretty(&users_settings()).unwrap(),
    )
    .unwrap();
    let link = claude.join("settings.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();

    install(&project);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_link(&link).unwrap(), target);
    assert_eq!(stop_commands(&read_json(&target))[1], hook_command());

    project.anvil(&["uninstall"]).ok();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read_json(&target), users_settings());
}

#[test]
fn install_says_the_binaries_are_called_by_name() {
    let project = Project::new();
    let run = install(&project);
    insta::assert_snapshot!("install_in_a_fresh_project", said(&project, &run));
}

/// What a person already has in the folders of Qwen Code, Gemini CLI, Codex, Copilot CLI and
/// OpenCode, in their own formatting: hooks, permissions, MCP servers and commands of their own.
const HOSTS_OWN: &[(&str, &str)] = &[
    (
        ".github/hooks/anvil.json",
        "{\"version\": 1, \"hooks\": {\"agentStop\": [{\"type\": \"command\", \"bash\": \"notify-done\"}]}}",
    ),
    (
        ".github/mcp.json",
        "{\n  \"mcpServers\": {\"github\": {\"type\": \"local\", \"command\": \"gh-mcp\"}}\n}\n",
    ),
    (
        ".github/skills/review/SKILL.md",
        "---\nname: review\n---\nReview the diff.\n",
    ),
    (
        "opencode.json",
        "{\n\t\"mcp\": {\"github\": {\"type\": \"local\", \"command\": [\"gh-mcp\"]}}\n}",
    ),
    (".opencode/command/review.md", "Review the diff.\n"),
    (
        ".qwen/settings.json",
        "{\n\t\"$version\": 4,\n\t\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-done\"}]}]},\n\t\"permissions\": {\"allow\": [\"Shell(npm test *)\"]},\n\t\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}},\n\t\"stopHookBlockingCap\": 3\n}",
    ),
    (".qwen/commands/review.md", "Review the diff.\n"),
    (
        ".gemini/settings.json",
        "{ \"hooks\": { \"AfterAgent\": [ { \"hooks\": [ { \"type\": \"command\", \"command\": \"notify-done\" } ] } ] },\n  \"tools\": { \"allowed\": [ \"run_shell_command(npm test)\" ] },\n  \"mcpServers\": { \"github\": { \"command\": \"gh-mcp\" } } }\n",
    ),
    (
        ".gemini/commands/review.toml",
        "prompt = \"Review the diff.\"\n",
    ),
    (
        ".codex/hooks.json",
        "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"notify-done\"}]}]}}",
    ),
    (
        ".codex/config.toml",
        "# mine\nmodel = \"o4\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"   # the one I use\n",
    ),
    (
        ".agents/skills/review/SKILL.md",
        "---\nname: review\ndescription: Review the diff\n---\nReview the diff.\n",
    ),
];

/// For each host, in a project holding the person's own entries: `anvil install --agent NAME`
/// adds anvil's, keeping theirs, and `anvil uninstall --agent NAME` gives every file back as it
/// was, byte for byte, leaving nothing of anvil's.
#[test]
fn uninstall_gives_each_hosts_configuration_back_byte_for_byte() {
    let folders = |host: &str| match host {
        "copilot" => vec![".github/".to_owned()],
        "opencode" => vec![".opencode/".to_owned(), "opencode.json".to_owned()],
        // Codex reads skills from the folder the open agent-skills form names.
        "codex" => vec![".codex/".to_owned(), ".agents/".to_owned()],
        host => vec![format!(".{host}/")],
    };
    for host in ["qwen", "gemini", "codex", "copilot", "opencode"] {
        let ours = |path: &str| folders(host).iter().any(|f| path.starts_with(f));
        let project = Project::new();
        for (file, text) in HOSTS_OWN {
            let path = project.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        let before = snapshot(project.path());
        project.anvil(&["install", "--agent", host]).ok();
        let installed = snapshot(project.path());
        let changed: Vec<&String> = installed
            .iter()
            .filter(|(path, bytes)| before.get(*path) != Some(bytes))
            .map(|(path, _)| path)
            .collect();
        assert!(changed.iter().all(|p| ours(p)), "{host}: {changed:?}");
        for (file, text) in HOSTS_OWN.iter().filter(|(f, _)| ours(f)) {
            let now = String::from_utf8(installed[*file].clone()).unwrap();
            for own in ["notify-done", "gh-mcp", "npm test", "Review the diff"] {
                assert_eq!(
                    now.contains(own),
                    text.contains(own),
                    "{host}: {file} lost {own}:\n{now}"
                );
            }
        }
        project.anvil(&["uninstall", "--agent", host]).ok();
        let after = snapshot(project.path());
        for (path, bytes) in &before {
            assert_eq!(
                after.get(path).map(|b| String::from_utf8_lossy(b)),
                Some(String::from_utf8_lossy(bytes)),
                "{host}: {path}"
            );
        }
        let left: Vec<&String> = after.keys().filter(|p| !before.contains_key(*p)).collect();
        assert!(left.is_empty(), "{host}: left behind {left:?}");
    }
}

/// A `PATH` holding anvil's binaries and the pinned agent CLIs, then the system's.
fn path_with_the_agents() -> std::ffi::OsString {
    let mut dirs = vec![anvil_dir(), crate::support::agents::node_bin_dir()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// Without a terminal (a pipe, CI), `anvil install` wires Claude Code as it always has, and
/// names each other agent it finds here with the command that wires it.
#[test]
fn install_without_a_terminal_wires_claude_code_and_names_the_agents_it_finds() {
    let project = Project::new();
    let run = Run::from_output(
        project
            .command(&["install"])
            .env("PATH", path_with_the_agents())
            .output()
            .expect("run anvil"),
    )
    .ok();
    insta::assert_snapshot!(
        "install_names_the_agents_found",
        Filters::of(&project).redact(&run.stderr)
    );
    assert!(project.path().join(".claude/settings.json").is_file());
    for other in [".qwen", ".gemini", ".codex"] {
        assert!(!project.path().join(other).exists(), "{other}");
    }
}

/// At a terminal (tmux), `anvil install` asks which of the agents it found to wire: the names
/// typed are wired, Claude Code only when named; Enter alone wires Claude Code.
#[test]
fn install_at_a_terminal_asks_which_agents_to_wire() {
    use crate::support::tmux::{Tmux, quote};
    use std::time::{Duration, Instant};
    let wired = |answer: &[&str]| -> (Project, String) {
        let project = Project::new();
        let env = [
            ("PATH", path_with_the_agents()),
            ("HOME", project.path().as_os_str().to_owned()),
            ("TERM", "xterm".into()),
        ];
        let line = format!(
            "{} install; echo \"exit=$?\"; sleep 30",
            quote(&crate::support::anvil::anvil_bin().to_string_lossy())
        );
        let tmux = Tmux::start(project.path(), &env, &line, (200, 50));
        let deadline = Instant::now() + Duration::from_secs(60);
        let (mut asked, mut screen) = (false, String::new());
        while Instant::now() < deadline && !screen.contains("exit=") {
            std::thread::sleep(Duration::from_millis(200));
            screen = tmux.screen();
            if !asked && screen.contains("Wire which") {
                asked = true;
                tmux.keys(answer);
            }
        }
        assert!(screen.contains("exit=0"), "{screen}");
        (project, screen)
    };
    let (project, screen) = wired(&["qwen codex", "Enter"]);
    assert!(
        screen.contains("agents found here that host debates: claude, codex"),
        "{screen}"
    );
    for (file, there) in [
        (".qwen/settings.json", true),
        (".codex/hooks.json", true),
        (".claude/settings.json", false),
        (".gemini", false),
    ] {
        assert_eq!(
            project.path().join(file).exists(),
            there,
            "{file}:\n{screen}"
        );
    }
    let (project, screen) = wired(&["Enter"]);
    assert!(
        project.path().join(".claude/settings.json").is_file(),
        "{screen}"
    );
    assert!(!project.path().join(".qwen").exists(), "{screen}");
}
