//! `anvil search`: the right phase among many debates, by words in any form, by phrase, with
//! filters; an index that is deleted or left behind by new commits is rebuilt or caught up by
//! the next search, and is never part of the record.

use serde_json::{Value, json};

use crate::support::anvil::{Project, git_in as git, one_round_debate as debate};

fn search(project: &Project, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["search", "--json"];
    all.extend_from_slice(args);
    let run = project.anvil(&all).ok();
    serde_json::from_str::<Value>(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", run.describe()))
        .as_array()
        .unwrap()
        .clone()
}

fn ats(hits: &[Value]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            format!(
                "{} {}",
                h["at"].as_str().unwrap(),
                h["phase"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn search_finds_the_right_phase_by_word_forms_phrases_and_filters() {
    let project = Project::new();
    let billing = debate(
        &project,
        "51515151-0000-4000-8000-000000000001",
        "Should we rewrite billing in Rust?",
        [
            "Migrating billing removes a class of memory bugs.",
            "The migration risk is too high for invoices.",
            "Migrate gradually, invoices first.",
        ],
    );
    let cache = debate(
        &project,
        "51515151-0000-4000-8000-000000000002",
        "Should we add a cache in front of the catalogue?",
        [
            "A cache halves latency for product pages.",
            "Cache invalidation is the hard part here.",
            "Add a read-through cache with short expiry.",
        ],
    );
    // Word forms: "migrating", "migration", "migrate" share a stem.
    let hits = search(&project, &["migrations"]);
    assert_eq!(hits.len(), 3, "{hits:#?}");
    assert!(hits.iter().all(|h| h["debate"] == billing.as_str()));
    assert!(
        hits.iter()
            .all(|h| h["commit"].as_str().unwrap().len() == 40),
        "{hits:#?}"
    );
    // A phrase, with the match marked in the snippet.
    let hits = search(&project, &["\"cache invalidation\""]);
    assert_eq!(ats(&hits), [format!("{cache}@main critic")]);
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("[Cache invalidation]"),
        "{hits:#?}"
    );
    // Filters.
    assert_eq!(
        ats(&search(&project, &["invoices", "--role", "synthesizer"])),
        [format!("{billing}@main synthesizer")]
    );
    assert!(search(&project, &["cache", "--debate", &billing]).is_empty());
    assert!(search(&project, &["cache", "--since", "2999-01-01"]).is_empty());
    assert_eq!(search(&project, &["cache", "-n", "1"]).len(), 1);
    // The question itself is found, on the debate's start.
    let start = search(&project, &["catalogue", "--role", "start"]);
    assert_eq!(ats(&start), [format!("{cache}@main start")]);
    // Text that is not search syntax is taken as words.
    assert!(!search(&project, &["cache\"", "-"]).is_empty());
    // In words too, with the place, the phase and the commit.
    let words = project.anvil(&["search", "halves", "latency"]).ok().stdout;
    assert!(
        words.contains(&format!("{cache}@main  round 1 advocate")),
        "{words}"
    );
}

#[test]
fn the_index_is_caught_up_rebuilt_and_never_in_the_record() {
    let project = Project::new();
    let session = "51515151-0000-4000-8000-000000000003";
    let started = project.start(&["Adopt GraphQL?", "--rounds", "2", "--session", session]);
    let stop = |text: &str| {
        project
            .hook(&json!({
                "session_id": session, "cwd": project.path(), "hook_event_name": "Stop",
                "stop_hook_active": true, "last_assistant_message": text,
            }))
            .ok();
    };
    stop("Schemas give typed contracts.");
    assert_eq!(search(&project, &["contracts"]).len(), 1);
    // New commits after the index was written are found by the next search.
    stop("Resolvers hide N+1 queries.");
    assert_eq!(
        ats(&search(&project, &["resolvers"])),
        [format!("{}@main critic", started.debate)]
    );
    // A branch: its own phases are indexed under it, inherited ones once.
    project
        .anvil(&[
            "branch",
            "--from",
            "round-1",
            "--steer",
            "think about caching",
            "--name",
            "cache",
        ])
        .ok();
    let steering = search(&project, &["caching"]);
    assert!(
        steering
            .iter()
            .any(|h| h["line"] == "cache" && h["phase"] == "branch"),
        "{steering:#?}"
    );
    assert_eq!(
        search(&project, &["contracts"]).len(),
        1,
        "inherited phases once"
    );
    let index = project.anvil_home().join("search.sqlite");
    // `anvil gc` brings an index someone uses up to date, without a search.
    project
        .anvil(&[
            "resume",
            &format!("{}@cache", started.debate),
            "--session",
            session,
        ])
        .ok();
    stop("Federation splits the graph.");
    project.anvil(&["gc"]).ok();
    let db = rusqlite::Connection::open(&index).unwrap();
    let found: i64 = db
        .query_row(
            "SELECT count(*) FROM phases WHERE phases MATCH 'federation'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(found, 1, "indexed by gc");
    drop(db);
    // Deleted, or garbage: built again.
    std::fs::remove_file(&index).unwrap();
    assert_eq!(search(&project, &["resolvers"]).len(), 1);
    std::fs::write(&index, b"not a database").unwrap();
    assert_eq!(search(&project, &["resolvers"]).len(), 1);
    // Beside the record, ignored by the project's git, never a ref or object of the record.
    let ignore = std::fs::read_to_string(project.anvil_home().join(".gitignore")).unwrap();
    assert!(ignore.contains("search.sqlite"), "{ignore}");
    let tree = project.git(&["log", "--all", "--name-only", "--format="]);
    assert!(!tree.contains("search"), "{tree}");
}

#[test]
fn pulled_debates_and_lines_moved_by_git_are_found_by_the_next_search() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("shared.git");
    git(dir.path(), &["init", "--quiet", "--bare", "shared.git"]);
    let alice = Project::new();
    let bob = Project::new();
    let ours = debate(
        &bob,
        "51515151-0000-4000-8000-000000000011",
        "Should we cache sessions in Redis?",
        [
            "Redis is fast.",
            "Another service to run.",
            "Cache in Postgres first.",
        ],
    );
    // Bob's index is warm before anything comes in.
    assert_eq!(ats(&search(&bob, &["redis"])).len(), 2);
    let theirs = debate(
        &alice,
        "51515151-0000-4000-8000-000000000012",
        "Should we shard the ledger?",
        [
            "Sharding spreads the write load.",
            "Cross-shard transfers get hard.",
            "Shard by tenant, keep transfers in one shard.",
        ],
    );
    alice.anvil(&["push", bare.to_str().unwrap()]).ok();
    bob.anvil(&["pull", bare.to_str().unwrap()]).ok();
    let hits = search(&bob, &["tenant"]);
    assert_eq!(ats(&hits), [format!("{theirs}@main synthesizer")]);
    assert_eq!(hits[0]["commit"].as_str().unwrap().len(), 40);

    // Packed by git, then a line moved by git behind anvil's back: both seen.
    git(&bob.record_dir(), &["pack-refs", "--all", "--prune"]);
    assert_eq!(ats(&search(&bob, &["tenant"])).len(), 1);
    let main = format!("refs/anvil/{ours}/main");
    let tip = git(&bob.record_dir(), &["rev-parse", &main]);
    let tree = git(
        &bob.record_dir(),
        &["rev-parse", &format!("{}^{{tree}}", tip.trim())],
    );
    let moved = git(
        &bob.record_dir(),
        &[
            "commit-tree",
            tree.trim(),
            "-p",
            tip.trim(),
            "-m",
            "start: Memcached was considered too\n\nAnvil-Debate: x\nAnvil-Phase: start\n",
        ],
    );
    git(
        &bob.record_dir(),
        &["update-ref", &main, moved.trim(), tip.trim()],
    );
    let found = search(&bob, &["memcached"]);
    assert_eq!(ats(&found), [format!("{ours}@main start")], "{found:?}");
}
