//! `anvil adr`: a debate's conclusion as a MADR 4.0 decision record in the code repository —
//! YAML front matter plus markdown, links back to the record, numbered after the records
//! already there, superseding the record of the debate it follows up — and noted in the record
//! so that log, show and the web room show it.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::anvil::Project;
use crate::support::serve::Served;
use crate::support::snap::Filters;

/// Runs a 1-round debate on `question` in `session`, the three texts given, extra options.
fn debate(
    project: &Project,
    session: &str,
    question: &str,
    texts: [&str; 3],
    extra: &[&str],
) -> (String, Value) {
    let mut args = vec![question, "--rounds", "1", "--session", session];
    args.extend_from_slice(extra);
    let started = project.start(&args);
    let mut last = Value::Null;
    for text in texts {
        let run = project
            .hook(&json!({
                "session_id": session, "cwd": project.path(), "hook_event_name": "Stop",
                "stop_hook_active": true, "last_assistant_message": text,
            }))
            .ok();
        last = serde_json::from_str(run.stdout.trim()).unwrap_or(Value::Null);
    }
    (started.debate, last)
}

const SYNTHESIS: &str = "# ADR: keep Postgres\n\n**Decision**: keep Postgres for billing, add \
read replicas.\n\n## Consequences\n\n- Replicas to run and watch\n- No migration this year\n\n\
## Open questions\n\n- Will write volume double in 2027?\n";

fn billing(project: &Project) -> String {
    let (debate, last) = debate(
        project,
        "81818181-0000-4000-8000-000000000001",
        "Should billing move from Postgres to DynamoDB?",
        [
            "## For DynamoDB\n\nDynamoDB scales writes without a cluster. It costs less at peak.",
            "Ledger transactions need Postgres' consistency. A migration risks invoices.",
            SYNTHESIS,
        ],
        &["--framework", "adr"],
    );
    // A debate run with --framework adr offers the record when it ends.
    let notice = last["systemMessage"].as_str().unwrap_or_default();
    assert!(
        notice.contains(&format!("anvil adr {debate}@main")),
        "{last}"
    );
    debate
}

/// (front matter, markdown body) of a record.
fn parse(text: &str) -> (Value, String) {
    let rest = text.strip_prefix("---\n").expect("front matter first");
    let (front, body) = rest.split_once("\n---\n").expect("front matter closed");
    let front: Value = serde_saphyr::from_str(front).expect("front matter is YAML");
    (front, body.to_owned())
}

/// The headings of a markdown text, as (level, text).
fn headings(markdown: &str) -> Vec<(usize, String)> {
    use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let n = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                };
                current = Some((n, String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, text)) = &mut current {
                    text.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => out.extend(current.take()),
            _ => {}
        }
    }
    out
}

fn synthesis_commit(project: &Project, debate: &str) -> String {
    let show = project
        .anvil(&["show", "--json", &format!("{debate}@main:synthesis")])
        .ok();
    show.json().unwrap()["commit"].as_str().unwrap().to_owned()
}

#[test]
fn the_record_is_madr_front_matter_and_markdown_that_links_back() {
    let project = Project::new();
    for args in [
        &["init", "-q"][..],
        &["config", "user.name", "Ada Lovelace"],
    ] {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(project.path())
            .status()
            .unwrap();
        assert!(ok.success());
    }
    let debate = billing(&project);
    let commit = synthesis_commit(&project, &debate);
    let run = project.anvil(&["adr", &debate]).ok();
    let rel = run.stdout.trim().to_owned();
    assert_eq!(
        rel,
        "docs/decisions/0001-should-billing-move-from-postgres-to-dynamodb.md"
    );
    let text = project.read(&rel);
    let (front, body) = parse(&text);
    assert_eq!(front["status"], "proposed", "{text}");
    assert!(
        front["date"].as_str().unwrap().len() == 10,
        "a YYYY-MM-DD date: {text}"
    );
    assert_eq!(front["decision-makers"], json!(["Ada Lovelace"]), "{text}");

    let found = headings(&body);
    let names: Vec<&str> = found
        .iter()
        .filter(|(level, _)| *level <= 2)
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "Should billing move from Postgres to DynamoDB?",
            "Context and Problem Statement",
            "Considered Options",
            "Decision Outcome",
            "Pros and Cons of the Options",
            "More Information",
        ],
        "{text}"
    );
    // The synthesis' own headings sit under the decision outcome; its consequences and open
    // questions fill their sections.
    assert!(
        found.contains(&(3, "ADR: keep Postgres".into())),
        "{found:?}"
    );
    // The whole record: the options with each side's case, the consequences, the dissent left
    // open, and the links back (the line, the commit, the command that shows it).
    let f = Filters::of(&project);
    insta::assert_snapshot!("madr_record", f.redact(&text));
    // The commit it links to is the synthesis' own.
    assert!(
        text.contains(&format!("synthesis commit `{commit}`")),
        "{text}"
    );

    // The record notes it: log, show and the web room say which record the debate produced.
    let log = project.anvil(&["log", "--json", &debate]).ok();
    assert!(log.stdout.contains(&rel), "{}", log.describe());
    let tip = project.anvil(&["show", &format!("{debate}@main")]).ok();
    insta::assert_snapshot!("show_notes_the_record", f.redact(&tip.stdout));
    let served = Served::start(&project);
    let page = served.get(&format!("/debates/{debate}"));
    let shown = page.body.replace("&#x2f;", "/");
    assert!(
        shown.contains(&format!("Decision record written: {rel}")),
        "{shown}"
    );

    // Twice is refused (nothing written), unless asked.
    let again = project.anvil(&["adr", &debate]);
    assert_eq!(again.code, Some(1), "{}", again.describe());
    insta::assert_snapshot!("adr_twice", f.redact(&again.stderr));
    assert!(
        !project
            .path()
            .join("docs/decisions/0002-should-billing-move-from-postgres-to-dynamodb.md")
            .exists()
    );
    let forced = project.anvil(&["adr", &debate, "--again"]).ok();
    assert!(forced.stdout.contains("0002-"), "{}", forced.describe());
}

#[test]
fn records_are_numbered_after_those_there_in_the_directory_adr_dir_or_dir_names() {
    let project = Project::new();
    let debate = billing(&project);
    let dir = project.path().join("doc/arch");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["0001-use-markdown.md", "0004-adopt-kafka.md", "README.md"] {
        std::fs::write(dir.join(name), "---\nstatus: accepted\n---\n# x\n").unwrap();
    }
    std::fs::write(project.path().join(".adr-dir"), "doc/arch\n").unwrap();
    let run = project.anvil(&["adr", &debate]).ok();
    assert_eq!(
        run.stdout.trim(),
        "doc/arch/0005-should-billing-move-from-postgres-to-dynamodb.md"
    );
    let other = project
        .anvil(&["adr", &debate, "--again", "--dir", "records"])
        .ok();
    assert_eq!(
        other.stdout.trim(),
        "records/0001-should-billing-move-from-postgres-to-dynamodb.md"
    );
    assert!(Path::new(&project.path().join(other.stdout.trim())).is_file());
}

#[test]
fn a_follow_up_supersedes_the_record_of_the_debate_it_follows() {
    let project = Project::new();
    let debate = billing(&project);
    let first = project
        .anvil(&["adr", &debate])
        .ok()
        .stdout
        .trim()
        .to_owned();
    let (follow, _) = debate_with(&project, &debate);
    let second = project
        .anvil(&["adr", &follow])
        .ok()
        .stdout
        .trim()
        .to_owned();
    assert!(second.starts_with("docs/decisions/0002-"), "{second}");
    let new = project.read(&second);
    let first_name = Path::new(&first)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        new.contains(&format!("Supersedes [ADR-0001]({first_name}).")),
        "{new}"
    );
    let (front, _) = parse(&project.read(&first));
    let second_name = Path::new(&second)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        front["status"],
        format!("superseded by ADR-0002 ({second_name})").as_str()
    );
    let (front, _) = parse(&new);
    assert_eq!(front["status"], "proposed");
}

fn debate_with(project: &Project, earlier: &str) -> (String, Value) {
    debate(
        project,
        "81818181-0000-4000-8000-000000000002",
        "Should billing move to DynamoDB now that writes doubled?",
        [
            "Writes doubled: DynamoDB now pays off.",
            "Still the ledger.",
            "Decision: move the event log to DynamoDB, keep the ledger in Postgres.",
        ],
        &["--follow-up", earlier],
    )
}

#[test]
fn a_debate_without_a_synthesis_gets_an_error_and_nothing_is_written() {
    let project = Project::new();
    let started = project.start(&["Should we adopt a monorepo?"]);
    let run = project.anvil(&["adr", &started.debate]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let f = Filters::of(&project);
    insta::assert_snapshot!("adr_without_a_synthesis", f.redact(&run.stderr));
    assert!(!project.path().join("docs").exists());
    let unknown = project.anvil(&["adr", "no-such-debate"]);
    assert_ne!(unknown.code, Some(0), "{}", unknown.describe());
    insta::assert_snapshot!("adr_of_an_unknown_debate", f.redact(&unknown.stderr));
}

#[test]
fn a_pulled_debate_gives_the_same_record_as_where_it_ran() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("shared.git");
    crate::support::anvil::git_in(dir.path(), &["init", "--quiet", "--bare", "shared.git"]);
    let alice = Project::new();
    let bob = Project::new();
    let debate = billing(&alice);
    alice.anvil(&["push", bare.to_str().unwrap()]).ok();
    bob.anvil(&["pull", bare.to_str().unwrap()]).ok();
    // Bob has the record only: no live files of a debate that ran elsewhere.
    assert!(!bob.line_dir(&debate, "main").exists());
    let theirs = alice.anvil(&["adr", &debate]).ok().stdout.trim().to_owned();
    let ours = bob.anvil(&["adr", &format!("{debate}@main")]).ok();
    let ours = ours.stdout.trim().to_owned();
    assert_eq!(ours, theirs);
    let (_, body) = parse(&bob.read(&ours));
    let (_, there) = parse(&alice.read(&theirs));
    assert_eq!(body, there, "the same record from the pulled debate");
    assert!(body.contains("keep Postgres for billing"), "{body}");
    assert!(
        body.contains(&synthesis_commit(&bob, &debate)),
        "links back to the synthesis commit: {body}"
    );
    let show = bob.anvil(&["show", &format!("{debate}@main")]).ok();
    assert!(show.stdout.contains(&ours), "{}", show.describe());
}

/// A cloned repository chooses `.adr-dir`: it cannot send the record outside the project (an
/// absolute path, `..`, a link that leads out), nor name a folder across lines. The person's
/// own `--dir` may leave the project, and anvil says so.
#[test]
fn adr_dir_is_confined_to_the_project_and_an_outside_dir_is_said() {
    let project = Project::new();
    let debate = billing(&project);
    let outside = tempfile::tempdir().unwrap();
    let escape = project
        .path()
        .join("../../adr-escape")
        .to_string_lossy()
        .into_owned();
    let f = Filters::of(&project).path(outside.path(), "[outside]");
    let refusals = std::cell::RefCell::new(String::new());
    let refused = |adr_dir: &str, says: &str| {
        std::fs::write(project.path().join(".adr-dir"), adr_dir).unwrap();
        let run = project.anvil(&["adr", &debate]);
        assert_eq!(run.code, Some(1), "{adr_dir:?}: {}", run.describe());
        assert!(run.stderr.contains(says), "{adr_dir:?}: {}", run.describe());
        refusals.borrow_mut().push_str(&f.redact(&format!(
            "$ cat .adr-dir\n{}\n$ anvil adr DEBATE\n{}\n",
            adr_dir.escape_debug(),
            run.stderr
        )));
    };
    refused(
        &format!("{}\n", outside.path().join("adr").display()),
        ".adr-dir names",
    );
    refused("../../adr-escape\n", "outside the project");
    refused(&format!("{escape}\n"), "outside the project");
    refused("docs/adr\n/tmp/x\n", "one directory on one line");
    refused("docs/\u{1b}[2Jadr\n", "control character");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path(), project.path().join("linked")).unwrap();
        refused("linked/adr\n", "outside the project");
    }
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing was written outside"
    );
    assert!(!Path::new(&escape).exists());
    let odd: Vec<_> = walk(project.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().chars().any(char::is_control))
        .collect();
    assert!(odd.is_empty(), "{odd:?}");
    assert!(!project.path().join("docs").exists());
    // Each refusal with its hint.
    insta::assert_snapshot!("adr_dir_refusals", refusals.take());

    // The person's own --dir may point outside: written there, and said.
    let run = project
        .anvil(&["adr", &debate, "--dir", &outside.path().to_string_lossy()])
        .ok();
    insta::assert_snapshot!("adr_dir_outside_said", f.redact(&run.stderr));
    let written = Path::new(run.stdout.trim());
    assert!(written.starts_with(outside.path()), "{}", run.describe());
    assert!(written.is_file());
    // `anvil adr --help` says so too: see the help surface's snapshot (src/snapshots/).
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

/// Numbers go on past 9999 (`10000-….md` after `9999-….md`), and runs at the same moment each
/// take a number of their own instead of failing on a file the other just wrote.
#[test]
fn adr_numbering_goes_past_9999_and_concurrent_runs_take_their_own_numbers() {
    let project = Project::new();
    let debate = billing(&project);
    let dir = project.path().join("docs/decisions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("9999-the-last-of-four-digits.md"), "# x\n").unwrap();
    let first = project.anvil(&["adr", &debate]).ok();
    assert_eq!(
        first.stdout.trim(),
        "docs/decisions/10000-should-billing-move-from-postgres-to-dynamodb.md"
    );
    let second = project.anvil(&["adr", &debate, "--again"]).ok();
    assert!(
        second.stdout.trim().starts_with("docs/decisions/10001-"),
        "{}",
        second.describe()
    );

    let runs: Vec<_> = (0..4)
        .map(|_| {
            project
                .command(&["adr", &debate, "--again"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut written: Vec<String> = runs
        .into_iter()
        .map(|child| {
            let run = crate::support::anvil::Run::from_output(child.wait_with_output().unwrap());
            let run = run.ok();
            run.stdout.trim().to_owned()
        })
        .collect();
    written.sort();
    let numbers: Vec<&str> = written
        .iter()
        .map(|p| {
            p.trim_start_matches("docs/decisions/")
                .split('-')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(numbers, ["10002", "10003", "10004", "10005"], "{written:?}");
}
