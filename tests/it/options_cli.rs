//! The debate options through the real binary: each option's effect on the rendered prompts of
//! the phases it affects, the inputs recorded in a debate's first commit, `.anvil/config.toml`,
//! `anvil prompts`, completions, and an error message for every invalid combination.
//!
//! Phases are driven by calling `anvil hook stop` the way Claude Code does, so no model is
//! needed; the end-to-end run with the real Claude Code CLI is in `e2e_options.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::anvil::first_commit;
use crate::support::snap::Filters;

const SESSION: &str = "0b6c7d8e-1f2a-4b3c-8d4e-5f6a7b8c9d0e";

struct Project {
    dir: tempfile::TempDir,
}

fn anvil_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_anvil"))
        .args(args)
        .current_dir(dir)
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env("ANVIL_NOW", "2026-11-22T10:00:00Z")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run anvil");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("wait for anvil")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let out = anvil_in(dir.path(), &["init"], None);
        assert!(out.status.success(), "init: {}", text(&out.stderr));
        Project { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, content: &[u8]) -> PathBuf {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    fn anvil(&self, args: &[&str]) -> Output {
        anvil_in(self.path(), args, None)
    }

    /// `anvil start …` that must succeed; returns the first prompt.
    fn start(&self, args: &[&str]) -> String {
        let mut all = vec!["start", "--session", SESSION];
        all.extend_from_slice(args);
        let out = self.anvil(&all);
        assert!(
            out.status.success(),
            "anvil {all:?} failed: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// `anvil start …` that must fail; returns stderr.
    fn start_err(&self, args: &[&str]) -> String {
        let mut all = vec!["start", "--session", SESSION];
        all.extend_from_slice(args);
        let out = self.anvil(&all);
        assert!(
            !out.status.success(),
            "anvil {all:?} should fail, printed: {}",
            text(&out.stdout)
        );
        text(&out.stderr)
    }

    /// One stop of the driving session with `reply` as its last message; the next prompt.
    fn stop(&self, reply: &str) -> Option<String> {
        let input = serde_json::json!({
            "session_id": SESSION,
            "cwd": self.path(),
            "stop_hook_active": true,
            "last_assistant_message": reply,
        })
        .to_string();
        let out = anvil_in(self.path(), &["hook", "stop"], Some(&input));
        assert!(out.status.success(), "hook: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        if stdout.trim().is_empty() {
            return None;
        }
        let answer: Value = serde_json::from_str(stdout.trim()).unwrap();
        answer["reason"].as_str().map(str::to_owned)
    }

    /// Starts a debate and answers every phase until it is done: every prompt, in order.
    fn run(&self, args: &[&str]) -> Vec<String> {
        let mut prompts = vec![self.start(args)];
        for i in 0..30 {
            match self.stop(&format!("Reply {i}: a considered argument.")) {
                Some(prompt) => prompts.push(prompt),
                None => return prompts,
            }
        }
        panic!("the debate did not finish: {prompts:#?}");
    }

    /// The only debate's id.
    fn debate(&self) -> String {
        let mut ids: Vec<String> = std::fs::read_dir(self.path().join(".anvil/debates"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(ids.len(), 1, "{ids:?}");
        ids.pop().unwrap()
    }

    /// A file of the first commit of `debate`'s main line.
    fn first_commit_file(&self, debate: &str, path: &str) -> Option<String> {
        let record =
            anvil_core::record::store::Record::open(&self.path().join(".anvil/record")).unwrap();
        let root = first_commit(&record, debate);
        record
            .read(root, path)
            .unwrap()
            .map(|b| String::from_utf8(b).unwrap())
    }
}

fn synthesis(prompts: &[String]) -> &str {
    let last = prompts.last().unwrap();
    assert!(last.contains("· synthesis ·"), "{last}");
    last
}

fn debating(prompts: &[String]) -> &[String] {
    &prompts[..prompts.len() - 1]
}

#[test]
fn every_framework_shapes_only_the_synthesis() {
    for (name, mark) in [
        ("adr", "Architecture Decision Record"),
        ("pre-mortem", "imagine it is a year from now"),
        ("red-team", "red-team report"),
        ("rfc", "request for comments (RFC)"),
        ("risks", "risk register"),
    ] {
        let p = Project::new();
        let prompts = p.run(&["Adopt GraphQL?", "--rounds", "1", "--framework", name]);
        // The framework's shape replaces the default one.
        insta::assert_snapshot!(
            format!("synthesis_prompt_{name}"),
            Filters::new().redact(synthesis(&prompts))
        );
        for prompt in debating(&prompts) {
            assert!(!prompt.contains(mark), "{name} leaks into {prompt}");
        }
        let state = p.first_commit_file(&p.debate(), "state.md").unwrap();
        assert!(state.contains(&format!("framework: {name}")), "{state}");
    }
}

#[test]
fn focus_presets_and_free_text_reach_every_phase() {
    for (given, mark) in [
        ("security", "Focus: security. Judge every argument"),
        ("Operational Cost", "Focus: operational cost."),
        ("developer-experience", "Focus: developer experience."),
        ("performance", "Focus: performance."),
        ("maintainability", "Focus: maintainability."),
        (
            "GDPR compliance",
            "Focus: GDPR compliance. Judge every argument",
        ),
    ] {
        let p = Project::new();
        let prompts = p.run(&["Adopt GraphQL?", "--rounds", "2", "--focus", given]);
        assert_eq!(prompts.len(), 5, "advocate, critic ×2, synthesis");
        for prompt in &prompts {
            assert!(prompt.contains(mark), "{given}: {prompt}");
        }
    }
}

#[test]
fn persona_presets_and_free_text_speak_in_their_voice() {
    let p = Project::new();
    let prompts = p.run(&[
        "Adopt GraphQL?",
        "--persona",
        "startup-cfo",
        "--persona",
        "Security Engineer",
        "--persona",
        "junior-developer",
        "--persona",
        "end-user",
        "--persona",
        "a burned-out SRE",
    ]);
    assert_eq!(prompts.len(), 6, "five voices and the synthesis");
    for (prompt, mark) in debating(&prompts).iter().zip([
        "You are the CFO of a startup",
        "You are a seasoned security engineer",
        "You are a junior developer",
        "You are an end user of the product",
        "Speak as this persona: a burned-out SRE.",
    ]) {
        assert!(prompt.contains(mark), "{mark}: {prompt}");
    }
    assert!(
        prompts[1].starts_with("[anvil ") && prompts[1].contains("Persona: security-engineer]")
    );
}

#[test]
fn research_asks_for_web_evidence_and_a_source_list() {
    let p = Project::new();
    let prompts = p.run(&["Adopt GraphQL?", "--rounds", "1", "--research"]);
    for prompt in debating(&prompts) {
        assert!(
            prompt.contains("ground your claims in evidence from the web"),
            "{prompt}"
        );
    }
    assert!(synthesis(&prompts).contains("**Sources**"), "{prompts:#?}");

    let p = Project::new();
    let prompts = p.run(&["Adopt GraphQL?", "--rounds", "1"]);
    assert!(
        prompts
            .iter()
            .all(|x| !x.contains("Sources") && !x.contains("web"))
    );
}

#[test]
fn autonomy_sets_how_readily_debaters_ask() {
    let p = Project::new();
    let prompts = p.run(&["Adopt GraphQL?", "--rounds", "1"]);
    assert!(
        prompts.iter().all(|x| !x.contains("anvil ask")),
        "autonomy 0 never asks"
    );
    for (level, mark) in [
        ("1", "only if the debate cannot go on"),
        ("3", "when a missing fact matters"),
        ("5", "whenever anything is ambiguous"),
    ] {
        let p = Project::new();
        let prompts = p.run(&["Adopt GraphQL?", "--rounds", "1", "--autonomy", level]);
        for prompt in debating(&prompts) {
            assert!(prompt.contains("anvil ask \"your question\""), "{prompt}");
            assert!(prompt.contains(mark), "{level}: {prompt}");
        }
        assert!(!synthesis(&prompts).contains("anvil ask"));
    }
}

#[test]
fn context_is_recorded_given_once_and_pointed_to_after() {
    let p = Project::new();
    p.write(".gitignore", b"build/\n*.log\n");
    p.write("src/lib.rs", b"pub fn answer() -> u32 { 42 }\n");
    p.write("src/util/mod.rs", b"// UTIL_MARKER\n");
    p.write("src/debug.log", b"IGNORED_LOG\n");
    p.write("build/out.rs", b"IGNORED_BUILD\n");
    p.write("src/logo.png", b"\x89PNG\x00\x00binary");
    p.write("NOTES.md", b"NOTES_MARKER\n");
    let prompts = p.run(&[
        "Is the answer right?",
        "--rounds",
        "1",
        "--context",
        ".",
        "--context",
        "NOTES.md",
    ]);
    let first = &prompts[0];
    // Every file once (NOTES.md was named twice), none that .gitignore ignores, none of
    // anvil's own, a binary named and not given.
    insta::assert_snapshot!("first_prompt_with_context", Filters::new().redact(first));
    for later in &prompts[1..] {
        assert!(!later.contains("<anvil-context>"), "{later}");
        assert!(later.contains("context.md"), "{later}");
    }
    let debate = p.debate();
    assert_eq!(
        p.first_commit_file(&debate, "context/files/src/lib.rs")
            .as_deref(),
        Some("pub fn answer() -> u32 { 42 }\n")
    );
    assert!(
        p.first_commit_file(&debate, "context/files/src/debug.log")
            .is_none()
    );
    let index = p.first_commit_file(&debate, "context/README.md").unwrap();
    assert!(index.contains("src/logo.png (binary)"), "{index}");
    let state = p.first_commit_file(&debate, "state.md").unwrap();
    assert!(state.contains("NOTES.md"), "{state}");
}

#[test]
fn context_over_the_limit_is_cut_with_a_note() {
    let p = Project::new();
    let line = "x".repeat(99) + "\n";
    p.write("big/a.txt", line.repeat(1000).as_bytes()); // 100 KB
    p.write("big/b.txt", line.repeat(1000).as_bytes()); // 100 KB
    p.write("big/c.txt", b"C_MARKER\n");
    let first = p.start(&["Too much?", "--context", "big"]);
    assert!(first.contains("big/b.txt (cut to"), "{first}");
    assert!(first.contains("[… cut by anvil"), "{first}");
    assert!(first.contains("big/c.txt") && first.contains("over the size limit"));
    assert!(!first.contains("C_MARKER"));
    assert!(first.len() < 140 * 1024, "bounded: {}", first.len());
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.org")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.org")
        .output()
        .expect("git is needed for the --diff test");
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

#[test]
fn diff_carries_the_uncommitted_changes() {
    let p = Project::new();
    git(p.path(), &["init", "-q"]);
    p.write("app.py", b"print('old')\nkeep = 1\n");
    p.write("gone.txt", b"bye\n");
    git(p.path(), &["add", "app.py", "gone.txt"]);
    git(p.path(), &["commit", "-q", "-m", "base"]);
    p.write("app.py", b"print('new')\nkeep = 1\n");
    std::fs::remove_file(p.path().join("gone.txt")).unwrap();
    p.write("added.txt", b"fresh\n");
    let prompts = p.run(&["Ship it?", "--rounds", "1", "--diff"]);
    let first = &prompts[0];
    insta::assert_snapshot!("first_prompt_with_the_diff", Filters::new().redact(first));
    // The patch recorded: the change, nothing of .anvil.
    let patch = p
        .first_commit_file(&p.debate(), "context/diff.patch")
        .unwrap();
    insta::assert_snapshot!("recorded_diff_patch", patch);
}

#[test]
fn diff_outside_a_git_repository_says_so() {
    let p = Project::new();
    let err = p.start_err(&["Ship it?", "--diff"]);
    insta::assert_snapshot!("diff_outside_git", Filters::new().redact(&err));
}

#[test]
fn follow_up_builds_on_a_report_file_or_a_recorded_debate() {
    let p = Project::new();
    p.write("report.md", b"# Old report\n\nVERDICT_MARKER: adopt it.\n");
    let first = p.start(&["What next?", "--follow-up", "report.md"]);
    insta::assert_snapshot!(
        "first_prompt_following_up_a_report",
        Filters::new().redact(&first)
    );
    let recorded = p
        .first_commit_file(&p.debate(), "context/follow-up.md")
        .unwrap();
    assert!(recorded.contains("VERDICT_MARKER"), "{recorded}");

    // A finished debate's synthesis, named by its id.
    let p = Project::new();
    p.start(&["First question?", "--rounds", "1"]);
    p.stop("advocate");
    p.stop("critic");
    assert!(p.stop("SYNTHESIS_MARKER: the answer is 42").is_none());
    let debate = p.debate();
    let out = p.anvil(&[
        "start",
        "Follow it up",
        "--follow-up",
        &format!("{debate}@main"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = text(&out.stdout);
    // Only the synthesis, not the debate.
    insta::assert_snapshot!(
        "first_prompt_following_up_a_debate",
        Filters::new()
            .record(&p.path().join(".anvil/record"))
            .redact(&first)
    );

    // Without live files, the synthesis is read from the record.
    std::fs::remove_dir_all(p.path().join(".anvil/debates").join(&debate)).unwrap();
    let out = p.anvil(&["start", "Again", "--follow-up", &debate[..12]]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("SYNTHESIS_MARKER"));
}

#[test]
fn versus_without_a_question_asks_which_is_stronger() {
    let p = Project::new();
    p.write("a.md", b"PLAN_A: monolith\n");
    p.write("b.md", b"PLAN_B: microservices\n");
    let prompts = p.run(&["--versus", "a.md", "b.md", "--rounds", "1"]);
    insta::assert_snapshot!("first_prompt_versus", Filters::new().redact(&prompts[0]));
    insta::assert_snapshot!(
        "synthesis_prompt_versus",
        Filters::new().redact(synthesis(&prompts))
    );
    let debate = p.debate();
    assert!(
        p.first_commit_file(&debate, "context/versus-a.md")
            .unwrap()
            .contains("PLAN_A")
    );
    assert!(
        p.first_commit_file(&debate, "context/versus-b.md")
            .unwrap()
            .contains("PLAN_B")
    );
}

#[test]
fn config_gives_defaults_and_flags_override_them() {
    let p = Project::new();
    p.write(
        ".anvil/config.toml",
        b"rounds = 1\nframework = \"risks\"\nfocus = \"performance\"\nresearch = true\noutput_dir = \"decisions\"\ncontext = [\"src\"]\n",
    );
    p.write("src/main.rs", b"fn main() { CONFIG_CONTEXT }\n");
    let prompts = p.run(&["Cache it?"]);
    assert_eq!(prompts.len(), 3, "rounds = 1 from the config");
    assert!(synthesis(&prompts).contains("risk register"));
    assert!(prompts.iter().all(|x| x.contains("Focus: performance.")));
    assert!(prompts[0].contains("ground your claims") && prompts[0].contains("CONFIG_CONTEXT"));
    let report = p
        .path()
        .join("decisions")
        .join(format!("{}.md", p.debate()));
    assert!(report.is_file(), "the report goes to output_dir");

    let p2 = Project::new();
    std::fs::copy(
        p.path().join(".anvil/config.toml"),
        p2.path().join(".anvil/config.toml"),
    )
    .unwrap();
    p2.write("src/main.rs", b"fn main() {}\n");
    let prompts = p2.run(&[
        "Cache it?",
        "--rounds",
        "2",
        "--framework",
        "adr",
        "--focus",
        "security",
    ]);
    assert_eq!(prompts.len(), 5, "--rounds 2 wins");
    assert!(synthesis(&prompts).contains("Architecture Decision Record"));
    assert!(prompts.iter().all(|x| x.contains("Focus: security.")));
}

#[test]
fn no_flags_turn_off_what_the_config_turned_on() {
    let config = b"rounds = 2\ninteractive = true\nresearch = true\n";
    let p = Project::new();
    p.write(".anvil/config.toml", config);
    let prompts = p.run(&["Cache it?"]);
    assert_eq!(prompts.len(), 6, "the config's pause after round 1");
    assert!(prompts[0].contains("ground your claims"));

    let p = Project::new();
    p.write(".anvil/config.toml", config);
    let prompts = p.run(&["Cache it?", "--no-interactive", "--no-research"]);
    assert_eq!(prompts.len(), 5, "no pause: {prompts:#?}");
    assert!(prompts.iter().all(|x| !x.contains("ground your claims")));

    // The last of a pair wins, as with any command-line switch.
    let p = Project::new();
    let prompts = p.run(&["Cache it?", "--rounds", "1", "--no-research", "--research"]);
    assert!(prompts[0].contains("ground your claims"));
    let p = Project::new();
    p.write(".anvil/config.toml", config);
    let prompts = p.run(&["Cache it?", "--interactive", "--no-interactive"]);
    assert_eq!(prompts.len(), 5, "no pause: {prompts:#?}");
}

#[test]
fn config_errors_name_the_key() {
    let mut shown = String::new();
    for (config, expected) in [
        ("rounds = 2\nfocsu = \"security\"\n", "focsu"),
        ("rounds = \"two\"\n", "rounds"),
        ("mode = \"loud\"\n", "mode"),
        ("interactive = \"yes\"\n", "interactive"),
        (
            "framework = \"memo\"\n",
            "`framework` in .anvil/config.toml",
        ),
        ("rounds = 40\n", "`rounds` in .anvil/config.toml"),
        ("autonomy = 9\n", "`autonomy` in .anvil/config.toml"),
        ("context = [\"nope/\"]\n", "`context` in .anvil/config.toml"),
        (
            "mode = \"devils-advocate\"\n",
            "`mode` in .anvil/config.toml devils-advocate",
        ),
    ] {
        let p = Project::new();
        p.write(".anvil/config.toml", config.as_bytes());
        let err = p.start_err(&["Q?"]);
        assert!(err.contains(expected), "{config}: {err}");
        shown.push_str(&format!(
            "$ cat .anvil/config.toml\n{config}$ anvil start Q?\n{err}\n"
        ));
    }
    insta::assert_snapshot!("config_errors", Filters::new().redact(&shown));
}

#[test]
fn invalid_combinations_say_what_to_do() {
    let p = Project::new();
    p.write("a.md", b"a\n");
    let mut shown = String::new();
    for (args, expected) in [
        (vec!["Q?", "--mode", "devils-advocate"], "add --position"),
        (
            vec!["Q?", "--persona", "startup-cfo"],
            "at least two voices",
        ),
        (
            vec!["Q?", "--stakeholders", "A,B", "--mode", "philosopher"],
            "--stakeholders implies --mode stakeholders",
        ),
        (
            vec![
                "Q?",
                "--stakeholders",
                "A,B",
                "--persona",
                "x",
                "--persona",
                "y",
            ],
            "use one of them",
        ),
        (vec!["Q?", "--rounds", "0"], "use 1 to 10"),
        (vec!["Q?", "--rounds", "11"], "use 1 to 10"),
        (
            vec!["Q?", "--stakeholders", "A,B", "--rounds", "3"],
            "rounds = voices",
        ),
        (vec!["Q?", "--autonomy", "6"], "use 0 to 5"),
        (
            vec!["Q?", "--framework", "memo"],
            "choose one of: adr, pre-mortem, red-team, rfc, risks",
        ),
        (vec!["Q?", "--focus", " "], "--focus is empty"),
        (
            vec!["Q?", "--context", "missing/"],
            "--context missing/: no such file or directory",
        ),
        (
            vec!["Q?", "--follow-up", "nope.md"],
            "--follow-up nope.md: no such file",
        ),
        (
            vec!["--versus", "a.md", "nope.md"],
            "--versus nope.md: no such file",
        ),
        (vec!["--versus", "a.md", "a.md"], "two different results"),
        (
            vec!["Q?", "--follow-up", "a.md", "--versus", "a.md", "b.md"],
            "use one of them",
        ),
        (vec![], "needs a question to debate"),
    ] {
        let err = p.start_err(&args);
        assert!(err.contains(expected), "{args:?}: {err}");
        shown.push_str(&format!("$ anvil start {}\n{err}\n", args.join(" ")));
    }
    // A bare `anvil run` says what to type, and starts nothing.
    let bare = p.anvil(&["run"]);
    assert_eq!(bare.status.code(), Some(2));
    shown.push_str(&format!("$ anvil run\n{}\n", text(&bare.stderr)));
    assert!(
        !p.path().join(".anvil/debates").exists()
            || std::fs::read_dir(p.path().join(".anvil/debates"))
                .unwrap()
                .next()
                .is_none()
    );
    insta::assert_snapshot!(
        "invalid_combinations",
        Filters::new().path(p.path(), "[project]").redact(&shown)
    );
}

#[test]
fn prompts_list_show_and_eject() {
    let p = Project::new();
    let filters = Filters::new().path(p.path(), "[project]");
    let list = text(&p.anvil(&["prompts", "list"]).stdout);
    // Every template, each built in.
    insta::assert_snapshot!("prompts_list_built_in", filters.redact(&list));

    let shown = p.anvil(&["prompts", "show", "frameworks/adr.md"]);
    assert!(text(&shown.stdout).contains("Architecture Decision Record"));

    let out = p.anvil(&["prompts", "eject", "frameworks/adr.md"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ejected = p.path().join(".anvil/prompts/frameworks/adr.md");
    assert!(ejected.is_file());
    let again = p.anvil(&["prompts", "eject", "frameworks/adr.md"]);
    insta::assert_snapshot!("prompts_eject_again", filters.redact(&text(&again.stderr)));

    std::fs::write(&ejected, "OUR_ADR_TEMPLATE for {{ question }}\n").unwrap();
    let list = text(&p.anvil(&["prompts", "list"]).stdout);
    let line = list
        .lines()
        .find(|l| l.starts_with("frameworks/adr.md"))
        .unwrap();
    assert!(line.contains("overridden"), "{line}");
    let shown = text(&p.anvil(&["prompts", "show", "frameworks/adr.md"]).stdout);
    assert!(shown.starts_with("OUR_ADR_TEMPLATE"), "{shown}");
    let prompts = p.run(&["Adopt it?", "--rounds", "1", "--framework", "adr"]);
    assert!(synthesis(&prompts).contains("OUR_ADR_TEMPLATE for Adopt it?"));

    // A new preset is just a new file.
    p.write(".anvil/prompts/focus/gdpr.md", b"OUR_GDPR_LENS\n");
    p.write(".anvil/prompts/personas/our-cto.md", b"OUR_CTO_VOICE\n");
    let first = p.start(&[
        "Log IPs?",
        "--focus",
        "gdpr",
        "--persona",
        "our-cto",
        "--persona",
        "end-user",
    ]);
    assert!(
        first.contains("OUR_GDPR_LENS") && first.contains("OUR_CTO_VOICE"),
        "{first}"
    );
    let list = text(&p.anvil(&["prompts", "list"]).stdout);
    // One overridden, two added.
    insta::assert_snapshot!("prompts_list_overridden_and_added", filters.redact(&list));

    let unknown = p.anvil(&["prompts", "show", "roles/nobody.md"]);
    insta::assert_snapshot!(
        "prompts_show_unknown",
        filters.redact(&text(&unknown.stderr))
    );
}

#[test]
fn a_broken_template_is_named_with_its_line() {
    let p = Project::new();
    p.write(
        ".anvil/prompts/roles/advocate.md",
        b"Argue for it.\n\n{% if round > 1 %}unclosed\n",
    );
    let err = p.start_err(&["Q?"]);
    insta::assert_snapshot!(
        "broken_template",
        Filters::new().path(p.path(), "[project]").redact(&err)
    );
    let list = text(&p.anvil(&["prompts", "list"]).stdout);
    let line = list
        .lines()
        .find(|l| l.starts_with("roles/advocate.md"))
        .unwrap();
    assert!(line.contains("BROKEN") && line.contains("line"), "{line}");
}

#[test]
fn start_help_documents_every_option_with_an_example() {
    let help = text(&Project::new().anvil(&["start", "--help"]).stdout);
    for option in [
        "--mode",
        "--rounds",
        "--position",
        "--stakeholders",
        "--persona",
        "--interactive",
        "--framework",
        "--focus",
        "--context",
        "--diff",
        "--follow-up",
        "--versus",
        "--research",
        "--autonomy",
        "--output",
    ] {
        let start = help
            .lines()
            .position(|l| {
                let l = l.trim_start();
                l == option
                    || l.starts_with(&format!("{option} "))
                    || l.starts_with(&format!("-o, {option} "))
            })
            .unwrap_or_else(|| panic!("{option} missing: {help}"));
        let section = help.lines().skip(start).collect::<Vec<_>>().join("\n");
        let section = section.split("\n  -").next().unwrap();
        assert!(
            section.contains("Example:"),
            "{option} has no example: {section}"
        );
    }
}

/// The whole `--help` of both commands that take the debate options, built from their
/// definitions: a change to any option's words, value or order shows here.
#[test]
fn start_and_run_help_read_as_the_definitions_say() {
    let p = Project::new();
    for command in ["start", "run"] {
        for (help, name) in [("-h", "short"), ("--help", "long")] {
            let out = p.anvil(&[command, help]);
            assert!(out.status.success(), "{}", text(&out.stderr));
            insta::assert_snapshot!(format!("{command}_{name}_help"), text(&out.stdout));
        }
    }
    // The config's keys are named in `--help` from the same definitions: the snapshot of
    // `start --help` shows them.
}

#[test]
fn completions_cover_the_options() {
    let p = Project::new();
    for shell in ["bash", "zsh", "fish"] {
        let out = p.anvil(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        assert!(
            script.contains("framework") && script.contains("follow-up"),
            "{shell}"
        );
    }
    let out = p.anvil(&["completions", "tcsh"]);
    assert!(!out.status.success());
}
