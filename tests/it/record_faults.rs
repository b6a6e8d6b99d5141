//! The record's guarantees under faults, with the built binary: a hook killed at any of its
//! write points, a full disk, a leftover ref lock, live files put back by hand. Every time the
//! next deliveries record each phase exactly once, `git fsck --strict` is clean and the debate
//! runs to its synthesis.

use serde_json::{Value, json};

use crate::support::anvil::{Project, Run, Started, next_key, phases, system_message};
use crate::support::snap::Filters;

const S1: &str = "11111111-1111-4111-8111-111111111111";

fn input(project: &Project, message: &str) -> Value {
    json!({
        "session_id": S1,
        "cwd": project.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": message,
    })
}

/// The hook with `message`, and `ANVIL_FAULT_AT`/`ANVIL_FAULT` set when `fault` is given.
fn hook(project: &Project, message: &str, fault: Option<(u32, &str)>) -> Run {
    let mut command = project.command(&["hook", "stop"]);
    if let Some((at, kind)) = fault {
        command
            .env("ANVIL_FAULT_AT", at.to_string())
            .env("ANVIL_FAULT", kind);
    }
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the hook");
    let stdin = input(project, message).to_string();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn start(project: &Project, rounds: &str) -> Started {
    project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        rounds,
        "--session",
        S1,
    ])
}

/// The record of a finished 1-round debate holds each phase once, and so do the live files
/// and the report.
fn assert_recorded_once(project: &Project, started: &Started, texts: &[&str], context: &str) {
    project.assert_fsck_clean();
    let phases = phases(project, &started.debate);
    assert_eq!(
        phases,
        ["start", "advocate", "critic", "synthesizer"],
        "{context}"
    );
    let transcript = project.transcript_md(&started.debate);
    let report = project.read(
        project
            .anvil_home()
            .join("reports")
            .join(format!("{}.md", started.debate)),
    );
    for (i, text) in texts.iter().enumerate() {
        assert_eq!(
            transcript.matches(text).count(),
            1,
            "{context}\n{transcript}"
        );
        // The report opens with the synthesis, then gives the whole debate.
        let expected = if i + 1 == texts.len() { 2 } else { 1 };
        assert_eq!(
            report.matches(text).count(),
            expected,
            "{context}\n{report}"
        );
    }
    let state = project.state_md(&started.debate);
    assert!(state.contains("status: done"), "{context}\n{state}");
    assert!(
        !project
            .line_dir(&started.debate, "main")
            .join("incoming.md")
            .exists(),
        "{context}"
    );
    assert!(
        !project.anvil_home().join("sessions").join(S1).exists(),
        "{context}: the session is still bound"
    );
}

/// Regression (issue 9, defect 1): a hook killed between its commit and `state.md`, then the
/// same text again, recorded the phase twice.
#[test]
fn a_state_file_left_behind_by_a_kill_does_not_record_the_phase_twice() {
    let project = Project::new();
    let started = start(&project, "3");
    let state_path = project.line_dir(&started.debate, "main").join("state.md");
    let before = std::fs::read(&state_path).unwrap();
    let first = hook(&project, "ADVOCATE r1: the case for.", None);
    assert_eq!(next_key(&first), "CRITIC r1");
    std::fs::write(&state_path, &before).unwrap();

    let again = hook(&project, "ADVOCATE r1: the case for.", None);
    assert_eq!(next_key(&again), "CRITIC r1");
    let reason = |r: &Run| r.json().unwrap()["reason"].clone();
    assert_eq!(reason(&again), reason(&first));
    let advocates = project
        .commits(&started.debate)
        .iter()
        .filter(|c| c.subject.starts_with("round 1 advocate"))
        .count();
    assert_eq!(advocates, 1);
    assert!(
        system_message(&again).contains("behind the record"),
        "{}",
        again.describe()
    );

    // And the next text is the next phase.
    let next = hook(&project, "CRITIC r1: the case against.", None);
    assert_eq!(next_key(&next), "ADVOCATE r2");
    let phases = phases(&project, &started.debate);
    assert_eq!(phases, ["start", "advocate", "critic"]);
    let transcript = project.transcript_md(&started.debate);
    assert_eq!(transcript.matches("ADVOCATE r1: the case for.").count(), 1);
    assert_eq!(
        transcript.matches("CRITIC r1: the case against.").count(),
        1
    );
    project.assert_fsck_clean();
}

/// A `state.md` edited by hand to say the debate is over, while it still names the right tip:
/// the record wins. The hook records the phase and hands out the next one, with a note; the
/// edited file is kept beside; `status` and `doctor` say what the record says, and
/// `doctor --fix` repairs it too.
#[test]
fn a_state_file_edited_to_disagree_with_the_record_is_overruled_by_it() {
    let project = Project::new();
    let started = start(&project, "2");
    let line = project.line_dir(&started.debate, "main");
    let edit = || {
        let state = std::fs::read_to_string(line.join("state.md")).unwrap();
        assert!(state.contains("status: active"), "{state}");
        std::fs::write(
            line.join("state.md"),
            state.replace("status: active", "status: done"),
        )
        .unwrap();
    };
    edit();
    // The record says active, and the debate is still listed as active.
    let f = Filters::of(&project);
    let status = project.anvil(&["status", &started.debate]).ok();
    insta::assert_snapshot!("status_of_an_overruled_line", f.redact(&status.stdout));
    let listed = project.anvil(&["status"]).ok();
    insta::assert_snapshot!("status_lists_an_overruled_line", f.redact(&listed.stdout));
    let doctor = project.anvil(&["doctor", "--json"]);
    assert!(
        doctor.stdout.contains("disagrees with the record"),
        "{}",
        doctor.describe()
    );

    let run = hook(&project, "ADVOCATE r1: for.", None);
    assert_eq!(next_key(&run), "CRITIC r1", "{}", run.describe());
    insta::assert_snapshot!("notice_the_record_wins", f.redact(&system_message(&run)));
    assert!(
        std::fs::read_to_string(line.join("state.md.edited"))
            .unwrap()
            .contains("status: done")
    );
    assert!(project.state_md(&started.debate).contains("status: active"));

    // `anvil doctor --fix` does the same.
    edit();
    let fixed = project.anvil(&["doctor", "--fix"]);
    assert!(
        fixed
            .stdout
            .contains(&format!("rolled {}@main forward", started.debate)),
        "{}",
        fixed.describe()
    );
    assert!(project.state_md(&started.debate).contains("status: active"));
    let next = hook(&project, "CRITIC r1: against.", None);
    assert_eq!(next_key(&next), "ADVOCATE r2", "{}", next.describe());
    assert_eq!(
        phases(&project, &started.debate),
        ["start", "advocate", "critic"]
    );
    project.assert_fsck_clean();
}

/// A project whose first hook was killed while it held the line's ref lock (issue 9, defect
/// 2: such a lock wedged every later hook), with the lock and anvil's temporary file left.
fn killed_holding_the_ref_lock() -> (Project, Started, std::path::PathBuf) {
    for at in 1..40 {
        let project = Project::new();
        let started = start(&project, "1");
        let run = hook(&project, "ADVOCATE r1", Some((at, "abort")));
        assert!(run.stderr.contains("fault injected"), "{}", run.describe());
        if run.stderr.contains("(while the ref is locked)") {
            let lock = project
                .record_dir()
                .join(format!("refs/anvil/{}/main.lock", started.debate));
            assert!(
                lock.exists(),
                "the kill leaves the lock: {}",
                run.describe()
            );
            return (project, started, lock);
        }
    }
    panic!("the hook never reached the point where it holds the ref lock");
}

/// A ref lock that anvil left (the same file as anvil's temporary file beside it; for an older
/// anvil, holding the commit it noted as its intent) is removed at once, with a note, by the
/// hook, `anvil resume` and `anvil cancel`.
#[test]
fn a_ref_lock_anvil_left_behind_is_removed_with_a_note_and_the_phase_recorded() {
    let (project, started, lock) = killed_holding_the_ref_lock();
    let begun = std::time::Instant::now();
    let run = hook(&project, "ADVOCATE r1", None);
    assert_eq!(next_key(&run), "CRITIC r1", "{}", run.describe());
    let f = Filters::of(&project);
    insta::assert_snapshot!("notice_lock_anvil_left", f.redact(&system_message(&run)));
    assert!(!lock.exists());
    // Not waited for, unlike a lock another program holds.
    assert!(begun.elapsed() < std::time::Duration::from_secs(4));

    // What an older anvil killed while it held the lock left, made by hand: the intent it
    // wrote first and a lock holding the same commit. This anvil still recognises it.
    let intent = project.line_dir(&started.debate, "main").join("ref-intent");
    let leave = || {
        let id = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(&intent, id).unwrap();
        std::fs::write(&lock, format!("{id}\n")).unwrap();
    };
    leave();
    let resumed = project
        .anvil(&["resume", &started.debate, "--session", S1])
        .ok();
    insta::assert_snapshot!(
        "resume_removes_a_lock_anvil_left",
        f.redact(&resumed.stderr)
    );
    assert!(!lock.exists() && !intent.exists());

    leave();
    let cancel = project.anvil(&["cancel", &started.debate]).ok();
    insta::assert_snapshot!("cancel_removes_a_lock_anvil_left", f.redact(&cancel.stderr));
    let phases = phases(&project, &started.debate);
    assert_eq!(phases, ["start", "advocate", "cancel"]);
    project.assert_fsck_clean();
}

/// A ref lock anvil did not leave belongs to another program (`git pack-refs` holds one for
/// the moment it folds a loose ref into `packed-refs`; removing it lets git delete the ref the
/// hook just wrote). It is waited for, never removed; if it stays, the stop keeps its text and
/// says which lock and what holds it, and the next stop records that text.
#[test]
fn a_ref_lock_another_program_holds_is_waited_for_never_removed() {
    let project = Project::new();
    let started = start(&project, "2");
    let record = project.record_dir();
    let lock = record.join(format!("refs/anvil/{}/main.lock", started.debate));

    // A short-lived lock: gone 150 ms later, with the hook waiting meanwhile.
    std::fs::write(&lock, "").unwrap();
    let released = std::thread::spawn({
        let lock = lock.clone();
        move || {
            std::thread::sleep(std::time::Duration::from_millis(150));
            std::fs::remove_file(&lock).unwrap();
        }
    });
    let run = hook(&project, "ADVOCATE r1", None);
    released.join().unwrap();
    assert_eq!(next_key(&run), "CRITIC r1", "{}", run.describe());
    assert!(
        !system_message(&run).contains("main.lock"),
        "a lock its holder released is not reported: {}",
        run.describe()
    );

    // A lock that stays, with no anvil maintenance running: the stop ends with a message that
    // names the lock and its kind of holder; the lock is still there; the text is kept.
    let tip = git_ref(&project, &started.debate);
    std::fs::write(&lock, format!("{tip}\n")).unwrap();
    let held = hook(&project, "CRITIC r1: the case against.", None);
    let f = Filters::of(&project);
    insta::assert_snapshot!(
        "notice_lock_held_by_another",
        f.redact(&system_message(&held))
    );
    assert!(lock.exists(), "never removed");
    assert_eq!(git_ref(&project, &started.debate), tip, "nothing committed");
    let incoming = project
        .line_dir(&started.debate, "main")
        .join("incoming.md");
    assert_eq!(
        std::fs::read_to_string(&incoming).unwrap(),
        "CRITIC r1: the case against."
    );

    // The same while `anvil gc` runs: its advisory lock held and naming a live process.
    let gc = std::fs::File::create(record.join("anvil-gc.lock")).unwrap();
    gc.lock().unwrap();
    std::fs::write(record.join("anvil-gc.lock"), std::process::id().to_string()).unwrap();
    let during = hook(&project, "Sorry, what now?", None);
    insta::assert_snapshot!(
        "notice_lock_held_during_gc",
        f.redact(&system_message(&during))
    );
    assert!(lock.exists());
    drop(gc);

    // The holder lets go; the person says "continue" and Claude answers that: the next stop
    // records the text the failed stop kept, not the answer to the failure.
    std::fs::remove_file(&lock).unwrap();
    let next = hook(&project, "Continuing as asked.", None);
    assert_eq!(next_key(&next), "ADVOCATE r2", "{}", next.describe());
    insta::assert_snapshot!(
        "notice_kept_text_recorded",
        f.redact(&system_message(&next))
    );
    assert!(!incoming.exists());
    let transcript = project.transcript_md(&started.debate);
    assert!(transcript.contains("CRITIC r1: the case against."));
    assert!(!transcript.contains("Continuing as asked."));
    assert!(!transcript.contains("Sorry, what now?"));
    let phases = phases(&project, &started.debate);
    assert_eq!(phases, ["start", "advocate", "critic"]);
    project.assert_fsck_clean();
}

/// The commit the line's ref names, read by git.
fn git_ref(project: &Project, debate: &str) -> String {
    let out = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(project.record_dir())
        .args(["rev-parse", &format!("refs/anvil/{debate}/main")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Runs a 1-round debate whose `faulty`-th delivery (0: advocate, 2: synthesis) fails at its
/// `at`-th write point; returns `false` when the hook has fewer write points than that.
fn run_with_fault(faulty: usize, at: u32, kind: &str) -> bool {
    let project = Project::new();
    let started = start(&project, "1");
    let texts = [
        "ADVOCATE r1: yes.",
        "CRITIC r1: no.",
        "SYNTHESIS: it depends.",
    ];
    let next = ["CRITIC r1", "SYNTHESIS"];
    let context = format!("fault {kind} at point {at} of delivery {faulty}");
    for (i, text) in texts.iter().enumerate() {
        if i == faulty {
            let run = hook(&project, text, Some((at, kind)));
            if !run.stderr.contains("fault injected") {
                // The hook got through all its write points: there is no point `at`.
                assert_eq!(run.code, Some(0), "{context}: {}", run.describe());
                return false;
            }
            if kind == "full" {
                let message = system_message(&run);
                assert!(
                    message.contains("disk is full") || message.contains("no space"),
                    "{context}: {message}"
                );
            } else {
                assert_ne!(run.code, Some(0), "{context}: {}", run.describe());
            }
        }
        let run = hook(&project, text, None);
        match next.get(i) {
            Some(key) => assert_eq!(next_key(&run), *key, "{context}"),
            None => assert!(
                run.json().is_some() && system_message(&run).contains("is done"),
                "{context}: {}",
                run.describe()
            ),
        }
        project.assert_fsck_clean();
    }
    assert_recorded_once(&project, &started, &texts, &context);
    true
}

#[test]
fn a_hook_killed_at_any_write_point_records_every_phase_once() {
    for faulty in [0, 2] {
        let mut at = 1;
        while run_with_fault(faulty, at, "abort") {
            at += 1;
        }
        // A phase with a commit has at least: its objects, the ref, the transcript, the state.
        assert!(at > 8, "only {} write points were found", at - 1);
    }
}

#[test]
fn a_full_disk_at_any_write_point_loses_nothing_and_records_every_phase_once() {
    for faulty in [0, 2] {
        let mut at = 1;
        while run_with_fault(faulty, at, "full") {
            at += 1;
        }
        assert!(at > 8, "only {} write points were found", at - 1);
    }
}

#[test]
fn hostile_voices_and_model_text_keep_the_record_fsck_clean() {
    let project = Project::new();
    let started = project.start(&[
        "Who pays?",
        "--stakeholders",
        "Customers >1k seats,Finance <CFO>,Ops",
        "--session",
        S1,
    ]);
    for text in [
        "STAKEHOLDER 1\0 with a NUL and \u{1b}[2J an escape",
        "\n\nSTAKEHOLDER 2 <b>bold</b>",
        "STAKEHOLDER 3",
        "SYNTHESIS",
    ] {
        hook(&project, text, None).ok();
    }
    project.assert_fsck_clean();
    let commits = project.commits(&started.debate);
    let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
    assert_eq!(
        phases,
        [
            "start",
            "stakeholder",
            "stakeholder",
            "stakeholder",
            "synthesizer"
        ]
    );
    assert_eq!(commits[1].author, "Customers ›1k seats");
    assert_eq!(
        commits[1].trailer("Anvil-Voice"),
        Some("Customers >1k seats")
    );
    assert_eq!(commits[2].author, "Finance ‹CFO›");
    assert!(!commits[1].subject.contains('\0'));
    // The text itself is kept whole in the tree.
    let response = project.git(&[
        "show",
        &format!("{}:001-stakeholder.response.md", commits[1].id),
    ]);
    assert_eq!(
        response,
        "STAKEHOLDER 1\0 with a NUL and \u{1b}[2J an escape"
    );
}

#[test]
fn a_persona_with_a_newline_and_long_free_text_names_never_break_a_debate() {
    let project = Project::new();
    let long_persona = "a veteran operator ".repeat(20);
    let long_focus = "the cost of running it at scale, ".repeat(130);
    assert!(long_persona.len() > 255 && long_focus.len() > 4000);
    // An override directory exists, so the loader looks for files named after them.
    project
        .anvil(&["prompts", "eject", "personas/free-text.md"])
        .ok();
    let started = project.start(&[
        "Should we self-host?",
        "--persona",
        "Ops\nlead",
        "--persona",
        long_persona.trim(),
        "--focus",
        &long_focus,
        "--session",
        S1,
    ]);
    for (text, next) in [("PERSONA 1", "PERSONA"), ("PERSONA 2", "SYNTHESIS")] {
        let run = hook(&project, text, None);
        assert!(next_key(&run).starts_with(next), "{}", run.describe());
    }
    hook(&project, "SYNTHESIS", None).ok();
    project.assert_fsck_clean();
    let commits = project.commits(&started.debate);
    assert_eq!(commits.len(), 4, "{commits:#?}");
    assert_eq!(commits[1].author, "Ops lead");
    assert_eq!(commits[1].trailer("Anvil-Voice"), Some("Ops%0Alead"));
}

#[test]
fn control_tokens_stay_out_of_the_transcript_and_the_next_prompt() {
    let project = Project::new();
    let started = project.start(&[
        "Should we adopt GraphQL?",
        "--rounds",
        "2",
        "--interactive",
        "--session",
        S1,
    ]);
    hook(&project, "ADVOCATE r1", None).ok();
    hook(&project, "CRITIC r1", None).ok();
    let run = hook(
        &project,
        "Where we stand.\n\n<anvil-steering>none</anvil-steering>",
        None,
    );
    let prompt = run.json().unwrap()["reason"].as_str().unwrap().to_owned();
    assert!(!prompt.contains("steers this phase"), "{prompt}");
    assert!(!prompt.contains("- none"), "{prompt}");
    let run = hook(&project, "It is settled.\n\n<anvil-complete/>", None);
    assert_eq!(next_key(&run), "SYNTHESIS");
    hook(&project, "SYNTHESIS: adopt it.", None).ok();
    let commits = project.commits(&started.debate);
    assert_eq!(commits[3].phase(), "interactive-pause");
    assert!(
        commits[3].trailer("Anvil-Steering").is_none(),
        "{commits:#?}"
    );
    let transcript = project.transcript_md(&started.debate);
    assert!(!transcript.contains("anvil-complete"), "{transcript}");
    assert!(transcript.contains("It is settled."), "{transcript}");
    let report = project.read(
        project
            .anvil_home()
            .join("reports")
            .join(format!("{}.md", started.debate)),
    );
    assert!(!report.contains("anvil-complete"), "{report}");
    // The raw response in the record keeps it.
    let raw = project.git(&[
        "show",
        &format!("{}:004-advocate.response.md", commits[4].id),
    ]);
    assert!(raw.contains("<anvil-complete/>"), "{raw}");
}

/// Regression (issue 9, defect 4): steering accepted just as the debate finished was never
/// delivered. Now it is refused once only the synthesis is left, and a queue file that shows
/// up anyway (written without the line's lock) is reported and kept.
#[test]
fn steering_is_delivered_or_refused_and_never_silently_dropped() {
    let project = Project::new();
    let started = start(&project, "1");
    assert_eq!(next_key(&hook(&project, "ADVOCATE r1", None)), "CRITIC r1");
    let queued = project
        .anvil(&["steer", "--line", &started.line, "be brief"])
        .ok();
    let f = Filters::of(&project);
    insta::assert_snapshot!("steer_queued", f.redact(&queued.stderr));
    let run = hook(&project, "CRITIC r1", None);
    assert_eq!(next_key(&run), "SYNTHESIS");
    assert!(run.stdout.contains("be brief"), "{}", run.describe());

    let refused = project.anvil(&["steer", "--line", &started.line, "too late"]);
    assert_ne!(refused.code, Some(0), "{}", refused.describe());
    insta::assert_snapshot!("steer_refused_before_synthesis", f.redact(&refused.stderr));

    let queue = project.line_dir(&started.debate, "main").join("steering");
    std::fs::create_dir_all(&queue).unwrap();
    let stray = queue.join("00000000000000000099.md");
    std::fs::write(&stray, "written without the lock").unwrap();
    let run = hook(&project, "SYNTHESIS", None);
    insta::assert_snapshot!(
        "notice_done_with_stray_steering",
        f.redact(&system_message(&run))
    );
    assert!(stray.exists());
    let refused = project.anvil(&["steer", "--line", &started.line, "after the end"]);
    assert_ne!(refused.code, Some(0), "{}", refused.describe());
    insta::assert_snapshot!("steer_refused_when_done", f.redact(&refused.stderr));
    let steering: Vec<String> = project
        .commits(&started.debate)
        .iter()
        .flat_map(|c| {
            c.trailers_named("Anvil-Steering")
                .into_iter()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(steering, ["be brief"]);
}

/// Runs in its own user and mount namespace (no privilege needed where unprivileged user
/// namespaces are allowed; CI runs as root): for each K, a 3 MiB tmpfs holding a debate, the
/// disk filled to leave K KiB, one stop with a 30 kB text, the disk freed, one more stop.
const FULL_DISK_SCRIPT: &str = r#"
set -u
anvil=$1; shift
base=$(mktemp -d)
S=77777777-7777-4777-8777-777777777777
msg=$(head -c 30000 /dev/zero | tr '\0' 'x')
stop() {
  printf '{"session_id":"%s","cwd":"%s","hook_event_name":"Stop","last_assistant_message":"%s"}' \
    $S "$1" "$2" | $anvil hook stop 2>/dev/null | tr '\n' ' '
}
for k in "$@"; do
  d=$base/$k; mkdir -p $d
  mount -t tmpfs -o size=3m tmpfs $d || exit 3
  cd $d && mkdir p && cd p && git init -q . && $anvil init >/dev/null 2>&1
  $anvil start "Full disk?" --rounds 3 --session $S >/dev/null 2>&1 || exit 4
  dd if=/dev/zero of=$d/fill bs=4k 2>/dev/null
  [ "$k" -gt 0 ] && truncate -s -${k}K $d/fill
  echo "K $k"
  echo "FIRST $(stop $d/p "ADVOCATE $msg")"
  rm -f $d/fill
  echo "AFTER $(stop $d/p "ADVOCATE again")"
  g="git --git-dir .anvil/record"
  tip=$($g for-each-ref --format='%(objectname)' refs/anvil/)
  $g log --format=%s --reverse $tip | sed 's/^/PHASE /' | cut -c1-60
  for f in $($g ls-tree --name-only $tip | grep response); do
    echo "BYTES $f $($g show $tip:$f | wc -c)"
  done
  cd /; umount $d
done
"#;

/// A real full disk (a small tmpfs), at every amount of free space from none to enough: a
/// stop that fails says which file and that the disk is full; the text it saved is whole or
/// absent, never cut short; once there is space, the next stop records the advocate's phase
/// once and hands Claude the critic's prompt, whatever the failed stop had got to.
#[test]
fn a_real_full_disk_names_the_file_and_the_next_stop_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("full.sh");
    std::fs::write(&script, FULL_DISK_SCRIPT).unwrap();
    let free: Vec<String> = (0..=120).step_by(4).map(|k| k.to_string()).collect();
    // A private mount namespace: a user namespace where the kernel allows one, else (as root,
    // where it may not) the mount namespace alone.
    let run = |namespaces: &[&str]| {
        std::process::Command::new("unshare")
            .args(namespaces)
            .arg("bash")
            .arg(&script)
            .arg(crate::support::anvil::anvil_bin())
            .args(&free)
            .output()
            .expect("run unshare (util-linux)")
    };
    let mut out = run(&["--user", "--map-root-user", "--mount"]);
    if String::from_utf8_lossy(&out.stderr).contains("unshare failed") {
        out = run(&["--mount"]);
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the full-disk script failed ({:?}): {}\n{text}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let cases: Vec<&str> = text.split("K ").skip(1).collect();
    assert_eq!(cases.len(), free.len(), "{text}");
    let mut failed = 0;
    for case in cases {
        let field = |name: &str| -> Vec<&str> {
            case.lines().filter_map(|l| l.strip_prefix(name)).collect()
        };
        let first = field("FIRST ")[0];
        let after = field("AFTER ")[0];
        let phases = field("PHASE ");
        if first.contains("\"decision\":\"block\"") {
            // Enough space: recorded at once; the second text is the critic's.
            assert!(first.contains("round 1 of 3 · Critic"), "{case}");
            assert_eq!(phases.len(), 3, "{case}");
            assert!(
                phases[2].starts_with("round 1 critic: ADVOCATE again"),
                "{case}"
            );
            continue;
        }
        failed += 1;
        assert!(
            first.contains(".anvil/") && first.contains("the disk is full"),
            "a failure names the file and the cause: {case}"
        );
        assert!(
            after.contains("round 1 of 3 · Critic"),
            "the next stop hands out the critic's prompt: {case}"
        );
        assert_eq!(phases.len(), 2, "start and one advocate: {case}");
        assert!(
            phases[1].starts_with("round 1 advocate: ADVOCATE"),
            "{case}"
        );
        let bytes = field("BYTES ");
        assert_eq!(bytes.len(), 1, "{case}");
        let size: usize = bytes[0].rsplit(' ').next().unwrap().parse().unwrap();
        assert!(
            size == "ADVOCATE ".len() + 30000 || size == "ADVOCATE again".len(),
            "the recorded text is one of the two, whole: {case}"
        );
    }
    assert!(
        failed >= 5,
        "the disk was full for several amounts of free space: {text}"
    );
}
