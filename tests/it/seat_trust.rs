//! A seat's command line, environment and prompt are anvil's, not the repository's nor the
//! host session's: a model's name or a session id that an agent could read as an option of
//! its own is refused wherever it comes from (the real Qwen Code CLI, which reads `-m
//! --openai-base-url=URL` as a base URL, against two scripted servers: nothing reaches the
//! second); a seat's process gets what its agent reads and never the host session's
//! variables (a fake agent that logs what it receives); the debate reaches a seat on its
//! stdin, never in its arguments, however long it is, and a seat's long reply is cut before
//! it becomes the host's prompt; `anvil run --context` at the material's cap runs; and the
//! seats a committed config chose are named when a debate starts.

use std::time::Duration;

use crate::e2e_seats::{debater, phases, want};
use crate::e2e_session_seats::{answer_of, spawn_stop_with, start_seated, stop_input};
use crate::support::agents::{AgentsHome, Cli};
use crate::support::anvil::{Project, Run, phase_text, turn_tag};
use crate::support::claude::new_session_id;
use crate::support::fake_agent::{FakeAgent, codex_events};
use crate::support::model_server::{Agent, ModelServer, Reply, Turn};
use crate::support::snap::Filters;

/// A thread id as Codex names one.
const THREAD: &str = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

/// What Claude Code puts in the environment of the hooks it runs (2.1.332), and what a person's
/// shell holds besides: other providers' keys, a gateway's token the config passes on, anvil's
/// own settings.
const HOST_ENV: &[(&str, &str)] = &[
    ("CLAUDECODE", "1"),
    ("CLAUDE_CODE_ENTRYPOINT", "cli"),
    (
        "CLAUDE_CODE_SESSION_ID",
        "0199ffff-0000-7000-8000-000000000001",
    ),
    ("CLAUDE_PROJECT_DIR", "/somewhere/else"),
    ("AI_AGENT", "claude-code_2-1-332_harness"),
    ("GEMINI_API_KEY", "gemini-key-of-the-person"),
    ("MY_GATEWAY_TOKEN", "passed-by-the-config"),
    ("UNRELATED_SETTING", "not-passed"),
    ("ANVIL_SEAT_TIMEOUT", "120"),
];

fn run_anvil(project: &Project, home: &AgentsHome, args: &[&str], env: &[(&str, &str)]) -> Run {
    Run::from_output(
        project
            .command(args)
            .env_clear()
            .envs(home.env())
            .envs(env.iter().copied())
            .output()
            .expect("run anvil"),
    )
}

#[test]
fn a_seat_gets_what_its_agent_reads_and_nothing_of_the_host_session() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    std::fs::write(
        project.anvil_home().join("config.toml"),
        "[seats]\nenv = [\"MY_GATEWAY_*\"]\n",
    )
    .unwrap();
    let codex = FakeAgent::new(
        &codex_events(THREAD, "The critic's case."),
        "codex-cli 0.169.0",
    );
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex:gpt-5.4");
    let program = codex.program().display().to_string();
    let env = [HOST_ENV, &[("ANVIL_CODEX_BIN", program.as_str())]].concat();
    let (run, answer) = answer_of(spawn_stop_with(
        &project,
        &home,
        &stop_input(&project, &session, "The advocate's case."),
        &env,
    ));
    assert!(answer["reason"].is_string(), "{}", run.describe());
    assert_eq!(
        phases(&project.commits(&started.debate)),
        want(&[("advocate", "1", "host"), ("critic", "1", "codex")])
    );
    let calls = codex.calls();
    assert_eq!(calls.len(), 1, "one turn of the seat");
    let call = &calls[0];
    // The host session's variables and anvil's own never reach a seat; nor does another
    // provider's key, nor what nothing names.
    for name in [
        "CLAUDECODE",
        "CLAUDE_CODE_ENTRYPOINT",
        "CLAUDE_CODE_SESSION_ID",
        "CLAUDE_PROJECT_DIR",
        "AI_AGENT",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "GEMINI_API_KEY",
        "COPILOT_PROVIDER_API_KEY",
        "UNRELATED_SETTING",
        "ANVIL_SEAT_TIMEOUT",
        "ANVIL_CODEX_BIN",
        "ANVIL_CLAUDE_BIN",
    ] {
        assert_eq!(call.var(name), None, "{name} reached the seat");
    }
    // What Codex reads reaches it: its key, the key its config.toml's provider names, its
    // home; what the config passes; what any program needs; the seat's own mark.
    assert_eq!(
        call.var("OPENAI_API_KEY"),
        Some(crate::support::agents::API_KEY)
    );
    assert_eq!(
        call.var("SCRIPTED_API_KEY"),
        Some(crate::support::agents::API_KEY)
    );
    assert_eq!(call.var("MY_GATEWAY_TOKEN"), Some("passed-by-the-config"));
    assert_eq!(
        call.var("HOME").map(std::path::Path::new),
        Some(home.path())
    );
    assert!(call.var("PATH").is_some());
    assert_eq!(call.var("ANVIL_SEAT"), Some("critic"));
    // The debate is on stdin; the arguments are anvil's, each value glued to its flag.
    assert!(
        call.stdin.contains("The advocate's case."),
        "{}",
        call.stdin
    );
    assert_eq!(
        call.argv,
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox=read-only",
            "--model=gpt-5.4",
            "--",
            "-"
        ]
    );
}

/// `n` lines of about a hundred bytes, each naming `who` and its number.
fn long_text(who: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{who} line {i:05}: {}\n", "evidence ".repeat(9)))
        .collect()
}

#[test]
fn a_150_kb_phase_reaches_a_seat_on_stdin_and_its_long_reply_is_cut_before_the_host_reads_it() {
    // The host's opening is 150 KB: more than one argument may hold.
    let opening = long_text("advocate", 1500);
    assert!(opening.len() > 150_000);
    let server = ModelServer::start(move |turn: &Turn| match turn_tag(turn) {
        Some(tag) if tag.key() == "ADVOCATE r1" => {
            Reply::text(format!("{}\n\n{opening}", phase_text(&tag)))
        }
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("ok"),
    });
    let home = AgentsHome::new(&server);
    let project = Project::new();
    // The critic answers 300 KB.
    let reply = long_text("critic", 3000);
    let codex = FakeAgent::new(&codex_events(THREAD, &reply), "codex-cli 0.169.0");
    let program = codex.program().display().to_string();
    let run = run_anvil(
        &project,
        &home,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "1",
            "--seat",
            "critic=codex",
        ],
        &[("ANVIL_CODEX_BIN", &program)],
    )
    .ok();
    let debate = project.only_debate();
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "codex"),
            ("synthesizer", "1", "host"),
        ]),
        "{}",
        run.describe()
    );
    // The seat heard the whole opening, on stdin; nothing of the debate was an argument.
    let calls = codex.calls();
    assert_eq!(calls.len(), 1);
    let call = &calls[0];
    assert!(call.stdin.len() > 150_000, "{}", call.stdin.len());
    for line in ["advocate line 00000", "advocate line 01499"] {
        assert!(call.stdin.contains(line), "{line} did not reach the seat");
    }
    let argv = call.argv.join(" ");
    assert!(
        !argv.contains("advocate line") && !argv.contains("GraphQL"),
        "{argv}"
    );
    // The host's synthesis prompt has the critic's reply cut to the bound, and says so.
    let synthesis = server
        .turns_of(Agent::Claude)
        .into_iter()
        .find(|t| turn_tag(t).is_some_and(|tag| tag.is_synthesis()))
        .expect("the host played the synthesis");
    let prompt = synthesis.prompt();
    assert!(prompt.contains("critic line 00000"));
    assert!(!prompt.contains("critic line 02999"), "the whole reply");
    assert!(
        prompt.contains(&format!(
            "[… cut by anvil: the seat's reply was {} bytes; the first",
            reply.len()
        )),
        "the cut is said"
    );
}

#[test]
fn anvil_run_with_context_material_at_its_cap_runs() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let src = project.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for name in ["a", "b", "c"] {
        std::fs::write(
            src.join(format!("{name}.rs")),
            long_text(&format!("// file {name}"), 800),
        )
        .unwrap();
    }
    let run = run_anvil(
        &project,
        &home,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "1",
            "--context",
            "src/",
        ],
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    // The host's first prompt carried the material at its cap: more than an argument holds.
    let first = &server.turns_of(Agent::Claude)[0];
    let prompt = first.prompt();
    assert!(prompt.len() > 128 * 1024, "{}", prompt.len());
    assert!(prompt.contains("// file a line 00000"));
    assert!(prompt.contains("cut by anvil"), "the cut material says so");
}

#[test]
fn a_committed_config_cannot_point_a_qwen_seat_at_another_endpoint() {
    let first = ModelServer::start(debater);
    let second = ModelServer::start(debater);
    let home = AgentsHome::new(&first);
    let project = Project::new();
    let elsewhere = format!("--openai-base-url={}/v1", second.base_url());

    // The threat, with the real CLI and no anvil: Qwen Code takes the model for its option
    // and sends the turn, and the person's key, to the second server.
    let threat = home.run(
        Cli::Qwen,
        project.path(),
        &["-p", "Say hi.", "-o", "json", "-m", &elsewhere],
        Duration::from_secs(180),
    );
    assert!(
        !second.requests().is_empty(),
        "qwen did not read -m {elsewhere} as its own option: {}",
        threat.describe()
    );
    let reached = second.requests().len();

    // A committed config that names it is refused before anything runs, with the key named.
    std::fs::write(
        project.anvil_home().join("config.toml"),
        format!("[seats]\ncritic = \"qwen:{elsewhere}\"\n"),
    )
    .unwrap();
    let refused = run_anvil(
        &project,
        &home,
        &["run", "Should we adopt GraphQL?", "--rounds", "1"],
        &[],
    );
    insta::assert_snapshot!(
        "config_seat_with_an_option_for_model",
        Filters::of(&project)
            .text(&second.base_url(), "[second]")
            .run(
                "anvil run \"Should we adopt GraphQL?\" --rounds 1",
                &refused
            )
    );
    std::fs::remove_file(project.anvil_home().join("config.toml")).unwrap();

    // So is a flag, and a session to resume that is an option.
    let flag = run_anvil(
        &project,
        &home,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--seat",
            &format!("critic=qwen:{elsewhere}"),
        ],
        &[],
    );
    assert_ne!(flag.code, Some(0), "{}", flag.describe());
    assert!(flag.stderr.contains("starts with `-`"), "{}", flag.stderr);
    let resume = run_anvil(
        &project,
        &home,
        &["seats", "--try", "qwen", &format!("--resume={elsewhere}")],
        &[],
    );
    assert_ne!(resume.code, Some(0), "{}", resume.describe());
    assert!(
        resume.stderr.contains("qwen was not run: the session"),
        "{}",
        resume.stderr
    );

    // A seat named plainly plays at the person's own endpoint, with its model.
    let played = run_anvil(
        &project,
        &home,
        &["seats", "--json", "--try", "qwen:qwen-seat-model"],
        &[],
    )
    .ok();
    assert!(
        played.stdout.contains("\"agent\": \"qwen\""),
        "{}",
        played.stdout
    );
    let turns = first.turns_of(Agent::Qwen);
    assert!(!turns.is_empty() && turns.iter().all(|t| t.model == "qwen-seat-model"));
    assert_eq!(
        second.requests().len(),
        reached,
        "nothing of anvil's reached the second server"
    );
    assert!(first.turns_of(Agent::Claude).is_empty());
}

#[test]
fn the_seats_a_committed_config_chose_are_named_when_a_debate_starts() {
    let project = Project::new();
    std::fs::write(
        project.anvil_home().join("config.toml"),
        "[seats]\ncritic = \"codex:gpt-5.4\"\nsynthesizer = \"qwen\"\nenv = [\"MY_GATEWAY_TOKEN\"]\n",
    )
    .unwrap();
    // A --seat for a role wins over the config's, and is not the config's choice.
    let started = project
        .anvil(&[
            "start",
            "Should we adopt GraphQL?",
            "--rounds",
            "1",
            "--seat",
            "synthesizer=copilot",
        ])
        .ok();
    insta::assert_snapshot!(
        "start_names_the_configs_seats",
        Filters::of(&project).redact(&started.stderr)
    );
    // In Claude Code (`/anvil`), the command's output shows it before the prompt.
    let slash = project
        .anvil(&["start", "Should we use REST?", "--rounds", "1", "--slash"])
        .ok();
    let first = slash.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("anvil: .anvil/config.toml seats critic by codex"),
        "{}",
        slash.stdout
    );
}
