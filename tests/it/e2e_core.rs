//! End to end with the real Claude Code CLI (`claude -p`) against the scripted model server:
//! `anvil install` writes the hook, the Stop hook drives every phase, and the record is read
//! back with plain `git`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::both_clients;
use crate::support::anvil::{Project, Started, Tag, anvil_bin, phase_text, turn_tag};
use crate::support::claude::{Claude, ClaudeOutput, Client, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

/// The model: answers each anvil phase with its scripted text, anything else with a greeting.
fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello there"),
    }
}

/// The phase keys of the prompts the model received, in order (one per main turn).
fn received(turns: &[Turn]) -> Vec<String> {
    turns
        .iter()
        .map(|t| turn_tag(t).map(|t| t.key()).unwrap_or_else(|| "-".into()))
        .collect()
}

fn keys(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The phases of an advocate/critic debate, in order, as tag keys.
fn pair_keys(rounds: u32, interactive: bool) -> Vec<String> {
    let mut out = Vec::new();
    for r in 1..=rounds {
        out.push(format!("ADVOCATE r{r}"));
        out.push(format!("CRITIC r{r}"));
        if interactive && r < rounds {
            out.push(format!("PAUSE r{r}"));
        }
    }
    out.push("SYNTHESIS".into());
    out
}

/// Record phase names, as `Anvil-Phase` trailers, for a list of tag keys.
fn phase_names(keys: &[String]) -> Vec<String> {
    let mut out = vec!["start".to_owned()];
    out.extend(keys.iter().map(|k| {
        let role = k.split([' ', ':']).next().unwrap_or_default();
        match role {
            "PAUSE" => "interactive-pause".to_owned(),
            "SYNTHESIS" => "synthesizer".to_owned(),
            other => other.to_lowercase(),
        }
    }));
    out
}

fn tag_of(line: &str, key: &str) -> Tag {
    let (role, round) = match key.rsplit_once(" r") {
        Some((role, r)) => (role, r.parse().ok()),
        None => (key, None),
    };
    let (role, voice) = match role.split_once(':') {
        Some((r, v)) => (r, Some(v.to_owned())),
        None => (role, None),
    };
    let role = match role {
        "PAUSE" => "Interactive pause".to_owned(),
        "SYNTHESIS" => "Synthesizer".to_owned(),
        r => {
            let mut c = r.to_lowercase();
            c[..1].make_ascii_uppercase();
            c
        }
    };
    Tag {
        line: line.to_owned(),
        round,
        rounds: None,
        role,
        voice,
    }
}

/// Checks the record of a finished line against the phases the model was scripted to play:
/// one commit per phase, in order, with trailers, each response stored as written.
fn assert_recorded(
    project: &Project,
    started: &Started,
    keys: &[String],
    session: &str,
    texts: impl Fn(&str) -> String,
) {
    let commits = project.commits(&started.debate);
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(phases, phase_names(keys), "{commits:#?}");
    for (i, commit) in commits.iter().enumerate() {
        assert_eq!(
            commit.trailer("Anvil-Debate"),
            Some(started.debate.as_str())
        );
        assert_eq!(commit.trailer("Anvil-Line"), Some("main"));
        assert!(commit.trailer("Anvil-Round").is_some(), "{commit:#?}");
        assert!(commit.trailer("Anvil-Next").is_some(), "{commit:#?}");
        if i == 0 {
            continue;
        }
        assert_eq!(
            commit.trailer("Anvil-Session"),
            Some(session),
            "{commit:#?}"
        );
        let key = &keys[i - 1];
        let path = format!("{i:03}-{}.response.md", phases[i]);
        let stored = project.git(&["show", &format!("{}:{path}", commit.id)]);
        assert_eq!(stored, texts(key), "{path} of {}", commit.id);
    }
    project.assert_fsck_clean();
}

fn default_text(line: &str) -> impl Fn(&str) -> String {
    let line = line.to_owned();
    move |key| phase_text(&tag_of(&line, key))
}

fn report_of(project: &Project, debate: &str) -> PathBuf {
    let reports = project.anvil_home().join("reports");
    std::fs::read_dir(&reports)
        .unwrap_or_else(|e| panic!("no {}: {e}", reports.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains(debate))
        .unwrap_or_else(|| panic!("no report of {debate} in {}", reports.display()))
}

fn assert_done(project: &Project, started: &Started, out: &ClaudeOutput) {
    out.assert_success();
    let synthesis = phase_text(&tag_of(&started.line, "SYNTHESIS"));
    assert_eq!(
        out.result_text(),
        Some(synthesis.as_str()),
        "{}",
        out.describe()
    );
    let state = project.state_md(&started.debate);
    assert!(state.contains("status: done"), "{state}");
    let report = std::fs::read_to_string(report_of(project, &started.debate)).unwrap();
    assert!(report.contains(&synthesis), "{report}");
}

both_clients!(a_three_round_debate_runs_to_synthesis_with_one_commit_per_phase);
fn a_three_round_debate_runs_to_synthesis_with_one_commit_per_phase(client: Client) {
    let project = Project::installed();
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "3"]);
    assert!(started.prompt.contains("Should we adopt GraphQL?"));
    let server = ModelServer::start(debater);

    let session = new_session_id();
    let out = Claude::new(&server, project.path(), &started.prompt)
        .client(client)
        .session_id(&session)
        .run();
    assert_done(&project, &started, &out);

    // Each role's prompt reached the model exactly once, in order.
    let expected = pair_keys(3, false);
    assert_eq!(received(&server.main_turns()), expected);
    assert!(server.script_panics().is_empty());

    // start + 6 debating phases + synthesis, readable with plain git log.
    let commits = project.commits(&started.debate);
    assert_eq!(commits.len(), 8, "{commits:#?}");
    assert_eq!(commits[0].subject, "start: Should we adopt GraphQL?");
    let authors: Vec<&str> = commits.iter().map(|c| c.author.as_str()).collect();
    assert_eq!(
        authors,
        [
            "anvil",
            "Advocate",
            "Critic",
            "Advocate",
            "Critic",
            "Advocate",
            "Critic",
            "Synthesizer"
        ]
    );
    let rounds: Vec<&str> = commits
        .iter()
        .map(|c| c.trailer("Anvil-Round").unwrap())
        .collect();
    assert_eq!(rounds, ["0", "1", "1", "2", "2", "3", "3", "3"]);
    assert_eq!(commits[7].trailer("Anvil-Next"), Some("done"));
    assert_recorded(
        &project,
        &started,
        &expected,
        &session,
        default_text(&started.line),
    );

    // The tree holds the state and two files per phase (the prompt injected, the response).
    let files = project.tree_files(&started.debate);
    assert!(files.contains(&"state.md".to_owned()), "{files:#?}");
    assert!(files.contains(&"002-critic.prompt.md".to_owned()));
    assert!(files.contains(&"007-synthesizer.response.md".to_owned()));

    // The session is released.
    assert!(
        !project
            .anvil_home()
            .join("sessions")
            .join(&session)
            .exists()
    );
}

#[test]
fn b_stakeholders_interactive_is_steered_at_a_pause_and_by_anvil_steer() {
    let project = Project::installed();
    let started = project.start(&[
        "Should we build a platform team?",
        "--stakeholders",
        "--interactive",
    ]);
    let dir = project.path().to_owned();
    let debate = started.debate.clone();
    let server = ModelServer::start(move |turn| {
        let Some(tag) = turn_tag(turn) else {
            return Reply::text("hello there");
        };
        match tag.key().as_str() {
            "PAUSE r1" => Reply::text(format!(
                "PAUSE r1 of {}: engineering wants it, product is unsure.\n\n<anvil-steering>focus on hiring cost</anvil-steering>",
                tag.line
            )),
            k if k.starts_with("STAKEHOLDER:Product/UX") => {
                // Steering queued from a terminal while this phase runs.
                let status = std::process::Command::new(anvil_bin())
                    .args(["steer", "--line", &debate, "consider remote contractors"])
                    .current_dir(&dir)
                    .env_remove("CLAUDE_CODE_SESSION_ID")
                    .status()
                    .expect("run anvil steer");
                assert!(status.success());
                Reply::text(phase_text(&tag))
            }
            _ => Reply::text(phase_text(&tag)),
        }
    });

    let session = new_session_id();
    let out = Claude::new(&server, project.path(), &started.prompt)
        .session_id(&session)
        .run();
    assert_done(&project, &started, &out);
    assert!(
        server.script_panics().is_empty(),
        "{:?}",
        server.script_panics()
    );

    let expected = keys(&[
        "STAKEHOLDER:Engineering Team r1",
        "PAUSE r1",
        "STAKEHOLDER:Product/UX r2",
        "PAUSE r2",
        "STAKEHOLDER:Business/Management r3",
        "SYNTHESIS",
    ]);
    let turns = server.main_turns();
    assert_eq!(received(&turns), expected);

    // The pause's answer steers the next stakeholder.
    let feedback = |i: usize| turns[i].stop_hook_feedback().unwrap_or_default().to_owned();
    assert!(
        feedback(2).contains("focus on hiring cost"),
        "{}",
        feedback(2)
    );
    assert!(
        !feedback(4).contains("focus on hiring cost"),
        "{}",
        feedback(4)
    );
    // The queued steering reaches the very next prompt.
    assert!(
        feedback(3).contains("consider remote contractors"),
        "{}",
        feedback(3)
    );

    let pause_text = format!(
        "PAUSE r1 of {}: engineering wants it, product is unsure.\n\n<anvil-steering>focus on hiring cost</anvil-steering>",
        started.line
    );
    let line = started.line.clone();
    let pause = pause_text.clone();
    assert_recorded(&project, &started, &expected, &session, move |key| {
        if key == "PAUSE r1" {
            pause.clone()
        } else {
            phase_text(&tag_of(&line, key))
        }
    });
    let commits = project.commits(&started.debate);
    assert_eq!(
        commits[2].trailers_named("Anvil-Steering"),
        ["focus on hiring cost"],
        "{:#?}",
        commits[2]
    );
    assert_eq!(commits[3].trailer("Anvil-Voice"), Some("Product/UX"));
    assert!(
        commits[3]
            .trailers_named("Anvil-Steering")
            .contains(&"consider remote contractors"),
        "{:#?}",
        commits[3]
    );

    // The pause's own words are kept in the transcript, with the steering.
    let transcript = project.transcript_md(&started.debate);
    assert!(
        transcript.contains("engineering wants it, product is unsure."),
        "{transcript}"
    );
    assert!(transcript.contains("focus on hiring cost"), "{transcript}");
    // No steering file is left queued.
    let steering = project.line_dir(&started.debate, "main").join("steering");
    assert!(
        std::fs::read_dir(&steering)
            .map(|d| d.count() == 0)
            .unwrap_or(true),
        "steering still queued in {}",
        steering.display()
    );
}

both_clients!(c_five_interactive_rounds_via_the_slash_command_outlast_the_block_cap);
fn c_five_interactive_rounds_via_the_slash_command_outlast_the_block_cap(client: Client) {
    let project = Project::installed();
    // Nothing but what `anvil install` wrote raises the cap.
    let settings = project.read(".claude/settings.json");
    assert!(
        settings.contains("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"),
        "{settings}"
    );

    let server = ModelServer::start(debater);
    let session = new_session_id();
    let out = Claude::new(
        &server,
        project.path(),
        "/anvil \"Should we split the monolith?\" --rounds 5 --interactive",
    )
    .client(client)
    .session_id(&session)
    .timeout(Duration::from_secs(120))
    .run();
    out.assert_success();

    let turns = server.main_turns();
    let first = turn_tag(&turns[0]).unwrap_or_else(|| {
        panic!(
            "the /anvil output did not reach the model: {:?}\n{}",
            turns.first().map(|t| t.latest_user_text_raw()),
            out.describe()
        )
    });
    let started = Started {
        debate: first.debate().to_owned(),
        line: first.line.clone(),
        prompt: String::new(),
    };
    assert!(
        turns[0]
            .latest_user_text_raw()
            .contains("Should we split the monolith?")
    );
    assert_done(&project, &started, &out);

    let expected = pair_keys(5, true);
    assert_eq!(expected.len(), 15);
    assert_eq!(received(&turns), expected);
    assert_recorded(
        &project,
        &started,
        &expected,
        &session,
        default_text(&started.line),
    );
    // The slash command bound the debate to this session from its start.
    let commits = project.commits(&started.debate);
    assert_eq!(commits.len(), 16);
    assert_eq!(commits[0].trailer("Anvil-Session"), Some(session.as_str()));
    // `continue` at a pause is no steering: nothing recorded, nothing passed on.
    for commit in commits.iter().filter(|c| c.phase() == "interactive-pause") {
        assert!(commit.trailer("Anvil-Steering").is_none(), "{commit:#?}");
    }
    for turn in &turns {
        let text = turn.latest_user_text_raw();
        assert!(!text.contains("The human steers"), "{text}");
    }
}

#[test]
fn d_two_sessions_in_one_directory_each_drive_their_own_debate() {
    let project = Project::installed();
    let s1 = new_session_id();
    let s2 = new_session_id();
    let d1 = project.start(&["Should we use Postgres?", "--rounds", "2", "--session", &s1]);
    let d2 = project.start(&["Should we use Kafka?", "--rounds", "2", "--session", &s2]);
    assert_ne!(d1.debate, d2.debate);

    let server = ModelServer::start(debater);
    let c1 = Claude::new(&server, project.path(), &d1.prompt)
        .session_id(&s1)
        .spawn();
    let c2 = Claude::new(&server, project.path(), &d2.prompt)
        .session_id(&s2)
        .spawn();
    let o1 = c1.wait();
    let o2 = c2.wait();
    assert_done(&project, &d1, &o1);
    assert_done(&project, &d2, &o2);

    let expected = pair_keys(2, false);
    for (started, session) in [(&d1, &s1), (&d2, &s2)] {
        // Each session saw only its own debate's prompts, each once.
        let mine: Vec<Turn> = server
            .main_turns()
            .into_iter()
            .filter(|t| t.session_id.as_deref() == Some(session.as_str()))
            .collect();
        assert_eq!(received(&mine), expected, "session {session}");
        assert!(
            mine.iter()
                .all(|t| turn_tag(t).is_some_and(|tag| tag.line == started.line)),
            "session {session} saw another debate"
        );
        // Its record holds only its own texts, every phase of them.
        assert_recorded(
            &project,
            started,
            &expected,
            session,
            default_text(&started.line),
        );
        let commits = project.commits(&started.debate);
        assert_eq!(commits[0].trailer("Anvil-Session"), Some(session.as_str()));
    }
}

both_clients!(e_a_debate_started_in_a_terminal_is_claimed_by_the_first_session_only);
fn e_a_debate_started_in_a_terminal_is_claimed_by_the_first_session_only(client: Client) {
    let project = Project::installed();
    let started = project.start(&["Should we adopt Rust?", "--rounds", "1"]);

    // The synthesis of the claimed debate waits until the second session has come and gone,
    // so both sessions are alive at once.
    let second_done = Arc::new(AtomicBool::new(false));
    let gate = Arc::clone(&second_done);
    let server = ModelServer::start(move |turn| match turn_tag(turn) {
        Some(tag) => {
            if tag.is_synthesis() {
                let deadline = Instant::now() + Duration::from_secs(40);
                while !gate.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Reply::text(phase_text(&tag))
        }
        None => Reply::text("hello there"),
    });

    let first = new_session_id();
    let second = new_session_id();
    let running = Claude::new(&server, project.path(), "hello")
        .client(client)
        .session_id(&first)
        .timeout(Duration::from_secs(90))
        .spawn();
    // Wait until the first session has claimed the debate.
    let state_path = project.line_dir(&started.debate, "main").join("state.md");
    let deadline = Instant::now() + Duration::from_secs(45);
    while !std::fs::read_to_string(&state_path)
        .unwrap_or_default()
        .contains(&format!("session: {first}"))
    {
        assert!(
            Instant::now() < deadline,
            "the first session never claimed the debate"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    let other = Claude::new(&server, project.path(), "hello")
        .client(client)
        .session_id(&second)
        .run();
    second_done.store(true, Ordering::SeqCst);
    other.assert_success();
    assert_eq!(
        other.result_text(),
        Some("hello there"),
        "{}",
        other.describe()
    );

    let out = running.wait();
    assert_done(&project, &started, &out);
    assert!(server.script_panics().is_empty());

    let turns = server.main_turns();
    let of = |s: &str| -> Vec<Turn> {
        turns
            .iter()
            .filter(|t| t.session_id.as_deref() == Some(s))
            .cloned()
            .collect()
    };
    // The second session was never handed anything.
    let second_turns = of(&second);
    assert_eq!(received(&second_turns), ["-"]);
    assert_eq!(second_turns[0].latest_user_text, "hello");

    // The first got the whole first prompt when it stopped, then every phase once.
    let first_turns = of(&first);
    assert_eq!(
        received(&first_turns),
        ["-", "ADVOCATE r1", "CRITIC r1", "SYNTHESIS"]
    );
    let handed = first_turns[1].stop_hook_feedback().unwrap();
    assert!(
        handed.contains("Question: Should we adopt Rust?"),
        "{handed}"
    );
    assert!(handed.contains("## Your role: Advocate"), "{handed}");

    assert_recorded(
        &project,
        &started,
        &pair_keys(1, false),
        &first,
        default_text(&started.line),
    );
    assert!(
        project
            .anvil_home()
            .join("pending")
            .read_dir()
            .unwrap()
            .next()
            .is_none()
    );
}

both_clients!(f_phases_arrive_as_additional_context_not_as_hook_errors);
/// Claude Code 2.1.163 and later: each phase is handed over as the Stop hook's
/// `additionalContext` (a system reminder for the model, no "Stop hook error" for the person),
/// with the one-line notice; the transcript records it as a `hook_additional_context`
/// attachment, never as "Stop hook feedback". `ANVIL_STOP_FORM=block` brings back the block.
fn f_phases_arrive_as_additional_context_not_as_hook_errors(client: Client) {
    for form in ["context", "block"] {
        let project = Project::installed();
        let started = project.start(&["Should phases look like errors?", "--rounds", "1"]);
        let server = ModelServer::start(debater);
        let home = crate::support::claude::ClaudeHome::new();
        let session = new_session_id();
        let mut claude = Claude::new(&server, project.path(), &started.prompt)
            .client(client)
            .home(&home)
            .session_id(&session);
        if form == "block" {
            claude = claude.env("ANVIL_STOP_FORM", "block");
        }
        // `--debug` has Claude Code log each hook answer it parsed, and any terminalSequence
        // its allowlist rejected.
        claude.arg("--debug").run().assert_success();
        let debug = std::fs::read_dir(home.path().join(".claude/debug"))
            .map(|dir| {
                dir.flatten()
                    .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                    .collect::<String>()
            })
            .unwrap_or_default();
        assert!(!debug.contains("rejected by the allowlist"), "{form}");
        if form == "context" {
            assert!(
                debug.contains("terminalSequence"),
                "the signals reached Claude Code"
            );
        }
        let turns = server.main_turns();
        assert_eq!(
            received(&turns),
            ["ADVOCATE r1", "CRITIC r1", "SYNTHESIS"],
            "{form}"
        );
        for turn in &turns[1..] {
            let prompt = turn.stop_hook_feedback().expect("the hook's prompt");
            assert!(prompt.contains("## Your role"), "{form}: {prompt}");
            match form {
                "context" => {
                    assert!(turn.stop_hook_block().is_none(), "no block: {prompt}");
                    assert!(turn.hook_context.is_some());
                }
                _ => assert!(turn.stop_hook_block().is_some(), "a block: {prompt}"),
            }
        }
        let transcript =
            std::fs::read_to_string(home.transcript(&session).expect("a transcript")).unwrap();
        let contexts = transcript.matches("\"hook_additional_context\"").count();
        let feedback = transcript.matches("Stop hook feedback").count();
        match form {
            "context" => {
                assert_eq!(contexts, 2, "critic and synthesis prompts");
                assert_eq!(feedback, 0);
                assert!(
                    transcript.contains("round 1/1 · critic"),
                    "the notice is shown"
                );
            }
            _ => {
                assert_eq!(contexts, 0);
                assert!(feedback >= 2, "{transcript}");
            }
        }
        assert_recorded(
            &project,
            &started,
            &pair_keys(1, false),
            &session,
            default_text(&started.line),
        );
    }
}
