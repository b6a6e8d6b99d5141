//! Each agent seated since the first four (Gemini CLI, OpenCode), run for real against the
//! scripted server as the critic of a two-round debate: headless (`anvil run`) and in a Claude
//! Code session (the Stop hook plays the seat, driven as Claude Code runs it). Each request
//! reaches the agent's own API with its model, holds the advocate's recorded argument and
//! nobody's instructions but the critic's, and the second turn resumes the first's session.

use crate::e2e_seats::{debater, phases, run_debate, want};
use crate::e2e_session_seats::{answer_of, spawn_stop, stop_input};
use crate::support::agents::AgentsHome;
use crate::support::anvil::{Commit, Project, find_tag};
use crate::support::claude::new_session_id;
use crate::support::model_server::{Agent, ModelServer, Turn};

/// The advocate's own instructions (roles/advocate.md).
const ADVOCATE_RULES: &str = "Make the strongest honest case FOR the proposal";

/// One of the agents: how its seat is named, what model its API sees, its version.
struct Seated {
    agent: Agent,
    /// `AGENT:MODEL`.
    seat: &'static str,
    /// The model its requests name.
    model: &'static str,
    version: &'static str,
}

const GEMINI: Seated = Seated {
    agent: Agent::Gemini,
    seat: "gemini:gemini-seat-model",
    model: "gemini-seat-model",
    version: "0.61.0",
};

const OPENCODE: Seated = Seated {
    agent: Agent::OpenCode,
    seat: "opencode:scripted/opencode-seat-model",
    model: "opencode-seat-model",
    version: "1.18.33",
};

/// The critic's two turns: each at the agent's own API with its model, each with the
/// advocate's recorded argument of its round and none of the advocate's instructions, the
/// second in the session of the first; and the two commits that recorded them.
fn assert_two_critic_turns(server: &ModelServer, seated: &Seated, line: &str, commits: &[Commit]) {
    let turns: Vec<Turn> = server.turns_of(seated.agent);
    assert!(
        !turns.is_empty(),
        "no request reached {}'s API",
        seated.seat
    );
    assert!(
        turns.iter().all(|t| t.model == seated.model),
        "{:?}",
        turns.iter().map(|t| &t.model).collect::<Vec<_>>()
    );
    let with = |said: &str| {
        turns
            .iter()
            .position(|t| t.latest_user_text.contains(&format!("{said} of {line}")))
            .unwrap_or_else(|| panic!("no request of {} holds {said}", seated.seat))
    };
    let (first, second) = (with("ADVOCATE r1"), with("ADVOCATE r2"));
    assert!(first < second);
    for turn in &turns {
        assert!(
            !turn.all_text().contains(ADVOCATE_RULES),
            "{}",
            turn.all_text()
        );
    }
    // The second turn went on in the first's conversation: the agent sent it again.
    assert!(
        turns[second]
            .all_user_text()
            .contains(&format!("ADVOCATE r1 of {line}")),
        "the second turn did not resume the first's session"
    );
    let critics: Vec<&Commit> = commits.iter().filter(|c| c.phase() == "critic").collect();
    assert_eq!(critics.len(), 2);
    let sessions: Vec<Option<&str>> = critics
        .iter()
        .map(|c| c.trailer("Anvil-Agent-Session"))
        .collect();
    assert!(
        sessions[0].is_some() && sessions[0] == sessions[1],
        "{sessions:?}"
    );
    for critic in critics {
        assert_eq!(critic.trailer("Anvil-Agent-Version"), Some(seated.version));
        let model = seated.seat.split_once(':').map(|(_, m)| m);
        assert_eq!(critic.trailer("Anvil-Model"), model);
        for key in ["Anvil-Tokens-Input", "Anvil-Tokens-Output"] {
            let n: u64 = critic.trailer(key).unwrap_or("0").parse().unwrap();
            assert!(n > 0, "{key} of {}", critic.subject);
        }
    }
}

fn two_rounds_headless(seated: &Seated) {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let critic = format!("critic={}", seated.seat);
    let (run, debate) = run_debate(&project, &home, &["--rounds", "2", "--seat", &critic]);
    let commits = project.commits(&debate);
    let agent = seated.agent.name();
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", agent),
            ("advocate", "2", "host"),
            ("critic", "2", agent),
            ("synthesizer", "2", "host"),
        ]),
        "{}",
        run.describe()
    );
    assert_two_critic_turns(&server, seated, &format!("{debate}@main"), &commits);
    project.assert_fsck_clean();
}

fn two_rounds_in_a_claude_code_session(seated: &Seated) {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let started = project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "2",
        "--seat",
        &format!("critic={}", seated.seat),
        "--session",
        &session,
    ]);
    // The host argues; at each of its stops the hook plays the critic, then hands the host
    // its next phase.
    for (said, next) in [
        (
            format!("ADVOCATE r1 of {}: the case.", started.line),
            "ADVOCATE r2",
        ),
        (
            format!("ADVOCATE r2 of {}: the case.", started.line),
            "SYNTHESIS",
        ),
    ] {
        let (run, answer) = answer_of(spawn_stop(
            &project,
            &home,
            &stop_input(&project, &session, &said),
        ));
        let prompt = answer["reason"]
            .as_str()
            .unwrap_or_else(|| panic!("the host is handed its next phase: {}", run.describe()));
        assert_eq!(
            find_tag(prompt).map(|t| t.key()).as_deref(),
            Some(next),
            "{prompt}"
        );
    }
    let commits = project.commits(&started.debate);
    let agent = seated.agent.name();
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", agent),
            ("advocate", "2", "host"),
            ("critic", "2", agent),
        ])
    );
    assert_two_critic_turns(&server, seated, &started.line, &commits);
}

#[test]
fn gemini_plays_the_critic_of_a_headless_debate() {
    two_rounds_headless(&GEMINI);
}

#[test]
fn gemini_plays_the_critic_in_a_claude_code_session() {
    two_rounds_in_a_claude_code_session(&GEMINI);
}

#[test]
fn opencode_plays_the_critic_of_a_headless_debate() {
    two_rounds_headless(&OPENCODE);
}

#[test]
fn opencode_plays_the_critic_in_a_claude_code_session() {
    two_rounds_in_a_claude_code_session(&OPENCODE);
}
