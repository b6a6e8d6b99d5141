//! Seats in a debate that a Claude Code session drives (`/anvil "…" --seat critic=codex`): the
//! Stop hook plays the seat itself — the real Codex CLI against the scripted server — and the
//! host gets the seat's text in its next prompt. A seat that fails is a notice and a line that
//! waits; the next stop tries again, or the host takes the seat over with `--fallback host`.
//! A seat that hangs is killed at its timeout, and a hook killed while its seat plays takes
//! the seat's processes with it and records nothing.
//!
//! The first tests drive the hook binary directly, as Claude Code runs it (hook JSON on stdin,
//! the agents' environment); the others run the real `claude -p` (the terminal UI is in
//! e2e_tui).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::both_clients;
use crate::e2e_seats::{debater, phases, want};
use crate::support::agents::{AgentsHome, node_bin_dir};
use crate::support::anvil::{Project, Run, Started, anvil_hook_bin, find_tag, turn_tag};
use crate::support::claude::{Claude, ClaudeOutput, Client, new_session_id};
use crate::support::model_server::{Agent, ModelServer, Reply, Turn};
use crate::support::processes;
use crate::support::snap::Filters;

/// The advocate's own instructions (roles/advocate.md).
const ADVOCATE_RULES: &str = "Make the strongest honest case FOR the proposal";

/// A debater whose Codex requests fail while `failing` is set.
fn debater_with_failing_codex(failing: &Arc<AtomicBool>) -> impl Fn(&Turn) -> Reply + use<> {
    let failing = Arc::clone(failing);
    move |turn: &Turn| {
        if turn.agent == Agent::Codex && failing.load(Ordering::SeqCst) {
            return Reply::error(400, "scripted outage of the critic's provider");
        }
        debater(turn)
    }
}

/// The Stop hook's input for `session`'s turn that ended with `text`.
pub(crate) fn stop_input(project: &Project, session: &str, text: &str) -> serde_json::Value {
    serde_json::json!({
        "session_id": session, "cwd": project.path(), "hook_event_name": "Stop",
        "stop_hook_active": true, "last_assistant_message": text,
    })
}

/// `anvil-hook stop` as Claude Code runs it in a session whose agents `home` configures.
fn hook_command(project: &Project, home: &AgentsHome) -> Command {
    let mut hook = Command::new(anvil_hook_bin());
    hook.arg("stop")
        .current_dir(project.path())
        .env_clear()
        .envs(home.env());
    hook
}

/// Starts `hook` (a [`hook_command`]) on `input`, as Claude Code does for each hook wired to
/// the event.
pub(crate) fn spawn_hook(mut hook: Command, input: &serde_json::Value) -> Child {
    let mut child = hook
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run anvil-hook");
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        input.to_string().as_bytes(),
    )
    .unwrap();
    child
}

/// Starts `anvil-hook stop` on `input` in a session whose agents `home` configures.
pub(crate) fn spawn_stop(project: &Project, home: &AgentsHome, input: &serde_json::Value) -> Child {
    spawn_stop_with(project, home, input, &[])
}

/// [`spawn_stop`], with the variables `env` in the hook's environment too.
pub(crate) fn spawn_stop_with(
    project: &Project,
    home: &AgentsHome,
    input: &serde_json::Value,
    env: &[(&str, &str)],
) -> Child {
    let mut hook = hook_command(project, home);
    hook.envs(env.iter().copied());
    spawn_hook(hook, input)
}

/// A hook's run and its JSON answer.
pub(crate) fn answer_of(child: Child) -> (Run, serde_json::Value) {
    let run = Run::from_output(child.wait_with_output().expect("wait for anvil-hook"));
    let answer = run
        .json()
        .unwrap_or_else(|| panic!("the hook answers JSON: {}", run.describe()));
    (run, answer)
}

/// Runs the Stop hook on `input`; its answer.
fn stop(
    project: &Project,
    home: &AgentsHome,
    input: &serde_json::Value,
) -> (Run, serde_json::Value) {
    answer_of(spawn_stop(project, home, input))
}

/// The host's synthesis, handed to `session`'s next stop, ends `debate` (the host argued, Codex
/// criticised): the hook hands the host nothing more, and the line is done with each phase
/// recorded once.
pub(crate) fn assert_the_hosts_synthesis_ends(
    project: &Project,
    home: &AgentsHome,
    session: &str,
    debate: &str,
) {
    let (_, done) = stop(
        project,
        home,
        &stop_input(project, session, "The synthesis."),
    );
    assert!(done.get("reason").is_none(), "{done}");
    assert!(project.state_md(debate).contains("status: done"));
    assert_eq!(
        phases(&project.commits(debate)),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "codex"),
            ("synthesizer", "1", "host"),
        ])
    );
}

/// `anvil start` of a one-round debate in `project` for `session`, with `seat`
/// (`ROLE=AGENT[:MODEL]`).
pub(crate) fn start_seated(project: &Project, session: &str, seat: &str) -> Started {
    project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "1",
        "--seat",
        seat,
        "--session",
        session,
    ])
}

/// The processes of a seat's turn in `project` (the guard, the agent and what it started):
/// (pid, process group) of each process whose directory is the project and whose environment
/// names a seat.
fn seat_processes(project: &Path) -> Vec<(u32, u32)> {
    let project = project.canonicalize().unwrap();
    processes::living()
        .into_iter()
        .filter(|p| {
            p.cwd().as_deref() == Some(project.as_path())
                && p.has_env(|var| var.starts_with(b"ANVIL_SEAT="))
        })
        .map(|p| (p.pid, p.group))
        .collect()
}

/// Waits up to `within` for `done`; whether it came.
fn wait_for(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

#[test]
fn the_stop_hook_plays_the_critics_seat_and_hands_the_host_its_text() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex:codex-seat-model");
    // The host plays the advocate; at its stop the hook plays the critic with Codex, then
    // hands the host the synthesis.
    let (run, answer) = stop(
        &project,
        &home,
        &stop_input(&project, &session, "The advocate's case."),
    );
    let prompt = answer["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("the host is handed its next phase: {}", run.describe()));
    assert_eq!(
        find_tag(prompt).map(|t| t.key()).as_deref(),
        Some("SYNTHESIS"),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!("CRITIC r1 of {}", started.line)),
        "the synthesis prompt carries the critic's recorded text: {prompt}"
    );
    let notice = answer["systemMessage"].as_str().unwrap_or_default();
    // The person is told who played the seat.
    insta::assert_snapshot!(
        "notice_seat_played",
        Filters::of(&project).without_usage().redact(notice)
    );
    let commits = project.commits(&started.debate);
    assert_eq!(
        phases(&commits),
        want(&[("advocate", "1", "host"), ("critic", "1", "codex")])
    );
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    assert_eq!(critic.trailer("Anvil-Agent-Version"), Some("0.169.0"));
    assert_eq!(critic.trailer("Anvil-Model"), Some("codex-seat-model"));
    // Codex got a participant's prompt with the advocate's case, not the advocate's rules.
    let codex = server.turns_of(Agent::Codex);
    assert_eq!(codex.len(), 1, "one critic turn");
    assert!(codex[0].all_text().contains("The advocate's case."));
    assert!(!codex[0].all_text().contains(ADVOCATE_RULES));
    // Nothing of the seat's is left running.
    assert!(seat_processes(project.path()).is_empty());

    // The host's synthesis ends the debate; a stop on a finished line says nothing more.
    assert_the_hosts_synthesis_ends(&project, &home, &session, &started.debate);
    project.assert_fsck_clean();
}

#[test]
fn a_debate_that_opens_with_a_seat_asks_the_host_only_to_end_its_turn() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let run = project
        .anvil(&[
            "start",
            "Should we adopt GraphQL?",
            "--rounds",
            "1",
            "--seat",
            "advocate=codex:codex-seat-model",
            "--session",
            &session,
        ])
        .ok();
    // The host is told the first phase is not its own, under the debate's tag.
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("[anvil ")
            && first.ends_with("@main · round 1/1 · advocate · played by codex:codex-seat-model]"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(ADVOCATE_RULES), "{}", run.stdout);
    let line = first["[anvil ".len()..first.find(" · ").unwrap()].to_owned();
    let debate = line.trim_end_matches("@main").to_owned();
    // The host's line is no phase: the hook plays the advocate, then hands the host the critic.
    let (run, answer) = stop(
        &project,
        &home,
        &stop_input(&project, &session, "Waiting for codex."),
    );
    let prompt = answer["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", run.describe()));
    assert_eq!(find_tag(prompt).unwrap().key(), "CRITIC r1", "{prompt}");
    assert!(prompt.contains(&format!("ADVOCATE r1 of {}", line)));
    assert!(!prompt.contains("Waiting for codex."), "{prompt}");
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[("advocate", "1", "codex")])
    );
}

#[test]
fn a_failing_seat_is_a_notice_the_line_waits_and_the_next_stop_retries_it() {
    let failing = Arc::new(AtomicBool::new(true));
    let server = ModelServer::start(debater_with_failing_codex(&failing));
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex:codex-seat-model");
    let (_, answer) = stop(
        &project,
        &home,
        &stop_input(&project, &session, "The advocate's case."),
    );
    let notice = answer["systemMessage"].as_str().unwrap_or_default();
    // The seat and its agent's last words are named.
    insta::assert_snapshot!(
        "notice_seat_failed",
        Filters::of(&project).without_usage().redact(notice)
    );
    assert!(
        answer.get("decision").is_none() && answer.get("hookSpecificOutput").is_none(),
        "Claude is let stop, not handed the seat's phase: {answer}"
    );
    let recorded = || phases(&project.commits(&started.debate));
    assert_eq!(recorded(), want(&[("advocate", "1", "host")]));
    assert!(project.state_md(&started.debate).contains("status: active"));

    // The next stop (the person said `continue`) tries the seat again: this time it plays,
    // and the host's reply to `continue` is no phase.
    failing.store(false, Ordering::SeqCst);
    let (_, answer) = stop(
        &project,
        &home,
        &stop_input(&project, &session, "Continuing."),
    );
    let prompt = answer["reason"].as_str().unwrap_or_default();
    assert_eq!(
        find_tag(prompt).map(|t| t.key()).as_deref(),
        Some("SYNTHESIS"),
        "{answer}"
    );
    assert!(prompt.contains(&format!("CRITIC r1 of {}", started.line)));
    assert_eq!(
        recorded(),
        want(&[("advocate", "1", "host"), ("critic", "1", "codex")])
    );
    assert!(
        !project
            .transcript_md(&started.debate)
            .contains("Continuing.")
    );
}

/// A seat's agent that ends without reading its prompt (a wrapper script that fails at once:
/// it closes its stdin, then exits) leaves the seat's guard writing into a pipe nobody reads: the guard lives on to report the
/// agent's own exit status (a `SIGPIPE` would end the guard first, and the seat would be said
/// to be killed by a signal).
#[test]
fn a_seat_whose_agent_ends_without_reading_its_prompt_fails_and_the_hook_answers() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex");
    let agent = tempfile::tempdir().unwrap();
    let program = agent.path().join("codex");
    std::fs::write(
        &program,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'codex-cli 0.169.0'; exit 0; }\n\
         echo 'codex: refusing to start' >&2\nexec 0<&-\nsleep 1\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut hook = hook_command(&project, &home);
    hook.env("ANVIL_CODEX_BIN", &program);
    // The advocate's phase is bigger than a pipe holds: the prompt cannot be written whole
    // before the agent is gone.
    let advocate: String = (0..3000)
        .map(|i| format!("advocate line {i:05}: the evidence holds.\n"))
        .collect();
    let (run, answer) = answer_of(spawn_hook(hook, &stop_input(&project, &session, &advocate)));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let notice = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        notice.contains("(exit status 3): codex: refusing to start"),
        "the agent's status and last words are named: {answer}"
    );
    assert!(answer.get("decision").is_none(), "{answer}");
    assert_eq!(
        phases(&project.commits(&started.debate)),
        want(&[("advocate", "1", "host")])
    );
}

/// Started without standard output and error (a client that closed them), the hook holds
/// `/dev/null` in their place while it works (seen here while its seat plays), as a Rust
/// program's standard start would: otherwise the first file it opened would take their number,
/// and what it prints would go into that file.
#[test]
fn a_hook_started_without_stdout_and_stderr_holds_dev_null_in_their_place() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    start_seated(&project, &session, "critic=codex");
    let agent = tempfile::tempdir().unwrap();
    let program = agent.path().join("codex");
    let playing = agent.path().join("playing");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 'codex-cli 0.169.0'; exit 0; }}\n\
             cat > /dev/null\ntouch '{}'\nsleep 60\n",
            playing.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut hook = Command::new("sh");
    hook.args(["-c", r#"exec "$0" stop >&- 2>&-"#])
        .arg(anvil_hook_bin())
        .current_dir(project.path())
        .env_clear()
        .envs(home.env())
        .env("ANVIL_CODEX_BIN", &program)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = hook.spawn().expect("run anvil-hook");
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        stop_input(&project, &session, "The advocate's case.")
            .to_string()
            .as_bytes(),
    )
    .unwrap();
    let started = wait_for(Duration::from_secs(30), || playing.exists());
    let fds: Vec<String> = [1, 2]
        .iter()
        .map(|fd| {
            std::fs::read_link(format!("/proc/{}/fd/{fd}", child.id()))
                .map(|p| p.display().to_string())
                .unwrap_or_else(|e| format!("closed ({e})"))
        })
        .collect();
    let _ = child.kill();
    let _ = child.wait();
    assert!(started, "the seat never played");
    assert_eq!(fds, ["/dev/null", "/dev/null"]);
}

#[test]
fn a_seat_whose_agent_is_missing_is_named_with_how_to_install_it() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex");
    let mut hook = hook_command(&project, &home);
    hook.env("ANVIL_CODEX_BIN", "/nonexistent/codex");
    let (_, answer) = answer_of(spawn_hook(
        hook,
        &stop_input(&project, &session, "The advocate's case."),
    ));
    let notice = answer["systemMessage"].as_str().unwrap_or_default();
    insta::assert_snapshot!(
        "notice_seat_agent_missing",
        Filters::of(&project).without_usage().redact(notice)
    );
    assert!(answer.get("decision").is_none(), "{answer}");
    assert_eq!(
        phases(&project.commits(&started.debate)),
        want(&[("advocate", "1", "host")])
    );
}

#[test]
fn a_hanging_seat_is_killed_at_its_timeout_with_its_whole_process_group() {
    let server = ModelServer::start(|turn: &Turn| {
        let reply = debater(turn);
        if turn.agent == Agent::Codex {
            // Longer than the test: only the seat's timeout ends it.
            return reply.delayed(Duration::from_secs(300));
        }
        reply
    });
    let home = AgentsHome::new(&server);
    let project = Project::new();
    std::fs::write(
        project.anvil_home().join("config.toml"),
        "[seats]\ntimeout = 8\n",
    )
    .unwrap();
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex:codex-seat-model");
    let hook = spawn_stop(
        &project,
        &home,
        &stop_input(&project, &session, "The advocate's case."),
    );
    // While Codex waits for its answer, its processes are seen (in one group of their own).
    assert!(
        wait_for(Duration::from_secs(60), || !server
            .turns_of(Agent::Codex)
            .is_empty()),
        "Codex never asked the server"
    );
    let during = seat_processes(project.path());
    assert!(during.len() >= 2, "the guard and the agent: {during:?}");
    let groups: std::collections::BTreeSet<u32> = during.iter().map(|(_, g)| *g).collect();
    assert_eq!(groups.len(), 1, "one process group: {during:?}");
    let began = Instant::now();
    let (_, answer) = answer_of(hook);
    assert!(
        began.elapsed() < Duration::from_secs(60),
        "the hook ended at the seat's timeout, not the server's delay"
    );
    let notice = answer["systemMessage"].as_str().unwrap_or_default();
    // (What the agent last printed before it was stopped depends on timing: no snapshot.)
    assert!(
        notice.contains("codex did not answer within 8 s and was stopped"),
        "{answer}"
    );
    assert!(
        wait_for(Duration::from_secs(2), || seat_processes(project.path())
            .is_empty()),
        "the seat's processes outlived its timeout: {:?} (during the turn: {during:?})",
        seat_processes(project.path())
    );
    assert_eq!(
        phases(&project.commits(&started.debate)),
        want(&[("advocate", "1", "host")]),
        "a timed-out seat records nothing"
    );
    assert!(project.state_md(&started.debate).contains("status: active"));
}

#[test]
fn a_hook_killed_while_its_seat_plays_leaves_no_agent_and_the_next_stop_records_it_once() {
    let slow = Arc::new(AtomicBool::new(true));
    let server = {
        let slow = Arc::clone(&slow);
        ModelServer::start(move |turn: &Turn| {
            let reply = debater(turn);
            if turn.agent == Agent::Codex && slow.load(Ordering::SeqCst) {
                return reply.delayed(Duration::from_secs(300));
            }
            reply
        })
    };
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex:codex-seat-model");
    let mut hook = spawn_stop(
        &project,
        &home,
        &stop_input(&project, &session, "The advocate's case."),
    );
    assert!(
        wait_for(Duration::from_secs(60), || !server
            .turns_of(Agent::Codex)
            .is_empty()),
        "Codex never asked the server"
    );
    let during = seat_processes(project.path());
    assert!(!during.is_empty());
    // Killed as Claude Code kills a hook at last: nothing of anvil's runs after this.
    hook.kill().unwrap();
    hook.wait().unwrap();
    assert!(
        wait_for(Duration::from_secs(10), || seat_processes(project.path())
            .is_empty()),
        "the seat's processes outlived the hook: {:?}",
        seat_processes(project.path())
    );
    let recorded = || phases(&project.commits(&started.debate));
    assert_eq!(recorded(), want(&[("advocate", "1", "host")]));
    assert!(project.state_md(&started.debate).contains("status: active"));

    // The next stop plays the seat again and records it once.
    slow.store(false, Ordering::SeqCst);
    let (_, answer) = stop(
        &project,
        &home,
        &stop_input(&project, &session, "Continuing."),
    );
    assert_eq!(
        find_tag(answer["reason"].as_str().unwrap_or_default()).map(|t| t.key()),
        Some("SYNTHESIS".to_owned()),
        "{answer}"
    );
    assert_eq!(
        recorded(),
        want(&[("advocate", "1", "host"), ("critic", "1", "codex")])
    );
    // Delivered again (a second hook for the same stop), nothing more is recorded.
    let (_, again) = stop(
        &project,
        &home,
        &stop_input(&project, &session, "Continuing."),
    );
    assert_eq!(
        find_tag(again["reason"].as_str().unwrap_or_default())
            .unwrap()
            .key(),
        "SYNTHESIS"
    );
    assert_eq!(
        recorded(),
        want(&[("advocate", "1", "host"), ("critic", "1", "codex")])
    );
    project.assert_fsck_clean();
}

#[test]
fn a_stop_hook_whose_timeout_leaves_no_time_for_a_seat_says_so_and_plays_nothing() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    // An entry of anvil's Stop hook with a timeout no seat's turn fits in (20 s, less the
    // margin to record).
    std::fs::create_dir_all(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        serde_json::json!({ "hooks": { "Stop": [{ "hooks": [
            { "type": "command", "command": "anvil-hook stop", "timeout": 20 }
        ] }] } })
        .to_string(),
    )
    .unwrap();
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=codex");
    let (_, answer) = stop(
        &project,
        &home,
        &stop_input(&project, &session, "The advocate's case."),
    );
    let notice = answer["systemMessage"].as_str().unwrap_or_default();
    assert!(
        notice.contains("(20 s, in .claude/settings.json)"),
        "{answer}"
    );
    insta::assert_snapshot!(
        "notice_no_time_for_a_seat",
        Filters::of(&project).without_usage().redact(notice)
    );
    assert!(
        server.turns_of(Agent::Codex).is_empty(),
        "no turn was started"
    );
    assert_eq!(
        phases(&project.commits(&started.debate)),
        want(&[("advocate", "1", "host")])
    );
}

/// `/anvil` as a person types it to open a one-round debate with Codex in the critic's seat.
const OPEN_WITH_A_CODEX_CRITIC: &str =
    "/anvil \"Should we adopt GraphQL?\" --rounds 1 --seat critic=codex:codex-seat-model";

/// A Claude Code session (`claude -p`) in an installed project, with the Codex CLI on its
/// PATH, both against a scripted server.
struct CodexSeatSession {
    // Dropped in this order, as the locals of a test were: the project, then the agents'
    // home, then the server they spoke to.
    project: Project,
    home: AgentsHome,
    server: ModelServer,
    session: String,
}

impl CodexSeatSession {
    /// A new session whose model answers as `script` says.
    fn new(script: impl Fn(&Turn) -> Reply + Send + Sync + 'static) -> CodexSeatSession {
        let server = ModelServer::start(script);
        CodexSeatSession {
            project: Project::installed(),
            home: AgentsHome::new(&server),
            server,
            session: new_session_id(),
        }
    }

    /// The session's first turn, on `prompt`.
    fn first_turn(&self, client: Client, prompt: &str) -> ClaudeOutput {
        self.claude(client, prompt).session_id(&self.session).run()
    }

    /// The session's next turn after `earlier` (resumed in its Claude Code HOME), on `prompt`.
    fn next_turn(&self, client: Client, prompt: &str, earlier: &ClaudeOutput) -> ClaudeOutput {
        self.claude(client, prompt)
            .home(&earlier.home)
            .args(["--resume", &self.session])
            .run()
    }

    fn claude(&self, client: Client, prompt: &str) -> Claude {
        let codex_home: PathBuf = self.home.path().join(".codex");
        Claude::new(&self.server, self.project.path(), prompt)
            .client(client)
            .path_prepend(node_bin_dir())
            .env("CODEX_HOME", codex_home.display().to_string())
            .env("SCRIPTED_API_KEY", crate::support::agents::API_KEY)
            .timeout(Duration::from_secs(240))
    }
}

/// The keys of the phases the host (Claude Code) was asked to play, in order.
fn host_phases(server: &ModelServer) -> Vec<String> {
    server
        .turns_of(Agent::Claude)
        .iter()
        .filter(|t| t.is_main())
        .filter_map(|t| turn_tag(t).map(|tag| tag.key()))
        .collect::<Vec<_>>()
        .into_iter()
        .fold(Vec::new(), |mut keys, key| {
            if keys.last() != Some(&key) {
                keys.push(key);
            }
            keys
        })
}

both_clients!(a_claude_session_reaches_its_synthesis_with_codex_in_the_critics_seat);
fn a_claude_session_reaches_its_synthesis_with_codex_in_the_critics_seat(client: Client) {
    let seated = CodexSeatSession::new(debater);
    let (server, project) = (&seated.server, &seated.project);
    let out = seated.first_turn(client, OPEN_WITH_A_CODEX_CRITIC);
    assert!(out.success(), "{}", out.describe());
    let debate = project.only_debate();
    assert!(
        project.state_md(&debate).contains("status: done"),
        "the debate reached its synthesis: {}",
        out.describe()
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "codex"),
            ("synthesizer", "1", "host"),
        ])
    );
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    assert_eq!(critic.trailer("Anvil-Model"), Some("codex-seat-model"));
    assert_eq!(critic.trailer("Anvil-Agent-Version"), Some("0.169.0"));
    // The host played the advocate and the synthesis, never the critic, and its synthesis
    // prompt carried what Codex said.
    assert_eq!(host_phases(server), ["ADVOCATE r1", "SYNTHESIS"]);
    let synthesis = server
        .turns_of(Agent::Claude)
        .into_iter()
        .find(|t| turn_tag(t).is_some_and(|tag| tag.is_synthesis()))
        .unwrap();
    assert!(
        synthesis
            .prompt()
            .contains(&format!("CRITIC r1 of {debate}@main"))
    );
    // The seat's phase cost no continuation: one for the synthesis, the only host phase after
    // the first.
    let codex = server.turns_of(Agent::Codex);
    assert_eq!(codex.len(), 1, "one critic turn");
    assert!(codex.iter().all(|t| t.model == "codex-seat-model"));
    project.assert_fsck_clean();
}

both_clients!(a_failed_seat_lets_the_session_stop_and_its_next_turn_retries_the_seat);
fn a_failed_seat_lets_the_session_stop_and_its_next_turn_retries_the_seat(client: Client) {
    let failing = Arc::new(AtomicBool::new(true));
    let seated = CodexSeatSession::new(debater_with_failing_codex(&failing));
    let project = &seated.project;
    let first = seated.first_turn(client, OPEN_WITH_A_CODEX_CRITIC);
    assert!(first.success(), "{}", first.describe());
    let debate = project.only_debate();
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[("advocate", "1", "host")]),
        "{}",
        first.describe()
    );
    assert!(project.state_md(&debate).contains("status: active"));
    // The failure was a notice in the session's transcript, naming the seat.
    let transcript = std::fs::read_to_string(first.transcript().expect("a transcript")).unwrap();
    assert!(
        transcript.contains("the seat of round 1/1 · critic (codex:codex-seat-model) failed"),
        "{transcript}"
    );

    // The person says `continue`: the next stop plays the seat, and the debate ends.
    failing.store(false, Ordering::SeqCst);
    let next = seated.next_turn(client, "continue", &first);
    assert!(next.success(), "{}", next.describe());
    assert!(
        project.state_md(&debate).contains("status: done"),
        "{}",
        next.describe()
    );
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "codex"),
            ("synthesizer", "1", "host"),
        ])
    );
}

both_clients!(with_fallback_host_the_session_plays_a_failed_seat_and_the_record_says_so);
fn with_fallback_host_the_session_plays_a_failed_seat_and_the_record_says_so(client: Client) {
    let failing = Arc::new(AtomicBool::new(true));
    let seated = CodexSeatSession::new(debater_with_failing_codex(&failing));
    let (server, project) = (&seated.server, &seated.project);
    let out = seated.first_turn(
        client,
        &format!("{OPEN_WITH_A_CODEX_CRITIC} --fallback host"),
    );
    assert!(out.success(), "{}", out.describe());
    let debate = project.only_debate();
    assert!(
        project.state_md(&debate).contains("status: done"),
        "{}",
        out.describe()
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "host"),
            ("synthesizer", "1", "host"),
        ])
    );
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    let why = critic
        .trailer("Anvil-Seat-Fallback")
        .expect("the fallback is recorded");
    assert!(
        why.contains("codex:codex-seat-model failed") && why.contains("scripted outage"),
        "{why}"
    );
    assert_eq!(
        host_phases(server),
        ["ADVOCATE r1", "CRITIC r1", "SYNTHESIS"]
    );
}
