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
    move_by_hand(
        &bob.record_dir(),
        &format!("refs/anvil/{ours}/main"),
        "start: Memcached was considered too\n\nAnvil-Debate: x\nAnvil-Phase: start\n",
    );
    let found = search(&bob, &["memcached"]);
    assert_eq!(ats(&found), [format!("{ours}@main start")], "{found:?}");
}

/// Moves `refname` of `record` by one commit with `message`, through git alone (as a person
/// or another tool would, behind anvil's back).
fn move_by_hand(record: &std::path::Path, refname: &str, message: &str) {
    let tip = git(record, &["rev-parse", refname]);
    let tree = git(record, &["rev-parse", &format!("{}^{{tree}}", tip.trim())]);
    let moved = git(
        record,
        &["commit-tree", tree.trim(), "-p", tip.trim(), "-m", message],
    );
    git(record, &["update-ref", refname, moved.trim(), tip.trim()]);
}

/// Sets the modification time of each of `paths` that exists a minute back, as if the last
/// change were long past.
fn age(paths: &[std::path::PathBuf]) {
    for path in paths.iter().filter(|p| p.exists()) {
        let run = std::process::Command::new("touch")
            .args(["-d", "1 minute ago"])
            .arg(path)
            .status()
            .unwrap();
        assert!(run.success(), "touch {}", path.display());
    }
}

/// The stamps a warm search compares before anything else (see `search_index::Quick`).
fn settle_stamps(project: &Project) {
    let record = project.record_dir();
    age(&[
        record.join("refs/anvil"),
        record.join("packed-refs"),
        record.join("anvil-recent"),
        record.join("FETCH_HEAD"),
    ]);
}

/// Whether the index holds a quick stamp: the next search with nothing moved lists no folder.
fn trusts_stamps(project: &Project) -> bool {
    let db = rusqlite::Connection::open(project.anvil_home().join("search.sqlite")).unwrap();
    db.query_row(
        "SELECT count(*) FROM stamps WHERE name = 'quick'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        == 1
}

#[test]
fn a_warm_index_trusts_a_few_stamps_yet_sees_fetches_and_the_next_phase() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("shared.git");
    git(dir.path(), &["init", "--quiet", "--bare", "shared.git"]);
    let alice = Project::new();
    let bob = Project::new();
    let theirs = debate(
        &alice,
        "51515151-0000-4000-8000-000000000021",
        "Should we shard the ledger?",
        [
            "Sharding spreads the write load.",
            "Cross-shard transfers get hard.",
            "Shard by tenant, keep transfers in one shard.",
        ],
    );
    alice.anvil(&["push", bare.to_str().unwrap()]).ok();
    let ours = debate(
        &bob,
        "51515151-0000-4000-8000-000000000022",
        "Should we cache sessions in Redis?",
        [
            "Redis is fast.",
            "Another service to run.",
            "Cache in Postgres first.",
        ],
    );
    bob.anvil(&["pull", bare.to_str().unwrap()]).ok();
    // Just written: too close to a change to trust the stamps.
    assert_eq!(ats(&search(&bob, &["tenant"])).len(), 1);
    assert!(!trusts_stamps(&bob));
    settle_stamps(&bob);
    assert_eq!(ats(&search(&bob, &["redis"])).len(), 2);
    assert!(trusts_stamps(&bob), "settled stamps are kept");

    // Alice's line moves by hand and comes in through a plain `git fetch` into a debate
    // folder Bob already has: FETCH_HEAD tells.
    let main = format!("refs/anvil/{theirs}/main");
    let record = alice.record_dir();
    let message = "start: ledger in Postgres partitions\n\nAnvil-Phase: start\n";
    move_by_hand(&record, &main, message);
    git(&record, &["push", "--quiet", bare.to_str().unwrap(), &main]);
    git(
        &bob.record_dir(),
        &[
            "fetch",
            "--quiet",
            bare.to_str().unwrap(),
            &format!("+{main}:{main}"),
        ],
    );
    let found = search(&bob, &["partitions"]);
    assert_eq!(ats(&found), [format!("{theirs}@main start")], "{found:?}");

    // A line moved by git in place, fetched by nobody, is found with the next phase anvil
    // records, in any debate.
    settle_stamps(&bob);
    search(&bob, &["redis"]);
    assert!(trusts_stamps(&bob));
    move_by_hand(
        &bob.record_dir(),
        &format!("refs/anvil/{ours}/main"),
        "start: Memcached was considered too\n\nAnvil-Phase: start\n",
    );
    debate(
        &bob,
        "51515151-0000-4000-8000-000000000023",
        "Should we page the on-call by SMS?",
        [
            "SMS reaches anyone.",
            "SMS is slow.",
            "Page by app, SMS as backup.",
        ],
    );
    let found = search(&bob, &["memcached"]);
    assert_eq!(ats(&found), [format!("{ours}@main start")], "{found:?}");
}

#[test]
fn searches_at_the_same_moment_build_one_index_without_duplicates() {
    let project = Project::new();
    for (n, topic) in ["billing", "queues", "caching"].iter().enumerate() {
        debate(
            &project,
            &format!("51515151-0000-4000-8000-00000000003{n}"),
            &format!("Should we change our {topic} design?"),
            [
                &format!("Change {topic} now."),
                &format!("Leave {topic} alone."),
                &format!("Change {topic} slowly."),
            ],
        );
    }
    // Six searches start on no index at once: each waits for the one writing before it.
    let children: Vec<_> = (0..6)
        .map(|_| {
            project
                .command(&["search", "--json", "-n", "50", "change"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let answers: Vec<String> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        })
        .collect();
    let first: Vec<Value> = serde_json::from_str(&answers[0]).unwrap();
    assert_eq!(first.len(), 9, "{first:#?}");
    for answer in &answers {
        let hits: Vec<Value> = serde_json::from_str(answer).unwrap();
        assert_eq!(ats(&hits).len(), 9);
    }
    let db = rusqlite::Connection::open(project.anvil_home().join("search.sqlite")).unwrap();
    let (rows, commits): (i64, i64) = db
        .query_row(
            "SELECT count(*), count(DISTINCT commit_id) FROM phases",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(rows, commits, "each commit indexed once");
    assert_eq!(rows, 12, "three debates of a start and three phases");
}

#[test]
fn a_debate_that_ends_brings_an_existing_index_up_to_date_in_the_background() {
    let project = Project::new();
    debate(
        &project,
        "51515151-0000-4000-8000-000000000041",
        "Should we cache sessions in Redis?",
        [
            "Redis is fast.",
            "Another service to run.",
            "Cache in Postgres first.",
        ],
    );
    search(&project, &["redis"]);
    let later = debate(
        &project,
        "51515151-0000-4000-8000-000000000042",
        "Should we shard the ledger?",
        [
            "Sharding spreads the write load.",
            "Cross-shard transfers get hard.",
            "Shard by tenant.",
        ],
    );
    // Nobody searches: the Stop hook that recorded the synthesis started the catch-up.
    let db = rusqlite::Connection::open(project.anvil_home().join("search.sqlite")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let found: i64 = db
            .query_row(
                "SELECT count(*) FROM phases WHERE debate = ?1 AND phase = 'synthesizer'",
                [&later],
                |r| r.get(0),
            )
            .unwrap();
        if found == 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the index never caught up with {later}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
