//! `anvil search`: the right phase among many debates, by words in any form, by phrase, with
//! filters; an index that is deleted or left behind by new commits is rebuilt or caught up by
//! the next search, and is never part of the record.

use serde_json::{Value, json};

use crate::support::anvil::{Project, git_in as git, one_round_debate as debate};
use crate::support::snap::Filters;

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
    insta::assert_snapshot!("search_in_words", Filters::of(&project).redact(&words));
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

/// The stamps a warm search compares before anything else (see `anvil_core::record::stamp`).
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

/// Every refusal of a search names its cause, and none tells a person to delete an index that
/// is sound: a query of punctuation or nothing, `-n 0`, an over-long query. A huge `-n` and the
/// last day of the calendar are taken as they are.
#[test]
fn search_errors_name_their_cause_and_never_suggest_deleting_a_sound_index() {
    let project = Project::new();
    let billing = debate(
        &project,
        "51515151-0000-4000-8000-000000000021",
        "Should we rewrite billing in Rust?",
        [
            "Billing in Rust removes memory bugs.",
            "Billing rewrites risk invoices.",
            "Rewrite billing gradually.",
        ],
    );
    let refusals = std::cell::RefCell::new(String::new());
    let refused = |shown: &str, args: &[&str]| {
        let mut all = vec!["search"];
        all.extend_from_slice(args);
        let run = project.anvil(&all);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.describe());
        assert!(
            !run.stderr.contains("delete"),
            "{args:?}: {}",
            run.describe()
        );
        refusals
            .borrow_mut()
            .push_str(&format!("$ anvil search {shown}\n{}\n", run.stderr));
    };
    refused("'\"'", &["\""]);
    refused("''", &[""]);
    refused("-- '- : ( ) *'", &["--", "- : ( ) *"]);
    refused("billing -n 0", &["billing", "-n", "0"]);
    let long = "word ".repeat(1000);
    refused("'word word … (5,000 characters)'", &[&long]);
    let many = (0..100)
        .map(|n| format!("w{n}"))
        .collect::<Vec<_>>()
        .join(" ");
    refused("'w0 w1 … w99'", &[&many]);
    // Each names its cause.
    insta::assert_snapshot!(
        "search_refusals",
        Filters::of(&project).redact(&refusals.take())
    );

    assert_eq!(search(&project, &["billing", "-n", "1"]).len(), 1);
    let all = search(&project, &["billing", "-n", "18446744073709551615"]);
    assert_eq!(all.len(), 4, "{all:#?}");
    let until = search(&project, &["billing", "--until", "9999-12-31"]);
    assert_eq!(until.len(), 4, "{until:#?}");
    assert!(search(&project, &["billing", "--since", "9999-12-31"]).is_empty());
    assert_eq!(
        search(
            &project,
            &["billing", "--since", "1970-01-01", "--until", "9999-12-31"]
        )
        .len(),
        4
    );
    assert!(search(&project, &["billing", "--until", "1969-12-31"]).is_empty());
    // Operators and quotes of FTS5 are words here, never syntax.
    let hits = search(&project, &["billing", "AND", "NOT", "invoices*"]);
    assert!(
        hits.iter().all(|h| h["debate"] == billing.as_str()),
        "{hits:#?}"
    );
    let index = project.anvil_home().join("search.sqlite");
    let before = std::fs::read(&index).unwrap();
    refused("'\"'", &["\""]);
    assert_eq!(
        std::fs::read(&index).unwrap(),
        before,
        "the index is left alone"
    );
}

/// Matched words are marked as docs/memory.md says: bold yellow on a terminal, `[word]` in text
/// for a pipe, `[word]` in JSON; never the raw markers, and hostile text stays shown, not obeyed.
#[test]
fn search_marks_the_matched_words() {
    let project = Project::new();
    debate(
        &project,
        "51515151-0000-4000-8000-000000000022",
        "Should invoices move to a queue?",
        [
            "A queue smooths \u{1b}[2Jinvoice bursts.",
            "Queues lose ordering.",
            "Use a queue per tenant.",
        ],
    );
    let plain = project.anvil(&["search", "bursts"]).ok().stdout;
    assert!(plain.contains("[bursts]"), "{plain}");
    assert!(plain.contains("\\x1b[2J"), "{plain}");
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    assert!(
        !plain.contains("\\x01") && !plain.contains('\u{1}'),
        "{plain:?}"
    );
    let coloured = project
        .command(&["search", "bursts"])
        .env("CLICOLOR_FORCE", "1")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let coloured = String::from_utf8(coloured.stdout).unwrap();
    assert!(
        coloured.contains("\u{1b}[1m\u{1b}[33mbursts\u{1b}[0m\u{1b}[0m"),
        "{coloured:?}"
    );
    assert!(!coloured.contains("\\x01"), "{coloured:?}");
    assert!(!coloured.contains("\u{1b}[2J"), "{coloured:?}");
    let json = search(&project, &["bursts"]);
    assert!(
        json[0]["snippet"].as_str().unwrap().contains("[bursts]"),
        "{json:#?}"
    );
}

/// A debate deleted from the record, a line deleted, and a line moved back leave the index:
/// neither `anvil search` nor the MCP tool finds their phases, while phases other lines still
/// reach stay (under a line that reaches them).
#[test]
fn deleted_debates_and_lines_leave_the_index() {
    let project = Project::new();
    let gone = debate(
        &project,
        "51515151-0000-4000-8000-000000000023",
        "Should we adopt Kafka?",
        [
            "Kafka decouples producers.",
            "Zookeeper is a burden.",
            "Adopt Kafka for telemetry.",
        ],
    );
    let kept = debate(
        &project,
        "51515151-0000-4000-8000-000000000024",
        "Should we adopt gRPC?",
        [
            "Protobuf contracts are typed.",
            "Browsers need a proxy for gRPC.",
            "Adopt gRPC between services.",
        ],
    );
    assert_eq!(search(&project, &["adopt"]).len(), 4);
    // A whole debate deleted with git.
    let refs = project.git(&[
        "for-each-ref",
        "--format=%(refname)",
        &format!("refs/anvil/{gone}/"),
    ]);
    for r in refs.lines() {
        project.git(&["update-ref", "-d", r]);
    }
    let left = search(&project, &["adopt"]);
    assert!(
        left.iter().all(|h| h["debate"] == kept.as_str()),
        "{left:#?}"
    );
    assert!(search(&project, &["zookeeper"]).is_empty());
    let mcp = project.anvil_stdin(
        &["mcp"],
        format!(
            "{}\n{}\n{}\n",
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"zookeeper kafka"}}}),
        )
        .as_bytes(),
    );
    assert!(
        mcp.stdout.contains("no recorded phase matches"),
        "{}",
        mcp.describe()
    );
    assert!(!mcp.stdout.contains(&gone), "{}", mcp.describe());

    // A branch deleted, and the main line moved back a round: found once something moves
    // (here `anvil gc`, which packs the refs), as any change made with git behind anvil's back.
    project
        .anvil(&[
            "branch",
            "--from",
            &format!("{kept}@main:round-1"),
            "--steer",
            "think about websockets",
            "--name",
            "ws",
        ])
        .ok();
    assert!(!search(&project, &["websockets"]).is_empty());
    project.git(&["update-ref", "-d", &format!("refs/anvil/{kept}/ws")]);
    let start = project
        .git(&["rev-list", "--reverse", &format!("refs/anvil/{kept}/main")])
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let tip = project
        .git(&["rev-parse", &format!("refs/anvil/{kept}/main")])
        .trim()
        .to_owned();
    project.git(&["update-ref", &format!("refs/anvil/{kept}/main"), &start]);
    project.anvil(&["gc"]).ok();
    assert!(search(&project, &["websockets"]).is_empty());
    assert!(search(&project, &["protobuf"]).is_empty());
    assert_eq!(
        ats(&search(&project, &["grpc", "--role", "start"])),
        [format!("{kept}@main start")]
    );
    // Put back: found again, once.
    project.git(&["update-ref", &format!("refs/anvil/{kept}/main"), &tip]);
    project.anvil(&["gc"]).ok();
    assert_eq!(
        ats(&search(&project, &["protobuf"])),
        [format!("{kept}@main advocate")]
    );
}

/// Runs `anvil ARGS` in `project` with its `.anvil` mounted read-only (a private mount
/// namespace: a user namespace where the kernel allows one, else the mount namespace alone,
/// as root): what a person without write access to a shared checkout meets.
fn read_only_anvil(project: &Project, args: &[&str]) -> crate::support::anvil::Run {
    const SCRIPT: &str = r#"set -e
anvil=$1; dir=$2; shift 2
mount --bind "$dir/.anvil" "$dir/.anvil"
mount -o remount,bind,ro "$dir/.anvil"
if touch "$dir/.anvil/probe" 2>/dev/null; then echo "still writable" >&2; exit 99; fi
cd "$dir"
exec "$anvil" "$@"
"#;
    let run = |namespaces: &[&str]| {
        std::process::Command::new("unshare")
            .args(namespaces)
            .args(["sh", "-c", SCRIPT, "sh"])
            .arg(crate::support::anvil::anvil_bin())
            .arg(project.path())
            .args(args)
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run unshare (util-linux)")
    };
    let mut out = run(&["--user", "--map-root-user", "--mount"]);
    if String::from_utf8_lossy(&out.stderr).contains("unshare failed") {
        out = run(&["--mount"]);
    }
    crate::support::anvil::Run::from_output(out)
}

/// In a read-only `.anvil` a search answers: from the index as it is, brought up to date in
/// memory with what the record holds since, or, with no index at all, from a scan of the
/// record; it says so, and writes nothing.
#[test]
fn search_in_a_read_only_anvil_answers_from_the_index_or_a_scan() {
    let project = Project::new();
    // No maintenance in the background: the index on disk stays as the first search left it.
    std::fs::write(project.anvil_home().join("config.toml"), "[gc]\nauto = 0\n").unwrap();
    let first = debate(
        &project,
        "51515151-0000-4000-8000-000000000025",
        "Should we adopt Terraform?",
        [
            "Terraform plans are reviewable.",
            "State files drift.",
            "Adopt Terraform with remote state.",
        ],
    );
    assert_eq!(search(&project, &["terraform"]).len(), 3);
    // Recorded after the index was last written.
    let second = debate(
        &project,
        "51515151-0000-4000-8000-000000000026",
        "Should we adopt Pulumi instead of Terraform?",
        [
            "Pulumi uses real languages.",
            "Terraform has the ecosystem.",
            "Stay with Terraform.",
        ],
    );
    let index = project.anvil_home().join("search.sqlite");
    let on_disk =
        rusqlite::Connection::open_with_flags(&index, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap()
            .query_row(
                "SELECT count(*) FROM phases WHERE debate = ?1",
                [&second],
                |r| r.get::<_, i64>(0),
            )
            .unwrap();
    assert_eq!(
        on_disk, 0,
        "the second debate is not in the index on disk yet"
    );
    let run = read_only_anvil(&project, &["search", "--json", "terraform", "-n", "50"]).ok();
    let hits: Vec<Value> = serde_json::from_str(&run.stdout).unwrap();
    for debate in [&first, &second] {
        assert!(
            hits.iter().any(|h| h["debate"] == debate.as_str()),
            "{debate}: {}",
            run.describe()
        );
    }
    assert_eq!(hits.len(), 6, "{hits:#?}");
    // (No snapshot: SQLite's own words for the refusal vary from run to run.)
    assert!(
        run.stderr.contains("the search index cannot be written"),
        "{}",
        run.describe()
    );

    // No index at all: the record is scanned.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
    }
    let run = read_only_anvil(&project, &["search", "pulumi"]).ok();
    assert!(
        run.stdout.contains(&format!("{second}@main")),
        "{}",
        run.describe()
    );
    assert!(!index.exists());
}
