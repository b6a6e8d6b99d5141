//! Credentials never reach the record, and `anvil push` refuses to send one that got in.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::e2e_session_seats::stop_input;
use crate::support::anvil::{Run, find_tag};
use crate::support::fake_qwen::FakeQwen;
use crate::support::snap::Filters;

use super::{ALICE, anvil_refs, clone, remote, tip};

/// Credentials never reach the record, and a push refuses to send one that got in anyway: a
/// phase, steering and a context file carrying a GitHub token, an Anthropic key and a private
/// key are recorded redacted, with a note; a line into which git put a token is refused by
/// `anvil push` (nothing sent) until `--allow-secrets`.
#[test]
fn secrets_are_redacted_before_recording_and_a_push_refuses_one_that_got_in() {
    const TOKEN: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    const KEY: &str = "sk-ant-api03-Xy7Qz9Lm2Np4Rs6Tu8Vw0Ab1Cd3Ef5Gh7Ij9Kl";
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let alice = clone(bare.to_str().unwrap(), "Alice");
    std::fs::write(
        alice.path().join("notes.txt"),
        "deploy with\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----\n",
    )
    .unwrap();
    let mut started = alice.command(&[
        "start",
        "Should we rotate keys?",
        "--rounds",
        "1",
        "--context",
        "notes.txt",
    ]);
    let prompt = Run::from_output(
        started
            .env("CLAUDE_CODE_SESSION_ID", ALICE)
            .output()
            .unwrap(),
    )
    .ok()
    .stdout;
    let debate = find_tag(&prompt).unwrap().debate().to_owned();
    let stop = |text: &str| {
        alice.hook(&json!({
            "session_id": ALICE, "cwd": alice.path(), "hook_event_name": "Stop",
            "stop_hook_active": true, "last_assistant_message": text,
        }))
    };
    alice
        .anvil(&["steer", &format!("use the key {KEY} in the example")])
        .ok();
    let run = stop(&format!(
        "My token is {TOKEN}, use it. Also AKIAIOSFODNN7EXAMPLE, \
         eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U, \
         glpat-Ab12Cd34Ef56Gh78Ij90, xoxb-1234567890-abcdefABCDEF and DB_PASSWORD=s3cr3t-pass."
    ));
    // The person is told, in the hook's reply.
    insta::assert_snapshot!(
        "hook_reply_with_redactions",
        Filters::of(&alice).redact(&pretty(&run))
    );
    stop("CRITIC r1: no.").ok();
    stop("Synthesis: rotate.").ok();
    let everything = alice.git(&["log", "-p", "--all", "--format=%B"]);
    for secret in [
        TOKEN,
        KEY,
        "MIIEowIBAAKCAQEA7",
        "AKIAIOSFODNN7EXAMPLE",
        "dozjgNryP4J3jVmNHl0w5N",
        "glpat-Ab12Cd34Ef56Gh78Ij90",
        "xoxb-1234567890-abcdefABCDEF",
        "s3cr3t-pass",
    ] {
        assert!(!everything.contains(secret), "{secret} reached the record");
    }
    assert!(
        everything.contains("DB_PASSWORD=[redacted: secret value]"),
        "{everything}"
    );
    assert!(
        everything.contains("[redacted: GitHub token]"),
        "{everything}"
    );
    assert!(
        everything.contains("[redacted: private key]"),
        "{everything}"
    );
    assert!(
        everything.contains("[redacted: Anthropic API key]"),
        "{everything}"
    );

    // A token that got in behind anvil's back (a commit made with git on top of the line).
    let tip = tip(&alice, &debate, "main");
    let blob = {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(alice.record_dir())
            .args(["hash-object", "-w", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            format!("leaked {TOKEN}\n").as_bytes(),
        )
        .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let tree = alice.git(&["rev-parse", &format!("{tip}^{{tree}}")]);
    let mut listing = alice.git(&["ls-tree", tree.trim()]);
    listing.push_str(&format!("100644 blob {}\tleak.md\n", blob.trim()));
    let new_tree = {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(alice.record_dir())
            .arg("mktree")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), listing.as_bytes()).unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let leaked = alice.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit-tree",
        new_tree.trim(),
        "-p",
        &tip,
        "-m",
        "round 1 note: leak",
    ]);
    alice.git(&[
        "update-ref",
        &format!("refs/anvil/{debate}/main"),
        leaked.trim(),
    ]);
    let refused = alice.anvil(&["push"]);
    assert_eq!(refused.code, Some(1), "{}", refused.describe());
    insta::assert_snapshot!(
        "push_refuses_a_leaked_token",
        Filters::of(&alice)
            .path(&bare, "[remote]")
            .run("anvil push", &refused)
    );
    assert!(anvil_refs(&bare).is_empty(), "nothing was pushed");
    alice.anvil(&["push", "--allow-secrets"]).ok();
    assert_eq!(anvil_refs(&bare).len(), 1);
}

/// With `[secrets] redact = false` a credential is recorded as it is (and the person told so);
/// `anvil push` then refuses to send it and sends nothing.
#[test]
fn with_redaction_off_a_secret_is_recorded_and_the_push_refuses_it() {
    const TOKEN: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let alice = clone(bare.to_str().unwrap(), "Alice");
    std::fs::write(
        alice.anvil_home().join("config.toml"),
        "[secrets]\nredact = false\n",
    )
    .unwrap();
    let started = alice.start(&["Keep it?", "--rounds", "1", "--session", ALICE]);
    let run = alice.hook(&json!({
        "session_id": ALICE, "cwd": alice.path(), "hook_event_name": "Stop",
        "stop_hook_active": true, "last_assistant_message": format!("the token {TOKEN}"),
    }));
    insta::assert_snapshot!(
        "hook_reply_with_redaction_off",
        Filters::of(&alice).redact(&pretty(&run))
    );
    assert!(alice.git(&["log", "-p", "--all"]).contains(TOKEN));
    let refused = alice.anvil(&["push"]);
    assert_eq!(refused.code, Some(1), "{}", refused.describe());
    assert!(
        refused.stderr.contains(&started.debate),
        "{}",
        refused.describe()
    );
    insta::assert_snapshot!(
        "push_refuses_a_recorded_token",
        Filters::of(&alice)
            .path(&bare, "[remote]")
            .run("anvil push", &refused)
    );
    assert!(anvil_refs(&bare).is_empty(), "nothing was pushed");
}

/// With `[secrets] redact = false`, a seat's last words that carry a key are recorded as they
/// are in the `Anvil-Seat-Fallback` trailer (the host took the seat over); `anvil push` refuses
/// to send them and names where: the commit, its phase and the trailer.
#[test]
fn a_push_names_the_phase_and_the_trailer_that_hold_a_credential() {
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let alice = clone(bare.to_str().unwrap(), "Alice");
    std::fs::write(
        alice.anvil_home().join("config.toml"),
        "[secrets]\nredact = false\n",
    )
    .unwrap();
    let agent = FakeQwen::failing(&format!("Error: 401 Bad credentials for {token}"));
    let (var, bin) = agent.env();
    alice.start(&[
        "Keep it?",
        "--rounds",
        "1",
        "--seat",
        "critic=qwen",
        "--fallback",
        "host",
        "--session",
        ALICE,
    ]);
    for text in ["For.", "Against, by the host.", "The synthesis."] {
        alice
            .hook_with_env(
                &stop_input(&alice, ALICE, text),
                &[(var, bin.to_str().unwrap())],
            )
            .ok();
    }
    let refused = alice.anvil(&["push"]);
    assert_eq!(refused.code, Some(1), "{}", refused.describe());
    insta::assert_snapshot!(
        "push_refuses_a_token_in_a_fallback_trailer",
        Filters::of(&alice)
            .path(&bare, "[remote]")
            .run("anvil push", &refused)
    );
    assert!(anvil_refs(&bare).is_empty(), "nothing was pushed");
}

/// The hook's reply as JSON spread over lines, for a snapshot.
fn pretty(run: &Run) -> String {
    let reply = run
        .json()
        .unwrap_or_else(|| panic!("a reply: {}", run.describe()));
    serde_json::to_string_pretty(&reply).unwrap()
}
