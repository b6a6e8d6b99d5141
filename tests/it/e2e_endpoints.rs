//! Seats on OpenAI-compatible endpoints, with no agent CLI (`--seat critic=ollama:MODEL`,
//! `openrouter:…`, an endpoint named in `[agents.NAME]`): anvil plays the turn itself, through
//! `anvil endpoint-turn`, against the scripted server's Chat Completions, at an Ollama-style
//! base URL (`…/v1`, no key) and an OpenRouter-style one (`…/api/v1`, a key, a price in its
//! usage), each a server of its own so that where a key went can be told.
//!
//! The debates run headless (`anvil run`, Claude Code as the host) and in a session's Stop
//! hook; the key is sent only to its endpoint and kept nowhere; a 429 and an unreachable
//! endpoint are each a failure that names the seat; a hostile endpoint's answer ends in a
//! clear failure within its bound; a committed config cannot point a key elsewhere.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::e2e_seats::{debater, phases, want};
use crate::e2e_session_seats::{answer_of, spawn_hook, start_seated, stop_input};
use crate::support::agents::AgentsHome;
use crate::support::anvil::{Project, Run};
use crate::support::claude::new_session_id;
use crate::support::model_server::{Agent, ModelServer, Reply, Turn};
use crate::support::openai::OPENROUTER_COST;
use crate::support::snap::Filters;

/// The OpenRouter-style endpoint's key: a string no reply or prompt holds.
const KEY: &str = "sk-or-v1-endpoint-test-5e1b9c0d7a3f";

/// The roles' own instructions (roles/advocate.md, roles/critic.md).
const ADVOCATE_RULES: &str = "Make the strongest honest case FOR the proposal";
const CRITIC_RULES: &str = "Make the strongest honest case AGAINST the proposal";

/// A scripted server for Claude Code and the agent CLIs, and two endpoints: Ollama-style (no
/// key) and OpenRouter-style (a key, a price).
struct Endpoints {
    /// Claude Code (the host), the agent CLIs, and the Ollama-style endpoint at `/v1`.
    local: ModelServer,
    /// The OpenRouter-style endpoint at `/api/v1`.
    remote: ModelServer,
    home: AgentsHome,
}

impl Endpoints {
    fn new(local: impl Fn(&Turn) -> Reply + Send + Sync + 'static) -> Endpoints {
        Endpoints::with(local, debater)
    }

    fn with(
        local: impl Fn(&Turn) -> Reply + Send + Sync + 'static,
        remote: impl Fn(&Turn) -> Reply + Send + Sync + 'static,
    ) -> Endpoints {
        let local = ModelServer::start(local);
        let remote = ModelServer::start(remote);
        let home = AgentsHome::new(&local);
        Endpoints {
            local,
            remote,
            home,
        }
    }

    /// The config that moves the presets to the scripted servers, the OpenRouter one with the
    /// key in its own variable (OPENROUTER_API_KEY goes to openrouter.ai alone).
    fn config(&self) -> String {
        format!(
            "[agents.ollama]\nbase_url = \"{}/v1\"\n\n\
             [agents.openrouter]\nbase_url = \"{}/api/v1\"\napi_key_env = \"ANVIL_OPENROUTER_API_KEY\"\n",
            self.local.base_url(),
            self.remote.base_url()
        )
    }

    /// A project whose config is [`Endpoints::config`] and `more`.
    fn project(&self, more: &str) -> Project {
        let project = Project::new();
        std::fs::write(
            project.anvil_home().join("config.toml"),
            format!("{}{more}", self.config()),
        )
        .unwrap();
        project
    }

    /// The environment: the agents', and the endpoint's key.
    fn env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let mut env = self.home.env();
        env.push(("ANVIL_OPENROUTER_API_KEY", KEY.into()));
        env
    }

    /// `anvil ARGS` in `project`, in [`Endpoints::env`].
    fn anvil(&self, project: &Project, args: &[&str]) -> Run {
        Run::from_output(
            project
                .command(args)
                .env_clear()
                .envs(self.env())
                .output()
                .expect("run anvil"),
        )
    }

    /// The requests anvil sent to each endpoint.
    fn ollama_turns(&self) -> Vec<Turn> {
        self.local.turns_of(Agent::Anvil)
    }

    fn openrouter_turns(&self) -> Vec<Turn> {
        self.remote.turns_of(Agent::Anvil)
    }
}

/// Every file under `dir` holding `needle`, by path.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// The messages of a Chat Completions request: (role, content).
fn messages(turn: &Turn) -> Vec<(String, String)> {
    turn.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn claude_argues_an_ollama_critic_answers_and_openrouter_synthesizes_with_the_key_sent_only_there()
{
    let table = Endpoints::new(debater);
    let project = table.project("");
    let run = table.anvil(
        &project,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "2",
            "--seat",
            "critic=ollama:llama-local",
            "--seat",
            "synthesizer=openrouter:meta/llama-remote",
        ],
    );
    let run = run.ok();
    let debate = project.only_debate();
    // Where each endpoint seat's turns go is said before the first is sent.
    insta::assert_snapshot!(
        "run_with_endpoint_seats",
        Filters::of(&project)
            .without_usage()
            .text(&table.local.base_url(), "[local]")
            .text(&table.remote.base_url(), "[remote]")
            .redact(&run.stderr)
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "ollama"),
            ("advocate", "2", "host"),
            ("critic", "2", "ollama"),
            ("synthesizer", "2", "openrouter"),
        ]),
        "{}",
        run.describe()
    );
    // The record names the endpoint, anvil's version, the model the endpoint named, the
    // tokens it counted, and OpenRouter's price.
    for commit in commits
        .iter()
        .filter(|c| c.trailer("Anvil-Agent").is_some())
    {
        assert_eq!(
            commit.trailer("Anvil-Agent-Version"),
            Some(env!("CARGO_PKG_VERSION"))
        );
        for key in ["Anvil-Tokens-Input", "Anvil-Tokens-Output"] {
            let n: u64 = commit.trailer(key).unwrap_or("0").parse().unwrap();
            assert!(n > 0, "{key} of {}", commit.subject);
        }
        assert!(commit.trailer("Anvil-Agent-Session").is_some());
    }
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    assert_eq!(critic.trailer("Anvil-Model"), Some("llama-local"));
    assert_eq!(critic.trailer("Anvil-Cost-Usd"), None);
    let synthesis = commits.iter().find(|c| c.phase() == "synthesizer").unwrap();
    assert_eq!(synthesis.trailer("Anvil-Model"), Some("meta/llama-remote"));
    assert_eq!(
        synthesis
            .trailer("Anvil-Cost-Usd")
            .map(|c| c.parse::<f64>().unwrap()),
        Some(OPENROUTER_COST)
    );

    // Each endpoint got its seat's turns, streamed, with its model; the critic's second
    // turn resumed its conversation: its own first prompt and reply, then the new prompt.
    let ollama = table.ollama_turns();
    let openrouter = table.openrouter_turns();
    assert_eq!((ollama.len(), openrouter.len()), (2, 1));
    assert!(
        ollama
            .iter()
            .all(|t| t.path == "/v1/chat/completions" && t.model == "llama-local" && t.stream)
    );
    assert_eq!(openrouter[0].path, "/api/v1/chat/completions");
    let second = messages(&ollama[1]);
    let roles: Vec<&str> = second.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(second[0].1, messages(&ollama[0])[0].1);
    assert!(
        second[1]
            .1
            .starts_with(&format!("CRITIC r1 of {debate}@main"))
    );
    // A seat sees the others' recorded words, never their instructions.
    for turn in &ollama {
        assert!(!turn.all_text().contains(ADVOCATE_RULES));
        assert!(
            turn.all_text()
                .contains(&format!("ADVOCATE r1 of {debate}@main"))
        );
    }
    assert!(!openrouter[0].all_text().contains(CRITIC_RULES));
    assert!(
        openrouter[0]
            .all_text()
            .contains(&format!("CRITIC r2 of {debate}@main"))
    );

    // The key went to its endpoint, with each request, and nowhere else.
    let bearer = format!("Bearer {KEY}");
    assert!(
        openrouter
            .iter()
            .all(|t| t.credential.as_deref() == Some(bearer.as_str()))
    );
    assert!(ollama.iter().all(|t| t.credential.is_none()));
    assert!(table.local.requests().iter().all(|t| {
        !t.credential.as_deref().unwrap_or_default().contains(KEY) && !t.all_text().contains(KEY)
    }));
    assert_eq!(
        files_holding(&project.anvil_home(), KEY),
        Vec::<String>::new()
    );
    assert_eq!(files_holding(table.home.path(), KEY), Vec::<String>::new());
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
    project.assert_fsck_clean();
}

/// A port on this machine where nothing listens.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_429_and_an_unreachable_endpoint_are_each_a_failure_that_names_the_seat() {
    // The OpenRouter-style endpoint is rate-limited; the Ollama-style one is not there.
    let table = Endpoints::with(debater, |_: &Turn| {
        Reply::error(429, "Rate limit exceeded: free-models-per-min").retry_after(17)
    });
    let project = table.project("");
    let limited = table.anvil(
        &project,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "1",
            "--seat",
            "critic=openrouter:meta/llama-remote",
        ],
    );
    assert_eq!(limited.code, Some(1), "{}", limited.describe());
    let filters = Filters::of(&project)
        .without_usage()
        .text(&table.local.base_url(), "[local]")
        .text(&table.remote.base_url(), "[remote]");
    let mut told = filters.run(
        "anvil run \"Should we adopt GraphQL?\" --rounds 1 --seat critic=openrouter:meta/llama-remote",
        &limited,
    );
    // Nothing of the critic's phase was recorded; the key is in no failure.
    let debate = project.only_debate();
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[("advocate", "1", "host")])
    );
    assert!(!limited.stderr.contains(KEY));
    assert!(
        limited.stderr.contains("; retry after 17 s"),
        "{}",
        limited.describe()
    );

    let gone = closed_port();
    let project = Project::new();
    std::fs::write(
        project.anvil_home().join("config.toml"),
        format!("[agents.ollama]\nbase_url = \"http://127.0.0.1:{gone}/v1\"\n"),
    )
    .unwrap();
    let unreachable = table.anvil(
        &project,
        &[
            "run",
            "Should we adopt GraphQL?",
            "--rounds",
            "1",
            "--seat",
            "critic=ollama:llama-local",
        ],
    );
    assert_eq!(unreachable.code, Some(1), "{}", unreachable.describe());
    told.push_str(
        &Filters::of(&project)
            .without_usage()
            .text(&format!("127.0.0.1:{gone}"), "127.0.0.1:[closed]")
            .run(
                "anvil run \"Should we adopt GraphQL?\" --rounds 1 --seat critic=ollama:llama-local",
                &unreachable,
            ),
    );
    insta::assert_snapshot!("endpoint_failures", told);
}

#[test]
fn the_stop_hook_plays_an_endpoint_seat_with_anvil_found_beside_it() {
    let table = Endpoints::new(debater);
    let project = table.project("");
    let session = new_session_id();
    let started = start_seated(&project, &session, "critic=ollama:llama-local");
    // The hook's PATH holds the agents but not anvil's folder: `anvil` is found beside
    // `anvil-hook`, as `cargo install` and the npm package put them.
    let anvil_dir = crate::support::anvil::anvil_dir();
    let path: Vec<_> = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .filter(|d| *d != anvil_dir)
        .collect();
    let mut hook = std::process::Command::new(crate::support::anvil::anvil_hook_bin());
    hook.arg("stop")
        .current_dir(project.path())
        .env_clear()
        .envs(table.env())
        .env("PATH", std::env::join_paths(path).unwrap());
    let child = spawn_hook(
        hook,
        &stop_input(&project, &session, "The advocate's case."),
    );
    let (run, answer) = answer_of(child);
    let prompt = answer["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("the host is handed its next phase: {}", run.describe()));
    assert!(
        prompt.contains(&format!("CRITIC r1 of {}", started.line)),
        "the synthesis prompt carries the endpoint's recorded text: {prompt}"
    );
    insta::assert_snapshot!(
        "notice_endpoint_seat_played",
        Filters::of(&project)
            .without_usage()
            .redact(answer["systemMessage"].as_str().unwrap_or_default())
    );
    assert_eq!(
        phases(&project.commits(&started.debate)),
        want(&[("advocate", "1", "host"), ("critic", "1", "ollama")])
    );
    assert_eq!(table.ollama_turns().len(), 1);

    // A hook with no `anvil` beside it, on PATH or named: the seat fails with what to do,
    // and the line waits.
    let lone = tempfile::tempdir().unwrap();
    let hook_copy = lone.path().join("anvil-hook");
    std::fs::copy(crate::support::anvil::anvil_hook_bin(), &hook_copy).unwrap();
    let project = table.project("");
    let session = new_session_id();
    start_seated(&project, &session, "critic=ollama:llama-local");
    let mut hook = std::process::Command::new(&hook_copy);
    hook.arg("stop")
        .current_dir(project.path())
        .env_clear()
        .envs(table.env())
        .env("PATH", "/usr/bin:/bin");
    let (_, answer) = answer_of(spawn_hook(
        hook,
        &stop_input(&project, &session, "The advocate's case."),
    ));
    insta::assert_snapshot!(
        "notice_endpoint_seat_without_anvil",
        Filters::of(&project)
            .path(lone.path(), "[lone]")
            .redact(answer["systemMessage"].as_str().unwrap_or_default())
    );
}

/// How the hostile endpoint of [`hostile_endpoint`] answers.
#[derive(Clone, Copy)]
enum Hostile {
    /// An error whose words hold escape sequences and the key it was sent.
    EscapesAndTheKey,
    /// A stream of 10 MB of text.
    Huge,
    /// A body that is not JSON.
    NotJson,
    /// A stream that never ends (a keep-alive comment every 100 ms).
    Endless,
}

/// A server on this machine that answers every request as `how` says, until dropped (each
/// connection ends within 60 s at most).
fn hostile_endpoint(how: Hostile) -> (u16, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = std::sync::Arc::clone(&stop);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let stopped = std::sync::Arc::clone(&stopped);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let (mut length, mut credential) = (0usize, String::new());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    let lower = line.to_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if lower.starts_with("authorization:") {
                        credential = line["authorization:".len()..].trim().to_owned();
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                let _ = std::io::Read::read_exact(&mut reader, &mut body);
                let mut out = stream;
                let head = |status: &str, kind: &str| {
                    format!(
                        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nConnection: close\r\n\r\n"
                    )
                };
                let began = Instant::now();
                let _ = match how {
                    Hostile::EscapesAndTheKey => out.write_all(
                        format!(
                            "{}{{\"error\":{{\"message\":\"Incorrect API key provided: {credential}. \
                             \\u001b]52;c;aGFja2Vk\\u0007\\u001b[2J\\u001b]0;pwned\\u0007 See \
                             https://admin:hunter2@status.example/\"}}}}",
                            head("401 Unauthorized", "application/json")
                        )
                        .as_bytes(),
                    ),
                    Hostile::Huge => {
                        let _ = out.write_all(head("200 OK", "text/event-stream").as_bytes());
                        let chunk = format!(
                            "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
                            "x".repeat(64 * 1024)
                        );
                        let mut sent = 0;
                        while sent < 10_000_000 && out.write_all(chunk.as_bytes()).is_ok() {
                            sent += chunk.len();
                        }
                        Ok(())
                    }
                    Hostile::NotJson => out.write_all(
                        format!(
                            "{}<html><body>502 Bad Gateway</body></html>",
                            head("200 OK", "application/json")
                        )
                        .as_bytes(),
                    ),
                    Hostile::Endless => {
                        let _ = out.write_all(head("200 OK", "text/event-stream").as_bytes());
                        while !stopped.load(Ordering::SeqCst)
                            && began.elapsed() < Duration::from_secs(60)
                            && out.write_all(b": keep-alive\n\n").is_ok()
                        {
                            std::thread::sleep(Duration::from_millis(100));
                        }
                        Ok(())
                    }
                };
            });
        }
    });
    (port, stop)
}

#[test]
fn a_hostile_endpoints_answer_ends_in_a_clear_failure_within_its_bound() {
    let project = Project::new();
    let filters = Filters::of(&project);
    let mut told = String::new();
    for (how, name) in [
        (Hostile::EscapesAndTheKey, "escapes"),
        (Hostile::Huge, "huge"),
        (Hostile::NotJson, "not-json"),
        (Hostile::Endless, "endless"),
    ] {
        let (port, stop) = hostile_endpoint(how);
        std::fs::write(
            project.anvil_home().join("config.toml"),
            format!(
                "[agents.hostile]\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\
                 api_key_env = \"ANVIL_HOSTILE_API_KEY\"\n"
            ),
        )
        .unwrap();
        let began = Instant::now();
        let run = Run::from_output(
            project
                .command(&["seats", "--try", "hostile:m", "--timeout", "6"])
                .env("ANVIL_HOSTILE_API_KEY", KEY)
                .env("HOME", project.path())
                .output()
                .unwrap(),
        );
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Each fails, says why, keeps the key and the terminal's controls out, and ends
        // within the seat's timeout.
        assert_eq!(run.code, Some(1), "{name}: {}", run.describe());
        assert!(
            began.elapsed() < Duration::from_secs(15),
            "{name}: {:?}",
            began.elapsed()
        );
        assert!(!run.stderr.contains(KEY), "{name}: {}", run.stderr);
        assert!(!run.stderr.contains("hunter2"), "{name}: {}", run.stderr);
        assert!(!run.stderr.contains('\u{1b}'), "{name}: {}", run.stderr);
        told.push_str(
            &filters
                .clone()
                .text(&format!("127.0.0.1:{port}"), "127.0.0.1:[hostile]")
                .run(
                    &format!("anvil seats --try hostile:m --timeout 6   # {name}"),
                    &run,
                ),
        );
    }
    // Nothing was kept of a failed turn, the key least of all.
    assert_eq!(files_holding(project.path(), KEY), Vec::<String>::new());
    insta::assert_snapshot!("hostile_endpoint", told);
}

#[test]
fn a_config_cannot_point_a_key_at_a_host_it_is_not_for() {
    let project = Project::new();
    let mut told = String::new();
    for config in [
        // A preset moved elsewhere keeps no provider key.
        "[agents.openrouter]\nbase_url = \"https://collector.example/api/v1\"\n",
        // Another provider's variable for a host that is not that provider's.
        "[agents.mygw]\nbase_url = \"https://collector.example/v1\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n",
        // Any other variable than the endpoint's own.
        "[agents.mygw]\nbase_url = \"https://collector.example/v1\"\napi_key_env = \"AWS_SECRET_ACCESS_KEY\"\n",
        // A key over plain http to another machine.
        "[agents.mygw]\nbase_url = \"http://collector.example/v1\"\napi_key_env = \"ANVIL_MYGW_API_KEY\"\n",
        // An endpoint on an agent CLI's name.
        "[agents.codex]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        // A seat on an endpoint the config does not name.
        "[seats]\ncritic = \"mygw:m\"\n",
    ] {
        std::fs::write(project.anvil_home().join("config.toml"), config).unwrap();
        let run = project.anvil(&["start", "Should we adopt GraphQL?"]);
        assert_eq!(run.code, Some(1), "{}", run.describe());
        told.push_str(&format!("$ cat .anvil/config.toml\n{config}"));
        told.push_str(&Filters::of(&project).run("anvil start \"Should we adopt GraphQL?\"", &run));
    }
    insta::assert_snapshot!("endpoint_config_refused", told);
    // The endpoint's own variable, and a seat the config chose, named where the debate
    // starts.
    std::fs::write(
        project.anvil_home().join("config.toml"),
        "[agents.mygw]\nbase_url = \"https://llm.example.com/v1\"\napi_key_env = \"ANVIL_MYGW_API_KEY\"\n\n[seats]\ncritic = \"mygw:gpt-5.4\"\n",
    )
    .unwrap();
    let run = project.anvil(&["start", "Should we adopt GraphQL?"]).ok();
    assert!(
        run.stderr.contains(
            "anvil: .anvil/config.toml seats critic by mygw (OpenAI-compatible endpoint, model \
             gpt-5.4, its turns sent to https://llm.example.com/v1 with the key in \
             $ANVIL_MYGW_API_KEY)"
        ),
        "{}",
        run.describe()
    );
    // The setup keeps where it sends: read back without the config, it is the same.
    std::fs::remove_file(project.anvil_home().join("config.toml")).unwrap();
    let state = project.only_state();
    let seat = state.setup.seats.seat_for("critic", None).unwrap();
    assert_eq!(
        seat.destination().as_deref(),
        Some("https://llm.example.com/v1 with the key in $ANVIL_MYGW_API_KEY")
    );
}

#[test]
fn endpoint_openings_drafted_blind_at_once_and_a_dollar_budget_from_openrouters_price() {
    // Round 1's openings each take a while, so that two drafted at once overlap.
    let slow = |turn: &Turn| {
        let reply = debater(turn);
        match crate::support::anvil::turn_tag(turn) {
            Some(tag) if tag.round == Some(1) => reply.delayed(Duration::from_secs(2)),
            _ => reply,
        }
    };
    let table = Endpoints::with(slow, slow);
    let project = table.project("");
    let price = format!("{}", OPENROUTER_COST * 0.8);
    let run = table
        .anvil(
            &project,
            &[
                "run",
                "Should we adopt GraphQL?",
                "--rounds",
                "3",
                "--independent",
                "--seat",
                "advocate=ollama:llama-local",
                "--seat",
                "critic=openrouter:meta/llama-remote",
                "--budget-usd",
                &price,
            ],
        )
        .ok();
    let debate = project.only_debate();
    let commits = project.commits(&debate);
    // OpenRouter's price of its first turn passes the budget: the debate goes to its
    // synthesis after round 1, played by the host.
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "ollama"),
            ("critic", "1", "openrouter"),
            ("synthesizer", "1", "host"),
        ]),
        "{}",
        run.describe()
    );
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    let why = critic.trailer("Anvil-Budget").expect("the budget is named");
    assert!(why.contains("spent"), "{why}");
    // Drafted blind, at once.
    let (advocate, critic) = (
        table.ollama_turns().remove(0),
        table.openrouter_turns().remove(0),
    );
    let (a_end, c_end) = (
        table.local.answered_at(advocate.seq).unwrap(),
        table.remote.answered_at(critic.seq).unwrap(),
    );
    assert!(
        advocate.received < c_end && critic.received < a_end,
        "{}",
        run.describe()
    );
    assert!(!advocate.all_text().contains("CRITIC r1"));
    assert!(!critic.all_text().contains("ADVOCATE r1"));
}

#[test]
fn with_fallback_host_the_host_plays_a_failed_endpoint_seat_and_the_record_says_so() {
    let table = Endpoints::with(debater, |_: &Turn| {
        Reply::error(404, "model 'meta/llama-remote' not found")
    });
    let project = table.project("");
    let run = table
        .anvil(
            &project,
            &[
                "run",
                "Should we adopt GraphQL?",
                "--rounds",
                "1",
                "--seat",
                "critic=openrouter:meta/llama-remote",
                "--fallback",
                "host",
            ],
        )
        .ok();
    let debate = project.only_debate();
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "host"),
            ("synthesizer", "1", "host"),
        ]),
        "{}",
        run.describe()
    );
    let why = commits
        .iter()
        .find(|c| c.phase() == "critic")
        .and_then(|c| c.trailer("Anvil-Seat-Fallback"))
        .expect("the fallback is recorded");
    assert!(
        why.contains("openrouter:meta/llama-remote failed")
            && why.contains("model 'meta/llama-remote' not found"),
        "{why}"
    );
    assert_eq!(
        files_holding(&project.anvil_home(), KEY),
        Vec::<String>::new()
    );
}

#[test]
fn five_agents_at_one_table_reach_the_synthesis_and_log_stats_sums_each_agent_and_model() {
    let table = Endpoints::new(debater);
    let project = table.project("");
    let run = table
        .anvil(
            &project,
            &[
                "run",
                "Should we adopt GraphQL?",
                "--stakeholders",
                "Engineering,Product,Security,Finance",
                "--seat",
                "Engineering=claude:claude-seat-model",
                "--seat",
                "Product=codex:codex-seat-model",
                "--seat",
                "Security=gemini:gemini-seat-model",
                "--seat",
                "Finance=opencode:scripted/opencode-seat-model",
                "--seat",
                "synthesizer=ollama:llama-local",
            ],
        )
        .ok();
    let debate = project.only_debate();
    let commits = project.commits(&debate);
    let played: Vec<&str> = commits
        .iter()
        .filter_map(|c| c.trailer("Anvil-Agent"))
        .collect();
    assert_eq!(
        played,
        ["claude", "codex", "gemini", "opencode", "ollama"],
        "{}",
        run.describe()
    );
    assert!(project.state_md(&debate).contains("status: done"));
    // The synthesis, by the endpoint, heard every voice.
    let synthesis = table.ollama_turns().remove(0);
    for voice in ["Engineering", "Product", "Security", "Finance"] {
        assert!(
            synthesis.all_text().contains(voice),
            "the synthesis did not hear {voice}"
        );
    }
    let stats = table
        .anvil(&project, &["log", "--stats", "--no-pager"])
        .ok();
    insta::assert_snapshot!(
        "log_stats_five_agents",
        Filters::of(&project).without_usage().redact(&stats.stdout)
    );
}

#[test]
fn anvil_seats_lists_each_endpoint_whether_its_key_is_set_and_whether_it_answers() {
    let table = Endpoints::new(debater);
    let gone = closed_port();
    let project = table.project(&format!(
        "\n[agents.lmstudio]\nbase_url = \"http://127.0.0.1:{gone}/v1\"\n\n\
         [agents.vllm]\nbase_url = \"{}/v1\"\napi_key_env = \"ANVIL_VLLM_API_KEY\"\n",
        table.local.base_url()
    ));
    // No provider key is set: the presets that would go to a provider's own host are not
    // asked (this machine reaches none).
    let env: Vec<_> = table
        .env()
        .into_iter()
        .filter(|(k, _)| !["OPENAI_API_KEY", "OPENROUTER_API_KEY"].contains(k))
        .collect();
    let run = Run::from_output(
        project
            .command(&["seats"])
            .env_clear()
            .envs(env.clone())
            .output()
            .unwrap(),
    )
    .ok();
    let endpoints = run
        .stdout
        .split_once("openai ")
        .map(|(_, rest)| format!("openai {rest}"))
        .unwrap_or_else(|| panic!("no endpoints listed: {}", run.describe()));
    insta::assert_snapshot!(
        "seats_endpoints",
        Filters::of(&project)
            .text(&table.local.base_url(), "[local]")
            .text(&table.remote.base_url(), "[remote]")
            .text(&format!("127.0.0.1:{gone}"), "127.0.0.1:[closed]")
            .redact(&endpoints)
    );
    // Each was asked `GET …/models`, with its key where it takes one and it is set.
    let asked = table.remote.other_requests();
    assert!(
        asked
            .iter()
            .any(|(m, u)| m == "GET" && u.starts_with("/api/v1/models") && u.ends_with(KEY)),
        "{asked:?}"
    );
    assert!(
        table
            .local
            .other_requests()
            .iter()
            .all(|(_, u)| !u.contains(KEY))
    );
    // The same, for scripts.
    let json = Run::from_output(
        project
            .command(&["seats", "--json"])
            .env_clear()
            .envs(env)
            .output()
            .unwrap(),
    )
    .ok();
    let list: Vec<serde_json::Value> = serde_json::from_str(&json.stdout).unwrap();
    let ready: Vec<(String, bool)> = list
        .iter()
        .filter(|a| a.get("endpoint").is_some())
        .map(|a| {
            (
                a["agent"].as_str().unwrap().to_owned(),
                a["ready"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ready,
        [
            ("openai".to_owned(), false),
            ("openrouter".to_owned(), true),
            ("ollama".to_owned(), true),
            ("lmstudio".to_owned(), false),
            ("vllm".to_owned(), false),
        ]
    );
}

#[test]
fn a_claude_code_session_reaches_its_synthesis_with_an_ollama_critic() {
    use crate::support::claude::{Claude, Client};
    let table = Endpoints::new(debater);
    let project = Project::installed();
    std::fs::write(project.anvil_home().join("config.toml"), table.config()).unwrap();
    let out = Claude::new(
        &table.local,
        project.path(),
        "/anvil \"Should we adopt GraphQL?\" --rounds 1 --seat critic=ollama:llama-local",
    )
    .client(Client::Newest)
    .session_id(new_session_id())
    .timeout(Duration::from_secs(240))
    .run();
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
            ("critic", "1", "ollama"),
            ("synthesizer", "1", "host"),
        ])
    );
    // The endpoint played the critic once, and the host's synthesis prompt carried its text.
    assert_eq!(table.ollama_turns().len(), 1);
    let synthesis = table
        .local
        .turns_of(Agent::Claude)
        .into_iter()
        .find(|t| crate::support::anvil::turn_tag(t).is_some_and(|tag| tag.is_synthesis()))
        .expect("the host was asked for the synthesis");
    assert!(
        synthesis
            .prompt()
            .contains(&format!("CRITIC r1 of {debate}@main"))
    );
    project.assert_fsck_clean();
}
