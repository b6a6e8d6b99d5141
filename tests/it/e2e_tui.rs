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
use crate::support::model_server::{ModelServer, Reply, Turn};

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
    std::fs::write(
        &prompt,
        "/anvil \"Should the terminal stay quiet?\" --rounds 1",
    )
    .unwrap();
    let socket = home.path().join("tmux.sock");
    let mut path = vec![anvil_dir()];
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
    if let Some(form) = form {
        env.push(format!("ANVIL_STOP_FORM={form}"));
    }
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
        seen.push_str(&String::from_utf8_lossy(&screen.stdout));
        seen.push_str(&String::from_utf8_lossy(&screen.stderr));
        seen.push_str("\n---\n");
        if debate_done(&project) {
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
