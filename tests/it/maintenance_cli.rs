//! `anvil gc`: the record packed by git while hooks commit, nothing lost, everything
//! fsck-clean; without git, said so and left loose; started in the background when it is due
//! (by commands that write, and by the Stop hook after a synthesis); one at a time, and never
//! blocked by one that was killed.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::anvil::Project;
use crate::support::snap::Filters;

const ROUNDS: u32 = 5;

fn session(i: usize) -> String {
    format!("3a3a3a3a-0000-4000-8000-00000000000{i}")
}

/// The text debater `i` answers with at step `step` (1-based).
fn text(i: usize, step: u32) -> String {
    format!("Debate {i}, step {step}: a point made at length so that the blob is not tiny.\n")
}

/// Where step `step` of a ROUNDS-round analyst debate is recorded.
fn response_file(step: u32) -> String {
    let role = if step == 2 * ROUNDS + 1 {
        "synthesizer"
    } else if step % 2 == 1 {
        "advocate"
    } else {
        "critic"
    };
    format!("{step:03}-{role}.response.md")
}

/// Starts debate `i`, a ROUNDS-round one for its own session, and gives its name.
fn start_debate(project: &Project, i: usize) -> String {
    let out = project
        .command(&[
            "start",
            &format!("Race question {i}?"),
            "--rounds",
            &ROUNDS.to_string(),
        ])
        .env("CLAUDE_CODE_SESSION_ID", session(i))
        .output()
        .unwrap();
    assert!(out.status.success());
    let prompt = String::from_utf8_lossy(&out.stdout).into_owned();
    prompt
        .split("[anvil ")
        .nth(1)
        .and_then(|s| s.split('@').next())
        .expect("a tag in the first prompt")
        .to_owned()
}

/// The Stop hook after debate `i`'s debater answered step `step` with [`text`].
fn record_step(project: &Project, i: usize, step: u32) -> crate::support::anvil::Run {
    project.hook(&json!({
        "session_id": session(i),
        "cwd": project.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": step > 1,
        "last_assistant_message": text(i, step),
    }))
}

/// Four debates committing phases through the hook while `anvil gc` runs again and again.
#[test]
fn gc_racing_hooks_keeps_every_phase_and_leaves_the_record_fsck_clean() {
    let gc_command = |project: &Project, args: &[&str]| {
        crate::support::anvil::Run::from_output(project.command(args).output().unwrap())
    };
    let project = Project::new();
    let debates: Vec<String> = (0..4).map(|i| start_debate(&project, i)).collect();

    // Each hook step starts only while a gc process is running, and both sides note when
    // they ran: the race is proven by overlapping spans, not hoped for from timing.
    let hooks_done = AtomicBool::new(false);
    let gc_running = AtomicBool::new(false);
    let gc_spans = Mutex::new(Vec::new());
    let hook_spans = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let gc = scope.spawn(|| {
            while !hooks_done.load(Ordering::SeqCst) {
                gc_running.store(true, Ordering::SeqCst);
                let began = Instant::now();
                let run = gc_command(&project, &["gc"]);
                gc_spans.lock().unwrap().push((began, Instant::now()));
                gc_running.store(false, Ordering::SeqCst);
                if run.code != Some(0) {
                    hooks_done.store(true, Ordering::SeqCst);
                    panic!("gc: {}", run.describe());
                }
            }
        });
        let hooks: Vec<_> = (0..debates.len())
            .map(|i| {
                let (project, gc_running, hook_spans) = (&project, &gc_running, &hook_spans);
                let hooks_done = &hooks_done;
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for step in 1..=2 * ROUNDS + 1 {
                        let patience = Instant::now() + Duration::from_secs(30);
                        while !gc_running.load(Ordering::SeqCst)
                            && !hooks_done.load(Ordering::SeqCst)
                            && Instant::now() < patience
                        {
                            std::thread::sleep(Duration::from_micros(200));
                        }
                        let began = Instant::now();
                        let run = record_step(project, i, step);
                        hook_spans.lock().unwrap().push((began, Instant::now()));
                        // Every phase but the synthesis is answered with the next prompt.
                        let blocked = run.stdout.contains("\"decision\":\"block\"");
                        if run.code != Some(0) || blocked != (step <= 2 * ROUNDS) {
                            problems.push(run.describe());
                        }
                    }
                    problems
                })
            })
            .collect();
        // The gc loop stops once every hook is done, even if one of them failed.
        let problems: Vec<String> = hooks
            .into_iter()
            .flat_map(|hook| hook.join().unwrap_or_else(|_| vec!["panicked".into()]))
            .collect();
        hooks_done.store(true, Ordering::SeqCst);
        gc.join().unwrap();
        assert!(problems.is_empty(), "hooks: {problems:#?}");
    });
    let gc_spans = gc_spans.into_inner().unwrap();
    let hook_spans = hook_spans.into_inner().unwrap();
    let raced = hook_spans
        .iter()
        .filter(|(hook_began, hook_ended)| {
            gc_spans
                .iter()
                .any(|(gc_began, gc_ended)| gc_began < hook_ended && hook_began < gc_ended)
        })
        .count();
    assert!(
        raced * 2 >= hook_spans.len(),
        "only {raced} of {} hook runs overlapped one of {} gc runs",
        hook_spans.len(),
        gc_spans.len()
    );

    // One last pack, then every phase of every debate is still there, in order.
    gc_command(&project, &["gc"]).ok();
    for (i, debate) in debates.iter().enumerate() {
        let commits = project.commits(debate);
        assert_eq!(commits.len() as u32, 2 * ROUNDS + 2, "start + every phase");
        for step in 1..=2 * ROUNDS + 1 {
            let bytes = project.git_show_bytes(debate, &response_file(step));
            assert_eq!(String::from_utf8(bytes).unwrap(), text(i, step));
        }
    }
    project.assert_fsck_clean();
    let counted = project.git(&["count-objects", "-v"]);
    assert!(counted.contains("count: 0\n"), "all packed: {counted}");
    assert!(project.record_dir().join("packed-refs").is_file());
    // Reads work on the packed record, through packed refs and the commit-graph.
    let log = project.anvil(&["log", "--all"]).ok().stdout;
    for debate in &debates {
        assert!(log.contains(debate.as_str()), "{log}");
    }
}

#[test]
fn gc_keeps_a_young_object_that_no_ref_points_at_yet() {
    let project = Project::new();
    project.start(&["A question?"]);
    // What a hook leaves between writing its objects and moving its ref.
    let hash = |content: &str| {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(project.record_dir())
            .args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(content.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let in_flight = hash("a phase whose ref has not moved yet\n");
    project.anvil(&["gc"]).ok();
    project.git(&["cat-file", "-e", &in_flight]);
}

/// Writes `.anvil/config.toml` with these `[gc]` settings.
fn gc_config(project: &Project, settings: &str) {
    std::fs::write(
        project.anvil_home().join("config.toml"),
        format!("[gc]\n{settings}\n"),
    )
    .unwrap();
}

/// Loose objects in the fan-out folder that the automatic step looks at (`17`, as in git).
fn sample_folder_count(project: &Project) -> usize {
    std::fs::read_dir(project.record_dir().join("objects/17"))
        .map(|d| d.flatten().filter(|e| e.file_name().len() == 38).count())
        .unwrap_or(0)
}

/// Adds unreachable loose blobs whose ids start with `17` until that folder holds `n`: what
/// makes the automatic step find the record due, whatever ids the debates' objects got.
fn fill_sample_folder(project: &Project, n: usize) {
    let repo = gix::open(project.record_dir()).unwrap();
    let mut i = 0u64;
    while sample_folder_count(project) < n {
        i += 1;
        let content = format!("filler {i}\n");
        let id = gix::objs::compute_hash(
            gix::hash::Kind::Sha1,
            gix::objs::Kind::Blob,
            content.as_bytes(),
        )
        .unwrap();
        if id.as_bytes()[0] == 0x17 {
            repo.write_blob(content.as_bytes()).unwrap();
        }
    }
}

fn packs(project: &Project) -> usize {
    std::fs::read_dir(project.record_dir().join("objects/pack"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
                .count()
        })
        .unwrap_or(0)
}

/// Is a maintenance running? (Its lock is held.)
fn gc_running(project: &Project) -> bool {
    let Ok(file) = std::fs::File::open(project.record_dir().join("anvil-gc.lock")) else {
        return false;
    };
    file.try_lock().is_err()
}

/// Waits until a maintenance started in the background has packed the record and let go
/// of its lock (a minute at most: the machine may be busy).
fn wait_for_background_gc(project: &Project) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while packs(project) == 0 || gc_running(project) {
        assert!(
            Instant::now() < deadline,
            "no maintenance packed the record in the background"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn gc_auto_packs_when_the_sample_folder_is_over_the_limit_and_not_under() {
    let project = Project::new();
    project.start(&["A question?"]);
    // 256 loose objects in all: more than one in the sample folder is over the limit.
    gc_config(&project, "auto = 256");
    fill_sample_folder(&project, 1);
    let run = project.anvil(&["gc", "--auto"]).ok();
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
    assert_eq!(packs(&project), 0, "at the limit: nothing to do");

    fill_sample_folder(&project, 2);
    // `auto = 0` turns the automatic maintenance off, whatever the record holds.
    gc_config(&project, "auto = 0");
    project.anvil(&["gc", "--auto"]).ok();
    assert_eq!(packs(&project), 0, "turned off");

    gc_config(&project, "auto = 256");
    let run = project.anvil(&["gc", "--auto", "--json"]).ok();
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["packed"], true, "{}", run.stdout);
    assert_eq!(json["after"]["loose_objects"], 0, "{}", run.stdout);
    project.assert_fsck_clean();
    // Packed (the fillers too, in git's cruft pack): no longer due.
    project.anvil(&["gc", "--auto"]).ok();
    assert_eq!(sample_folder_count(&project), 0);
    // A bad `[gc]` is named, as any key of the file.
    gc_config(&project, "auto = \"often\"");
    let run = project.anvil(&["gc", "--auto"]);
    assert_eq!(run.code, Some(1));
    insta::assert_snapshot!("gc_bad_config", Filters::of(&project).redact(&run.stderr));
}

#[test]
fn a_command_that_writes_starts_gc_in_the_background_when_due() {
    let project = Project::new();
    let first = project.start(&["First question?"]);
    gc_config(&project, "auto = 256");
    fill_sample_folder(&project, 2);
    // `anvil start` returns at once; the maintenance it started packs the record meanwhile.
    let second = project.start(&["Second question?"]);
    wait_for_background_gc(&project);
    let counted = project.git(&["count-objects", "-v"]);
    assert!(counted.contains("count: 0\n"), "{counted}");
    project.assert_fsck_clean();
    assert!(project.record_dir().join("packed-refs").is_file());
    for started in [&first, &second] {
        assert_eq!(project.commits(&started.debate).len(), 1, "the start");
    }
}

#[test]
fn the_stop_hook_starts_gc_in_the_background_after_a_synthesis_only() {
    const SESSION: &str = "4b4b4b4b-0000-4000-8000-000000000001";
    let project = Project::new();
    let out = project
        .command(&["start", "Hooked question?", "--rounds", "2"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .output()
        .unwrap();
    assert!(out.status.success());
    let debate = crate::support::anvil::find_tag(&String::from_utf8_lossy(&out.stdout))
        .unwrap()
        .debate()
        .to_owned();
    gc_config(&project, "auto = 256");
    fill_sample_folder(&project, 2);
    let stop = |step: u32| {
        let run = project.hook(&json!({
            "session_id": SESSION,
            "cwd": project.path(),
            "hook_event_name": "Stop",
            "stop_hook_active": step > 1,
            "last_assistant_message": text(0, step),
        }));
        assert_eq!(run.code, Some(0), "{}", run.describe());
        run
    };
    // The debating phases never start a maintenance, due or not.
    for step in 1..=4 {
        assert!(stop(step).stdout.contains("\"decision\":\"block\""));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(packs(&project), 0, "a debating phase started a maintenance");
    assert!(!project.record_dir().join("anvil-gc.lock").exists());

    // The synthesis does, and the hook answers without waiting for it.
    let last = stop(5);
    assert!(!last.stdout.contains("\"decision\""), "{}", last.describe());
    wait_for_background_gc(&project);
    let commits = project.commits(&debate);
    assert_eq!(commits.len(), 6, "start + every phase");
    for step in 1..=5 {
        let role = match step {
            5 => "synthesizer",
            s if s % 2 == 1 => "advocate",
            _ => "critic",
        };
        let bytes = project.git_show_bytes(&debate, &format!("{step:03}-{role}.response.md"));
        assert_eq!(String::from_utf8(bytes).unwrap(), text(0, step));
    }
    project.assert_fsck_clean();
    let counted = project.git(&["count-objects", "-v"]);
    assert!(counted.contains("count: 0\n"), "{counted}");
}

#[test]
fn gc_without_git_says_so_and_leaves_the_record_loose_and_correct() {
    let project = Project::new();
    let started = project.start(&["A question?"]);
    let no_git = tempfile::tempdir().unwrap();
    let without_git = |args: &[&str]| {
        let out = project
            .command(args)
            .env("PATH", no_git.path())
            .env_remove("ANVIL_GIT")
            .output()
            .unwrap();
        crate::support::anvil::Run::from_output(out)
    };
    let loose_before = project.git(&["count-objects", "-v"]);
    let run = without_git(&["gc"]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    insta::assert_snapshot!("gc_without_git", Filters::of(&project).redact(&run.stderr));
    // Nothing was touched: the record is as loose as it was, and sound.
    assert_eq!(project.git(&["count-objects", "-v"]), loose_before);
    assert!(!project.record_dir().join("packed-refs").exists());
    project.assert_fsck_clean();
    // It reads as before, and takes new commits.
    assert_eq!(project.commits(&started.debate).len(), 1);
    project
        .anvil(&["show", &format!("{}:round-0", started.line)])
        .ok();
    project.anvil(&["cancel", &started.line]).ok();
    assert_eq!(project.commits(&started.debate).len(), 2);

    // The automatic step without git: silent, and nothing packed.
    gc_config(&project, "auto = 256");
    fill_sample_folder(&project, 2);
    let run = without_git(&["gc", "--auto"]).ok();
    assert_eq!(run.stderr, "");
    let counted = project.git(&["count-objects", "-v"]);
    assert!(counted.contains("packs: 0\n"), "{counted}");
    project.assert_fsck_clean();
}

/// A `git` that only says it started, then waits until the test lets it go (a minute at
/// most), so that a maintenance stays in the middle of its work as long as a test needs.
struct SlowGit {
    dir: tempfile::TempDir,
}

impl SlowGit {
    fn new() -> SlowGit {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let script = format!(
            "#!/bin/sh\necho $$ > {d}/pid\ni=0\nwhile [ ! -e {d}/release ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
        );
        let path = dir.path().join("git");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        SlowGit { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("git")
    }

    /// Waits until a maintenance has started it.
    fn wait_started(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.dir.path().join("pid").exists() {
            assert!(Instant::now() < deadline, "the maintenance never ran git");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn release(&self) {
        std::fs::write(self.dir.path().join("release"), b"").unwrap();
    }
}

impl Drop for SlowGit {
    fn drop(&mut self) {
        self.release();
    }
}

/// Logs of runs started from `anvil serve` are not part of the record; gc removes the ones
/// nothing wrote to for a month (see `headless::prune_logs` for a run that still lives).
#[test]
fn gc_removes_logs_of_runs_long_over() {
    let project = Project::new();
    project.start(&["Keep the logs tidy?"]);
    let runs = project.anvil_home().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let old = std::fs::File::create(runs.join("20260101-x-1a2b@main-1767225600.log")).unwrap();
    old.set_modified(std::time::SystemTime::now() - Duration::from_secs(31 * 24 * 3600))
        .unwrap();
    std::fs::write(runs.join("20260101-x-1a2b@main-1795000000.log"), "recent\n").unwrap();
    let run = project.anvil(&["gc", "--json"]).ok();
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["run_logs_removed"], 1, "{}", run.stdout);
    let left: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["20260101-x-1a2b@main-1795000000.log"]);
}

/// `anvil gc` started in the background, held inside its `git` by `git` until released.
fn gc_held_by(project: &Project, git: &SlowGit) -> std::process::Child {
    let child = project
        .command(&["gc"])
        .env("ANVIL_GIT", git.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    git.wait_started();
    child
}

#[test]
fn a_second_gc_is_turned_away_while_one_runs() {
    let project = Project::new();
    project.start(&["A question?"]);
    let git = SlowGit::new();
    let mut first = gc_held_by(&project, &git);
    let second = project.anvil(&["gc"]);
    assert_eq!(second.code, Some(1), "{}", second.describe());
    insta::assert_snapshot!(
        "gc_while_one_runs",
        Filters::of(&project).redact(&second.stderr)
    );
    // The automatic one, due, leaves the work to the one that runs, without a word.
    gc_config(&project, "auto = 256");
    fill_sample_folder(&project, 2);
    let auto = project.anvil(&["gc", "--auto"]).ok();
    assert_eq!((auto.stdout.as_str(), auto.stderr.as_str()), ("", ""));
    assert_eq!(packs(&project), 0);
    git.release();
    assert!(first.wait().unwrap().success());
    // Once it is done, the next one runs.
    project.anvil(&["gc"]).ok();
    assert!(packs(&project) >= 1);
    assert_eq!(sample_folder_count(&project), 0);
    project.assert_fsck_clean();
}

#[test]
fn a_gc_killed_halfway_blocks_no_later_one() {
    let project = Project::new();
    let started = project.start(&["A question?"]);
    let git = SlowGit::new();
    let mut killed = gc_held_by(&project, &git);
    killed.kill().unwrap();
    killed.wait().unwrap();
    git.release();
    assert!(project.record_dir().join("anvil-gc.lock").exists());
    // What a `git gc` killed halfway leaves: its `gc.pid`, naming a process that is gone.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_owned();
    std::fs::write(
        project.record_dir().join("gc.pid"),
        format!("999999999 {host}"),
    )
    .unwrap();

    let run = project.anvil(&["gc"]).ok();
    insta::assert_snapshot!("gc_packed", Filters::of(&project).redact(&run.stderr));
    assert!(!project.record_dir().join("gc.pid").exists());
    assert_eq!(packs(&project), 1);
    project.assert_fsck_clean();
    assert_eq!(project.commits(&started.debate).len(), 1);
}

/// A killed `anvil gc` leaves its `git gc` running; that git keeps the maintenance lock (it
/// was handed to it), so the next `anvil gc` says a maintenance runs, instead of git's "gc is
/// already running", and runs once git is done.
#[test]
fn a_gc_killed_while_its_git_runs_counts_as_running_until_git_ends() {
    let project = Project::new();
    let started = project.start(&["A question?"]);
    let git = SlowGit::new();
    let mut killed = gc_held_by(&project, &git);
    killed.kill().unwrap();
    killed.wait().unwrap();
    let second = project.anvil(&["gc"]);
    assert_eq!(second.code, Some(1), "{}", second.describe());
    insta::assert_snapshot!(
        "gc_while_one_runs",
        Filters::of(&project).redact(&second.stderr)
    );
    assert!(gc_running(&project), "the orphaned git holds the lock");
    git.release();
    let deadline = Instant::now() + Duration::from_secs(30);
    while gc_running(&project) {
        assert!(Instant::now() < deadline, "the lock outlived git");
        std::thread::sleep(Duration::from_millis(20));
    }
    let run = project.anvil(&["gc"]).ok();
    insta::assert_snapshot!("gc_packed", Filters::of(&project).redact(&run.stderr));
    assert_eq!(packs(&project), 1);
    project.assert_fsck_clean();
    assert_eq!(project.commits(&started.debate).len(), 1);
}
