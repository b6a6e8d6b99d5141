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
