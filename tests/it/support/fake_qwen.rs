//! An agent CLI of the tests' own, for what no real CLI can be made to say on cue: a script that
//! answers as Qwen Code does (`qwen -p … -o json` prints one JSON array: `system` `init` with
//! the session and its version, the turn's `assistant` messages with their model, `result`),
//! with the model and version the test chooses; or fails, its last words on stderr. anvil finds
//! it through `ANVIL_QWEN_BIN`, as it finds any agent a person names.
//!
//! What it says comes from files beside the script, not from its environment: a seat's
//! environment is anvil's to choose, and the script reads nothing of it.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// One fake Qwen Code, in a temporary directory of its own.
pub struct FakeQwen {
    dir: tempfile::TempDir,
}

impl FakeQwen {
    /// A Qwen Code whose every turn fails: `last_words` on stderr, exit status 1.
    pub fn failing(last_words: &str) -> FakeQwen {
        FakeQwen::with("", last_words, 1)
    }

    /// A Qwen Code whose every turn answers `text`, reporting `model` and `version`.
    pub fn answering(text: &str, model: &str, version: &str) -> FakeQwen {
        let events = serde_json::json!([
            {
                "type": "system", "subtype": "init",
                "session_id": "6f1c9a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
                "qwen_code_version": version, "model": model,
            },
            {
                "type": "assistant",
                "message": {
                    "model": model,
                    "content": [{ "type": "text", "text": text }],
                    "usage": { "input_tokens": 120, "output_tokens": 40 },
                },
            },
            {
                "type": "result", "subtype": "success", "is_error": false,
                "result": text, "duration_ms": 1200,
            },
        ]);
        FakeQwen::with(&events.to_string(), "", 0)
    }

    fn with(stdout: &str, stderr: &str, status: u8) -> FakeQwen {
        let dir = tempfile::Builder::new()
            .prefix("anvil-fake-qwen-")
            .tempdir()
            .expect("a directory for the fake agent");
        std::fs::write(dir.path().join("stdout"), stdout).unwrap();
        std::fs::write(dir.path().join("stderr"), stderr).unwrap();
        let script = dir.path().join("qwen");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\n\
                 here=$(dirname \"$0\")\n\
                 if [ \"$1\" = --version ]; then echo 0.24.4; exit 0; fi\n\
                 cat \"$here/stdout\"\n\
                 cat \"$here/stderr\" >&2\n\
                 exit {status}\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeQwen { dir }
    }

    pub fn bin(&self) -> PathBuf {
        self.dir.path().join("qwen")
    }

    /// The variable that points anvil at it.
    pub fn env(&self) -> (&'static str, OsString) {
        ("ANVIL_QWEN_BIN", self.bin().into_os_string())
    }
}
