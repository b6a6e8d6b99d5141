//! The other agents' CLIs — Codex CLI, Copilot CLI, Qwen Code, Gemini CLI, OpenCode — run for
//! real against the scripted [`ModelServer`], each configured in a temporary `HOME` the way a
//! person would configure it, and never logged in anywhere.
//!
//! The binaries are `node_modules/.bin/{codex,copilot,qwen,gemini,opencode}` at the repository
//! root (pinned in package.json, installed by `npm install`); a test fails, never skips, when
//! one is missing.
//!
//! [`AgentsHome`] is one temporary `HOME` that points all of them (and Claude Code) at one
//! server:
//! - Codex: `~/.codex/config.toml` with a `scripted` model provider (`wire_api =
//!   "responses"`, `env_key = "SCRIPTED_API_KEY"`). Codex keeps its sessions in
//!   `~/.codex/sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl`: `session_meta` (`cli_version`),
//!   `turn_context` (`model`), one `token_usage_record` per response (`usage`,
//!   `turn_token_usage`, `thread_token_usage`). `codex exec --json` prints
//!   `thread.started` (`thread_id`), `item.completed` (`agent_message` text,
//!   `command_execution`), `turn.completed` (`usage`, which after `codex exec resume` is the
//!   whole thread's, not the turn's). `--sandbox read-only` (the default of `codex exec`; `-c
//!   sandbox_mode="read-only"` for `exec resume`, which has no `--sandbox`) makes the project a
//!   read-only file system for its commands: a redirect fails with "Read-only file system".
//!   `codex exec` reads stdin when it is not a terminal ("Reading additional input from
//!   stdin..."): give it `/dev/null`. Its terminal UI (in tmux) first asks to trust the folder
//!   ("Trust this folder?", Enter) and then to review a new hook ("Hooks need review": `2`,
//!   Enter trusts them all); it reads MCP servers from a trusted project's
//!   `.codex/config.toml` too (`[mcp_servers.NAME]`, offered as a tool of `"type":
//!   "namespace"` named `mcp__NAME`, whose tools a `function_call` names by `name` with the
//!   `namespace` beside it).
//! - Copilot: the variables `COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_API_KEY`,
//!   `COPILOT_OFFLINE=true`, `COPILOT_AUTO_UPDATE=false`; its home is `~/.copilot`. A session
//!   is `~/.copilot/session-state/<id>/events.jsonl`: `session.start` (`copilotVersion`,
//!   `selectedModel`), then per turn `user.message`, `session.usage_record` per request
//!   (`model`, `inputTokens`, `outputTokens`, `cacheReadTokens`, `cacheWriteTokens`, `cost`,
//!   `duration`), `assistant.message`; a resumed session adds `session.resume`. `copilot -p P
//!   --allow-all-tools --output-format json` prints those events as JSONL, ending with
//!   `result` (`sessionId`, `exitCode`). `--session-id UUID` names a new session,
//!   `--resume=UUID` continues it. `--mode plan` blocks every change outside its session
//!   folder: `create` is refused ("Plan mode does not permit changes outside the session
//!   folder") and so is a shell command that would write. A prompt `-p "/NAME ARGS"` reaches
//!   the model as typed; a skill (`.github/skills/NAME/SKILL.md`) is loaded by the model's
//!   call of the `skill` tool (`{"skill": NAME}`), answered "Skill … loaded" and followed by a
//!   user message `<skill-context name="NAME">` holding its words. A trusted folder's
//!   `.github/mcp.json` (and `.mcp.json`) servers are offered as `SERVER-TOOL`. Its log,
//!   `~/.copilot/logs/process-*.log`, says "Loading repo hooks" and names each hook file it
//!   cannot read ("Invalid hook configuration in PATH").
//! - Qwen Code: `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `~/.qwen/settings.json`
//!   `{"security":{"auth":{"selectedType":"openai"}}}`. `qwen -p P -o json` prints one JSON
//!   array: `system` (`subtype: init`, `session_id`, `qwen_code_version`, `model`,
//!   `permission_mode`), `assistant` messages (each with `model` and `usage`: `input_tokens`,
//!   `output_tokens`, `cache_read_input_tokens`), `user` tool results, and `result`
//!   (`result` text, `duration_ms`, `is_error`; its `usage` adds the background memory
//!   request's tokens). `--session-id UUID` names a session, `--resume UUID` continues it
//!   (transcript `~/.qwen/projects/<slug>/chats/<id>.jsonl`). `--approval-mode plan` offers
//!   no writing tool and refuses one called anyway ("permission was declined"). A piped stdin
//!   is a prompt without `-p`. It inlines any `@path` of a prompt, from stdin too, unless
//!   written `\@` (which reaches the model as it is). A project's MCP server is "Pending
//!   approval" until `qwen mcp approve NAME` (kept in `~/.qwen/mcpApprovals.json`); its tools
//!   are deferred: the model finds them with `tool_search` (keywords, or `select:NAME`) and
//!   calls them with `tool_call` (`{"name", "arguments"}`).
//! - Gemini CLI 0.61.0: `GOOGLE_GEMINI_BASE_URL` (the server's root), `GEMINI_API_KEY` and
//!   `~/.gemini/settings.json` choosing `gemini-api-key`, with one attempt per request, no
//!   usage statistics and no auto-update. A piped stdin is a prompt without `-p`; it inlines
//!   any `@path` there too (`DEBATE@LINE` included) unless written `\@`. `-o json` prints one
//!   object: `session_id`, `response`, `stats.models.MODEL.tokens` (`prompt`, `cached`,
//!   `candidates`, `thoughts`, …). `--approval-mode plan` offers `read_file`, `glob`,
//!   `grep_search`, `list_directory`, `google_web_search`, a plan's `write_file` and `replace`
//!   (a `write_file` into the project is refused: "Tool execution denied by policy. You are in
//!   Plan Mode") and no `run_shell_command`. Before each turn's prompt it sends a
//!   `<session_context>` of its own (date, folders). Headless, it expands a custom command
//!   (`-p "/NAME ARGS"`, `.gemini/commands/NAME.toml`) but offers no `run_shell_command`
//!   unless `tools.allowed` names the command (`run_shell_command(anvil start)`), and no MCP
//!   tool (`mcp_SERVER_TOOL`) of a server not marked `trust: true`. Qwen Code is alike: it
//!   expands `.qwen/commands/NAME.md` headless, and offers `run_shell_command` once a rule of
//!   `permissions.allow` names it (`run_shell_command(anvil start *)`; `Bash(…)` does not).
//! - OpenCode 1.18.33: `~/.config/opencode/opencode.json` with a `scripted` provider
//!   (`@ai-sdk/openai-compatible`, `baseURL`, `apiKey` `{env:SCRIPTED_API_KEY}`, the models of
//!   [`OPENCODE_MODELS`]) and `model`; `OPENCODE_DISABLE_MODELS_FETCH`,
//!   `OPENCODE_DISABLE_AUTOUPDATE`. `User-Agent: opencode/…`. `opencode run --format json`
//!   prints `step_start`, `text` (`part.text`), `tool_use`, `step_finish` (`part.tokens`:
//!   `input` without the cached part, `output`, `reasoning`, `cache.read`, `cache.write`;
//!   `part.cost`), each with `sessionID` (`ses_…`); no event names the model. A message given
//!   as an argument reaches the model quoted (`"hello there"`); stdin stays as it is. With
//!   `OPENCODE_PERMISSION` denying edit and bash, the tools are not offered at all (a call to
//!   one is answered "Model tried to call unavailable tool 'bash'"); `--session=ses_…`
//!   resumes. A turn takes 6 to 30 s on a shared machine. Under `opencode serve`, `POST
//!   /session/ID/command` (`{"command", "arguments"}`) runs a command file and answers some
//!   30 s after the reply is done; the project's `opencode.json` `mcp` servers are offered as
//!   `SERVER_TOOL`, and OpenCode writes a `$schema` into that file when it lacks one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::model_server::ModelServer;

/// The API key every agent is given: Copilot masks each occurrence of its value in its
/// output, so it must be a string no reply contains.
pub const API_KEY: &str = "scripted-test-key-7d1f";

/// Which agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    Codex,
    Copilot,
    Qwen,
    Gemini,
    OpenCode,
}

impl Cli {
    pub fn name(self) -> &'static str {
        match self {
            Cli::Codex => "codex",
            Cli::Copilot => "copilot",
            Cli::Qwen => "qwen",
            Cli::Gemini => "gemini",
            Cli::OpenCode => "opencode",
        }
    }
}

/// The models OpenCode's `scripted` provider offers (OpenCode refuses a model its config does
/// not declare).
pub const OPENCODE_MODELS: &[&str] = &["opencode-default-model", "opencode-seat-model"];

/// `node_modules/.bin` at the repository root, where package.json's pinned CLIs are.
pub fn node_bin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/.bin")
}

/// The pinned binary of `cli`; panics with how to install it when it is missing.
pub fn bin(cli: Cli) -> PathBuf {
    let path = node_bin_dir().join(cli.name());
    assert!(
        path.is_file(),
        "{} not found: the end-to-end tests need the pinned agent CLIs; run `npm install` at \
         the repository root (package.json pins them)",
        path.display()
    );
    path
}

/// A temporary `HOME` in which Codex, Copilot, Qwen Code and Claude Code all talk to one
/// scripted server.
pub struct AgentsHome {
    dir: tempfile::TempDir,
    base_url: String,
}

impl AgentsHome {
    pub fn new(server: &ModelServer) -> AgentsHome {
        let dir = tempfile::Builder::new()
            .prefix("anvil-agents-home-")
            .tempdir()
            .expect("create a temporary HOME");
        let base_url = server.base_url();
        let home = dir.path();
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        std::fs::write(
            home.join(".codex/config.toml"),
            format!(
                "model_provider = \"scripted\"\nmodel = \"codex-default-model\"\n\n\
                 [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{base_url}/v1\"\n\
                 wire_api = \"responses\"\nenv_key = \"SCRIPTED_API_KEY\"\n"
            ),
        )
        .unwrap();
        std::fs::create_dir_all(home.join(".qwen")).unwrap();
        std::fs::write(
            home.join(".qwen/settings.json"),
            r#"{"security":{"auth":{"selectedType":"openai"}}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::write(
            home.join(".gemini/settings.json"),
            r#"{"security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"maxAttempts": 1, "enableAutoUpdate": false},
                "privacy": {"usageStatisticsEnabled": false}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(home.join(".config/opencode")).unwrap();
        let models: serde_json::Map<String, serde_json::Value> = OPENCODE_MODELS
            .iter()
            .map(|m| ((*m).to_owned(), serde_json::json!({})))
            .collect();
        std::fs::write(
            home.join(".config/opencode/opencode.json"),
            serde_json::json!({
                "provider": {"scripted": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "scripted",
                    "options": {"baseURL": format!("{base_url}/v1"),
                                "apiKey": "{env:SCRIPTED_API_KEY}"},
                    "models": models,
                }},
                "model": "scripted/opencode-default-model",
            })
            .to_string(),
        )
        .unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(
            home.join(".claude.json"),
            r#"{"hasCompletedOnboarding": true, "projects": {}}"#,
        )
        .unwrap();
        AgentsHome { dir, base_url }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The environment every agent needs, and `PATH` with the pinned CLIs first (and the
    /// anvil binaries before them).
    pub fn env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        let mut dirs = vec![super::anvil::anvil_dir(), node_bin_dir()];
        if let Some(path) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&path));
        }
        vec![
            ("HOME", self.path().into()),
            ("PATH", std::env::join_paths(dirs).unwrap()),
            ("SCRIPTED_API_KEY", API_KEY.into()),
            (
                "COPILOT_PROVIDER_BASE_URL",
                format!("{}/v1", self.base_url).into(),
            ),
            ("COPILOT_PROVIDER_API_KEY", API_KEY.into()),
            ("COPILOT_OFFLINE", "true".into()),
            ("COPILOT_AUTO_UPDATE", "false".into()),
            ("OPENAI_BASE_URL", format!("{}/v1", self.base_url).into()),
            ("OPENAI_API_KEY", API_KEY.into()),
            ("ANVIL_CLAUDE_BIN", super::claude::claude_bin().into()),
            ("ANTHROPIC_BASE_URL", self.base_url.clone().into()),
            ("ANTHROPIC_API_KEY", "test".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("GOOGLE_GEMINI_BASE_URL", self.base_url.clone().into()),
            ("GEMINI_API_KEY", API_KEY.into()),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ]
    }

    /// Codex's rollout files, oldest first.
    pub fn codex_rollouts(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut dirs = vec![self.path().join(".codex/sessions")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    found.push(path);
                }
            }
        }
        found.sort();
        found
    }

    /// Copilot's event log of session `id`.
    pub fn copilot_events(&self, id: &str) -> PathBuf {
        self.path()
            .join(".copilot/session-state")
            .join(id)
            .join("events.jsonl")
    }

    /// Qwen Code's chat logs.
    pub fn qwen_chats(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for project in std::fs::read_dir(self.path().join(".qwen/projects"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for chat in std::fs::read_dir(project.path().join("chats"))
                .into_iter()
                .flatten()
                .flatten()
            {
                found.push(chat.path());
            }
        }
        found
    }

    /// `cli ARGS` in `cwd`, stdin closed, killed after `timeout`: (exit code, stdout, stderr).
    pub fn run(&self, cli: Cli, cwd: &Path, args: &[&str], timeout: Duration) -> Output {
        self.run_env(cli, cwd, args, &[], timeout)
    }

    /// [`AgentsHome::run`] with `extra` variables set too.
    pub fn run_env(
        &self,
        cli: Cli,
        cwd: &Path,
        args: &[&str],
        extra: &[(&str, &str)],
        timeout: Duration,
    ) -> Output {
        let mut child = Command::new(bin(cli))
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .envs(self.env())
            .envs(extra.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", cli.name()));
        let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut s);
            s
        });
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut s);
            s
        });
        let deadline = std::time::Instant::now() + timeout;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if std::time::Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Output {
            code: status.and_then(|s| s.code()),
            timed_out: status.is_none(),
            stdout: reader.join().unwrap_or_default(),
            stderr: err_reader.join().unwrap_or_default(),
        }
    }
}

/// What one agent run printed.
pub struct Output {
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn describe(&self) -> String {
        format!(
            "exit {:?}{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code,
            if self.timed_out { " (timed out)" } else { "" },
            self.stdout,
            self.stderr
        )
    }

    /// Panics with the output unless the run exited 0.
    pub fn ok(self) -> Output {
        assert_eq!(self.code, Some(0), "{}", self.describe());
        self
    }

    /// stdout's lines parsed as JSON (JSONL output), skipping any that are not.
    pub fn jsonl(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// The lines of a JSONL file.
pub fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
