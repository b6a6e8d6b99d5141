//! Naming a debate without its id (see `anvil_core::review::names`): by words of its id or of
//! its question, by the number `anvil log` shows beside it, by a prefix that lists what it
//! could mean when it means several; and the line a command takes when none is named, said on
//! stderr. Three debates driven through the real Stop hook at a pinned clock.

use std::process::Command;

use serde_json::json;

use crate::support::anvil::{Project, Run};
use crate::support::snap::Filters;

fn session(n: usize) -> String {
    format!("{n:08}-2222-4333-8444-555555555555")
}

/// A project with three debates, started at minutes 1, 2 and 3, each with two phases
/// recorded; the first (billing in Rust) is driven to its synthesis.
struct Debates {
    project: Project,
    /// Rust billing, GraphQL, Stripe invoices: in the order they were started.
    ids: Vec<String>,
}

const QUESTIONS: [&str; 3] = [
    "Should we rewrite billing in Rust?",
    "Should we adopt GraphQL for the public API?",
    "When should the billing team move invoices to Stripe?",
];

impl Debates {
    fn new() -> Debates {
        let project = Project::new();
        let mut ids = Vec::new();
        for (n, question) in QUESTIONS.iter().enumerate() {
            let rounds = if n == 0 { "1" } else { "2" };
            let started = at(
                &project,
                n as u32 + 1,
                &[
                    "start",
                    question,
                    "--rounds",
                    rounds,
                    "--session",
                    &session(n),
                ],
            );
            let started = run(started).ok();
            ids.push(
                crate::support::anvil::find_tag(&started.stdout)
                    .expect("a tag")
                    .debate()
                    .to_owned(),
            );
        }
        let debates = Debates { project, ids };
        // Rust billing: advocate, critic, synthesis, at minutes 10 to 12.
        for (i, text) in ["For Rust.", "Against Rust.", "Keep Go."]
            .iter()
            .enumerate()
        {
            debates.stop(0, 10 + i as u32, text);
        }
        // The others: an advocate and a critic each, the Stripe debate last (minutes 20, 21),
        // the GraphQL one before it.
        debates.stop(1, 14, "For GraphQL.");
        debates.stop(1, 15, "Against GraphQL.");
        debates.stop(2, 20, "Move now.");
        debates.stop(2, 21, "Wait a quarter.");
        debates
    }

    /// The Stop hook of debate `n`'s session at `minute`, with `text`.
    fn stop(&self, n: usize, minute: u32, text: &str) {
        let input = json!({
            "session_id": session(n),
            "cwd": self.project.path(),
            "hook_event_name": "Stop",
            "stop_hook_active": true,
            "last_assistant_message": text,
        });
        let run = crate::support::anvil::run_with_stdin(
            at(&self.project, minute, &["hook", "stop"]),
            input.to_string().as_bytes(),
        );
        assert!(run.code == Some(0), "{}", run.describe());
    }

    /// `anvil ARGS` at minute 30, which must succeed.
    fn anvil(&self, args: &[&str]) -> Run {
        run(at(&self.project, 30, args)).ok()
    }

    /// `anvil ARGS` at minute 30, which must fail.
    fn refused(&self, args: &[&str]) -> Run {
        let run = run(at(&self.project, 30, args));
        assert_ne!(run.code, Some(0), "{}", run.describe());
        run
    }

    /// The debates `anvil log --json ARGS` shows, in order.
    fn logged(&self, args: &[&str]) -> Vec<String> {
        let json = self.anvil(&[&["log", "--json"][..], args].concat()).json();
        json.expect("JSON")["debates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["debate"].as_str().unwrap().to_owned())
            .collect()
    }

    fn filters(&self) -> Filters {
        Filters::of(&self.project).keep_clock()
    }
}

fn at(project: &Project, minute: u32, args: &[&str]) -> Command {
    let mut command = project.command(args);
    command.env("ANVIL_NOW", format!("2026-11-22T10:{minute:02}:00Z"));
    command
}

fn run(command: Command) -> Run {
    crate::support::anvil::run_with_stdin(command, b"")
}

#[test]
fn a_debate_is_named_by_words_of_its_id_or_question_or_by_its_number() {
    let d = Debates::new();
    let [rust, graphql, stripe] = [&d.ids[0], &d.ids[1], &d.ids[2]];
    // Words of the id after its date, in order, the last one perhaps cut short.
    assert_eq!(d.logged(&["graphql"]), [graphql.as_str()]);
    assert_eq!(d.logged(&["rewrite-billing"]), [rust.as_str()]);
    assert_eq!(d.logged(&["adopt-graph"]), [graphql.as_str()]);
    // Words only the question has (past the five the id keeps): the search index finds them.
    assert_eq!(d.logged(&["stripe"]), [stripe.as_str()]);
    assert_eq!(d.logged(&["public-api"]), [graphql.as_str()]);
    // A word of two debates: log shows both, the newer id first.
    assert_eq!(d.logged(&["billing"]), [stripe.as_str(), rust.as_str()]);
    // Numbers count from the debate last active, as `anvil log` shows them.
    assert_eq!(
        d.logged(&[]),
        [stripe.clone(), graphql.clone(), rust.clone()]
    );
    let log = d.anvil(&["log", "--no-pager"]);
    insta::assert_snapshot!("log_numbers_the_debates", d.filters().redact(&log.stdout));
    assert_eq!(d.logged(&["3"]), [rust.as_str()]);

    // Every command takes them: a revision, a report, an ADR, a replay, a live line.
    let show = d.anvil(&["show", "--json", "3:synthesis"]).json().unwrap();
    assert_eq!(show["debate"], rust.as_str());
    let show = d
        .anvil(&["show", "--json", "stripe@main:round-1"])
        .json()
        .unwrap();
    assert_eq!(show["debate"], stripe.as_str());
    let report = d.anvil(&["report", "rewrite-billing"]);
    assert!(report.stdout.contains("Keep Go."), "{}", report.describe());
    assert!(
        report.stderr.is_empty(),
        "named: nothing to say: {}",
        report.stderr
    );
    let adr = d.anvil(&["adr", "rust"]);
    assert!(
        adr.stdout.contains("docs/decisions/0001-"),
        "{}",
        adr.describe()
    );
    let status = d.anvil(&["status", "graphql"]);
    assert!(
        status.stdout.contains(graphql.as_str()),
        "{}",
        status.describe()
    );
    // --follow-up too (the synthesis of the Rust debate, found by words of its id).
    let follow = d.anvil(&[
        "start",
        "What next for billing?",
        "--follow-up",
        "rewrite-billing",
    ]);
    assert!(follow.stdout.contains("Keep Go."), "{}", follow.describe());
    d.anvil(&["cancel", "adopt-graphql"]);
    assert!(
        d.project.state_md(graphql).contains("status: cancelled"),
        "{}",
        d.project.state_md(graphql)
    );
}

#[test]
fn a_name_of_several_debates_lists_them_with_their_questions() {
    let d = Debates::new();
    let date = &d.ids[0][..7];
    let adr = d.refused(&["adr", date]);
    let billing = d.refused(&["report", "billing"]);
    let revision = d.refused(&["show", "billing@main:round-1"]);
    let nothing = d.refused(&["report", "kubernetes"]);
    let f = d.filters();
    insta::assert_snapshot!(
        "several_debates_named",
        [
            f.run(&format!("anvil adr {date}"), &adr),
            f.run("anvil report billing", &billing),
            f.run("anvil show billing@main:round-1", &revision),
            f.run("anvil report kubernetes", &nothing),
        ]
        .join("\n")
    );
}

#[test]
fn a_command_without_a_name_says_which_line_it_took_and_why() {
    let d = Debates::new();
    let rust = &d.ids[0];
    // The Stripe debate was last active: `show` shows its latest phase (it has no synthesis).
    let show = d.anvil(&["show"]);
    // A branch of the Rust debate is the one active line no session drives yet.
    d.anvil(&["cancel", "graphql"]);
    d.anvil(&["cancel", "stripe"]);
    let branch = d.anvil(&[
        "branch",
        "--from",
        &format!("{rust}@main:round-1"),
        "--steer",
        "focus on migration cost",
    ]);
    let report = d.anvil(&["report"]);
    let adr = d.refused(&["adr"]);
    let synthesis = d.refused(&["show", "synthesis"]);
    let f = d.filters();
    insta::assert_snapshot!(
        "which_line_and_why",
        [
            f.run("anvil show", &show),
            f.run(
                "anvil branch --from RUST@main:round-1 --steer \"focus on migration cost\"",
                &branch
            ),
            f.run("anvil adr", &adr),
            f.run("anvil show synthesis", &synthesis),
        ]
        .join("\n")
    );
    assert!(
        report.stderr.contains(&format!(
            "report of {rust}@focus-migration-cost, the only active line"
        )),
        "{}",
        report.describe()
    );
    // The branch's prompt comes only when asked for.
    assert!(branch.stdout.is_empty(), "{}", branch.describe());
}
