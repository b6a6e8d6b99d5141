//! anvil without Rust: the npm packages `cargo xtask dist` writes, served by a static npm
//! registry on 127.0.0.1 and installed as a user would, on a PATH that holds neither anvil nor
//! cargo: by `npm install -g` into a fresh prefix (with and without install scripts), and by the
//! real Claude Code as a plugin whose marketplace names the npm package.
//!
//! The tarballs are those in `$ANVIL_DIST_DIR` (CI builds them once, with the release profile,
//! before the tests), else the tests run `cargo xtask dist` themselves into target/it-dist.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use serde_json::Value;

use crate::both_clients;
use crate::support::anvil::{phase_text, turn_tag};
use crate::support::claude::{Claude, ClaudeHome, Client, claude_bin, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};
use crate::support::npm_registry::Registry;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const PACKAGE: &str = "anvil-debate";
/// What the tests build when CI did not: the shipped binaries without the link-time
/// optimisation that makes a release build take minutes.
const LOCAL_PROFILE: &str = "dist-check";

/// The npm package of this machine's binaries.
fn platform_package() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        os => os,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        arch => arch,
    };
    format!("{PACKAGE}-{os}-{cpu}")
}

/// The folder of npm tarballs under test, built once per run when CI did not build it.
fn dist() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let dir = match std::env::var_os("ANVIL_DIST_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => {
                let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
                let out = repo.join("target/it-dist");
                let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
                let status = Command::new(cargo)
                    .current_dir(repo)
                    .args(["xtask", "dist", "--profile", LOCAL_PROFILE])
                    .arg(&out)
                    .status()
                    .expect("run cargo xtask dist");
                assert!(status.success(), "cargo xtask dist failed");
                out
            }
        };
        for package in [PACKAGE.to_owned(), platform_package()] {
            let tarball = dir.join(format!("{package}-{VERSION}.tgz"));
            assert!(
                tarball.is_file(),
                "{} is missing: ANVIL_DIST_DIR must hold what `cargo xtask dist` writes",
                tarball.display()
            );
        }
        dir
    })
}

/// A PATH with node, npm and the system's tools, and neither anvil nor cargo: a machine where
/// nobody installed Rust. Fails if the system's own folders hold either.
fn clean_path() -> OsString {
    let node = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
        .expect("node is needed (npm runs on it)");
    let mut dirs: Vec<PathBuf> = vec![node.parent().unwrap().to_owned()];
    for dir in ["/usr/local/bin", "/usr/bin", "/bin"] {
        if !dirs.iter().any(|d| d == Path::new(dir)) {
            dirs.push(dir.into());
        }
    }
    for dir in &dirs {
        for program in ["anvil", "anvil-hook", "cargo"] {
            assert!(
                !dir.join(program).exists(),
                "{} exists: the test needs a PATH without anvil and cargo",
                dir.join(program).display()
            );
        }
    }
    std::env::join_paths(dirs).unwrap()
}

/// A fresh user for npm: its own HOME, cache and config, whose registry is `registry`.
struct NpmUser {
    home: tempfile::TempDir,
}

impl NpmUser {
    fn new(registry: &Registry) -> NpmUser {
        let home = tempfile::Builder::new()
            .prefix("anvil-npm-home-")
            .tempdir()
            .unwrap();
        std::fs::write(
            home.path().join(".npmrc"),
            format!(
                "registry={}\nfund=false\naudit=false\nupdate-notifier=false\n",
                registry.url()
            ),
        )
        .unwrap();
        NpmUser { home }
    }

    fn prefix(&self) -> PathBuf {
        self.home.path().join("prefix")
    }

    /// `PROGRAM ARGS` as this user, with `extra` first on the clean PATH.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>, extra: Option<&Path>) -> Command {
        let mut path: Vec<PathBuf> = extra.into_iter().map(Path::to_owned).collect();
        path.extend(std::env::split_paths(&clean_path()));
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::join_paths(path).unwrap())
            .env("HOME", self.home.path())
            .env("LANG", "C.UTF-8")
            .current_dir(self.home.path())
            .stdin(Stdio::null());
        command
    }

    fn npm(&self, args: &[&str]) -> Output {
        let out = self
            .command("npm", None)
            .args(args)
            .output()
            .expect("run npm");
        assert!(
            out.status.success(),
            "npm {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// `npm install -g anvil-debate` into a fresh prefix, with `extra` arguments.
    fn install_globally(&self, extra: &[&str]) {
        let prefix = self.prefix();
        let mut args = vec!["install", "-g", "--prefix", prefix.to_str().unwrap()];
        args.extend(extra);
        args.push(PACKAGE);
        self.npm(&args);
    }

    /// Runs an installed program (by name, from the prefix's bin on PATH) in `dir`.
    fn run(&self, dir: &Path, program: &str, args: &[&str], stdin: &str) -> Output {
        use std::io::Write;
        let bin = self.prefix().join("bin");
        let mut child = self
            .command(program, Some(&bin))
            .current_dir(dir)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("run {program}: {e}"));
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                // `pid (name) state ppid …`: the name may hold spaces, so read after its `)`.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// Is `pid` running (neither gone nor a zombie waiting to be reaped)?
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// What `found` finds within 30 seconds, or a failure naming `what`.
fn wait_for<T>(mut found: impl FnMut() -> Option<T>, what: &str) -> T {
    let began = std::time::Instant::now();
    loop {
        if let Some(it) = found() {
            return it;
        }
        assert!(
            began.elapsed() < std::time::Duration::from_secs(30),
            "waited in vain for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Is `file` (through any symlink) a native executable (ELF, Mach-O)? A launcher is a script.
fn is_native(file: &Path) -> bool {
    let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    bytes.starts_with(b"\x7fELF")
        || bytes.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
        || bytes.starts_with(&[0xca, 0xfe, 0xba, 0xbe])
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The idle Stop hook: a session that drives no debate stops as it would without anvil.
fn assert_idle_stop(user: &NpmUser, project: &Path) {
    let input = serde_json::json!({
        "session_id": new_session_id(), "cwd": project, "hook_event_name": "Stop",
    });
    let out = user.run(project, "anvil-hook", &["stop"], &input.to_string());
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{}", text(&out));
}

#[test]
fn npm_install_g_gives_anvil_and_a_native_anvil_hook() {
    let registry = Registry::start(dist());
    let user = NpmUser::new(&registry);
    user.install_globally(&[]);
    assert!(
        registry.served_tarball_of(&platform_package()),
        "{:?}",
        registry.requests()
    );

    let bin = user.prefix().join("bin");
    for program in ["anvil", "anvil-hook"] {
        assert!(
            is_native(&bin.join(program)),
            "{program} on PATH is not the native program"
        );
    }
    let project = user.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let version = user.run(&project, "anvil", &["--version"], "");
    assert!(
        String::from_utf8_lossy(&version.stdout).contains(VERSION),
        "{}",
        text(&version)
    );
    let init = user.run(&project, "anvil", &["init"], "");
    assert!(init.status.success(), "{}", text(&init));
    assert_idle_stop(&user, &project);
    let doctor = user.run(&project, "anvil", &["doctor"], "");
    assert!(
        !text(&doctor).contains("node launcher"),
        "{}",
        text(&doctor)
    );
}

#[test]
fn with_install_scripts_blocked_anvil_runs_through_its_launcher_and_doctor_says_how_to_fix_it() {
    let registry = Registry::start(dist());
    let user = NpmUser::new(&registry);
    user.install_globally(&["--ignore-scripts"]);
    let bin = user.prefix().join("bin");
    assert!(!is_native(&bin.join("anvil-hook")), "no script ran");

    let project = user.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let version = user.run(&project, "anvil", &["--version"], "");
    assert!(
        String::from_utf8_lossy(&version.stdout).contains(VERSION),
        "{}",
        text(&version)
    );
    let init = user.run(&project, "anvil", &["init"], "");
    assert!(init.status.success(), "{}", text(&init));
    assert_idle_stop(&user, &project);
    // A failing command's status comes through the launcher.
    let missing = user.run(&project, "anvil", &["show", "no-such-debate"], "");
    assert_eq!(missing.status.code(), Some(1), "{}", text(&missing));
    // A launcher killed outright (SIGKILL, as a hook's timeout kills it) takes its native
    // program with it: the program asked the kernel to end with it (anvil_core::launcher).
    let mut launcher = user
        .command("anvil-hook", Some(&bin))
        .current_dir(&project)
        .arg("stop")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Its stdin stays open: the hook waits for its input, as long as the launcher lives.
    let _input = launcher.stdin.take();
    let native = wait_for(
        || children_of(launcher.id()).into_iter().next(),
        "the native hook",
    );
    launcher.kill().unwrap();
    launcher.wait().unwrap();
    wait_for(
        || (!alive(native)).then_some(()),
        "the native hook to end with its launcher",
    );

    let doctor = user.run(&project, "anvil", &["doctor", "--json"], "");
    let report: Value =
        serde_json::from_slice(&doctor.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&doctor)));
    let native = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "native")
        .unwrap_or_else(|| panic!("no finding about the launcher: {report:#}"));
    assert_eq!(native["level"], "warn", "{native:#}");
    let hint = native["hint"].as_str().unwrap();
    assert!(hint.contains("npm rebuild -g anvil-debate"), "{hint}");

    // What the hint says works.
    let prefix = user.prefix();
    user.npm(&[
        "rebuild",
        "-g",
        "--prefix",
        prefix.to_str().unwrap(),
        PACKAGE,
    ]);
    assert!(is_native(&bin.join("anvil-hook")), "npm rebuild placed it");
    assert_idle_stop(&user, &project);
}

/// The package as published passes Claude Code's own plugin validator.
#[test]
fn claude_plugin_validate_accepts_the_published_package() {
    let unpacked = tempfile::tempdir().unwrap();
    let tarball = dist().join(format!("{PACKAGE}-{VERSION}.tgz"));
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .unwrap();
    assert!(status.success());
    let package = unpacked.path().join("package");
    let home = ClaudeHome::new();
    let out = claude_cli(
        &claude_bin(),
        &home,
        &["plugin", "validate", package.to_str().unwrap()],
    );
    assert!(out.contains("Validation passed"), "{out}");
    // Nor anything the plugin directory would refuse (it only warns of the missing icon).
    assert!(!out.contains('✘'), "{out}");
    let hooks = std::fs::read_to_string(package.join("hooks/hooks.json")).unwrap();
    assert!(
        hooks.contains("${CLAUDE_PLUGIN_ROOT}/bin/anvil-hook"),
        "{hooks}"
    );
}

/// `claude ARGS` with `home` as HOME and the clean PATH; stdout and stderr, after asserting
/// that it succeeded.
fn claude_cli(claude: &Path, home: &ClaudeHome, args: &[&str]) -> String {
    let out = Command::new(claude)
        .args(args)
        .env_clear()
        .env("PATH", clean_path())
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run claude");
    let text = text(&out);
    assert!(out.status.success(), "claude {args:?}: {text}");
    text
}

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

/// The repository's marketplace, as published, with the plugin's npm registry set to
/// `registry`.
fn marketplace_with(registry: &Registry) -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut marketplace: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".claude-plugin/marketplace.json")).unwrap(),
    )
    .unwrap();
    let source = &mut marketplace["plugins"][0]["source"];
    assert_eq!(source["source"], "npm", "{source}");
    assert_eq!(source["package"], PACKAGE, "{source}");
    assert_eq!(source["version"], VERSION, "{source}");
    source["registry"] = Value::from(registry.url());
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".claude-plugin")).unwrap();
    std::fs::write(
        dir.path().join(".claude-plugin/marketplace.json"),
        serde_json::to_string_pretty(&marketplace).unwrap(),
    )
    .unwrap();
    dir
}

/// Where Claude Code installed the plugin `anvil@anvil` (its `${CLAUDE_PLUGIN_ROOT}`).
fn plugin_root(home: &ClaudeHome) -> PathBuf {
    let listed: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".claude/plugins/installed_plugins.json"))
            .expect("installed_plugins.json"),
    )
    .unwrap();
    PathBuf::from(
        listed["plugins"]["anvil@anvil"][0]["installPath"]
            .as_str()
            .unwrap_or_else(|| panic!("anvil@anvil not installed: {listed:#}")),
    )
}

/// A user with nothing but Claude Code and node adds the marketplace, installs the plugin from
/// the npm registry and runs `/anvil:anvil` in a project that never saw anvil: `.anvil/` is
/// created and the debate runs to a recorded synthesis. Returns the user's HOME and the
/// plugin's root in it.
fn plugin_from_npm_runs_a_debate(client: Client) -> (ClaudeHome, PathBuf) {
    let claude = &client.bin();
    let registry = Registry::start(dist());
    let home = ClaudeHome::new();
    // Claude Code takes an http registry only when it is the user's own default.
    std::fs::write(
        home.path().join(".npmrc"),
        format!("registry={}\n", registry.url()),
    )
    .unwrap();
    let marketplace = marketplace_with(&registry);
    let started = Instant::now();
    claude_cli(
        claude,
        &home,
        &[
            "plugin",
            "marketplace",
            "add",
            marketplace.path().to_str().unwrap(),
        ],
    );
    let installed = claude_cli(claude, &home, &["plugin", "install", "anvil@anvil"]);
    assert!(installed.contains("Successfully installed"), "{installed}");
    let install_time = started.elapsed();
    assert!(
        registry.served_tarball_of(PACKAGE),
        "{:?}",
        registry.requests()
    );
    let root = plugin_root(&home);
    assert!(root.join("bin/anvil-hook").is_file(), "{}", root.display());

    let project = tempfile::tempdir().unwrap();
    let server = ModelServer::start(debater);
    let out = Claude::new(
        &server,
        project.path(),
        "/anvil:anvil \"Should we install from npm?\" --rounds 1",
    )
    .client(client)
    .home(&home)
    .exact_path(clean_path())
    .session_id(new_session_id())
    .timeout(std::time::Duration::from_secs(120))
    .run();
    out.assert_success();
    let keys: Vec<String> = server
        .main_turns()
        .iter()
        .filter_map(|t| turn_tag(t).map(|t| t.key()))
        .collect();
    assert_eq!(
        keys,
        ["ADVOCATE r1", "CRITIC r1", "SYNTHESIS"],
        "{}",
        out.describe()
    );
    eprintln!(
        "plugin install took {install_time:?}; install to synthesis {:?}",
        started.elapsed()
    );

    let home_dir = anvil_core::home::Home::find(project.path()).expect(".anvil created");
    assert_eq!(home_dir.root(), project.path().join(".anvil"));
    let lines = home_dir.live_lines().unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let state = anvil_core::model::state::State::load(&home_dir.state_path(&lines[0])).unwrap();
    assert_eq!(state.setup.question, "Should we install from npm?");
    assert_eq!(state.progress.status.name(), "done");
    let log = Command::new("git")
        .arg("--git-dir")
        .arg(home_dir.record_dir())
        .args(["log", "--format=%s", "--all"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.stdout).lines().count(),
        4,
        "start and three phases recorded: {}",
        text(&log)
    );
    assert!(
        !project.path().join(".claude").exists(),
        "nothing installed in the project"
    );
    // The person was told that .anvil/ was made (the hook's message, in the transcript).
    let transcript = std::fs::read_to_string(out.transcript().expect("a transcript")).unwrap();
    assert!(
        transcript.contains("anvil: created"),
        "no word of .anvil/ being created in the transcript"
    );

    // `anvil doctor`, run from the plugin, knows the layout.
    let doctor = Command::new(root.join("bin/anvil"))
        .args(["doctor", "--json"])
        .current_dir(project.path())
        .env_clear()
        .env("PATH", clean_path())
        .env("HOME", home.path())
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_slice(&doctor.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&doctor)));
    let levels = |check: &str| -> Vec<String> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["check"] == check)
            .map(|f| f["level"].as_str().unwrap().to_owned())
            .collect()
    };
    for check in [
        "plugin",
        "stop-hook",
        "prompt-expansion-hook",
        "mcp",
        "native",
    ] {
        assert_eq!(levels(check), ["ok"], "{check}: {report:#}");
    }
    assert!(levels("binaries").iter().all(|l| l == "ok"), "{report:#}");
    (home, root)
}

both_clients!(claude_code_installs_the_plugin_from_npm_and_debates_in_a_new_project);
/// Claude Code 2.1.19x installs an npm plugin with `npm install` (install scripts run): the
/// postinstall puts the native programs in the plugin's bin/ at once. 2.1.33x unpacks the
/// package with scripts off and installs the dependencies its lockfile (the shrinkwrap) pins
/// with `npm ci --ignore-scripts`: the platform package lands in the plugin's node_modules, and
/// the first hook of the session puts the native programs in bin/.
fn claude_code_installs_the_plugin_from_npm_and_debates_in_a_new_project(client: Client) {
    let (_home, root) = plugin_from_npm_runs_a_debate(client);
    if client == Client::Newest {
        assert!(
            root.join("node_modules").join(platform_package()).is_dir(),
            "the platform package is in the plugin's node_modules"
        );
    }
    assert!(is_native(&root.join("bin/anvil-hook")));
    assert!(is_native(&root.join("bin/anvil")));
}
