//! A scripted stand-in for the Anthropic Messages API, for end-to-end tests that run the real
//! Claude Code CLI with `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT`.
//!
//! The server listens on `127.0.0.1:0` in background threads and stops when dropped. Every
//! `POST /v1/messages` is parsed into a [`Turn`] and recorded; main conversation turns are
//! answered by the test's script (`Fn(&Turn) -> Reply`), side requests by a harmless default.
//!
//! What Claude Code sends, observed in `-p` mode with `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`
//! on both pinned clients (2.1.197 and 2.1.332) unless a version is named:
//! - `HEAD /` once at startup (a connectivity probe, answered 404 here without harm);
//! - `POST /v1/messages?beta=true`, always `"stream": true`, with its `tools` (about 25 in
//!   2.1.197; 12 in 2.1.332, which defers the rest), `max_tokens` 64000 (128000 in 2.1.332),
//!   one request per model turn. No title/topic/quota side requests were seen in `-p` mode, but
//!   anything without tools, with `max_tokens <= 1`, or answered for `count_tokens` is flagged as
//!   a side request ([`Turn::is_main`] is false) and never reaches the script.
//! - `messages` may contain `{"role": "system", ...}` entries mid-conversation (agent/skill
//!   listings, deferred tools), so the "latest user message" is the last entry whose role is
//!   `user`.
//! - A Stop hook's `{"decision":"block","reason":"X"}` reaches the model as the next user
//!   message. 2.1.197: its only content block is the text `"Stop hook feedback:\nX"`. 2.1.332:
//!   a string `"<system-reminder>\nThe text below is the output of a hook …\nStop hook
//!   feedback:\nX\n</system-reminder>"`, followed by a `system` message "Stop hook blocking
//!   error from command: …" ([`Turn::stop_hook_block`] reads both).
//! - A Stop hook's `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"X"}}`
//!   reaches it as a text block `"<system-reminder>\nStop hook additional context: X\n…"`
//!   (the same in both).
//! - Each Stop hook runs with `AI_AGENT=claude-code_2-1-197_harness` (or `…2-1-332…`),
//!   `CLAUDE_CODE_SESSION_ID` (the hook input's `session_id`) and `CLAUDE_PROJECT_DIR` in its
//!   environment, in both. At the first stop of a 2.1.332 session the transcript ends with
//!   records that carry no `version` (`last-prompt`, `atis-latch`) behind an attachment of
//!   about 57 KB; 2.1.197's ends with the `assistant` entry.
//! - MCP tools. 2.1.197 lists them in `tools` (`mcp__anvil__search`, …) in every request.
//!   2.1.332 defers them: `tools` carries `ToolSearch` and a `DeferredToolPlaceholder`, and the
//!   names arrive in a `system` message ("The following deferred tools are now available via
//!   ToolSearch … : NAME\nNAME…", with each server's `instructions` under "# MCP Server
//!   Instructions"). The model calls `ToolSearch` with `{"query": "select:NAME"}` or keywords;
//!   the result holds `tool_reference` blocks (no `<functions>` text reaches a custom
//!   endpoint), and from the next request on the loaded tools are in `tools` (with
//!   `defer_loading: true`) and can be called. In `-p` mode 2.1.332 does not wait for MCP
//!   servers to connect before the first request: a server still starting is not announced
//!   yet, but `ToolSearch` waits for it, and the names are announced in a later `system`
//!   message. [`discover`] is a scripted model's way through both.
//!
//! The same server speaks OpenAI's Responses API (`POST /v1/responses`, Codex CLI) and Chat
//! Completions (`POST /v1/chat/completions`, Copilot CLI, Qwen Code and OpenCode): see
//! [`super::openai`]; and Google's Generative Language API (`POST
//! /v1beta/models/MODEL:streamGenerateContent`, Gemini CLI): see [`super::gemini`].
//! Every request of any API becomes a [`Turn`] that says which API, agent and model it came
//! from, and the one script answers them all from the latest user content.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

mod turn;

// The benches include this module with `dead_code` allowed, and use only part of it.
#[allow(unused_imports)]
pub use turn::{Agent, Api, Discovery, TOOL_SEARCH, Turn, discover};

/// One block of a scripted answer.
#[derive(Debug, Clone)]
pub enum Block {
    Text(String),
    ToolUse { name: String, input: Value },
}

/// A scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub blocks: Vec<Block>,
    /// Wait this long before answering (to let a test kill Claude mid-request).
    pub delay: Duration,
    /// Answer with this HTTP error status and an Anthropic error body instead.
    pub error: Option<(u16, String)>,
    /// Report these (input, output) tokens, none of them cached, instead of figures made up
    /// from the request's and the answer's sizes.
    pub usage: Option<(u64, u64)>,
    /// With an error, its `Retry-After` header (seconds).
    pub retry_after: Option<u32>,
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            blocks: vec![Block::Text(text.into())],
            delay: Duration::ZERO,
            error: None,
            usage: None,
            retry_after: None,
        }
    }

    /// A `tool_use` block (stop_reason `tool_use`; the id is generated).
    pub fn tool_use(name: impl Into<String>, input: Value) -> Reply {
        Reply {
            blocks: vec![Block::ToolUse {
                name: name.into(),
                input,
            }],
            delay: Duration::ZERO,
            error: None,
            usage: None,
            retry_after: None,
        }
    }

    /// Text, then a `tool_use` block.
    pub fn text_and_tool_use(
        text: impl Into<String>,
        name: impl Into<String>,
        input: Value,
    ) -> Reply {
        Reply::text(text).and_tool_use(name, input)
    }

    /// A `Bash` tool_use running `command`.
    pub fn bash(command: impl Into<String>) -> Reply {
        Reply::tool_use(
            "Bash",
            json!({"command": command.into(), "description": "scripted command"}),
        )
    }

    /// An API error (e.g. 529 overloaded, 500); Claude Code may retry it.
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply {
            blocks: Vec::new(),
            delay: Duration::ZERO,
            error: Some((status, message.into())),
            usage: None,
            retry_after: None,
        }
    }

    /// The error says when to try again (`Retry-After`, in seconds).
    pub fn retry_after(mut self, seconds: u32) -> Reply {
        self.retry_after = Some(seconds);
        self
    }

    pub fn and_text(mut self, text: impl Into<String>) -> Reply {
        self.blocks.push(Block::Text(text.into()));
        self
    }

    pub fn and_tool_use(mut self, name: impl Into<String>, input: Value) -> Reply {
        self.blocks.push(Block::ToolUse {
            name: name.into(),
            input,
        });
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// The answer reports `input` and `output` tokens (none cached).
    pub fn with_usage(mut self, input: u64, output: u64) -> Reply {
        self.usage = Some((input, output));
        self
    }

    pub(super) fn stop_reason(&self) -> &'static str {
        if self
            .blocks
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }))
        {
            "tool_use"
        } else {
            "end_turn"
        }
    }
}

pub(super) type Script = dyn Fn(&Turn) -> Reply + Send + Sync + 'static;

#[derive(Default)]
pub(super) struct Shared {
    turns: Vec<Turn>,
    /// When each request (by `seq`) was answered.
    answered: std::collections::HashMap<usize, std::time::Instant>,
    other: Vec<(String, String)>,
    main_count: usize,
    per_session: std::collections::HashMap<String, usize>,
    script_panics: Vec<String>,
    /// The messages sent back to main turns, in order (model, usage, content).
    sent: Vec<Value>,
}

/// Tokens the server reported to one agent for one model ([`ModelServer::usage_reported`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    pub agent: String,
    pub model: String,
    /// Input, output, cache read, cache write.
    pub tokens: [u64; 4],
    pub turns: u32,
}

/// The running server; stops when dropped.
pub struct ModelServer {
    server: Arc<tiny_http::Server>,
    port: u16,
    shared: Arc<Mutex<Shared>>,
    thread: Option<JoinHandle<()>>,
}

impl ModelServer {
    /// Starts a server whose main turns are answered by `script`.
    pub fn start(script: impl Fn(&Turn) -> Reply + Send + Sync + 'static) -> ModelServer {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0"));
        let port = server
            .server_addr()
            .to_ip()
            .expect("server has an IP address")
            .port();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let script: Arc<Script> = Arc::new(script);
        let ids = Arc::new(AtomicUsize::new(0));
        let thread = {
            let server = Arc::clone(&server);
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    let shared = Arc::clone(&shared);
                    let script = Arc::clone(&script);
                    let ids = Arc::clone(&ids);
                    std::thread::spawn(move || handle(request, &shared, &*script, &ids));
                }
            })
        };
        ModelServer {
            server,
            port,
            shared,
            thread: Some(thread),
        }
    }

    /// Starts a server answering every main turn with the replies in order, then repeating the
    /// last one.
    pub fn scripted(replies: Vec<Reply>) -> ModelServer {
        assert!(!replies.is_empty(), "scripted() needs at least one reply");
        ModelServer::start(move |turn| replies[turn.index().min(replies.len() - 1)].clone())
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The value for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every `/v1/messages` request received so far (side requests included), in arrival order.
    pub fn requests(&self) -> Vec<Turn> {
        self.shared.lock().unwrap().turns.clone()
    }

    /// The messages the server answered main turns with, in order: what it reported as the
    /// model and the token usage of each.
    pub fn sent(&self) -> Vec<Value> {
        self.shared.lock().unwrap().sent.clone()
    }

    /// Only the main conversation turns.
    pub fn main_turns(&self) -> Vec<Turn> {
        self.requests().into_iter().filter(Turn::is_main).collect()
    }

    /// Every tool result the main conversation sent back, in order: (content text, is_error).
    pub fn tool_results(&self) -> Vec<(String, bool)> {
        self.main_turns()
            .iter()
            .flat_map(Turn::tool_results)
            .map(|(_, text, error)| (text, error))
            .collect()
    }

    /// Every tool call the main conversation answered, in order: (tool name, result text,
    /// is_error). A `ToolSearch` result's text is the names it loaded.
    pub fn calls_answered(&self) -> Vec<(String, String, bool)> {
        self.main_turns()
            .iter()
            .flat_map(Turn::answered_calls)
            .collect()
    }

    /// Other requests (method, path), e.g. the startup `HEAD /` and `count_tokens`.
    pub fn other_requests(&self) -> Vec<(String, String)> {
        self.shared.lock().unwrap().other.clone()
    }

    /// When request `seq` was answered (its last byte sent), if it was.
    pub fn answered_at(&self, seq: usize) -> Option<std::time::Instant> {
        self.shared.lock().unwrap().answered.get(&seq).copied()
    }

    /// The tokens the server reported for the main turns, summed per agent and model, each in
    /// its API's own terms: Messages' input, output, cache read and cache write; the OpenAI
    /// APIs' input (cached tokens included), output and cached input, with no cache write.
    pub fn usage_reported(&self) -> Vec<Usage> {
        let mut out: Vec<Usage> = Vec::new();
        for message in self.sent() {
            let (agent, figures) = match message["usage"].as_array() {
                // OpenAI's: [input, cached, output].
                Some(u) => {
                    let n = |i: usize| u[i].as_u64().unwrap_or(0);
                    (
                        message["agent"].as_str().unwrap_or("unknown").to_owned(),
                        [n(0), n(2), n(1), 0],
                    )
                }
                None => {
                    let u = &message["usage"];
                    let n = |k: &str| u[k].as_u64().unwrap_or(0);
                    (
                        "claude".to_owned(),
                        [
                            n("input_tokens"),
                            n("output_tokens"),
                            n("cache_read_input_tokens"),
                            n("cache_creation_input_tokens"),
                        ],
                    )
                }
            };
            let model = message["model"].as_str().unwrap_or_default().to_owned();
            match out
                .iter_mut()
                .find(|u| u.agent == agent && u.model == model)
            {
                Some(known) => {
                    for (sum, n) in known.tokens.iter_mut().zip(figures) {
                        *sum += n;
                    }
                    known.turns += 1;
                }
                None => out.push(Usage {
                    agent,
                    model,
                    tokens: figures,
                    turns: 1,
                }),
            }
        }
        out
    }

    /// The main turns one agent sent, in arrival order.
    pub fn turns_of(&self, agent: Agent) -> Vec<Turn> {
        self.main_turns()
            .into_iter()
            .filter(|t| t.agent == agent)
            .collect()
    }

    /// Messages of script panics (each answered with HTTP 400, which makes Claude fail).
    pub fn script_panics(&self) -> Vec<String> {
        self.shared.lock().unwrap().script_panics.clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

pub(super) fn header(request: &tiny_http::Request, name: &'static str) -> Option<String> {
    request
        .headers()
        .iter()
        .find(|h| h.field.equiv(name))
        .map(|h| h.value.as_str().to_owned())
}

pub(super) fn respond(request: tiny_http::Request, status: u16, content_type: &str, body: String) {
    respond_with(request, status, content_type, &[], body)
}

/// [`respond`], with headers of its own.
pub(super) fn respond_with(
    request: tiny_http::Request,
    status: u16,
    content_type: &str,
    headers: &[(&str, String)],
    body: String,
) {
    let mut response = tiny_http::Response::from_string(body)
        .with_status_code(status)
        .with_header(
            tiny_http::Header::from_bytes(&b"Content-Type"[..], content_type.as_bytes())
                .expect("valid header"),
        );
    for (name, value) in headers {
        response = response.with_header(
            tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header"),
        );
    }
    let _ = request.respond(response);
}

fn error_body(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

fn handle(
    mut request: tiny_http::Request,
    shared: &Mutex<Shared>,
    script: &Script,
    ids: &AtomicUsize,
) {
    let method = request.method().as_str().to_owned();
    let url = request.url().to_owned();
    let path = url.split('?').next().unwrap_or_default().to_owned();
    let mut raw = String::new();
    let _ = request.as_reader().read_to_string(&mut raw);

    // Chat Completions under any prefix: `/v1` (Ollama, vLLM, …), `/api/v1` (OpenRouter).
    let openai = path == "/v1/responses" || path.ends_with("/v1/chat/completions");
    let messages = path == "/v1/messages" || path == "/v1/messages/count_tokens";
    let gemini = super::gemini::is_gemini(&path);
    if method == "GET" && path.ends_with("/v1/models") {
        // What an OpenAI-compatible server lists (`anvil seats` asks whether it answers).
        let credential =
            header(&request, "Authorization").or_else(|| header(&request, "x-api-key"));
        shared
            .lock()
            .unwrap()
            .other
            .push((method, format!("{url} {}", credential.unwrap_or_default())));
        return respond(
            request,
            200,
            "application/json",
            json!({"object": "list", "data": [{"id": "scripted-model", "object": "model"}]})
                .to_string(),
        );
    }
    if method != "POST" || !(openai || messages || gemini) {
        shared.lock().unwrap().other.push((method, url));
        return respond(
            request,
            404,
            "application/json",
            error_body("not_found_error", "not found"),
        );
    }
    let body: Value = match serde_json::from_str(&raw) {
        Ok(body) => body,
        Err(e) => {
            // In the shape of the API the path belongs to.
            let message = format!("bad JSON: {e}");
            let body = match (openai, gemini) {
                (true, _) => super::openai::error_body("invalid_request_error", &message),
                (_, true) => super::gemini::error_body(400, &message),
                _ => error_body("invalid_request_error", &message),
            };
            return respond(request, 400, "application/json", body);
        }
    };
    if openai {
        return super::openai::handle(request, &path, body, shared, script, ids);
    }
    if gemini {
        return super::gemini::handle(request, &path, body, shared, script, ids);
    }
    if path == "/v1/messages/count_tokens" {
        shared.lock().unwrap().other.push((method, url));
        let tokens = (raw.len() / 4).max(1);
        return respond(
            request,
            200,
            "application/json",
            json!({"input_tokens": tokens}).to_string(),
        );
    }

    let session_id = header(&request, "X-Claude-Code-Session-Id");
    let user_agent = header(&request, "User-Agent").unwrap_or_default();
    let credential = header(&request, "x-api-key").or_else(|| header(&request, "Authorization"));
    let turn = admit(shared, |seq| {
        let mut turn = Turn::parse(seq, session_id, body);
        turn.path = path.clone();
        turn.credential = credential;
        // Only Claude Code speaks Messages here; its User-Agent confirms it when present.
        turn.agent = match Agent::from_user_agent(&user_agent) {
            Agent::Unknown => Agent::Claude,
            agent => agent,
        };
        turn
    });
    let reply = answer(&turn, shared, script);
    if let Some((status, message)) = &reply.error {
        let kind = match status {
            429 => "rate_limit_error",
            529 => "overloaded_error",
            400..=499 => "invalid_request_error",
            _ => "api_error",
        };
        respond(
            request,
            *status,
            "application/json",
            error_body(kind, message),
        );
        return answered(shared, &turn);
    }

    let message = build_message(&turn, &reply, ids);
    if turn.is_main() {
        shared.lock().unwrap().sent.push(message.clone());
    }
    if turn.stream {
        respond(request, 200, "text/event-stream", sse(&message))
    } else {
        respond(request, 200, "application/json", message.to_string())
    }
    answered(shared, &turn);
}

/// Numbers a parsed request (`make` gets its `seq`) and records it.
pub(super) fn admit(shared: &Mutex<Shared>, make: impl FnOnce(usize) -> Turn) -> Turn {
    let mut s = shared.lock().unwrap();
    let mut turn = make(s.turns.len());
    if turn.looks_main() {
        turn.main_index = Some(s.main_count);
        s.main_count += 1;
        let key = turn.session_id.clone().unwrap_or_default();
        let n = s.per_session.entry(key).or_default();
        turn.session_index = Some(*n);
        *n += 1;
    }
    s.turns.push(turn.clone());
    turn
}

/// Notes that `turn` has been answered.
pub(super) fn answered(shared: &Mutex<Shared>, turn: &Turn) {
    shared
        .lock()
        .unwrap()
        .answered
        .insert(turn.seq, std::time::Instant::now());
}

/// Notes what was sent back to a main turn.
pub(super) fn sent(shared: &Mutex<Shared>, message: Value) {
    shared.lock().unwrap().sent.push(message);
}

/// The script's reply to a main turn (a panic becomes an HTTP 400), or a harmless one to a
/// side request; after the reply's delay.
pub(super) fn answer(turn: &Turn, shared: &Mutex<Shared>, script: &Script) -> Reply {
    let reply = if turn.is_main() {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| script(turn))) {
            Ok(reply) => reply,
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "non-string panic".to_owned());
                shared.lock().unwrap().script_panics.push(msg.clone());
                Reply::error(400, format!("model script panicked: {msg}"))
            }
        }
    } else {
        Reply::text("ok")
    };

    if !reply.delay.is_zero() {
        std::thread::sleep(reply.delay);
    }
    reply
}

fn build_message(turn: &Turn, reply: &Reply, ids: &AtomicUsize) -> Value {
    let content: Vec<Value> = reply
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::ToolUse { name, input } => json!({
                "type": "tool_use",
                "id": format!("toolu_{:020}", ids.fetch_add(1, Ordering::Relaxed)),
                "name": name,
                "input": input,
            }),
        })
        .collect();
    let (input_tokens, output_tokens) = reply.usage.map_or_else(
        || {
            (
                turn.body["messages"].to_string().len() / 4 + 1,
                content.iter().map(|c| c.to_string().len() / 4 + 1).sum(),
            )
        },
        |(input, output)| (input as usize, output as usize),
    );
    json!({
        "id": format!("msg_{:020}", ids.fetch_add(1, Ordering::Relaxed)),
        "type": "message",
        "role": "assistant",
        "model": if turn.model.is_empty() { "claude-test" } else { &turn.model },
        "content": content,
        "stop_reason": reply.stop_reason(),
        "stop_sequence": null,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            // Distinct, made-up cache figures, so that a test sees each one carried through.
            "cache_read_input_tokens": if reply.usage.is_some() { 0 } else { input_tokens / 3 + 1 },
            "cache_creation_input_tokens": if reply.usage.is_some() { 0 } else { input_tokens / 7 + 2 },
        },
    })
}

/// The message as a server-sent event stream, the way the real API streams it.
fn sse(message: &Value) -> String {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    event(
        "message_start",
        json!({"type": "message_start", "message": start}),
    );
    for (index, block) in message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if block["type"] == "text" {
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                       "content_block": {"type": "text", "text": ""}}),
            );
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": block["text"]}}),
            );
        } else {
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": block["id"],
                                         "name": block["name"], "input": {}}}),
            );
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta",
                                 "partial_json": block["input"].to_string()}}),
            );
        }
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
    }
    event(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
               "usage": {"output_tokens": message["usage"]["output_tokens"]}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out
}

/// A body that is not JSON gets a 400 in the shape of the API its path belongs to, which is
/// what each agent's client knows how to read.
#[test]
fn bad_json_is_refused_in_each_apis_own_shape() {
    use std::io::{Read, Write};
    let server = ModelServer::start(|_| Reply::text("unused"));
    let refusal = |path: &str| {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port())).unwrap();
        let body = "{not json";
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 400"), "{head}");
        serde_json::from_str::<Value>(body).expect("a JSON error")
    };
    let messages = refusal("/v1/messages");
    assert_eq!(messages["type"], "error");
    assert_eq!(messages["error"]["type"], "invalid_request_error");
    for path in ["/v1/responses", "/v1/chat/completions"] {
        let openai = refusal(path);
        assert_eq!(openai["error"]["code"], "invalid_request_error", "{path}");
        assert!(openai.get("type").is_none(), "{path}: {openai}");
    }
}
