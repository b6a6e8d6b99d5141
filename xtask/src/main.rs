//! anvil's build tasks, run as `cargo xtask TASK` (an alias in `.cargo/config.toml`).
//!
//! `cargo xtask dist OUT` builds the release binaries and writes the npm packages into OUT as
//! `npm pack` tarballs, ready for `npm publish`: one package per platform with the static
//! binaries, and `anvil-debate`, which provides `anvil` and `anvil-hook`, lists the platform
//! packages as optional dependencies, and is the Claude Code plugin too.

mod dist;
mod platform;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask dist OUT [--target TRIPLE]... [--profile NAME] [--no-build]

  Builds anvil and anvil-hook (profile `dist` unless --profile says otherwise) for this
  machine's platform, and for every other supported platform whose Rust standard library and
  linker are installed (or those --target names), then writes the npm tarballs into OUT:
  anvil-debate-VERSION.tgz and one anvil-debate-PLATFORM-VERSION.tgz per platform built.
  --no-build packs binaries already built by an earlier run.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("dist") => parse_dist(&args[1..]).and_then(|options| dist::run(&options)),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => Err(format!("no such task\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn parse_dist(args: &[String]) -> Result<dist::Options, String> {
    let mut out = None;
    let mut targets = Vec::new();
    let mut profile = "dist".to_owned();
    let mut build = true;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--target" => targets.push(value("--target")?),
            "--profile" => profile = value("--profile")?,
            "--no-build" => build = false,
            "-h" | "--help" => return Err(USAGE.to_owned()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}\n{USAGE}")),
            _ if out.is_some() => return Err(format!("one OUT directory only\n{USAGE}")),
            path => out = Some(PathBuf::from(path)),
        }
    }
    Ok(dist::Options {
        out: out.ok_or_else(|| format!("OUT is missing\n{USAGE}"))?,
        targets,
        profile,
        build,
    })
}
