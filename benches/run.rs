//! Speed of `anvil run` showing a debate (issue "The first hour", its Speed section).
//!
//! `cargo bench --bench run` prints medians for:
//! 1. rendering a 400-word phase for the terminal, in process: the phase (headings, a list,
//!    emphasis, inline code, a fenced block, a position and two open points) through the
//!    core's renderer of a phase for people (`markers::readable`) and `src/markdown.rs` at 100
//!    columns, styled; and the same phase arriving a word at a time, each word rendering the
//!    block being written again (what a terminal's live row costs over a whole phase). Target:
//!    the phase under 5 ms.
//! 2. the first words of a streamed phase on the person's terminal: a 1-round `anvil run`
//!    whose host is the real Claude Code against the scripted model server and whose critic
//!    is a Claude Code seat played by a small script that prints `stream-json` as Claude Code
//!    does, noting when it writes its first words. `anvil run` runs in a terminal (`script`
//!    gives it one); the bench reads that terminal and notes when the words appear. Target:
//!    within 100 ms of the agent's first streamed token. (`anvil run`'s own cost against a
//!    seated run's wall time is `--bench seats`.)
//!
//! `cargo bench --bench run -- render` runs measurement 1 alone.

#[allow(dead_code)]
#[path = "../tests/it/support"]
mod support {
    pub mod anvil;
    pub mod claude;
    pub mod gemini;
    pub mod model_server;
    pub mod openai;
    pub mod processes;
}

/// What `src/markdown.rs` takes from the binary: the core's terminal neutraliser.
mod term {
    pub use anvil_core::term::*;
}

#[allow(dead_code)]
#[path = "../src/markdown.rs"]
mod markdown;

use std::io::Read;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use support::anvil::{Project, phase_text, turn_tag};
use support::model_server::{ModelServer, Reply};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A phase of about 400 words, as a debater writes one.
fn phase() -> String {
    let para = "The migration cost is the **main** risk: every client that reads the REST \
                endpoints today needs a new query layer, and the *schema* must be owned by \
                someone who can say no. We measured `p95` latency on the current gateway and \
                found it acceptable, so speed alone is not a reason to move.";
    let mut text = String::from("## Where I stand\n\n");
    for i in 0..7 {
        text.push_str(para);
        text.push_str("\n\n");
        if i == 1 {
            text.push_str(
                "- **cost**: a quarter of two teams\n- *risk*: schema drift\n- `tooling`: \
                 codegen for three languages\n\n",
            );
        }
        if i == 3 {
            text.push_str("```rust\nlet query = schema.parse(input)?;\n```\n\n");
        }
    }
    text.push_str(
        "<anvil-position stance=\"against\" confidence=\"0.6\">Keep REST until the clients \
         ask for more.</anvil-position>\n<anvil-open>Who owns the schema?</anvil-open>\n\
         <anvil-open>What does codegen cost per language?</anvil-open>\n",
    );
    text
}

fn render_phase() {
    let text = phase();
    let words = text.split_whitespace().count();
    let look = markdown::Look {
        styled: true,
        width: Some(100),
    };
    let whole = || {
        let shown = anvil_core::model::markers::readable(&text);
        markdown::render(&shown, &look)
    };
    let rows = whole().len();
    let mut times = Vec::new();
    for _ in 0..200 {
        let began = Instant::now();
        std::hint::black_box(whole());
        times.push(began.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "a {words}-word phase rendered for the terminal ({rows} rows at 100 columns): {:.3} ms (target < 5 ms)",
        median(times)
    );
    // Word by word: at each word, the block being written is rendered again.
    let pieces: Vec<&str> = text.split_inclusive(' ').collect();
    let mut times = Vec::new();
    for _ in 0..20 {
        let began = Instant::now();
        let mut block_start = 0;
        let mut so_far = String::new();
        for piece in &pieces {
            so_far.push_str(piece);
            if let Some(end) = so_far[block_start..].rfind("\n\n") {
                block_start += end + 2;
            }
            std::hint::black_box(markdown::render(&so_far[block_start..], &look));
        }
        times.push(began.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "the same phase arriving a word at a time ({} pieces, the block being written rendered at each): {:.2} ms in all",
        pieces.len(),
        median(times)
    );
}

/// Nanoseconds since the epoch, comparable across processes of this machine.
fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// A Claude Code seat that prints `stream-json` as Claude Code does: its version, a message's
/// start, its first words (noting when, in `log`), more words 300 ms later, its result.
fn streaming_seat(dir: &std::path::Path, log: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("claude-seat");
    let event = |delta: &str| {
        format!(
            r#"{{"type":"stream_event","parent_tool_use_id":null,"event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{delta}"}}}}}}"#
        )
    };
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$1\" = --version ]; then echo '9.9.9 (Claude Code)'; exit 0; fi\n\
         echo '{{\"type\":\"system\",\"subtype\":\"init\",\"claude_code_version\":\"9.9.9\"}}'\n\
         echo '{{\"type\":\"stream_event\",\"parent_tool_use_id\":null,\"event\":{{\"type\":\"message_start\",\"message\":{{\"model\":\"bench-model\"}}}}}}'\n\
         sleep 0.3\n\
         t=$(date +%s%N); echo '{first}'; echo $t > '{log}'\n\
         sleep 0.3\n\
         echo '{rest}'\n\
         echo '{{\"type\":\"result\",\"is_error\":false,\"result\":\"FIRSTWORDS of the critic, then the rest.\",\"usage\":{{\"input_tokens\":10,\"output_tokens\":10}},\"duration_ms\":600}}'\n",
        first = event("FIRSTWORDS of the critic, "),
        rest = event("then the rest."),
        log = log.display(),
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn first_words() {
    let server = ModelServer::start(|turn| match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("ok"),
    });
    let home = support::claude::ClaudeHome::new();
    let dir = tempfile::tempdir().unwrap();
    let mut latencies = Vec::new();
    for sample in 0..5 {
        let project = Project::new();
        let log = dir.path().join(format!("first-{sample}"));
        let seat = streaming_seat(dir.path(), &log);
        let command = format!(
            "'{}' run 'Should we adopt GraphQL?' --rounds 1 --seat critic=claude --claude '{}'",
            support::anvil::anvil_bin().display(),
            support::claude::claude_bin().display()
        );
        // `script` gives `anvil run` a terminal, and copies what it shows to the pipe read here.
        let mut child = std::process::Command::new("script")
            .args(["-qfec", &command, "/dev/null"])
            .current_dir(project.path())
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .env_remove("AI_AGENT")
            .env_remove("CLAUDE_PROJECT_DIR")
            .envs(support::claude::headless_env(&server, &home))
            .env("ANVIL_CLAUDE_BIN", &seat)
            .env("TERM", "xterm-256color")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run script");
        let mut out = child.stdout.take().unwrap();
        let mut seen = Vec::new();
        let mut at = None;
        let mut buf = [0u8; 4096];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if at.is_none() && String::from_utf8_lossy(&seen).contains("FIRSTWORDS") {
                at = Some(now_ns());
            }
        }
        let _ = child.wait();
        let at =
            at.unwrap_or_else(|| panic!("no first words in:\n{}", String::from_utf8_lossy(&seen)));
        let wrote: u128 = std::fs::read_to_string(&log)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        latencies.push((at.saturating_sub(wrote)) as f64 / 1e6);
    }
    println!(
        "first words of a streamed phase on the terminal, after the agent wrote them: {:.1} ms (target < 100 ms; samples {:?})",
        median(latencies.clone()),
        latencies
            .iter()
            .map(|l| format!("{l:.1}"))
            .collect::<Vec<_>>()
    );
}

fn main() {
    render_phase();
    if std::env::args().any(|a| a == "render") {
        return;
    }
    first_words();
}
