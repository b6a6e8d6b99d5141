//! Debates hosted by agents other than Claude Code, for real: in a fresh `HOME` and project,
//! `anvil install --agent NAME`, then the agent's own headless run of the prompt `anvil start`
//! printed, against the scripted server. The agent's own Stop hook (Qwen Code's `Stop`, Gemini
//! CLI's `AfterAgent`, Codex's `Stop`) runs `anvil-hook stop`, which records each phase and
//! hands the next prompt back with `decision: block`, until the synthesis.

use std::time::Duration;

use crate::e2e_seats::run_anvil;
use crate::support::agents::{AgentsHome, Cli, Output};
use crate::support::anvil::{Project, Run, Tag, find_tag, phase_text};
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::snap::Filters;

/// The anvil prompt a turn answers: the one a shell tool's result brought back (what `anvil
/// start` printed, run by a custom command), else the last one it was handed (Codex wraps a
/// hook's reason in `<hook_prompt>`, Gemini CLI puts its `<session_context>` first, Claude
/// Code hands it as context: the tag is found in each).
fn asked(turn: &Turn) -> Option<Tag> {
    let last = |text: &str| text.rfind("[anvil ").and_then(|at| find_tag(&text[at..]));
    turn.tool_results()
        .iter()
        .find_map(|(_, text, _)| last(text))
        .or_else(|| last(&turn.prompt()))
}

/// Every main turn answers the anvil prompt it was handed.
pub(crate) fn debater(turn: &Turn) -> Reply {
    match asked(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("nothing to debate"),
    }
}

/// The keys of the phases the main turns answered, in order (`ADVOCATE r1`, …).
fn answered(server: &ModelServer) -> Vec<String> {
    server
        .main_turns()
        .iter()
        .map(|t| asked(t).map_or_else(|| format!("(no prompt) {}", t.prompt()), |tag| tag.key()))
        .collect()
}

/// The phases of a two-round debate as recorded (`PHASE ROUND`), and the prompts its model
/// answers, in order.
const TWO_ROUNDS: [&str; 6] = [
    "start 0",
    "advocate 1",
    "critic 1",
    "advocate 2",
    "critic 2",
    "synthesizer 2",
];
const TWO_ROUNDS_ASKED: [&str; 5] = [
    "ADVOCATE r1",
    "CRITIC r1",
    "ADVOCATE r2",
    "CRITIC r2",
    "SYNTHESIS",
];

/// A project in a fresh `HOME` where `anvil install --agent NAME` ran; its output.
pub(crate) fn installed(home: &AgentsHome, cli: Cli) -> (Project, Run) {
    let project = Project::new();
    let run = run_anvil(&project, home, &["install", "--agent", cli.name()]).ok();
    (project, run)
}

/// The debate reached its synthesis through the host's hook: every phase recorded once, each
/// host phase naming the host (`Anvil-Host`), and no request after the synthesis.
pub(crate) fn assert_hosted(
    project: &Project,
    server: &ModelServer,
    debate: &str,
    host: &str,
    run: &Output,
) {
    let state = project.state_md(debate);
    assert!(
        state.contains("status: done"),
        "{state}\n{}\n{:?}",
        run.describe(),
        answered(server)
    );
    let commits = project.commits(debate);
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(phases, ["start", "advocate", "critic", "synthesizer"]);
    for commit in &commits[1..] {
        assert_eq!(
            commit.trailer("Anvil-Host"),
            Some(host),
            "{}",
            commit.phase()
        );
        assert!(
            commit.trailer("Anvil-Model").is_some(),
            "{}",
            commit.phase()
        );
    }
    let all = answered(server);
    assert_eq!(
        all[all.len().saturating_sub(3)..],
        ["ADVOCATE r1", "CRITIC r1", "SYNTHESIS"],
        "one request per phase, none after the synthesis: {all:?}"
    );
    // Each phase is the turn's own text, never the answers before it again.
    let transcript = project.transcript_md(debate);
    for said in ["ADVOCATE r1 of", "CRITIC r1 of", "SYNTHESIS of"] {
        assert_eq!(transcript.matches(said).count(), 1, "{said}: {transcript}");
    }
}

#[test]
fn qwen_code_hosts_a_debate_to_its_synthesis_through_its_stop_hook() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, install) = installed(&home, Cli::Qwen);
    insta::assert_snapshot!(
        "install_qwen",
        Filters::of(&project).redact(&install.stderr)
    );
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let run = home.run(
        Cli::Qwen,
        project.path(),
        &["-p", &started.prompt],
        Duration::from_secs(300),
    );
    assert_hosted(&project, &server, &started.debate, "qwen 0.24.4", &run);
    let uninstall = run_anvil(&project, &home, &["uninstall", "--agent", "qwen"]).ok();
    insta::assert_snapshot!(
        "uninstall_qwen",
        Filters::of(&project).redact(&uninstall.stderr)
    );
    // What the install wrote is gone; Qwen Code has added a `$version` of its own to the
    // settings it found, which stays.
    for file in [".qwen/commands/anvil.md", ".qwen/anvil-install.json"] {
        assert!(!project.path().join(file).exists(), "{file}");
    }
    let settings = std::fs::read_to_string(project.path().join(".qwen/settings.json")).unwrap();
    assert_eq!(settings, "{\n  \"$version\": 4\n}\n");
}

/// `anvil doctor`'s line about the host's trust, in a run with only the agents' environment.
fn trust_line(project: &Project, home: &AgentsHome) -> String {
    let doctor = run_anvil(project, home, &["doctor"]);
    doctor
        .stdout
        .lines()
        .chain(doctor.stderr.lines())
        .find(|l| l.contains("trust"))
        .unwrap_or_else(|| panic!("no word of trust: {}", doctor.describe()))
        .to_owned()
}

/// Gemini CLI trusts no folder until told: its headless run refuses the project (exit 55) and
/// `anvil doctor` says why and how to fix it; once the folder is trusted the way it says, the
/// debate runs to its synthesis through the `AfterAgent` hook.
#[test]
fn gemini_cli_hosts_a_debate_once_the_folder_is_trusted() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, install) = installed(&home, Cli::Gemini);
    insta::assert_snapshot!(
        "install_gemini",
        Filters::of(&project).redact(&install.stderr)
    );
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let gemini = |home: &AgentsHome| {
        home.run_env(
            Cli::Gemini,
            project.path(),
            &["-m", "gemini-host-model", "-p", &started.prompt],
            &[("GEMINI_CLI_NO_RELAUNCH", "true")],
            Duration::from_secs(300),
        )
    };

    let untrusted = trust_line(&project, &home);
    assert!(
        untrusted.contains("does not trust this folder"),
        "{untrusted}"
    );
    let refused = gemini(&home);
    assert_eq!(refused.code, Some(55), "{}", refused.describe());
    assert!(server.main_turns().is_empty());

    // The fix doctor names: the folder trusted in ~/.gemini/trustedFolders.json.
    let project_dir = project.path().canonicalize().unwrap();
    std::fs::write(
        home.path().join(".gemini/trustedFolders.json"),
        serde_json::json!({ project_dir.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let trusted = trust_line(&project, &home);
    assert!(trusted.contains("trusts the project"), "{trusted}");
    let run = gemini(&home);
    assert_hosted(&project, &server, &started.debate, "gemini", &run);
    assert!(
        project.commits(&started.debate)[1..]
            .iter()
            .all(|c| c.trailer("Anvil-Model") == Some("gemini-host-model"))
    );
    run_anvil(&project, &home, &["uninstall", "--agent", "gemini"]).ok();
    assert!(!project.path().join(".gemini/commands/anvil.toml").exists());
}

/// Codex skips a hook nobody trusted, silently: the debate does not move, and `anvil doctor`
/// says why and how to fix it; once the hook is trusted, the debate runs to its synthesis
/// through Codex's Stop hook.
#[test]
fn codex_hosts_a_debate_once_its_hook_is_trusted() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, install) = installed(&home, Cli::Codex);
    insta::assert_snapshot!(
        "install_codex",
        Filters::of(&project).redact(&install.stderr)
    );
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let codex = |home: &AgentsHome, extra: &[&str]| {
        let mut args = vec!["exec", "--skip-git-repo-check"];
        args.extend(extra);
        args.push(&started.prompt);
        home.run(Cli::Codex, project.path(), &args, Duration::from_secs(300))
    };
    let untrusted = trust_line(&project, &home);
    assert!(
        untrusted.contains("does not trust this project"),
        "{untrusted}"
    );
    // The fix doctor names for the project; the hook is still untrusted: Codex runs the
    // turn and skips the hook, silently.
    trust_codex_project(&home, &project);
    let untrusted = trust_line(&project, &home);
    assert!(
        untrusted.contains("skips a hook nobody trusted"),
        "{untrusted}"
    );
    codex(&home, &[]).ok();
    assert_eq!(answered(&server), ["ADVOCATE r1"]);
    assert!(project.state_md(&started.debate).contains("step: 0"));

    // The headless fix doctor names: the debate runs to its synthesis.
    let run = codex(&home, &["--dangerously-bypass-hook-trust"]);
    assert_hosted(&project, &server, &started.debate, "codex 0.169.0", &run);
}

/// Qwen Code's cap on continuations in a row, lowered below what a debate needs: the turn ends
/// midway, the record stands where it stopped, and the person's `continue` in the same session
/// takes the debate on from there to its synthesis.
#[test]
fn a_debate_cut_by_qwen_codes_cap_goes_on_when_the_person_says_continue() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Qwen);
    let started = project.start(&["Should we cap blocks?", "--rounds", "2"]);
    let session = crate::support::claude::new_session_id();
    let qwen = |prompt: &str, session_flag: &str| {
        home.run_env(
            Cli::Qwen,
            project.path(),
            &[session_flag, &session, "-p", prompt],
            &[("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "3")],
            Duration::from_secs(300),
        )
    };
    let first = qwen(&started.prompt, "--session-id");
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: active"),
        "{state}\n{}",
        first.describe()
    );
    // A cap of 3 lets two continuations through: the prompt of the critic's second turn was
    // dropped.
    let cut = answered(&server);
    assert_eq!(cut, ["ADVOCATE r1", "CRITIC r1", "ADVOCATE r2"]);
    let second = qwen("continue", "--resume");
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: done"),
        "{state}\ncut after {cut:?}, then {:?}\n{}",
        answered(&server),
        second.describe()
    );
    let phases: Vec<String> = project
        .commits(&started.debate)
        .iter()
        .map(|c| format!("{} {}", c.phase(), c.round()))
        .collect();
    assert_eq!(phases, TWO_ROUNDS);
    // The turn that answered `continue` was not taken for the critic's phase: the prompt went
    // out again, and was answered.
    assert_eq!(
        answered(&server)[3..],
        ["(no prompt) continue", "CRITIC r2", "SYNTHESIS"]
    );
    assert!(
        !project
            .transcript_md(&started.debate)
            .contains("nothing to debate")
    );
}

/// A line begun in Qwen Code and cut by its cap is taken on headless by `anvil run --line`
/// (Claude Code playing the rest) from where it stopped: nothing played twice, every phase
/// once, each naming who hosted it.
#[test]
fn a_line_begun_in_qwen_code_is_finished_by_anvil_run() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Qwen);
    let started = project.start(&["Should we cap blocks?", "--rounds", "2"]);
    home.run_env(
        Cli::Qwen,
        project.path(),
        &["-p", &started.prompt],
        &[("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "3")],
        Duration::from_secs(300),
    )
    .ok();
    assert!(project.state_md(&started.debate).contains("step: 3"));
    let run = run_anvil(&project, &home, &["run", "--line", &started.line]).ok();
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: done"),
        "{state}\n{}",
        run.describe()
    );
    let commits = project.commits(&started.debate);
    let played: Vec<(String, Option<&str>)> = commits[1..]
        .iter()
        .map(|c| {
            (
                format!("{} {}", c.phase(), c.round()),
                c.trailer("Anvil-Host"),
            )
        })
        .collect();
    let qwen = Some("qwen 0.24.4");
    assert_eq!(
        played[..3],
        [
            ("advocate 1".to_owned(), qwen),
            ("critic 1".to_owned(), qwen),
            ("advocate 2".to_owned(), qwen),
        ]
    );
    // The rest, once each, by `anvil run`'s Claude Code (no host named).
    assert_eq!(
        played[3..],
        [
            ("critic 2".to_owned(), None),
            ("synthesizer 2".to_owned(), None),
            // and the run's own record of how it went.
            ("run 2".to_owned(), None),
        ]
    );
    let asked = answered(&server);
    assert_eq!(
        asked, TWO_ROUNDS_ASKED,
        "every phase asked once, none lost, none asked twice"
    );
}

/// Codex's own terminal UI under tmux, as a person meets it: the folder trusted and anvil's
/// hook trusted at the prompts Codex shows, then the prompt `anvil start` printed, typed in.
/// A two-round debate runs to its synthesis through the Stop hook, every phase recorded once
/// naming Codex, and nothing on the screen is an error.
#[test]
fn codex_in_its_terminal_runs_a_two_round_debate_with_nothing_shown_as_an_error() {
    use crate::support::tmux::{Tmux, quote};
    use std::time::Instant;

    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Codex);
    let started = project.start(&["Should the terminal stay quiet?", "--rounds", "2"]);
    let prompt = home.path().join("prompt.txt");
    std::fs::write(&prompt, &started.prompt).unwrap();
    let mut env = home.env();
    env.push(("TERM", "xterm-256color".into()));
    let line = format!(
        "{} \"$(cat {})\"; sleep 60",
        quote(&crate::support::agents::bin(Cli::Codex).to_string_lossy()),
        quote(&prompt.to_string_lossy())
    );
    let tmux = Tmux::start(project.path(), &env, &line, (160, 60));
    let done = || project.state_md(&started.debate).contains("status: done");
    let (mut seen, mut last_key) = (String::new(), None::<Instant>);
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut finished = false;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
        let screen = tmux.screen();
        seen.push_str(&screen);
        seen.push_str("\n---\n");
        // Each question Codex asks, answered as a person would, once it has had time to draw.
        let settled = last_key.is_none_or(|at| at.elapsed() > Duration::from_secs(2));
        if settled && screen.contains("Trust this folder?") {
            tmux.keys(&["Enter"]);
            last_key = Some(Instant::now());
        } else if settled && screen.contains("Hooks need review") {
            tmux.keys(&["2"]);
            std::thread::sleep(Duration::from_millis(300));
            tmux.keys(&["Enter"]);
            last_key = Some(Instant::now());
        }
        if done() {
            if finished {
                break;
            }
            // One more look once the last answer is drawn.
            finished = true;
        }
    }
    drop(tmux);
    assert!(finished, "the debate ran to its end:\n{seen}");
    let lower = seen.to_lowercase();
    for word in ["error", "failed", "problem"] {
        assert!(
            !lower.contains(word),
            "shown as a problem ({word}):\n{seen}"
        );
    }
    let commits = project.commits(&started.debate);
    let phases: Vec<String> = commits
        .iter()
        .map(|c| format!("{} {}", c.phase(), c.round()))
        .collect();
    assert_eq!(phases, TWO_ROUNDS);
    assert!(
        commits[1..]
            .iter()
            .all(|c| c.trailer("Anvil-Host") == Some("codex 0.169.0"))
    );
    assert_eq!(
        answered(&server),
        TWO_ROUNDS_ASKED,
        "one request per phase, none after the synthesis"
    );
}

/// `--seat critic=claude` in a debate Codex hosts: Codex's Stop hook plays the critic with the
/// real Claude Code, in a session of its own, and the debate reaches its synthesis; the
/// critic is recorded with its agent, the other phases with Codex as their host.
#[test]
fn a_debate_hosted_in_codex_with_a_claude_critic_reaches_its_synthesis() {
    use crate::support::model_server::Agent;
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Codex);
    let started = project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "1",
        "--seat",
        "critic=claude",
    ]);
    trust_codex_project(&home, &project);
    let run = home.run(
        Cli::Codex,
        project.path(),
        &[
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            &started.prompt,
        ],
        Duration::from_secs(300),
    );
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: done"),
        "{state}\n{}",
        run.describe()
    );
    let commits = project.commits(&started.debate);
    let played: Vec<(&str, Option<&str>, Option<&str>)> = commits[1..]
        .iter()
        .map(|c| (c.phase(), c.trailer("Anvil-Host"), c.trailer("Anvil-Agent")))
        .collect();
    let codex = Some("codex 0.169.0");
    assert_eq!(
        played,
        [
            ("advocate", codex, None),
            ("critic", None, Some("claude")),
            ("synthesizer", codex, None),
        ]
    );
    let claude = server.turns_of(Agent::Claude);
    assert_eq!(claude.len(), 1, "the critic's one turn");
    assert_eq!(
        commits[2].trailer("Anvil-Agent-Session"),
        claude[0].session_id.as_deref(),
        "a Claude Code session of its own, recorded"
    );
    assert_eq!(answered(&server), ["ADVOCATE r1", "CRITIC r1", "SYNTHESIS"]);
}

/// The project trusted in Codex's config, as `anvil doctor` says to.
pub(crate) fn trust_codex_project(home: &AgentsHome, project: &Project) {
    let config = home.path().join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        project.path().canonicalize().unwrap().display()
    ));
    std::fs::write(&config, text).unwrap();
}

/// Each host phase of `debate` names `model`; then `anvil uninstall --agent NAME` says what it
/// took out (snapshot `uninstall_NAME`) and leaves the project's files as they were `before`
/// the install.
fn uninstalled_as_before(
    project: &Project,
    home: &AgentsHome,
    debate: &str,
    model: &str,
    name: &str,
    before: &std::collections::BTreeMap<String, Vec<u8>>,
) {
    assert!(
        project.commits(debate)[1..]
            .iter()
            .all(|c| c.trailer("Anvil-Model") == Some(model))
    );
    let uninstall = run_anvil(project, home, &["uninstall", "--agent", name]).ok();
    insta::assert_snapshot!(
        format!("uninstall_{name}"),
        Filters::of(project).redact(&uninstall.stderr)
    );
    assert_same_files(&project_files(project), before);
}

/// The project's files are those of `before`, byte for byte; else which differ, as text.
pub(crate) fn assert_same_files(
    now: &std::collections::BTreeMap<String, Vec<u8>>,
    before: &std::collections::BTreeMap<String, Vec<u8>>,
) {
    let differ: Vec<String> = now
        .keys()
        .chain(before.keys())
        .filter(|name| now.get(*name) != before.get(*name))
        .map(|name| {
            let text = |files: &std::collections::BTreeMap<String, Vec<u8>>| {
                files
                    .get(name)
                    .map(|b| String::from_utf8_lossy(b).into_owned())
            };
            format!("{name}: {:?} before, {:?} now", text(before), text(now))
        })
        .collect();
    assert!(differ.is_empty(), "{differ:#?}");
}

/// Every file of the project outside anvil's home and git's, with its bytes.
pub(crate) fn project_files(project: &Project) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut found = std::collections::BTreeMap::new();
    let mut dirs = vec![project.path().to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = path
                .strip_prefix(project.path())
                .unwrap()
                .display()
                .to_string();
            if name == ".anvil" || name == ".git" {
                continue;
            }
            match path.is_dir() {
                true => {
                    dirs.push(path);
                    found.insert(format!("{name}/"), Vec::new());
                }
                false => {
                    found.insert(name, std::fs::read(&path).unwrap());
                }
            }
        }
    }
    found
}

/// Copilot CLI runs a project's hook files only in a folder the person trusted: untrusted, its
/// headless run answers the first prompt and the debate does not move, and `anvil doctor` says
/// why and how to fix it; once `trustedFolders` names the folder the way it says, the debate
/// runs to its synthesis through the `agentStop` hook. The uninstall leaves the project as it
/// was before the install.
#[test]
fn copilot_cli_hosts_a_debate_once_the_folder_is_trusted() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let before = project_files(&project);
    let install = run_anvil(&project, &home, &["install", "--agent", "copilot"]).ok();
    insta::assert_snapshot!(
        "install_copilot",
        Filters::of(&project).redact(&install.stderr)
    );
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let copilot = |home: &AgentsHome| {
        home.run(
            Cli::Copilot,
            project.path(),
            &[
                "-p",
                &started.prompt,
                "--allow-all-tools",
                "--model",
                "copilot-host-model",
            ],
            Duration::from_secs(300),
        )
    };

    let untrusted = trust_line(&project, &home);
    assert!(
        untrusted.contains("does not trust this folder"),
        "{untrusted}"
    );
    copilot(&home).ok();
    assert_eq!(answered(&server), ["ADVOCATE r1"]);
    assert!(project.state_md(&started.debate).contains("step: 0"));

    // The fix doctor names: the folder in `trustedFolders` of Copilot's config.json.
    let project_dir = project.path().canonicalize().unwrap();
    std::fs::write(
        home.path().join(".copilot/config.json"),
        format!(
            "// This file is managed automatically.\n{}\n",
            serde_json::json!({ "trustedFolders": [project_dir] })
        ),
    )
    .unwrap();
    let trusted = trust_line(&project, &home);
    assert!(trusted.contains("trusts the folder"), "{trusted}");
    let run = copilot(&home);
    assert_hosted(&project, &server, &started.debate, "copilot 1.0.102", &run);
    uninstalled_as_before(
        &project,
        &home,
        &started.debate,
        "copilot-host-model",
        "copilot",
        &before,
    );
}

/// `opencode serve` in the project, on a port of its choosing; its process group ends when
/// dropped.
pub(crate) struct OpenCodeServer {
    child: std::process::Child,
    port: u16,
}

impl OpenCodeServer {
    pub(crate) fn start(home: &AgentsHome, project: &Project) -> OpenCodeServer {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new(crate::support::agents::bin(Cli::OpenCode))
            .args(["serve", "--hostname", "127.0.0.1"])
            .current_dir(project.path())
            .env_clear()
            .envs(home.env())
            .process_group(0)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start opencode serve");
        let mut server = OpenCodeServer { child, port: 0 };
        let stdout = server.child.stdout.take().expect("stdout");
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.expect("read opencode serve's output");
            if let Some((_, port)) = line.split_once("listening on http://127.0.0.1:") {
                server.port = port.trim().parse().expect("a port");
                break;
            }
        }
        assert_ne!(
            server.port, 0,
            "opencode serve did not say where it listens"
        );
        server
    }

    /// `POST path` with `body` from a thread of its own, for an answer the caller need not
    /// wait for: its status is checked when the thread is joined.
    pub(crate) fn post_in_background(
        &self,
        path: String,
        body: serde_json::Value,
    ) -> std::thread::JoinHandle<()> {
        let port = self.port;
        std::thread::spawn(move || {
            let response = crate::support::serve::Request::new(port, "POST", &path)
                .json(&body)
                .send();
            assert_eq!(response.status, 200, "{path}: {response:?}");
        })
    }

    pub(crate) fn post(&self, path: &str, body: &serde_json::Value) -> serde_json::Value {
        let response = crate::support::serve::Request::new(self.port, "POST", path)
            .json(body)
            .send();
        assert_eq!(response.status, 200, "{path}: {response:?}");
        response.json()
    }
}

impl Drop for OpenCodeServer {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &group])
            .status();
        let _ = self.child.wait();
    }
}

/// What OpenCode leaves in a config folder (`.opencode/`, `~/.config/opencode/`) when it has
/// installed `@opencode-ai/plugin` there, as it does at its start in each such folder where a
/// plugin is: with it already there, it installs nothing (offline, the install blocks its start
/// for a minute). anvil's plugin imports nothing from the package.
pub(crate) fn plugin_package_installed(dir: &std::path::Path) {
    let package = dir.join("node_modules/@opencode-ai/plugin");
    std::fs::create_dir_all(&package).unwrap();
    let version = "1.18.33";
    std::fs::write(
        package.join("package.json"),
        serde_json::json!({ "name": "@opencode-ai/plugin", "version": version }).to_string(),
    )
    .unwrap();
    let dependencies = serde_json::json!({ "@opencode-ai/plugin": version });
    std::fs::write(
        dir.join("package.json"),
        serde_json::json!({ "dependencies": dependencies }).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("package-lock.json"),
        serde_json::json!({
            "lockfileVersion": 3,
            "packages": {
                "": { "dependencies": dependencies },
                "node_modules/@opencode-ai/plugin": { "version": version },
            },
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join(".gitignore"),
        "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore\n",
    )
    .unwrap();
}

/// OpenCode has no Stop hook: anvil's plugin, in a session of `opencode serve` driven over
/// HTTP, hands each reply to `anvil-hook stop` when the session goes idle and sends the next
/// prompt back, until the synthesis; then nothing more is asked. The uninstall leaves the
/// project as it was before the install.
#[test]
fn opencode_hosts_a_debate_in_a_served_session_through_its_plugin() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    plugin_package_installed(&project.path().join(".opencode"));
    plugin_package_installed(&home.path().join(".config/opencode"));
    let before = project_files(&project);
    let install = run_anvil(&project, &home, &["install", "--agent", "opencode"]).ok();
    insta::assert_snapshot!(
        "install_opencode",
        Filters::of(&project).redact(&install.stderr)
    );
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);

    let opencode = OpenCodeServer::start(&home, &project);
    let session = opencode.post("/session", &serde_json::json!({}));
    let id = session["id"].as_str().expect("a session id");
    opencode.post(
        &format!("/session/{id}/message"),
        &serde_json::json!({ "parts": [{ "type": "text", "text": started.prompt }] }),
    );
    // The first reply is the message's answer; the plugin sends the rest as the session goes
    // idle after each.
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    while !project.state_md(&started.debate).contains("status: done")
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    // Time for a request after the synthesis, if one were sent.
    std::thread::sleep(Duration::from_secs(3));
    drop(opencode);
    let run = Output {
        code: None,
        timed_out: false,
        stdout: String::new(),
        stderr: String::new(),
    };
    assert_hosted(&project, &server, &started.debate, "opencode 1.18.33", &run);
    uninstalled_as_before(
        &project,
        &home,
        &started.debate,
        "scripted/opencode-default-model",
        "opencode",
        &before,
    );
}

/// A model that takes a custom command's words as a person's model would: the expanded
/// `/anvil` (`… \`anvil start\`: ARGS …`) is a call of the host's shell tool running `anvil
/// start ARGS`; every other turn is the [`debater`]'s (the prompt `anvil start` printed comes
/// back as the tool's result).
fn commander(turn: &Turn) -> Reply {
    let prompt = turn.prompt();
    match prompt.split_once("`anvil start`: ") {
        Some((_, rest)) if turn.tool_results().is_empty() => {
            let args = rest.lines().next().unwrap_or_default().trim();
            // Gemini CLI's and Qwen Code's shell tool.
            Reply::tool_use(
                "run_shell_command",
                serde_json::json!({
                    "command": format!("anvil start {args}"),
                    "description": "start the debate",
                }),
            )
        }
        _ => debater(turn),
    }
}

/// The one debate of the project, once a command started it.
pub(crate) fn the_debate(project: &Project) -> String {
    let debates = std::fs::read_dir(project.path().join(".anvil/debates"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
        .unwrap_or_default();
    assert_eq!(debates.len(), 1, "one debate: {debates:?}");
    debates[0].to_string_lossy().into_owned()
}

/// `gemini -p '/anvil "…" --rounds 1'`: Gemini CLI expands its custom command headless, its
/// model runs `anvil start` with the shell tool the install allowed, answers the prompt it
/// printed, and the AfterAgent hook claims the debate and takes it to its synthesis.
#[test]
fn gemini_clis_anvil_command_runs_headless_to_the_synthesis() {
    let server = ModelServer::start(commander);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Gemini);
    let run = home.run_env(
        Cli::Gemini,
        project.path(),
        &[
            "-m",
            "gemini-host-model",
            "-p",
            "/anvil \"Should we adopt GraphQL?\" --rounds 1",
        ],
        &[
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ],
        Duration::from_secs(300),
    );
    let debate = the_debate(&project);
    assert_hosted(&project, &server, &debate, "gemini", &run);
    assert!(
        project
            .state_md(&debate)
            .contains("Should we adopt GraphQL?"),
        "the question as typed"
    );
}

/// `qwen -p '/anvil "…" --rounds 1'`: the same through Qwen Code's command and Stop hook.
#[test]
fn qwen_codes_anvil_command_runs_headless_to_the_synthesis() {
    let server = ModelServer::start(commander);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Qwen);
    let run = home.run(
        Cli::Qwen,
        project.path(),
        &["-p", "/anvil \"Should we adopt GraphQL?\" --rounds 1"],
        Duration::from_secs(300),
    );
    let debate = the_debate(&project);
    assert_hosted(&project, &server, &debate, "qwen 0.24.4", &run);
}

/// Gemini CLI calls one of anvil's MCP tools, as the install wired it (`mcpServers.anvil`),
/// and its model reads the record through it: the tool's answer names the debate recorded.
#[test]
fn gemini_cli_reads_the_record_through_anvils_mcp_server() {
    let tool = "mcp_anvil_list_debates";
    let server = ModelServer::start(move |turn: &Turn| match turn.tool_results().first() {
        Some((_, text, _)) => Reply::text(format!("The record says: {text}")),
        None if turn.tool_names().iter().any(|t| t == tool) => {
            Reply::tool_use(tool, serde_json::json!({}))
        }
        None => Reply::text(format!("no {tool} offered")),
    });
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Gemini);
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    let run = home.run_env(
        Cli::Gemini,
        project.path(),
        &[
            "-m",
            "gemini-host-model",
            "-p",
            "Which decisions are recorded here?",
        ],
        &[
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ],
        Duration::from_secs(300),
    );
    let results: Vec<String> = server.tool_results().into_iter().map(|(t, _)| t).collect();
    assert!(
        results.iter().any(|r| r.contains(&started.debate)),
        "{results:?}\n{}",
        run.describe()
    );
    assert!(run.stdout.contains("The record says"), "{}", run.describe());
}

/// `/anvil-steer TEXT` and `/anvil-status` in Qwen Code, headless: each command's model runs
/// its `anvil` command with the shell tool the install allowed, and what it printed comes
/// back (the steering queued, the debate as it stands).
#[test]
fn qwen_codes_steer_and_status_commands_run_anvils_own() {
    let server = ModelServer::start(|turn: &Turn| {
        if let Some((_, text, _)) = turn.tool_results().first() {
            return Reply::text(format!("anvil said: {text}"));
        }
        let prompt = turn.prompt();
        let command = match prompt.split_once("`anvil steer`: ") {
            Some((_, rest)) => {
                format!("anvil steer '{}'", rest.lines().next().unwrap_or("").trim())
            }
            None if prompt.contains("Run `anvil status`") => "anvil status".to_owned(),
            None => return Reply::text("no command"),
        };
        Reply::tool_use(
            "run_shell_command",
            serde_json::json!({"command": command, "description": "anvil"}),
        )
    });
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Qwen);
    let started = project.start(&["Should we adopt GraphQL?", "--rounds", "1"]);
    for typed in ["/anvil-steer focus on migration cost", "/anvil-status"] {
        home.run(
            Cli::Qwen,
            project.path(),
            &["-p", typed],
            Duration::from_secs(300),
        )
        .ok();
    }
    crate::e2e_host_reach::steered_and_shown(&server, &started);
}

/// Copilot CLI ends a turn after eight continuations in a row, dropping the ninth `block`
/// with nothing of it kept: a debate of five rounds stops midway, and the person's `continue`
/// in the same session takes it on from where the record stands to its synthesis.
#[test]
fn a_debate_cut_by_copilots_cap_goes_on_when_the_person_says_continue() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let (project, _) = installed(&home, Cli::Copilot);
    std::fs::create_dir_all(home.path().join(".copilot")).unwrap();
    std::fs::write(
        home.path().join(".copilot/config.json"),
        serde_json::json!({ "trustedFolders": [project.path().canonicalize().unwrap()] })
            .to_string(),
    )
    .unwrap();
    let started = project.start(&["Should we cap blocks?", "--rounds", "5"]);
    let session = crate::support::claude::new_session_id();
    let copilot = |prompt: &str, session: &str| {
        home.run(
            Cli::Copilot,
            project.path(),
            &[
                "-p",
                prompt,
                session,
                "--allow-all-tools",
                "--model",
                "copilot-host-model",
            ],
            Duration::from_secs(300),
        )
    };
    let first = copilot(&started.prompt, &format!("--session-id={session}"));
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: active"),
        "{state}\n{}",
        first.describe()
    );
    // The prompt and eight continuations were answered; the critic's fifth was dropped.
    let cut = answered(&server);
    assert_eq!(cut.len(), 9, "{cut:?}\n{}", first.describe());
    assert_eq!(cut[8], "ADVOCATE r5");
    let second = copilot("continue", &format!("--resume={session}"));
    let state = project.state_md(&started.debate);
    assert!(
        state.contains("status: done"),
        "{state}\ncut after {cut:?}, then {:?}\n{}",
        answered(&server),
        second.describe()
    );
    // The turn that answered `continue` was not taken for the critic's phase: the prompt went
    // out again, and was answered; every phase is recorded once.
    let all = answered(&server);
    assert!(
        all[9].starts_with("(no prompt)") && all[9].ends_with("continue"),
        "{all:?}"
    );
    assert_eq!(all[10..], ["CRITIC r5", "SYNTHESIS"]);
    let phases = project.commits(&started.debate).len();
    assert_eq!(
        phases,
        1 + 10 + 1,
        "start, five rounds of two, the synthesis"
    );
    assert!(
        !project
            .transcript_md(&started.debate)
            .contains("nothing to debate")
    );
}
