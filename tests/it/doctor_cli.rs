//! `anvil doctor` on real projects: one test per check, and `--fix` repairing what it can
//! without losing anything.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::support::anvil::{Project, Run, anvil_dir};
use crate::support::snap::Filters;

const SESSION: &str = "44444444-4444-4444-8444-444444444444";

/// A user's home for the doctor: nothing in it unless a test puts it there.
struct Env {
    home: tempfile::TempDir,
    path: String,
}

impl Env {
    fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            path: format!("{}:/usr/bin:/bin", anvil_dir().display()),
        }
    }

    fn without_binaries() -> Env {
        Env {
            path: "/usr/bin:/bin".into(),
            ..Env::new()
        }
    }

    fn trust(&self, project: &Project) {
        let dir = project.path().canonicalize().unwrap();
        let config = json!({"projects": {dir.to_string_lossy(): {"hasTrustDialogAccepted": true}}});
        std::fs::write(self.home.path().join(".claude.json"), config.to_string()).unwrap();
    }

    fn doctor(&self, project: &Project, args: &[&str]) -> Run {
        let mut all = vec!["doctor"];
        all.extend_from_slice(args);
        let out = project
            .command(&all)
            .env("HOME", self.home.path())
            .env("PATH", &self.path)
            .env_remove("CLAUDE_CONFIG_DIR")
            // No agent for a seat, whatever this machine has installed.
            .env("ANVIL_CLAUDE_BIN", "no-claude-here")
            .env("ANVIL_CODEX_BIN", "no-codex-here")
            .env("ANVIL_COPILOT_BIN", "no-copilot-here")
            .env("ANVIL_QWEN_BIN", "no-qwen-here")
            .output()
            .unwrap();
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The shared snapshot filters, with this home as `[home]` and anvil's binaries as `[bin]`.
    fn filters(&self, project: &Project) -> Filters {
        Filters::of(project)
            .path(self.home.path(), "[home]")
            .path(&anvil_dir(), "[bin]")
    }

    /// One finding as the person reads it (message, hint, what was fixed), for a snapshot.
    fn shown(&self, project: &Project, finding: &Value) -> String {
        self.filters(project)
            .redact(&serde_json::to_string_pretty(finding).unwrap())
    }

    /// `anvil doctor --json [ARGS]`: the findings.
    fn findings(&self, project: &Project, args: &[&str]) -> (Run, Vec<Value>) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = self.doctor(project, &all);
        let json: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.describe()));
        assert_eq!(json["ok"], run.code == Some(0), "{}", run.describe());
        let findings = json["findings"].as_array().unwrap().clone();
        (run, findings)
    }
}

/// The findings of check `check`.
fn of<'a>(findings: &'a [Value], check: &str) -> Vec<&'a Value> {
    findings.iter().filter(|f| f["check"] == check).collect()
}

/// The one finding of `check` at `level` whose message contains `needle`.
fn find<'a>(findings: &'a [Value], check: &str, level: &str, needle: &str) -> &'a Value {
    of(findings, check)
        .into_iter()
        .find(|f| f["level"] == level && f["message"].as_str().unwrap().contains(needle))
        .unwrap_or_else(|| panic!("no {level} {check} finding with {needle:?}: {findings:#?}"))
}

fn age(path: &Path, by: Duration) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - by).unwrap();
}

fn stop(project: &Project, text: &str) -> Run {
    project
        .hook(&json!({
            "session_id": SESSION,
            "cwd": project.path(),
            "hook_event_name": "Stop",
            "stop_hook_active": true,
            "last_assistant_message": text,
        }))
        .ok()
}

#[test]
fn a_fresh_installation_is_healthy() {
    let project = Project::installed();
    let env = Env::new();
    env.trust(&project);
    project.start(&["Should we?", "--rounds", "2", "--session", SESSION]);
    let (run, findings) = env.findings(&project, &[]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    for f in &findings {
        assert!(
            f["level"] == "ok" || f["level"] == "note",
            "{f:#}\n{}",
            run.describe()
        );
    }
    find(&findings, "stop-hook", "ok", "anvil-hook stop");
    find(&findings, "binaries", "ok", "anvil-hook is on PATH");
    find(&findings, "permissions", "ok", "trusted");
    find(&findings, "block-cap", "ok", "=200");
    find(&findings, "objects", "ok", "match their ids");
    find(&findings, "active", "ok", SESSION);

    // The same, for people.
    let human = env.doctor(&project, &[]);
    assert_eq!(human.code, Some(0), "{}", human.describe());
    insta::assert_snapshot!("healthy", env.filters(&project).redact(&human.stdout));
}

#[test]
fn a_project_without_anvils_hooks_fails() {
    let project = Project::new();
    let env = Env::new();
    let (run, findings) = env.findings(&project, &[]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let stop = find(&findings, "stop-hook", "fail", "no Stop hook");
    insta::assert_snapshot!("no_stop_hook", env.shown(&project, stop));
    find(&findings, "block-cap", "warn", "not set");
}

#[test]
fn binaries_missing_from_path_are_named() {
    let project = Project::installed();
    let env = Env::without_binaries();
    let (run, findings) = env.findings(&project, &[]);
    assert_eq!(run.code, Some(1));
    let missing = find(&findings, "binaries", "fail", "anvil-hook is not on PATH");
    insta::assert_snapshot!("no_anvil_hook_on_path", env.shown(&project, missing));
    find(&findings, "binaries", "fail", "anvil is not on PATH");
    let human = env.doctor(&project, &[]);
    assert_eq!(human.code, Some(1), "{}", human.describe());
    insta::assert_snapshot!(
        "binaries_missing",
        env.filters(&project).redact(&human.stdout)
    );
}

#[test]
fn an_untrusted_workspace_is_explained() {
    let project = Project::installed();
    let env = Env::new();
    let (_, findings) = env.findings(&project, &[]);
    let warn = find(&findings, "permissions", "warn", "permissions.allow");
    insta::assert_snapshot!("untrusted_workspace", env.shown(&project, warn));
}

#[test]
fn a_low_block_cap_and_older_wiring_are_reported() {
    let project = Project::installed();
    let env = Env::new();
    let path = project.path().join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["env"]["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = json!("8");
    settings["hooks"]["Stop"][0]["hooks"][0]["command"] = json!("/opt/old/anvil hook stop");
    std::fs::write(&path, settings.to_string()).unwrap();
    let (_, findings) = env.findings(&project, &[]);
    find(
        &findings,
        "block-cap",
        "warn",
        "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=8",
    );
    find(&findings, "stop-hook", "warn", "this machine's path");
    find(&findings, "binaries", "fail", "/opt/old/anvil");
}

#[test]
fn an_older_command_file_is_rewritten_by_fix() {
    let project = Project::installed();
    let env = Env::new();
    let path = project.path().join(".claude/commands/anvil.md");
    let old = "---\nanvil-managed: true\ndescription: Start an anvil debate on a question\nargument-hint: \"QUESTION\" [--rounds N]\n---\n!`anvil start --slash $ARGUMENTS`\n";
    std::fs::write(&path, old).unwrap();
    let (_, findings) = env.findings(&project, &[]);
    find(&findings, "commands", "warn", "older version");

    let (_, fixed) = env.findings(&project, &["--fix"]);
    let f = find(&fixed, "commands", "ok", "older version");
    insta::assert_snapshot!("older_command_file_fixed", env.shown(&project, f));
    let now = std::fs::read_to_string(&path).unwrap();
    insta::assert_snapshot!("command_file_rewritten", now);
    // A user's own file of that name is not anvil's to rewrite.
    std::fs::write(&path, "---\ndescription: mine\n---\nMine.\n").unwrap();
    let (_, findings) = env.findings(&project, &["--fix"]);
    assert!(
        of(&findings, "commands").iter().all(|f| f["fix"].is_null()),
        "{findings:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "---\ndescription: mine\n---\nMine.\n"
    );
}

/// Locks are told apart by who made them, never by their age: `--fix` removes the ref lock a
/// killed anvil left (the same file as anvil's temporary file beside it), never one another
/// program made, however old; stale temporary files go too.
#[test]
fn fix_removes_the_ref_lock_a_killed_anvil_left_and_stale_temporary_files_never_a_foreign_lock() {
    let project = Project::installed();
    let env = Env::new();
    let started = project.start(&["Should we?", "--rounds", "1", "--session", SESSION]);
    let refs = project
        .record_dir()
        .join("refs/anvil")
        .join(&started.debate);
    // What an anvil killed while it held the line's ref lock leaves.
    let anvils_lock = refs.join("main.lock");
    let anvils_temp = refs.join("main..anvil.lock");
    std::fs::write(&anvils_temp, "0123456789abcdef0123456789abcdef01234567\n").unwrap();
    std::fs::hard_link(&anvils_temp, &anvils_lock).unwrap();
    // Another program's, empty and old (a git killed between creating and filling it).
    let old_lock = refs.join("other.lock");
    std::fs::write(&old_lock, "").unwrap();
    age(&old_lock, Duration::from_secs(600));
    let fresh_lock = project.record_dir().join("packed-refs.lock");
    std::fs::write(&fresh_lock, "").unwrap();
    let tmp = project.record_dir().join("objects/ab/tmp_obj_XyZ123");
    std::fs::create_dir_all(tmp.parent().unwrap()).unwrap();
    std::fs::write(&tmp, "half an object").unwrap();
    age(&tmp, Duration::from_secs(120));
    let slash = project
        .anvil_home()
        .join("slash")
        .join(format!("{SESSION}.anvil"));
    std::fs::create_dir_all(slash.parent().unwrap()).unwrap();
    std::fs::write(&slash, "a question never taken").unwrap();
    age(&slash, Duration::from_secs(3600));

    let (_, findings) = env.findings(&project, &[]);
    let anvils = find(&findings, "leftovers", "warn", "main.lock");
    insta::assert_snapshot!(
        "leftover_lock_of_a_killed_anvil",
        env.shown(&project, anvils)
    );
    assert_eq!(anvils["fix"]["kind"], "clear-ref-lock");
    let foreign = find(&findings, "leftovers", "warn", "other.lock");
    insta::assert_snapshot!("leftover_foreign_lock", env.shown(&project, foreign));
    assert!(foreign["fix"].is_null(), "{foreign:#}");
    find(&findings, "leftovers", "note", "packed-refs.lock");
    find(&findings, "leftovers", "warn", "tmp_obj_XyZ123");
    find(&findings, "leftovers", "warn", "never taken");
    assert!(
        anvils_lock.exists() && tmp.exists(),
        "the doctor only looks without --fix"
    );

    let (_, fixed) = env.findings(&project, &["--fix"]);
    assert!(!anvils_lock.exists() && !anvils_temp.exists());
    assert!(!tmp.exists());
    assert!(!slash.exists());
    assert!(
        old_lock.exists(),
        "a lock anvil did not make is never removed"
    );
    assert!(fresh_lock.exists(), "a lock in use is not touched");
    let cleared = find(&fixed, "leftovers", "ok", "main.lock");
    insta::assert_snapshot!("leftover_lock_cleared", env.shown(&project, cleared));

    // With anvil's leftover gone, the debate goes on.
    let block = stop(&project, "The advocate's case.");
    assert_eq!(
        block.json().unwrap()["decision"],
        "block",
        "{}",
        block.describe()
    );
    project.assert_fsck_clean();
}

/// Regression (issue 9, item 1): the commit landed but state.md stayed a step behind.
#[test]
fn live_files_behind_the_record_are_rolled_forward_by_fix() {
    let project = Project::installed();
    let env = Env::new();
    let started = project.start(&["Should we?", "--rounds", "2", "--session", SESSION]);
    let state_path = project.line_dir(&started.debate, "main").join("state.md");
    let transcript_path = project
        .line_dir(&started.debate, "main")
        .join("transcript.md");
    let old_state = std::fs::read(&state_path).unwrap();
    let old_transcript = std::fs::read(&transcript_path).unwrap();
    stop(&project, "The advocate's case, recorded once.");
    std::fs::write(&state_path, &old_state).unwrap();
    std::fs::write(&transcript_path, &old_transcript).unwrap();

    let (run, findings) = env.findings(&project, &[]);
    let behind = find(&findings, "live-files", "warn", "1 commit behind");
    assert_eq!(behind["fix"]["kind"], "roll-forward", "{behind:#}");
    assert_eq!(run.code, Some(0), "behind is repairable, not broken");

    let (_, fixed) = env.findings(&project, &["--fix"]);
    let f = find(&fixed, "live-files", "ok", "behind");
    insta::assert_snapshot!("live_files_rolled_forward", env.shown(&project, f));
    let transcript = std::fs::read_to_string(&transcript_path).unwrap();
    insta::assert_snapshot!(
        "transcript_rolled_forward",
        env.filters(&project).redact(&transcript)
    );
    let (_, again) = env.findings(&project, &[]);
    find(&again, "live-files", "ok", "1 of 1 lines");

    // The next phase is the critic's, and the advocate's is in the record once.
    stop(&project, "The critic's case.");
    let phases: Vec<String> = project
        .commits(&started.debate)
        .iter()
        .map(|c| c.phase().to_owned())
        .collect();
    assert_eq!(phases, ["start", "advocate", "critic"]);
}

#[test]
fn live_files_that_are_no_state_of_the_record_fail_and_the_record_wins_on_fix() {
    let project = Project::installed();
    let env = Env::new();
    let started = project.start(&["Should we?", "--rounds", "2", "--session", SESSION]);
    let state_path = project.line_dir(&started.debate, "main").join("state.md");
    let text = std::fs::read_to_string(&state_path).unwrap();
    std::fs::write(&state_path, text.replace("step: 0", "step: 7")).unwrap();
    let (run, findings) = env.findings(&project, &[]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let f = find(&findings, "live-files", "fail", "disagrees with the record");
    assert_eq!(f["fix"]["kind"], "overrule", "{f:#}");
    insta::assert_snapshot!("live_files_disagree", env.shown(&project, f));

    // The record wins; the edited file is kept.
    let (_, fixed) = env.findings(&project, &["--fix"]);
    let f = find(&fixed, "live-files", "ok", "disagrees");
    insta::assert_snapshot!("live_files_overruled", env.shown(&project, f));
    let edited = state_path.with_extension("md.edited");
    assert!(std::fs::read_to_string(edited).unwrap().contains("step: 7"));
    assert!(
        std::fs::read_to_string(&state_path)
            .unwrap()
            .contains("step: 0")
    );
    let (run, _) = env.findings(&project, &[]);
    assert_eq!(run.code, Some(0), "{}", run.describe());
}

#[test]
fn a_phase_text_left_behind_is_reported_and_removed_only_when_recorded() {
    let project = Project::installed();
    let env = Env::new();
    let started = project.start(&["Should we?", "--rounds", "2", "--session", SESSION]);
    stop(&project, "The advocate's case.");
    let incoming = project
        .line_dir(&started.debate, "main")
        .join("incoming.md");

    std::fs::write(&incoming, "A critic's text that never made it.").unwrap();
    let (_, findings) = env.findings(&project, &["--fix"]);
    let f = find(&findings, "incoming", "warn", "was not recorded");
    assert!(f["fix"].is_null());
    assert!(incoming.exists(), "an unrecorded text is never deleted");

    std::fs::write(&incoming, "The advocate's case.").unwrap();
    let (_, findings) = env.findings(&project, &["--fix"]);
    find(&findings, "incoming", "ok", "recorded already");
    assert!(!incoming.exists());
}

#[test]
fn a_damaged_object_fails_the_record_check() {
    let project = Project::installed();
    let env = Env::new();
    let started = project.start(&["Should we?", "--rounds", "2", "--session", SESSION]);
    stop(&project, "The advocate's case.");
    // The state blob of the tip, damaged in place.
    let blob = project.git(&[
        "rev-parse",
        &format!("refs/anvil/{}/main:state.md", started.debate),
    ]);
    let blob = blob.trim();
    let path: PathBuf = project
        .record_dir()
        .join("objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).unwrap();
    std::fs::write(&path, b"not zlib at all").unwrap();

    let (run, findings) = env.findings(&project, &[]);
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let f = find(&findings, "objects", "fail", blob);
    insta::assert_snapshot!("damaged_object", env.shown(&project, f));
}

#[test]
fn an_active_debate_no_session_drives_is_pointed_at_resume() {
    let project = Project::installed();
    let env = Env::new();
    project.start(&["Should we?", "--rounds", "2", "--session", SESSION]);
    std::fs::remove_file(project.anvil_home().join("sessions").join(SESSION)).unwrap();
    let (_, findings) = env.findings(&project, &[]);
    let f = find(&findings, "active", "warn", "no session drives it");
    // The hint names the line to resume.
    insta::assert_snapshot!("active_without_a_session", env.shown(&project, f));
}

#[test]
fn a_path_set_in_claude_codes_settings_is_the_one_checked() {
    let project = Project::installed();
    let env = Env::new();
    let path = project.path().join(".claude/settings.local.json");
    std::fs::write(&path, json!({"env": {"PATH": "/usr/bin:/bin"}}).to_string()).unwrap();
    let (run, findings) = env.findings(&project, &[]);
    assert_eq!(run.code, Some(1));
    find(
        &findings,
        "binaries",
        "fail",
        "anvil-hook is not on the PATH set in",
    );
}

#[test]
fn an_index_of_recent_debates_that_missed_a_move_is_reported_and_rebuilt_by_fix() {
    let project = Project::installed();
    let env = Env::new();
    let started = project.start(&["Should we?", "--rounds", "2", "--session", SESSION]);
    let (_, findings) = env.findings(&project, &[]);
    find(
        &findings,
        "recent-index",
        "ok",
        "agrees with the refs (1 debate)",
    );

    // A line moved by git behind anvil's back: the index still claims the older time.
    let index = project.record_dir().join("anvil-recent");
    let before = std::fs::read(&index).unwrap();
    // A phase recorded later than the start (a pinned clock, not a wait).
    let mut hook = project.command(&["hook", "stop"]);
    hook.env("ANVIL_NOW", "2030-01-01T00:00:00Z")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut hook = hook.spawn().unwrap();
    let input = json!({
        "session_id": SESSION,
        "cwd": project.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": "The advocate's case.",
    });
    std::io::Write::write_all(
        &mut hook.stdin.take().unwrap(),
        input.to_string().as_bytes(),
    )
    .unwrap();
    let out = hook.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("block"));
    std::fs::write(&index, before).unwrap();
    let (run, findings) = env.findings(&project, &[]);
    let stale = find(&findings, "recent-index", "warn", &started.debate);
    assert_eq!(stale["fix"]["kind"], "rebuild-index", "{stale:#}");
    assert_eq!(run.code, Some(0), "a cache out of date is not broken");

    let (_, fixed) = env.findings(&project, &["--fix"]);
    let f = find(&fixed, "recent-index", "ok", "out of date");
    insta::assert_snapshot!("recent_index_rebuilt", env.shown(&project, f));
    let (_, findings) = env.findings(&project, &[]);
    find(&findings, "recent-index", "ok", "agrees with the refs");

    std::fs::remove_file(&index).unwrap();
    let (_, findings) = env.findings(&project, &[]);
    find(
        &findings,
        "recent-index",
        "note",
        "no index of recent debates",
    );
}
