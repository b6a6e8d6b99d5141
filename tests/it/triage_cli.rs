//! Triage (`--triage`) through the real Stop hook, with scripted positions: every seat answers
//! first, blind; agreement at or above the threshold goes straight to the synthesis with the
//! record saying why; a disagreement or one low confidence opens the debate with the answers
//! as its material. Without `--triage` the record notes what triage would have decided, and
//! `log --stats` sums what it would have saved.

use serde_json::Value;

use crate::positions_cli::{phases as phase_commits, prompt_of, stop_in};
use crate::support::anvil::{Commit, Project};

const SESSION: &str = "s-triage";

fn stop(project: &Project, text: &str) -> Value {
    stop_in(project, SESSION, text)
}

fn answer(words: &str, stance: &str, confidence: &str) -> String {
    format!(
        "{words}\n\n**Would change my mind:** a cheaper option.\n\n<anvil-position stance=\"{stance}\" confidence=\"{confidence}\">{words}</anvil-position>\n"
    )
}

fn start(project: &Project, extra: &[&str]) -> String {
    let mut args = vec![
        "Should billing move to DynamoDB?",
        "--rounds",
        "2",
        "--session",
        SESSION,
    ];
    args.extend_from_slice(extra);
    project.start(&args).debate
}

#[test]
fn agreement_above_the_threshold_goes_straight_to_the_synthesis_and_says_why() {
    let project = Project::new();
    let started = project.start(&[
        "Should billing move to DynamoDB?",
        "--rounds",
        "2",
        "--triage",
        "--session",
        SESSION,
    ]);
    assert!(
        started.prompt.contains("Triage: advocate"),
        "{}",
        started.prompt
    );
    assert!(started.prompt.contains("Would change my mind"));
    let reply = stop(&project, &answer("ADVOCATE-TRIAGE: yes", "for", "0.9"));
    let critic = prompt_of(&reply);
    assert!(critic.contains("Triage: critic"), "{critic}");
    assert!(
        !critic.contains("ADVOCATE-TRIAGE"),
        "a triage answer is blind: {critic}"
    );
    let reply = stop(&project, &answer("CRITIC-TRIAGE: yes too", "for", "0.85"));
    let synthesis = prompt_of(&reply);
    assert!(synthesis.contains("· synthesis ·"), "{synthesis}");
    let transcript = project.transcript_md(&started.debate);
    assert!(transcript.contains("## Triage · advocate"), "{transcript}");
    assert!(transcript.contains("ADVOCATE-TRIAGE") && transcript.contains("CRITIC-TRIAGE"));
    let c = phase_commits(&project, &started.debate);
    assert_eq!(
        c.iter().map(Commit::phase).collect::<Vec<_>>(),
        ["triage", "triage"]
    );
    assert_eq!(
        c[1].trailer("Anvil-Triage"),
        Some("settled at triage: 2 of 2 for, min confidence 0.85")
    );
    assert_eq!(c[1].trailer("Anvil-Next"), Some("synthesizer"));
    stop(&project, "The synthesis: move.");
    assert!(project.state_md(&started.debate).contains("status: done"));
    let show = project
        .anvil(&["show", &format!("{}@main~1", started.debate)])
        .ok();
    assert!(
        show.stdout
            .contains("triage: settled at triage: 2 of 2 for, min confidence 0.85"),
        "{}",
        show.stdout
    );
    project.assert_fsck_clean();
}

#[test]
fn a_disagreement_or_one_low_confidence_opens_the_debate_with_the_answers() {
    for (critic, why) in [
        (
            answer("CRITIC-TRIAGE: no", "against", "0.9"),
            "debated: 1 for, 1 against",
        ),
        (
            answer("CRITIC-TRIAGE: yes, unsure", "for", "0.6"),
            "debated: 2 for, but min confidence 0.6 is below 0.8",
        ),
    ] {
        let project = Project::new();
        let debate = start(&project, &["--triage"]);
        stop(&project, &answer("ADVOCATE-TRIAGE: yes", "for", "0.9"));
        let reply = stop(&project, &critic);
        let advocate = prompt_of(&reply);
        assert!(advocate.contains("round 1 of 2 · Advocate"), "{advocate}");
        // The triage answers are the debate's opening material: the debate so far, which a
        // seat is handed in full and the host holds in its conversation.
        let transcript = project.transcript_md(&debate);
        assert!(transcript.contains("ADVOCATE-TRIAGE") && transcript.contains("CRITIC-TRIAGE"));
        let c = phase_commits(&project, &debate);
        assert_eq!(c[1].trailer("Anvil-Triage"), Some(why));
        assert_eq!(c[1].trailer("Anvil-Next"), Some("advocate"));
    }
}

#[test]
fn without_triage_the_record_notes_what_it_would_have_decided_and_log_stats_sums_it() {
    let project = Project::new();
    let debate = start(&project, &[]);
    stop(&project, &answer("Advocate r1.", "for", "0.9"));
    stop(&project, &answer("Critic r1.", "for", "0.9"));
    stop(&project, &answer("Advocate r2.", "for", "0.9"));
    stop(&project, &answer("Critic r2.", "for", "0.9"));
    stop(&project, "The synthesis.");
    let c = phase_commits(&project, &debate);
    assert_eq!(
        c[1].trailer("Anvil-Triage-Shadow"),
        Some("would have settled at triage: 2 of 2 for, min confidence 0.9")
    );
    assert_eq!(c[0].trailer("Anvil-Triage-Shadow"), None);
    let synthesis = c.last().unwrap();
    assert_eq!(synthesis.phase(), "synthesizer");
    assert_eq!(
        synthesis.trailer("Anvil-Triage-Saving"),
        Some("round=1 phases=2")
    );
    // A second debate whose seats disagree: noted, nothing saved.
    let other = start(&project, &[]);
    stop(&project, &answer("Advocate r1.", "for", "0.9"));
    stop(&project, &answer("Critic r1.", "against", "0.9"));
    stop(&project, &answer("Advocate r2.", "for", "0.9"));
    stop(&project, &answer("Critic r2.", "against", "0.9"));
    stop(&project, "The synthesis.");
    let c = phase_commits(&project, &other);
    assert_eq!(
        c[1].trailer("Anvil-Triage-Shadow"),
        Some("would have debated: 1 for, 1 against")
    );
    assert_eq!(c.last().unwrap().trailer("Anvil-Triage-Saving"), None);
    let stats = project.anvil(&["log", "--stats"]).ok();
    assert!(
        stats
            .stdout
            .contains("triage would have saved, over the debates shown: 2 phases"),
        "{}",
        stats.stdout
    );
    assert!(stats.stdout.contains("on 1 line"), "{}", stats.stdout);
}
