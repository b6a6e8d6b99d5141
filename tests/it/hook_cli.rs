//! `anvil hook stop` as Claude Code runs it: the built binary, hand-built hook JSON on stdin,
//! and the record read back with plain `git`. No Claude here.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::anvil::{Project, Run, Started, find_tag};
use crate::support::snap::Filters;

const S1: &str = "11111111-1111-4111-8111-111111111111";
const S2: &str = "22222222-2222-4222-8222-222222222222";

/// The Stop hook input Claude Code sends.
fn input(project: &Project, session: &str, message: Option<&str>, transcript: &Path) -> Value {
    let mut v = json!({
        "session_id": session,
        "transcript_path": transcript,
        "cwd": project.path(),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": true,
    });
    if let Some(m) = message {
        v["last_assistant_message"] = json!(m);
    }
    v
}

fn no_transcript(project: &Project) -> std::path::PathBuf {
    project.path().join("no-such-transcript.jsonl")
}

/// Runs the hook with `message` as the phase text; the answer must be one JSON line.
fn stop(project: &Project, session: &str, message: &str) -> Run {
    let run = project.hook(&input(
        project,
        session,
        Some(message),
        &no_transcript(project),
    ));
    assert_one_json_line(&run);
    run
}

/// The hook exits 0 and stdout carries exactly one JSON object and a newline, nothing else.
fn assert_one_json_line(run: &Run) -> Value {
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(run.stdout.ends_with('\n'), "{}", run.describe());
    assert_eq!(run.stdout.matches('\n').count(), 1, "{}", run.describe());
    let value = run.json().expect("an answer");
    assert!(value.is_object(), "{value}");
    value
}

fn assert_silent(run: &Run) {
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.stdout, "", "{}", run.describe());
}

/// The prompt of a block answer, and its tag's phase key.
fn blocked(run: &Run) -> (String, String) {
    let v = assert_one_json_line(run);
    assert_eq!(v["decision"], "block", "{v}");
    let reason = v["reason"].as_str().expect("a reason").to_owned();
    let key = find_tag(&reason)
        .unwrap_or_else(|| panic!("no tag in {reason}"))
        .key();
    (reason, key)
}

fn message_of(run: &Run) -> String {
    let v = assert_one_json_line(run);
    assert!(v.get("decision").is_none(), "{v}");
    v["systemMessage"]
        .as_str()
        .unwrap_or_else(|| panic!("no systemMessage in {v}"))
        .to_owned()
}

fn start_bound(project: &Project, session: &str) -> Started {
    project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "3",
        "--session",
        session,
    ])
}

#[test]
fn without_an_anvil_home_the_hook_says_nothing() {
    let project = Project::empty();
    assert_silent(&project.hook(&input(&project, S1, Some("hi"), &no_transcript(&project))));
    // Not even for input it cannot read: this is not anvil's project.
    assert_silent(&project.anvil_stdin(&["hook", "stop"], b"{not json"));
    assert!(!project.path().join(".anvil").exists());
}

#[test]
fn a_session_without_a_debate_is_left_alone() {
    let project = Project::new();
    assert_silent(&project.hook(&input(&project, S1, Some("hi"), &no_transcript(&project))));
    // Another session's debate is not this session's business.
    let other = start_bound(&project, S2);
    let state = project.state_md(&other.debate);
    assert_silent(&project.hook(&input(&project, S1, Some("hi"), &no_transcript(&project))));
    assert_eq!(project.state_md(&other.debate), state);
    assert_eq!(project.commits(&other.debate).len(), 1);
    // And input without a session id records nothing.
    let mut anonymous = input(&project, S2, Some("hi"), &no_transcript(&project));
    anonymous.as_object_mut().unwrap().remove("session_id");
    assert_silent(&project.hook(&anonymous));
    assert_eq!(project.commits(&other.debate).len(), 1);
}

#[test]
fn malformed_stdin_lets_claude_stop_with_a_system_message() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let mut said = String::new();
    for garbage in [&b"{not json"[..], b"", b"\xff\xfe", b"[1,2,3]"] {
        let run = project.anvil_stdin(&["hook", "stop"], garbage);
        let message = message_of(&run);
        said.push_str(&format!(
            "{:?}\n{message}\n\n",
            String::from_utf8_lossy(garbage)
        ));
    }
    // Each names anvil and what to run.
    insta::assert_snapshot!(
        "notice_unreadable_input",
        Filters::of(&project).redact(&said)
    );
    assert_eq!(project.commits(&started.debate).len(), 1);
}

#[test]
fn without_a_message_the_last_assistant_text_of_the_transcript_is_recorded() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let transcript = project.path().join("session.jsonl");
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": started.prompt}}),
        json!({"type": "assistant", "message": {"id": "msg_0", "role": "assistant",
            "content": [{"type": "text", "text": "an earlier answer"}]}}),
        json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
            "content": [{"type": "thinking", "thinking": "hmm", "signature": "x"}]}}),
        json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
            "content": [{"type": "text", "text": "ADVOCATE from the transcript"}]}}),
        json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                "input": {"command": "ls"}}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text).unwrap();

    let run = project.hook(&input(&project, S1, None, &transcript));
    let (_, next) = blocked(&run);
    assert_eq!(next, "CRITIC r1");
    let stored = project.git_show_bytes(&started.debate, "001-advocate.response.md");
    assert_eq!(
        String::from_utf8(stored).unwrap(),
        "ADVOCATE from the transcript"
    );
}

#[test]
fn without_a_message_or_transcript_the_prompt_is_handed_out_again_and_nothing_recorded() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let run = project.hook(&input(&project, S1, None, &no_transcript(&project)));
    let (reason, key) = blocked(&run);
    assert_eq!(key, "ADVOCATE r1");
    assert_eq!(reason, started.prompt);
    assert_eq!(project.commits(&started.debate).len(), 1);
    // An empty message counts as none.
    let run = project.hook(&input(&project, S1, Some("  \n"), &no_transcript(&project)));
    assert_eq!(blocked(&run).0, started.prompt);
    assert_eq!(project.commits(&started.debate).len(), 1);
    assert!(
        !project
            .line_dir(&started.debate, "main")
            .join("incoming.md")
            .exists()
    );
}

#[test]
fn a_five_megabyte_message_is_recorded_byte_for_byte() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let mut text = String::from("# ADVOCATE\n\n");
    let mut i = 0u64;
    while text.len() < 5 * 1024 * 1024 {
        text.push_str(&format!(
            "{i}: «quotes» \"json\" \\back\\slash\t tab — ünïcødé 🦀 <anvil-x/> ```\n"
        ));
        i += 1;
    }
    let run = stop(&project, S1, &text);
    assert_eq!(blocked(&run).1, "CRITIC r1");
    let stored = project.git_show_bytes(&started.debate, "001-advocate.response.md");
    assert_eq!(stored.len(), text.len());
    assert!(stored == text.as_bytes(), "the stored response differs");
    project.assert_fsck_clean();
}

#[test]
fn the_same_stop_twice_is_recorded_once_and_answered_the_same() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let first = stop(&project, S1, "ADVOCATE: the case for.");
    let second = stop(&project, S1, "ADVOCATE: the case for.");
    assert_eq!(blocked(&first).1, "CRITIC r1");
    // A block, as an older client reads it: the next prompt and one line for the person.
    insta::assert_snapshot!(
        "reply_block",
        Filters::of(&project).redact(&serde_json::to_string_pretty(&first.json()).unwrap())
    );
    assert_eq!(first.stdout, second.stdout);
    let commits = project.commits(&started.debate);
    assert_eq!(commits.len(), 2, "{commits:#?}");
    let transcript = project.transcript_md(&started.debate);
    assert_eq!(transcript.matches("ADVOCATE: the case for.").count(), 1);
}

#[test]
fn a_damaged_state_file_keeps_the_text_and_says_how_to_resume() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let dir = project.line_dir(&started.debate, "main");
    std::fs::write(
        dir.join("state.md"),
        "---\nformat: 1\nprogress: [unclosed\n---\nhand-edited\n",
    )
    .unwrap();
    let text = "ADVOCATE: this must not be lost.";
    let message = message_of(&stop(&project, S1, text));
    insta::assert_snapshot!(
        "notice_damaged_state_file",
        Filters::of(&project).redact(&message)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("incoming.md")).unwrap(),
        text
    );
    assert_eq!(project.commits(&started.debate).len(), 1);
}

#[test]
fn a_cancelled_debate_lets_claude_stop_and_unbinds_the_session() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let binding = project.anvil_home().join("sessions").join(S1);
    assert!(binding.exists());
    project.anvil(&["cancel", &started.debate]).ok();
    assert!(!binding.exists(), "cancel leaves the session bound");
    assert_silent(&stop_raw(&project, S1, "ADVOCATE: too late"));

    // A binding left behind (a cancel racing a stop) is dropped at the next stop.
    std::fs::write(&binding, format!("{}\n", started.line)).unwrap();
    assert_silent(&stop_raw(&project, S1, "ADVOCATE: too late"));
    assert!(!binding.exists());
    let commits = project.commits(&started.debate);
    assert_eq!(commits.last().unwrap().phase(), "cancel", "{commits:#?}");
    assert_eq!(commits.len(), 2);
}

fn stop_raw(project: &Project, session: &str, message: &str) -> Run {
    project.hook(&input(
        project,
        session,
        Some(message),
        &no_transcript(project),
    ))
}

#[test]
fn the_completion_marker_goes_to_synthesis_but_not_from_inside_a_code_fence() {
    let project = Project::new();
    let settled = start_bound(&project, S1);
    let run = stop(&project, S1, "It is settled.\n\n<anvil-complete/>");
    assert_eq!(blocked(&run).1, "SYNTHESIS");
    let commits = project.commits(&settled.debate);
    assert_eq!(commits[1].trailer("Anvil-Complete"), Some("yes"));
    assert_eq!(commits[1].trailer("Anvil-Next"), Some("synthesizer"));

    let fenced = start_bound(&project, S2);
    let run = stop(
        &project,
        S2,
        "To end early one writes:\n\n```\n<anvil-complete/>\n```\n",
    );
    assert_eq!(blocked(&run).1, "CRITIC r1");
    let commits = project.commits(&fenced.debate);
    assert_eq!(commits[1].trailer("Anvil-Complete"), None);
}

#[test]
fn a_session_bound_to_one_debate_never_touches_another() {
    let project = Project::new();
    let a = start_bound(&project, S1);
    let b = start_bound(&project, S2);
    // And one waiting for a session, started from a terminal.
    let c = project.start(&["Should we adopt Kafka?", "--rounds", "1"]);
    let files = |s: &Started| {
        let dir = project.line_dir(&s.debate, "main");
        (
            std::fs::read(dir.join("state.md")).unwrap(),
            std::fs::read(dir.join("transcript.md")).unwrap(),
        )
    };
    let (b_before, c_before) = (files(&b), files(&c));

    for (text, next) in [
        ("ADVOCATE r1 of A", "CRITIC r1"),
        ("CRITIC r1 of A", "ADVOCATE r2"),
        ("ADVOCATE r2 of A", "CRITIC r2"),
    ] {
        let run = stop(&project, S1, text);
        let (reason, key) = blocked(&run);
        assert_eq!(key, next);
        assert_eq!(find_tag(&reason).unwrap().line, a.line);
    }
    assert_eq!(project.commits(&a.debate).len(), 4);
    assert_eq!(project.commits(&b.debate).len(), 1);
    assert_eq!(project.commits(&c.debate).len(), 1);
    assert_eq!(files(&b), b_before);
    assert_eq!(files(&c), c_before);
    let sessions = project.anvil_home().join("sessions");
    assert_eq!(
        std::fs::read_to_string(sessions.join(S2)).unwrap().trim(),
        b.line
    );
    assert!(
        project.anvil_home().join("pending").join(&c.line).exists(),
        "the terminal-started debate is no longer waiting"
    );
}

/// SessionStart, as Claude Code runs it when a session starts in the project.
fn session_start(project: &Project, session: &str) {
    let run = project.anvil_stdin(
        &["hook", "session-start"],
        json!({ "session_id": session, "cwd": project.path(), "hook_event_name": "SessionStart", "source": "startup" })
            .to_string()
            .as_bytes(),
    );
    assert_silent(&run);
}

/// A session that was already at work when a line began waiting (it started before) is never
/// handed it, however often it stops; a session that starts after it takes it.
#[test]
fn a_waiting_debate_never_goes_to_a_session_that_was_already_at_work() {
    let project = Project::new();
    session_start(&project, S2);
    // File times are the clock here: make sure the line begins waiting later.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let started = project.start(&["Should we adopt Rust?", "--rounds", "1"]);
    let transcript = project.path().join("busy.jsonl");
    std::fs::write(
        &transcript,
        [
            json!({"type": "user", "message": {"role": "user", "content": "refactor the parser"}}),
            json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                "content": [{"type": "text", "text": "I finished the refactor."}]}}),
        ]
        .map(|l| format!("{l}\n"))
        .concat(),
    )
    .unwrap();
    for _ in 0..2 {
        let run = project.hook(&input(
            &project,
            S2,
            Some("I finished the refactor."),
            &transcript,
        ));
        assert_silent(&run);
    }
    assert!(
        !project.anvil_home().join("sessions").join(S2).exists(),
        "the busy session is bound to nothing"
    );
    let status = project.anvil(&["status"]).ok();
    insta::assert_snapshot!(
        "status_waiting_for_a_session",
        Filters::of(&project).redact(&status.stdout)
    );

    // A session that starts now takes it.
    session_start(&project, S1);
    let run = project.hook(&input(&project, S1, Some("hello there"), &transcript));
    assert_eq!(blocked(&run).1, "ADVOCATE r1");
    assert!(
        project
            .state_md(&started.debate)
            .contains(&format!("session: {S1}"))
    );
}

#[test]
fn a_new_session_claims_a_waiting_debate_and_gets_the_whole_prompt_first() {
    let project = Project::new();
    let started = project.start(&["Should we adopt Rust?", "--rounds", "1"]);
    session_start(&project, S1);
    // The session's transcript shows it never saw the debate.
    let transcript = project.path().join("session.jsonl");
    std::fs::write(
        &transcript,
        [
            json!({"type": "user", "message": {"role": "user", "content": "hello"}}),
            json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
                "content": [{"type": "text", "text": "hello there"}]}}),
        ]
        .map(|l| format!("{l}\n"))
        .concat(),
    )
    .unwrap();
    let run = project.hook(&input(&project, S1, Some("hello there"), &transcript));
    let (reason, key) = blocked(&run);
    assert_eq!(key, "ADVOCATE r1");
    // The whole first prompt, question included.
    insta::assert_snapshot!(
        "claimed_first_prompt",
        Filters::of(&project).redact(&reason)
    );
    assert_eq!(
        project.commits(&started.debate).len(),
        1,
        "'hello there' was recorded"
    );
    assert!(
        project
            .state_md(&started.debate)
            .contains(&format!("session: {S1}"))
    );
    // Nobody else can have it now.
    assert_silent(&stop_raw(&project, S2, "hello there"));
    // The next stop records the advocate.
    let run = stop(&project, S1, "ADVOCATE r1: yes");
    assert_eq!(blocked(&run).1, "CRITIC r1");
}

/// Regression: Claude Code writes its transcript a moment after the turn ends, so the first stop
/// of `claude -p "$(anvil start …)"` found no transcript, took the session for one that never saw
/// the prompt, and handed the same phase out twice.
#[test]
fn a_claiming_session_whose_transcript_lags_has_its_phase_recorded() {
    let project = Project::new();
    let started = project.start(&["Should we adopt Rust?", "--rounds", "1"]);
    let transcript = project.path().join("lagging.jsonl");
    let content = [
        json!({"type": "user", "message": {"role": "user", "content": started.prompt}}),
        json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
            "content": [{"type": "text", "text": "ADVOCATE r1: yes"}]}}),
    ]
    .map(|l| format!("{l}\n"))
    .concat();
    let writer = {
        let transcript = transcript.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(150));
            std::fs::write(&transcript, content).unwrap();
        })
    };
    let run = project.hook(&input(&project, S1, Some("ADVOCATE r1: yes"), &transcript));
    writer.join().unwrap();
    assert_eq!(blocked(&run).1, "CRITIC r1");
    assert_eq!(project.commits(&started.debate).len(), 2);
}

#[test]
fn after_a_compaction_the_next_prompt_brings_the_session_up_to_date() {
    let project = Project::new();
    start_bound(&project, S1);
    let (critic, _) = blocked(&stop(&project, S1, "ADVOCATE r1: first argument."));
    assert!(!critic.contains("<debate-so-far>"), "{critic}");

    // Claude Code compacts the conversation: anvil's SessionStart hook hears of it.
    let run = project.anvil_stdin(
        &["hook", "session-start"],
        json!({ "session_id": S1, "cwd": project.path(), "hook_event_name": "SessionStart", "source": "compact" })
            .to_string()
            .as_bytes(),
    );
    assert_silent(&run);
    let (advocate, key) = blocked(&stop(&project, S1, "CRITIC r1: a rebuttal."));
    assert_eq!(key, "ADVOCATE r2");
    // The debate so far, both phases, comes back in the prompt.
    insta::assert_snapshot!(
        "prompt_after_compaction",
        Filters::of(&project).redact(&advocate)
    );

    // A plain start or resume of the session changes nothing.
    let run = project.anvil_stdin(
        &["hook", "session-start"],
        json!({ "session_id": S1, "cwd": project.path(), "source": "resume" })
            .to_string()
            .as_bytes(),
    );
    assert_silent(&run);
    let (critic, _) = blocked(&stop(&project, S1, "ADVOCATE r2: more."));
    assert!(!critic.contains("<debate-so-far>"), "{critic}");
}

#[test]
fn the_safety_copy_of_a_phase_is_gone_once_the_phase_is_recorded() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let incoming = project
        .line_dir(&started.debate, "main")
        .join("incoming.md");
    blocked(&stop(&project, S1, "ADVOCATE r1: recorded."));
    assert!(!incoming.exists());
    project.anvil(&["cancel"]).ok();
    assert_silent(&project.hook(&input(
        &project,
        S1,
        Some("after the end"),
        &no_transcript(&project),
    )));
    assert!(!incoming.exists());
}

#[test]
fn two_hooks_seeing_the_same_stop_at_once_record_it_once() {
    // Claude Code runs the Stop hooks of every settings file, in parallel.
    let project = Project::new();
    let started = start_bound(&project, S1);
    let stdin = input(
        &project,
        S1,
        Some("ADVOCATE r1: said once, heard twice."),
        &no_transcript(&project),
    )
    .to_string();
    let spawn = || {
        let mut child = project
            .command(&["hook", "stop"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("run the hook");
        let mut pipe = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut pipe, stdin.as_bytes()).unwrap();
        drop(pipe);
        child
    };
    let (a, b) = (spawn(), spawn());
    let outputs: Vec<String> = [a, b]
        .into_iter()
        .map(|c| String::from_utf8(c.wait_with_output().unwrap().stdout).unwrap())
        .collect();
    let reasons: Vec<Value> = outputs
        .iter()
        .map(|o| serde_json::from_str::<Value>(o.trim()).expect("hook JSON")["reason"].clone())
        .collect();
    assert_eq!(reasons[0], reasons[1], "{outputs:?}");
    assert!(
        reasons[0].as_str().unwrap().contains("Critic"),
        "{outputs:?}"
    );
    let phases: Vec<String> = project
        .commits(&started.debate)
        .iter()
        .map(|c| c.phase().to_owned())
        .collect();
    assert_eq!(phases, ["start", "advocate"]);
}

/// On a client that takes `additionalContext` and `terminalSequence` (Claude Code 2.1.197 as
/// its transcript names it), each stop carries signals for the terminal: the title and the
/// progress while the debate runs, a notification when it ends; only sequences Claude Code's
/// allowlist passes. `[notify] terminal = false` turns them off.
#[test]
fn a_recent_client_gets_terminal_signals_unless_they_are_turned_off() {
    let project = Project::new();
    let started = start_bound(&project, S1);
    let transcript = project.path().join("t.jsonl");
    std::fs::write(
        &transcript,
        format!(
            "{}\n",
            json!({"type": "assistant", "version": "2.1.197", "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "x"}]}})
        ),
    )
    .unwrap();
    let run = project.hook(&input(&project, S1, Some("ADVOCATE r1: yes."), &transcript));
    let v = assert_one_json_line(&run);
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "Stop", "{v}");
    let seq = v["terminalSequence"].as_str().expect("signals");
    // The reply as Claude Code reads it: the next prompt as additional context, the title and
    // the progress as terminal sequences.
    // (The title names the debate without its date.)
    let mut shown = v.clone();
    shown["terminalSequence"] = json!(seq.replace(&started.debate[9..], "[debate without date]"));
    insta::assert_snapshot!(
        "reply_with_context_and_terminal_signals",
        Filters::of(&project).redact(&serde_json::to_string_pretty(&shown).unwrap())
    );
    assert!(
        !seq.contains(&started.debate[..9]),
        "the title drops the date: {seq:?}"
    );

    std::fs::write(
        project.anvil_home().join("config.toml"),
        "[notify]\nterminal = false\n",
    )
    .unwrap();
    let run = project.hook(&input(&project, S1, Some("CRITIC r1: no."), &transcript));
    let v = assert_one_json_line(&run);
    assert!(v.get("terminalSequence").is_none(), "{v}");
    assert!(
        v["hookSpecificOutput"]["additionalContext"].is_string(),
        "{v}"
    );
}

/// Issue 24: at the first stop of a Claude Code 2.1.332 session the transcript ends with
/// records that name no version (`last-prompt`, `atis-latch`) behind a long attachment, and
/// the phase went out as a `block`, which 2.1.332 shows as "Stop hook reported a problem".
/// The hook now tells the client from `AI_AGENT` in its environment (for its own session
/// only), else from the newest transcript entry that names a version.
#[test]
fn the_first_stop_of_a_new_client_session_is_progress_not_a_problem() {
    let first_stop = |dir: &std::path::Path, versioned: bool| {
        let transcript = dir.join("first-stop.jsonl");
        let entry = |kind: &str| {
            let mut entry = json!({"type": kind, "message": {"id": "m", "role": "assistant",
                "content": [{"type": "text", "text": "x"}]}});
            if versioned {
                entry["version"] = json!("2.1.332");
            }
            entry.to_string()
        };
        let attachment = if versioned {
            json!({"type": "attachment", "version": "2.1.332", "a": "x".repeat(60_000)})
        } else {
            json!({"type": "attachment", "a": "x".repeat(60_000)})
        };
        let text = format!(
            "{}\n{attachment}\n{}\n{}\n{}\n",
            entry("assistant"),
            json!({"type": "last-prompt", "lastPrompt": "/anvil Q"}),
            json!({"type": "atis-latch"}),
            json!({"type": "last-prompt", "lastPrompt": "/anvil Q"}),
        );
        std::fs::write(&transcript, text).unwrap();
        transcript
    };
    let form = |run: &Run| {
        let v = assert_one_json_line(run);
        if v["hookSpecificOutput"]["additionalContext"].is_string() {
            "context"
        } else {
            assert_eq!(v["decision"], "block", "{v}");
            "block"
        }
    };
    let agent = ("AI_AGENT", "claude-code_2-1-332_harness");

    // The environment names the client; the transcript names none.
    let project = Project::new();
    start_bound(&project, S1);
    let bare = first_stop(project.path(), false);
    let stop = input(&project, S1, Some("ADVOCATE r1: yes."), &bare);
    let run = project.hook_with_env(&stop, &[agent, ("CLAUDE_CODE_SESSION_ID", S1)]);
    assert_eq!(form(&run), "context");

    // No environment: the newest entry that names a version, behind the metadata.
    let project = Project::new();
    start_bound(&project, S1);
    let versioned = first_stop(project.path(), true);
    let stop_v = input(&project, S1, Some("ADVOCATE r1: yes."), &versioned);
    assert_eq!(form(&project.hook_with_env(&stop_v, &[])), "context");

    // An AI_AGENT inherited from another session speaks for nothing: a block, which every
    // client reads.
    let project = Project::new();
    start_bound(&project, S1);
    let bare = first_stop(project.path(), false);
    let stop = input(&project, S1, Some("ADVOCATE r1: yes."), &bare);
    let other = "11111111-2222-4333-8444-555555555555";
    let run = project.hook_with_env(&stop, &[agent, ("CLAUDE_CODE_SESSION_ID", other)]);
    assert_eq!(form(&run), "block");
}

/// A host that answers two phases in the same words (a canned refusal): Claude Code's
/// transcript names each turn by its message id, so the second turn is the critic's phase,
/// not a repeat of the advocate's; the same turn delivered again (a second hook) is still a
/// repeat, recorded once.
#[test]
fn a_host_turn_in_the_words_of_the_phase_before_is_a_phase_of_its_own() {
    const REFUSAL: &str = "I can't help with that.";
    let project = Project::new();
    let started = start_bound(&project, S1);
    let transcript = project.path().join("session.jsonl");
    // The turn that ended, at the end of the session's transcript, as message `id`.
    let stop_turn = |id: &str| {
        let lines = [
            json!({"type": "user", "message": {"role": "user", "content": "the prompt"}}),
            json!({"type": "assistant", "message": {"id": id, "model": "claude-x",
                "content": [{"type": "text", "text": REFUSAL}],
                "usage": {"input_tokens": 10, "output_tokens": 5}}}),
        ];
        let mut text = std::fs::read_to_string(&transcript).unwrap_or_default();
        if !text.contains(id) {
            text.extend(lines.iter().map(|l| format!("{l}\n")));
            std::fs::write(&transcript, text).unwrap();
        }
        project.hook(&input(&project, S1, Some(REFUSAL), &transcript))
    };
    assert_eq!(blocked(&stop_turn("msg_advocate")).1, "CRITIC r1");
    // A second Stop hook of the same turn: answered as before, nothing recorded.
    assert_eq!(blocked(&stop_turn("msg_advocate")).1, "CRITIC r1");
    assert_eq!(project.commits(&started.debate).len(), 2);
    // The next turn, in the same words: the critic's phase.
    assert_eq!(blocked(&stop_turn("msg_critic")).1, "ADVOCATE r2");
    let commits = project.commits(&started.debate);
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(phases, ["start", "advocate", "critic"]);
}
