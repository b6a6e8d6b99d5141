//! The README's commands, run as written: the quick start and "What you get", command by
//! command, in a temporary project, through `sh`, with the real Claude Code CLI against the
//! scripted model server; the first of "The two commands" in an empty directory; and the
//! `/anvil` line typed into a Claude Code session. The commands are read from README.md
//! itself, so the README cannot drift from the product.
//!
//! The same debate is then opened in the web room with Debian's chromium (headless), and the
//! page is kept as target/screenshots/readme-debate.png: the README's picture,
//! docs/images/debate.png, is a copy of it.

use std::path::Path;
use std::process::Command;

use crate::support::anvil::{Project, Run, anvil_dir, phases, position_tags, turn_tag};
use crate::support::claude::{Claude, ClaudeHome, headless_env};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md")
}

/// The body of the `## TITLE` section of `text`, up to the next `## ` heading.
fn section<'a>(text: &'a str, title: &str) -> &'a str {
    let start = text
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("README.md has no section `## {title}`"));
    let body = &text[start + title.len() + 5..];
    &body[..body.find("\n## ").unwrap_or(body.len())]
}

/// The commands of each ```sh block of `text`, in order: one per line, a line ending in `\`
/// joined to the next.
fn sh_blocks(text: &str) -> Vec<Vec<String>> {
    blocks(text, "sh")
}

/// The lines of each fenced block of `text` in language `lang`, as [`sh_blocks`] reads them.
fn blocks(text: &str, lang: &str) -> Vec<Vec<String>> {
    let fence = format!("```{lang}");
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != fence {
            continue;
        }
        let mut block = Vec::new();
        let mut pending = String::new();
        for line in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            match line.strip_suffix('\\') {
                Some(head) => pending.push_str(head),
                None => {
                    pending.push_str(line);
                    if !pending.trim().is_empty() {
                        block.push(pending.clone());
                    }
                    pending.clear();
                }
            }
        }
        blocks.push(block);
    }
    blocks
}

/// A debate about billing, as a person would want to read it: each side argues, ends with its
/// position and what it says the other side has not answered; the synthesis concludes.
fn debater(turn: &Turn) -> Reply {
    let Some(tag) = turn_tag(turn) else {
        return Reply::text("hello");
    };
    let branch = tag.line.ends_with("@cost");
    let text = match (tag.role.as_str(), tag.round) {
        ("Advocate", Some(1)) => format!(
            "Billing causes most of our incidents: two of the last three outages were rounding \
             bugs in invoice totals. Rust's type system makes **money a type**, not a float, \
             and the service is small enough (about 9,000 lines) to rewrite in a quarter.\n\n{}",
            position_tags(
                "for",
                "0.7",
                "A Rust rewrite removes the class of bugs behind our outages.",
                &[]
            )
        ),
        ("Critic", Some(1)) => format!(
            "The outages came from missing tests, not from the language. A rewrite freezes \
             billing features for a quarter, and only two engineers here write Rust.\n\n{}",
            position_tags(
                "against",
                "0.65",
                "Tests and a money type in the current code fix the bugs for far less.",
                &["Who maintains the Rust service when its two authors move on?"]
            )
        ),
        ("Advocate", Some(_)) if branch => format!(
            "Counting migration cost: running both services side by side for a month costs \
             about six engineer-weeks. The invoice calculator alone carries most of the risk.\n\n{}",
            position_tags(
                "mixed",
                "0.6",
                "Rewrite the invoice calculator only; leave the rest.",
                &[]
            )
        ),
        ("Advocate", Some(_)) => format!(
            "Fair: tests first. But a money type in the old code is a rewrite of its hot path \
             anyway. Start with the invoice calculator, behind the same API.\n\n{}",
            position_tags(
                "mixed",
                "0.6",
                "Rewrite the invoice calculator first, behind the same API.",
                &[]
            )
        ),
        ("Critic", Some(_)) => format!(
            "A calculator behind the same API is a contained bet, and it can be rolled back. \
             The staffing question stays open.\n\n{}",
            position_tags(
                "mixed",
                "0.6",
                "A contained rewrite of the calculator is acceptable.",
                &["Who maintains the Rust service when its two authors move on?"]
            )
        ),
        _ if tag.is_synthesis() => "## Conclusion\n\nDo not rewrite billing wholesale. Add \
             property tests for invoice totals now, then rewrite the invoice calculator in Rust \
             behind the existing API.\n\n**Still open (O1):** who maintains the Rust code when \
             its two authors move on. Name a second owner before the work starts."
            .to_owned(),
        _ => format!("{} of {}.", tag.key(), tag.line),
    };
    Reply::text(text)
}

/// Runs one README line with `sh` in `dir`: `anvil` and `anvil-hook` on the `PATH` (what
/// `cargo install` would have put there), Claude Code's headless runs sent to `server`.
fn sh(dir: &Path, line: &str, server: &ModelServer, home: &ClaudeHome) -> Run {
    let path = std::env::join_paths(std::iter::once(anvil_dir()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("a PATH");
    let out = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("AI_AGENT")
        .env_remove("ANVIL_NOW")
        .env_remove("CLAUDE_PROJECT_DIR")
        .envs(headless_env(server, home))
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run sh");
    let run = Run::from_output(out);
    assert_eq!(
        run.code,
        Some(0),
        "the README's `{line}` failed: {}",
        run.describe()
    );
    run
}

/// Every ```sh block of the README is either run here or named with the reason it is not,
/// so that a new block cannot slip past this test.
#[test]
fn every_sh_block_of_the_readme_is_run_or_accounted_for() {
    let text = readme();
    let run_here = ["The two commands", "Quick start", "What you get"];
    // `cargo install` is what this test binary's build already did; seats need other agents
    // (tests/it/e2e_seats.rs); steering needs a debate running (tests/it/e2e_core.rs).
    let not_run = ["Install", "Seats: every role its own agent", "Steering"];
    let mut counted = 0;
    for title in run_here.iter().chain(&not_run) {
        let blocks = sh_blocks(section(&text, title));
        assert!(!blocks.is_empty(), "`## {title}` has no sh block");
        counted += blocks.len();
    }
    assert_eq!(
        sh_blocks(&text).len(),
        counted,
        "an sh block of README.md is in a section this test neither runs nor names"
    );
}

/// The test command of "The two commands" is the one `.ci/run` runs.
#[test]
fn the_readme_test_command_is_the_one_ci_runs() {
    let text = readme();
    let blocks = sh_blocks(section(&text, "The two commands"));
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    assert_eq!(blocks[1], ["npm install && cargo test"]);
    let ci = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run"))
        .expect(".ci/run");
    assert!(
        ci.contains("npm install --no-audit --no-fund") && ci.contains("if ! cargo test "),
        ".ci/run no longer runs `npm install` and `cargo test`"
    );
}

#[test]
fn the_readme_quick_start_runs_as_written() {
    let text = readme();
    let server = ModelServer::start(debater);
    let home = ClaudeHome::new();

    // "The two commands": a debate in an empty directory. `cargo install --path …` is the
    // build that made this test's binaries; everything after it runs as written.
    let fresh = Project::empty();
    let first = &sh_blocks(section(&text, "The two commands"))[0];
    assert_eq!(first.len(), 1, "{first:?}");
    let (install, rest) = first[0]
        .split_once(" && ")
        .expect("the install, then the debate");
    assert!(install.starts_with("cargo install --path "), "{install}");
    let run = sh(fresh.path(), rest, &server, &home);
    let report = run.stdout.trim();
    assert!(
        report.ends_with(".md") && Path::new(report).is_file(),
        "a report: {}",
        run.describe()
    );

    // The quick start, then "What you get", in a project of their own.
    let project = Project::empty();
    let mut out = Vec::new();
    for title in ["Quick start", "What you get"] {
        for block in sh_blocks(section(&text, title)) {
            for line in block {
                let run = sh(project.path(), &line, &server, &home);
                out.push((line, run));
            }
        }
    }
    let said = |prefix: &str| -> &Run {
        &out.iter()
            .find(|(line, _)| line.starts_with(prefix))
            .unwrap_or_else(|| panic!("the README no longer runs `{prefix}`"))
            .1
    };
    assert!(project.path().join(".anvil/record").is_dir());
    assert!(project.path().join(".claude/settings.json").is_file());
    assert!(said("anvil doctor").stdout.contains("Stop hook"));
    let report = said("anvil run \"Should we rewrite billing").stdout.trim();
    assert!(Path::new(report).is_file(), "the report: {report}");
    assert!(
        said("anvil log").stdout.contains("billing"),
        "{}",
        said("anvil log").describe()
    );
    assert!(
        said("anvil show")
            .stdout
            .contains("Do not rewrite billing wholesale"),
        "{}",
        said("anvil show").describe()
    );
    let html = std::fs::read_to_string(project.path().join("decision.html")).expect("the page");
    assert!(html.contains("<svg") && html.contains("invoice calculator"));
    let diff = &said("anvil diff").stdout;
    assert!(
        diff.contains("for 0.7") && diff.contains("mixed 0.6"),
        "{diff}"
    );
    let branched = std::fs::read_to_string(said("anvil run --line billing@cost").stdout.trim())
        .expect("the branch's report");
    assert!(branched.contains("invoice calculator only"), "{branched}");
    assert!(
        said("anvil search").stdout.contains("migration"),
        "{}",
        said("anvil search").describe()
    );
    let turns = server.main_turns();
    assert!(
        turns
            .iter()
            .any(|t| t.prompt().contains("focus on migration cost")),
        "the branch's steering reached a debater"
    );

    screenshot(&project);
}

/// The quick start's line for Claude Code, typed as the first prompt of a session in a project
/// after `anvil init` and `anvil install`: the session plays the whole debate.
#[test]
fn the_readme_slash_command_runs_a_debate_in_claude_code() {
    let text = readme();
    let typed = blocks(section(&text, "Quick start"), "text");
    assert_eq!(typed.len(), 1, "{typed:?}");
    assert_eq!(typed[0].len(), 1, "{typed:?}");
    assert!(typed[0][0].starts_with("/anvil "), "{typed:?}");
    let project = Project::installed();
    let server = ModelServer::start(debater);
    let out = Claude::new(&server, project.path(), typed[0][0].clone()).run();
    out.assert_success();
    let state = project.only_state();
    assert_eq!(state.setup.question, "Should we rewrite billing in Rust?");
    assert_eq!(state.progress.status.name(), "done", "{}", out.describe());
    assert_eq!(
        phases(&project, &state.debate),
        [
            "start",
            "advocate",
            "critic",
            "advocate",
            "critic",
            "synthesizer"
        ]
    );
}

/// The debate page of the project's debate in headless chromium, at 1200 pixels wide, down
/// to the end of its synthesis.
fn screenshot(project: &Project) {
    let debates: Vec<_> = std::fs::read_dir(project.path().join(".anvil/debates"))
        .expect("the live files")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(debates.len(), 1, "{debates:?}");
    let debate = debates[0].to_string_lossy();
    let served = crate::support::serve::Served::start(project);
    let page = format!("{}/debates/{debate}?token={}", served.base(), served.token);
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("readme-debate.png");
    let _ = std::fs::remove_file(&shot);
    crate::serve_browser::headless(
        &page,
        &[
            "--window-size=1200,1220",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
}
