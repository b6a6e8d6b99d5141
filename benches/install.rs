//! anvil installed without Rust, measured: `cargo bench --bench install`.
//!
//! From the npm tarballs that `cargo xtask dist` wrote (`$ANVIL_DIST_DIR`, else target/dist,
//! built here with the `dist` profile when it holds none), served by the tests' static npm
//! registry on 127.0.0.1, it prints:
//! 1. each package's size, packed and as installed on disk;
//! 2. `npm install -g anvil-debate` into a fresh prefix (median of 5);
//! 3. the Claude Code plugin (the pinned `claude`): `claude plugin marketplace add` and
//!    `claude plugin install` from the registry, then `/anvil:anvil` in a project that never
//!    saw anvil, until its first phase is recorded (median of 3; target under 60 s);
//! 4. the Stop hook's no-debate path as installed, against a bare process start (`true`),
//!    samples interleaved: the `anvil-hook` npm put on PATH, the plugin's own, and the node
//!    launcher left where install scripts were blocked (target: native at most 1.5x `true`).

#[path = "../tests/it/support/mod.rs"]
mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::anvil::{phase_text, turn_tag};
use support::claude::{Claude, ClaudeHome, claude_bin, new_session_id};
use support::model_server::{ModelServer, Reply, Turn};
use support::npm_registry::Registry;

const PACKAGE: &str = "anvil-debate";
const VERSION: &str = env!("CARGO_PKG_VERSION");
const SAMPLES: usize = 101;

fn main() {
    let dist = dist();
    let registry = Registry::start(&dist);
    let work = tempfile::tempdir().unwrap();
    let path = system_path();

    // 2. npm install -g, five times into fresh prefixes.
    let mut installs = Vec::new();
    let mut prefix = PathBuf::new();
    for i in 0..5 {
        let home = work.path().join(format!("npm-{i}"));
        let started = Instant::now();
        prefix = npm_install(&home, &registry, &path, &[]);
        installs.push(started.elapsed());
    }
    let launcher_prefix = npm_install(
        &work.path().join("npm-blocked"),
        &registry,
        &path,
        &["--ignore-scripts"],
    );

    // 3. The plugin, three times, each in a fresh HOME and a new project.
    let mut plugin_times = Vec::new();
    let mut plugin_homes = Vec::new();
    for _ in 0..3 {
        let (home, elapsed) = plugin_to_first_phase(&registry, &path);
        plugin_times.push(elapsed);
        plugin_homes.push(home);
    }
    let plugin_root = plugin_root(&plugin_homes[0]);

    // 4. The idle Stop hook of each layout, against `true`.
    let project = work.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let init = Command::new(prefix.join("bin/anvil"))
        .arg("init")
        .current_dir(&project)
        .output()
        .unwrap();
    assert!(init.status.success());
    let input = serde_json::json!({
        "session_id": new_session_id(), "cwd": project, "hook_event_name": "Stop",
        "last_assistant_message": "Nothing to do with anvil.",
    })
    .to_string();
    let bare_true = which("true");
    let npm_hook = prefix.join("bin/anvil-hook");
    let plugin_hook = plugin_root.join("bin/anvil-hook");
    let launcher_hook = launcher_prefix.join("bin/anvil-hook");
    let [bare, npm, plugin, launcher] = side_by_side([
        &mut || timed(&project, &bare_true, &[], b"", &path),
        &mut || timed(&project, &npm_hook, &["stop"], input.as_bytes(), &path),
        &mut || timed(&project, &plugin_hook, &["stop"], input.as_bytes(), &path),
        &mut || timed(&project, &launcher_hook, &["stop"], input.as_bytes(), &path),
    ]);

    println!("anvil installed from npm tarballs ({})", dist.display());
    // npm nests a global package's dependencies in its own node_modules; the main package's
    // bin/ holds hard links to the platform package's binaries (no space of their own).
    let main_dir = prefix.join(format!("lib/node_modules/{PACKAGE}"));
    let platform_dir = main_dir.join(format!("node_modules/{PACKAGE}-{}", platform()));
    let packed = |package: &str| {
        std::fs::metadata(dist.join(format!("{package}-{VERSION}.tgz")))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    println!("  packages: packed, installed on disk (du)");
    println!(
        "    {PACKAGE}-{:<15} {:>10.1} KB packed {:>10.1} KB installed",
        platform(),
        kb(packed(&format!("{PACKAGE}-{}", platform()))),
        kb(disk_usage(&platform_dir, &[]))
    );
    println!(
        "    {PACKAGE:<28} {:>10.1} KB packed {:>10.1} KB installed (without node_modules and the linked bin/)",
        kb(packed(PACKAGE)),
        kb(disk_usage(&main_dir, &["node_modules", "bin"]))
    );
    println!(
        "    all of it, as installed by npm install -g           {:>10.1} KB",
        kb(disk_usage(&main_dir, &[]))
    );
    println!(
        "  npm install -g {PACKAGE} (local registry), median of 5: {:>8.0} ms",
        ms(median(installs))
    );
    println!(
        "  plugin install to first recorded phase, median of 3:   {:>8.0} ms  (target < 60000 ms; {:?})",
        ms(median(plugin_times.clone())),
        plugin_times
            .iter()
            .map(|d| ms(*d).round())
            .collect::<Vec<_>>()
    );
    println!(
        "  Stop hook with no debate for this session, median of {SAMPLES} (samples interleaved):"
    );
    println!(
        "    true (a bare process start)          {:>8.3} ms",
        ms(bare)
    );
    for (name, time) in [
        ("anvil-hook from npm install -g", npm),
        ("anvil-hook in the plugin", plugin),
        ("node launcher (scripts blocked)", launcher),
    ] {
        println!(
            "    {name:<36} {:>8.3} ms  ({:.2}x true{})",
            ms(time),
            time.as_secs_f64() / bare.as_secs_f64(),
            if name.starts_with("node") {
                ""
            } else {
                "; target <= 1.5x"
            }
        );
    }
}

/// This machine's npm platform: `linux-x64`.
fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        os => os,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        arch => arch,
    };
    format!("{os}-{cpu}")
}

fn dist() -> PathBuf {
    if let Some(dir) = std::env::var_os("ANVIL_DIST_DIR") {
        return PathBuf::from(dir);
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = repo.join("target/dist");
    if !dir.join(format!("{PACKAGE}-{VERSION}.tgz")).is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(repo)
            .args(["xtask", "dist"])
            .arg(&dir)
            .status()
            .expect("cargo xtask dist");
        assert!(status.success(), "cargo xtask dist failed");
    }
    dir
}

/// node's folder and the system's: no anvil, no cargo.
fn system_path() -> std::ffi::OsString {
    let node = PathBuf::from(which("node"));
    let mut dirs = vec![node.parent().unwrap().to_owned()];
    dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    std::env::join_paths(dirs).unwrap()
}

/// `npm install -g anvil-debate EXTRA` as a fresh user in `home`; the prefix.
fn npm_install(
    home: &Path,
    registry: &Registry,
    path: &std::ffi::OsStr,
    extra: &[&str],
) -> PathBuf {
    std::fs::create_dir_all(home).unwrap();
    std::fs::write(
        home.join(".npmrc"),
        format!("registry={}\n", registry.url()),
    )
    .unwrap();
    let prefix = home.join("prefix");
    let out = Command::new("npm")
        .args(["install", "-g", "--no-fund", "--no-audit", "--prefix"])
        .arg(&prefix)
        .args(extra)
        .arg(PACKAGE)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .current_dir(home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    prefix
}

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello"),
    }
}

/// Adds the marketplace, installs the plugin, runs `/anvil:anvil` in a new project; the time
/// from the first command to the first phase in the record.
fn plugin_to_first_phase(registry: &Registry, path: &std::ffi::OsStr) -> (ClaudeHome, Duration) {
    let home = ClaudeHome::new();
    std::fs::write(
        home.path().join(".npmrc"),
        format!("registry={}\n", registry.url()),
    )
    .unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut marketplace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".claude-plugin/marketplace.json")).unwrap(),
    )
    .unwrap();
    marketplace["plugins"][0]["source"]["registry"] = registry.url().into();
    let market = home.path().join("market");
    std::fs::create_dir_all(market.join(".claude-plugin")).unwrap();
    std::fs::write(
        market.join(".claude-plugin/marketplace.json"),
        marketplace.to_string(),
    )
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ModelServer::start(debater);

    let started = Instant::now();
    for args in [
        vec!["plugin", "marketplace", "add", market.to_str().unwrap()],
        vec!["plugin", "install", "anvil@anvil"],
    ] {
        let out = Command::new(claude_bin())
            .args(&args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", home.path())
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "claude {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut running = Claude::new(
        &server,
        project.path(),
        "/anvil:anvil \"Should we install from npm?\" --rounds 1",
    )
    .home(&home)
    .exact_path(path)
    .session_id(new_session_id())
    .timeout(Duration::from_secs(120))
    .spawn();
    let record = project.path().join(".anvil/record");
    let elapsed = loop {
        let count = Command::new("git")
            .arg("--git-dir")
            .arg(&record)
            .args(["rev-list", "--all", "--count"])
            .stderr(Stdio::null())
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or(0);
        // The debate's start, then its first phase.
        if count >= 2 {
            break started.elapsed();
        }
        assert!(
            running.is_running(),
            "claude ended before the first phase was recorded"
        );
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "no phase recorded in 180 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    running.wait().assert_success();
    (home, elapsed)
}

fn plugin_root(home: &ClaudeHome) -> PathBuf {
    let listed: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".claude/plugins/installed_plugins.json"))
            .unwrap(),
    )
    .unwrap();
    PathBuf::from(
        listed["plugins"]["anvil@anvil"][0]["installPath"]
            .as_str()
            .unwrap(),
    )
}

fn which(name: &str) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} not on PATH"))
        .display()
        .to_string()
}

/// Bytes the files under `dir` take on disk, as `du` counts them (a hard-linked file once),
/// leaving out the entries named `exclude`.
fn disk_usage(dir: &Path, exclude: &[&str]) -> u64 {
    let mut du = Command::new("du");
    du.arg("-sk");
    for name in exclude {
        du.arg(format!("--exclude={name}"));
    }
    let out = du.arg(dir).output().unwrap();
    assert!(out.status.success(), "du {}", dir.display());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .and_then(|k| k.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

fn side_by_side<const N: usize>(mut runs: [&mut dyn FnMut() -> Duration; N]) -> [Duration; N] {
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(SAMPLES));
    for _ in 0..SAMPLES {
        for (run, times) in runs.iter_mut().zip(times.iter_mut()) {
            times.push(run());
        }
    }
    times.map(median)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn timed(
    dir: &Path,
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
    stdin: &[u8],
    path: &std::ffi::OsStr,
) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    assert!(out.status.success() && out.stdout.is_empty());
    elapsed
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn kb(bytes: u64) -> f64 {
    bytes as f64 / 1e3
}
