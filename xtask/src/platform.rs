//! The platforms anvil is prebuilt for: a Rust target, and the npm `os` and `cpu` of the
//! package that carries its binaries.

use std::path::Path;
use std::process::Command;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// The Rust target triple.
    pub triple: &'static str,
    /// npm's `process.platform` for it.
    pub os: &'static str,
    /// npm's `process.arch` for it.
    pub cpu: &'static str,
}

/// Linux builds are static (glibc, `+crt-static` in .cargo/config.toml), so they run on any
/// distribution, musl-based ones included; Windows links its C runtime in.
pub const PLATFORMS: [Platform; 5] = [
    Platform {
        triple: "x86_64-unknown-linux-gnu",
        os: "linux",
        cpu: "x64",
    },
    Platform {
        triple: "aarch64-unknown-linux-gnu",
        os: "linux",
        cpu: "arm64",
    },
    Platform {
        triple: "x86_64-apple-darwin",
        os: "darwin",
        cpu: "x64",
    },
    Platform {
        triple: "aarch64-apple-darwin",
        os: "darwin",
        cpu: "arm64",
    },
    Platform {
        triple: "x86_64-pc-windows-msvc",
        os: "win32",
        cpu: "x64",
    },
];

impl Platform {
    pub fn by_triple(triple: &str) -> Option<Platform> {
        PLATFORMS.into_iter().find(|p| p.triple == triple)
    }

    /// `linux-x64`: the key launchers look this platform up by (`process.platform`-`process.arch`).
    pub fn key(self) -> String {
        format!("{}-{}", self.os, self.cpu)
    }

    /// The npm package holding this platform's binaries.
    pub fn package(self, main: &str) -> String {
        format!("{main}-{}", self.key())
    }

    /// The file name of program `name` on this platform.
    pub fn exe(self, name: &str) -> String {
        if self.os == "win32" {
            format!("{name}.exe")
        } else {
            name.to_owned()
        }
    }

    /// Can this machine build for this platform? The Rust standard library for the target must
    /// be installed, and a linker for it at hand: the host's own, Apple's for either Mac (it
    /// links both), a linker named in `CARGO_TARGET_<TRIPLE>_LINKER`, or a cross GCC on PATH
    /// (`aarch64-linux-gnu-gcc`).
    pub fn buildable(self, host: &str) -> bool {
        if self.triple == host {
            return true;
        }
        if !std_installed(self.triple) {
            return false;
        }
        let linker_var = format!(
            "CARGO_TARGET_{}_LINKER",
            self.triple.to_uppercase().replace('-', "_")
        );
        if std::env::var_os(linker_var).is_some() {
            return true;
        }
        if self.os == "darwin" && host.ends_with("-apple-darwin") {
            return true;
        }
        if self.os == "linux" {
            let arch = self.triple.split('-').next().unwrap_or_default();
            return on_path(&format!("{arch}-linux-gnu-gcc"));
        }
        false
    }
}

/// Is the Rust standard library for `triple` installed (rustup's `target add`)?
fn std_installed(triple: &str) -> bool {
    let Ok(out) = Command::new("rustc")
        .args(["--print", "target-libdir", "--target", triple])
        .output()
    else {
        return false;
    };
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    out.status.success()
        && std::fs::read_dir(&dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with("libstd-") && n.ends_with(".rlib"))
            })
        })
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| Path::new(&dir).join(program).is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_platform_has_a_distinct_key_and_package() {
        let keys: std::collections::BTreeSet<String> = PLATFORMS.iter().map(|p| p.key()).collect();
        assert_eq!(keys.len(), PLATFORMS.len());
        assert_eq!(
            Platform::by_triple("aarch64-apple-darwin")
                .unwrap()
                .package("anvil-debate"),
            "anvil-debate-darwin-arm64"
        );
        assert_eq!(
            Platform::by_triple("x86_64-pc-windows-msvc")
                .unwrap()
                .exe("anvil-hook"),
            "anvil-hook.exe"
        );
        assert_eq!(Platform::by_triple("x86_64-unknown-linux-musl"), None);
    }
}
