//! End to end with the real Claude Code CLI (`claude -p`) against the scripted model server:
//! a finished debate is branched from round 2 with new steering and the new line is played to
//! its synthesis; a debate whose Claude process is killed mid-phase is finished with
//! `anvil resume` in a fresh session. The record is read back with plain `git`.

use std::time::{Duration, Instant};

use crate::support::anvil::{Commit, Project, Started, phase_text, turn_tag};
use crate::support::claude::{Claude, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::snap::Filters;

/// The model: answers each anvil phase with its scripted text, anything else with a greeting.
fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello there"),
    }
}

fn tip(project: &Project, debate: &str, line: &str) -> String {
    project
        .git(&["rev-parse", &format!("refs/anvil/{debate}/{line}")])
        .trim()
        .to_owned()
}

fn state_of(project: &Project, debate: &str, line: &str) -> String {
    project.read(project.line_dir(debate, line).join("state.md"))
}

/// `(phase, round)` of each commit.
fn phases(commits: &[Commit]) -> Vec<(String, String)> {
    commits
        .iter()
        .map(|c| (c.phase().to_owned(), c.round().to_owned()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, r)| (p.to_string(), r.to_string()))
        .collect()
}

/// The main-turn tag keys of `session`, in order (`-` for a turn without an anvil tag).
fn keys_of(server: &ModelServer, session: &str) -> Vec<String> {
    server
        .main_turns()
        .iter()
        .filter(|t| t.session_id.as_deref() == Some(session))
        .map(|t| turn_tag(t).map(|t| t.key()).unwrap_or_else(|| "-".into()))
        .collect()
}

/// The text of a phase of `line` (`DEBATE@LINE`) as the scripted model wrote it.
/// Runs `prompt` in Claude session `session` until the line `line` reaches its synthesis:
/// Claude exits cleanly, its last answer is that synthesis, and the model script never failed.
/// Returns the synthesis text.
fn run_to_synthesis(
    server: &ModelServer,
    project: &Project,
    prompt: &str,
    session: &str,
    line: &str,
) -> String {
    let out = Claude::new(server, project.path(), prompt)
        .session_id(session)
        .timeout(Duration::from_secs(90))
        .run();
    out.assert_success();
    let synthesis = text_of(line, "Synthesizer", None);
    assert_eq!(
        out.result_text(),
        Some(synthesis.as_str()),
        "{}",
        out.describe()
    );
    assert!(
        server.script_panics().is_empty(),
        "{:?}",
        server.script_panics()
    );
    synthesis
}

fn text_of(line: &str, role: &str, round: Option<u32>) -> String {
    phase_text(&crate::support::anvil::Tag {
        line: line.to_owned(),
        round,
        rounds: None,
        role: role.to_owned(),
        voice: None,
    })
}

#[test]
fn a_branch_from_round_2_with_steering_runs_to_its_own_synthesis_and_leaves_main_untouched() {
    let project = Project::installed();
    let started: Started = project.start(&["Should we rewrite billing in Rust?", "--rounds", "3"]);
    let debate = started.debate.clone();
    let server = ModelServer::start(debater);

    // The main line, to its synthesis.
    let s1 = new_session_id();
    run_to_synthesis(&server, &project, &started.prompt, &s1, &started.line);
    assert!(state_of(&project, &debate, "main").contains("status: done"));
    let main_tip = tip(&project, &debate, "main");
    let main_log = project.git(&["log", "--format=%H %s", &main_tip]);
    let main_commits = project.line_commits(&debate, "main");
    let round2 = main_commits
        .iter()
        .rfind(|c| c.round() == "2")
        .expect("main has a round 2");
    assert_eq!(round2.phase(), "critic", "{main_commits:#?}");
    let round2 = round2.id.clone();

    // Branch from the end of round 2; with --prompt, stdout is the prompt for the new session.
    let s2 = new_session_id();
    let branch = project
        .anvil(&[
            "branch",
            "--from",
            "round-2",
            "--steer",
            "focus on migration cost",
            "--name",
            "cost",
            "--session",
            &s2,
            "--prompt",
        ])
        .ok();
    let cost_line = format!("{debate}@cost");
    assert!(
        branch
            .stdout
            .contains(&format!("[anvil {cost_line} · round 3 of 3 · Advocate")),
        "{}",
        branch.describe()
    );
    // Branching wrote nothing to main.
    assert_eq!(tip(&project, &debate, "main"), main_tip);

    let cost_synthesis = run_to_synthesis(&server, &project, &branch.stdout, &s2, &cost_line);

    // The new session played round 3 and the synthesis of `cost`, each once, and nothing else.
    assert_eq!(
        keys_of(&server, &s2),
        ["ADVOCATE r3", "CRITIC r3", "SYNTHESIS"]
    );
    let cost_turns: Vec<Turn> = server
        .main_turns()
        .into_iter()
        .filter(|t| t.session_id.as_deref() == Some(s2.as_str()))
        .collect();
    assert!(
        cost_turns
            .iter()
            .all(|t| turn_tag(t).is_some_and(|tag| tag.line == cost_line)),
        "the cost session was handed another line"
    );
    // The steering reached the model with round 3's first phase, together with the debate so
    // far up to round 2 of main (and nothing of main's round 3).
    let first = cost_turns[0].latest_user_text_raw();
    assert!(first.contains("focus on migration cost"), "{first}");
    assert!(
        first.contains(&text_of(&started.line, "Critic", Some(2))),
        "{first}"
    );
    assert!(
        !first.contains(&text_of(&started.line, "Advocate", Some(3))),
        "{first}"
    );
    // The main session never saw the steering.
    for turn in server
        .main_turns()
        .iter()
        .filter(|t| t.session_id.as_deref() == Some(s1.as_str()))
    {
        assert!(
            !turn
                .latest_user_text_raw()
                .contains("focus on migration cost"),
            "{}",
            turn.latest_user_text_raw()
        );
    }

    // The old line is untouched: same tip, same history.
    assert_eq!(tip(&project, &debate, "main"), main_tip);
    assert_eq!(project.git(&["log", "--format=%H %s", &main_tip]), main_log);
    assert!(state_of(&project, &debate, "main").contains("status: done"));

    // The new line: a branch commit on main's round-2 commit, then its own phases.
    let cost = project.line_commits(&debate, "cost");
    let own: Vec<&Commit> = cost.iter().skip_while(|c| c.id != round2).collect();
    assert_eq!(own.len(), 5, "{cost:#?}");
    let own_phases: Vec<(String, String)> = own[1..]
        .iter()
        .map(|c| (c.phase().to_owned(), c.round().to_owned()))
        .collect();
    assert_eq!(
        own_phases,
        pairs(&[
            ("branch", "2"),
            ("advocate", "3"),
            ("critic", "3"),
            ("synthesizer", "3"),
        ])
    );
    assert_eq!(own[1].parents, [round2.as_str()], "{cost:#?}");
    for c in &own[2..] {
        assert_eq!(c.trailer("Anvil-Session"), Some(s2.as_str()), "{c:#?}");
    }
    let state = state_of(&project, &debate, "cost");
    assert!(state.contains("status: done"), "{state}");
    assert!(state.contains("branched_from: main@"), "{state}");
    // Its tree holds main's phases up to round 2, then its own (numbered on from there).
    let files = project.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        &format!("refs/anvil/{debate}/cost"),
    ]);
    let responses: Vec<&str> = files
        .lines()
        .filter(|f| f.ends_with(".response.md"))
        .collect();
    assert_eq!(
        responses,
        [
            "001-advocate.response.md",
            "002-critic.response.md",
            "003-advocate.response.md",
            "004-critic.response.md",
            "005-advocate.response.md",
            "006-critic.response.md",
            "007-synthesizer.response.md",
        ],
        "{files}"
    );
    let show = |path: &str| project.git(&["show", &format!("refs/anvil/{debate}/cost:{path}")]);
    assert_eq!(
        show("004-critic.response.md"),
        text_of(&started.line, "Critic", Some(2))
    );
    assert_eq!(
        show("005-advocate.response.md"),
        text_of(&cost_line, "Advocate", Some(3))
    );
    assert!(show("005-advocate.prompt.md").contains("focus on migration cost"));
    assert_eq!(show("007-synthesizer.response.md"), cost_synthesis);

    // The two syntheses differ, and `anvil diff` says how.
    let diff = project
        .anvil(&[
            "diff",
            &format!("{debate}@main:synthesis"),
            &format!("{debate}@cost:synthesis"),
        ])
        .ok();
    insta::assert_snapshot!(
        "diff_of_the_two_syntheses",
        Filters::of(&project).redact(&diff.stdout)
    );

    project.assert_fsck_clean();
}

#[test]
fn b_a_debate_killed_mid_phase_is_finished_by_resume_in_a_fresh_session() {
    let project = Project::installed();
    // A first debate, finished, so the one killed is not the only one in the record.
    let other = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let server = ModelServer::start(debater);
    let s0 = new_session_id();
    Claude::new(&server, project.path(), &other.prompt)
        .session_id(&s0)
        .run()
        .assert_success();

    let started = project.start(&["Should we split the monolith?", "--rounds", "3"]);
    let debate = started.debate.clone();
    let s1 = new_session_id();
    let s2 = new_session_id();
    let server = {
        let s1 = s1.clone();
        ModelServer::start(move |turn| match turn_tag(turn) {
            // The first session's round-2 critic never answers in time.
            Some(tag)
                if tag.key() == "CRITIC r2" && turn.session_id.as_deref() == Some(s1.as_str()) =>
            {
                Reply::text(phase_text(&tag)).delayed(Duration::from_secs(60))
            }
            Some(tag) => Reply::text(phase_text(&tag)),
            None => Reply::text("hello there"),
        })
    };
    let running = Claude::new(&server, project.path(), &started.prompt)
        .session_id(&s1)
        .timeout(Duration::from_secs(90))
        .spawn();

    // Wait until the critic of round 2 is out: the model has its request, the state says so.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !keys_of(&server, &s1).contains(&"CRITIC r2".to_owned()) {
        assert!(
            Instant::now() < deadline,
            "round 2's critic never reached the model: {:?}",
            keys_of(&server, &s1)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let state = state_of(&project, &debate, "main");
    assert!(state.contains("phase: critic"), "{state}");
    assert!(state.contains("round: 2"), "{state}");
    let killed = running.kill();
    assert!(!killed.success(), "{}", killed.describe());
    let before = project.line_commits(&debate, "main");
    assert_eq!(
        phases(&before),
        pairs(&[
            ("start", "0"),
            ("advocate", "1"),
            ("critic", "1"),
            ("advocate", "2"),
        ])
    );

    // Resume in a fresh session: the full prompt, with the debate so far.
    let resume = project.anvil(&["resume", &debate, "--session", &s2]).ok();
    // The critic's phase of round 2, with the question and the debate so far: every phase
    // recorded before the kill.
    insta::assert_snapshot!(
        "resume_prompt_after_a_kill",
        Filters::of(&project).redact(&resume.stdout)
    );
    // The line is the fresh session's now; the killed one holds nothing.
    let sessions = project.anvil_home().join("sessions");
    assert!(
        !sessions.join(&s1).exists(),
        "the killed session still holds the line"
    );
    assert_eq!(project.read(sessions.join(&s2)).trim(), started.line);

    run_to_synthesis(&server, &project, &resume.stdout, &s2, &started.line);
    assert_eq!(
        keys_of(&server, &s2),
        ["CRITIC r2", "ADVOCATE r3", "CRITIC r3", "SYNTHESIS"]
    );

    // Done, with every phase recorded exactly once and in order.
    let state = state_of(&project, &debate, "main");
    assert!(state.contains("status: done"), "{state}");
    let commits = project.line_commits(&debate, "main");
    assert_eq!(
        phases(&commits),
        pairs(&[
            ("start", "0"),
            ("advocate", "1"),
            ("critic", "1"),
            ("advocate", "2"),
            ("critic", "2"),
            ("advocate", "3"),
            ("critic", "3"),
            ("synthesizer", "3"),
        ])
    );
    // The commits made before the kill are kept as they were.
    for (a, b) in before.iter().zip(&commits) {
        assert_eq!(a.id, b.id);
    }
    // Who played what: the killed session up to the kill, the fresh one after it.
    let players: Vec<Option<&str>> = commits[1..]
        .iter()
        .map(|c| c.trailer("Anvil-Session"))
        .collect();
    assert_eq!(
        players,
        [
            Some(s1.as_str()),
            Some(s1.as_str()),
            Some(s1.as_str()),
            Some(s2.as_str()),
            Some(s2.as_str()),
            Some(s2.as_str()),
            Some(s2.as_str()),
        ]
    );
    // Each response is stored as the model wrote it.
    let expected = [
        ("Advocate", Some(1)),
        ("Critic", Some(1)),
        ("Advocate", Some(2)),
        ("Critic", Some(2)),
        ("Advocate", Some(3)),
        ("Critic", Some(3)),
        ("Synthesizer", None),
    ];
    for (i, (commit, (role, round))) in commits[1..].iter().zip(expected).enumerate() {
        let path = format!("{:03}-{}.response.md", i + 1, commit.phase());
        let stored = project.git(&["show", &format!("{}:{path}", commit.id)]);
        assert_eq!(stored, text_of(&started.line, role, round), "{path}");
    }
    assert!(
        !sessions.join(&s2).exists(),
        "the session is released at the end"
    );
    // The other debate was left alone.
    assert!(state_of(&project, &other.debate, "main").contains("status: done"));
    project.assert_fsck_clean();
}
