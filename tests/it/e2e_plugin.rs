//! anvil as a Claude Code plugin: `anvil plugin` writes it, `claude --plugin-dir` loads it, and
//! its Stop hook drives a debate to the synthesis in a project without `anvil install`.

use crate::support::anvil::{Project, phase_text, turn_tag};
use crate::support::claude::{Claude, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

#[test]
fn the_plugin_written_by_anvil_plugin_drives_a_debate() {
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
    let server = ModelServer::start(debater);
    let out = Claude::new(&server, project.path(), &started.prompt)
        .session_id(new_session_id())
        .arg("--plugin-dir")
        .arg(plugin.display().to_string())
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
    assert!(project.state_md(&started.debate).contains("status: done"));
}
