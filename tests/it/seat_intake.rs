//! Whatever an agent says of itself or of its failure is taken in like any outside text: its
//! last words, the model and version it reports, pass the one credential intake before they are
//! kept, shown or pushed, and the terminal's neutraliser before a terminal, a notice or a title
//! shows them. The agent is a fake Qwen Code (`support::fake_qwen`: no real CLI can be made to
//! fail with an API key, a URL password and escape sequences on cue), driven by the real hook
//! and by `anvil run` with the real Claude Code as the host; what is checked is what a person
//! and a teammate get: the hook's notice, the terminal, `git log` of the record, `anvil push`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::e2e_seats::debater;
use crate::e2e_session_seats::stop_input;
use crate::support::agents::AgentsHome;
use crate::support::anvil::{Project, Run};
use crate::support::fake_qwen::FakeQwen;
use crate::support::model_server::ModelServer;
use crate::support::snap::Filters;

const SESSION: &str = "5a1e0c3b-7d2f-4e6a-9b8c-1d2e3f4a5b6c";

/// The password in the URL the agent's error names.
const URL_PASSWORD: &str = "Xk9pq2Lm77wQ";

/// An OpenAI project key, built from its documented shape (no literal here is one).
fn api_key() -> String {
    let body: String = "a1B2c3D4e5F6g7H8i9J0".chars().cycle().take(48).collect();
    format!("sk-proj-{body}")
}

/// What the failing agent prints last: a key and a URL password from its provider's error,
/// and escape sequences that would retitle the window (OSC 0), write the clipboard (OSC 52)
/// and clear the screen.
fn hostile_last_words() -> String {
    format!(
        "Error: 401 Unauthorized from https://deploy:{URL_PASSWORD}@api.example.com/v1 (key {})\n\
         \x1b]0;owned\x07\x1b]52;c;SGVsbG8=\x07\x1b[2Jretry later",
        api_key()
    )
}

/// Panics if `text` holds a credential of the agent's, or anything a terminal would obey.
#[track_caller]
fn assert_clean(what: &str, text: &str) {
    assert!(
        !text.contains(&api_key()),
        "{what}: the API key is in\n{text}"
    );
    assert!(
        !text.contains(URL_PASSWORD),
        "{what}: the URL's password is in\n{text}"
    );
    let obeyed = text.chars().find(|&c| {
        (c.is_control() && c != '\n' && c != '\t')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    });
    assert_eq!(obeyed, None, "{what}: a raw control character in\n{text:?}");
}

/// The escape sequences, as a terminal is shown them.
const SHOWN: [&str; 3] = ["\\x1b]0;owned\\x07", "\\x1b]52;c;SGVsbG8=\\x07", "\\x1b[2J"];

/// A seat whose agent fails with a key, a URL password and escape sequences in its last words:
/// with `--fallback host`, the hook's notice shows them cleaned and made visible, the host
/// plays the phase, and the `Anvil-Seat-Fallback` trailer (and all else `git log` shows of the
/// record) holds neither credential.
#[test]
fn a_failing_seats_last_words_reach_the_notice_and_the_fallback_trailer_cleaned() {
    let project = Project::new();
    let agent = FakeQwen::failing(&hostile_last_words());
    let (var, bin) = agent.env();
    let env = [(var, bin.to_str().unwrap())];
    let started = project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "1",
        "--seat",
        "critic=qwen",
        "--fallback",
        "host",
        "--session",
        SESSION,
    ]);
    let advocate =
        project.hook_with_env(&stop_input(&project, SESSION, "The advocate's case."), &env);
    assert_clean("the hook's answer", &advocate.stdout);
    let answer = advocate
        .json()
        .unwrap_or_else(|| panic!("a JSON answer: {}", advocate.describe()));
    let notice = answer["systemMessage"].as_str().unwrap_or_default();
    assert_clean("the notice", notice);
    insta::assert_snapshot!(
        "notice_of_a_failing_seat_with_credentials_and_escapes",
        Filters::of(&project).redact(notice)
    );
    // The host is handed the critic's phase (the seat failed, `--fallback host`).
    let prompt = answer["reason"].as_str().unwrap_or_default();
    assert!(prompt.contains("Critic"), "{answer}");

    for text in ["The critic's case, by the host.", "The synthesis."] {
        let run = project.hook_with_env(&stop_input(&project, SESSION, text), &env);
        assert_clean("the hook's answer", &run.stdout);
    }
    let commits = project.commits(&started.debate);
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    let why = critic
        .trailer("Anvil-Seat-Fallback")
        .expect("the fallback is recorded");
    assert!(
        why.contains("qwen failed")
            && why.contains("[redacted: OpenAI API key]")
            && why.contains("https://deploy:[redacted: password in a URL]@api.example.com/v1"),
        "{why}"
    );
    let log = project.git(&["log", "--all", "-p"]);
    assert!(
        !log.contains(&api_key()) && !log.contains(URL_PASSWORD),
        "{log}"
    );
    for live in [
        project.state_md(&started.debate),
        project.transcript_md(&started.debate),
    ] {
        assert!(!live.contains(&api_key()) && !live.contains(URL_PASSWORD));
    }
}

/// A seat that answers, reporting a model name and a version that carry a token and escape
/// sequences: the hook's notice names the model cleaned and visible, and the record's
/// trailers, the transcript and `anvil show` hold neither the token nor a raw escape.
#[test]
fn a_seats_reported_model_and_version_reach_the_notice_and_the_record_cleaned() {
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let project = Project::new();
    let agent = FakeQwen::answering(
        "CRITIC r1: the schema will ossify.",
        &format!("qwen3-coder\x1b]0;owned\x07 {token}"),
        "0.24.4\x1b[2J",
    );
    let (var, bin) = agent.env();
    let env = [(var, bin.to_str().unwrap())];
    let started = project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "1",
        "--seat",
        "critic=qwen",
        "--session",
        SESSION,
    ]);
    let run = project.hook_with_env(&stop_input(&project, SESSION, "The advocate's case."), &env);
    assert!(!run.stdout.contains(&token), "{}", run.stdout);
    let notice = crate::support::anvil::system_message(&run);
    assert!(
        !notice.contains('\u{1b}') && !notice.contains('\u{7}'),
        "{notice:?}"
    );
    insta::assert_snapshot!(
        "notice_of_a_seat_whose_model_name_carries_a_token_and_escapes",
        Filters::of(&project).redact(&notice)
    );
    let commits = project.commits(&started.debate);
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    assert_eq!(critic.trailer("Anvil-Agent"), Some("qwen"));
    let model = critic
        .trailer("Anvil-Model")
        .expect("the model is recorded");
    assert!(model.contains("[redacted: GitHub token]"), "{model}");
    assert!(!project.git(&["log", "--all", "-p"]).contains(&token));
    assert!(!project.transcript_md(&started.debate).contains(&token));
    let show = project
        .command(&["show", &started.debate])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(!show.contains(&token) && !show.contains('\u{1b}'), "{show}");
}

/// The real Claude Code, behind a script that first says on stderr what `said` holds, as a
/// CLI's warnings and errors go there.
fn talking_claude(dir: &Path, said: &str) -> PathBuf {
    std::fs::write(dir.join("said"), said).unwrap();
    let script = dir.join("claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat \"$(dirname \"$0\")/said\" >&2\nexec \"{}\" \"$@\"\n",
            crate::support::claude::claude_bin().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// `anvil run` with the real Claude Code as the host: a seat that fails with credentials and
/// escape sequences in its last words stops the run with an error that shows them cleaned and
/// visible, and so is what Claude itself prints on stderr; run again with `--fallback host`,
/// the host plays the phase, the terminal shows the same, and the record keeps neither
/// credential.
#[test]
fn anvil_run_shows_a_failing_seats_last_words_cleaned_and_records_none_of_them() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let agent = FakeQwen::failing(&hostile_last_words());
    let wrapper = tempfile::tempdir().unwrap();
    let claude = talking_claude(
        wrapper.path(),
        &format!("claude says: {}\n", hostile_last_words().replace('\n', " ")),
    );
    let run = |args: &[&str]| {
        Run::from_output(
            project
                .command(args)
                .env_clear()
                .envs(home.env())
                .env("NO_COLOR", "1")
                .env("ANVIL_CLAUDE_BIN", &claude)
                .envs([agent.env()])
                .output()
                .expect("run anvil"),
        )
    };
    // Progress lines (--quiet), so that the seat's turn can be found on stderr.
    let stopped = run(&[
        "run",
        "Should we adopt GraphQL?",
        "--rounds",
        "1",
        "--seat",
        "critic=qwen",
        "--quiet",
    ]);
    assert_eq!(stopped.code, Some(1), "{}", stopped.describe());
    assert_clean("anvil run's terminal", &stopped.stderr);
    assert_clean("anvil run's output", &stopped.stdout);
    let said = stopped
        .stderr
        .lines()
        .find(|l| l.starts_with("claude says: "))
        .unwrap_or_else(|| panic!("claude's stderr is relayed: {}", stopped.stderr));
    for shown in SHOWN {
        assert!(said.contains(shown), "{shown}: {said}");
    }
    assert!(
        said.contains("https://deploy:[redacted: password in a URL]@api.example.com"),
        "{said}"
    );
    // From the seat's turn on (Claude's own lines interleave with the progress before it).
    let seat = stopped
        .stderr
        .find("· played by qwen")
        .and_then(|at| stopped.stderr[..at].rfind('\n'))
        .unwrap_or_else(|| panic!("the seat's turn is shown: {}", stopped.stderr));
    insta::assert_snapshot!(
        "run_stopped_by_a_seat_whose_last_words_carry_credentials_and_escapes",
        Filters::of(&project)
            .without_usage()
            .redact(&stopped.stderr[seat + 1..])
    );
    let debate = project.only_debate();
    let done = run(&["run", "--line", &debate, "--fallback", "host"]);
    assert_eq!(done.code, Some(0), "{}", done.describe());
    assert_clean("anvil run's terminal", &done.stderr);
    assert!(
        done.stderr.contains("failed: qwen failed (exit status 1)")
            && done.stderr.contains("the host plays it (--fallback host)"),
        "{}",
        done.stderr
    );
    let commits = project.commits(&debate);
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    let why = critic
        .trailer("Anvil-Seat-Fallback")
        .expect("the fallback is recorded");
    assert!(why.contains("[redacted: OpenAI API key]"), "{why}");
    let log = project.git(&["log", "--all", "-p"]);
    assert!(!log.contains(&api_key()) && !log.contains(URL_PASSWORD));
}
