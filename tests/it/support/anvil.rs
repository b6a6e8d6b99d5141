//! Running the built `anvil` binary in a temporary project, and reading what it recorded with
//! plain `git`, the way a user would.
//!
//! Also the scripted debater for end-to-end tests: every anvil prompt starts with a tag line
//! `[anvil DEBATE@LINE · round R of N · Role…]`, so the model server can answer each phase with
//! a distinct, recognisable text ([`phase_text`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::model_server::Turn;

/// The `anvil` binary cargo built for these tests.
pub fn anvil_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_anvil"))
}

/// The `anvil-hook` binary cargo built for these tests (what `anvil install` wires).
pub fn anvil_hook_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_anvil-hook"))
}

/// The directory of the `anvil` and `anvil-hook` binaries, for `PATH`: the installed wiring
/// calls both by name.
pub fn anvil_dir() -> PathBuf {
    anvil_bin()
        .parent()
        .expect("the binary has a directory")
        .to_owned()
}

/// A temporary project directory.
pub struct Project {
    dir: tempfile::TempDir,
}

/// The outcome of one `anvil` run.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The outcome of a command run with `output()`.
    pub fn from_output(out: Output) -> Run {
        Run::from(out)
    }

    fn from(out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code,
            truncate(&self.stdout),
            truncate(&self.stderr)
        )
    }

    /// Panics with the output unless the run exited 0.
    pub fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "anvil failed: {}", self.describe());
        self
    }

    /// stdout parsed as one JSON value (the hook's answer); `None` when stdout is empty.
    pub fn json(&self) -> Option<Value> {
        if self.stdout.is_empty() {
            return None;
        }
        Some(
            serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
                panic!("stdout is not one JSON value ({e}): {}", self.describe())
            }),
        )
    }
}

fn truncate(s: &str) -> String {
    if s.len() <= 4000 {
        return s.to_owned();
    }
    let mut end = 4000;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

/// One commit of the record, as `git log` shows it.
#[derive(Debug, Clone)]
pub struct Commit {
    pub id: String,
    pub parents: Vec<String>,
    pub author: String,
    pub subject: String,
    pub message: String,
    /// `Anvil-*` trailers in order.
    pub trailers: Vec<(String, String)>,
}

impl Commit {
    /// The first value of trailer `key`.
    pub fn trailer(&self, key: &str) -> Option<&str> {
        self.trailers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn trailers_named(&self, key: &str) -> Vec<&str> {
        self.trailers
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn phase(&self) -> &str {
        self.trailer("Anvil-Phase").unwrap_or("")
    }

    pub fn round(&self) -> &str {
        self.trailer("Anvil-Round").unwrap_or("")
    }
}

/// A debate `anvil start` created.
#[derive(Debug, Clone)]
pub struct Started {
    pub debate: String,
    /// `DEBATE@main`.
    pub line: String,
    /// stdout of `anvil start`: the first prompt.
    pub prompt: String,
}

impl Project {
    /// An empty temporary directory (no `.anvil`).
    pub fn empty() -> Project {
        let dir = tempfile::Builder::new()
            .prefix("anvil-project-")
            .tempdir()
            .expect("create a temporary project");
        Project { dir }
    }

    /// A temporary project after `anvil init`.
    pub fn new() -> Project {
        let project = Project::empty();
        project.anvil(&["init"]).ok();
        project
    }

    /// A temporary project after `anvil init && anvil install`.
    pub fn installed() -> Project {
        let project = Project::new();
        project.anvil(&["install"]).ok();
        project
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The `anvil` command, run in the project, with no Claude session in its environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(anvil_bin());
        cmd.args(args)
            .current_dir(self.path())
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .env_remove("AI_AGENT")
            .env_remove("ANVIL_NOW")
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(Stdio::null());
        cmd
    }

    pub fn anvil(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().expect("run anvil"))
    }

    /// `anvil ARGS` with `stdin` fed in.
    pub fn anvil_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        run_with_stdin(self.command(args), stdin)
    }
}

/// Runs `command` with `stdin` fed in (from a thread, so a large input never deadlocks against
/// a full output pipe) and collects its output: the one "spawn, pipe, wait" of the tests.
pub fn run_with_stdin(mut command: Command, stdin: &[u8]) -> Run {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run anvil");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for anvil");
    writer.join().unwrap();
    Run::from(out)
}

/// Waits for `child` (every pipe open) until `limit`, then kills it: a run that would go on
/// without end fails the test instead of hanging it.
pub fn finish_within(mut child: std::process::Child, limit: std::time::Duration) -> Run {
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().expect("wait for the child").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let run = Run::from(child.wait_with_output().expect("wait for the child"));
            panic!("still running after {limit:?}: {}", run.describe());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Run::from(child.wait_with_output().expect("wait for the child"))
}

impl Project {
    /// The Stop hook as `anvil install` wires it (`anvil-hook stop`), with `input` as its JSON
    /// on stdin.
    pub fn hook(&self, input: &Value) -> Run {
        self.hook_program(&["stop"], input.to_string().as_bytes())
    }

    /// `anvil-hook stop` with `input`, and `env` in its environment (as Claude Code sets it).
    pub fn hook_with_env(&self, input: &Value, env: &[(&str, &str)]) -> Run {
        let mut hook = Command::new(anvil_hook_bin());
        hook.arg("stop")
            .current_dir(self.path())
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .env_remove("AI_AGENT")
            .env_remove("ANVIL_NOW")
            .env_remove("CLAUDE_PROJECT_DIR")
            .envs(env.iter().copied());
        run_with_stdin(hook, input.to_string().as_bytes())
    }

    /// `anvil-hook ARGS` with `stdin` fed in, in the project, with no Claude session in its
    /// environment.
    pub fn hook_program(&self, args: &[&str], stdin: &[u8]) -> Run {
        let mut hook = Command::new(anvil_hook_bin());
        hook.args(args)
            .current_dir(self.path())
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .env_remove("AI_AGENT")
            .env_remove("ANVIL_NOW")
            .env_remove("CLAUDE_PROJECT_DIR");
        run_with_stdin(hook, stdin)
    }

    /// `anvil start ARGS`, which must succeed.
    pub fn start(&self, args: &[&str]) -> Started {
        let mut all = vec!["start"];
        all.extend_from_slice(args);
        let run = self.anvil(&all).ok();
        let tag = find_tag(&run.stdout)
            .unwrap_or_else(|| panic!("no tag in the first prompt: {}", run.describe()));
        Started {
            debate: tag.debate().to_owned(),
            line: tag.line.clone(),
            prompt: run.stdout,
        }
    }

    pub fn anvil_home(&self) -> PathBuf {
        self.path().join(".anvil")
    }

    pub fn record_dir(&self) -> PathBuf {
        self.anvil_home().join("record")
    }

    /// `.anvil/debates/<debate>/<line>/`.
    pub fn line_dir(&self, debate: &str, line: &str) -> PathBuf {
        self.anvil_home().join("debates").join(debate).join(line)
    }

    /// The id of the project's one debate, as its live files list it; fails unless the
    /// project holds exactly one debate of one line.
    pub fn only_debate(&self) -> String {
        let home = anvil_core::home::Home::find(self.path()).expect("the project has an .anvil");
        let lines = home.live_lines().expect("list the debates");
        assert_eq!(lines.len(), 1, "one debate of one line: {lines:?}");
        lines[0].debate.clone()
    }

    /// The state of [`Project::only_debate`], as its live files hold it.
    pub fn only_state(&self) -> anvil_core::model::state::State {
        let debate = self.only_debate();
        anvil_core::model::state::State::load(&self.line_dir(&debate, "main").join("state.md"))
            .expect("the debate's state.md")
    }

    pub fn read(&self, path: impl AsRef<Path>) -> String {
        let path = self.path().join(path);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    pub fn state_md(&self, debate: &str) -> String {
        self.read(self.line_dir(debate, "main").join("state.md"))
    }

    pub fn transcript_md(&self, debate: &str) -> String {
        self.read(self.line_dir(debate, "main").join("transcript.md"))
    }

    /// `git --git-dir .anvil/record ARGS` (plain git, isolated from the user's configuration);
    /// panics unless it succeeds.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("git output is UTF-8")
    }

    pub fn git_output(&self, args: &[&str]) -> Output {
        Command::new("git")
            .arg("--git-dir")
            .arg(self.record_dir())
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .expect("run git (the tests read the record with plain git)")
    }

    /// The bytes of `path` in the tip of `refs/anvil/<debate>/main`.
    pub fn git_show_bytes(&self, debate: &str, path: &str) -> Vec<u8> {
        let out = self.git_output(&["show", &format!("refs/anvil/{debate}/main:{path}")]);
        assert!(
            out.status.success(),
            "git show {path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// The files in the tip of `refs/anvil/<debate>/main`.
    pub fn tree_files(&self, debate: &str) -> Vec<String> {
        self.git(&[
            "ls-tree",
            "-r",
            "--name-only",
            &format!("refs/anvil/{debate}/main"),
        ])
        .lines()
        .map(str::to_owned)
        .collect()
    }

    /// The commits of `refs/anvil/<debate>/main`, oldest first, read with `git log`.
    pub fn commits(&self, debate: &str) -> Vec<Commit> {
        self.line_commits(debate, "main")
    }

    /// The record of a one-round debate whose advocate asked the human `question` and was
    /// answered `answer`: the question and the answer are commits of their own, before the
    /// advocate's phase, which argues with the answer. A debate that `anvil run` drove
    /// (`headless`) ends with the commit of what its run cost.
    pub fn assert_asked_and_answered(
        &self,
        debate: &str,
        question: &str,
        answer: &str,
        headless: bool,
    ) {
        let commits = self.commits(debate);
        let phases: Vec<&str> = commits.iter().map(|c| c.phase()).collect();
        let mut expected = vec![
            "start",
            "ask",
            "answer",
            "advocate",
            "critic",
            "synthesizer",
        ];
        if headless {
            expected.push("run");
        }
        assert_eq!(phases, expected);
        assert_eq!(commits[1].trailer("Anvil-Question"), Some(question));
        assert_eq!(commits[2].trailer("Anvil-Answer"), Some(answer));
        let advocate = self.git(&[
            "show",
            &format!("{}:001-advocate.response.md", commits[3].id),
        ]);
        assert!(advocate.contains(answer), "{advocate}");
    }

    /// The commits of `refs/anvil/<debate>/<line>`, oldest first (first parents only, so a
    /// branched line starts with its parent line's history), read with `git log`.
    pub fn line_commits(&self, debate: &str, line: &str) -> Vec<Commit> {
        let text = self.git(&[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H%x00%P%x00%an%x00%s%x00%B%x1e",
            &format!("refs/anvil/{debate}/{line}"),
        ]);
        text.split('\u{1e}')
            .map(|c| c.trim_start_matches('\n'))
            .filter(|c| !c.is_empty())
            .map(|c| {
                let mut parts = c.splitn(5, '\0');
                let id = parts.next().unwrap_or_default().to_owned();
                let parents = parts
                    .next()
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
                let author = parts.next().unwrap_or_default().to_owned();
                let subject = parts.next().unwrap_or_default().to_owned();
                let message = parts.next().unwrap_or_default().to_owned();
                let trailers = message
                    .lines()
                    .filter(|l| l.starts_with("Anvil-"))
                    .filter_map(|l| l.split_once(": "))
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect();
                Commit {
                    id,
                    parents,
                    author,
                    subject,
                    message,
                    trailers,
                }
            })
            .collect()
    }

    /// Asserts that `git fsck --strict` finds nothing wrong with the record.
    pub fn assert_fsck_clean(&self) {
        let out = self.git_output(&["fsck", "--strict", "--no-dangling"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "git fsck failed:\n{stdout}\n{stderr}");
        let problems: Vec<&str> = stdout
            .lines()
            .chain(stderr.lines())
            .filter(|l| !l.starts_with("notice:") && !l.starts_with("Checking"))
            .collect();
        assert!(problems.is_empty(), "git fsck reports: {problems:#?}");
    }
}

/// The tag line that starts every anvil prompt: `[anvil DEBATE@LINE · round R of N · Role]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// `DEBATE@LINE`.
    pub line: String,
    /// `None` for the synthesis.
    pub round: Option<u32>,
    pub rounds: Option<u32>,
    /// `Advocate`, `Critic`, `Stakeholder`, `Persona`, `Interactive pause`, `Synthesizer`.
    pub role: String,
    /// The stakeholder or persona speaking.
    pub voice: Option<String>,
}

impl Tag {
    pub fn debate(&self) -> &str {
        self.line.split('@').next().unwrap_or_default()
    }

    pub fn is_pause(&self) -> bool {
        self.role.eq_ignore_ascii_case("Interactive pause")
    }

    pub fn is_synthesis(&self) -> bool {
        self.round.is_none()
    }

    /// `ADVOCATE r2`, `STAKEHOLDER:Product/UX r1`, `PAUSE r1`, `SYNTHESIS`: one key per phase.
    pub fn key(&self) -> String {
        let role = if self.is_pause() {
            "PAUSE".to_owned()
        } else {
            self.role.to_uppercase()
        };
        match (self.round, &self.voice) {
            (None, _) => "SYNTHESIS".to_owned(),
            (Some(r), Some(v)) => format!("{role}:{v} r{r}"),
            (Some(r), None) => format!("{role} r{r}"),
        }
    }
}

/// The first commit of `debate`'s main line (its start).
pub fn first_commit(record: &anvil_core::record::store::Record, debate: &str) -> gix::ObjectId {
    let line = anvil_core::home::LineRef::new(debate, "main");
    let history =
        anvil_core::review::history::LineHistory::load(record, &line).expect("the line exists");
    history.entries[history.round_end(0).expect("a start")].commit
}

/// The first anvil tag in `text`, if any.
pub fn find_tag(text: &str) -> Option<Tag> {
    let start = text.find("[anvil ")?;
    let rest = &text[start + "[anvil ".len()..];
    let inner = &rest[..rest.find(']')?];
    let mut parts = inner.split(" · ").map(str::trim);
    let line = parts.next()?.to_owned();
    let when = parts.next()?;
    let who = parts.collect::<Vec<_>>().join(" · ");
    let (round, rounds) = match when.strip_prefix("round ") {
        Some(r) => {
            let (r, n) = r.split_once(" of ")?;
            (Some(r.trim().parse().ok()?), Some(n.trim().parse().ok()?))
        }
        None => (None, None),
    };
    let (role, voice) = match who.split_once(": ") {
        Some((role, voice)) => (role.to_owned(), Some(voice.to_owned())),
        None => (who, None),
    };
    Some(Tag {
        line,
        round,
        rounds,
        role,
        voice,
    })
}

/// The tag of the prompt this turn answers ([`Turn::prompt`], through any agent's API): the
/// Stop hook's feedback, else the user's message (a prompt given on the command line, the
/// output of `/anvil`, or a seat's prompt).
pub fn turn_tag(turn: &Turn) -> Option<Tag> {
    find_tag(&turn.prompt())
}

/// The scripted text of one phase: names the phase and the line, so a test can tell who wrote
/// what and for which debate. Pauses answer `continue`.
pub fn phase_text(tag: &Tag) -> String {
    if tag.is_pause() {
        return format!(
            "{} of {}: the debate is balanced so far.\n\n<anvil-steering>continue</anvil-steering>",
            tag.key(),
            tag.line
        );
    }
    format!(
        "{} of {}: a considered argument, with evidence.",
        tag.key(),
        tag.line
    )
}

/// The tags a debater ends a phase with: its position, then one `<anvil-open>` line per point
/// the other side has not answered.
pub fn position_tags(stance: &str, confidence: &str, claim: &str, open: &[&str]) -> String {
    let mut text = format!(
        "<anvil-position stance=\"{stance}\" confidence=\"{confidence}\">{claim}</anvil-position>"
    );
    for point in open {
        text.push_str(&format!("\n<anvil-open>{point}</anvil-open>"));
    }
    text
}

/// A scripted debater whose round-1 advocate asks the human `question` with its Bash tool
/// (`anvil ask`), then argues with the tool's result; every other phase plays its part.
pub fn advocate_asks(turn: &Turn, question: &str) -> super::model_server::Reply {
    use super::model_server::Reply;
    if let Some((_, result, _)) = turn.tool_results().into_iter().next_back() {
        return Reply::text(format!(
            "ADVOCATE r1, knowing this ({}): a considered argument.",
            result.trim()
        ));
    }
    match turn_tag(turn) {
        Some(tag) if tag.key() == "ADVOCATE r1" => Reply::tool_use(
            "Bash",
            serde_json::json!({
                "command": format!("anvil ask \"{question}\""),
                "description": "Ask the human",
            }),
        ),
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

/// Runs a 1-round debate on `question` through the Stop hook in `session`: `texts` are the
/// advocate's, the critic's and the synthesis. Returns the debate's id.
pub fn one_round_debate(
    project: &Project,
    session: &str,
    question: &str,
    texts: [&str; 3],
) -> String {
    let started = project.start(&[question, "--rounds", "1", "--session", session]);
    for text in texts {
        project
            .hook(&serde_json::json!({
                "session_id": session, "cwd": project.path(), "hook_event_name": "Stop",
                "stop_hook_active": true, "last_assistant_message": text,
            }))
            .ok();
    }
    started.debate
}

/// `git ARGS` in `dir`, isolated from the user's configuration; panics unless it succeeds.
pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env_remove("GIT_DIR")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The key of the phase a hook's block answer hands out (`CRITIC r1`, `SYNTHESIS`), or what
/// the hook said instead.
pub fn next_key(run: &Run) -> String {
    let Some(v) = run.json() else {
        return format!("(silent) {}", run.describe());
    };
    match v["reason"].as_str().and_then(find_tag) {
        Some(tag) => tag.key(),
        None => format!("(message) {v}"),
    }
}

/// The hook's `systemMessage`, or nothing.
pub fn system_message(run: &Run) -> String {
    run.json()
        .and_then(|v| v["systemMessage"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The phases of a debate's main line, oldest first.
pub fn phases(project: &Project, debate: &str) -> Vec<String> {
    project
        .commits(debate)
        .iter()
        .map(|c| c.phase().to_owned())
        .collect()
}
