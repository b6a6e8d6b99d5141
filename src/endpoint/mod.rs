//! `anvil endpoint-turn`: one turn of a seat on an OpenAI-compatible endpoint, which the seat
//! runner starts like an agent CLI (see `anvil_core::agent::endpoint`). Not a command for
//! people: it takes the turn's prompt on stdin and prints an [`Answer`] as JSON.
//!
//! It lives in the `anvil` program, never in `anvil-hook`: the HTTP client and TLS are
//! megabytes that the hook, which starts at every turn of every session, would map and
//! relocate at each start for the few stops that play an endpoint's seat.
//!
//! One turn is one Chat Completions request ([`chat`]): the seat's earlier turns (kept in its
//! session file, [`session`]) and the prompt, streamed where the server streams. What comes
//! back is bounded ([`MAX_ANSWER`], the seat's timeout), and what it says when it fails is
//! the endpoint's own words, cleaned: the key's value and any credential's shape replaced,
//! control characters shown as escapes, cut at [`MAX_WORDS`] characters.

mod chat;
mod session;

use std::ffi::OsString;
use std::io::Read;
use std::time::{Duration, Instant};

use anvil_core::agent::endpoint::Answer;

/// The most of an answer read (the body of a response or its stream): past it the turn fails.
pub const MAX_ANSWER: u64 = 4 * 1024 * 1024;
/// The longest prompt taken on stdin.
const MAX_PROMPT: u64 = 64 * 1024 * 1024;
/// The most characters of an endpoint's words kept in a failure.
const MAX_WORDS: usize = 600;

/// What the turn is told on its command line.
#[derive(Debug)]
struct Args {
    name: String,
    base_url: String,
    key_env: Option<String>,
    model: Option<String>,
    /// `--session-id=ID` (a new conversation) or `--resume=ID`.
    session: String,
    resume: bool,
    timeout: Duration,
}

impl Args {
    fn parse(args: impl Iterator<Item = OsString>) -> Result<Args, String> {
        let mut parsed = Args {
            name: String::new(),
            base_url: String::new(),
            key_env: None,
            model: None,
            session: String::new(),
            resume: false,
            timeout: anvil_core::agent::DEFAULT_TIMEOUT,
        };
        for arg in args {
            let arg = arg
                .into_string()
                .map_err(|a| format!("an argument is not UTF-8: {a:?}"))?;
            let (flag, value) = arg
                .split_once('=')
                .ok_or_else(|| format!("`{arg}` is not --FLAG=VALUE"))?;
            let value = value.to_owned();
            match flag {
                "--name" => parsed.name = value,
                "--base-url" => parsed.base_url = value,
                "--key-env" => parsed.key_env = Some(value),
                "--model" => parsed.model = Some(value),
                "--session-id" => parsed.session = value,
                "--resume" => (parsed.session, parsed.resume) = (value, true),
                "--timeout" => {
                    let secs: u64 = value
                        .parse()
                        .map_err(|_| format!("--timeout={value}: seconds expected"))?;
                    parsed.timeout = Duration::from_secs(secs.clamp(1, 86_400));
                }
                _ => return Err(format!("unknown argument `{flag}`")),
            }
        }
        if parsed.base_url.is_empty() {
            return Err("no --base-url".to_owned());
        }
        session::check_id(&parsed.session)?;
        Ok(parsed)
    }
}

/// Runs `anvil endpoint-turn ARGS…` and returns its exit code: 0 with the reply, 1 with the
/// failure (both printed as an [`Answer`]), 2 when it was called wrongly.
pub fn main(args: impl Iterator<Item = OsString>) -> i32 {
    let began = Instant::now();
    let args = match Args::parse(args) {
        Ok(args) => args,
        Err(why) => {
            eprintln!(
                "usage: anvil {} --base-url=URL --session-id=ID|--resume=ID [--model=M] \
                 [--key-env=VAR] [--timeout=SECS], the prompt on stdin (anvil runs it for an \
                 endpoint's seat; not for typing): {why}",
                anvil_core::agent::endpoint::TURN_WORD
            );
            return 2;
        }
    };
    let key = args
        .key_env
        .as_deref()
        .and_then(|var| std::env::var(var).ok())
        .filter(|k| !k.is_empty());
    let (answer, code) = match turn(&args, key.as_deref(), began) {
        Ok(answer) => (answer, 0),
        Err(words) => (
            Answer {
                error: Some(clean(&words, key.as_deref())),
                session: args.session.clone(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                duration_ms: began.elapsed().as_millis() as u64,
                ..Answer::default()
            },
            1,
        ),
    };
    println!(
        "{}",
        serde_json::to_string(&answer).expect("an answer serialises")
    );
    code
}

/// The turn: the prompt read, the conversation sent, the answer kept in the session.
fn turn(args: &Args, key: Option<&str>, began: Instant) -> Result<Answer, String> {
    if let (Some(var), None) = (&args.key_env, key) {
        return Err(format!(
            "${var} is not set: it holds the key for {} (set it, or name another variable in \
             [agents.{}] of .anvil/config.toml)",
            args.base_url, args.name
        ));
    }
    let model = args.model.as_deref().ok_or_else(|| {
        format!(
            "no model: name one, `{}:MODEL` (a Chat Completions request needs one)",
            args.name
        )
    })?;
    let mut prompt = String::new();
    std::io::stdin()
        .take(MAX_PROMPT)
        .read_to_string(&mut prompt)
        .map_err(|e| format!("cannot read the prompt on stdin: {e}"))?;
    let mut conversation = if args.resume {
        session::load(&args.session)
    } else {
        session::Conversation::default()
    };
    conversation.push("user", &prompt);
    // Kept back from the seat's timeout to say why, before the runner stops the process.
    let margin = (args.timeout / 10).min(Duration::from_secs(2));
    let deadline = began + args.timeout.saturating_sub(margin);
    let reply = chat::send(&chat::Request {
        base_url: &args.base_url,
        key,
        key_env: args.key_env.as_deref(),
        model,
        messages: conversation.messages(),
        deadline,
    })?;
    conversation.push("assistant", &reply.text);
    if let Err(e) = session::save(&args.session, &args.name, &conversation) {
        // The turn is played; only its resumption is lost (the next turn starts afresh).
        eprintln!("anvil: note: the conversation was not kept for the next turn: {e}");
    }
    Ok(Answer {
        text: reply.text,
        model: reply.model.or_else(|| Some(model.to_owned())),
        input_tokens: reply.usage.input,
        output_tokens: reply.usage.output,
        cached_tokens: reply.usage.cached,
        cost_usd: reply.usage.cost,
        session: args.session.clone(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        duration_ms: began.elapsed().as_millis() as u64,
        error: None,
    })
}

/// Does `endpoint` answer here? `GET BASE_URL/models`, which every OpenAI-compatible server
/// answers for nothing (no model runs, nothing is billed), with its key when it takes one and
/// the key is set (an endpoint whose key is missing is not asked: it could not play anyway).
/// `Ok` says what it answered (how many models it lists), `Err` why not.
pub fn probe(endpoint: &anvil_core::agent::endpoint::Endpoint) -> Result<String, String> {
    let key = match endpoint.key_env() {
        Some(var) => match std::env::var(var).ok().filter(|k| !k.is_empty()) {
            Some(key) => Some(key),
            None => return Err(format!("not asked: ${var} is not set")),
        },
        None => None,
    };
    chat::models(endpoint.base_url(), key.as_deref(), Duration::from_secs(5))
        .map_err(|why| clean(&why, key.as_deref()))
}

/// An endpoint's words, safe to keep and show: the key's value and credentials of known
/// shapes replaced, control characters shown as escapes, at most [`MAX_WORDS`] characters.
pub fn clean(words: &str, key: Option<&str>) -> String {
    let mut text = words.trim().to_owned();
    if let Some(key) = key.filter(|k| k.len() >= 4) {
        text = text.replace(key, "[redacted: the endpoint's key]");
    }
    let text = anvil_core::model::secrets::redact(&text).0.into_owned();
    let text = crate::term::visible(&text).into_owned();
    if text.chars().count() > MAX_WORDS {
        let cut: String = text.chars().take(MAX_WORDS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoints_words_are_cleaned_before_anyone_sees_them() {
        let key = "sk-or-v1-0123456789abcdef0123456789abcdef";
        let said = format!(
            "Invalid key {key}\u{1b}]52;c;aGk=\u{7} at https://me:hunter2@x.example {}",
            "x".repeat(900)
        );
        let cleaned = clean(&said, Some(key));
        assert!(!cleaned.contains(key), "{cleaned}");
        assert!(!cleaned.contains("hunter2"), "{cleaned}");
        assert!(
            !cleaned.contains('\u{1b}') && cleaned.contains("\\x1b"),
            "{cleaned}"
        );
        assert!(cleaned.chars().count() <= MAX_WORDS + 1, "{cleaned}");
    }

    #[test]
    fn the_command_line_is_flags_glued_to_values_and_a_session_of_anvils_shape() {
        let parse = |args: &[&str]| Args::parse(args.iter().map(OsString::from));
        let args = parse(&[
            "--name=ollama",
            "--base-url=http://127.0.0.1:11434/v1",
            "--model=llama3.1:8b",
            "--resume=0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            "--timeout=30",
        ])
        .unwrap();
        assert!(args.resume);
        assert_eq!(args.model.as_deref(), Some("llama3.1:8b"));
        assert!(parse(&["--base-url=x", "--resume=../../etc/passwd"]).is_err());
        assert!(parse(&["--base-url", "x"]).is_err());
        assert!(parse(&["--session-id=0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"]).is_err());
    }
}
