//! Speed of seated debates: what anvil itself costs per phase played by another agent, for
//! every agent, independent openings drafted at once, and a council round of three seats.
//!
//! `cargo bench --bench seats` (`ANVIL_BENCH_AGENTS=gemini,opencode` for some agents only).
//! The real agent CLIs (node_modules/.bin, `npm install`) play every seat of a 3-round debate
//! against the scripted model server of the end-to-end tests, which answers each request after
//! a fixed delay. Each agent runs behind a small wrapper that notes when its process started
//! and ended; anvil's own cost is the run's wall time less the time inside the agents'
//! processes, shared out over the phases (the agents' own reports of a turn's duration leave
//! out their start, so the record's `Anvil-Duration-Ms` would count it as anvil's).
//!
//! Targets: anvil's own cost per external phase at most 5 % of a 3-round seated run's wall
//! time, for every agent; with `--independent`, round 1 at most 1.2 times its slowest seat.
//!
//! A council round (`cargo bench --bench seats -- council` runs this part alone): a stakeholder
//! rotation of three Codex seats drafting blind and at once (`--all-draft --rounds 1`), the
//! scripted server answering the three voices after 300, 400 and 500 ms; the round's wall time
//! (from the run's note that the drafts start to the synthesis's first line) against its
//! slowest seat's recorded duration. Target: at most 1.2 times.
//!
//! An endpoint seat (`cargo bench --bench seats -- endpoint` runs this part alone): what its
//! turn adds to the endpoint's own answer, the wall time of `anvil endpoint-turn` (what the
//! seat runner starts: a process, the prompt on stdin, the request, the answer read and the
//! conversation kept) less the time the scripted server held the request, for a new
//! conversation and a resumed one, with a mid-debate prompt of 30 KB; and the same through
//! `anvil seats --try`, which adds the runner and a second process. Target: under 20 ms.

#[allow(dead_code)]
#[path = "../tests/it/support"]
mod support {
    pub mod agents;
    pub mod anvil;
    pub mod claude;
    pub mod gemini;
    pub mod model_server;
    pub mod openai;
    pub mod processes;
}

use std::time::{Duration, Instant};

use support::agents::AgentsHome;
use support::anvil::{Project, Run, find_tag, phase_text};
use support::model_server::{ModelServer, Reply};

const DELAY: Duration = Duration::from_millis(1500);
const SAMPLES: usize = 3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `anvil ARGS` with every agent pointed at the server (and `env` besides); its wall time.
fn run(
    project: &Project,
    home: &AgentsHome,
    args: &[&str],
    env: &[(String, String)],
) -> (Run, Duration) {
    let began = Instant::now();
    let out = project
        .command(args)
        .env_clear()
        .envs(home.env())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run anvil");
    let run = Run::from_output(out).ok();
    (run, began.elapsed())
}

/// The debate's phases' durations (ms) in the record, by phase.
fn durations(project: &Project) -> Vec<(String, f64)> {
    let dir = project.anvil_home().join("debates");
    let debate = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    project
        .commits(&debate)
        .iter()
        .filter_map(|c| {
            let ms: f64 = c.trailer("Anvil-Duration-Ms")?.parse().ok()?;
            Some((c.phase().to_owned(), ms))
        })
        .collect()
}

/// The seconds a progress line of `anvil run` stamps, for the first line holding `what`.
fn stamp(stderr: &str, what: &str) -> f64 {
    let line = stderr
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no progress line with {what}:\n{stderr}"));
    line.trim_start_matches('[')
        .split('s')
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// A program that runs `agent` and notes, in `log`, when each turn began and ended
/// (nanoseconds, one line each). A `--version` is not noted: anvil asks it of some agents once
/// per run, and it counts as anvil's own cost.
fn timed(dir: &std::path::Path, agent: &str, log: &std::path::Path) -> std::path::PathBuf {
    let real = support::agents::node_bin_dir().join(agent);
    let wrapper = dir.join(format!("timed-{agent}"));
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && exec '{real}' \"$@\"\ndate +%s%N >> '{log}'\n'{real}' \"$@\"\nrc=$?\ndate +%s%N >> '{log}'\nexit $rc\n",
            log = log.display(),
            real = real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// The seconds spent inside the agent's turns, from its wrapper's log.
fn inside(log: &std::path::Path) -> f64 {
    let stamps: Vec<u128> = std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    stamps
        .chunks(2)
        .filter(|pair| pair.len() == 2)
        .map(|pair| (pair[1] - pair[0]) as f64 / 1e9)
        .sum()
}

/// The median and the 90th percentile of `v`.
fn median_p90(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[(v.len() * 9 / 10).min(v.len() - 1)])
}

/// When the server finished answering request `seq`: it notes that once the answer is written,
/// which the client may have read (and exited on) a moment before.
fn answered_at(server: &ModelServer, seq: usize) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(at) = server.answered_at(seq) {
            return at;
        }
        assert!(
            Instant::now() < deadline,
            "request {seq} was never answered"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// What an endpoint seat's turn adds to the endpoint's answer (see the module's doc).
fn endpoint_turns() {
    const ANSWER: Duration = Duration::from_millis(300);
    const TURNS: usize = 21;
    let server = ModelServer::start(|_| Reply::text("A considered answer.").delayed(ANSWER));
    let state = tempfile::tempdir().unwrap();
    let prompt = "The debate so far, as a seat's prompt carries it. ".repeat(600);
    let base_url = format!("{}/v1", server.base_url());
    // Spawns one turn; its wall time less the server's time on the request, in ms.
    let turn = |session: &str, resume: bool| -> f64 {
        let seen = server.requests().len();
        let began = Instant::now();
        let mut child = std::process::Command::new(support::anvil::anvil_bin())
            .arg("endpoint-turn")
            .arg("--name=ollama")
            .arg(format!("--base-url={base_url}"))
            .arg("--model=bench-model")
            .arg(if resume {
                format!("--resume={session}")
            } else {
                format!("--session-id={session}")
            })
            .arg("--timeout=60")
            .env("XDG_STATE_HOME", state.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), prompt.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let wall = began.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let request = &server.requests()[seen];
        let held = answered_at(&server, request.seq) - request.received;
        (wall.saturating_sub(held)).as_secs_f64() * 1000.0
    };
    let (mut fresh, mut resumed) = (Vec::new(), Vec::new());
    for i in 0..TURNS {
        let session = format!("0199a1b2-c3d4-7e5f-8a9b-{i:012x}");
        fresh.push(turn(&session, false));
        resumed.push(turn(&session, true));
    }
    let (f50, f90) = median_p90(fresh);
    let (r50, r90) = median_p90(resumed);
    println!(
        "endpoint turn (anvil endpoint-turn, 30 KB prompt, answer after {} ms): adds {f50:.1} ms \
         (p90 {f90:.1}) to a new conversation, {r50:.1} ms (p90 {r90:.1}) to a resumed one \
         (target < 20 ms)",
        ANSWER.as_millis()
    );

    // The same turn through the seat runner, by `anvil seats --try`: a second process, the
    // config read, the runner's process group and pipes.
    let project = Project::new();
    std::fs::write(
        project.anvil_home().join("config.toml"),
        format!("[agents.ollama]\nbase_url = \"{base_url}\"\n"),
    )
    .unwrap();
    let mut through = Vec::new();
    for _ in 0..TURNS {
        let seen = server.requests().len();
        let began = Instant::now();
        let out = project
            .command(&[
                "seats",
                "--try",
                "ollama:bench-model",
                "--prompt",
                "Say it.",
            ])
            .env("XDG_STATE_HOME", state.path())
            .output()
            .unwrap();
        let wall = began.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let request = &server.requests()[seen];
        let held = answered_at(&server, request.seq) - request.received;
        through.push(wall.saturating_sub(held).as_secs_f64() * 1000.0);
    }
    let (t50, t90) = median_p90(through);
    println!(
        "endpoint turn through `anvil seats --try` (two processes, the runner): adds {t50:.1} ms \
         (p90 {t90:.1})"
    );
}

/// The three voices of a council round and how long the scripted server takes to answer each.
const COUNCIL: [(&str, u64); 3] = [
    ("Engineering Team", 300),
    ("Product/UX", 400),
    ("Business/Management", 500),
];

/// A council round of three seats against its slowest seat ([`COUNCIL`]).
fn council_round() {
    let server = ModelServer::start(|turn| match find_tag(&turn.latest_user_text) {
        Some(tag) => {
            let ms = COUNCIL
                .iter()
                .find(|(voice, _)| tag.voice.as_deref() == Some(voice))
                .map_or(0, |(_, ms)| *ms);
            Reply::text(phase_text(&tag)).delayed(Duration::from_millis(ms))
        }
        None => Reply::text("ok"),
    });
    let home = AgentsHome::new(&server);
    let mut args: Vec<String> = [
        "run",
        "Should we adopt GraphQL?",
        "--stakeholders",
        "--all-draft",
        "--rounds",
        "1",
        "--quiet",
        "--seat",
        "synthesizer=codex:bench-model",
    ]
    .map(str::to_owned)
    .to_vec();
    for (voice, _) in COUNCIL {
        args.extend(["--seat".to_owned(), format!("{voice}=codex:bench-model")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (round, slowest, ratio) = blind_round(&home, &args, "stakeholder");
    println!(
        "council round (3 seats, model delays 300/400/500 ms): {round:.2} s, slowest seat {slowest:.2} s: {ratio:.2}x (target <= 1.2x)"
    );
}

/// Runs `args` [`SAMPLES`] times: the medians of the blind round's wall time (from the note
/// that its phases start at once to the synthesis), of its slowest `role` phase's recorded
/// duration, and of their ratio.
fn blind_round(home: &AgentsHome, args: &[&str], role: &str) -> (f64, f64, f64) {
    let (mut rounds, mut slowest, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..SAMPLES {
        let project = Project::new();
        let (run, _) = run(&project, home, args, &[]);
        let round = stamp(&run.stderr, "synthesis") - stamp(&run.stderr, "at once, blind");
        let slow = durations(&project)
            .iter()
            .filter(|(p, _)| p == role || (role == "opening" && (p == "advocate" || p == "critic")))
            .map(|(_, ms)| ms / 1000.0)
            .fold(0.0, f64::max);
        rounds.push(round);
        slowest.push(slow);
        ratios.push(round / slow);
    }
    (median(rounds), median(slowest), median(ratios))
}

fn main() {
    if std::env::args().any(|a| a == "council") {
        council_round();
        return;
    }
    let only_endpoint = std::env::args().any(|a| a == "endpoint");
    endpoint_turns();
    if only_endpoint {
        return;
    }
    let server = ModelServer::start(|turn| match find_tag(&turn.latest_user_text) {
        Some(tag) => Reply::text(phase_text(&tag)).delayed(DELAY),
        None => Reply::text("ok"),
    });
    let home = AgentsHome::new(&server);
    let wanted = std::env::var("ANVIL_BENCH_AGENTS").ok();
    let agents = [
        ("claude", "claude:bench-model"),
        ("codex", "codex:bench-model"),
        ("copilot", "copilot:bench-model"),
        ("qwen", "qwen:bench-model"),
        ("gemini", "gemini:bench-model"),
        ("opencode", "opencode:scripted/opencode-seat-model"),
    ];
    let wrappers = tempfile::tempdir().unwrap();

    // A 3-round seated run: 7 phases, each a process of the agent.
    for (agent, seat) in agents {
        if wanted
            .as_deref()
            .is_some_and(|w| !w.split(',').any(|a| a == agent))
        {
            continue;
        }
        let seats: Vec<String> = ["advocate", "critic", "synthesizer"]
            .iter()
            .flat_map(|role| ["--seat".to_owned(), format!("{role}={seat}")])
            .collect();
        let (mut walls, mut own_per_phase, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for sample in 0..SAMPLES {
            let project = Project::new();
            let log = wrappers.path().join(format!("{agent}-{sample}.log"));
            let program = timed(wrappers.path(), agent, &log);
            let env = [(
                format!("ANVIL_{}_BIN", agent.to_uppercase()),
                program.display().to_string(),
            )];
            let mut args = vec!["run", "Should we adopt GraphQL?", "--rounds", "3"];
            args.extend(seats.iter().map(String::as_str));
            let (ran, wall) = run(&project, &home, &args, &env);
            let phases = durations(&project);
            assert_eq!(phases.len(), 7, "{agent}: {phases:?}\n{}", ran.describe());
            let wall = wall.as_secs_f64();
            let own = (wall - inside(&log)) / phases.len() as f64;
            walls.push(wall);
            own_per_phase.push(own);
            ratios.push(own / wall);
        }
        println!(
            "{agent}: 3-round seated run (7 phases, model delay {} ms): wall {:.2} s; anvil's own cost per phase {:.0} ms = {:.2} % of the run (target <= 5 %)",
            DELAY.as_millis(),
            median(walls),
            median(own_per_phase) * 1000.0,
            median(ratios) * 100.0
        );
    }
    if wanted
        .as_deref()
        .is_some_and(|w| !w.split(',').any(|a| a == "codex"))
    {
        return;
    }
    let seats = [
        "--seat",
        "advocate=codex:bench-model",
        "--seat",
        "critic=codex:bench-model",
        "--seat",
        "synthesizer=codex:bench-model",
    ];

    // Independent openings: round 1 against its slowest seat.
    let mut args = vec![
        "run",
        "Should we adopt GraphQL?",
        "--rounds",
        "1",
        "--independent",
        "--quiet",
    ];
    args.extend(seats);
    let (round, slowest, ratio) = blind_round(&home, &args, "opening");
    println!(
        "--independent round 1: {round:.2} s, slowest seat {slowest:.2} s: {ratio:.2}x (target <= 1.2x)"
    );
    council_round();
}
