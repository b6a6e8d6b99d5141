use super::*;
use crate::model::state::Mode;

/// Records `text` (with `queued` steering) as the phase `progress` stands at.
fn turn(setup: &Setup, progress: &Progress, text: &str, queued: &[String]) -> Outcome {
    advance(setup, progress, Turn { text, queued }).unwrap()
}

/// An active line of `setup` standing at `role` in `round`, after `step` phases.
fn at(setup: &Setup, role: Role, round: u32, step: u32) -> Progress {
    Progress {
        phase: role,
        round,
        step,
        ..start(setup).0
    }
}

pub(crate) fn setup(mode: Mode, rotation: Rotation, rounds: u32, interactive: bool) -> Setup {
    let voices = match rotation {
        Rotation::Pair => Vec::new(),
        _ => (1..=rounds).map(|i| format!("Voice {i}")).collect(),
    };
    Setup {
        question: "Q?".into(),
        mode,
        rounds,
        position: None,
        voices,
        rotation,
        interactive,
        framework: None,
        focus: None,
        research: false,
        converge: false,
        vote: false,
        triage: false,
        triage_threshold: None,
        all_draft: false,
        protocol: None,
        autonomy: 0,
        output: None,
        inputs: Default::default(),
        seats: Default::default(),
    }
}

/// Runs a line with plain texts until it finishes; returns the (role, round) sequence.
fn run(setup: &Setup) -> Vec<(Role, u32)> {
    let (mut progress, _) = start(setup);
    let mut seen = Vec::new();
    for _ in 0..100 {
        let out = advance(
            setup,
            &progress,
            Turn {
                text: "argument",
                queued: &[],
            },
        )
        .unwrap();
        seen.push((out.finished.role, out.finished.round));
        progress = out.progress;
        if out.next == Next::Finish {
            assert_eq!(progress.status, Status::Done);
            assert_eq!(progress.step as usize, seen.len());
            return seen;
        }
    }
    panic!("the line never finished");
}

use Role::{
    Advocate as A, Critic as C, InteractivePause as P, Persona as Pe, Stakeholder as S,
    Synthesizer as Y, Voter as V,
};

fn voting(mut s: Setup) -> Setup {
    s.vote = true;
    s
}

/// Runs a line like [`run`], keeping who cast each ballot.
fn run_voices(setup: &Setup) -> Vec<(Role, Option<String>)> {
    let (mut progress, _) = start(setup);
    let mut seen = Vec::new();
    loop {
        let out = turn(setup, &progress, "argument", &[]);
        seen.push((out.finished.role, out.finished.voice.clone()));
        progress = out.progress;
        if out.next == Next::Finish {
            return seen;
        }
    }
}

#[test]
fn a_vote_comes_after_the_last_round_one_ballot_per_seat() {
    let table: Vec<(Setup, Vec<(Role, u32)>)> = vec![
        (
            voting(setup(Mode::Analyst, Rotation::Pair, 2, false)),
            vec![(A, 1), (C, 1), (A, 2), (C, 2), (V, 2), (V, 2), (Y, 2)],
        ),
        (
            voting(setup(Mode::Stakeholders, Rotation::Stakeholders, 3, true)),
            vec![
                (S, 1),
                (P, 1),
                (S, 2),
                (P, 2),
                (S, 3),
                (V, 3),
                (V, 3),
                (V, 3),
                (Y, 3),
            ],
        ),
    ];
    for (setup, expected) in table {
        assert_eq!(run(&setup), expected, "{:?}", setup.rotation);
        assert_eq!(planned_phases(&setup) as usize, expected.len());
    }
    let s = voting(setup(Mode::DevilsAdvocate, Rotation::Pair, 1, false));
    let voters: Vec<_> = run_voices(&s)
        .into_iter()
        .filter(|(r, _)| *r == V)
        .map(|(_, v)| v)
        .collect();
    assert_eq!(voters, [Some("critic".into()), Some("advocate".into())]);
    let s = voting(setup(Mode::Stakeholders, Rotation::Stakeholders, 3, false));
    let voters: Vec<_> = run_voices(&s)
        .into_iter()
        .filter(|(r, _)| *r == V)
        .map(|(_, v)| v.unwrap())
        .collect();
    assert_eq!(voters, ["Voice 1", "Voice 2", "Voice 3"]);
}

#[test]
fn triage_answers_come_first_one_per_seat_then_the_debate() {
    let mut s = voting(setup(Mode::Analyst, Rotation::Pair, 1, false));
    s.triage = true;
    let t = Role::Triage;
    assert_eq!(
        run(&s),
        [(t, 0), (t, 0), (A, 1), (C, 1), (V, 1), (V, 1), (Y, 1)]
    );
    assert_eq!(planned_phases(&s), 7);
    let who: Vec<_> = run_voices(&s)
        .into_iter()
        .filter(|(r, _)| *r == t)
        .map(|(_, v)| v.unwrap())
        .collect();
    assert_eq!(who, ["advocate", "critic"]);
    // A triage answer's completion marker ends nothing.
    let (p, _) = start(&s);
    let out = turn(&s, &p, "<anvil-complete/>", &[]);
    assert_eq!((out.progress.phase, out.progress.voter), (t, 1));
}

#[test]
fn a_debater_ending_early_leaves_the_vote_and_a_human_skips_it() {
    let s = voting(setup(Mode::Analyst, Rotation::Pair, 3, true));
    let (p, _) = start(&s);
    let out = turn(&s, &p, "settled <anvil-complete/>", &[]);
    assert_eq!((out.progress.phase, out.progress.voter), (V, 0));
    assert!(out.progress.ended_early);
    // A ballot's completion marker ends nothing; the next voter votes.
    let out = turn(&s, &out.progress, "<anvil-complete/>", &[]);
    assert_eq!((out.progress.phase, out.progress.voter), (V, 1));
    // The human's `synthesize` concludes at once, from a pause or mid-vote.
    let out = turn(&s, &out.progress, "x", &["synthesize".into()]);
    assert_eq!((out.progress.phase, out.progress.voter), (Y, 0));
    let p = at(&s, P, 1, 2);
    let out = turn(&s, &p, "<anvil-steering>skip</anvil-steering>", &[]);
    assert_eq!(out.progress.phase, Y);
}

#[test]
fn steering_queued_during_the_vote_reaches_the_next_ballot() {
    let s = voting(setup(Mode::Analyst, Rotation::Pair, 1, false));
    let p = Progress {
        phase: V,
        voter: 0,
        ..at(&s, V, 1, 2)
    };
    let out = turn(&s, &p, "ballot", &["be brief".into()]);
    let Next::Prompt(cue) = out.next else {
        panic!()
    };
    assert_eq!((cue.role, cue.voice.as_deref()), (V, Some("critic")));
    assert_eq!(cue.steering, ["be brief"]);
}

#[test]
fn every_rotation_runs_its_planned_sequence() {
    let table: Vec<(Setup, Vec<(Role, u32)>)> = vec![
        (
            setup(Mode::Analyst, Rotation::Pair, 1, false),
            vec![(A, 1), (C, 1), (Y, 1)],
        ),
        (
            setup(Mode::Analyst, Rotation::Pair, 2, false),
            vec![(A, 1), (C, 1), (A, 2), (C, 2), (Y, 2)],
        ),
        (
            setup(Mode::Philosopher, Rotation::Pair, 2, true),
            vec![(A, 1), (C, 1), (P, 1), (A, 2), (C, 2), (Y, 2)],
        ),
        (
            setup(Mode::DevilsAdvocate, Rotation::Pair, 2, false),
            vec![(C, 1), (A, 1), (C, 2), (A, 2), (Y, 2)],
        ),
        (
            setup(Mode::DevilsAdvocate, Rotation::Pair, 2, true),
            vec![(C, 1), (A, 1), (P, 1), (C, 2), (A, 2), (Y, 2)],
        ),
        (
            setup(Mode::Stakeholders, Rotation::Stakeholders, 3, false),
            vec![(S, 1), (S, 2), (S, 3), (Y, 3)],
        ),
        (
            setup(Mode::Stakeholders, Rotation::Stakeholders, 3, true),
            vec![(S, 1), (P, 1), (S, 2), (P, 2), (S, 3), (Y, 3)],
        ),
        (
            setup(Mode::Analyst, Rotation::Personas, 2, true),
            vec![(Pe, 1), (P, 1), (Pe, 2), (Y, 2)],
        ),
        (
            setup(Mode::Analyst, Rotation::Personas, 2, false),
            vec![(Pe, 1), (Pe, 2), (Y, 2)],
        ),
    ];
    for (setup, expected) in table {
        assert_eq!(
            run(&setup),
            expected,
            "{:?} {:?}",
            setup.mode,
            setup.rotation
        );
        assert_eq!(planned_phases(&setup) as usize, expected.len());
    }
}

#[test]
fn rotation_voices_follow_rounds() {
    let s = setup(Mode::Stakeholders, Rotation::Stakeholders, 3, false);
    let (p, cue) = start(&s);
    assert_eq!(cue.voice.as_deref(), Some("Voice 1"));
    let out = turn(&s, &p, "x", &[]);
    assert_eq!(out.finished.voice.as_deref(), Some("Voice 1"));
    let Next::Prompt(cue) = out.next else {
        panic!()
    };
    assert_eq!(cue.voice.as_deref(), Some("Voice 2"));
}

#[test]
fn completion_marker_in_any_debating_phase_goes_to_synthesis() {
    for s in [
        setup(Mode::Analyst, Rotation::Pair, 3, true),
        setup(Mode::Stakeholders, Rotation::Stakeholders, 3, true),
        setup(Mode::Analyst, Rotation::Personas, 3, false),
    ] {
        let (p, _) = start(&s);
        let out = turn(&s, &p, "settled <anvil-complete/>", &[]);
        assert!(out.finished.markers.complete);
        assert_eq!(out.progress.phase, Role::Synthesizer);
        assert!(out.progress.ended_early);
    }
}

#[test]
fn completion_marker_inside_code_does_not_end() {
    let s = setup(Mode::Analyst, Rotation::Pair, 3, false);
    let (p, _) = start(&s);
    let out = turn(&s, &p, "```\n<anvil-complete/>\n```", &[]);
    assert_eq!(out.progress.phase, Role::Critic);
}

#[test]
fn completion_marker_in_a_pause_is_not_an_ending() {
    let s = setup(Mode::Analyst, Rotation::Pair, 3, true);
    let p = at(&s, Role::InteractivePause, 1, 2);
    let out = turn(&s, &p, "<anvil-complete/>", &[]);
    assert_eq!(
        (out.progress.phase, out.progress.round),
        (Role::Advocate, 2)
    );
}

#[test]
fn pause_steering_reaches_the_next_round_and_is_recorded() {
    let s = setup(Mode::Analyst, Rotation::Pair, 3, true);
    let p = at(&s, Role::InteractivePause, 1, 2);
    let text = "Round 1 in short: …\n<anvil-steering>\nfocus on cost\n</anvil-steering>";
    let queued = vec!["and on hiring".to_owned()];
    let out = advance(
        &s,
        &p,
        Turn {
            text,
            queued: &queued,
        },
    )
    .unwrap();
    assert_eq!(out.finished.role, Role::InteractivePause);
    assert_eq!(out.finished.steering, ["focus on cost", "and on hiring"]);
    let Next::Prompt(cue) = out.next else {
        panic!()
    };
    assert_eq!((cue.role, cue.round), (Role::Advocate, 2));
    assert_eq!(cue.steering, ["focus on cost", "and on hiring"]);
    assert_eq!(out.progress.steering, cue.steering);
}

#[test]
fn synthesize_or_skip_at_a_pause_ends_early() {
    for word in ["synthesize", "skip"] {
        let s = setup(Mode::Stakeholders, Rotation::Stakeholders, 3, true);
        let p = at(&s, Role::InteractivePause, 1, 2);
        let text = format!("<anvil-steering>{word}</anvil-steering>");
        let out = turn(&s, &p, &text, &[]);
        assert_eq!(out.progress.phase, Role::Synthesizer);
        assert!(out.progress.steering.is_empty());
        assert!(out.progress.ended_early);
    }
}

#[test]
fn queued_steering_is_delivered_at_any_stop() {
    let s = setup(Mode::Analyst, Rotation::Pair, 2, false);
    let (p, _) = start(&s);
    let queued = vec!["  be concrete ".to_owned(), "".to_owned()];
    let out = turn(&s, &p, "x", &queued);
    let Next::Prompt(cue) = out.next else {
        panic!()
    };
    assert_eq!(cue.role, Role::Critic);
    assert_eq!(cue.steering, ["be concrete"]);
    // Delivered once: the following phase carries none.
    let out = turn(&s, &out.progress, "y", &[]);
    assert!(out.progress.steering.is_empty());
}

#[test]
fn queued_synthesize_ends_early() {
    let s = setup(Mode::Analyst, Rotation::Pair, 3, false);
    let (p, _) = start(&s);
    let out = turn(&s, &p, "x", &["synthesize".into()]);
    assert_eq!(out.progress.phase, Role::Synthesizer);
}

#[test]
fn steering_markers_outside_a_pause_steer_nothing() {
    let s = setup(Mode::Analyst, Rotation::Pair, 3, false);
    let (p, _) = start(&s);
    let out = turn(&s, &p, "<anvil-steering>skip</anvil-steering>", &[]);
    assert_eq!(out.progress.phase, Role::Critic);
    assert!(out.finished.steering.is_empty());
}

#[test]
fn synthesis_finishes_and_nothing_follows() {
    let s = setup(Mode::Analyst, Rotation::Pair, 1, false);
    let p = at(&s, Role::Synthesizer, 1, 2);
    let out = turn(&s, &p, "conclusion", &[]);
    assert_eq!(out.next, Next::Finish);
    assert_eq!(out.progress.status, Status::Done);
    assert_eq!(
        advance(
            &s,
            &out.progress,
            Turn {
                text: "more",
                queued: &[]
            }
        ),
        Err(MachineError::NotActive("done"))
    );
}

#[test]
fn natural_last_phase_with_marker_is_not_early() {
    let s = setup(Mode::Analyst, Rotation::Pair, 1, false);
    let p = at(&s, Role::Critic, 1, 1);
    let out = turn(&s, &p, "<anvil-complete/>", &[]);
    assert_eq!(out.progress.phase, Role::Synthesizer);
    assert!(!out.progress.ended_early);
}

fn all_drafting(mut s: Setup) -> Setup {
    s.all_draft = true;
    s
}

/// A phase as the tables name it: (role, round, voice).
type Spoken = (Role, u32, Option<String>);

/// Every phase a line runs.
fn run_rounds(setup: &Setup) -> Vec<Spoken> {
    let (mut progress, _) = start(setup);
    let mut seen = Vec::new();
    loop {
        let out = turn(setup, &progress, "argument", &[]);
        let f = out.finished;
        seen.push((f.role, f.round, f.voice));
        progress = out.progress;
        if out.next == Next::Finish {
            return seen;
        }
    }
}

fn v(name: &str) -> Option<String> {
    Some(name.to_owned())
}

#[test]
fn with_every_seat_drafting_every_voice_speaks_in_every_round() {
    let table: Vec<(Setup, Vec<Spoken>)> = vec![
        (
            all_drafting(setup(Mode::Stakeholders, Rotation::Stakeholders, 2, false)),
            vec![
                (S, 1, v("Voice 1")),
                (S, 1, v("Voice 2")),
                (S, 2, v("Voice 1")),
                (S, 2, v("Voice 2")),
                (Y, 2, None),
            ],
        ),
        (
            all_drafting(setup(Mode::Analyst, Rotation::Personas, 2, true)),
            vec![
                (Pe, 1, v("Voice 1")),
                (Pe, 1, v("Voice 2")),
                (P, 1, None),
                (Pe, 2, v("Voice 1")),
                (Pe, 2, v("Voice 2")),
                (Y, 2, None),
            ],
        ),
        // A pair speaks as it always does: the rounds are blind, not longer.
        (
            all_drafting(setup(Mode::Analyst, Rotation::Pair, 2, false)),
            vec![
                (A, 1, None),
                (C, 1, None),
                (A, 2, None),
                (C, 2, None),
                (Y, 2, None),
            ],
        ),
    ];
    for (s, expected) in table {
        assert_eq!(run_rounds(&s), expected, "{:?}", s.rotation);
        assert_eq!(
            planned_phases(&s) as usize,
            expected.len(),
            "{:?}",
            s.rotation
        );
    }
}

#[test]
fn the_phases_of_a_drafted_round_are_due_at_once_and_nothing_else_is() {
    let cues = |s: &Setup, p: &Progress| -> Vec<Spoken> {
        due(s, p)
            .into_iter()
            .map(|c| (c.role, c.round, c.voice))
            .collect()
    };
    let rotation = all_drafting(setup(Mode::Stakeholders, Rotation::Stakeholders, 3, false));
    let (p, _) = start(&rotation);
    assert_eq!(
        cues(&rotation, &p),
        [
            (S, 1, v("Voice 1")),
            (S, 1, v("Voice 2")),
            (S, 1, v("Voice 3"))
        ]
    );
    // Half-way through the round, the rest of it.
    let p = turn(&rotation, &p, "x", &[]).progress;
    assert_eq!(
        cues(&rotation, &p),
        [(S, 1, v("Voice 2")), (S, 1, v("Voice 3"))]
    );
    // The pair: both openings; turn-taking: one phase at a time.
    let pair = all_drafting(setup(Mode::DevilsAdvocate, Rotation::Pair, 2, false));
    let (p, _) = start(&pair);
    assert_eq!(cues(&pair, &p), [(C, 1, None), (A, 1, None)]);
    let turns = setup(Mode::Analyst, Rotation::Pair, 2, false);
    assert_eq!(cues(&turns, &start(&turns).0), [(A, 1, None)]);
    // --independent: round 1 only.
    let mut independent = setup(Mode::Analyst, Rotation::Pair, 2, false);
    independent.seats.independent = true;
    let p = start(&independent).0;
    assert_eq!(cues(&independent, &p), [(A, 1, None), (C, 1, None)]);
    assert_eq!(
        cues(&independent, &at(&independent, A, 2, 2)),
        [(A, 2, None)]
    );
    // Triage answers and ballots are blind to each other: due at once too.
    let mut triaged = voting(setup(Mode::Analyst, Rotation::Pair, 1, false));
    triaged.triage = true;
    let p = start(&triaged).0;
    assert_eq!(
        cues(&triaged, &p),
        [
            (Role::Triage, 0, v("advocate")),
            (Role::Triage, 0, v("critic"))
        ]
    );
    let ballot = Progress {
        voter: 0,
        ..at(&triaged, V, 1, 4)
    };
    assert_eq!(
        cues(&triaged, &ballot),
        [(V, 1, v("advocate")), (V, 1, v("critic"))]
    );
}

#[test]
fn a_drafted_round_ends_before_a_debater_ends_the_debate() {
    let s = all_drafting(setup(Mode::Stakeholders, Rotation::Stakeholders, 3, false));
    let (p, _) = start(&s);
    let out = turn(&s, &p, "settled <anvil-complete/>", &[]);
    // The round's other drafts are still due…
    assert_eq!((out.progress.phase, out.progress.voter), (S, 1));
    assert!(out.progress.ending);
    let out = turn(&s, &out.progress, "x", &[]);
    assert_eq!((out.progress.phase, out.progress.voter), (S, 2));
    // …and the round's last one ends it.
    let out = turn(&s, &out.progress, "x", &[]);
    assert_eq!(out.progress.phase, Y);
    assert!(out.progress.ended_early && !out.progress.ending);
    // The human's word to conclude does not wait.
    let out = turn(&s, &p, "x", &["synthesize".into()]);
    assert_eq!(out.progress.phase, Y);
}

#[test]
fn steering_between_drafted_rounds_reaches_every_seat() {
    let s = all_drafting(setup(Mode::Analyst, Rotation::Personas, 2, true));
    let pause = at(&s, P, 1, 3);
    let out = turn(
        &s,
        &pause,
        "<anvil-steering>cost only</anvil-steering>",
        &[],
    );
    let first = current_cue(&s, &out.progress);
    assert_eq!(first.steering, ["cost only"]);
    // Every draft of the round is handed the steering, whether out together or one by one.
    assert!(
        due(&s, &out.progress)
            .iter()
            .all(|c| c.steering == ["cost only"])
    );
    let out = turn(&s, &out.progress, "x", &["and hiring".into()]);
    let Next::Prompt(second) = out.next else {
        panic!()
    };
    assert_eq!(
        (second.role, second.voice.as_deref()),
        (Pe, Some("Voice 2"))
    );
    assert_eq!(second.steering, ["cost only", "and hiring"]);
    // The next round starts afresh.
    let out = turn(&s, &out.progress, "x", &[]);
    let Next::Prompt(synthesis) = out.next else {
        panic!()
    };
    assert!(synthesis.steering.is_empty());
}
