//! Looking back at a recorded debate with two lines: log, show, diff, branch, resume.
//!
//! The debate is driven through the real `anvil hook stop` with scripted texts and a pinned
//! clock, so the output is deterministic once the debate id and commit ids are redacted.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::anvil::{Project, Run};
use crate::support::snap::Filters;

const S1: &str = "11111111-2222-4333-8444-555555555555";
const S2: &str = "22222222-2222-4333-8444-555555555555";

/// A project whose debate has a finished `main` line (3 rounds) and a line `cost` branched
/// from round 2 and finished too.
struct Fixture {
    project: Project,
    debate: String,
    clock: std::cell::Cell<u32>,
}

impl Fixture {
    fn new() -> Fixture {
        let project = Project::new();
        let f = Fixture {
            project,
            debate: String::new(),
            clock: std::cell::Cell::new(0),
        };
        let run = f.run(&[
            "start",
            "Should we rewrite billing in Rust?",
            "--rounds",
            "3",
        ]);
        let prompt = run.stdout;
        let debate = prompt
            .split("[anvil ")
            .nth(1)
            .and_then(|s| s.split('@').next())
            .expect("a tag in the first prompt")
            .to_owned();
        let f = Fixture { debate, ..f };
        // A session starts in the project (its SessionStart hook registers it), then claims
        // the waiting debate at its first stop.
        let input = json!({
            "session_id": S1, "cwd": f.project.path(),
            "hook_event_name": "SessionStart", "source": "startup",
        });
        f.project
            .anvil_stdin(&["hook", "session-start"], input.to_string().as_bytes())
            .ok();
        f.hook(S1, "(claiming)");
        for text in [
            "Rust removes a class of billing bugs.\nIt is fast.",
            "A rewrite is risky.\nThe team knows Go.",
            "Migrate one service at a time.\nStart with invoices.",
            "Even gradual migration costs a year.\nHiring is hard.",
            "Round three advocate: the tooling is mature.",
            "Round three critic: the tooling is not the problem.",
            "Conclusion: migrate gradually, invoices first.",
        ] {
            f.hook(S1, text);
        }
        f.run(&[
            "branch",
            "--from",
            "round-2",
            "--steer",
            "focus on migration cost",
            "--name",
            "cost",
            "--session",
            S2,
        ]);
        for text in [
            "Cost advocate: migration pays back in two years.",
            "Cost critic: it never pays back.",
            "Conclusion: do not migrate; the cost is too high.",
        ] {
            f.hook(S2, text);
        }
        f
    }

    /// `anvil ARGS` at the next tick of the pinned clock, in a pipe.
    fn command(&self, args: &[&str]) -> Command {
        let tick = self.clock.get() + 1;
        self.clock.set(tick);
        let mut cmd = self.project.command(args);
        cmd.env("ANVIL_NOW", format!("2026-11-22T10:{tick:02}:00Z"))
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE");
        cmd
    }

    fn run(&self, args: &[&str]) -> Run {
        let out = self.command(args).output().expect("run anvil");
        let run = Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert_eq!(run.code, Some(0), "anvil {args:?}\n{}", run.describe());
        run
    }

    fn fail(&self, args: &[&str]) -> Run {
        let out = self.command(args).output().expect("run anvil");
        let run = Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert_ne!(run.code, Some(0), "anvil {args:?} should fail");
        run
    }

    fn hook(&self, session: &str, text: &str) -> Run {
        let input = json!({
            "session_id": session,
            "cwd": self.project.path(),
            "hook_event_name": "Stop",
            "stop_hook_active": true,
            "last_assistant_message": text,
        });
        let mut child = self
            .command(&["hook", "stop"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run the hook");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn json(&self, args: &[&str]) -> Value {
        let run = self.run(args);
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}\n{}", run.stdout))
    }

    /// Output with the debate id, commit ids and temporary paths replaced by the shared
    /// placeholders; the clock is pinned, so dates and times stay.
    fn redact(&self, text: &str) -> String {
        Filters::of(&self.project).keep_clock().redact(text)
    }

    fn git(&self, args: &[&str]) -> String {
        self.project.git(args)
    }

    fn tip(&self, line: &str) -> String {
        self.git(&["rev-parse", &format!("refs/anvil/{}/{line}", self.debate)])
            .trim()
            .to_owned()
    }
}

#[test]
fn log_draws_both_lines_as_git_does() {
    let f = Fixture::new();
    let log = f.run(&["log"]).stdout;
    assert!(!log.contains('\x1b'), "no colour in a pipe:\n{log}");
    insta::assert_snapshot!("log_two_lines", f.redact(&log));

    // Plain git agrees: the same commits, in the same order, in the same columns.
    let git = f.git(&["log", "--all", "--graph", "--format=%h"]);
    let shape = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(['*', '|', '/', ' ']))
            .map(|l| {
                let graph: String = l.chars().take_while(|c| "*|/\\ ".contains(*c)).collect();
                let id: String = l[graph.len()..].chars().take(7).collect();
                format!("{} {id}", graph.trim_end())
            })
            .collect()
    };
    assert_eq!(shape(&log), shape(&git), "anvil:\n{log}\ngit:\n{git}");
}

#[test]
fn log_json_names_lines_forks_and_steering() {
    let f = Fixture::new();
    let json = f.json(&["log", "--json"]);
    insta::assert_snapshot!(
        "log_json",
        f.redact(&serde_json::to_string_pretty(&json).unwrap())
    );
    let debate = &json["debates"][0];
    assert_eq!(debate["debate"], f.debate.as_str());
    let lines = debate["lines"].as_array().unwrap();
    let names: Vec<&str> = lines.iter().map(|l| l["line"].as_str().unwrap()).collect();
    assert_eq!(names, ["main", "cost"]);
    assert_eq!(lines[1]["steering"], json!(["focus on migration cost"]));
    let round2 = f.run(&["show", "main:round-2", "--json"]).stdout;
    let round2: Value = serde_json::from_str(&round2).unwrap();
    assert_eq!(lines[1]["fork"], round2["commit"]);
    assert_eq!(lines[1]["branched_from"], "main:round-2");
    // 1 start + 6 phases + synthesis on main, then branch + 2 phases + synthesis on cost.
    assert_eq!(debate["commits"].as_array().unwrap().len(), 12);
}

#[test]
fn show_renders_a_phase_its_prompt_and_json() {
    let f = Fixture::new();
    let show = f.run(&["show", "main:round-1"]).stdout;
    insta::assert_snapshot!("show_round_1", f.redact(&show));
    let prompt = f.run(&["show", "main:round-2/advocate", "--prompt"]).stdout;
    insta::assert_snapshot!("show_round_2_prompt", f.redact(&prompt));
    let json = f.json(&["show", "cost:synthesis", "--json"]);
    insta::assert_snapshot!(
        "show_json",
        f.redact(&serde_json::to_string_pretty(&json).unwrap())
    );
    assert_eq!(json["phase"], "synthesizer");
    assert_eq!(json["line"], "cost");
    assert_eq!(
        json["response"],
        "Conclusion: do not migrate; the cost is too high."
    );
    // Every way of naming the same commit agrees.
    let id = json["commit"].as_str().unwrap().to_owned();
    for name in [
        format!("{}@cost:synthesis", f.debate),
        format!("{}@cost", &f.debate[..12]),
        "cost".to_owned(),
        id[..8].to_owned(),
    ] {
        let other = f.json(&["show", &name, "--json"]);
        assert_eq!(other["commit"], id.as_str(), "{name}");
    }
    let back = f.json(&["show", "cost~1", "--json"]);
    assert_eq!(back["phase"], "critic");
}

#[test]
fn a_bad_revision_lists_what_exists() {
    let f = Fixture::new();
    let err = f.fail(&["show", "main:round-9"]).stderr;
    insta::assert_snapshot!("no_round_9", f.redact(&err));
    let err = f.fail(&["show", "nosuchline:round-1"]).stderr;
    insta::assert_snapshot!("no_such_line", f.redact(&err));
    let err = f
        .fail(&["branch", "--from", "round-7", "--steer", "x"])
        .stderr;
    insta::assert_snapshot!("branch_from_no_round_7", f.redact(&err));
}

#[test]
fn diff_between_rounds_pairs_advocate_with_advocate() {
    let f = Fixture::new();
    let diff = f.run(&["diff", "main:round-1", "main:round-2"]).stdout;
    assert!(!diff.contains('\x1b'), "{diff}");
    insta::assert_snapshot!("diff_rounds", f.redact(&diff));
    let stat = f
        .run(&["diff", "main:round-1", "main:round-2", "--stat"])
        .stdout;
    insta::assert_snapshot!("diff_rounds_stat", stat);
    let word = f.run(&[
        "diff",
        "main:round-1/critic",
        "main:round-2/critic",
        "--word",
    ]);
    insta::assert_snapshot!("diff_critics_word", f.redact(&word.stdout));
}

#[test]
fn diff_colour_only_when_forced_and_never_with_no_color() {
    let f = Fixture::new();
    let args = ["diff", "main:synthesis", "cost:synthesis"];
    let coloured = f
        .command(&args)
        .env("CLICOLOR_FORCE", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&coloured.stdout).contains("\x1b[32m+"));
    let plain = f
        .command(&args)
        .env("CLICOLOR_FORCE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains('\x1b'));
}

#[test]
fn diff_between_lines_shows_what_the_steering_changed() {
    let f = Fixture::new();
    let json = f.json(&["diff", "main:synthesis", "cost:synthesis", "--json"]);
    let files = json["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["name"], "synthesizer");
    assert!(files[0]["insertions"].as_u64().unwrap() > 0);
    let unified = files[0]["unified"].as_str().unwrap();
    assert!(
        unified.contains("-Conclusion: migrate gradually"),
        "{unified}"
    );
    assert!(unified.contains("+Conclusion: do not migrate"), "{unified}");
    // Same round on both lines: round 2 is shared, round 3 differs.
    let same = f.json(&["diff", "main:round-2", "cost:round-2", "--json"]);
    for file in same["files"].as_array().unwrap() {
        assert_eq!(file["insertions"], 0, "{file}");
    }
    let differ = f.json(&["diff", "main:round-3", "cost:round-3", "--json"]);
    assert_eq!(differ["files"].as_array().unwrap().len(), 2);
}

#[test]
fn branch_starts_the_next_round_with_the_steering_and_leaves_the_old_line() {
    let f = Fixture::new();
    let main_before = f.tip("main");
    let run = f.run(&[
        "branch",
        "--from",
        "main:round-1",
        "--steer",
        "think about hiring",
        "--prompt",
    ]);
    assert_eq!(f.tip("main"), main_before, "the old line is untouched");
    // With --prompt, the prompt goes to stdout, in full (the debate so far up to round 1,
    // nothing of round 2 on main) and with the steering.
    insta::assert_snapshot!("branch_prompt", f.redact(&run.stdout));
    let line = "think-about-hiring";
    let branch = f.tip(line);
    let parent = f.git(&["rev-parse", &format!("{branch}^")]);
    let round1 = f.json(&["show", "main:round-1", "--json"]);
    assert_eq!(parent.trim(), round1["commit"]);
    let state = f
        .project
        .read(f.project.line_dir(&f.debate, line).join("state.md"));
    insta::assert_snapshot!("branch_state_md", f.redact(&state));
    // Nobody holds it yet: the next session that stops claims it.
    let pending = f.project.anvil_home().join("pending");
    assert!(
        std::fs::read_dir(pending).unwrap().count() >= 1,
        "the branch waits for a session"
    );
    // The recorded prompt of the next phase carries the steering.
    let files = f.git(&["ls-tree", "-r", "--name-only", &branch]);
    assert!(files.contains("003-advocate.prompt.md"), "{files}");
    let prompt = f.git(&["show", &format!("{branch}:003-advocate.prompt.md")]);
    assert!(prompt.contains("think about hiring"), "{prompt}");
    // The new line can be named the same way twice? No: a second branch of that name fails.
    let err = f
        .fail(&[
            "branch", "--from", "round-1", "--steer", "x", "--name", line,
        ])
        .stderr;
    insta::assert_snapshot!("branch_name_taken", f.redact(&err));
    f.project.assert_fsck_clean();
}

#[test]
fn resume_restores_live_files_from_the_record_and_binds_a_session() {
    let f = Fixture::new();
    let line = "hiring";
    f.run(&[
        "branch", "--from", "round-1", "--steer", "hiring", "--name", line,
    ]);
    // A session started after the branch was made takes it (S1, at work before, never would).
    let s4 = "44444444-2222-4333-8444-555555555555";
    assert!(f.hook(S1, "(not for me)").stdout.trim().is_empty());
    let input = json!({
        "session_id": s4, "cwd": f.project.path(),
        "hook_event_name": "SessionStart", "source": "startup",
    });
    f.project
        .anvil_stdin(&["hook", "session-start"], input.to_string().as_bytes())
        .ok();
    f.hook(s4, "(claiming the branch)");
    f.hook(s4, "Hiring advocate: Rust developers want to join.");
    // Everything on disk is lost; the record remains.
    let dir = f.project.line_dir(&f.debate, line);
    std::fs::remove_dir_all(&dir).unwrap();
    let s3 = "33333333-2222-4333-8444-555555555555";
    let run = f.run(&["resume", &format!("{}@{line}", f.debate), "--session", s3]);
    // The full prompt: the whole transcript, since session 3 has seen none of it.
    insta::assert_snapshot!("resume_prompt", f.redact(&run.stdout));
    let transcript = f.project.read(dir.join("transcript.md"));
    insta::assert_snapshot!("resume_transcript_md", f.redact(&transcript));
    let bound = f
        .project
        .read(f.project.anvil_home().join("sessions").join(s3));
    assert_eq!(bound.trim(), format!("{}@{line}", f.debate));
    // The resumed session records the next phase where the line left off.
    f.hook(s3, "Hiring critic: nobody applies.");
    let json = f.json(&["show", &format!("{line}:round-2"), "--json"]);
    assert_eq!(json["phase"], "critic");
    assert_eq!(json["response"], "Hiring critic: nobody applies.");
    // A finished line cannot be resumed.
    let err = f.fail(&["resume", &f.debate]).stderr;
    insta::assert_snapshot!("resume_a_finished_line", f.redact(&err));
}

#[test]
fn replay_plays_a_line_back_in_recorded_order() {
    let f = Fixture::new();
    let replay = f
        .run(&["replay", &format!("{}@cost", f.debate), "--prompts"])
        .stdout;
    let lines: Vec<&str> = replay.lines().collect();
    // A phase's heading is the line above its `LINE · NAME · commit ID · TIME` line.
    let order: Vec<&str> = lines
        .windows(2)
        .filter(|w| w[0].starts_with("## ") && w[1].contains(" · commit "))
        .map(|w| w[0])
        .collect();
    assert_eq!(
        order,
        [
            "## Start",
            "## Prompt for Round 1 · Advocate",
            "## Round 1 · Advocate",
            "## Prompt for Round 1 · Critic",
            "## Round 1 · Critic",
            "## Prompt for Round 2 · Advocate",
            "## Round 2 · Advocate",
            "## Prompt for Round 2 · Critic",
            "## Round 2 · Critic",
            "## Branch",
            "## Prompt for Round 3 · Advocate",
            "## Round 3 · Advocate",
            "## Prompt for Round 3 · Critic",
            "## Round 3 · Critic",
            "## Prompt for Synthesis",
            "## Synthesis",
        ],
        "{replay}"
    );
    // The texts in their order, the steering between round 2 and cost's round 3, and none of
    // main's round 3.
    insta::assert_snapshot!("replay_cost_with_prompts", f.redact(&replay));
}

#[test]
fn report_has_the_branch_tree_and_the_syntheses_side_by_side() {
    let f = Fixture::new();
    let report = f.run(&["report", &format!("{}@cost", f.debate)]).stdout;
    insta::assert_snapshot!("report_cost", f.redact(&report));
    let html = f.project.path().join("report.html");
    f.run(&["report", &f.debate, "-o", html.to_str().unwrap()]);
    let page = f.project.read(&html);
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(
        page.contains("<table>") && page.contains("focus on migration cost"),
        "{page}"
    );
}
