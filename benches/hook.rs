//! Whole-process timings of `anvil-hook stop`, the command Claude Code runs at every turn.
//!
//! `cargo bench --bench hook` prints medians for:
//! 1. a stop in a project with anvil installed but no debate for this session, measured side by
//!    side (samples interleaved) with a bare process start (`true`): the ratio is the cost of
//!    the no-debate path in process starts (target: at most 1.5); next to it the same stop
//!    through `anvil hook stop` (the whole command line's binary, kept for older installs);
//! 2. a mid-debate phase of a 3-round debate whose transcript is about 30 KB, commit included,
//!    side by side (samples interleaved) with the same phase in a debate whose every phase ended
//!    with a position and two open points (`<anvil-position>`, `<anvil-open>`): the ratio is
//!    what positions cost the hook (reading the tags, the trailers, the convergence check;
//!    target: at most 1.05); then its synthesis (commit and report), where the hook also looks whether the record's
//!    maintenance is due: once when it is not, once when it is (it then starts a detached
//!    `anvil gc --auto`, here with a `git` that does nothing, and does not wait for it);
//! 3. the bytes of prompt injected over a whole 3-round debate;
//! 4. the sizes of both binaries;
//! 5. the objects of one phase commit (a ~30 KB transcript, a ~7.5 KB phase, state, tree,
//!    commit) written by a fresh process through the record's own loose-object writer, side by
//!    side with the same objects through gix's loose-object store: the reason the record keeps
//!    a writer of its own (it sets up one compressor for all of a commit's objects, where gix
//!    sets one up per object);
//! 6. the cost of a stop as the session grows: the mid-debate phase of 2. with the hook input
//!    naming a Claude Code session transcript that ends with the turn, after 150 KB, 5 MB and
//!    50 MB of earlier turns (mostly tool output), samples interleaved (target: 50 MB within
//!    1.15x of 150 KB);
//! 7. the cost of a stop as the debate grows: phases 1-3 of a 10-round debate against phases
//!    17-19 of the same debate, each sample the mean stop of three in a row on a fresh copy,
//!    samples interleaved (target: within 1.15x).
//!
//! 8. per host (`cargo bench --bench hook -- host` runs this alone): the stop that concerns
//!    no debate, with the input (and environment) each host gives its Stop hook — Claude
//!    Code, Qwen Code, Gemini CLI, Codex, Copilot CLI, and OpenCode's plugin — side by side
//!    with a bare process start (target: at most 1.5x each); and the mid-debate phase of 2.
//!    with each host's input and a transcript of its own shape (150 KB of earlier turns, then
//!    the turn; OpenCode keeps none, its plugin hands the reply over), side by side with the
//!    same phase from Claude Code's input (target: within 1.10x).
//!
//! Every sample is a fresh process; mid-debate samples each run on their own copy of the same
//! prepared project, so every sample records the same phase.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ANVIL: &str = env!("CARGO_BIN_EXE_anvil");
const HOOK: &str = env!("CARGO_BIN_EXE_anvil-hook");
const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";
const SAMPLES: usize = 101;

fn main() {
    // This bench runs itself as the writer child of measurement 5.
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, which, dir] = args.as_slice()
        && flag == WRITER_CHILD
    {
        write_phase_objects(which, Path::new(dir));
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    // `cargo bench --bench hook -- host`: the per-host measurements alone.
    let filter = args.iter().skip(1).find(|a| !a.starts_with("--"));
    if filter.is_some_and(|f| f == "host") {
        per_host(work.path());
        return;
    }
    let project = work.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    anvil(&project, &["init"]);

    let idle_input = hook_input(&project, "Nothing to do with anvil.");
    let bare_true = which("true");
    // Interleaved, so that whatever else the machine does weighs on all three alike.
    let [bare, idle, idle_cli] = sample_side_by_side([
        &mut || run_timed(&project, &bare_true, &[], b""),
        &mut || run_timed(&project, HOOK, &["stop"], idle_input.as_bytes()),
        &mut || run_timed(&project, ANVIL, &["hook", "stop"], idle_input.as_bytes()),
    ]);

    // A 3-round debate advanced to round 3's advocate with ~7.5 KB phases: ~30 KB of transcript;
    // and the same debate whose every phase stated a position.
    let (template, injected_so_far) = prepare_debate(work.path(), "template", false);
    let (positioned, _) = prepare_debate(work.path(), "template-positions", true);
    let transcript_bytes = std::fs::metadata(live_file(&template, "transcript.md"))
        .unwrap()
        .len();
    let copies = copies_of(work.path(), &template, "copy");
    let positioned_copies = copies_of(work.path(), &positioned, "copy-positions");
    // Let the copies reach the disk first, so that their write-back is not what gets timed,
    // and give the kernel a moment to finish what the flush started.
    let _ = Command::new("sync").status();
    std::thread::sleep(Duration::from_secs(1));
    let phase_text = phase("ADVOCATE round 3", 7_500);
    let positioned_text = format!("{phase_text}{}", position_tags(3));
    let (mut copies_iter, mut positioned_iter) = (copies.iter(), positioned_copies.iter());
    let [mid, mid_positions] = sample_side_by_side([
        &mut || {
            let dir = copies_iter.next().expect("one copy per sample");
            run_timed(
                dir,
                HOOK,
                &["stop"],
                hook_input(dir, &phase_text).as_bytes(),
            )
        },
        &mut || {
            let dir = positioned_iter.next().expect("one copy per sample");
            run_timed(
                dir,
                HOOK,
                &["stop"],
                hook_input(dir, &positioned_text).as_bytes(),
            )
        },
    ]);
    // The tags were read and recorded: the positioned line's tip carries the stance.
    let tip_message = tip_message(&positioned_copies[0]);
    assert!(
        tip_message.contains("Anvil-Stance: for") && tip_message.contains("Anvil-Open: "),
        "{tip_message}"
    );

    // The same debate one step before its end: round 3 recorded, the synthesis out.
    let before_synthesis = work.path().join("before-synthesis");
    copy_dir(&template, &before_synthesis);
    for label in ["ADVOCATE round 3", "CRITIC round 3"] {
        hook(&before_synthesis, &phase(label, 7_500));
    }
    let synthesis_copies = |name: &str, due: bool| -> Vec<PathBuf> {
        (0..SAMPLES)
            .map(|i| {
                let dest = work.path().join(format!("{name}-{i}"));
                copy_dir(&before_synthesis, &dest);
                if due {
                    // Two debates with loose refs against a limit of one.
                    std::fs::write(
                        dest.join(".anvil/config.toml"),
                        "[gc]\nauto_loose_debates = 1\n",
                    )
                    .unwrap();
                    std::fs::create_dir_all(dest.join(".anvil/record/refs/anvil/other")).unwrap();
                }
                dest
            })
            .collect()
    };
    let not_due = synthesis_copies("synthesis", false);
    let due = synthesis_copies("synthesis-due", true);
    let _ = Command::new("sync").status();
    std::thread::sleep(Duration::from_secs(1));
    let synthesis_text = phase("SYNTHESIS", 7_500);
    let (mut not_due_iter, mut due_iter) = (not_due.iter(), due.iter());
    let true_git = which("true");
    let [synthesis, synthesis_spawn] = sample_side_by_side([
        &mut || {
            let dir = not_due_iter.next().expect("one copy per sample");
            run_timed(
                dir,
                HOOK,
                &["stop"],
                hook_input(dir, &synthesis_text).as_bytes(),
            )
        },
        &mut || {
            let dir = due_iter.next().expect("one copy per sample");
            let started = Instant::now();
            let mut child = Command::new(HOOK)
                .arg("stop")
                .current_dir(dir)
                .env("ANVIL_GIT", &true_git)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn anvil-hook");
            child
                .stdin
                .take()
                .unwrap()
                .write_all(hook_input(dir, &synthesis_text).as_bytes())
                .unwrap();
            let output = child.wait_with_output().unwrap();
            let elapsed = started.elapsed();
            assert!(output.status.success());
            elapsed
        },
    ]);

    let (ours, theirs) = writers(work.path());

    let session_curve = session_curve(work.path(), &template, &phase_text);
    let (early, late) = debate_curve(work.path());

    let injected = injected_so_far + finish_debate(&template);
    // What re-sending the debate so far with every prompt would have cost instead: the
    // transcript at each of the 7 phase prompts after the first.
    let transcript_total = std::fs::metadata(live_file(&template, "transcript.md"))
        .unwrap()
        .len();
    let per_phase = transcript_total / 7;
    let resent: u64 = (1..=6).map(|k| k * per_phase).sum();

    println!("anvil-hook stop, whole process, median of {SAMPLES} runs (release build)");
    println!(
        "  true (a bare process start)                 {:>8.3} ms",
        ms(bare)
    );
    println!(
        "  no debate for this session: anvil-hook      {:>8.3} ms  ({:.2}x true; target <= 1.5x)",
        ms(idle),
        idle.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "  no debate for this session: anvil hook stop {:>8.3} ms  ({:.2}x true; older wiring)",
        ms(idle_cli),
        idle_cli.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "  mid-debate phase, {:>2} KB transcript  {:>8.3} ms  (commit included)",
        transcript_bytes / 1024,
        ms(mid)
    );
    println!(
        "  the same phase, every phase with a position and 2 open points {:>8.3} ms  ({:.3}x; target <= 1.05x)",
        ms(mid_positions),
        mid_positions.as_secs_f64() / mid.as_secs_f64()
    );
    println!(
        "  synthesis, maintenance not due         {:>8.3} ms  (commit, report, the look at the record)",
        ms(synthesis)
    );
    println!(
        "  synthesis, maintenance due             {:>8.3} ms  (the same, and a detached anvil gc --auto started)",
        ms(synthesis_spawn)
    );
    println!(
        "  prompt bytes injected, 3-round debate: {injected} bytes (first prompt + every block)"
    );
    println!("  (re-sending the debate so far with each prompt would add about {resent} bytes)");
    println!(
        "  one phase's objects, fresh process: anvil's writer {:.3} ms, gix's {:.3} ms ({:.2}x; \
         saves {:.0}% of a mid-debate phase written by gix; kept while >= 10%)",
        ms(ours),
        ms(theirs),
        ours.as_secs_f64() / theirs.as_secs_f64(),
        // Of the phase as it would take with gix's writer: ours plus the difference.
        100.0 * (theirs.as_secs_f64() - ours.as_secs_f64())
            / (mid.as_secs_f64() + theirs.as_secs_f64() - ours.as_secs_f64())
    );
    let (_, small) = session_curve[0];
    for (bytes, time) in session_curve {
        println!(
            "  the mid-debate phase after {:>6.2} MB of session transcript {:>8.3} ms  ({:.3}x; target <= 1.15x at 50 MB)",
            bytes as f64 / 1e6,
            ms(time),
            time.as_secs_f64() / small.as_secs_f64()
        );
    }
    println!(
        "  10-round debate, a stop of phases 1-3   {:>8.3} ms  (mean of the three)",
        ms(early)
    );
    println!(
        "  10-round debate, a stop of phases 17-19 {:>8.3} ms  ({:.3}x; target <= 1.15x)",
        ms(late),
        late.as_secs_f64() / early.as_secs_f64()
    );
    per_host(work.path());
    for bin in [HOOK, ANVIL] {
        let bytes = std::fs::metadata(bin).map(|m| m.len()).unwrap_or(0);
        println!(
            "  size of {:<10} {:>6.2} MB",
            Path::new(bin).file_name().unwrap().to_string_lossy(),
            bytes as f64 / 1e6
        );
    }
}

const WRITER_CHILD: &str = "--write-phase-objects";

/// Measurement 5: medians of a child process that writes one phase's objects into a record of
/// its own, through each writer, samples alternating.
fn writers(work: &Path) -> (Duration, Duration) {
    let me = std::env::current_exe().expect("the bench's own path");
    let dirs = |name: &str| -> Vec<PathBuf> {
        (0..SAMPLES)
            .map(|i| {
                let dir = work.join(format!("{name}-{i}"));
                anvil_core::record::store::Record::open_or_init(&dir).expect("a record");
                dir
            })
            .collect()
    };
    let (ours, theirs) = (dirs("writer-anvil"), dirs("writer-gix"));
    let (mut ours, mut theirs) = (ours.iter(), theirs.iter());
    let _ = Command::new("sync").status();
    let child = |which: &str, dir: &Path| {
        let start = Instant::now();
        let status = Command::new(&me)
            .args([WRITER_CHILD, which, dir.to_str().unwrap()])
            .status()
            .expect("the writer child");
        let elapsed = start.elapsed();
        assert!(status.success(), "{which} writer failed");
        elapsed
    };
    let [a, b] = sample_side_by_side([&mut || child("anvil", ours.next().unwrap()), &mut || {
        child("gix", theirs.next().unwrap())
    }]);
    (a, b)
}

/// The child of measurement 5: the objects of a mid-debate phase written into the record at
/// `dir`, by anvil's writer or by gix's.
fn write_phase_objects(which: &str, dir: &Path) {
    use anvil_core::record::schema::Meta;
    use anvil_core::record::store::{Base, NewCommit, Record};
    let files = vec![
        (
            "state.md".to_owned(),
            b"status: active\nround: 3\n".to_vec(),
        ),
        (
            "transcript.md".to_owned(),
            phase("TRANSCRIPT", 30_000).into_bytes(),
        ),
        (
            "phases/05-advocate.md".to_owned(),
            phase("ADVOCATE round 3", 7_500).into_bytes(),
        ),
    ];
    match which {
        "anvil" => {
            let record = Record::open(dir).expect("the record");
            let new = NewCommit {
                author: "Advocate".into(),
                subject: "Round 3, advocate".into(),
                meta: Meta {
                    debate: "bench".into(),
                    line: "main".into(),
                    phase: "advocate".into(),
                    ..Meta::default()
                },
                files,
                remove: Vec::new(),
                time: 1_800_000_000,
                base: Base::Tip(None),
            };
            record.stage(&new).expect("staged");
        }
        _ => {
            use gix::objs::Write as _;
            let store = gix::odb::loose::Store::at(dir.join("objects"), gix::hash::Kind::Sha1);
            let mut tree = gix::objs::Tree::empty();
            for (path, bytes) in &files {
                let id = store.write_buf(gix::objs::Kind::Blob, bytes).expect("blob");
                tree.entries.push(gix::objs::tree::Entry {
                    mode: gix::objs::tree::EntryKind::Blob.into(),
                    filename: path.replace('/', "-").into(),
                    oid: id,
                });
            }
            tree.entries.sort();
            let tree = store.write(&tree).expect("tree");
            let signature = gix::actor::Signature {
                name: "anvil".into(),
                email: "anvil@localhost".into(),
                time: gix::date::Time::new(1_800_000_000, 0),
            };
            let commit = gix::objs::Commit {
                tree,
                parents: Default::default(),
                author: signature.clone(),
                committer: signature,
                encoding: None,
                message: "Round 3, advocate".into(),
                extra_headers: Vec::new(),
            };
            store.write(&commit).expect("commit");
        }
    }
}

/// `name` found on PATH (for `true`, whose path differs between systems).
fn which(name: &str) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} not on PATH"))
        .display()
        .to_string()
}

/// Medians of several measurements whose samples alternate.
fn sample_side_by_side<const N: usize>(
    mut runs: [&mut dyn FnMut() -> Duration; N],
) -> [Duration; N] {
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(SAMPLES));
    for _ in 0..SAMPLES {
        for (run, times) in runs.iter_mut().zip(times.iter_mut()) {
            times.push(run());
        }
    }
    times.map(|mut t| {
        t.sort();
        if std::env::var_os("ANVIL_BENCH_SPREAD").is_some() {
            eprintln!(
                "  min {:?}  p10 {:?}  p50 {:?}  p90 {:?}",
                t[0],
                t[SAMPLES / 10],
                t[SAMPLES / 2],
                t[SAMPLES * 9 / 10]
            );
        }
        t[SAMPLES / 2]
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn run_timed(dir: &Path, program: &str, args: &[&str], stdin: &[u8]) -> Duration {
    run_timed_env(dir, program, args, stdin, &[])
}

/// [`run_timed`] with `env` added to the process's environment.
fn run_timed_env(
    dir: &Path,
    program: &str,
    args: &[&str],
    stdin: &[u8],
    env: &[(&str, &str)],
) -> Duration {
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn anvil");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let output = child.wait_with_output().unwrap();
    let elapsed = start.elapsed();
    assert!(output.status.success(), "{program} {args:?} failed");
    elapsed
}

fn anvil(dir: &Path, args: &[&str]) -> String {
    let output = Command::new(ANVIL)
        .args(args)
        .current_dir(dir)
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .output()
        .expect("run anvil");
    assert!(
        output.status.success(),
        "anvil {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn hook(dir: &Path, text: &str) -> String {
    let mut child = Command::new(HOOK)
        .arg("stop")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(hook_input(dir, text).as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

fn hook_input(dir: &Path, text: &str) -> String {
    serde_json::json!({
        "session_id": SESSION,
        "cwd": dir,
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": text,
    })
    .to_string()
}

/// The hook input as Claude Code gives it: with the session's transcript.
fn hook_input_with(dir: &Path, text: &str, transcript: &Path) -> String {
    serde_json::json!({
        "session_id": SESSION,
        "transcript_path": transcript,
        "cwd": dir,
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": text,
    })
    .to_string()
}

/// Measurement 6: the mid-debate phase (on copies of `template`, whose debate waits for round
/// 3's advocate) after sessions of 150 KB, 5 MB and 50 MB; each size with its median.
fn session_curve(work: &Path, template: &Path, text: &str) -> Vec<(u64, Duration)> {
    let sizes = [150 * 1024, 5 * 1024 * 1024, 50 * 1024 * 1024];
    let transcripts: Vec<PathBuf> = sizes
        .iter()
        .map(|&size| {
            let path = work.join(format!("session-{size}.jsonl"));
            write_transcript(&path, size, text);
            path
        })
        .collect();
    let copies: Vec<Vec<PathBuf>> = sizes
        .iter()
        .map(|size| copies_of(work, template, &format!("session-copy-{size}")))
        .collect();
    let _ = Command::new("sync").status();
    std::thread::sleep(Duration::from_secs(1));
    let mut iters: Vec<_> = copies.iter().map(|c| c.iter()).collect();
    let mut runs: Vec<Box<dyn FnMut() -> Duration + '_>> = Vec::new();
    for (copies, transcript) in iters.iter_mut().zip(&transcripts) {
        runs.push(Box::new(move || {
            let dir = copies.next().expect("one copy per sample");
            run_timed(
                dir,
                HOOK,
                &["stop"],
                hook_input_with(dir, text, transcript).as_bytes(),
            )
        }));
    }
    let [a, b, c] = &mut runs[..] else {
        unreachable!("three sizes")
    };
    let medians = sample_side_by_side([&mut **a, &mut **b, &mut **c]);
    // Every stop recorded its phase, with what its turn cost (its two calls, read from the
    // end of the transcript; none of the turns before).
    for copies in &copies {
        let message = tip_message(&copies[0]);
        assert!(message.contains("Anvil-Tokens-Input: 2500\n"), "{message}");
    }
    sizes.iter().map(|&s| s as u64).zip(medians).collect()
}

/// A Claude Code session transcript of about `size` bytes: earlier turns whose tool calls
/// brought back 20 KB each, then the turn that ended with `text` (the hook's reason that
/// started it, one tool call, the answer).
fn write_transcript(path: &Path, size: usize, text: &str) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let entry = |value: serde_json::Value| format!("{value}\n");
    let output = "drwxr-xr-x  src/billing/ledger.rs  4.2K  ".repeat(20 * 1024 / 44);
    let (mut written, mut turn) = (0, 0);
    let turn_of = |id: String, prompt: &str, answer: &str, output: &str| {
        [
            serde_json::json!({"type": "user", "timestamp": "2026-01-01T10:00:00Z",
                "message": {"role": "user", "content": prompt}}),
            serde_json::json!({"type": "assistant", "version": "2.1.332",
                "timestamp": "2026-01-01T10:00:02Z", "message": {"id": format!("{id}-tool"),
                "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "name": "Bash"}],
                "usage": {"input_tokens": 1200, "output_tokens": 40}}}),
            serde_json::json!({"type": "user", "timestamp": "2026-01-01T10:00:03Z",
                "message": {"role": "user",
                "content": [{"type": "tool_result", "content": output}]}}),
            serde_json::json!({"type": "assistant", "version": "2.1.332",
                "timestamp": "2026-01-01T10:00:09Z", "message": {"id": id,
                "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": answer}],
                "usage": {"input_tokens": 1300, "output_tokens": 900,
                          "cache_read_input_tokens": 5000}}}),
        ]
    };
    let last = turn_of(
        "msg_last".into(),
        "Stop hook feedback: ADVOCATE r3",
        text,
        "ok",
    );
    let last_len: usize = last.iter().map(|e| entry(e.clone()).len()).sum();
    while written + last_len < size {
        turn += 1;
        for e in turn_of(
            format!("msg_{turn}"),
            "Look at the ledger.",
            "Done.",
            &output,
        ) {
            let line = entry(e);
            written += line.len();
            out.write_all(line.as_bytes()).unwrap();
        }
    }
    for e in last {
        out.write_all(entry(e).as_bytes()).unwrap();
    }
    out.flush().unwrap();
}

/// The message of the newest commit in `project`'s record.
fn tip_message(project: &Path) -> String {
    let out = Command::new("git")
        .args([
            "--git-dir",
            ".anvil/record",
            "log",
            "-1",
            "--all",
            "--format=%B",
        ])
        .current_dir(project)
        .output()
        .expect("git log");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Measurement 7: the mean stop of phases 1-3 and of phases 17-19 of a 10-round debate
/// (~7.5 KB phases), each sample three stops in a row on a fresh copy; their medians.
fn debate_curve(work: &Path) -> (Duration, Duration) {
    let labels: Vec<String> = (1..=10)
        .flat_map(|r| [format!("ADVOCATE round {r}"), format!("CRITIC round {r}")])
        .collect();
    let early = work.join("long-early");
    std::fs::create_dir_all(&early).unwrap();
    anvil(&early, &["init"]);
    anvil(
        &early,
        &[
            "start",
            "Should we rewrite billing in Rust?",
            "--rounds",
            "10",
        ],
    );
    let late = work.join("long-late");
    copy_dir(&early, &late);
    for label in &labels[..16] {
        hook(&late, &phase(label, 7_500));
    }
    let (early_copies, late_copies) = (
        copies_of(work, &early, "early"),
        copies_of(work, &late, "late"),
    );
    let _ = Command::new("sync").status();
    std::thread::sleep(Duration::from_secs(1));
    let texts = |from: usize| -> Vec<String> {
        labels[from..from + 3]
            .iter()
            .map(|l| phase(l, 7_500))
            .collect()
    };
    let (early_texts, late_texts) = (texts(0), texts(16));
    let three = |dir: &Path, texts: &[String]| -> Duration {
        texts
            .iter()
            .map(|t| run_timed(dir, HOOK, &["stop"], hook_input(dir, t).as_bytes()))
            .sum::<Duration>()
            / 3
    };
    let (mut early_iter, mut late_iter) = (early_copies.iter(), late_copies.iter());
    let [early_time, late_time] = sample_side_by_side([
        &mut || {
            three(
                early_iter.next().expect("one copy per sample"),
                &early_texts,
            )
        },
        &mut || three(late_iter.next().expect("one copy per sample"), &late_texts),
    ]);
    // Every stop recorded its phase: round 10's advocate is the late copies' tip.
    let message = tip_message(&late_copies[0]);
    assert!(
        message.contains("Anvil-Phase: advocate\n") && message.contains("Anvil-Round: 10\n"),
        "{message}"
    );
    (early_time, late_time)
}

fn phase(label: &str, bytes: usize) -> String {
    let sentence =
        "The argument turns on migration cost, operational risk and the team's experience. ";
    let mut text = format!("## {label}\n\n");
    while text.len() < bytes {
        text.push_str(sentence);
    }
    text
}

/// Bytes of the reason in a block answer (0 when the hook let Claude stop).
fn reason_len(answer: &str) -> usize {
    serde_json::from_str::<serde_json::Value>(answer)
        .ok()
        .and_then(|v| v.get("reason").and_then(|r| r.as_str()).map(str::len))
        .unwrap_or(0)
}

/// A position and two open points, as a debater ends a phase (the confidence moves a little
/// with the round, as real ones do).
fn position_tags(round: u32) -> String {
    format!(
        "\n\n<anvil-position stance=\"for\" confidence=\"0.{}\">Billing should move, with a \
         staged cut-over</anvil-position>\n<anvil-open>Who pays for the second region?</anvil-open>\n\
         <anvil-open>No rollback plan for the cut-over</anvil-open>\n",
        9 - round
    )
}

/// A project whose debate waits for round 3's advocate (every phase so far with a position
/// when `positions`); returns it and the prompt bytes so far.
fn prepare_debate(work: &Path, name: &str, positions: bool) -> (PathBuf, usize) {
    let dir = work.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    anvil(&dir, &["init"]);
    let first = anvil(
        &dir,
        &[
            "start",
            "Should we rewrite billing in Rust?",
            "--rounds",
            "3",
        ],
    );
    let mut injected = first.len();
    for (label, round) in [
        ("ADVOCATE round 1", 1),
        ("CRITIC round 1", 1),
        ("ADVOCATE round 2", 2),
        ("CRITIC round 2", 2),
    ] {
        let mut text = phase(label, 7_500);
        if positions {
            text.push_str(&position_tags(round));
        }
        injected += reason_len(&hook(&dir, &text));
    }
    // Round 3's advocate text: the measured phase records it (on a copy).
    (dir, injected)
}

/// Runs the template's debate to the end; returns the prompt bytes injected on the way.
fn finish_debate(dir: &Path) -> usize {
    ["ADVOCATE round 3", "CRITIC round 3", "SYNTHESIS"]
        .iter()
        .map(|label| reason_len(&hook(dir, &phase(label, 7_500))))
        .sum()
}

fn live_file(project: &Path, name: &str) -> PathBuf {
    let debates = project.join(".anvil/debates");
    let debate = std::fs::read_dir(&debates)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    debate.join("main").join(name)
}

/// One copy of `template` per sample, in `work`, named `name-N`.
fn copies_of(work: &Path, template: &Path, name: &str) -> Vec<PathBuf> {
    (0..SAMPLES)
        .map(|i| {
            let dest = work.join(format!("{name}-{i}"));
            copy_dir(template, &dest);
            dest
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The hosts whose Stop hook input measurement 8 gives the hook.
const HOSTS: [&str; 6] = ["claude", "qwen", "gemini", "codex", "copilot", "opencode"];
/// The turn each host's transcript and input name (Codex's `turn_id`).
const TURN: &str = "01a224d2-ec92-77c0-8320-75791d514305";

/// Measurement 8: the no-debate stop and the mid-debate phase, with each host's input.
fn per_host(work: &Path) {
    let work = work.join("per-host");
    let project = work.join("project");
    std::fs::create_dir_all(&project).unwrap();
    anvil(&project, &["init"]);
    let idle_text = "Nothing to do with anvil.";
    let idle: Vec<(String, Vec<(&str, &str)>)> = HOSTS
        .iter()
        .map(|host| {
            let transcript = work.join(format!("idle-{host}.jsonl"));
            write_host_transcript(host, &transcript, 150 * 1024, idle_text);
            (
                host_input(host, &project, idle_text, &transcript),
                host_env(host),
            )
        })
        .collect();
    let bare_true = which("true");
    let mut runs: Vec<Box<dyn FnMut() -> Duration + '_>> =
        vec![Box::new(|| run_timed(&project, &bare_true, &[], b""))];
    for (input, env) in &idle {
        let project = &project;
        runs.push(Box::new(move || {
            run_timed_env(project, HOOK, &["stop"], input.as_bytes(), env)
        }));
    }
    let [a, b, c, d, e, f, g] = &mut runs[..] else {
        unreachable!("true and six hosts")
    };
    let idle_times = sample_side_by_side([
        &mut **a, &mut **b, &mut **c, &mut **d, &mut **e, &mut **f, &mut **g,
    ]);
    drop(runs);

    let (template, _) = prepare_debate(&work, "template", false);
    let text = phase("ADVOCATE round 3", 7_500);
    let mid: Vec<(Vec<PathBuf>, PathBuf)> = HOSTS
        .iter()
        .map(|host| {
            let transcript = work.join(format!("mid-{host}.jsonl"));
            write_host_transcript(host, &transcript, 150 * 1024, &text);
            (
                copies_of(&work, &template, &format!("mid-{host}")),
                transcript,
            )
        })
        .collect();
    let _ = Command::new("sync").status();
    std::thread::sleep(Duration::from_secs(1));
    let mut runs: Vec<Box<dyn FnMut() -> Duration + '_>> = Vec::new();
    for (host, (copies, transcript)) in HOSTS.iter().zip(&mid) {
        let (mut copies, text) = (copies.iter(), &text);
        runs.push(Box::new(move || {
            let dir = copies.next().expect("one copy per sample");
            let input = host_input(host, dir, text, transcript);
            run_timed_env(dir, HOOK, &["stop"], input.as_bytes(), &host_env(host))
        }));
    }
    let [a, b, c, d, e, f] = &mut runs[..] else {
        unreachable!("six hosts")
    };
    let mid_times =
        sample_side_by_side([&mut **a, &mut **b, &mut **c, &mut **d, &mut **e, &mut **f]);
    drop(runs);
    // Each host's stop recorded the phase, naming its host (Claude Code's names none).
    for (host, (copies, _)) in HOSTS.iter().zip(&mid) {
        let message = tip_message(&copies[0]);
        assert!(
            message.contains("Anvil-Phase: advocate\n") && message.contains("Anvil-Round: 3\n"),
            "{host}: {message}"
        );
        assert_eq!(
            message.contains(&format!("Anvil-Host: {host}")),
            *host != "claude",
            "{host}: {message}"
        );
    }

    println!("anvil-hook stop per host, whole process, median of {SAMPLES} runs (release build)");
    let bare = idle_times[0];
    println!(
        "  true (a bare process start)                  {:>8.3} ms",
        ms(bare)
    );
    for (host, time) in HOSTS.iter().zip(&idle_times[1..]) {
        println!(
            "  no debate, {host:<8}'s input                {:>8.3} ms  ({:.2}x true; target <= 1.5x)",
            ms(*time),
            time.as_secs_f64() / bare.as_secs_f64()
        );
    }
    let claude = mid_times[0];
    for (host, time) in HOSTS.iter().zip(&mid_times) {
        println!(
            "  mid-debate phase, {host:<8}'s input         {:>8.3} ms  ({:.3}x Claude Code's; target <= 1.10x)",
            ms(*time),
            time.as_secs_f64() / claude.as_secs_f64()
        );
    }
}

/// The environment each host gives its hook, as far as the hook reads it.
fn host_env(host: &str) -> Vec<(&'static str, &'static str)> {
    match host {
        "claude" => vec![("CLAUDE_CODE_SESSION_ID", SESSION)],
        "qwen" => vec![
            ("QWEN_CODE_SESSION_ID", SESSION),
            ("QWEN_CODE_STARTUP_VERSION", "0.24.4"),
            ("QWEN_CODE_MODEL", "qwen3-coder-plus"),
        ],
        "gemini" => vec![("GEMINI_SESSION_ID", SESSION)],
        "copilot" => vec![("COPILOT_CLI_BINARY_VERSION", "1.0.102")],
        _ => Vec::new(),
    }
}

/// When Copilot CLI called the hook, in its input and in its log's `hook.start` (milliseconds).
const COPILOT_CALL: u64 = 1_795_913_697_530;

/// The Stop hook's input as `host` gives it, the turn ending with `text`.
fn host_input(host: &str, dir: &Path, text: &str, transcript: &Path) -> String {
    let mut input: serde_json::Value =
        serde_json::from_str(&hook_input_with(dir, text, transcript)).unwrap();
    match host {
        "qwen" => input["context_usage"] = serde_json::json!({"used": 12000, "limit": 1000000}),
        "gemini" => {
            let input = input.as_object_mut().unwrap();
            input.remove("last_assistant_message");
            input.insert("hook_event_name".into(), "AfterAgent".into());
            input.insert(
                "prompt".into(),
                "[anvil bench@main · round 3 of 3 · Advocate]".into(),
            );
            input.insert("prompt_response".into(), text.into());
        }
        "codex" => {
            input["turn_id"] = TURN.into();
            input["model"] = "gpt-5.1-codex".into();
        }
        // Its own names, and no last message: the turn's text is in its log.
        "copilot" => {
            input = serde_json::json!({
                "sessionId": SESSION,
                "transcriptPath": transcript,
                "cwd": dir,
                "stopReason": "end_turn",
                "stop_hook_active": true,
                "timestamp": COPILOT_CALL,
            })
        }
        // What anvil's plugin hands the hook: the reply and its figures, no transcript.
        "opencode" => {
            let input = input.as_object_mut().unwrap();
            input.remove("transcript_path");
            input.insert("hook_event_name".into(), "session.idle".into());
            input.insert(
                "prompt".into(),
                "[anvil bench@main · round 3 of 3 · Advocate]".into(),
            );
            input.insert("model".into(), "anthropic/claude-sonnet-4-5".into());
            input.insert(
                "tokens".into(),
                serde_json::json!({"input": 1300, "output": 900, "reasoning": 0,
                                   "cache": {"read": 5000, "write": 0}}),
            );
            input.insert("version".into(), "1.18.33".into());
        }
        _ => {}
    }
    input.to_string()
}

/// A session transcript of `host`'s shape, about `size` bytes: earlier turns, each with 20 KB
/// of tool output, then the turn that ended with `text`.
fn write_host_transcript(host: &str, path: &Path, size: usize, text: &str) {
    match host {
        "claude" => return write_transcript(path, size, text),
        "opencode" => return,
        _ => {}
    }
    let output = "drwxr-xr-x  src/billing/ledger.rs  4.2K  ".repeat(20 * 1024 / 44);
    let (earlier, last): (Vec<serde_json::Value>, Vec<serde_json::Value>) = match host {
        "qwen" => (
            vec![
                serde_json::json!({"type": "user", "sessionId": SESSION, "message": {"role": "user", "parts": [{"text": "Look at the ledger."}]}}),
                serde_json::json!({"type": "tool_result", "sessionId": SESSION, "message": {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": output}}}]}}),
                serde_json::json!({"type": "assistant", "sessionId": SESSION, "model": "qwen3-coder-plus", "version": "0.24.4", "message": {"role": "model", "parts": [{"text": "Done."}]}, "usageMetadata": {"promptTokenCount": 1300, "candidatesTokenCount": 900, "cachedContentTokenCount": 5000}}),
            ],
            vec![
                serde_json::json!({"type": "assistant", "sessionId": SESSION, "model": "qwen3-coder-plus", "version": "0.24.4", "message": {"role": "model", "parts": [{"text": text}]}, "usageMetadata": {"promptTokenCount": 1300, "candidatesTokenCount": 900, "cachedContentTokenCount": 5000}}),
            ],
        ),
        "gemini" => (
            vec![
                serde_json::json!({"type": "user", "content": [{"text": "Look at the ledger."}]}),
                serde_json::json!({"type": "gemini", "content": "", "toolCalls": [{"name": "run_shell_command", "result": output}], "model": "gemini-2.5-pro", "tokens": {"input": 1200, "output": 40}}),
                serde_json::json!({"type": "gemini", "content": "Done.", "model": "gemini-2.5-pro", "tokens": {"input": 1300, "output": 900, "cached": 5000, "thoughts": 0}}),
            ],
            vec![
                serde_json::json!({"type": "user", "content": [{"text": "[anvil bench@main · round 3 of 3 · Advocate]"}]}),
                serde_json::json!({"type": "gemini", "content": text, "model": "gemini-2.5-pro", "tokens": {"input": 1300, "output": 900, "cached": 5000, "thoughts": 0}}),
            ],
        ),
        "copilot" => (
            vec![
                serde_json::json!({"type": "user.message", "data": {"content": "Look at the ledger."}}),
                serde_json::json!({"type": "tool.execution_complete", "data": {"toolCallId": "c", "result": {"content": output}}}),
                serde_json::json!({"type": "session.usage_record", "data": {"usage": {"model": "claude-sonnet-4.5", "inputTokens": 1300, "outputTokens": 900, "cacheReadTokens": 5000, "cacheWriteTokens": 0}}}),
                serde_json::json!({"type": "assistant.message", "data": {"content": "Done."}}),
            ],
            vec![
                serde_json::json!({"type": "user.message", "data": {"content": "[anvil bench@main · round 3 of 3 · Advocate]"}}),
                serde_json::json!({"type": "session.usage_record", "data": {"usage": {"model": "claude-sonnet-4.5", "inputTokens": 1300, "outputTokens": 900, "cacheReadTokens": 5000, "cacheWriteTokens": 0}}}),
                serde_json::json!({"type": "assistant.message", "data": {"content": text}}),
                serde_json::json!({"type": "hook.start", "data": {"hookType": "agentStop", "input": {"sessionId": SESSION, "stopReason": "end_turn", "timestamp": COPILOT_CALL}}}),
            ],
        ),
        _ => (
            vec![
                serde_json::json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Look at the ledger."}]}}),
                serde_json::json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c", "output": output}}),
                serde_json::json!({"type": "token_usage_record", "payload": {"turn_id": "earlier", "usage": {"input_tokens": 1300, "output_tokens": 900, "cached_input_tokens": 5000}}}),
            ],
            vec![
                serde_json::json!({"type": "turn_context", "payload": {"turn_id": TURN, "model": "gpt-5.1-codex"}}),
                serde_json::json!({"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}}),
                serde_json::json!({"type": "token_usage_record", "payload": {"turn_id": TURN, "usage": {"input_tokens": 1300, "output_tokens": 900, "cached_input_tokens": 5000}}}),
            ],
        ),
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut written = 0;
    if host == "codex" {
        let meta = serde_json::json!({"type": "session_meta", "payload": {"id": SESSION, "cli_version": "0.169.0"}});
        written += writeln_json(&mut out, &meta);
    }
    let last_len: usize = last.iter().map(|e| e.to_string().len() + 1).sum();
    while written + last_len < size {
        for e in &earlier {
            written += writeln_json(&mut out, e);
        }
    }
    for e in &last {
        writeln_json(&mut out, e);
    }
    out.flush().unwrap();
}

/// One JSON line; its length.
fn writeln_json(out: &mut impl Write, value: &serde_json::Value) -> usize {
    let line = format!("{value}\n");
    out.write_all(line.as_bytes()).unwrap();
    line.len()
}
