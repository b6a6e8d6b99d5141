//! Speed of `anvil serve`: a 10-round debate page, a hook's commit reaching a connected event
//! stream, and 100 event-stream clients held at once (with the server's memory).
//!
//! `cargo bench --bench serve`. The debates are built in-process through the same library calls
//! the Stop hook makes; the server is the real binary, talked to over TCP on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anvil_core::home::{Home, LineRef};

const ANVIL: &str = env!("CARGO_BIN_EXE_anvil");
const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";
const SAMPLES: usize = 31;

fn debate(home: &Home, question: &str, rounds: u32, turns: usize) -> LineRef {
    let setup = anvil_core::model::options::Options {
        question: question.to_owned(),
        rounds: Some(rounds),
        ..Default::default()
    }
    .into_setup()
    .expect("setup");
    let started = anvil_core::line::start::start(home, setup, Some(SESSION)).expect("start");
    let line = started.line.clone();
    for phase in 0..turns {
        turn(home, &line, phase);
    }
    line
}

fn turn(home: &Home, line: &LineRef, phase: usize) {
    let text = format!(
        "## Phase {phase}\n\n{}\n\n- a point\n- another point with `code`\n\n> a quote\n",
        "An argument that goes on for a while, **point** after point. ".repeat(25)
    );
    anvil_core::line::stop::record_turn(home, line, SESSION, &text).expect("turn");
}

fn main() {
    let work = tempfile::tempdir().expect("temp dir");
    let project = work.path();
    let home = Home::init(project).expect("init");
    // Ten full rounds (20 phases), synthesis still to come.
    let ten = debate(&home, "Should we rewrite billing in Rust?", 10, 20);
    // A long debate whose next phases feed the event measurements.
    let live = debate(&home, "Should we adopt GraphQL?", 40, 1);

    let mut child = Command::new(ANVIL)
        .arg("serve")
        .current_dir(project)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start anvil serve");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("the URL");
    let port: u16 = url["http://127.0.0.1:".len()..]
        .split('/')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let token = url.trim().split("token=").nth(1).expect("token").to_owned();
    let pid = child.id();

    // 1. The page of a 10-round debate.
    let path = format!("/debates/{}", ten.debate);
    let (mut walls, mut renders) = (Vec::new(), Vec::new());
    for _ in 0..SAMPLES {
        let began = Instant::now();
        let (status, head, body) = get(port, &token, &path);
        walls.push(began.elapsed());
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("Round 10"), "the page shows round 10");
        let dur: f64 = head
            .lines()
            .find_map(|l| l.strip_prefix("server-timing: render;dur="))
            .and_then(|d| d.trim().parse().ok())
            .expect("Server-Timing");
        renders.push(Duration::from_secs_f64(dur / 1000.0));
    }
    println!(
        "10-round debate page ({} phases): whole request median {:.1?} (max {:.1?}), of which template render median {:.2?}",
        20,
        median(&mut walls),
        walls.iter().max().unwrap(),
        median(&mut renders)
    );

    // 2. From a hook's commit to the event at a connected client.
    let mut stream = events(port, &token);
    let mut lags = Vec::new();
    for phase in 1..=20 {
        // Let the watcher settle so each sample starts anywhere in its polling period.
        std::thread::sleep(Duration::from_millis(37 * (phase % 7) as u64 + 50));
        turn(&home, &live, phase);
        let committed = Instant::now();
        loop {
            let line = read_line(&mut stream);
            if line.starts_with("data:") && line.contains(&live.debate) {
                break;
            }
        }
        lags.push(committed.elapsed());
    }
    println!(
        "commit → event at a connected client: median {:.0?}, max {:.0?} ({} samples)",
        median(&mut lags),
        lags.iter().max().unwrap(),
        lags.len()
    );
    drop(stream);

    // 3. 100 event-stream clients held at once.
    let before = rss_kib(pid);
    let mut clients: Vec<BufReader<TcpStream>> = (0..100).map(|_| events(port, &token)).collect();
    let held = rss_kib(pid);
    turn(&home, &live, 21);
    let mut reached = 0;
    for client in &mut clients {
        loop {
            let line = read_line(client);
            if line.starts_with("data:") && line.contains(&live.debate) {
                reached += 1;
                break;
            }
        }
    }
    println!(
        "100 event-stream clients held: server RSS {before} KiB before, {held} KiB with them \
         ({:+} KiB); one commit reached {reached} of 100",
        held as i64 - before as i64
    );
    drop(clients);
    let _ = child.kill();
    let _ = child.wait();
}

fn get(port: u16, token: &str, path: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// An event stream, read past its `hello`.
fn events(port: u16, token: &str) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .expect("send");
    let mut r = BufReader::new(s);
    while !read_line(&mut r).starts_with("event: hello") {}
    r
}

fn read_line(r: &mut BufReader<TcpStream>) -> String {
    let mut line = String::new();
    let n = r.read_line(&mut line).expect("read the event stream");
    assert!(n > 0, "the event stream ended");
    line
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}
