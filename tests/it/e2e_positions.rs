//! Positions end to end with the real Claude Code CLI (`claude -p`) against the scripted model
//! server: a debate started with `--rounds 4 --converge` whose debaters state positions that
//! stop moving stops early, in its synthesis, and the record says why.

use std::time::Duration;

use crate::both_clients;
use crate::support::anvil::{Project, phase_text, position_tags, turn_tag};
use crate::support::claude::{Claude, Client, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

/// Each seat's (stance, confidence) by round: the critic moves in round 2 (against → mixed),
/// then both hold still. Round 4 is scripted too, so that a debate that failed to stop would
/// still run to its end and the test would say so, not hang.
fn held(role: &str, round: u32) -> (&'static str, &'static str) {
    match (role, round) {
        ("Advocate", 1 | 2) => ("for", "0.8"),
        ("Advocate", _) => ("for", "0.75"),
        ("Critic", 1) => ("against", "0.7"),
        ("Critic", 2) => ("mixed", "0.6"),
        ("Critic", _) => ("mixed", "0.55"),
        _ => ("undecided", "0.5"),
    }
}

/// The model: every debating phase argues and ends with its position (the critic keeps one
/// open point); the synthesis and anything else get plain text.
fn debater(turn: &Turn) -> Reply {
    let Some(tag) = turn_tag(turn) else {
        return Reply::text("hello there");
    };
    let text = phase_text(&tag);
    match tag.round {
        Some(round) if !tag.is_pause() && !tag.is_synthesis() => {
            let (stance, confidence) = held(&tag.role, round);
            let open: &[&str] = if tag.role == "Critic" {
                &["Nobody has priced the migration"]
            } else {
                &[]
            };
            Reply::text(format!(
                "{text}\n\n{}",
                position_tags(stance, confidence, &format!("{} holds", tag.key()), open)
            ))
        }
        _ => Reply::text(format!("{text}\n\nO1 is carried as dissent.")),
    }
}

both_clients!(converge_stops_a_four_round_debate_once_positions_stop_moving);
fn converge_stops_a_four_round_debate_once_positions_stop_moving(client: Client) {
    let project = Project::installed();
    let started = project.start(&[
        "Should billing move to DynamoDB?",
        "--rounds",
        "4",
        "--converge",
    ]);
    let server = ModelServer::start(debater);
    let session = new_session_id();
    let out = Claude::new(&server, project.path(), &started.prompt)
        .client(client)
        .session_id(&session)
        .timeout(Duration::from_secs(240))
        .run();
    out.assert_success();
    assert!(
        server.script_panics().is_empty(),
        "{:?}",
        server.script_panics()
    );

    // The model was asked for three rounds, not four, then for the synthesis.
    let turns = server.main_turns();
    let keys: Vec<String> = turns
        .iter()
        .filter_map(|t| turn_tag(t).map(|t| t.key()))
        .collect();
    assert_eq!(
        keys,
        [
            "ADVOCATE r1",
            "CRITIC r1",
            "ADVOCATE r2",
            "CRITIC r2",
            "ADVOCATE r3",
            "CRITIC r3",
            "SYNTHESIS"
        ],
        "{}",
        out.describe()
    );
    let synthesis_text = format!("SYNTHESIS of {}", started.line);
    assert!(
        out.result_text()
            .is_some_and(|t| t.starts_with(&synthesis_text)),
        "{}",
        out.describe()
    );

    // The record: six debating phases of the eight planned, each with its position; the
    // phase that closed round 3 noted the convergence and acted on it.
    let commits = project.commits(&started.debate);
    let debating: Vec<_> = commits
        .iter()
        .filter(|c| matches!(c.phase(), "advocate" | "critic"))
        .collect();
    assert_eq!(debating.len(), 6, "{commits:#?}");
    for c in &debating {
        let round: u32 = c.round().parse().unwrap();
        let role = if c.phase() == "advocate" {
            "Advocate"
        } else {
            "Critic"
        };
        let (stance, confidence) = held(role, round);
        assert_eq!(c.trailer("Anvil-Stance"), Some(stance), "{c:#?}");
        assert_eq!(c.trailer("Anvil-Confidence"), Some(confidence), "{c:#?}");
    }
    let noted: Vec<(&str, &str, &str)> = commits
        .iter()
        .filter_map(|c| {
            c.trailer("Anvil-Converged")
                .map(|r| (c.phase(), c.round(), r))
        })
        .collect();
    assert_eq!(noted, [("critic", "3", "3")], "{commits:#?}");
    let closing = debating.last().unwrap();
    assert_eq!(closing.trailer("Anvil-Converged"), Some("3"));
    assert_eq!(closing.trailer("Anvil-Converge-Stop"), Some("yes"));
    assert_eq!(closing.trailer("Anvil-Next"), Some("synthesizer"));
    assert_eq!(closing.trailer("Anvil-Converge-Held"), None);

    // The synthesis follows it at once; it was told why it came early, who moved and what
    // is still open, and records the consensus and the dissent.
    let synthesis = commits.last().unwrap();
    assert_eq!(synthesis.phase(), "synthesizer");
    assert_eq!(synthesis.round(), "3");
    assert_eq!(synthesis.parents, std::slice::from_ref(&closing.id));
    assert_eq!(synthesis.trailer("Anvil-Next"), Some("done"));
    assert_eq!(
        synthesis.trailer("Anvil-Saving"),
        None,
        "nothing ran after the convergence: nothing to save"
    );
    // for 0.75 and mixed 0.55: one pair 0.75 apart on an axis 2 long → 1 − 0.375 → 0.62.
    assert_eq!(synthesis.trailer("Anvil-Consensus"), Some("0.62"));
    assert_eq!(
        synthesis.trailers_named("Anvil-Dissent"),
        ["critic%09Nobody has priced the migration"]
    );
    assert!(synthesis.trailer("Anvil-Dissent-Missing").is_none());
    let brief = turns
        .last()
        .and_then(Turn::stop_hook_feedback)
        .expect("the synthesis prompt came from the Stop hook");
    for said in [
        "Positions stopped moving after round 3.",
        "advocate: for 0.8 → for 0.8 → for 0.75",
        "critic: against 0.7 → mixed 0.6 → mixed 0.55 (changed stance in round 2)",
        "O1 (critic): Nobody has priced the migration",
    ] {
        assert!(brief.contains(said), "{said}:\n{brief}");
    }
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: done") && state.contains("ended_early: true"),
        "{state}"
    );
    project.assert_fsck_clean();

    // The person reads the same in `anvil log`.
    let log = project.anvil(&["log", &started.debate]).ok().stdout;
    assert!(log.contains("[mixed 0.55]"), "{log}");
    assert!(
        log.contains("[positions steady: stopped after round 3]"),
        "{log}"
    );
}
