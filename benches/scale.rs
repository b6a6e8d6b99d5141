//! Records at team scale: the commands that look back, the Stop hook and the record's size on
//! disk, with one debate and then with 1,000, 10,000 and 50,000 recorded phase commits.
//!
//! `cargo bench --bench scale` (set `ANVIL_SCALE_MAX=10000` for a shorter run; set
//! `ANVIL_SCALE_KEEP=DIR` to keep a copy of the project at each size, loose, in `DIR`, for a
//! profiler).
//!
//! How the record is filled: every debate is a 4-round analyst debate (a start commit and
//! nine recorded turns: ten commits), written in-process through `anvil_core::line::start::start` and
//! `anvil_core::line::stop::record_turn`, the library calls the Stop hook's process makes for a phase
//! (same commit path, same live files); only the process start is skipped, so that 50,000
//! commits take minutes, not hours. The measured debate is the first one, left active in
//! round 3, so `show`, `diff` and `status` have the same thing to print at every size. The
//! hook itself is timed as a real `anvil hook stop` process recording a phase of a debate
//! started for it.
//!
//! At each size, medians of fresh `anvil` processes (time; peak RSS from `/usr/bin/time -f %M`
//! when it exists), first on the record as the hook leaves it (loose objects and refs), then
//! after `anvil gc`. Each command's ratio is measured side by side: its runs alternate with
//! runs of the same command on a copy of the record taken when it held only the measured
//! debate, so that a machine that speeds up or slows down between sizes moves both alike; and the record's bytes on disk (allocated blocks, as `du` counts) before
//! and after `anvil gc`, next to what `git gc` makes of a copy of the same record.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anvil_core::home::{Home, LineRef};
use anvil_core::record::maintenance::disk_bytes;

const ANVIL: &str = env!("CARGO_BIN_EXE_anvil");
const SAMPLES: usize = 21;
const FILL_SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";
const MEASURED_SESSION: &str = "1c4d3b5f-6071-4829-93a4-b5c6d7e8f901";

fn main() {
    let max: usize = std::env::var("ANVIL_SCALE_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let work = tempfile::tempdir().expect("temp dir");
    let project = work.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let home = Home::init(&project).expect("init");

    // The measured debate: round 1 and 2 recorded, round 3's advocate out. Its id keeps the
    // first five words of the question: "billing" is in the question only.
    let measured = start(
        &home,
        "Should the measured debate go on with billing?",
        MEASURED_SESSION,
    );
    for phase in 0..4 {
        turn(&home, &measured, MEASURED_SESSION, 0, phase);
    }
    // The session is done with it: `status` finds it through the active lines, not a session.
    std::fs::remove_file(home.root().join("sessions").join(MEASURED_SESSION)).ok();
    // The reference every ratio is measured against, side by side.
    let one_debate = copy_of(&project, work.path(), "one-debate");

    let commands: Vec<(&str, Vec<String>)> = vec![
        (
            "show",
            vec!["show".into(), format!("{measured}:round-2/critic")],
        ),
        (
            "diff",
            vec![
                "diff".into(),
                format!("{measured}:round-1"),
                format!("{measured}:round-2"),
            ],
        ),
        ("status", vec!["status".into()]),
        ("log", vec!["log".into()]),
        ("log --all", vec!["log".into(), "--all".into()]),
        // Naming a debate without its id: by its number (the journal, as far as it counts),
        // by words of its id (a listing of the debates' names), by a word of its question
        // (that listing, then the search index, caught up first).
        ("log NUMBER", vec!["log".into(), "1".into()]),
        ("log ID-WORDS", vec!["log".into(), "measured-debate".into()]),
        ("log WORD", vec!["log".into(), "billing".into()]),
        (
            "search",
            vec![
                "search".into(),
                "-n".into(),
                "5".into(),
                "\"measured debate\"".into(),
            ],
        ),
    ];

    println!(
        "anvil at scale: whole-process medians of {SAMPLES} runs (release build), each ratio \
         to the same command on the one-debate record, timed alternately"
    );
    println!(
        "record filled in-process through anvil_core::line::{{start::start, stop::record_turn}} (see the header)"
    );
    let mut commits = 5;
    let mut debates = 1;
    let sizes: Vec<usize> = [1_000, 10_000, 50_000]
        .into_iter()
        .filter(|&n| n <= max)
        .collect();
    for target in sizes {
        let built = Instant::now();
        while commits < target {
            let line = start(
                &home,
                &format!("Debate number {debates}: thing {debates}?"),
                FILL_SESSION,
            );
            for phase in 0..9 {
                turn(&home, &line, FILL_SESSION, debates, phase);
            }
            commits += 10;
            debates += 1;
        }
        eprintln!(
            "filled to {commits} commits ({debates} debates) in {:.1?}",
            built.elapsed()
        );
        if let Some(keep) = std::env::var_os("ANVIL_SCALE_KEEP") {
            std::fs::create_dir_all(&keep).expect("ANVIL_SCALE_KEEP");
            copy_of(&project, Path::new(&keep), &format!("{commits}-loose"));
        }
        let hook = hook_median(&home, &project);
        let label = format!("{commits} commits, loose");
        report(&project, &one_debate, &commands, &label);
        println!("  {:<12} {:>9.2} ms", "hook (phase)", ms(hook));
        search_costs(&home, &project, debates);

        let before = disk_bytes(&home.record_dir());
        let git_gc = git_gc_bytes(&home.record_dir(), work.path());
        let gc_start = Instant::now();
        run(&project, &["gc"]);
        let gc_took = gc_start.elapsed();
        let after = disk_bytes(&home.record_dir());
        let label = format!("{commits} commits, after anvil gc");
        report(&project, &one_debate, &commands, &label);
        println!(
            "  disk: {} loose -> {} after anvil gc ({:.1?}); git gc of a copy: {} (ratio {:.2}, target <= 2)",
            mib(before),
            mib(after),
            gc_took,
            mib(git_gc),
            after as f64 / git_gc as f64
        );
    }
}

/// What the search index costs at this size: built from nothing, caught up after one more
/// debate (both as the first `anvil search` after them), and its bytes against the record's.
fn search_costs(home: &Home, project: &Path, debates: usize) {
    let index = home.root().join("search.sqlite");
    let search = ["search", "-n", "5", "\"measured debate\""];
    for suffix in ["", "-wal", "-shm"] {
        std::fs::remove_file(format!("{}{suffix}", index.display())).ok();
    }
    let built = timed(project, &search);
    let line = start(home, &format!("One more debate {debates}?"), FILL_SESSION);
    for phase in 0..9 {
        turn(home, &line, FILL_SESSION, debates, phase);
    }
    let caught_up = timed(project, &search);
    let index_bytes: u64 = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", index.display())).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "  search index: built in {:.1?}, caught up after one more debate in {:.1?}; {} against the record's {}",
        built,
        caught_up,
        mib(index_bytes),
        mib(disk_bytes(&home.record_dir()))
    );
}

fn start(home: &Home, question: &str, session: &str) -> LineRef {
    let setup = anvil_core::model::options::Options {
        question: question.to_owned(),
        rounds: Some(4),
        ..Default::default()
    }
    .into_setup()
    .expect("setup");
    anvil_core::line::start::start(home, setup, Some(session))
        .expect("start")
        .line
}

fn turn(home: &Home, line: &LineRef, session: &str, debate: usize, phase: usize) {
    anvil_core::line::stop::record_turn(home, line, session, &phase_text(debate, phase))
        .expect("turn");
}

fn phase_text(debate: usize, phase: usize) -> String {
    format!(
        "Phase {phase} of debate {debate}.\n\n{}\n",
        "An argument that goes on for a while, point after point, with numbers. ".repeat(20)
    )
}

/// Prints one row per command: its median on `project`, and its ratio to the median of the
/// same command on `one` (the one-debate record), the two run alternately.
fn report(project: &Path, one: &Path, commands: &[(&str, Vec<String>)], label: &str) {
    println!("{label}:");
    for (name, args) in commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let samples = if *name == "log --all" { 5 } else { SAMPLES };
        let (mut times, mut references) = (Vec::new(), Vec::new());
        for _ in 0..samples {
            references.push(timed(one, &args));
            times.push(timed(project, &args));
        }
        let (time, reference) = (median(times), median(references));
        let memory = peak_kib(project, &args);
        println!(
            "  {:<12} {:>9.2} ms  {:>5.2}x one debate ({:.2} ms)  peak {}",
            name,
            ms(time),
            time.as_secs_f64() / reference.as_secs_f64(),
            ms(reference),
            memory.map_or("n/a".to_owned(), |k| format!(
                "{:.1} MiB",
                k as f64 / 1024.0
            )),
        );
    }
}

/// How long one `anvil ARGS` process takes in `project`.
fn timed(project: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    run(project, args);
    start.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn run(project: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(ANVIL)
        .args(args)
        .current_dir(project)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env("ANVIL_NO_AUTO_GC", "1")
        .output()
        .expect("run anvil");
    assert!(
        out.status.success(),
        "anvil {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.stdout.is_empty() || args == ["gc"],
        "anvil {args:?} printed nothing"
    );
    out.stdout
}

/// Peak resident memory of one run, in KiB, from `/usr/bin/time -f %M`.
fn peak_kib(project: &Path, args: &[&str]) -> Option<u64> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let out = Command::new(time)
        .args(["-f", "%M", "--"])
        .arg(ANVIL)
        .args(args)
        .current_dir(project)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env("ANVIL_NO_AUTO_GC", "1")
        .stdout(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

/// The median of real `anvil hook stop` processes, each recording one phase of a debate
/// started for the hook; the debates are finished in-process afterwards, so that they do
/// not stay active.
fn hook_median(home: &Home, project: &Path) -> Duration {
    let mut times = Vec::new();
    let mut line: Option<(LineRef, String, usize)> = None;
    for sample in 0..SAMPLES {
        if line.as_ref().is_none_or(|(_, _, done)| *done == 8) {
            if let Some((l, s, done)) = line.take() {
                for phase in done..9 {
                    turn(home, &l, &s, 0, phase);
                }
            }
            let session = format!("2d5e4c60-7182-4930-a4b5-c6d7e8f9{sample:04}");
            let l = start(home, &format!("Hook sample {sample}?"), &session);
            line = Some((l, session, 0));
        }
        let (_, session, done) = line.as_mut().unwrap();
        let input = serde_json::json!({
            "session_id": session,
            "cwd": project,
            "hook_event_name": "Stop",
            "stop_hook_active": true,
            "last_assistant_message": phase_text(sample, *done),
        })
        .to_string();
        let started = Instant::now();
        let mut child = Command::new(ANVIL)
            .args(["hook", "stop"])
            .current_dir(project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the hook");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        times.push(started.elapsed());
        assert!(out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("block"),
            "the hook recorded a phase and asked for the next"
        );
        *done += 1;
    }
    if let Some((l, s, done)) = line {
        for phase in done..9 {
            turn(home, &l, &s, 0, phase);
        }
    }
    median(times)
}

/// A copy of the record at `work/name`, for a maintenance to work on.
fn copy_of(record: &Path, work: &Path, name: &str) -> PathBuf {
    let copy = work.join(name);
    let _ = std::fs::remove_dir_all(&copy);
    let status = Command::new("cp")
        .arg("-a")
        .arg(record)
        .arg(&copy)
        .status()
        .expect("cp");
    assert!(status.success());
    copy
}

/// What `git gc` makes of a copy of the record, in bytes on disk.
fn git_gc_bytes(record: &Path, work: &Path) -> u64 {
    let copy = copy_of(record, work, "git-gc-copy");
    let status = Command::new("git")
        .arg("--git-dir")
        .arg(&copy)
        .args(["gc", "--quiet", "--prune=now"])
        .status()
        .expect("git gc");
    assert!(status.success());
    let bytes = disk_bytes(&copy);
    std::fs::remove_dir_all(&copy).unwrap();
    bytes
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
