//! Claude Code's own terminal UI, driven in tmux against the scripted model server: what the
//! person sees while anvil runs a debate started with `/anvil`. On both pinned clients no
//! phase, the first included, is shown as a problem ("Stop hook error" in 2.1.197, "Stop hook
//! reported a problem" and a lasting "stop hook problem" notice in 2.1.332); the one-line
//! notices are. With the old form (`ANVIL_STOP_FORM=block`) the same screen shows the label,
//! which is what the form the hook picks removes.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::both_clients;
use crate::support::anvil::{Project, anvil_dir, phase_text, turn_tag};
use crate::support::claude::{ClaudeHome, Client};
use crate::support::model_server::{Agent, ModelServer, Reply, Turn};

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

/// Runs a 1-round debate, started with `/anvil`, in `client`'s terminal UI under tmux; returns
/// every screen seen, joined, once the debate is done (or 90 seconds have passed).
fn screens_of_a_debate(client: Client, form: Option<&str>) -> (String, bool) {
    let project = Project::installed();
    let server = ModelServer::start(debater);
    let typed = "/anvil \"Should the terminal stay quiet?\" --rounds 1";
    let env: Vec<String> = form
        .map(|form| format!("ANVIL_STOP_FORM={form}"))
        .into_iter()
        .collect();
    screens_of(client, &project, &server, typed, &env, &[], &|_| false)
}

/// Types `typed` into `client`'s terminal UI in `project` under tmux, talking to `server`, with
/// `env` (`NAME=VALUE`) and `path` (before the anvil binaries) in its environment; returns
/// every screen seen, joined, once the project's debate is done or a screen satisfies
/// `enough` (or 90 seconds have passed), and whether either came.
fn screens_of(
    client: Client,
    project: &Project,
    server: &ModelServer,
    typed: &str,
    extra_env: &[String],
    path_first: &[std::path::PathBuf],
    enough: &dyn Fn(&str) -> bool,
) -> (String, bool) {
    let home = ClaudeHome::new();
    home.trust(project.path());
    // The terminal UI asks once whether to use a key from the environment; the answer is kept
    // in the config by the key's last characters.
    let config_path = home.path().join(".claude.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["customApiKeyResponses"] = serde_json::json!({"approved": ["test"], "rejected": []});
    std::fs::write(&config_path, config.to_string()).unwrap();
    let prompt = project.path().join(".prompt.txt");
    std::fs::write(&prompt, typed).unwrap();
    let socket = home.path().join("tmux.sock");
    let mut path = path_first.to_vec();
    path.push(anvil_dir());
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            // The server too ends with the HOME (see `ClaudeHome`), if `kill-server` has not.
            .env("HOME", home.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run tmux")
    };
    let mut env = vec![
        format!("HOME={}", home.path().display()),
        format!(
            "PATH={}",
            std::env::join_paths(&path).unwrap().to_string_lossy()
        ),
        format!("ANTHROPIC_BASE_URL={}", server.base_url()),
        "ANTHROPIC_API_KEY=test".to_owned(),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1".to_owned(),
        "DISABLE_AUTOUPDATER=1".to_owned(),
        "TERM=xterm-256color".to_owned(),
        "LANG=C.UTF-8".to_owned(),
    ];
    env.extend(extra_env.iter().cloned());
    let mut args: Vec<String> = vec![
        "new-session".into(),
        "-d".into(),
        "-x".into(),
        "160".into(),
        "-y".into(),
        "60".into(),
        "-c".into(),
        project.path().display().to_string(),
    ];
    for e in &env {
        args.push("-e".into());
        args.push(e.clone());
    }
    // The PATH goes on the command line too: the pane's shell may set its own.
    let path = std::env::join_paths(&path).unwrap();
    args.push(format!(
        "PATH={} {} \"$(cat {})\"; sleep 30",
        shell_quote(Path::new(&path)),
        shell_quote(&client.bin()),
        shell_quote(&prompt)
    ));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let started_tmux = tmux(&args);
    assert!(started_tmux.status.success(), "{started_tmux:?}");
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut done = false;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
        let screen = tmux(&["capture-pane", "-p", "-J", "-S", "-2000"]);
        let shown = String::from_utf8_lossy(&screen.stdout).into_owned();
        seen.push_str(&shown);
        seen.push_str(&String::from_utf8_lossy(&screen.stderr));
        seen.push_str("\n---\n");
        if debate_done(project) || enough(&shown) {
            if done {
                break;
            }
            // One more look once the last notice is drawn.
            done = true;
        }
    }
    tmux(&["kill-server"]);
    (seen, done)
}

/// [`screens_of`] a 1-round debate whose critic's seat is played by the real Codex CLI (on the
/// PATH, configured for `server`), started with `/anvil` in the terminal UI.
fn screens_with_a_codex_seat(
    client: Client,
    project: &Project,
    server: &ModelServer,
    enough: &dyn Fn(&str) -> bool,
) -> (String, bool) {
    use crate::support::agents::{API_KEY, AgentsHome, node_bin_dir};
    let agents = AgentsHome::new(server);
    let env = vec![
        format!("CODEX_HOME={}", agents.path().join(".codex").display()),
        format!("SCRIPTED_API_KEY={API_KEY}"),
    ];
    screens_of(
        client,
        project,
        server,
        "/anvil \"Should a seat stay quiet?\" --rounds 1 --seat critic=codex:codex-seat-model",
        &env,
        &[node_bin_dir()],
        enough,
    )
}

/// Has the project's debate (the one `/anvil` started) ended?
fn debate_done(project: &Project) -> bool {
    let Some(home) = anvil_core::home::Home::find(project.path()) else {
        return false;
    };
    let lines = home.live_lines().unwrap_or_default();
    lines.iter().any(|line| {
        anvil_core::model::state::State::load(&home.state_path(line))
            .is_ok_and(|state| state.progress.status.name() == "done")
    })
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

both_clients!(the_terminal_ui_never_shows_a_phase_as_a_problem);
fn the_terminal_ui_never_shows_a_phase_as_a_problem(client: Client) {
    let (seen, done) = screens_of_a_debate(client, None);
    assert!(
        done,
        "the debate ran to its end in the terminal UI:\n{seen}"
    );
    let lower = seen.to_lowercase();
    for word in ["stop hook error", "problem", "error"] {
        assert!(
            !lower.contains(word),
            "a phase was shown as a problem ({word}):\n{seen}"
        );
    }
    assert!(
        seen.contains("round 1/1 · critic"),
        "the one-line notice is shown:\n{seen}"
    );

    // The old form, on the same client, is what showed the label.
    let (old, done) = screens_of_a_debate(client, Some("block"));
    assert!(done, "{old}");
    let label = match client {
        Client::Oldest => "Stop hook error",
        Client::Newest => "Stop hook reported a problem",
    };
    assert!(old.contains(label), "{old}");
}

both_clients!(a_seat_played_by_codex_in_the_terminal_ui_is_a_notice_not_a_problem);
/// `/anvil "…" --rounds 1 --seat critic=codex:M` typed in the terminal UI: the Stop hook
/// plays the critic with the real Codex CLI, the debate reaches its synthesis, and the screen
/// shows the hook's status while the seat plays and the seat's notice after, never an error
/// or a problem.
fn a_seat_played_by_codex_in_the_terminal_ui_is_a_notice_not_a_problem(client: Client) {
    let project = Project::installed();
    let server = ModelServer::start(|turn: &Turn| match turn_tag(turn) {
        // A seat that takes a few seconds, long enough to be seen at work.
        Some(tag) if turn.agent == Agent::Codex => {
            Reply::text(phase_text(&tag)).delayed(Duration::from_secs(3))
        }
        _ => debater(turn),
    });
    let (seen, done) = screens_with_a_codex_seat(client, &project, &server, &|_| false);
    assert!(
        done,
        "the debate ran to its end in the terminal UI:\n{seen}"
    );
    let lower = seen.to_lowercase();
    for word in ["hook error", "problem", "error"] {
        assert!(
            !lower.contains(word),
            "the seat's phase was shown as a problem ({word}):\n{seen}"
        );
    }
    assert!(
        seen.contains(anvil_core::claude::install::STOP_STATUS),
        "while the seat plays, the spinner says what the hook does:\n{seen}"
    );
    assert!(
        seen.contains("critic played by codex (codex-seat-model)"),
        "the seat's notice is shown:\n{seen}"
    );
    let debate = project.only_debate();
    let critic = project
        .commits(&debate)
        .into_iter()
        .find(|c| c.phase() == "critic")
        .expect("the critic is recorded");
    assert_eq!(critic.trailer("Anvil-Agent"), Some("codex"));
    assert_eq!(server.turns_of(Agent::Codex).len(), 1);
}

both_clients!(a_failed_seat_in_the_terminal_ui_is_a_notice_naming_it_not_a_hook_error);
/// A seat whose provider fails, in the terminal UI: the session stops with anvil's notice
/// naming the seat and its agent's last words, which Claude Code shows as what the hook says,
/// not as a hook error or a problem; nothing of the seat's phase is recorded.
fn a_failed_seat_in_the_terminal_ui_is_a_notice_naming_it_not_a_hook_error(client: Client) {
    use crate::support::model_server::Api;
    let project = Project::installed();
    let server = ModelServer::start(|turn: &Turn| {
        if turn.agent == Agent::Codex {
            return Reply::error(400, "scripted outage of the critic's provider");
        }
        match turn.api {
            Api::Messages => debater(turn),
            _ => Reply::text("ok"),
        }
    });
    let notice = "the seat of round 1/1 · critic (codex:codex-seat-model) failed";
    let (seen, shown) = screens_with_a_codex_seat(client, &project, &server, &|screen| {
        screen.contains("scripted outage")
    });
    assert!(shown, "the failure was shown:\n{seen}");
    assert!(seen.contains(notice), "{seen}");
    let lower = seen.to_lowercase();
    for label in ["hook error", "reported a problem", "stop hook problem"] {
        assert!(
            !lower.contains(label),
            "the failure was shown as a hook's problem ({label}):\n{seen}"
        );
    }
    let debate = project.only_debate();
    let phases: Vec<String> = project
        .commits(&debate)
        .iter()
        .map(|c| c.phase().to_owned())
        .collect();
    assert_eq!(phases, ["start", "advocate"], "nothing of the seat's phase");
    assert!(project.state_md(&debate).contains("status: active"));
}
