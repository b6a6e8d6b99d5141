//! The blind vote (`--vote`) through the real Stop hook, with three seats: a stakeholder
//! rotation whose first voice the host plays, the second the real Codex CLI and the third the
//! real Qwen Code, both against the scripted model server. Each ballot's prompt holds no seat's
//! name, role, agent or model and never the voter's own phase; the labels each voter saw are
//! recorded and read the ballot back; a ballot that names a label it was not shown (its own
//! phase, say) or has no ranking tag is recorded as written and counted as an abstention; the
//! Borda result is recorded, handed to the synthesizer and shown (`show`, the web room).

use crate::e2e_session_seats::{answer_of, spawn_stop, stop_input};
use crate::support::agents::AgentsHome;
use crate::support::anvil::{Commit, Project};
use crate::support::claude::new_session_id;
use crate::support::model_server::{Agent, ModelServer, Reply, Turn};

const ENGINEERING: &str = "Engineering Team";
const PRODUCT: &str = "Product/UX";
const BUSINESS: &str = "Business/Management";

/// Each voice's phase: its own words, easy to find in a prompt.
fn phase_of(voice: &str) -> String {
    let words = match voice {
        ENGINEERING => {
            "Engineering Team argues: latency halves; as the stakeholder for engineering I say build it"
        }
        PRODUCT => "PRODUCT-TEXT: users asked for it twice; codex-vote-model agrees",
        _ => "BUSINESS-TEXT: the budget holds for one quarter only",
    };
    format!(
        "{words}\n\n<anvil-position stance=\"for\" confidence=\"0.8\">{words}</anvil-position>\n"
    )
}

/// The scripted seats: Codex plays Product/UX, Qwen Business/Management. Codex's ballot tries
/// to rank a third label (there are two: its own phase is not on its ballot); Qwen's has no
/// ranking tag.
fn seats(turn: &Turn) -> Reply {
    let prompt = turn.prompt();
    if prompt.contains(" · ballot]") {
        return match turn.agent {
            Agent::Codex => Reply::text(
                "A is stronger.\n\n<anvil-rank order=\"A,B,C\">A: data. B: less. C: mine.</anvil-rank>",
            ),
            _ => Reply::text("Both are good; I will not rank them."),
        };
    }
    match turn.agent {
        Agent::Codex => Reply::text(phase_of(PRODUCT)),
        Agent::Qwen => Reply::text(phase_of(BUSINESS)),
        _ => Reply::text("ok"),
    }
}

/// The names no ballot may hold: the voices, the roles, the agents and the seats' models.
const NAMES: [&str; 12] = [
    ENGINEERING,
    PRODUCT,
    BUSINESS,
    "stakeholder",
    "advocate",
    "critic",
    "synthesizer",
    "codex",
    "qwen",
    "claude",
    "codex-vote-model",
    "qwen-vote-model",
];

/// What a ballot's prompt must not say: any name, or the voter's own phase.
fn assert_anonymous(prompt: &str, own: &str) {
    let lower = prompt.to_lowercase();
    for name in NAMES {
        assert!(
            !lower.contains(&name.to_lowercase()),
            "a ballot names `{name}`: {prompt}"
        );
    }
    assert!(
        !prompt.contains(own),
        "a voter is shown its own phase: {prompt}"
    );
}

/// The statement shown under `label` in a ballot's prompt.
fn statement(prompt: &str, label: &str) -> String {
    let open = format!("<statement label=\"{label}\">");
    let start = prompt.find(&open).expect("the label is on the ballot") + open.len();
    let end = start + prompt[start..].find("</statement>").unwrap();
    prompt[start..end].trim().to_owned()
}

fn ballots(commits: &[Commit]) -> Vec<&Commit> {
    commits.iter().filter(|c| c.phase() == "voter").collect()
}

#[test]
fn three_seats_vote_blind_through_the_hook_and_the_borda_result_reaches_the_synthesis() {
    let server = ModelServer::start(seats);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let started = project.start(&[
        "Should we build a platform team?",
        "--stakeholders",
        "--vote",
        "--seat",
        &format!("{PRODUCT}=codex:codex-vote-model"),
        "--seat",
        &format!("{BUSINESS}=qwen:qwen-vote-model"),
        "--session",
        &session,
    ]);
    let debate = &started.debate;
    let stop = |text: &str| {
        answer_of(spawn_stop(
            &project,
            &home,
            &stop_input(&project, &session, text),
        ))
    };

    // The host's phase; the hook plays Codex's and Qwen's, then hands the host its ballot.
    let (run, answer) = stop(&phase_of(ENGINEERING));
    let ballot = answer["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("the host is handed its ballot: {}", run.describe()))
        .to_owned();
    assert!(ballot.contains(" · ballot]"), "{ballot}");
    assert_anonymous(&ballot, "latency halves");
    // The two others' phases, under A and B, as the record says the host saw them.
    let commits = project.commits(debate);
    assert!(ballots(&commits).is_empty());
    let a = statement(&ballot, "A");
    let b = statement(&ballot, "B");
    assert!(!ballot.contains("<statement label=\"C\">"));
    let (product_label, business_label) = if a.contains("PRODUCT-TEXT") {
        ("A", "B")
    } else {
        ("B", "A")
    };
    assert!([&a, &b].iter().any(|s| s.contains("BUSINESS-TEXT")));
    // The model's name in Product's own words is taken out too; its position is in words.
    assert!(a.contains("[name removed]") || b.contains("[name removed]"));
    assert!(ballot.contains("**Position:** for 0.8"), "{ballot}");

    // The host ranks Business first; then Codex and Qwen cast theirs, and the synthesis is
    // the host's, handed the result.
    let (run, answer) = stop(&format!(
        "Business is sounder.\n\n<anvil-rank order=\"{business_label},{product_label}\">{business_label}: numbers. {product_label}: anecdotes.</anvil-rank>"
    ));
    let synthesis = answer["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("the host is handed the synthesis: {}", run.describe()))
        .to_owned();
    assert!(synthesis.contains("· synthesis ·"), "{synthesis}");
    assert!(
        synthesis.contains(&format!(
            "- {BUSINESS}: 1 point\n- {ENGINEERING}: 0 points\n- {PRODUCT}: 0 points"
        )),
        "{synthesis}"
    );
    assert!(synthesis.contains("1 of 3 ballots cast"), "{synthesis}");
    assert!(synthesis.contains("where your conclusion follows this result"));

    // The seats' ballot prompts: no name, not their own phase; each its own labels.
    let codex = server.turns_of(Agent::Codex);
    let qwen = server.turns_of(Agent::Qwen);
    assert_eq!(
        (codex.len(), qwen.len()),
        (2, 2),
        "a phase and a ballot each"
    );
    assert_anonymous(&codex[1].prompt(), "PRODUCT-TEXT");
    assert_anonymous(&qwen[1].prompt(), "BUSINESS-TEXT");
    assert!(codex[1].prompt().contains("latency halves"));

    // The record: each ballot with the labels its voter saw and what it cast (a tab, escaped,
    // between a label and its seat).
    let commits = project.commits(debate);
    let cast = ballots(&commits);
    let voters: Vec<_> = cast
        .iter()
        .map(|c| c.trailer("Anvil-Voice").unwrap())
        .collect();
    assert_eq!(voters, [ENGINEERING, PRODUCT, BUSINESS]);
    let shown = cast[0].trailers_named("Anvil-Ballot-Shown");
    let mut expected_shown = vec![
        format!("{product_label}%09{PRODUCT}"),
        format!("{business_label}%09{BUSINESS}"),
    ];
    expected_shown.sort();
    assert_eq!(shown, expected_shown);
    assert_eq!(
        cast[0].trailer("Anvil-Ballot"),
        Some(format!("ranked%09{BUSINESS}%09{PRODUCT}").as_str())
    );
    assert_eq!(cast[0].trailer("Anvil-Agent"), None, "the host's ballot");
    assert_eq!(cast[1].trailer("Anvil-Agent"), Some("codex"));
    assert_eq!(
        cast[1].trailer("Anvil-Ballot"),
        Some("abstained%09label C was not on the ballot"),
        "a third label (its own phase, were it there) is no vote"
    );
    assert_eq!(
        cast[2].trailer("Anvil-Ballot"),
        Some("abstained%09no ranking tag")
    );
    // The result, on the last ballot: Borda points, best first; a tie of points and of
    // confidence goes to the seat that spoke first.
    assert_eq!(
        cast[2].trailers_named("Anvil-Vote"),
        [
            format!("{BUSINESS}%091"),
            format!("{ENGINEERING}%090"),
            format!("{PRODUCT}%090")
        ]
    );
    assert_eq!(cast[2].trailer("Anvil-Vote-Cast"), Some("1/3"));

    let (_, done) = stop("The synthesis.\n\n## Vote\nIt follows the vote.");
    assert!(done.get("reason").is_none(), "{done}");
    assert!(project.state_md(debate).contains("status: done"));

    // Shown as words: the host's ballot, the labels it saw, what was counted; on the last
    // ballot, the result. (The labels depend on the debate's id: asserted, not snapshot.)
    let host = project.anvil(&["show", &format!("{debate}@main~3")]).ok();
    assert!(!host.stdout.contains("<anvil-rank"), "{}", host.stdout);
    assert!(
        host.stdout.contains(&format!(
            "**Ranking:** {business_label}, {product_label}: {business_label}: numbers."
        )),
        "{}",
        host.stdout
    );
    let mut labels = [
        format!("{product_label} = {PRODUCT}"),
        format!("{business_label} = {BUSINESS}"),
    ];
    labels.sort();
    assert!(
        host.stdout.contains(&format!(
            "Ballot of {ENGINEERING}: Labels: {}. Counted: {BUSINESS} > {PRODUCT}.",
            labels.join(", ")
        )),
        "{}",
        host.stdout
    );
    let last = project.anvil(&["show", &format!("{debate}@main~1")]).ok();
    assert!(
        last.stdout
            .contains("Counted as an abstention: no ranking tag."),
        "{}",
        last.stdout
    );
    assert!(
        last.stdout.contains(&format!(
            "Vote (Borda, 1 of 3 ballots cast): {BUSINESS} 1, {ENGINEERING} 0, {PRODUCT} 0."
        )),
        "{}",
        last.stdout
    );

    // The web room: the ballots in words under each, the result with its chart.
    let served = crate::support::serve::Served::start(&project);
    let page = served.get(&format!("/debates/{debate}"));
    assert_eq!(page.status, 200, "{}", page.body);
    let body = &page.body.replace("&#x2f;", "/").replace("&gt;", ">");
    assert!(body.contains("id=\"vote\""), "{body}");
    assert!(body.contains("class=\"vote-chart\""), "{body}");
    assert!(
        body.contains(&format!(
            "Vote (Borda, 1 of 3 ballots cast): {BUSINESS} 1, {ENGINEERING} 0, {PRODUCT} 0."
        )),
        "{body}"
    );
    assert_eq!(
        body.matches("<p class=\"ballot\">Ballot of ").count(),
        3,
        "{body}"
    );
    assert!(!body.contains("anvil-rank"), "{body}");
    project.assert_fsck_clean();
}
