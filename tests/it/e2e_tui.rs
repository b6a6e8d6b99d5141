//! Claude Code's own terminal UI, driven in tmux against the scripted model server: what the
//! person sees while anvil runs a debate. On a current client no phase is shown as a
//! "Stop hook error"; the one-line notices are. With the old form (`ANVIL_STOP_FORM=block`) the
//! same screen shows the error label, which is what the new form removes.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::anvil::{Project, anvil_dir, phase_text, turn_tag};
use crate::support::claude::{ClaudeHome, claude_bin};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

/// Runs a 1-round debate in Claude Code's terminal UI under tmux; returns every screen seen,
/// joined, once the debate is done (or a minute has passed).
fn screens_of_a_debate(form: Option<&str>) -> (String, bool) {
    let project = Project::installed();
    let started = project.start(&["Should the terminal show errors?", "--rounds", "1"]);
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
    std::fs::write(&prompt, &started.prompt).unwrap();
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
        shell_quote(&claude_bin()),
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
        if project.state_md(&started.debate).contains("status: done") {
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

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

#[test]
fn the_terminal_ui_never_shows_a_phase_as_a_hook_error() {
    let (seen, done) = screens_of_a_debate(None);
    assert!(
        done,
        "the debate ran to its end in the terminal UI:\n{seen}"
    );
    assert!(
        !seen.contains("Stop hook error"),
        "a phase was shown as an error:\n{seen}"
    );
    assert!(
        seen.contains("round 1/1 · critic"),
        "the one-line notice is shown:\n{seen}"
    );

    // The old form, on the same client, is what showed the label.
    let (old, done) = screens_of_a_debate(Some("block"));
    assert!(done, "{old}");
    assert!(old.contains("Stop hook error"), "{old}");
}
