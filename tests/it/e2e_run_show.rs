//! What `anvil run` shows of a debate, with the real agent CLIs against the scripted server:
//! nothing from Claude Code that the person did not ask for, in a workspace nobody trusted
//! where `anvil install` wrote the project's settings (on both pinned clients); the debate as
//! plain text on a pipe; one JSON event per line with `--json`.

use crate::both_clients;
use crate::support::agents::AgentsHome;
use crate::support::anvil::{Project, Run, phase_text, run_with_stdin, turn_tag};
use crate::support::claude::Client;
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::snap::Filters;

/// Each phase in a few lines of markdown, its tag's text first (a list, some emphasis), with a
/// position for the debating phases and an open point for the critic: what a person reads.
fn debater(turn: &Turn) -> Reply {
    let Some(tag) = turn_tag(turn) else {
        return Reply::text("ok");
    };
    let mut text = format!(
        "{}\n\n## Why\n\n- **cost**: the *migration* takes a quarter\n- `schema` drift is real\n",
        phase_text(&tag)
    );
    match tag.key().split(' ').next() {
        Some("ADVOCATE") => text.push_str(
            "\n<anvil-position stance=\"for\" confidence=\"0.7\">Adopt it for the new \
             services only.</anvil-position>\n",
        ),
        Some("CRITIC") => text.push_str(
            "\n<anvil-position stance=\"against\" confidence=\"0.6\">Keep REST until the \
             clients ask.</anvil-position>\n<anvil-open>Who owns the schema?</anvil-open>\n",
        ),
        _ => {}
    }
    Reply::text(text)
}

/// `anvil run ARGS` in `project`, its stdout a pipe, with `client` as the host and a Claude seat.
fn run(project: &Project, home: &AgentsHome, client: Client, args: &[&str]) -> Run {
    Run::from_output(
        project
            .command(args)
            .env_clear()
            .envs(home.env())
            .env("ANVIL_CLAUDE_BIN", client.bin())
            .output()
            .expect("run anvil"),
    )
}

both_clients!(a_seated_run_in_an_untrusted_installed_workspace_says_nothing_from_claude_code);
/// Issue 35: each headless `claude` printed "Ignoring 8 permissions.allow entries from
/// .claude/settings.json: this workspace has not been trusted…", right after `anvil install`
/// wrote them. The same Claude Code, started as a person would in the same workspace, still
/// says it (the case is real here); `anvil run`, with the host and a seat both Claude Code,
/// says nothing of it, and its stderr holds anvil's own lines only.
fn a_seated_run_in_an_untrusted_installed_workspace_says_nothing_from_claude_code(client: Client) {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::installed();
    let plain = std::process::Command::new(client.bin())
        .args(["-p", "hello", "--output-format", "json"])
        .current_dir(project.path())
        .env_clear()
        .envs(home.env())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run claude");
    let said = String::from_utf8_lossy(&plain.stderr);
    assert!(
        said.contains("permissions.allow") && said.contains("not been trusted"),
        "Claude Code, run by hand here, warns of the untrusted workspace: {said}"
    );

    let run = run(
        &project,
        &home,
        client,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "2",
            "--seat",
            "critic=claude",
        ],
    )
    .ok();
    for text in [&run.stdout, &run.stderr] {
        assert!(!text.contains("permissions.allow"), "{}", run.describe());
        assert!(!text.contains("trusted"), "{}", run.describe());
    }
    for line in run.stderr.lines() {
        assert!(
            line.starts_with("anvil: "),
            "{line:?} in\n{}",
            run.describe()
        );
    }
    // Both the host and the seat played: the run really started Claude Code each way.
    let commits = project.commits(&project.only_debate());
    assert!(
        commits
            .iter()
            .any(|c| c.phase() == "critic" && c.trailer("Anvil-Agent") == Some("claude")),
        "{commits:#?}"
    );
    assert!(
        project
            .state_md(&project.only_debate())
            .contains("status: done")
    );
}

/// `anvil run` of two rounds in `project`, interactive, with a Codex critic, `extra` options and
/// `env`, its stdout a pipe; `steering` typed at the pause. It must succeed.
fn two_rounds_with_a_codex_critic(
    project: &Project,
    extra: &[&str],
    env: &[(&str, &str)],
    steering: &str,
) -> Run {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let mut args = vec![
        "run",
        "Should we adopt GraphQL?",
        "--rounds",
        "2",
        "--interactive",
        "--seat",
        "critic=codex:codex-seat-model",
    ];
    args.extend(extra);
    let mut command = project.command(&args);
    command
        .env_clear()
        .envs(home.env())
        .envs(env.iter().copied());
    run_with_stdin(command, format!("{steering}\n").as_bytes()).ok()
}

/// A seated, interactive run with a Codex critic, its stdout a pipe (and `NO_COLOR` set): the
/// debate as plain text, not one escape sequence in it. Each phase under its header (round,
/// role, who plays it: the agent, its version, its model), its markdown as plain words, its
/// position as words; the pause shows where each seat stands and the open points before it
/// asks; the end says where the debate ends, and the report's path is the last line.
#[test]
fn a_piped_run_shows_the_debate_as_plain_text() {
    let project = Project::new();
    let run = two_rounds_with_a_codex_critic(
        &project,
        &[],
        &[("NO_COLOR", "1")],
        "focus on migration cost",
    );
    assert!(!run.stdout.contains('\x1b'), "{}", run.describe());
    let filters = Filters::of(&project)
        .without_usage()
        .pattern(r"claude \d+\.\d+\.\d+", "claude [version]")
        .pattern(r"\(claude-[a-z0-9-]+\)", "([model])");
    insta::assert_snapshot!("piped_run", filters.redact(&run.stdout));
    let report = std::path::PathBuf::from(run.stdout.lines().last().unwrap_or_default());
    assert!(report.is_file(), "{}", run.describe());
}

/// `--json`: one JSON object per line on stdout and nothing else, in the order things
/// happen: the start, then each phase's header before its text and its text before it is
/// recorded, the pause with where each seat stands, the end with the report.
#[test]
fn json_events_are_one_per_line_in_the_order_things_happen() {
    let project = Project::new();
    let run = two_rounds_with_a_codex_critic(&project, &["--json"], &[], "");
    let events: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(
        kinds.len(),
        events.len(),
        "each event is named: {events:#?}"
    );
    assert_eq!(kinds.first(), Some(&"start"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"done"), "{kinds:?}");
    // Each phase: its header, then its text, then its record, in the phases' order.
    let recorded: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e["event"] == "recorded")
        .map(|e| (e["step"].as_u64().unwrap(), e["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        recorded,
        [
            (1, "advocate"),
            (2, "critic"),
            (4, "advocate"),
            (5, "critic"),
            (6, "synthesizer")
        ],
        "{kinds:?}"
    );
    for (step, _) in &recorded {
        let at = |kind: &str| {
            events
                .iter()
                .position(|e| e["event"] == kind && e["step"].as_u64() == Some(*step))
        };
        let (header, text, record) = (at("phase"), at("text"), at("recorded"));
        assert!(
            header.is_some() && header < text && text < record,
            "step {step}: {header:?} {text:?} {record:?} in {kinds:?}"
        );
    }
    let critic = events
        .iter()
        .find(|e| e["event"] == "phase" && e["role"] == "critic")
        .unwrap();
    assert_eq!(critic["agent"], "codex");
    assert_eq!(critic["model"], "codex-seat-model");
    assert_eq!(critic["version"], "0.169.0");
    let first = &events.iter().find(|e| e["event"] == "recorded").unwrap();
    assert_eq!(first["position"]["stance"], "for", "{first}");
    assert!(
        !first["markdown"].as_str().unwrap().contains("<anvil-"),
        "tags as words: {first}"
    );
    let pause = events.iter().find(|e| e["event"] == "pause").unwrap();
    assert_eq!(pause["round"], 1);
    assert_eq!(
        pause["positions"].as_array().map(Vec::len),
        Some(2),
        "{pause}"
    );
    assert_eq!(pause["open"][0]["text"], "Who owns the schema?", "{pause}");
    let done = events.last().unwrap();
    assert!(
        std::path::Path::new(done["report"].as_str().unwrap()).is_file(),
        "{done}"
    );
    assert_eq!(done["status"], "done");
}

/// `anvil run` in a real terminal (tmux, 100 columns): a Codex critic, two rounds, a pause.
/// Each phase's header and text are on the screen before the next phase starts (the screen is
/// read by the model server when the next phase's request reaches it); the pause shows the
/// round before it asks; a terminal gets styles; nothing of Claude Code's own reaches it.
#[test]
fn a_run_in_a_terminal_shows_each_phase_before_the_next_starts() {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    let sockets = tempfile::tempdir().unwrap();
    let socket = sockets.path().join("tmux.sock");
    let tmux = {
        let socket = socket.clone();
        move |args: &[&str]| {
            std::process::Command::new("tmux")
                .arg("-S")
                .arg(&socket)
                .args(args)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run tmux")
        }
    };
    let screen = {
        let tmux = tmux.clone();
        move || {
            let out = tmux(&["capture-pane", "-p", "-J", "-S", "-2000"]);
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
    };
    // The screen as each phase's request arrives, by the phase's key.
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let server = {
        let (seen, screen) = (seen.clone(), screen.clone());
        ModelServer::start(move |turn| {
            if let Some(tag) = turn_tag(turn) {
                seen.lock().unwrap().push((tag.key(), screen()));
            }
            debater(turn)
        })
    };
    let home = AgentsHome::new(&server);
    let project = Project::installed();
    let mut args: Vec<String> = [
        "new-session",
        "-d",
        "-x",
        "100",
        "-y",
        "200",
        "-c",
        &project.path().display().to_string(),
    ]
    .map(str::to_owned)
    .into();
    for (name, value) in home.env() {
        args.push("-e".into());
        args.push(format!("{name}={}", value.to_string_lossy()));
    }
    args.extend(["-e".into(), "TERM=xterm-256color".into()]);
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    // The PATH goes on the command line too: the pane's shell may set its own.
    let path = home
        .env()
        .into_iter()
        .find(|(name, _)| *name == "PATH")
        .map(|(_, path)| path.to_string_lossy().into_owned())
        .unwrap_or_default();
    args.push(format!(
        "PATH={} {} run 'Should we adopt GraphQL?' --rounds 2 --interactive \
         --seat critic=codex:codex-seat-model; sleep 60",
        quote(&path),
        quote(&crate::support::anvil::anvil_bin().display().to_string())
    ));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let started = tmux(&args);
    assert!(started.status.success(), "{started:?}");

    let deadline = Instant::now() + Duration::from_secs(120);
    let mut asked = None;
    let mut last = String::new();
    while Instant::now() < deadline && !last.contains("phases ·") {
        std::thread::sleep(Duration::from_millis(200));
        last = screen();
        if asked.is_none() && last.contains("Steer round 2") {
            asked = Some(last.clone());
            tmux(&["send-keys", "Enter"]);
        }
    }
    let styled = tmux(&["capture-pane", "-p", "-e", "-J", "-S", "-2000"]);
    tmux(&["kill-server"]);
    assert!(
        last.contains("phases ·"),
        "the run ended:\n{last}\n{}",
        String::from_utf8_lossy(&styled.stderr)
    );

    let seen = seen.lock().unwrap();
    let at = |key: &str| {
        seen.iter()
            .find(|(k, _)| k == key)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| panic!("no request for {key}: {seen:?}"))
    };
    let before_critic = at("CRITIC r1");
    for shown in [
        "Round 1 · Advocate — claude",
        "ADVOCATE r1 of",
        "Position: for 0.7: Adopt it for the new services only.",
    ] {
        assert!(
            before_critic.contains(shown),
            "{shown:?} in\n{before_critic}"
        );
    }
    assert!(
        !before_critic.contains("Round 1 · Critic"),
        "{before_critic}"
    );
    let before_round_2 = at("ADVOCATE r2");
    for shown in [
        "Round 1 · Critic — codex 0.169.0 (codex-seat-model)",
        "CRITIC r1 of",
        "Open point: Who owns the schema?",
    ] {
        assert!(
            before_round_2.contains(shown),
            "{shown:?} in\n{before_round_2}"
        );
    }
    let before_synthesis = at("SYNTHESIS");
    assert!(
        before_synthesis.contains("Round 2 · Critic — codex")
            && before_synthesis.contains("CRITIC r2 of"),
        "{before_synthesis}"
    );
    // The pause showed the round, then asked.
    let asked = asked.expect("the pause asked");
    let (stands, ask) = (
        asked.find("Round 1 is over\n").expect(&asked),
        asked.find("Steer round 2").unwrap(),
    );
    assert!(stands < ask, "{asked}");
    assert!(
        asked[stands..ask].contains("Critic (codex 0.169.0 (codex-seat-model)): against 0.6"),
        "{asked}"
    );
    assert!(last.contains("Where the debate ends"), "{last}");
    assert!(
        !last.contains("trusted") && !last.contains("permissions.allow"),
        "{last}"
    );
    // A terminal gets styles: the headers are bold.
    let styled = String::from_utf8_lossy(&styled.stdout);
    assert!(styled.contains("\u{1b}[1m"), "{styled}");
}
