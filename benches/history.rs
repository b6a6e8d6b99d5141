//! Scale of the commands that look back: with 1,000 recorded debates (10,000 phase commits),
//! whole-process medians of `anvil log` (its first screen: the 10 newest debates) and
//! `anvil diff` between two rounds of one line.
//!
//! `cargo bench --bench history`. The record is built in-process through the same library
//! calls the Stop hook makes (start, then nine recorded turns per debate), once, then every
//! sample is a fresh `anvil` process.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anvil_core::home::Home;

const ANVIL: &str = env!("CARGO_BIN_EXE_anvil");
const DEBATES: usize = 1_000;
const SAMPLES: usize = 31;
const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";

fn main() {
    let work = tempfile::tempdir().expect("temp dir");
    let project = work.path();
    let home = Home::init(project).expect("init");
    let built = Instant::now();
    let mut last = None;
    for i in 0..DEBATES {
        let setup = anvil_core::model::options::Options {
            question: format!("Debate number {i}: should we do thing {i}?"),
            rounds: Some(4),
            ..Default::default()
        }
        .into_setup()
        .expect("setup");
        let started = anvil_core::line::start::start(&home, setup, Some(SESSION)).expect("start");
        let line = started.line.clone();
        for phase in 0..9 {
            let text = format!(
                "Phase {phase} of debate {i}.\n\n{}\n",
                "An argument that goes on for a while, point after point. ".repeat(20)
            );
            anvil_core::line::stop::record_turn(&home, &line, SESSION, &text).expect("turn");
        }
        last = Some(line);
    }
    let last = last.expect("one debate");
    eprintln!(
        "built {DEBATES} debates ({} commits) in {:.1?}",
        DEBATES * 10,
        built.elapsed()
    );
    let rev = |r: &str| format!("{last}:{r}");
    let log = median(project, &["log"]);
    let diff = median(project, &["diff", &rev("round-1"), &rev("round-2")]);
    let log_all = median(project, &["log", "--all"]);
    println!("anvil log (first screen, 10 newest of {DEBATES} debates): median {log:.1?}");
    println!("anvil diff DEBATE@main:round-1 DEBATE@main:round-2: median {diff:.1?}");
    println!("anvil log --all ({DEBATES} debates): median {log_all:.1?}");
}

fn median(project: &Path, args: &[&str]) -> Duration {
    let mut times: Vec<Duration> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            let out = Command::new(ANVIL)
                .args(args)
                .current_dir(project)
                .env_remove("CLAUDE_CODE_SESSION_ID")
                .output()
                .expect("run anvil");
            let took = start.elapsed();
            assert!(
                out.status.success(),
                "anvil {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!out.stdout.is_empty(), "anvil {args:?} printed nothing");
            took
        })
        .collect();
    times.sort();
    times[SAMPLES / 2]
}
