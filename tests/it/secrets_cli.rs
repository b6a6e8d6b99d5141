//! Credentials are caught where they enter anvil, once, through the real commands and the real
//! hook: a question, a position, a `--context` file, steering (the command line, the web room,
//! an interactive pause's marker), a debater's question and the human's answer, a phase's
//! text, a commit pulled from a teammate. Each leaves the debate going and its state file
//! valid, the person is told what was replaced, and no file anvil writes holds it: not the
//! record, not the live files, not the report (in `.anvil/reports` or an `-o` path), not the
//! search index, not what `show` and the web room print.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::anvil::{Project, Run, find_tag, git_in};
use crate::support::serve::Served;
use crate::support::snap::Filters;

const SESSION: &str = "5ec7e75a-0000-4000-8000-00000000beef";

/// `n` characters of a repeating mix of letters and digits (credentials are built from their
/// documented shapes at run time, so that no literal in this file is one).
fn body(n: usize) -> String {
    "q7W2e9R4t1Y6u3I8o5P0a2S7d4F9g6H1j8K3l5Z0x"
        .chars()
        .cycle()
        .take(n)
        .collect()
}

fn stop(project: &Project, text: &str) -> Run {
    project
        .hook(&json!({
            "session_id": SESSION, "cwd": project.path(), "hook_event_name": "Stop",
            "stop_hook_active": true, "last_assistant_message": text,
        }))
        .ok()
}

/// The hook's answer as JSON (its prompt in `reason`, or `hookSpecificOutput`, and its
/// `systemMessage`).
fn answer(run: &Run) -> Value {
    serde_json::from_str(run.stdout.trim()).unwrap_or_else(|_| panic!("{}", run.describe()))
}

/// Every file under `dir` but those under `skip`, each headed by its path, as text.
fn files_under(dir: &Path, skip: Option<&Path>, out: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if Some(path.as_path()) == skip {
            continue;
        }
        if path.is_dir() {
            files_under(&path, skip, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push_str(&format!("\n=== {}\n", path.display()));
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
}

/// Everything anvil keeps under `.anvil`, as text: every file (the search index and its
/// journal included), and every object of the record inflated by git; plus `extra` files (an
/// `-o` report).
fn everything_written(project: &Project, extra: &[PathBuf]) -> String {
    let mut out = String::new();
    files_under(&project.anvil_home(), None, &mut out);
    out.push_str("\n=== the record's objects\n");
    let objects = project.git_output(&["cat-file", "--batch-all-objects", "--batch"]);
    assert!(objects.status.success());
    out.push_str(&String::from_utf8_lossy(&objects.stdout));
    for path in extra {
        out.push_str(&format!("\n=== {}\n", path.display()));
        out.push_str(&std::fs::read_to_string(path).unwrap());
    }
    out
}

#[track_caller]
fn assert_nowhere(written: &str, secrets: &[&str]) {
    for secret in secrets {
        if let Some(at) = written.find(secret) {
            let from = written[..at].rfind("\n=== ").unwrap_or(0);
            let file = written[from..].lines().nth(1).unwrap_or_default();
            panic!("{secret} was written ({file})");
        }
    }
}

/// The state file of `debate`'s main line parses, and says where the line stands.
#[track_caller]
fn state_is_valid(project: &Project, debate: &str) -> anvil_core::model::state::State {
    let path = project.line_dir(debate, "main").join("state.md");
    anvil_core::model::state::State::load(&path)
        .unwrap_or_else(|e| panic!("{e}\n{}", project.state_md(debate)))
}

#[test]
fn a_credential_at_every_door_reaches_no_file_and_the_debate_goes_on() {
    let project = Project::new();
    let hf = format!("hf_{}", "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH");
    let db = "Xk9pq2Lm77zz";
    let stripe = format!("sk_live_{}", body(24));
    let env_password = "Pa55w0rd!env";
    let webhook = format!("T0A1B2C3D/B4E5F6G7H/{}", body(24));
    let debater_asks = format!("glpat-{}", body(20));
    let answered = format!("sk-ant-api03-{}", body(80));
    let marker = format!("xoxb-{}", body(30));
    let azure = format!("{}+{}==", body(60), body(24));
    let pem = format!("MIIEowIBAAKCAQEA{}", body(64));
    let jwt = format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ{}.{}", body(20), body(40));
    let url_password = "Tr0ub4dor3&x";
    let secrets: Vec<&str> = vec![
        &hf,
        db,
        &stripe,
        env_password,
        &webhook,
        &debater_asks,
        &answered,
        &marker,
        &azure,
        &pem,
        &jwt,
        url_password,
    ];

    std::fs::create_dir_all(project.path().join("config")).unwrap();
    let code = "PRIMARY_KEY: customer_id_column\nCSRF_TOKEN = generate_csrf_token()\npassword: Optional[str]\n";
    std::fs::write(
        project.path().join("config/settings.env"),
        format!("{code}STRIPE_SECRET_KEY={stripe}\nDB_PASSWORD={env_password}\n"),
    )
    .unwrap();
    let question = format!("Should we rotate {hf} before the audit?");
    let position = format!("Our database is postgres://app:{db}@db.internal:5432/prod");
    let started = project
        .command(&[
            "start",
            &question,
            "--position",
            &position,
            "--rounds",
            "2",
            "--interactive",
            "--autonomy",
            "3",
            "--context",
            "config/settings.env",
            "-o",
            "docs/decision.md",
            "--session",
            SESSION,
        ])
        .output()
        .unwrap();
    let started = Run::from_output(started).ok();
    let debate = find_tag(&started.stdout).unwrap().debate().to_owned();
    assert!(
        !debate.contains("hf-"),
        "the id comes from the cleaned question: {debate}"
    );
    // The person is told what was redacted, and where.
    let f = Filters::of(&project);
    insta::assert_snapshot!("start_tells_what_was_redacted", f.redact(&started.stderr));
    let state = state_is_valid(&project, &debate);
    assert_eq!(
        state.setup.question,
        "Should we rotate [redacted: Hugging Face token] before the audit?"
    );
    assert!(
        started.stdout.contains(code),
        "ordinary code reaches the debaters as written"
    );

    // A debater asks, the human answers: both enter anvil.
    let ask = project
        .command(&[
            "ask",
            &format!("Is {debater_asks} still valid?"),
            "--wait",
            "60",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while state_is_valid(&project, &debate).question.is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the question never came"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let human = project
        .anvil(&[
            "answer",
            &format!("It was replaced by {answered} last week"),
        ])
        .ok();
    insta::assert_snapshot!("answer_tells_what_was_redacted", f.redact(&human.stderr));
    let asked = Run::from_output(ask.wait_with_output().unwrap()).ok();
    assert_eq!(
        asked.stdout,
        "The human answered: It was replaced by [redacted: Anthropic API key] last week\n"
    );
    state_is_valid(&project, &debate);

    let steered = project
        .anvil(&[
            "steer",
            &format!("post the result to https://hooks.slack.com/services/{webhook}"),
        ])
        .ok();
    insta::assert_snapshot!("steer_tells_what_was_redacted", f.redact(&steered.stderr));
    state_is_valid(&project, &debate);

    // The phases, through the hook: one with credentials of its own, the pause's marker with
    // one, the others plain.
    let text_of = |tag: &crate::support::anvil::Tag| -> String {
        if tag.is_pause() {
            return format!(
                "Round 1 is even.\n\n<anvil-steering>use the token {marker} for the bot</anvil-steering>"
            );
        }
        match tag.key().as_str() {
            "ADVOCATE r1" => format!(
                "Rotate. Our storage is DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={azure};EndpointSuffix=core.windows.net\n\
                 and the deploy key is\n-----BEGIN RSA PRIVATE KEY-----\n{pem}\n-----END RSA PRIVATE KEY-----\n\
                 The code is fine as it is:\n```\n{code}```"
            ),
            "CRITIC r1" => format!(
                "Not yet: curl -H 'Authorization: Bearer {jwt}' https://alice:{url_password}@git.example.com/x.git"
            ),
            "SYNTHESIS" => format!("Rotate, and keep this as it is:\n```\n{code}```"),
            key => format!("{key}: a considered argument."),
        }
    };
    let mut next = find_tag(&started.stdout).unwrap();
    let mut told = Vec::new();
    loop {
        let run = stop(&project, &text_of(&next));
        let reply = answer(&run);
        state_is_valid(&project, &debate);
        if let Some(message) = reply["systemMessage"].as_str() {
            told.push(message.to_owned());
        }
        let prompt = reply["reason"]
            .as_str()
            .or_else(|| reply["hookSpecificOutput"]["additionalContext"].as_str());
        match prompt.and_then(find_tag) {
            Some(tag) => next = tag,
            None => break,
        }
    }
    let told = told.join("\n");
    // Every notice of the hook on the way, those of redactions among them.
    insta::assert_snapshot!("hook_notices_with_redactions", f.redact(&told));
    let state = state_is_valid(&project, &debate);
    assert_eq!(
        state.progress.status.name(),
        "done",
        "the debate went on to its end"
    );
    let log = project.anvil(&["log"]).ok();
    assert!(!log.stdout.contains("damaged"), "{}", log.describe());

    // Everything that reads it back: show, the search index, the report.
    let shown = project.anvil(&["show", "round-1/advocate"]).ok();
    insta::assert_snapshot!("show_a_redacted_phase", f.redact(&shown.stdout));
    project.anvil(&["search", "rotate"]).ok();
    let report = project.path().join("docs/decision.md");
    let written = everything_written(&project, std::slice::from_ref(&report));
    assert_nowhere(&written, &secrets);
    for placeholder in [
        "AccountKey=[redacted: secret value];EndpointSuffix",
        "[redacted: private key]",
        "Bearer [redacted: JSON web token]",
        "https://alice:[redacted: password in a URL]@git.example.com",
        "hooks.slack.com/[redacted: Slack webhook]",
        "use the token [redacted: Slack token] for the bot",
        "STRIPE_SECRET_KEY=[redacted: Stripe key]",
        "DB_PASSWORD=[redacted: secret value]",
    ] {
        assert!(
            written.contains(placeholder),
            "{placeholder} was not written"
        );
    }
    let report = std::fs::read_to_string(&report).unwrap();
    assert!(report.contains(code), "ordinary code is kept: {report}");
    assert!(
        report.contains("[redacted: Hugging Face token]"),
        "{report}"
    );
}

#[test]
fn steering_answers_feedback_and_branches_from_the_web_room_are_cleaned_and_the_person_told() {
    let project = Project::new();
    let started = project.start(&["Adopt GraphQL?", "--rounds", "2", "--session", SESSION]);
    stop(&project, "ADVOCATE r1: yes.");
    stop(&project, "CRITIC r1: no.");
    let served = Served::start(&project);
    let token = format!("ghp_{}", body(36));
    let steer = served.post(
        &format!("/api/debates/{}/lines/main/steer", started.debate),
        &json!({"text": format!("the CI uses {token}")}),
    );
    assert_eq!(steer.status, 202, "{}", steer.body);
    let reply = steer.json();
    assert_eq!(reply["text"], "the CI uses [redacted: GitHub token]");
    assert!(
        reply["message"]
            .as_str()
            .unwrap()
            .contains("GitHub token in steering"),
        "{reply}"
    );
    let branch = served.post(
        &format!("/api/debates/{}/branch", started.debate),
        &json!({"from": "round-1", "steer": format!("assume {token} leaked"), "name": "leak"}),
    );
    assert_eq!(branch.status, 201, "{}", branch.body);
    assert_eq!(
        branch.json()["steering"],
        "assume [redacted: GitHub token] leaked"
    );
    // Feedback to a Claude session of the project (registered by its SessionStart hook).
    project
        .hook_program(
            &["session-start"],
            json!({"session_id": SESSION, "cwd": project.path(), "hook_event_name": "SessionStart", "source": "startup"})
                .to_string()
                .as_bytes(),
        )
        .ok();
    let feedback = served.post(
        &format!("/api/sessions/{SESSION}/feedback"),
        &json!({"text": format!("try {token}")}),
    );
    assert_eq!(feedback.status, 202, "{}", feedback.body);
    assert!(
        feedback.json()["message"]
            .as_str()
            .unwrap()
            .contains("GitHub token in the feedback"),
        "{}",
        feedback.body
    );
    let prompt = answer(&stop(&project, "ADVOCATE r2: still yes."));
    let prompt = prompt["reason"].as_str().unwrap_or_default().to_owned();
    assert!(
        prompt.contains("the CI uses [redacted: GitHub token]"),
        "{prompt}"
    );
    let view = served.get(&format!("/api/debates/{}", started.debate)).body;
    assert!(!view.contains(&token), "{view}");
    drop(served);
    assert_nowhere(&everything_written(&project, &[]), &[&token]);
}

#[test]
fn a_pulled_commit_is_read_back_clean_by_resume_show_report_search_and_the_web_room() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("shared.git");
    git_in(dir.path(), &["init", "--quiet", "--bare", "shared.git"]);
    let seed = dir.path().join("seed");
    git_in(dir.path(), &["init", "--quiet", "-b", "main", "seed"]);
    std::fs::write(seed.join("README"), "the project\n").unwrap();
    git_in(&seed, &["add", "README"]);
    git_in(&seed, &["commit", "--quiet", "-m", "first"]);
    git_in(&seed, &["push", "--quiet", bare.to_str().unwrap(), "main"]);
    let clone = |who: &str| {
        let project = Project::empty();
        git_in(
            project.path(),
            &["clone", "--quiet", bare.to_str().unwrap(), "."],
        );
        git_in(project.path(), &["config", "user.name", who]);
        project.anvil(&["init"]).ok();
        project
    };
    // Bob keeps credentials ([secrets] redact = false) and pushes one anyway.
    let bob = clone("Bob");
    std::fs::write(
        bob.anvil_home().join("config.toml"),
        "[secrets]\nredact = false\n",
    )
    .unwrap();
    let token = format!("ghp_{}", body(36));
    let question = format!("Is {token} safe to keep?");
    let started = bob.start(&[&question, "--rounds", "2", "--session", SESSION]);
    let told = stop(&bob, &format!("ADVOCATE r1: keep {token} in the vault"));
    let notice = answer(&told)["systemMessage"]
        .as_str()
        .unwrap_or_default()
        .replace(&token, "[the token]");
    insta::assert_snapshot!(
        "notice_recorded_as_it_is",
        Filters::of(&bob).redact(&notice)
    );
    assert!(
        bob.state_md(&started.debate).contains(&token),
        "kept as it is, as asked"
    );
    bob.anvil(&["push", "--allow-secrets"]).ok();

    let alice = clone("Alice");
    alice.anvil(&["pull"]).ok();
    let line = format!("{}@main", started.debate);
    let shown = alice
        .anvil(&["show", &format!("{line}:round-1/advocate")])
        .ok();
    assert!(
        shown
            .stdout
            .contains("keep [redacted: GitHub token] in the vault"),
        "{}",
        shown.stdout
    );
    let state = alice
        .anvil(&["show", &format!("{line}:round-1/advocate"), "--state"])
        .ok();
    assert!(
        state.stdout.contains("[redacted: GitHub token]"),
        "{}",
        state.stdout
    );
    let report = alice.path().join("pulled.md");
    alice
        .anvil(&["report", &line, "-o", report.to_str().unwrap()])
        .ok();
    alice.anvil(&["search", "vault"]).ok();
    let resumed = alice.anvil(&["resume", &line]).ok();
    assert!(
        !resumed.stdout.contains(&token),
        "the prompt handed out is clean"
    );
    state_is_valid(&alice, &started.debate);
    assert!(
        alice
            .transcript_md(&started.debate)
            .contains("[redacted: GitHub token]")
    );
    let served = Served::start(&alice);
    for page in [
        format!("/api/debates/{}", started.debate),
        format!("/debates/{}", started.debate),
        "/api/search?q=vault".to_owned(),
    ] {
        let shown = served.get(&page).body;
        assert!(!shown.contains(&token), "{page}: {shown}");
    }
    drop(served);

    // Alice's own files are clean; the pulled commits themselves are as Bob pushed them (a
    // record is never rewritten).
    let mut written = String::new();
    files_under(&alice.anvil_home(), Some(&alice.record_dir()), &mut written);
    written.push_str(&std::fs::read_to_string(&report).unwrap());
    assert!(written.contains("[redacted: GitHub token]"));
    assert_nowhere(&written, &[&token]);
    assert!(alice.git(&["log", "-p", "--all"]).contains(&token));
}

#[test]
fn a_phase_the_hook_could_not_record_is_saved_clean_and_recorded_later() {
    let project = Project::new();
    let started = project.start(&["Rotate?", "--rounds", "1", "--session", SESSION]);
    let key = format!("AKIA{}", "Q7W2E9R4T1Y6U3I8");
    stop(&project, &format!("ADVOCATE r1: the old key {key} must go"));
    // A full disk at the transaction's first write: the text is kept for the next stop.
    let failed = {
        let mut hook = std::process::Command::new(crate::support::anvil::anvil_hook_bin());
        hook.arg("stop")
            .current_dir(project.path())
            .env("ANVIL_FAULT_AT", "1")
            .env("ANVIL_FAULT", "full")
            .env_remove("CLAUDE_CODE_SESSION_ID");
        let mut child = hook
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            json!({
                "session_id": SESSION, "cwd": project.path(), "hook_event_name": "Stop",
                "stop_hook_active": true, "last_assistant_message": format!("CRITIC r1: {key} again"),
            })
            .to_string()
            .as_bytes(),
        )
        .unwrap();
        Run::from_output(child.wait_with_output().unwrap())
    };
    let said = answer(&failed)["systemMessage"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    insta::assert_snapshot!(
        "notice_failed_stop_saved_the_redacted_text",
        Filters::of(&project).redact(&said)
    );
    let incoming = project
        .line_dir(&started.debate, "main")
        .join("incoming.md");
    let saved = std::fs::read_to_string(&incoming).unwrap();
    assert_eq!(saved, "CRITIC r1: [redacted: AWS access key] again");
    stop(&project, "an answer to the failure");
    assert!(!incoming.exists());
    assert!(
        project
            .transcript_md(&started.debate)
            .contains("CRITIC r1: [redacted: AWS access key] again")
    );
    assert_nowhere(&everything_written(&project, &[]), &[&key]);
}
