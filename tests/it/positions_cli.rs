//! Positions through the real hook: every debating phase's `<anvil-position>` and
//! `<anvil-open>` recorded as trailers and read back typed; `diff`'s movement line; the
//! shadow note of convergence at the right round and `log --stats`' saving; `--converge`
//! ending early but never over steering or a pause; the consensus score; the open points
//! reaching the synthesizer and the ADR's dissent section (dropped ones not); a tag in a code
//! block ignored and a missing tag tolerated.

use serde_json::{Value, json};

use crate::support::anvil::{Commit, Project};
use crate::support::snap::Filters;

const SESSION: &str = "s-positions";

fn stop(project: &Project, text: &str) -> Value {
    stop_in(project, SESSION, text)
}

/// The Stop hook's answer to `session`'s turn that ended with `text`.
pub(crate) fn stop_in(project: &Project, session: &str, text: &str) -> Value {
    let run = project
        .hook(&json!({
            "session_id": session, "cwd": project.path(), "hook_event_name": "Stop",
            "stop_hook_active": true, "last_assistant_message": text,
        }))
        .ok();
    serde_json::from_str(run.stdout.trim()).unwrap_or(Value::Null)
}

/// What the hook handed on: the next prompt (a block's reason, or additional context).
pub(crate) fn prompt_of(reply: &Value) -> String {
    reply["reason"]
        .as_str()
        .or(reply["hookSpecificOutput"]["additionalContext"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn phase(argument: &str, stance: &str, confidence: &str, open: &[&str]) -> String {
    let mut text = format!(
        "{argument}\n\n<anvil-position stance=\"{stance}\" confidence=\"{confidence}\">{argument}</anvil-position>\n"
    );
    for point in open {
        text.push_str(&format!("<anvil-open>{point}</anvil-open>\n"));
    }
    text
}

fn start(project: &Project, rounds: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "Should billing move to DynamoDB?",
        "--rounds",
        rounds,
        "--session",
        SESSION,
    ];
    args.extend_from_slice(extra);
    project.start(&args).debate
}

pub(crate) fn phases(project: &Project, debate: &str) -> Vec<Commit> {
    project
        .commits(debate)
        .into_iter()
        .filter(|c| !matches!(c.phase(), "start" | "run"))
        .collect()
}

#[test]
fn positions_are_recorded_as_trailers_and_read_back_typed_hostile_claims_included() {
    let project = Project::new();
    let debate = start(&project, "2", &[]);
    let hostile = format!("Costs\nfall \u{1b}[2J% by {}", "x".repeat(30_000));
    stop(
        &project,
        &format!(
            "Advocate.\n\n<anvil-position stance=\"for\" confidence=\"1.7\">{hostile}</anvil-position>\n<anvil-open>Who runs\nthe migration?</anvil-open>"
        ),
    );
    // The critic quotes the tag inside a code block and states none of its own.
    let reply = stop(
        &project,
        "Critic.\n\n```\n<anvil-position stance=\"against\" confidence=\"0.9\">quoted</anvil-position>\n```\n",
    );
    let f = Filters::of(&project);
    // Every debater is asked for a position; the advocate stated one, so no reminder.
    insta::assert_snapshot!("advocate_prompt_round_2", f.redact(&prompt_of(&reply)));
    let reply = stop(&project, &phase("Advocate again.", "for", "0.8", &[]));
    // The critic's next prompt asks for the position it did not state.
    insta::assert_snapshot!(
        "critic_prompt_asks_for_its_position",
        f.redact(&prompt_of(&reply))
    );
    let c = phases(&project, &debate);
    assert_eq!(c[0].trailer("Anvil-Stance"), Some("for"));
    assert_eq!(c[0].trailer("Anvil-Confidence"), Some("1.0"), "clamped");
    let claim = c[0].trailer("Anvil-Claim").unwrap();
    assert!(claim.starts_with("Costs fall [2J%25 by xxx"), "{claim}");
    assert!(claim.chars().count() < 600, "a huge claim is cut");
    assert_eq!(
        c[0].trailers_named("Anvil-Open"),
        ["Who runs the migration?"]
    );
    assert_eq!(
        c[1].trailer("Anvil-Stance"),
        None,
        "a tag in a code block is ignored"
    );
    assert_eq!(c[1].phase(), "critic");
    project.assert_fsck_clean();

    // Read back typed: show --json and log --json.
    let show = project
        .anvil(&["show", "--json", &format!("{debate}@main:round-1/advocate")])
        .ok();
    let p = &show.json().unwrap()["positions"];
    assert_eq!(p["position"]["stance"], "for");
    assert_eq!(p["position"]["confidence"], 1.0);
    assert!(
        p["position"]["claim"]
            .as_str()
            .unwrap()
            .starts_with("Costs fall")
    );
    assert_eq!(p["open"], json!(["Who runs the migration?"]));
    let log = project.anvil(&["log", "--json", &debate]).ok();
    let commits = log.json().unwrap()["debates"][0]["commits"].clone();
    let stances: Vec<Value> = commits
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["positions"]["position"]["stance"].clone())
        .collect();
    assert!(stances.contains(&json!("for")), "{commits}");
    let text = project.anvil(&["log", &debate]).ok().stdout;
    insta::assert_snapshot!("log_with_positions", f.redact(&text));
}

/// Round 1: for 0.8 / against 0.7; round 2: for 0.8 / mixed 0.6 (the critic moves); round 3:
/// for 0.75 / mixed 0.55 (steady: would have stopped); round 4; the synthesis.
fn four_rounds(project: &Project, extra: &[&str]) -> String {
    let debate = start(project, "4", extra);
    for (a, c) in [
        (("for", "0.8"), ("against", "0.7")),
        (("for", "0.8"), ("mixed", "0.6")),
        (("for", "0.75"), ("mixed", "0.55")),
        (("for", "0.75"), ("mixed", "0.5")),
    ] {
        stop(project, &phase("Advocate.", a.0, a.1, &[]));
        stop(project, &phase("Critic.", c.0, c.1, &[]));
    }
    stop(project, "Synthesis: keep Postgres.");
    debate
}

#[test]
fn diff_opens_with_movement_and_the_shadow_note_falls_at_the_right_round() {
    let project = Project::new();
    let debate = four_rounds(&project, &[]);
    let diff = project
        .anvil(&[
            "diff",
            &format!("{debate}@main:round-1"),
            &format!("{debate}@main:round-2"),
        ])
        .ok()
        .stdout;
    let first: Vec<&str> = diff.lines().take(2).collect();
    assert_eq!(
        first,
        [
            "advocate: for 0.8 → for 0.8",
            "critic: against 0.7 → mixed 0.6 (changed stance)"
        ],
        "{diff}"
    );
    let f = Filters::of(&project);
    insta::assert_snapshot!("diff_with_movement", f.redact(&diff));
    let c = phases(&project, &debate);
    let noted: Vec<(&str, &str)> = c
        .iter()
        .filter_map(|c| c.trailer("Anvil-Converged").map(|r| (c.phase(), r)))
        .collect();
    assert_eq!(
        noted,
        [("critic", "3")],
        "noted once, on the phase that closed round 3"
    );
    let synthesis = c.last().unwrap();
    assert_eq!(synthesis.phase(), "synthesizer");
    assert_eq!(synthesis.trailer("Anvil-Saving"), Some("round=3 phases=2"));
    // for 0.75 against mixed 0.5: one pair 0.75 apart on an axis 2 long → 1 − 0.375, in
    // hundredths rounded half up: 0.62.
    assert_eq!(synthesis.trailer("Anvil-Consensus"), Some("0.62"));
    let stats = project.anvil(&["log", "--stats", &debate]).ok().stdout;
    insta::assert_snapshot!("log_stats_with_saving", f.redact(&stats));
    let show = project
        .anvil(&["show", &format!("{debate}@main:synthesis")])
        .ok()
        .stdout;
    insta::assert_snapshot!("show_synthesis_with_consensus", f.redact(&show));

    // Deterministic: the same positions in another debate give the same score.
    let again = four_rounds(&project, &[]);
    let last = phases(&project, &again).pop().unwrap();
    assert_eq!(last.trailer("Anvil-Consensus"), Some("0.62"));
}

/// Two rounds whose positions held: positions stopped moving after round 2, the last one, so
/// stopping there would have saved nothing, and no reader says it would have stopped (the
/// four-round debate above still does): not `log --stats`, `show`, the report, its chart, nor
/// the web room.
#[test]
fn a_debate_steady_only_in_its_last_round_says_nothing_of_stopping() {
    let project = Project::new();
    let debate = start(&project, "2", &[]);
    for _ in 0..2 {
        stop(&project, &phase("Advocate.", "for", "0.8", &[]));
        stop(&project, &phase("Critic.", "against", "0.7", &[]));
    }
    stop(&project, "Synthesis: keep Postgres.");
    let c = phases(&project, &debate);
    // The record keeps the fact; the synthesis records no saving.
    assert_eq!(c[3].trailer("Anvil-Converged"), Some("2"));
    assert_eq!(c.last().unwrap().trailer("Anvil-Saving"), None);

    let report = project.path().join("report.html");
    project
        .anvil(&["report", &debate, "-o", report.to_str().unwrap()])
        .ok();
    let served = crate::support::serve::Served::start(&project);
    let page = served.get(&format!("/debates/{debate}"));
    assert!(page.body.contains("anvil-chart"), "{}", page.body);
    let said = [
        (
            "log --stats",
            project.anvil(&["log", "--stats", &debate]).ok().stdout,
        ),
        (
            "show",
            project
                .anvil(&["show", &format!("{debate}@main:round-2")])
                .ok()
                .stdout,
        ),
        ("report", project.anvil(&["report", &debate]).ok().stdout),
        ("report.html", std::fs::read_to_string(&report).unwrap()),
        ("the web room", page.body),
    ];
    for (reader, text) in said {
        assert!(
            !text.contains("would have stopped")
                && !text.contains("positions steady")
                && !text.contains("converged"),
            "{reader} says it would have stopped:\n{text}"
        );
    }
}

#[test]
fn converge_ends_early_but_never_over_steering_or_a_pause() {
    let steady = |project: &Project| {
        stop(project, &phase("Advocate.", "for", "0.8", &[]));
        stop(project, &phase("Critic.", "against", "0.7", &[]));
        stop(project, &phase("Advocate.", "for", "0.8", &[]));
    };
    // Acted on: the phase that closes round 2 hands out the synthesis.
    let project = Project::new();
    let debate = start(&project, "4", &["--converge"]);
    steady(&project);
    let reply = stop(&project, &phase("Critic.", "against", "0.65", &[]));
    assert!(prompt_of(&reply).contains("Synthesizer"), "{reply}");
    let c = phases(&project, &debate);
    let last = c.last().unwrap();
    assert_eq!(last.trailer("Anvil-Converged"), Some("2"));
    assert_eq!(last.trailer("Anvil-Converge-Stop"), Some("yes"));
    assert_eq!(last.trailer("Anvil-Next"), Some("synthesizer"));
    // The synthesis belongs to round 2, the last one debated (regression: it was recorded
    // as round 3, a round that never took place).
    stop(&project, "Synthesis: keep Postgres.");
    let synthesis = phases(&project, &debate).pop().unwrap();
    assert_eq!((synthesis.phase(), synthesis.round()), ("synthesizer", "2"));

    // Steering on its way: the debate goes on to round 3.
    let project = Project::new();
    let debate = start(&project, "4", &["--converge"]);
    steady(&project);
    project
        .anvil(&["steer", "--line", &debate, "look at the cost of reads"])
        .ok();
    let reply = stop(&project, &phase("Critic.", "against", "0.7", &[]));
    let f = Filters::of(&project);
    insta::assert_snapshot!("converge_held_by_steering", f.redact(&prompt_of(&reply)));
    let last = phases(&project, &debate).pop().unwrap();
    assert_eq!(last.trailer("Anvil-Converged"), Some("2"));
    assert_eq!(last.trailer("Anvil-Converge-Stop"), None);
    assert!(
        last.trailer("Anvil-Converge-Held")
            .unwrap()
            .contains("steering")
    );

    // An interactive pause comes next: the human decides, and is told positions are steady.
    let project = Project::new();
    let debate = start(&project, "4", &["--converge", "--interactive"]);
    stop(&project, &phase("Advocate.", "for", "0.8", &[]));
    stop(&project, &phase("Critic.", "against", "0.7", &[]));
    stop(
        &project,
        "Pause.\n<anvil-steering>continue</anvil-steering>",
    );
    stop(&project, &phase("Advocate.", "for", "0.8", &[]));
    let reply = stop(&project, &phase("Critic.", "against", "0.7", &[]));
    let f = Filters::of(&project);
    insta::assert_snapshot!("converge_held_by_a_pause", f.redact(&prompt_of(&reply)));
    let last = phases(&project, &debate).pop().unwrap();
    assert!(
        last.trailer("Anvil-Converge-Held")
            .unwrap()
            .contains("pause")
    );
}

#[test]
fn open_points_reach_the_synthesizer_and_the_adr_and_dropped_ones_do_not() {
    let project = Project::new();
    let debate = start(&project, "2", &[]);
    stop(
        &project,
        &phase("Advocate.", "for", "0.8", &["Who pays for the replicas?"]),
    );
    stop(
        &project,
        &phase(
            "Critic.",
            "against",
            "0.7",
            &["No rollback plan", "Latency budget unknown"],
        ),
    );
    // The advocate drops its point (answered); the critic keeps one of two.
    stop(&project, &phase("Advocate.", "for", "0.7", &[]));
    let reply = stop(
        &project,
        &phase("Critic.", "against", "0.6", &["No rollback plan"]),
    );
    // The point still open, the movement; nothing of the dropped points.
    let f = Filters::of(&project);
    insta::assert_snapshot!(
        "synthesis_prompt_with_open_points",
        f.redact(&prompt_of(&reply))
    );
    let reply = stop(&project, "Synthesis: keep Postgres; nothing else to say.");
    let notice = reply["systemMessage"].as_str().unwrap_or_default();
    insta::assert_snapshot!("notice_synthesis_misses_an_open_point", f.redact(notice));
    let last = phases(&project, &debate).pop().unwrap();
    assert_eq!(
        last.trailers_named("Anvil-Dissent"),
        ["critic%09No rollback plan"]
    );
    assert_eq!(
        last.trailers_named("Anvil-Dissent-Missing"),
        ["critic%09No rollback plan"]
    );

    // Who decides is the git user: one named here, whoever runs the test.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        "[user]\n\tname = Ada Lovelace\n",
    )
    .unwrap();
    let adr = project
        .command(&["adr", &debate])
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let rel = crate::support::anvil::Run::from_output(adr)
        .ok()
        .stdout
        .trim()
        .to_owned();
    let adr = project.read(&rel);
    // The dissent section holds the open point alone; the consensus score is given.
    insta::assert_snapshot!("adr_with_dissent", f.redact(&adr));
}

/// The debate page in a real browser (Debian's chromium, headless): the chart is an SVG with
/// one series per seat, labelled, and the screenshot is kept in
/// target/screenshots/positions-debate.png for a person to look at.
#[test]
fn the_debate_page_draws_the_chart_in_a_real_browser() {
    let project = Project::new();
    let debate = four_rounds(&project, &[]);
    let served = crate::support::serve::Served::start(&project);
    let page = format!("{}/debates/{debate}?token={}", served.base(), served.token);
    let shots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let browse = |extra: &[&str]| crate::serve_browser::headless(&page, extra);
    let dom = browse(&["--dump-dom"]);
    let svg = dom
        .split("<svg")
        .find(|s| s.contains("anvil-chart"))
        .unwrap_or_else(|| panic!("no chart on the page: {dom}"));
    assert!(svg.contains("data-series=\"2\""), "{svg}");
    assert_eq!(svg.matches("class=\"series\"").count(), 2, "{svg}");
    assert!(svg.contains("data-seat=\"advocate\"") && svg.contains("data-seat=\"critic\""));
    assert!(
        svg.contains("role=\"img\"") && svg.contains("<title"),
        "labelled: {svg}"
    );
    assert!(svg.contains("would have stopped after round 3"), "{svg}");
    // Each phase shows its position in words, not as the tag the debater wrote.
    assert!(
        dom.contains("<strong>Position:</strong> against 0.7: Critic."),
        "{dom}"
    );
    assert!(!dom.contains("&lt;anvil-position"), "{dom}");
    let shot = shots.join("positions-debate.png");
    let _ = std::fs::remove_file(&shot);
    browse(&[
        "--window-size=1100,1500",
        &format!("--screenshot={}", shot.display()),
    ]);
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
}
