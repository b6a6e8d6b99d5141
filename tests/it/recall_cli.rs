//! Recall: a new debate on a related question is given the earlier conclusion, with its
//! commit, in its first prompt and in its start commit; the synthesizer is asked to say where
//! it departs; an unrelated question recalls nothing; `--no-recall` and `recall = false` turn
//! it off; the web room shows what was recalled and searches every phase.

use serde_json::{Value, json};

use crate::support::anvil::{Project, one_round_debate as debate};
use crate::support::serve::Served;
use crate::support::snap::Filters;

const SYNTHESIS: &str = "Decision: keep Postgres for billing and add read replicas.";

fn billing(project: &Project) -> (String, String) {
    let debate = debate(
        project,
        "71717171-0000-4000-8000-000000000001",
        "Should billing move from Postgres to DynamoDB?",
        [
            "DynamoDB scales writes without a cluster to run.",
            "Ledger transactions need Postgres' consistency.",
            SYNTHESIS,
        ],
    );
    let show = project
        .anvil(&["show", "--json", &format!("{debate}@main:synthesis")])
        .ok();
    let commit = show.json().unwrap()["commit"].as_str().unwrap().to_owned();
    (debate, commit)
}

fn recalled_at_start(project: &Project, debate: &str) -> Value {
    let show = project
        .anvil(&["show", "--json", &format!("{debate}@main:start")])
        .ok();
    show.json().unwrap()["recalled"].clone()
}

#[test]
fn a_related_question_gets_the_earlier_conclusion_with_its_commit() {
    let project = Project::new();
    let (earlier, commit) = billing(&project);
    // Unrelated, and never concluded: neither is recalled.
    debate(
        &project,
        "71717171-0000-4000-8000-000000000002",
        "Should the office get standing desks?",
        [
            "Desks help backs.",
            "They cost money.",
            "Buy ten as a trial.",
        ],
    );
    project.start(&["Should invoices move to DynamoDB too?", "--rounds", "3"]);

    let started = project.start(&[
        "Should the invoices service move from Postgres to DynamoDB?",
        "--rounds",
        "1",
        "--session",
        "71717171-0000-4000-8000-000000000003",
    ]);
    // The first prompt names it and carries its conclusion and commit (that commit: the
    // snapshot shows only that it is one of the record's), and nothing of the desks.
    let f = Filters::of(&project);
    insta::assert_snapshot!("first_prompt_with_recall", f.redact(&started.prompt));
    assert!(started.prompt.contains(&commit), "{}", started.prompt);
    // The start commit records it: in the setup, and the text under context/.
    assert_eq!(
        recalled_at_start(&project, &started.debate),
        json!([{
            "line": format!("{earlier}@main"),
            "commit": commit,
            "question": "Should billing move from Postgres to DynamoDB?",
        }])
    );
    let recalled_md =
        String::from_utf8(project.git_show_bytes(&started.debate, "context/recalled.md")).unwrap();
    assert!(recalled_md.contains(SYNTHESIS), "{recalled_md}");
    let show = project
        .anvil(&["show", &format!("{}@main:start", started.debate)])
        .ok();
    insta::assert_snapshot!("show_start_with_recall", f.redact(&show.stdout));

    // The synthesizer is asked to say where it departs.
    let session = "71717171-0000-4000-8000-000000000003";
    let mut last = String::new();
    for text in ["Move: DynamoDB is cheaper at our volume.", "Stay: joins."] {
        let run = project
            .hook(&json!({
                "session_id": session, "cwd": project.path(), "hook_event_name": "Stop",
                "stop_hook_active": true, "last_assistant_message": text,
            }))
            .ok();
        last = run.stdout;
    }
    let next: Value = serde_json::from_str(last.trim()).expect("hook JSON");
    let prompt = next["reason"]
        .as_str()
        .or_else(|| next["hookSpecificOutput"]["additionalContext"].as_str())
        .unwrap_or_default();
    insta::assert_snapshot!("synthesis_prompt_with_recall", f.redact(prompt));
}

#[test]
fn an_unrelated_question_no_recall_and_the_setting_recall_nothing() {
    let project = Project::new();
    let (earlier, _) = billing(&project);
    let unrelated = project.start(&["Should we adopt a monorepo?"]);
    assert!(
        !unrelated.prompt.contains("debated related questions"),
        "{}",
        unrelated.prompt
    );
    assert_eq!(recalled_at_start(&project, &unrelated.debate), json!([]));
    project.anvil(&["cancel", &unrelated.debate]).ok();

    let off = project.start(&["Should billing leave Postgres for DynamoDB?", "--no-recall"]);
    assert!(!off.prompt.contains(&earlier), "{}", off.prompt);
    assert_eq!(recalled_at_start(&project, &off.debate), json!([]));
    project.anvil(&["cancel", &off.debate]).ok();

    std::fs::write(
        project.path().join(".anvil/config.toml"),
        "recall = false\n",
    )
    .unwrap();
    let config_off = project.start(&["Should billing leave Postgres for DynamoDB?"]);
    assert!(
        !config_off.prompt.contains(&earlier),
        "{}",
        config_off.prompt
    );
    project.anvil(&["cancel", &config_off.debate]).ok();

    // A follow-up brings its debate in full, not recalled a second time.
    std::fs::write(project.path().join(".anvil/config.toml"), "recall = true\n").unwrap();
    let follow = project.start(&[
        "Should billing leave Postgres for DynamoDB after all?",
        "--follow-up",
        &earlier,
    ]);
    assert!(follow.prompt.contains(SYNTHESIS), "{}", follow.prompt);
    assert_eq!(recalled_at_start(&project, &follow.debate), json!([]));
}

/// An index that cannot be opened (a directory where the file should be) neither stops a
/// debate from starting nor its recall: the record is scanned instead, and nothing is written
/// where the index should be.
#[test]
fn a_broken_index_never_stops_a_debate_from_starting() {
    let project = Project::new();
    let (earlier, _) = billing(&project);
    let index = project.path().join(".anvil/search.sqlite");
    let _ = std::fs::remove_file(&index);
    std::fs::create_dir_all(index.join("x")).unwrap();
    let run = project
        .anvil(&[
            "start",
            "Should billing move from Postgres to DynamoDB now?",
        ])
        .ok();
    assert!(run.stdout.contains(&earlier), "{}", run.describe());
    assert!(index.join("x").is_dir() && index.is_dir());
}

#[test]
fn the_web_room_shows_what_was_recalled_and_searches_every_phase() {
    let project = Project::new();
    let (earlier, commit) = billing(&project);
    let started = project.start(&["Should invoices move from Postgres to DynamoDB?"]);
    let served = Served::start(&project);

    let page = served.get(&format!("/debates/{}", started.debate));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("Recalled earlier conclusions"),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains(&format!("/debates/{earlier}?line=main#commit-{commit}")),
        "{}",
        page.body
    );
    let view = served
        .get(&format!("/api/debates/{}", started.debate))
        .json();
    assert_eq!(view["recalled"][0]["commit"], commit.as_str(), "{view}");

    // The search box: every phase, matched words marked, each hit linked to its phase.
    let found = served.get("/search?q=replica");
    assert_eq!(found.status, 200, "{}", found.body);
    assert!(
        found.body.contains("<mark>replicas</mark>"),
        "{}",
        found.body
    );
    assert!(
        found.body.contains(&format!("#commit-{commit}")),
        "{}",
        found.body
    );
    let target = served.get(&format!("/debates/{earlier}?line=main"));
    assert!(
        target.body.contains(&format!("id=\"commit-{commit}\"")),
        "{}",
        target.body
    );
    let none = served.get("/search?q=kubernetes");
    assert!(
        none.body.contains("No recorded phase matches"),
        "{}",
        none.body
    );
    // Hostile text is escaped, not run.
    let hostile = served.get("/search?q=%3Cscript%3Ealert(1)%3C/script%3E");
    assert_eq!(hostile.status, 200);
    assert!(!hostile.body.contains("<script>alert"), "{}", hostile.body);
    let api = served.get("/api/search?q=ledger").json();
    assert_eq!(api[0]["debate"], earlier.as_str(), "{api}");
    assert_eq!(api[0]["phase"], "critic", "{api}");
    // A query no search takes is the asker's to change: 400, with the cause.
    let quote = served.get("/api/search?q=%22");
    assert_eq!(quote.status, 400, "{}", quote.body);
    assert!(
        quote.body.contains("no word to search for"),
        "{}",
        quote.body
    );
}

/// Recalled text is model text: `anvil start` prints it with its escape sequences shown, never
/// obeyed (no screen clear, no clipboard write reaches the terminal), and the record keeps it
/// whole.
#[test]
fn recalled_text_printed_by_start_is_shown_not_obeyed() {
    let project = Project::new();
    let hostile = "Decision: keep Postgres for billing\u{1b}]52;c;cm0gLXJmIC8=\u{7}\u{1b}[2J \
                   and add read replicas\u{9b}31m.";
    let earlier = debate(
        &project,
        "71717171-0000-4000-8000-000000000031",
        "Should billing move from Postgres to DynamoDB?",
        [
            "DynamoDB scales writes.",
            "Ledgers need transactions.",
            hostile,
        ],
    );
    let run = project
        .anvil(&[
            "start",
            "Should billing leave Postgres for DynamoDB now?",
            "--rounds",
            "1",
        ])
        .ok();
    assert!(
        run.stdout.contains(&earlier),
        "recalled: {}",
        run.describe()
    );
    assert!(
        run.stdout
            .contains("billing\\x1b]52;c;cm0gLXJmIC8=\\x07\\x1b[2J"),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("replicas\\u{9b}31m"),
        "{}",
        run.describe()
    );
    assert!(
        !run.stdout
            .chars()
            .any(|c| c == '\u{1b}' || c == '\u{7}' || c == '\u{9b}'),
        "{:?}",
        run.stdout
    );
    let kept = project
        .anvil(&["show", &format!("{earlier}@main:synthesis"), "--json"])
        .ok();
    assert!(
        kept.json().unwrap()["text"]
            .as_str()
            .is_some_and(|t| t.contains('\u{1b}'))
            || kept.stdout.contains("\\u001b"),
        "the record keeps the text whole: {}",
        kept.describe()
    );
}
