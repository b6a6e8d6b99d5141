//! `cargo xtask dist OUT`: release binaries in, npm tarballs out.
//!
//! Each platform's package holds its two binaries and declares its `os` and `cpu`, so npm
//! installs only the one that fits. The main package, `anvil-debate`, lists them all as
//! optional dependencies at the same version, carries the node launchers and the postinstall
//! (npm/anvil-debate/), the plugin files written by `anvil_core::claude::install::write_plugin`
//! (hooks and MCP server under `${CLAUDE_PLUGIN_ROOT}/bin`), and an `npm-shrinkwrap.json`:
//! Claude Code installs a plugin's dependencies only from a lockfile, and the shrinkwrap is the
//! one lockfile npm publishes. Versions come from the workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value, json};

use crate::platform::{PLATFORMS, Platform};

/// The main npm package; each platform's is `NAME-OS-CPU`.
pub const PACKAGE: &str = "anvil-debate";
const PROGRAMS: [&str; 2] = ["anvil", "anvil-hook"];

pub struct Options {
    pub out: PathBuf,
    pub targets: Vec<String>,
    pub profile: String,
    pub build: bool,
}

/// What `cargo metadata` says of the workspace.
struct Workspace {
    root: PathBuf,
    target_dir: PathBuf,
    version: String,
    description: String,
    license: String,
}

pub fn run(options: &Options) -> Result<(), String> {
    let workspace = workspace()?;
    let host = host_triple()?;
    let platforms = choose(&options.targets, &host)?;
    std::fs::create_dir_all(&options.out)
        .map_err(|e| format!("cannot create {}: {e}", options.out.display()))?;
    let out = options
        .out
        .canonicalize()
        .map_err(|e| format!("{}: {e}", options.out.display()))?;
    let stage = workspace.target_dir.join("dist-stage");
    remove_dir(&stage)?;

    let mut packed = Vec::new();
    for platform in &platforms {
        if options.build {
            build(&workspace, platform, &options.profile)?;
        }
        let dir = stage.join(platform.package(PACKAGE));
        platform_package(&workspace, platform, &options.profile, &dir)?;
        packed.push(pack(&dir, &out)?);
    }
    let dir = stage.join(PACKAGE);
    main_package(&workspace, &dir)?;
    packed.push(pack(&dir, &out)?);

    eprintln!("xtask: {} npm packages in {}", packed.len(), out.display());
    for p in &packed {
        eprintln!(
            "  {:<44} {:>9} packed {:>10} unpacked",
            p.filename,
            size(p.size),
            size(p.unpacked_size)
        );
    }
    let skipped: Vec<&str> = PLATFORMS
        .iter()
        .filter(|p| !platforms.contains(p))
        .map(|p| p.triple)
        .collect();
    if !skipped.is_empty() {
        eprintln!(
            "xtask: not built here (no Rust standard library or linker for them): {}",
            skipped.join(", ")
        );
    }
    Ok(())
}

fn size(bytes: u64) -> String {
    if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

fn workspace() -> Result<Workspace, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let meta: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let package = meta["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == PACKAGE))
        .ok_or_else(|| format!("no package {PACKAGE} in the workspace"))?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Ok(Workspace {
        root: PathBuf::from(text(&meta["workspace_root"])),
        target_dir: PathBuf::from(text(&meta["target_directory"])),
        version: text(&package["version"]),
        description: text(&package["description"]),
        license: text(&package["license"]),
    })
}

fn host_triple() -> Result<String, String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc -vV names no host".to_owned())
}

/// The platforms to build: those named, or this machine's and every other one it can build.
fn choose(named: &[String], host: &str) -> Result<Vec<Platform>, String> {
    let supported = || {
        PLATFORMS
            .iter()
            .map(|p| p.triple)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !named.is_empty() {
        return named
            .iter()
            .map(|t| {
                Platform::by_triple(t).ok_or_else(|| {
                    format!(
                        "anvil is not packaged for {t}; the platforms are {}",
                        supported()
                    )
                })
            })
            .collect();
    }
    if Platform::by_triple(host).is_none() {
        return Err(format!(
            "this machine ({host}) is not a platform anvil is packaged for ({}); name one with --target",
            supported()
        ));
    }
    Ok(PLATFORMS
        .into_iter()
        .filter(|p| p.buildable(host))
        .collect())
}

fn build(workspace: &Workspace, platform: &Platform, profile: &str) -> Result<(), String> {
    eprintln!("xtask: building {} ({profile})", platform.triple);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(&workspace.root).args([
        "build",
        "--locked",
        "--package",
        PACKAGE,
        "--profile",
        profile,
        "--target",
        platform.triple,
    ]);
    for program in PROGRAMS {
        command.args(["--bin", program]);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build for {} failed", platform.triple));
    }
    Ok(())
}

/// `anvil-debate-OS-CPU`: the two binaries, for npm to install where `os` and `cpu` match.
fn platform_package(
    workspace: &Workspace,
    platform: &Platform,
    profile: &str,
    dir: &Path,
) -> Result<(), String> {
    let built = workspace.target_dir.join(platform.triple).join(profile);
    let bin = dir.join("bin");
    create_dir(&bin)?;
    for program in PROGRAMS {
        let file = platform.exe(program);
        let from = built.join(&file);
        let to = bin.join(&file);
        std::fs::copy(&from, &to).map_err(|e| {
            format!(
                "cannot copy {}: {e} (build it first, without --no-build)",
                from.display()
            )
        })?;
        executable(&to)?;
    }
    let name = platform.package(PACKAGE);
    write_json(
        &dir.join("package.json"),
        &json!({
            "name": name,
            "version": workspace.version,
            "description": format!(
                "anvil's native programs (anvil, anvil-hook) for {}; installed by {PACKAGE}",
                platform.key()
            ),
            "license": workspace.license,
            "os": [platform.os],
            "cpu": [platform.cpu],
            "files": ["bin/"],
            "preferUnplugged": true,
        }),
    )?;
    write(
        &dir.join("README.md"),
        &format!(
            "# {name}\n\nThe `anvil` and `anvil-hook` programs for {}, built by `cargo xtask dist`. \
             Install [{PACKAGE}](https://www.npmjs.com/package/{PACKAGE}) instead: it picks the \
             package for your platform.\n",
            platform.key()
        ),
    )
}

/// `anvil-debate`: the launchers, the postinstall, the plugin, and every platform package as
/// an optional dependency.
fn main_package(workspace: &Workspace, dir: &Path) -> Result<(), String> {
    let template = workspace.root.join("npm").join(PACKAGE);
    copy_tree(&template, dir)?;
    for program in PROGRAMS {
        executable(&dir.join("bin").join(program))?;
    }
    let platforms: Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| (p.key(), Value::from(p.package(PACKAGE))))
        .collect();
    write_json(&dir.join("lib/platforms.json"), &Value::Object(platforms))?;

    anvil_core::claude::install::write_plugin(
        dir,
        anvil_core::claude::install::PluginBinaries::Inside,
    )
    .map_err(|e| format!("cannot write the plugin: {e}"))?;
    let plugin: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(".claude-plugin/plugin.json"))
            .map_err(|e| format!("the plugin's manifest: {e}"))?,
    )
    .map_err(|e| format!("the plugin's manifest: {e}"))?;
    if plugin["version"] != workspace.version.as_str() {
        return Err(format!(
            "the plugin says version {} but the workspace is at {}",
            plugin["version"], workspace.version
        ));
    }

    let optional: Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| (p.package(PACKAGE), Value::from(workspace.version.as_str())))
        .collect();
    let bin: Map<String, Value> = PROGRAMS
        .iter()
        .map(|p| ((*p).to_owned(), Value::from(format!("bin/{p}"))))
        .collect();
    let manifest = json!({
        "name": PACKAGE,
        "version": workspace.version,
        "description": workspace.description,
        "license": workspace.license,
        "keywords": ["claude-code", "claude-code-plugin", "debate", "git", "decision-making"],
        "bin": bin,
        "scripts": { "postinstall": "node install.js" },
        "optionalDependencies": optional,
        "engines": { "node": ">=18" },
        "files": [
            "bin/", "lib/", "install.js",
            ".claude-plugin/", "hooks/", "commands/", ".mcp.json",
            // npm publishes a shrinkwrap only when `files` names it.
            "npm-shrinkwrap.json",
        ],
    });
    write_json(&dir.join("package.json"), &manifest)?;
    write_json(
        &dir.join("npm-shrinkwrap.json"),
        &shrinkwrap(&manifest, &workspace.version),
    )
}

/// The lockfile published with the main package: the platform packages at this version, each
/// with its `os` and `cpu`, so that npm (and Claude Code's plugin install, which runs
/// `npm ci`) skips the others without asking the registry. No download address is pinned: the
/// packages come from whichever registry the installer uses.
fn shrinkwrap(manifest: &Value, version: &str) -> Value {
    let mut packages = Map::new();
    let mut root = Map::new();
    for key in [
        "name",
        "version",
        "license",
        "bin",
        "optionalDependencies",
        "engines",
    ] {
        root.insert(key.to_owned(), manifest[key].clone());
    }
    root.insert("hasInstallScript".into(), Value::Bool(true));
    packages.insert(String::new(), Value::Object(root));
    for p in PLATFORMS {
        packages.insert(
            format!("node_modules/{}", p.package(PACKAGE)),
            json!({
                "version": version,
                "license": manifest["license"],
                "optional": true,
                "os": [p.os],
                "cpu": [p.cpu],
            }),
        );
    }
    json!({
        "name": manifest["name"],
        "version": version,
        "lockfileVersion": 3,
        "requires": true,
        "packages": packages,
    })
}

struct Packed {
    filename: String,
    size: u64,
    unpacked_size: u64,
}

/// `npm pack` of `dir` into `out`.
fn pack(dir: &Path, out: &Path) -> Result<Packed, String> {
    let output = Command::new(npm())
        .current_dir(dir)
        .args(["pack", "--json", "--ignore-scripts", "--pack-destination"])
        .arg(out)
        .output()
        .map_err(|e| format!("cannot run npm (needed to pack): {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "npm pack in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let report: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("npm pack printed no JSON: {e}"))?;
    let first = &report[0];
    Ok(Packed {
        filename: first["filename"].as_str().unwrap_or_default().to_owned(),
        size: first["size"].as_u64().unwrap_or_default(),
        unpacked_size: first["unpackedSize"].as_u64().unwrap_or_default(),
    })
}

fn npm() -> &'static str {
    if cfg!(windows) { "npm.cmd" } else { "npm" }
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    create_dir(to)?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let path = entry.path();
        let dest = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &dest)?;
        } else {
            std::fs::copy(&path, &dest).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn create_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

fn remove_dir(dir: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("cannot remove {}: {e}", dir.display()))
        }
        _ => Ok(()),
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn write_json(path: &Path, value: &Value) -> Result<(), String> {
    let mut text = serde_json::to_string_pretty(value).expect("JSON values serialise");
    text.push('\n');
    write(path, &text)
}

#[cfg(unix)]
fn executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", path.display()))
}

#[cfg(not(unix))]
fn executable(_path: &Path) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shrinkwrap_lists_the_manifests_dependencies_with_their_platforms() {
        let manifest = json!({
            "name": PACKAGE, "version": "1.2.3", "license": "MIT",
            "bin": {"anvil": "bin/anvil"},
            "optionalDependencies": {"anvil-debate-linux-x64": "1.2.3"},
            "engines": {"node": ">=18"},
        });
        let lock = shrinkwrap(&manifest, "1.2.3");
        assert_eq!(lock["lockfileVersion"], 3);
        assert_eq!(
            lock["packages"][""]["optionalDependencies"],
            manifest["optionalDependencies"]
        );
        let linux = &lock["packages"]["node_modules/anvil-debate-linux-x64"];
        assert_eq!(linux["os"], json!(["linux"]));
        assert_eq!(linux["cpu"], json!(["x64"]));
        assert_eq!(linux["optional"], true);
        assert!(linux.get("resolved").is_none(), "no registry is pinned");
    }
}
