//! What a search costs as its query grows: whole-process medians of `anvil search` over 200
//! recorded debates (2,000 phase commits, the index warm), for queries of 1 to 64 words (the
//! most a search takes) and for queries past the limits, which are refused before SQLite sees
//! them. Before the limit, FTS5 parsed a query of N terms in time quadratic in N (a 256 KB
//! query held the MCP server for 25 s of CPU); now the cost per word stays flat up to 64 words
//! and a longer query costs what reading it does.
//!
//! The MCP server is timed the same way, within one `anvil mcp` process: a 64-word search, a
//! 256 KB query (refused by the search), a 1 MB and a 50 MB line (past the server's line limit,
//! answered with an error as soon as their last byte is read).
//!
//! `cargo bench --bench search`. Every query here matches no phase with all its words, so
//! each search runs twice (all the words, then any of them): the dearest path.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anvil_core::home::Home;

const ANVIL: &str = env!("CARGO_BIN_EXE_anvil");
const DEBATES: usize = 200;
const SAMPLES: usize = 21;
const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";

fn main() {
    let work = tempfile::tempdir().expect("temp dir");
    let project = work.path();
    let home = Home::init(project).expect("init");
    for i in 0..DEBATES {
        let setup = anvil_core::model::options::Options {
            question: format!("Debate number {i}: should we move service {i} to a queue?"),
            rounds: Some(4),
            ..Default::default()
        }
        .into_setup()
        .expect("setup");
        let started = anvil_core::line::start::start(&home, setup, Some(SESSION)).expect("start");
        for phase in 0..9 {
            let text = format!(
                "Phase {phase} of debate {i}: word{} and word{}.\n\n{}\n",
                (i * 9 + phase) % 500,
                (i * 7 + phase) % 300,
                "Latency, throughput, ordering and the cost of running brokers. ".repeat(10)
            );
            anvil_core::line::stop::record_turn(&home, &started.line, SESSION, &text)
                .expect("turn");
        }
    }
    // Searched once the record has settled: the index then trusts its stamps (see
    // `memory::index::Quick`), as it does in a project where nothing moved for two seconds.
    std::thread::sleep(Duration::from_millis(2500));
    run(project, &["search", "warm"], Some(0));

    // Words that occur here and there: every query is answered by its second, wider search.
    let words: Vec<String> = (0..64).map(|n| format!("word{}", n * 7)).collect();
    let mut rows = Vec::new();
    for n in [1, 8, 16, 32, 64] {
        let query = words[..n].join(" ");
        let time = median(project, &["search", "-n", "10", &query], Some(0));
        rows.push((format!("{n} words ({} bytes)", query.len()), n, time));
    }
    let one = rows[0].2;
    for (what, n, time) in &rows {
        println!(
            "anvil search, {what}: median {time:.1?} ({:.2}x one word, {:.2?} per word)",
            time.as_secs_f64() / one.as_secs_f64(),
            *time / *n as u32
        );
    }
    // A command line takes at most 128 KB in one argument.
    for (what, query) in [
        (
            "65 words",
            (0..65)
                .map(|n| format!("w{n}"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        ("100 KB", "billing ".repeat(100 * 1024 / 8)),
    ] {
        let time = median(project, &["search", &query], Some(2));
        println!("anvil search, {what} (refused): median {time:.1?}");
    }
    mcp(project, &words.join(" "));
}

/// Round trips through one `anvil mcp` process.
fn mcp(project: &Path, words: &str) {
    let mut child = Command::new(ANVIL)
        .arg("mcp")
        .current_dir(project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start anvil mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut next_id = 0u64;
    let mut call = |line: String| -> (Duration, serde_json::Value) {
        next_id += 1;
        let line = line.replace("ID", &next_id.to_string());
        let start = Instant::now();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        out.read_line(&mut answer).unwrap();
        (start.elapsed(), serde_json::from_str(&answer).unwrap())
    };
    let search = |query: &str| {
        serde_json::json!({"jsonrpc": "2.0", "id": "ID", "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": query}}})
        .to_string()
        .replace("\"ID\"", "ID")
    };
    call(
        r#"{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#
            .to_owned(),
    );
    // The notification that ends the handshake gets no answer: sent with a ping that does.
    call(
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n\
         {\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"ping\"}"
            .to_owned(),
    );
    for (what, query) in [
        ("64 words", words.to_owned()),
        (
            "256 KB (refused by the search)",
            "billing ".repeat(32 * 1024),
        ),
        ("1 MB (past the line limit)", "billing ".repeat(128 * 1024)),
        (
            "50 MB (past the line limit)",
            "billing ".repeat(50 * 128 * 1024),
        ),
    ] {
        let line = search(&query);
        let mut times: Vec<Duration> = (0..7)
            .map(|_| {
                let (time, answer) = call(line.clone());
                assert!(
                    answer.get("result").is_some() || answer.get("error").is_some(),
                    "{answer}"
                );
                time
            })
            .collect();
        times.sort();
        println!(
            "anvil mcp, search with a query of {what}: median {:.1?}",
            times[3]
        );
    }
    let (ping, _) = call(r#"{"jsonrpc":"2.0","id":ID,"method":"ping"}"#.to_owned());
    println!("anvil mcp, ping after them: {ping:.1?}");
    drop(stdin);
    let _ = child.wait();
}

/// One `anvil ARGS` in `project`, which must exit with `code`.
fn run(project: &Path, args: &[&str], code: Option<i32>) -> Duration {
    let start = Instant::now();
    let out = Command::new(ANVIL)
        .args(args)
        .current_dir(project)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .output()
        .expect("run anvil");
    let took = start.elapsed();
    assert_eq!(
        out.status.code(),
        code,
        "anvil {}: {}",
        args[..1].join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn median(project: &Path, args: &[&str], code: Option<i32>) -> Duration {
    let mut times: Vec<Duration> = (0..SAMPLES).map(|_| run(project, args, code)).collect();
    times.sort();
    times[SAMPLES / 2]
}
