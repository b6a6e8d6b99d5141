//! The web room in a real browser: `tests/browser/serve.mjs` drives Debian's chromium
//! (headless, through npm's playwright-core) against `anvil serve`, playing the person at the
//! page and the Claude session at the hook. Screenshots land in target/screenshots/.
//!
//! "Run headless" starts a real `claude -p` (the Claude Code CLI against a scripted model).
//! `tests/browser/room.mjs` starts a debate from the "New debate" form, with the real Codex
//! CLI in the critic's seat, follows it to its end, and measures the positions chart at 390
//! and 1280 pixels wide.
//!
//! Chromium is `$ANVIL_CHROMIUM`, else /usr/bin/chromium; `.ci/run` installs it. Without it
//! the test fails and says how to install it: it never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::e2e_seats::{phases, want};
use crate::support::agents::AgentsHome;
use crate::support::anvil::{Project, anvil_bin, phase_text, position_tags, turn_tag};
use crate::support::claude::{ClaudeHome, headless_env};
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::serve::Served;

const S1: &str = "b0b0b0b0-0000-4000-8000-000000000001";
const S2: &str = "b0b0b0b0-0000-4000-8000-000000000002";

/// Model text that tries everything a page could run.
const HOSTILE: &str = "ADVOCATE r1: yes.\n\n<script>window.__pwned=1</script>\n\n\
    An image <img src=x onerror=\"window.__pwned=2\"> and a [click me](javascript:window.__pwned=3) link.\n";

/// Chromium for the tests that open a page: `$ANVIL_CHROMIUM`, else /usr/bin/chromium.
pub(crate) fn chromium() -> PathBuf {
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

/// Opens `page` in headless chromium with a fresh profile and these arguments (`--dump-dom`,
/// `--screenshot=PATH`, `--window-size=W,H`); fails with chromium's stderr unless it succeeded,
/// and returns what it printed.
pub(crate) fn headless(page: &str, extra: &[&str]) -> String {
    let profile = tempfile::tempdir().expect("a chromium profile");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(page)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn playwright() {
    assert!(
        repo().join("node_modules/playwright-core").is_dir(),
        "the browser test needs playwright-core: run `npm install` at the repository root"
    );
}

/// Runs `script` (under tests/browser/) with node and these variables; fails with its output
/// unless it passed every check. Its output (each check, with what it measured) is printed.
fn browse(script: &str, vars: &[(&str, &std::ffi::OsStr)]) {
    let out = Command::new("node")
        .arg(repo().join("tests/browser").join(script))
        .current_dir(repo())
        .envs(vars.iter().copied())
        .output()
        .expect("run node (needed by the browser test)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("browser: all checks passed"),
        "the browser test failed ({}):\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        out.status
    );
    println!("{stdout}");
}

/// A PNG of some substance was written at `name`.
fn assert_screenshot(shots: &Path, name: &str) {
    let png = std::fs::read(shots.join(format!("{name}.png"))).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{name}.png"
    );
}

#[test]
fn the_room_in_a_real_browser() {
    let chromium = chromium();
    playwright();
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
    let anvil = anvil_bin();
    browse(
        "serve.mjs",
        &[
            ("SERVE_URL", served.url.as_ref()),
            ("ANVIL_BIN", anvil.as_ref()),
            ("PROJECT", project.path().as_ref()),
            ("DEBATE", started.debate.as_ref()),
            ("SESSION", S1.as_ref()),
            ("FEEDBACK_SESSION", S2.as_ref()),
            ("CHROMIUM", chromium.as_ref()),
            ("SCREENSHOTS", shots.as_ref()),
        ],
    );
    for name in [
        "list", "debate", "question", "branch", "headless", "compare", "sessions",
    ] {
        assert_screenshot(&shots, name);
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

/// Plays each phase with a position: the advocate for 0.8 twice, then 0.75; the critic against
/// 0.7 twice (with an open point in round 1), then mixed 0.6. Positions hold after round 2 of
/// 3, and the critic changes its stance in round 3: the chart has a convergence rule and a ring.
fn positioned(turn: &Turn) -> Reply {
    let Some(tag) = turn_tag(turn) else {
        return Reply::text("ok");
    };
    let position = match tag.key().as_str() {
        "ADVOCATE r1" | "ADVOCATE r2" => position_tags("for", "0.8", "It pays for itself", &[]),
        "ADVOCATE r3" => position_tags("for", "0.75", "It pays for itself", &[]),
        "CRITIC r1" => position_tags(
            "against",
            "0.7",
            "The migration is too risky",
            &["Who maintains it?"],
        ),
        "CRITIC r2" => position_tags("against", "0.7", "The migration is too risky", &[]),
        "CRITIC r3" => position_tags("mixed", "0.6", "Only with a staged rollout", &[]),
        _ => String::new(),
    };
    Reply::text(format!("{}\n\n{position}", phase_text(&tag)))
}

/// "New debate" in a real browser: the form offers the agents ready here, starts a debate
/// with Codex in the critic's seat (the real Claude Code CLI hosts the run, the real Codex CLI
/// plays the seat, both against the scripted model), and the debate's page follows the run
/// live to its end. At 390 pixels wide the form, the debate and the compare page fit, and
/// the positions chart's words stay legible (measured as drawn).
#[test]
fn a_debate_started_in_the_room_runs_live_and_reads_on_a_phone() {
    let chromium = chromium();
    playwright();
    let project = Project::new();
    let model = ModelServer::start(positioned);
    let agents = AgentsHome::new(&model);
    let served = Served::start_with(&project, &agents.env());
    let shots = repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    browse(
        "room.mjs",
        &[
            ("SERVE_URL", served.url.as_ref()),
            ("CHROMIUM", chromium.as_ref()),
            ("SCREENSHOTS", shots.as_ref()),
        ],
    );
    for name in [
        "new-390",
        "new-1280",
        "started-390",
        "started-1280",
        "compare-390",
        "compare-1280",
    ] {
        assert_screenshot(&shots, name);
    }
    // The record holds what the form asked for: three rounds, Codex in the critic's seat.
    let debate = project.only_debate();
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "codex"),
            ("advocate", "2", "host"),
            ("critic", "2", "codex"),
            ("advocate", "3", "host"),
            ("critic", "3", "codex"),
            ("synthesizer", "3", "host"),
        ])
    );
}

/// A stakeholder debate of one round drafted blind (`--all-draft`) with a vote, played at the
/// hook: the web room in Chromium shows the round as one moment of three voices, each ballot in
/// words, the result and its chart. The screenshot is `target/screenshots/vote.png`.
#[test]
fn the_room_shows_a_drafted_round_as_one_moment_and_the_vote_with_its_ballots() {
    let project = Project::new();
    let started = project.start(&[
        "Should we build a platform team?",
        "--stakeholders",
        "--all-draft",
        "--rounds",
        "1",
        "--vote",
        "--session",
        S1,
    ]);
    let stop = |text: String| {
        project
            .hook(&json!({
                "session_id": S1,
                "cwd": project.path(),
                "hook_event_name": "Stop",
                "last_assistant_message": text,
            }))
            .ok()
    };
    for (i, stance) in ["for", "against", "for"].iter().enumerate() {
        stop(format!(
            "Draft {i}: the evidence as this voice reads it.\n\n<anvil-position stance=\"{stance}\" confidence=\"0.8\">claim {i}</anvil-position>"
        ));
    }
    for i in 0..3 {
        stop(format!(
            "Ballot {i}.\n\n<anvil-rank order=\"A,B\">A: sounder. B: thinner.</anvil-rank>"
        ));
    }
    stop("The synthesis.\n\n## Vote\nIt follows the vote.".to_owned());
    let debate = &started.debate;
    assert!(project.state_md(debate).contains("status: done"));
    let commits = project.commits(debate);
    assert_eq!(
        commits
            .iter()
            .filter(|c| c.trailer("Anvil-Drafted") == Some("yes"))
            .count(),
        3,
        "{commits:#?}"
    );

    let served = Served::start(&project);
    let page = format!("{}/debates/{debate}?token={}", served.base(), served.token);
    let dom = headless(&page, &["--dump-dom"]);
    assert!(
        dom.contains("Round 1 · 3 voices, drafted blind at once"),
        "{dom}"
    );
    assert_eq!(
        dom.matches("class=\"phase stakeholder drafted\"").count(),
        3
    );
    let vote = dom
        .split("<section id=\"vote\"")
        .nth(1)
        .and_then(|v| v.split("</section>").next())
        .unwrap_or_else(|| panic!("the page has a vote section: {dom}"));
    assert!(vote.contains("<svg"), "the vote's chart: {vote}");
    assert!(vote.contains("3 of 3 ballots cast"), "{vote}");
    assert_eq!(
        vote.matches("<li>").count(),
        3,
        "one line per ballot: {vote}"
    );
    assert!(vote.contains("Ballot of Engineering Team"), "{vote}");
    let shots = repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("vote.png");
    headless(
        &page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,2600",
        ],
    );
    assert_screenshot(&shots, "vote");
}
