//! Running the real Claude Code CLI (`claude -p`) hermetically against a [`ModelServer`].
//!
//! Two clients are pinned in `package.json`, and a test chooses one with [`Client`]: the
//! oldest anvil supports (`@anthropic-ai/claude-code`, 2.1.197) and the newest the registry
//! served when it was last bumped (the alias `claude-code-newest`, 2.1.332). Both packages
//! name their binary `claude`, so `node_modules/.bin/claude` is whichever npm linked last: the
//! tests never use it, only each package's own `bin/claude.exe`. `$ANVIL_CLAUDE_BIN` (oldest)
//! and `$ANVIL_CLAUDE_NEWEST_BIN` point elsewhere. A missing client fails the test (it never
//! skips) and says how to install it.
//!
//! Each run gets a clean environment: `PATH` (with any [`Claude::path_prepend`] dirs), a temporary
//! `HOME` (a [`ClaudeHome`]), `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY=test`,
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, plus the test's own variables.
//!
//! The working directory is UNTRUSTED, as in every CI run and every fresh checkout: Claude Code
//! then ignores the project's `permissions.allow` ("this workspace has not been trusted"), so
//! what a test's Claude may run must come from the command line or `--settings`, exactly as for
//! a user. [`Claude::trusted`] (or [`ClaudeHome::trust`]) opts in to the trusted case, for the
//! tests that check it.
//!
//! [`ModelServer`]: super::model_server::ModelServer

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::model_server::ModelServer;
use super::processes;

const INSTALL_HINT: &str = "the end-to-end tests need both pinned Claude Code CLIs. Install \
them at the repository root with `npm install` (package.json pins them), or point \
ANVIL_CLAUDE_BIN (the oldest) and ANVIL_CLAUDE_NEWEST_BIN (the newest) at `claude` binaries";

/// A Claude Code the end-to-end tests run: each scenario that touches the client's behaviour
/// runs against both (see [`both_clients!`](crate::both_clients)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// The oldest Claude Code anvil supports: 2.1.197.
    Oldest,
    /// The newest the registry served at the last bump: 2.1.332.
    Newest,
}

impl Client {
    /// The version `package.json` pins (checked against `claude --version` by
    /// `model_server_selftest`).
    pub fn version(self) -> &'static str {
        match self {
            Client::Oldest => "2.1.197",
            Client::Newest => "2.1.332",
        }
    }

    /// The client's binary: its package's own `bin/claude.exe`, or the override.
    pub fn bin(self) -> PathBuf {
        let (var, package) = match self {
            Client::Oldest => ("ANVIL_CLAUDE_BIN", "@anthropic-ai/claude-code"),
            Client::Newest => ("ANVIL_CLAUDE_NEWEST_BIN", "claude-code-newest"),
        };
        if let Some(bin) = std::env::var_os(var) {
            let bin = PathBuf::from(bin);
            assert!(
                bin.is_file(),
                "{var}={} does not exist: {INSTALL_HINT}",
                bin.display()
            );
            return bin;
        }
        let local = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("node_modules")
            .join(package)
            .join("bin/claude.exe");
        assert!(
            local.is_file(),
            "Claude Code {} not found at {}: {INSTALL_HINT}",
            self.version(),
            local.display()
        );
        local
    }

    /// Does this client defer MCP tools behind `ToolSearch` (2.1.33x), rather than list them
    /// in each request (2.1.19x)?
    pub fn defers_mcp_tools(self) -> bool {
        self == Client::Newest
    }
}

/// The oldest pinned client's binary, for tests that do not depend on the client.
pub fn claude_bin() -> PathBuf {
    Client::Oldest.bin()
}

/// Runs each named scenario, a `fn NAME(client: Client)` beside it, against each pinned
/// client, as the tests `NAME::oldest` and `NAME::newest`.
#[macro_export]
macro_rules! both_clients {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[test]
            fn oldest() {
                super::$name($crate::support::claude::Client::Oldest)
            }
            #[test]
            fn newest() {
                super::$name($crate::support::claude::Client::Newest)
            }
        }
    )+};
}

/// A fresh, per-test `uuid`-shaped (version 4) session id.
pub fn new_session_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut bytes = [0u8; 16];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A temporary `HOME` for Claude Code; cheap to clone (shared), deleted with the last clone,
/// once nothing runs in it (see [`HomeDir`]).
#[derive(Clone)]
pub struct ClaudeHome {
    dir: Arc<HomeDir>,
}

/// The directory of a [`ClaudeHome`]. Before it is removed, every process still running with
/// it as its `HOME` (a Claude Code a test did not wait for, one that `anvil run` or `anvil
/// serve` started, a tmux pane) is killed and waited for: a Claude Code that outlives its
/// HOME writes its transcript into a directory nobody removes.
struct HomeDir(tempfile::TempDir);

impl Drop for HomeDir {
    fn drop(&mut self) {
        end_processes_with_home(self.0.path());
    }
}

/// Kills every process whose `HOME` is `home` until none is left (zombies are gone already:
/// only their parent has not reaped them); gives up after 10 seconds.
fn end_processes_with_home(home: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let var = [b"HOME=", home.as_os_str().as_bytes()].concat();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let living: Vec<u32> = processes::living()
            .into_iter()
            .filter(|p| p.has_env(|v| v == var))
            .map(|p| p.pid)
            .collect();
        if living.is_empty() || Instant::now() > deadline {
            return;
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--"])
            .args(living.iter().map(u32::to_string))
            .stderr(Stdio::null())
            .status();
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl ClaudeHome {
    pub fn new() -> ClaudeHome {
        let dir = tempfile::Builder::new()
            .prefix("anvil-claude-home-")
            .tempdir()
            .expect("create temporary HOME");
        std::fs::create_dir_all(dir.path().join(".claude")).expect("create HOME/.claude");
        let home = ClaudeHome {
            dir: Arc::new(HomeDir(dir)),
        };
        home.write_config(&json!({
            "hasCompletedOnboarding": true,
            "bypassPermissionsModeAccepted": true,
            "projects": {},
        }));
        home
    }

    pub fn path(&self) -> &Path {
        self.dir.0.path()
    }

    fn config_path(&self) -> PathBuf {
        self.path().join(".claude.json")
    }

    fn write_config(&self, config: &Value) {
        std::fs::write(
            self.config_path(),
            serde_json::to_string_pretty(config).unwrap(),
        )
        .expect("write HOME/.claude.json");
    }

    /// Marks `dir` as trusted (`projects[dir].hasTrustDialogAccepted`); without it Claude Code
    /// ignores a project's `permissions.allow` ("this workspace has not been trusted").
    pub fn trust(&self, dir: &Path) {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let mut config: Value = std::fs::read_to_string(self.config_path())
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_else(|| json!({}));
        if !config["projects"].is_object() {
            config["projects"] = json!({});
        }
        config["projects"][dir.to_string_lossy().as_ref()]["hasTrustDialogAccepted"] = json!(true);
        self.write_config(&config);
    }

    /// Writes the user-level `~/.claude/settings.json`.
    pub fn write_user_settings(&self, settings: &Value) {
        std::fs::write(
            self.path().join(".claude/settings.json"),
            serde_json::to_string_pretty(settings).unwrap(),
        )
        .expect("write ~/.claude/settings.json");
    }

    /// Every transcript (`~/.claude/projects/<dir>/<session>.jsonl`).
    pub fn transcripts(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let projects = self.path().join(".claude/projects");
        for project in std::fs::read_dir(projects).into_iter().flatten().flatten() {
            for file in std::fs::read_dir(project.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if file.path().extension().is_some_and(|e| e == "jsonl") {
                    out.push(file.path());
                }
            }
        }
        out.sort();
        out
    }

    /// The transcript of `session_id`, if written.
    pub fn transcript(&self, session_id: &str) -> Option<PathBuf> {
        self.transcripts()
            .into_iter()
            .find(|p| p.file_stem().is_some_and(|s| s == session_id))
    }
}

/// What a test leaves running in its HOME (here a shell that would write into it half a
/// minute later, as a Claude Code nobody waited for writes its transcript) is killed before
/// the HOME is removed.
#[test]
fn a_claude_home_ends_what_still_runs_in_it_before_it_goes() {
    let home = ClaudeHome::new();
    let dir = home.path().to_owned();
    let mut late = Command::new("sh")
        .args(["-c", "sleep 30; touch \"$HOME/late\""])
        .env("HOME", &dir)
        .spawn()
        .expect("run sh");
    drop(home);
    assert!(!dir.exists(), "{} is left", dir.display());
    let status = late.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

impl Default for ClaudeHome {
    fn default() -> Self {
        ClaudeHome::new()
    }
}

/// A `claude -p` invocation being built.
pub struct Claude {
    client: Client,
    cwd: PathBuf,
    base_url: String,
    home: ClaudeHome,
    prompt: Option<String>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    path_prepend: Vec<PathBuf>,
    exact_path: Option<std::ffi::OsString>,
    session_id: Option<String>,
    settings: Option<Value>,
    timeout: Duration,
    trusted: bool,
}

impl Claude {
    /// `claude -p PROMPT --output-format json` in `cwd`, talking to `server`, in a fresh HOME.
    pub fn new(server: &ModelServer, cwd: impl Into<PathBuf>, prompt: impl Into<String>) -> Claude {
        Claude {
            client: Client::Oldest,
            cwd: cwd.into(),
            base_url: server.base_url(),
            home: ClaudeHome::new(),
            prompt: Some(prompt.into()),
            args: Vec::new(),
            env: Vec::new(),
            path_prepend: Vec::new(),
            exact_path: None,
            session_id: None,
            settings: None,
            timeout: Duration::from_secs(60),
            trusted: false,
        }
    }

    /// Runs this client (the oldest pinned one unless told).
    pub fn client(mut self, client: Client) -> Claude {
        self.client = client;
        self
    }

    /// Marks the working directory as trusted in this run's HOME, as a user who accepted
    /// Claude Code's trust dialog has it: the project's `permissions.allow` then apply. Only
    /// for tests of the trusted case; every other run is untrusted.
    pub fn trusted(mut self) -> Claude {
        self.trusted = true;
        self
    }

    /// Uses (and shares) `home` instead of a fresh one, e.g. to resume a session.
    pub fn home(mut self, home: &ClaudeHome) -> Claude {
        self.home = home.clone();
        self
    }

    /// Extra command-line arguments (after `-p PROMPT --output-format json`).
    pub fn arg(mut self, arg: impl Into<String>) -> Claude {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Claude
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Claude {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Puts `dir` in front of `PATH` (e.g. the directory of the built `anvil` binary).
    pub fn path_prepend(mut self, dir: impl Into<PathBuf>) -> Claude {
        self.path_prepend.push(dir.into());
        self
    }

    /// Runs Claude with exactly this `PATH`: no built `anvil`, nothing of the test's own (a
    /// user's machine with anvil installed only as a plugin).
    pub fn exact_path(mut self, path: impl Into<std::ffi::OsString>) -> Claude {
        self.exact_path = Some(path.into());
        self
    }

    /// Passes `--session-id ID` (the hook's `session_id` then equals it).
    pub fn session_id(mut self, id: impl Into<String>) -> Claude {
        self.session_id = Some(id.into());
        self
    }

    /// Passes these settings with `--settings FILE` (merged over user and project settings).
    pub fn settings(mut self, settings: Value) -> Claude {
        self.settings = Some(settings);
        self
    }

    /// Kills the run after this long (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Claude {
        self.timeout = timeout;
        self
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(self.client.bin());
        cmd.current_dir(&self.cwd);
        if let Some(prompt) = &self.prompt {
            cmd.arg("-p").arg(prompt);
        }
        cmd.args(["--output-format", "json"]);
        if let Some(id) = &self.session_id {
            cmd.args(["--session-id", id]);
        }
        if let Some(settings) = &self.settings {
            let file = self
                .home
                .path()
                .join(format!("settings-{}.json", new_session_id()));
            std::fs::write(&file, serde_json::to_string_pretty(settings).unwrap())
                .expect("write --settings file");
            cmd.arg("--settings").arg(file);
        }
        cmd.args(&self.args);

        // What `anvil install` writes calls `anvil` and `anvil-hook` by name: the binaries under
        // test come first, as `cargo install` would put them on a user's PATH.
        let mut path: Vec<PathBuf> = self.path_prepend.clone();
        path.push(super::anvil::anvil_dir());
        if let Some(p) = std::env::var_os("PATH") {
            path.extend(std::env::split_paths(&p));
        }
        let path = match &self.exact_path {
            Some(exact) => exact.clone(),
            None => std::env::join_paths(path).expect("valid PATH"),
        };
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", self.home.path())
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .env("ANTHROPIC_API_KEY", "test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("LANG", "C.UTF-8")
            .env("TMPDIR", std::env::temp_dir());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        cmd
    }

    /// Starts Claude without waiting.
    pub fn spawn(self) -> RunningClaude {
        if self.trusted {
            self.home.trust(&self.cwd);
        }
        let mut child = self.command().spawn().unwrap_or_else(|e| {
            panic!(
                "cannot start {}: {e}; {INSTALL_HINT}",
                self.client.bin().display()
            )
        });
        let stdout = reader(child.stdout.take());
        let stderr = reader(child.stderr.take());
        RunningClaude {
            child,
            stdout,
            stderr,
            started: Instant::now(),
            timeout: self.timeout,
            home: self.home,
        }
    }

    /// Runs Claude to completion (or until the timeout, when it is killed).
    pub fn run(self) -> ClaudeOutput {
        self.spawn().wait()
    }
}

fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut out);
        }
        String::from_utf8_lossy(&out).into_owned()
    })
}

/// A Claude process started with [`Claude::spawn`] (in its own process group).
pub struct RunningClaude {
    child: Child,
    stdout: JoinHandle<String>,
    stderr: JoinHandle<String>,
    started: Instant,
    timeout: Duration,
    home: ClaudeHome,
}

impl RunningClaude {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn home(&self) -> &ClaudeHome {
        &self.home
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends `signal` (e.g. "TERM", "INT", "KILL") to Claude's whole process group (hooks too).
    pub fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg("--")
            .arg(format!("-{}", self.child.id()))
            .status();
    }

    /// Kills the process group and collects the output.
    pub fn kill(mut self) -> ClaudeOutput {
        self.signal("KILL");
        let status = self.child.wait().ok();
        self.finish(status, false)
    }

    /// Waits for exit; past the run's timeout the process group is killed and `timed_out` set.
    pub fn wait(mut self) -> ClaudeOutput {
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return self.finish(Some(status), false),
                Ok(None) if self.started.elapsed() >= self.timeout => {
                    self.signal("KILL");
                    let status = self.child.wait().ok();
                    return self.finish(status, true);
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => panic!("waiting for claude: {e}"),
            }
        }
    }

    fn finish(self, status: Option<ExitStatus>, timed_out: bool) -> ClaudeOutput {
        let elapsed = self.started.elapsed();
        let stdout = self.stdout.join().unwrap_or_default();
        let stderr = self.stderr.join().unwrap_or_default();
        let json = serde_json::from_str(stdout.trim()).ok();
        ClaudeOutput {
            status,
            timed_out,
            elapsed,
            stdout,
            stderr,
            json,
            home: self.home,
        }
    }
}

/// What a Claude run produced.
pub struct ClaudeOutput {
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    pub elapsed: Duration,
    pub stdout: String,
    pub stderr: String,
    /// stdout parsed as JSON (`--output-format json` gives one `{"type":"result",…}` object).
    pub json: Option<Value>,
    pub home: ClaudeHome,
}

impl ClaudeOutput {
    pub fn success(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }

    /// The exit code, or `None` when killed by a signal.
    pub fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    pub fn signal(&self) -> Option<i32> {
        self.status.and_then(|s| s.signal())
    }

    /// The final assistant text (`result`).
    pub fn result_text(&self) -> Option<&str> {
        self.json.as_ref()?["result"].as_str()
    }

    pub fn session_id(&self) -> Option<&str> {
        self.json.as_ref()?["session_id"].as_str()
    }

    pub fn num_turns(&self) -> Option<u64> {
        self.json.as_ref()?["num_turns"].as_u64()
    }

    /// The run's transcript, if Claude wrote one.
    pub fn transcript(&self) -> Option<PathBuf> {
        self.home.transcript(self.session_id()?)
    }

    /// A description for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "claude status={:?} timed_out={} elapsed={:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.timed_out, self.elapsed, self.stdout, self.stderr
        )
    }

    /// Panics with the full output unless Claude exited 0 within the timeout.
    pub fn assert_success(&self) -> &ClaudeOutput {
        assert!(self.success(), "claude failed: {}", self.describe());
        self
    }
}

/// What `anvil run` (or `anvil serve`, which starts it) needs in its environment so that the
/// headless `claude -p` it starts talks to `server` from `home`, a fresh untrusted HOME.
pub fn headless_env(
    server: &ModelServer,
    home: &ClaudeHome,
) -> Vec<(&'static str, std::ffi::OsString)> {
    headless_env_of(Client::Oldest, server, home)
}

/// [`headless_env`] for `client`.
pub fn headless_env_of(
    client: Client,
    server: &ModelServer,
    home: &ClaudeHome,
) -> Vec<(&'static str, std::ffi::OsString)> {
    vec![
        ("ANVIL_CLAUDE_BIN", client.bin().into()),
        ("HOME", home.path().into()),
        ("ANTHROPIC_BASE_URL", server.base_url().into()),
        ("ANTHROPIC_API_KEY", "test".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
    ]
}

/// `anvil ARGS` (e.g. `run …`) started with [`headless_env`] and every pipe open.
pub fn spawn_headless(
    project: &super::anvil::Project,
    args: &[&str],
    server: &ModelServer,
    home: &ClaudeHome,
) -> Child {
    spawn_headless_of(Client::Oldest, project, args, server, home)
}

/// [`spawn_headless`] with `client` as the `claude` that `anvil run` starts.
pub fn spawn_headless_of(
    client: Client,
    project: &super::anvil::Project,
    args: &[&str],
    server: &ModelServer,
    home: &ClaudeHome,
) -> Child {
    project
        .command(args)
        .envs(headless_env_of(client, server, home))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run anvil")
}
