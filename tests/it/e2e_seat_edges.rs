//! Seats at their edges, with the real Codex CLI against the scripted server: two Stop hooks
//! of one line that run at once while a seat plays (Claude Code runs every hook wired for a
//! stop, and anvil's may be wired twice), a token budget reached by a round's last phase
//! rather than in the middle of a round, and an agent that answers every turn with the same
//! words (a canned refusal), in the Stop hook and in `anvil run`.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::e2e_seats::{debater, phases, run_debate, want};
use crate::e2e_session_seats::{
    answer_of, assert_the_hosts_synthesis_ends, spawn_stop, start_seated, stop_input,
};
use crate::support::agents::AgentsHome;
use crate::support::anvil::{Project, find_tag, finish_within};
use crate::support::claude::new_session_id;
use crate::support::model_server::{Agent, ModelServer, Reply, Turn};

/// Two Stop hooks of the same session and line start together on the advocate's turn, whose
/// next phase is Codex's seat. The seat's answer is held back until one hook has answered (a
/// minute at most), so both run while the seat plays: one plays it and hands the host the
/// synthesis; the other finds the seat's lock held, says so, and records nothing. The
/// advocate's turn and the critic's phase are each recorded once.
#[test]
fn two_stop_hooks_at_once_play_a_seat_once_and_the_other_says_so() {
    let released = Arc::new(AtomicBool::new(false));
    let server = ModelServer::start({
        let released = Arc::clone(&released);
        move |turn: &Turn| {
            if turn.agent == Agent::Codex && turn.is_main() {
                let deadline = Instant::now() + Duration::from_secs(60);
                while !released.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            debater(turn)
        }
    });
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex:codex-seat-model");
    let input = stop_input(&project, &session, "The advocate's case.");
    let mut hooks = [
        Some(spawn_stop(&project, &home, &input)),
        Some(spawn_stop(&project, &home, &input)),
    ];

    // The first to answer does so while the seat still plays.
    let deadline = Instant::now() + Duration::from_secs(90);
    let first = loop {
        let exited = hooks
            .iter_mut()
            .position(|h| h.as_mut().unwrap().try_wait().unwrap().is_some());
        if let Some(i) = exited {
            break Some(i);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let answered_while_playing = first.is_some() && !released.load(Ordering::SeqCst);
    released.store(true, Ordering::SeqCst);
    let first = first.unwrap_or(0);
    let (first_run, first_answer) = answer_of(hooks[first].take().unwrap());
    let (second_run, second_answer) = answer_of(hooks[1 - first].take().unwrap());
    assert!(
        answered_while_playing,
        "one hook answers while the other's seat plays: {}\n{}",
        first_run.describe(),
        second_run.describe()
    );

    // The one that answered first was refused the seat, and let the host stop.
    let busy = first_answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        busy.contains("is being played by codex:codex-seat-model for another process"),
        "{first_answer}"
    );
    assert!(
        first_answer.get("decision").is_none() && first_answer.get("reason").is_none(),
        "{first_answer}"
    );
    // The other played it and hands the host the synthesis, with the critic's text.
    let prompt = second_answer["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", second_run.describe()));
    assert_eq!(
        find_tag(prompt).map(|t| t.key()).as_deref(),
        Some("SYNTHESIS"),
        "{prompt}"
    );
    assert!(prompt.contains(&format!("CRITIC r1 of {}", started.line)));
    let notice = second_answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        notice.contains("anvil: critic played by codex (codex-seat-model), "),
        "{second_answer}"
    );

    // Nothing doubled: one Codex turn, one advocate's and one critic's phase, the advocate's
    // text once in the transcript.
    assert_eq!(server.turns_of(Agent::Codex).len(), 1, "one critic turn");
    assert_eq!(
        phases(&project.commits(&started.debate)),
        want(&[("advocate", "1", "host"), ("critic", "1", "codex")])
    );
    assert_eq!(
        project
            .transcript_md(&started.debate)
            .matches("The advocate's case.")
            .count(),
        1
    );

    // The host's synthesis ends the debate as usual.
    assert_the_hosts_synthesis_ends(&project, &home, &session, &started.debate);
    project.assert_fsck_clean();
}

/// A three-round debate with both debaters seated in Codex and a budget of 10,000 tokens. The
/// advocate's turn reports 1,200 tokens: the next phase, at that rate, stays within the
/// budget, so the critic plays. The critic's reports 61,000, which ends round 1 past the
/// budget: the debate goes to the synthesis of round 1, not to round 2, and the critic's
/// commit says why.
#[test]
fn a_token_budget_reached_at_the_end_of_a_round_goes_to_that_rounds_synthesis() {
    let server = ModelServer::start(|turn: &Turn| {
        let reply = debater(turn);
        if turn.agent != Agent::Codex {
            return reply;
        }
        match find_tag(&turn.latest_user_text) {
            Some(tag) if tag.role.eq_ignore_ascii_case("critic") => reply.with_usage(60_000, 1_000),
            _ => reply.with_usage(1_000, 200),
        }
    });
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let (run, debate) = run_debate(
        &project,
        &home,
        &[
            "--rounds",
            "3",
            "--seat",
            "advocate=codex:codex-seat-model",
            "--seat",
            "critic=codex:codex-seat-model",
            "--budget-tokens",
            "10000",
        ],
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "codex"),
            ("critic", "1", "codex"),
            ("synthesizer", "1", "host")
        ]),
        "{}",
        run.describe()
    );
    let advocate = commits.iter().find(|c| c.phase() == "advocate").unwrap();
    assert_eq!(advocate.trailer("Anvil-Tokens-Input"), Some("1000"));
    assert_eq!(advocate.trailer("Anvil-Tokens-Output"), Some("200"));
    assert_eq!(
        advocate.trailer("Anvil-Budget"),
        None,
        "within the budget after the advocate"
    );
    assert_eq!(advocate.trailer("Anvil-Next"), Some("critic"));
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    let why = critic.trailer("Anvil-Budget").expect("the budget is named");
    assert!(
        why.starts_with("62200 of 10000 tokens spent; the next phase would take about 31100"),
        "{why}"
    );
    assert_eq!(critic.trailer("Anvil-Next"), Some("synthesizer"));
    let state = project.state_md(&debate);
    assert!(state.contains("ended_early: true"), "{state}");
    assert!(state.contains("status: done"), "{state}");
    // Claude, the host, was asked for the synthesis only.
    let host_tags: Vec<String> = server
        .main_turns()
        .iter()
        .filter(|t| t.agent == Agent::Claude)
        .filter_map(|t| find_tag(&t.latest_user_text_raw()).map(|tag| tag.key()))
        .collect();
    assert_eq!(host_tags, ["SYNTHESIS"], "{}", run.describe());
}

/// What an agent that will not debate says, every time.
const REFUSAL: &str = "I can't help with that.";

/// A debater whose Codex refuses every turn in the same words.
fn codex_refuses(turn: &Turn) -> Reply {
    if turn.agent == Agent::Codex {
        return Reply::text(REFUSAL);
    }
    debater(turn)
}

/// Every recorded response of the line, in order.
fn responses(project: &Project, debate: &str) -> Vec<String> {
    project
        .tree_files(debate)
        .iter()
        .filter(|f| f.ends_with(".response.md"))
        .map(|f| String::from_utf8(project.git_show_bytes(debate, f)).unwrap())
        .collect()
}

/// The advocate's and the critic's seats are both Codex, which answers every turn with the
/// same refusal: the critic's words are the advocate's, byte for byte. Each is a phase of its
/// own (the critic's turn was given for the critic's phase), so the Stop hook records both and
/// hands the host the synthesis: Codex is run twice, not again and again.
#[test]
fn a_seat_that_answers_as_the_phase_before_it_is_recorded_and_never_played_again() {
    let server = ModelServer::start(codex_refuses);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    project
        .anvil(&[
            "start",
            "Should we adopt GraphQL?",
            "--rounds",
            "1",
            "--seat",
            "advocate=codex:codex-seat-model",
            "--seat",
            "critic=codex:codex-seat-model",
            "--session",
            &session,
        ])
        .ok();
    let debate = project.only_debate();
    let hook = spawn_stop(
        &project,
        &home,
        &stop_input(&project, &session, "Waiting for codex."),
    );
    let run = finish_within(hook, Duration::from_secs(180));
    let answer = run.json().unwrap_or_else(|| panic!("{}", run.describe()));
    assert_eq!(server.turns_of(Agent::Codex).len(), 2, "{}", run.describe());
    let prompt = answer["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("the host is handed the synthesis: {answer}"));
    assert_eq!(
        find_tag(prompt).map(|t| t.key()).as_deref(),
        Some("SYNTHESIS")
    );
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[("advocate", "1", "codex"), ("critic", "1", "codex")])
    );
    assert_eq!(responses(&project, &debate), [REFUSAL, REFUSAL]);
}

/// `anvil run` with every role seated in a Codex that refuses every turn in the same words:
/// each phase is recorded once, and the run ends with its report.
#[test]
fn anvil_run_with_seats_that_repeat_themselves_ends() {
    let server = ModelServer::start(codex_refuses);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let run = project
        .command(&[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "1",
            "--seat",
            "advocate=codex:codex-seat-model",
            "--seat",
            "critic=codex:codex-seat-model",
            "--seat",
            "synthesizer=codex:codex-seat-model",
        ])
        .env_clear()
        .envs(home.env())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run anvil");
    let run = finish_within(run, Duration::from_secs(240)).ok();
    let debate = project.only_debate();
    assert_eq!(server.turns_of(Agent::Codex).len(), 3, "{}", run.describe());
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[
            ("advocate", "1", "codex"),
            ("critic", "1", "codex"),
            ("synthesizer", "1", "codex")
        ])
    );
    assert_eq!(responses(&project, &debate), [REFUSAL, REFUSAL, REFUSAL]);
    assert!(project.state_md(&debate).contains("status: done"));
}
