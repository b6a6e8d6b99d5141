//! A terminal for a test: a tmux server of its own (its socket in a temporary folder), one
//! window of a given size running one shell line with the environment given, read back as the
//! person would see it, and keys typed into it. The server is killed when the value goes.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Output, Stdio};

pub struct Tmux {
    dir: tempfile::TempDir,
}

impl Tmux {
    /// Starts `line` (a shell line) in `cwd`, in a window `columns` wide and `rows` tall, with
    /// exactly `env` (its `PATH` is put on the line too: the pane's shell may set its own).
    pub fn start(
        cwd: &Path,
        env: &[(&str, OsString)],
        line: &str,
        (columns, rows): (u16, u16),
    ) -> Tmux {
        let tmux = Tmux {
            dir: tempfile::Builder::new()
                .prefix("anvil-tmux-")
                .tempdir()
                .expect("a folder for the socket"),
        };
        let mut args: Vec<OsString> = ["new-session", "-d", "-x"].map(OsString::from).into();
        args.push(columns.to_string().into());
        args.push("-y".into());
        args.push(rows.to_string().into());
        args.push("-c".into());
        args.push(cwd.into());
        let mut path = None;
        for (name, value) in env {
            let mut pair = OsString::from(format!("{name}="));
            pair.push(value);
            args.push("-e".into());
            args.push(pair);
            if *name == "PATH" {
                path = Some(value.clone());
            }
        }
        let line = match path {
            Some(path) => format!("PATH={} {line}", quote(&path.to_string_lossy())),
            None => line.to_owned(),
        };
        args.push(line.into());
        let started = tmux.run(&args);
        assert!(started.status.success(), "tmux: {started:?}");
        tmux
    }

    fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(self.dir.path().join("socket"))
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run tmux")
    }

    /// What the window shows, its history included, long lines joined.
    pub fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-S", "-2000"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `keys` (tmux's key names: `Enter`, `Down`, or text).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend(keys);
        self.run(&args);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

/// `text` quoted for a POSIX shell.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
