//! The web room in a real browser: `tests/browser/serve.mjs` drives Debian's chromium
//! (headless, through npm's playwright-core) against `anvil serve`, playing the person at the
//! page and the Claude session at the hook. Screenshots land in target/screenshots/.
//!
//! "Run headless" starts a real `claude -p` (the Claude Code CLI against a scripted model).
//!
//! Chromium is `$ANVIL_CHROMIUM`, else /usr/bin/chromium; `.ci/run` installs it. Without it
//! the test fails and says how to install it: it never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::anvil::{Project, anvil_bin, phase_text, turn_tag};
use crate::support::claude::{ClaudeHome, headless_env};
use crate::support::model_server::{ModelServer, Reply};
use crate::support::serve::Served;

const S1: &str = "b0b0b0b0-0000-4000-8000-000000000001";
const S2: &str = "b0b0b0b0-0000-4000-8000-000000000002";

/// Model text that tries everything a page could run.
const HOSTILE: &str = "ADVOCATE r1: yes.\n\n<script>window.__pwned=1</script>\n\n\
    An image <img src=x onerror=\"window.__pwned=2\"> and a [click me](javascript:window.__pwned=3) link.\n";

fn chromium() -> PathBuf {
    let path = std::env::var_os("ANVIL_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.is_file(),
        "the browser test needs chromium at {} (Debian: `apt-get install -y chromium`; .ci/run \
         installs it), or ANVIL_CHROMIUM pointing at a chromium binary",
        path.display()
    );
    path
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_room_in_a_real_browser() {
    let chromium = chromium();
    assert!(
        repo().join("node_modules/playwright-core").is_dir(),
        "the browser test needs playwright-core: run `npm install` at the repository root"
    );
    let project = Project::new();
    let started = project.start(&[
        "Should we rewrite billing in Rust?",
        "--rounds",
        "2",
        "--session",
        S1,
    ]);
    let first = project
        .hook(&json!({
            "session_id": S1,
            "cwd": project.path(),
            "hook_event_name": "Stop",
            "last_assistant_message": HOSTILE,
        }))
        .ok();
    assert!(first.stdout.contains("\"block\""), "{}", first.describe());
    // A second Claude session, with no debate, to send feedback to.
    let transcript = project.path().join("other-session.jsonl");
    std::fs::write(
        &transcript,
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Refactor the config parser\"}}\n",
    )
    .unwrap();
    project
        .anvil_stdin(
            &["hook", "session-start"],
            json!({"session_id": S2, "cwd": project.path(), "source": "startup",
                   "transcript_path": transcript})
            .to_string()
            .as_bytes(),
        )
        .ok();

    // For "Run headless": the server's runs use the real Claude Code CLI against a scripted
    // model, from a fresh (untrusted) HOME.
    let model = ModelServer::start(|turn| match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    });
    let home = ClaudeHome::new();
    let served = Served::start_with(&project, &headless_env(&model, &home));
    let shots = repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let out = Command::new("node")
        .arg(repo().join("tests/browser/serve.mjs"))
        .current_dir(repo())
        .env("SERVE_URL", &served.url)
        .env("ANVIL_BIN", anvil_bin())
        .env("PROJECT", project.path())
        .env("DEBATE", &started.debate)
        .env("SESSION", S1)
        .env("FEEDBACK_SESSION", S2)
        .env("CHROMIUM", &chromium)
        .env("SCREENSHOTS", &shots)
        .output()
        .expect("run node (needed by the browser test)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("browser: all checks passed"),
        "the browser test failed ({}):\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        out.status
    );
    for name in [
        "list", "debate", "question", "branch", "headless", "compare", "sessions",
    ] {
        let png = std::fs::read(shots.join(format!("{name}.png"))).unwrap();
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 10_000,
            "{name}.png"
        );
    }
    // What the page did is in the record, as the commands would have written it.
    let commits = project.commits(&started.debate);
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(
        phases,
        ["start", "advocate", "critic", "advocate", "ask", "answer"],
        "{commits:#?}"
    );
    assert_eq!(
        commits[3].trailers_named("Anvil-Steering"),
        ["Weigh the hiring cost of Rust developers"]
    );
    // The branch the page ran headless reached its synthesis in the record, then what the
    // run cost was recorded.
    let run = project.line_commits(&started.debate, "keep-go");
    let phases: Vec<&str> = run.iter().rev().take(2).map(|c| c.phase()).collect();
    assert_eq!(phases, ["run", "synthesizer"], "{run:#?}");
}
