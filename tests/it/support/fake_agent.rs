//! A stand-in for an agent CLI that keeps what anvil gave it — its arguments, its whole
//! environment, its stdin — and prints a canned output (the real agent's own, such as Codex's
//! JSON events). Named in `ANVIL_<AGENT>_BIN`, it shows what a seat's process receives, which
//! a real agent never reports. It answers `--version` like the agent, without logging it.

use std::path::{Path, PathBuf};

/// One run of the fake agent.
#[derive(Debug, Clone)]
pub struct Call {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub stdin: String,
}

impl Call {
    /// The value of the variable `name`, if the run had it.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct FakeAgent {
    dir: tempfile::TempDir,
}

impl FakeAgent {
    /// A fake agent that prints `output`, and `version` for `--version`.
    pub fn new(output: &str, version: &str) -> FakeAgent {
        let dir = tempfile::Builder::new()
            .prefix("anvil-fake-agent-")
            .tempdir()
            .expect("a temporary directory");
        let root = dir.path();
        std::fs::create_dir(root.join("calls")).unwrap();
        std::fs::write(root.join("output"), output).unwrap();
        let script = format!(
            "#!/bin/sh\n\
             d='{dir}'\n\
             if [ \"$1\" = --version ]; then echo '{version}'; exit 0; fi\n\
             n=$$\n\
             printf '%s\\0' \"$@\" > \"$d/calls/$n.argv\"\n\
             env -0 > \"$d/calls/$n.env\"\n\
             cat > \"$d/calls/$n.stdin\"\n\
             cat \"$d/output\"\n",
            dir = root.display()
        );
        let program = root.join("agent");
        std::fs::write(&program, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeAgent { dir }
    }

    /// The program, for `ANVIL_<AGENT>_BIN`.
    pub fn program(&self) -> PathBuf {
        self.dir.path().join("agent")
    }

    /// Every run so far (but `--version`), in no particular order.
    pub fn calls(&self) -> Vec<Call> {
        let calls = self.dir.path().join("calls");
        let mut pids: Vec<String> = std::fs::read_dir(&calls)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".stdin").map(str::to_owned)
            })
            .collect();
        pids.sort();
        pids.iter().map(|pid| read_call(&calls, pid)).collect()
    }
}

fn read_call(calls: &Path, pid: &str) -> Call {
    let read = |ext: &str| std::fs::read(calls.join(format!("{pid}.{ext}"))).unwrap_or_default();
    let split = |bytes: Vec<u8>| -> Vec<String> {
        bytes
            .split(|b| *b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()
    };
    Call {
        argv: split(read("argv")),
        env: split(read("env"))
            .into_iter()
            .filter_map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
            })
            .collect(),
        stdin: String::from_utf8_lossy(&read("stdin")).into_owned(),
    }
}

/// Codex's `exec --json` events for a turn of thread `thread` that answered `text`.
pub fn codex_events(thread: &str, text: &str) -> String {
    [
        serde_json::json!({"type": "thread.started", "thread_id": thread}),
        serde_json::json!({"type": "item.completed",
                           "item": {"id": "item_0", "type": "agent_message", "text": text}}),
        serde_json::json!({"type": "turn.completed",
                           "usage": {"input_tokens": 10, "cached_input_tokens": 0,
                                     "output_tokens": 5}}),
    ]
    .map(|e| format!("{e}\n"))
    .concat()
}
