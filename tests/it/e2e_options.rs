//! End to end with the real Claude Code CLI: a debate started with
//! `--framework adr --focus security --context src/` runs through the Stop hook to its
//! synthesis, and the model sees the material, the lens and the decision format where they
//! belong.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::claude::{Claude, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn anvil(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_anvil"))
        .args(args)
        .current_dir(dir)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("ANVIL_NOW")
        .output()
        .expect("run anvil");
    assert!(
        out.status.success(),
        "anvil {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The role of the anvil prompt a turn carries, from its tag line
/// `[anvil DEBATE@LINE · round R of N · Role]`.
fn role_of(turn: &Turn) -> Option<String> {
    let text = turn
        .stop_hook_feedback()
        .unwrap_or(turn.latest_user_text.as_str());
    let tag = text.trim_start().strip_prefix("[anvil ")?;
    let tag = &tag[..tag.find(']')?];
    Some(tag.rsplit(" · ").next()?.to_owned())
}

const SYNTHESIS: &str = "# ADR: Keep sessions in Postgres\n\n**Status**: Proposed";

#[test]
fn adr_with_a_security_focus_and_code_context_reaches_synthesis() {
    let project = tempfile::Builder::new()
        .prefix("anvil-e2e-options-")
        .tempdir()
        .unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/session.rs"),
        "// SESSION_STORE_MARKER\npub fn store() {}\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/secret.key"), "IGNORED_SECRET\n").unwrap();
    std::fs::write(dir.join("src/.gitignore"), "*.key\n").unwrap();
    anvil(dir, &["init"]);
    anvil(dir, &["install"]);
    // Bound to the session at once, as the /anvil command does inside Claude Code.
    let session = new_session_id();
    let first = anvil(
        dir,
        &[
            "start",
            "--session",
            &session,
            "Should we move sessions to Redis?",
            "--rounds",
            "1",
            "--framework",
            "adr",
            "--focus",
            "security",
            "--context",
            "src/",
        ],
    );

    let server = ModelServer::start(|turn| match role_of(turn).as_deref() {
        Some("Advocate") => Reply::text("ADVOCATE: Redis is faster."),
        Some("Critic") => Reply::text("CRITIC: Redis widens the attack surface."),
        Some("Synthesizer") => Reply::text(SYNTHESIS),
        _ => Reply::text("not an anvil prompt"),
    });
    let bin_dir: PathBuf = Path::new(env!("CARGO_BIN_EXE_anvil"))
        .parent()
        .unwrap()
        .to_owned();
    let out = Claude::new(&server, dir, &first)
        .session_id(&session)
        .path_prepend(bin_dir)
        .run();
    out.assert_success();
    assert_eq!(out.result_text(), Some(SYNTHESIS), "{}", out.describe());
    assert!(
        server.script_panics().is_empty(),
        "{:?}",
        server.script_panics()
    );

    let turns = server.main_turns();
    let roles: Vec<Option<String>> = turns.iter().map(role_of).collect();
    assert_eq!(
        roles,
        [
            Some("Advocate".to_owned()),
            Some("Critic".to_owned()),
            Some("Synthesizer".to_owned())
        ],
        "{turns:#?}"
    );
    // The first prompt carries the code and the lens; gitignored files stay out.
    let opening = &turns[0].latest_user_text;
    assert!(opening.contains("<anvil-context>"), "{opening}");
    assert!(opening.contains("SESSION_STORE_MARKER"), "{opening}");
    assert!(!opening.contains("IGNORED_SECRET"), "{opening}");
    // Later prompts point to the material instead of repeating it; the lens stays.
    for turn in &turns {
        let text = turn.stop_hook_feedback().unwrap_or(&turn.latest_user_text);
        assert!(text.contains("Focus: security."), "{text}");
    }
    let critic = turns[1].stop_hook_feedback().expect("the hook's prompt");
    assert!(!critic.contains("SESSION_STORE_MARKER"), "{critic}");
    assert!(critic.contains("context.md"), "{critic}");
    let synthesis = turns[2].stop_hook_feedback().expect("the hook's prompt");
    assert!(
        synthesis.contains("Architecture Decision Record"),
        "{synthesis}"
    );

    // The report holds the ADR; the first commit holds the context the debaters saw.
    let reports: Vec<PathBuf> = std::fs::read_dir(dir.join(".anvil/reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = std::fs::read_to_string(&reports[0]).unwrap();
    assert!(
        report.contains("ADR: Keep sessions in Postgres"),
        "{report}"
    );
    let debate = reports[0].file_stem().unwrap().to_str().unwrap().to_owned();
    let record = anvil_core::record::store::Record::open(&dir.join(".anvil/record")).unwrap();
    let root = crate::support::anvil::first_commit(&record, &debate);
    let stored = record.read(root, "context/files/src/session.rs").unwrap();
    assert_eq!(
        stored.as_deref(),
        Some(&b"// SESSION_STORE_MARKER\npub fn store() {}\n"[..])
    );
    assert!(
        record
            .read(root, "context/files/src/secret.key")
            .unwrap()
            .is_none()
    );
}
