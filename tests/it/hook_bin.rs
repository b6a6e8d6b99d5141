//! The hook binary `anvil-hook`, which `anvil install` wires: it answers like `anvil hook …`
//! (kept for older installations), and links none of the command line.

use serde_json::json;

use crate::support::anvil::{Project, anvil_bin, anvil_hook_bin};

const SESSION: &str = "33333333-3333-4333-8333-333333333333";

fn stop_input(project: &Project, text: &str) -> serde_json::Value {
    json!({
        "session_id": SESSION,
        "cwd": project.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": text,
    })
}

#[test]
fn anvil_hook_and_the_older_anvil_hook_stop_drive_the_same_debate() {
    let project = Project::new();
    let started = project.start(&["Should we?", "--rounds", "1", "--session", SESSION]);
    // The advocate through anvil-hook, the critic through `anvil hook stop`.
    let first = project
        .hook(&stop_input(&project, "The advocate's case."))
        .ok();
    let block = first.json().expect("a block answer");
    assert_eq!(block["decision"], "block", "{}", first.describe());
    let second = project
        .anvil_stdin(
            &["hook", "stop"],
            stop_input(&project, "The critic's case.")
                .to_string()
                .as_bytes(),
        )
        .ok();
    assert_eq!(second.json().expect("a block answer")["decision"], "block");
    let phases: Vec<String> = project
        .commits(&started.debate)
        .iter()
        .map(|c| c.phase().to_owned())
        .collect();
    assert_eq!(phases, ["start", "advocate", "critic"]);
}

#[test]
fn anvil_hook_is_silent_where_anvil_has_nothing_to_do() {
    let project = Project::empty();
    for word in ["stop", "session-start", "prompt-expansion"] {
        let run = project
            .hook_program(
                &[word],
                stop_input(&project, "hello").to_string().as_bytes(),
            )
            .ok();
        assert_eq!(run.stdout, "", "{word}: {}", run.describe());
    }
}

#[test]
fn anvil_hook_rejects_unknown_words_with_usage() {
    let project = Project::empty();
    for args in [&["bogus"][..], &[][..], &["stop", "extra"][..]] {
        let run = project.hook_program(args, b"{}");
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.describe());
        assert!(
            run.stderr.contains("usage: anvil-hook"),
            "{}",
            run.describe()
        );
        assert_eq!(run.stdout, "");
    }
}

/// The hook binary links the library's hook path only: no clap (the command line's parser,
/// whose set-up cost more than an idle hook's whole work).
#[test]
fn anvil_hook_links_no_command_line_parser() {
    // As text, so that the search is the standard library's (optimised even in test builds).
    let text = |path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let hook = text(anvil_hook_bin());
    let cli = text(anvil_bin());
    // The same check finds clap in `anvil`, so it can fail.
    assert!(cli.contains("clap_builder"));
    assert!(!hook.contains("clap_builder"));
    assert!(!hook.contains("clap_complete"));
}

/// Started without standard output and error (a client that closed them), the hook records the
/// phase, and what it says goes nowhere: not into the first file it opens, which would take
/// the closed descriptor's place.
#[test]
fn anvil_hook_started_without_stdout_and_stderr_records_the_phase_and_writes_into_no_file() {
    let project = Project::new();
    let started = project.start(&["Should we?", "--rounds", "1", "--session", SESSION]);
    let mut hook = std::process::Command::new("sh");
    hook.args(["-c", r#"exec "$0" stop >&- 2>&-"#])
        .arg(anvil_hook_bin())
        .current_dir(project.path())
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("AI_AGENT")
        .env_remove("CLAUDE_PROJECT_DIR");
    let run = crate::support::anvil::run_with_stdin(
        hook,
        stop_input(&project, "The advocate's case.")
            .to_string()
            .as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let phases: Vec<String> = project
        .commits(&started.debate)
        .iter()
        .map(|c| c.phase().to_owned())
        .collect();
    assert_eq!(phases, ["start", "advocate"]);
    // The critic's prompt, which the hook printed, is in no file of the project.
    let fsck = std::process::Command::new("git")
        .args(["fsck", "--strict", "--no-dangling"])
        .env("GIT_DIR", project.anvil_home().join("record"))
        .output()
        .expect("run git fsck");
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    for file in walk(&project.anvil_home()) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !bytes.windows(10).any(|w| w == b"\"decision\""),
            "the hook's answer went into {}",
            file.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
