//! What `anvil run` shows of a debate, with the real agent CLIs against the scripted server:
//! nothing from Claude Code that the person did not ask for, in a workspace nobody trusted
//! where `anvil install` wrote the project's settings (on both pinned clients); the debate as
//! plain text on a pipe; one JSON event per line with `--json`.

use crate::both_clients;
use crate::support::agents::AgentsHome;
use crate::support::anvil::{Project, Run, phase_text, turn_tag};
use crate::support::claude::Client;
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::snap::Filters;

/// Each phase in a few lines of markdown, its tag's text first (a list, some emphasis), with a
/// position for the debating phases and an open point for the critic: what a person reads.
fn debater(turn: &Turn) -> Reply {
    let Some(tag) = turn_tag(turn) else {
        return Reply::text("ok");
    };
    let mut text = format!(
        "{}\n\n## Why\n\n- **cost**: the *migration* takes a quarter\n- `schema` drift is real\n",
        phase_text(&tag)
    );
    match tag.key().split(' ').next() {
        Some("ADVOCATE") => text.push_str(
            "\n<anvil-position stance=\"for\" confidence=\"0.7\">Adopt it for the new \
             services only.</anvil-position>\n",
        ),
        Some("CRITIC") => text.push_str(
            "\n<anvil-position stance=\"against\" confidence=\"0.6\">Keep REST until the \
             clients ask.</anvil-position>\n<anvil-open>Who owns the schema?</anvil-open>\n",
        ),
        _ => {}
    }
    Reply::text(text)
}

/// `anvil run ARGS` in `project`, its stdout a pipe, with `client` as the host and a Claude seat.
fn run(project: &Project, home: &AgentsHome, client: Client, args: &[&str]) -> Run {
    Run::from_output(
        project
            .command(args)
            .env_clear()
            .envs(home.env())
            .env("ANVIL_CLAUDE_BIN", client.bin())
            .output()
            .expect("run anvil"),
    )
}

both_clients!(a_seated_run_in_an_untrusted_installed_workspace_says_nothing_from_claude_code);
/// Issue 35: each headless `claude` printed "Ignoring 8 permissions.allow entries from
/// .claude/settings.json: this workspace has not been trusted…", right after `anvil install`
/// wrote them. The same Claude Code, started as a person would in the same workspace, still
/// says it (the case is real here); `anvil run`, with the host and a seat both Claude Code,
/// says nothing of it, and its stderr holds anvil's own lines only.
fn a_seated_run_in_an_untrusted_installed_workspace_says_nothing_from_claude_code(client: Client) {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::installed();
    let plain = std::process::Command::new(client.bin())
        .args(["-p", "hello", "--output-format", "json"])
        .current_dir(project.path())
        .env_clear()
        .envs(home.env())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run claude");
    let said = String::from_utf8_lossy(&plain.stderr);
    assert!(
        said.contains("permissions.allow") && said.contains("not been trusted"),
        "Claude Code, run by hand here, warns of the untrusted workspace: {said}"
    );

    let run = run(
        &project,
        &home,
        client,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "2",
            "--seat",
            "critic=claude",
        ],
    )
    .ok();
    for text in [&run.stdout, &run.stderr] {
        assert!(!text.contains("permissions.allow"), "{}", run.describe());
        assert!(!text.contains("trusted"), "{}", run.describe());
    }
    for line in run.stderr.lines() {
        assert!(
            line.starts_with("anvil: "),
            "{line:?} in\n{}",
            run.describe()
        );
    }
    // Both the host and the seat played: the run really started Claude Code each way.
    let commits = project.commits(&project.only_debate());
    assert!(
        commits
            .iter()
            .any(|c| c.phase() == "critic" && c.trailer("Anvil-Agent") == Some("claude")),
        "{commits:#?}"
    );
    assert!(
        project
            .state_md(&project.only_debate())
            .contains("status: done")
    );
}
