//! The OpenAI side of the scripted model server: the Responses API (`POST /v1/responses`),
//! which Codex CLI speaks, and Chat Completions (`POST /v1/chat/completions`), which Copilot
//! CLI and Qwen Code speak. Requests are parsed into the same [`Turn`] as Anthropic's and
//! answered by the same script; a [`Reply`]'s text becomes output text, its tool uses become
//! function calls.
//!
//! What each agent sends (observed against this server):
//! - **Codex CLI 0.169.0** (`codex exec`, a `CODEX_HOME/config.toml` with
//!   `model_provider = "scripted"` and `[model_providers.scripted]` `base_url =
//!   "http://127.0.0.1:PORT/v1"`, `wire_api = "responses"`, `env_key`): `User-Agent:
//!   codex_exec/0.169.0 …`, headers `session-id` and `thread-id` (the thread `codex exec
//!   --json` names in `thread.started`), `"stream": true`. `instructions` and two `developer`
//!   messages carry its own system prompt (the sandbox mode among it), then a `user` message
//!   with `<environment_context>`, then the prompt as the last `user` message. Tools
//!   (`exec_command`, …) are `{"type":"function","name":…}`; a call's result comes back as a
//!   trailing `function_call_output` item with its `call_id`. It wants `response.created`,
//!   `response.output_item.added`, `response.content_part.added`,
//!   `response.output_text.delta`, `response.output_text.done`, `response.output_item.done`
//!   and `response.completed` (with `usage`: `input_tokens`, `input_tokens_details.
//!   cached_tokens`, `output_tokens`), as SSE events. An unknown model only draws a warning
//!   item ("Model metadata for `M` not found"). Its terminal UI also names each new thread
//!   with a request whose `text.format` is a JSON schema (`title`), answered as a side
//!   request.
//! - **Copilot CLI 1.0.102** (`COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:PORT/v1`,
//!   `COPILOT_PROVIDER_API_KEY`, `--model M`): `User-Agent: OpenAI/JS 5.20.1`, headers
//!   `x-initiator` and `x-interaction-type`, `"stream": true` with `stream_options.
//!   include_usage`. One `system` message, then `user` messages (the prompt after a
//!   `<current_datetime>` block; in plan mode after a plan-mode notice and prefixed
//!   `[[PLAN]] `). Tools `bash`, `view`, `create`, `edit`, `grep`, `glob`, …. Its JSON output
//!   masks every occurrence of the API key's value, so a test key must not be a common word.
//! - **Qwen Code 0.24.4** (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, and `~/.qwen/settings.json`
//!   `{"security":{"auth":{"selectedType":"openai"}}}`): `User-Agent: QwenCode/0.24.4 …`,
//!   `"stream": true`. After each turn it sends a background request of its own (a system
//!   prompt "You are now acting as the managed memory extraction subagent…"), which is a side
//!   request here: answered with plain text, never by the script.
//!
//! Chat Completions is answered with SSE chunks: the role, the text (or `tool_calls`), the
//! finish reason, a usage chunk (`prompt_tokens`, `completion_tokens`,
//! `prompt_tokens_details.cached_tokens`) and `data: [DONE]`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::model_server::{
    Agent, Api, Block, Reply, Script, Shared, Turn, admit, answer, answered, header, respond,
    respond_with, sent,
};

/// What Qwen Code's background memory extraction says first.
const QWEN_MEMORY_AGENT: &str = "managed memory extraction subagent";

pub(super) fn handle(
    request: tiny_http::Request,
    path: &str,
    body: Value,
    shared: &Mutex<Shared>,
    script: &Script,
    ids: &AtomicUsize,
) {
    let api = if path == "/v1/responses" {
        Api::Responses
    } else {
        Api::ChatCompletions
    };
    let agent = Agent::from_user_agent(&header(&request, "User-Agent").unwrap_or_default());
    let session_id = header(&request, "session-id");
    let credential = header(&request, "Authorization").or_else(|| header(&request, "x-api-key"));
    let turn = admit(shared, |seq| Turn {
        path: path.to_owned(),
        credential,
        ..parse(seq, api, agent, session_id, body)
    });
    let reply = answer(&turn, shared, script);
    if let Some((status, message)) = &reply.error {
        let kind = match status {
            429 => "rate_limit_exceeded",
            400..=499 => "invalid_request_error",
            _ => "server_error",
        };
        let mut headers = Vec::new();
        if let Some(after) = reply.retry_after {
            headers.push(("Retry-After", after.to_string()));
        }
        respond_with(
            request,
            *status,
            "application/json",
            &headers,
            error_body(kind, message),
        );
        return answered(shared, &turn);
    }
    let mut usage = usage(&turn, &reply);
    // OpenRouter (its API under `/api/v1`) reports each request's price in its usage.
    if path.starts_with("/api/") {
        usage.3 = Some(OPENROUTER_COST);
    }
    if turn.is_main() {
        sent(
            shared,
            json!({"api": format!("{api:?}"), "agent": agent.name(), "model": turn.model,
                   "usage": [usage.0, usage.1, usage.2], "reply": reply_json(&reply)}),
        );
    }
    let stream = match api {
        Api::Responses => responses_sse(&turn, &reply, &usage, ids),
        _ => chat_sse(&turn, &reply, &usage, ids),
    };
    respond(request, 200, "text/event-stream", stream);
    answered(shared, &turn);
}

/// What separates a tool's namespace from its name in a [`Reply::tool_use`]'s name
/// (`mcp__anvil::list_debates`), for the Responses API, whose namespaced tools are called by
/// name and namespace.
pub const NAMESPACED: &str = "::";

/// The price an OpenRouter-style endpoint (a path under `/api/`) reports for each request,
/// in dollars.
pub const OPENROUTER_COST: f64 = 0.00125;

/// An error as the OpenAI APIs shape it.
pub(super) fn error_body(kind: &str, message: &str) -> String {
    json!({"error": {"message": message, "type": kind, "code": kind}}).to_string()
}

fn reply_json(reply: &Reply) -> Value {
    reply
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(text) => json!({"text": text}),
            Block::ToolUse { name, input } => json!({"tool": name, "input": input}),
        })
        .collect()
}

/// The text of a message `content`: a string, or parts with `text` (`input_text`,
/// `output_text`, `text`).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Like [`text_of`], leaving out parts that are wholly a `<system-reminder>` (Qwen Code puts
/// one before the prompt).
fn prompt_text(content: &Value) -> String {
    match content {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .filter(|t| {
                let t = t.trim();
                !(t.starts_with("<system-reminder>") && t.ends_with("</system-reminder>"))
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => text_of(other),
    }
}

fn parse(seq: usize, api: Api, agent: Agent, session_id: Option<String>, body: Value) -> Turn {
    let items: Vec<Value> = match api {
        Api::Responses => body["input"].as_array().cloned().unwrap_or_default(),
        _ => body["messages"].as_array().cloned().unwrap_or_default(),
    };
    let is_user = |m: &Value| m["role"] == "user";
    let latest_user_text = items
        .iter()
        .rev()
        .find(|m| is_user(m))
        .map(|m| prompt_text(&m["content"]))
        .unwrap_or_default();
    let user_text = items
        .iter()
        .filter(|m| is_user(m))
        .map(|m| text_of(&m["content"]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut system: Vec<String> = body["instructions"]
        .as_str()
        .map(str::to_owned)
        .into_iter()
        .collect();
    system.extend(
        items
            .iter()
            .filter(|m| m["role"] == "system" || m["role"] == "developer")
            .map(|m| text_of(&m["content"])),
    );
    let system = system.join("\n");
    // The tool results that follow the last assistant turn.
    let tool_results = items
        .iter()
        .rev()
        .take_while(|m| match api {
            Api::Responses => m["type"] == "function_call_output",
            _ => m["role"] == "tool",
        })
        .map(|m| match api {
            Api::Responses => (
                m["call_id"].as_str().unwrap_or_default().to_owned(),
                match &m["output"] {
                    Value::String(s) => s.clone(),
                    other => text_of(other),
                },
                false,
            ),
            _ => (
                m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                text_of(&m["content"]),
                false,
            ),
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    // Codex's terminal UI names a new thread with a request of its own, which asks for a
    // JSON object by schema (`text.format`): a side request, as Qwen Code's memory one is.
    let asks_json = body["text"]["format"]["type"] == "json_schema";
    let main = !system.contains(QWEN_MEMORY_AGENT) && !asks_json;
    Turn {
        api,
        agent,
        received: std::time::Instant::now(),
        seq,
        main_index: None,
        session_index: None,
        session_id,
        path: String::new(),
        credential: None,
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        max_tokens: body["max_tokens"]
            .as_u64()
            .or_else(|| body["max_output_tokens"].as_u64())
            .unwrap_or(0),
        has_tools,
        latest_user_text,
        hook_context: None,
        hook_block: None,
        body,
        openai_tool_results: tool_results,
        openai_system: system,
        openai_user_text: user_text,
        openai_main: main,
    }
}

/// Made-up but distinct token figures, so that a test sees each carried through:
/// (input, cached, output, the price where one is reported); or those the reply names.
fn usage(turn: &Turn, reply: &Reply) -> (u64, u64, u64, Option<f64>) {
    if let Some((input, output)) = reply.usage {
        return (input, 0, output, None);
    }
    let input = (turn.body.to_string().len() / 4 + 1) as u64;
    let output: u64 = reply
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => t.len() as u64 / 4 + 1,
            Block::ToolUse { input, .. } => input.to_string().len() as u64 / 4 + 1,
        })
        .sum();
    (input, input / 3 + 1, output.max(1), None)
}

fn model_of(turn: &Turn) -> &str {
    if turn.model.is_empty() {
        "scripted-model"
    } else {
        &turn.model
    }
}

fn responses_sse(
    turn: &Turn,
    reply: &Reply,
    usage: &(u64, u64, u64, Option<f64>),
    ids: &AtomicUsize,
) -> String {
    let id = ids.fetch_add(1, Ordering::Relaxed);
    let response_id = format!("resp_{id:020}");
    let model = model_of(turn);
    let mut out = String::new();
    let mut event = |mut data: Value, name: &str| {
        data["type"] = json!(name);
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    event(
        json!({"response": {"id": response_id, "object": "response", "status": "in_progress",
                            "model": model, "output": []}}),
        "response.created",
    );
    let mut output = Vec::new();
    for (index, block) in reply.blocks.iter().enumerate() {
        match block {
            Block::Text(text) => {
                let item_id = format!("msg_{id:020}_{index}");
                let done = json!({"type": "message", "id": item_id, "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]});
                let mut added = done.clone();
                added["status"] = json!("in_progress");
                added["content"] = json!([]);
                event(
                    json!({"output_index": index, "item": added}),
                    "response.output_item.added",
                );
                event(
                    json!({"item_id": item_id, "output_index": index, "content_index": 0,
                           "part": {"type": "output_text", "text": "", "annotations": []}}),
                    "response.content_part.added",
                );
                event(
                    json!({"item_id": item_id, "output_index": index, "content_index": 0,
                           "delta": text}),
                    "response.output_text.delta",
                );
                event(
                    json!({"item_id": item_id, "output_index": index, "content_index": 0,
                           "text": text}),
                    "response.output_text.done",
                );
                event(
                    json!({"output_index": index, "item": done.clone()}),
                    "response.output_item.done",
                );
                output.push(done);
            }
            Block::ToolUse { name, input } => {
                let mut item = json!({"type": "function_call", "id": format!("fc_{id:020}_{index}"),
                    "call_id": format!("call_{id:020}_{index}"), "name": name,
                    "arguments": input.to_string(), "status": "completed"});
                // A tool of a namespace (Codex's MCP servers, `mcp__anvil`): called by its
                // name within it, the namespace beside it.
                if let Some((namespace, tool)) = name.split_once(NAMESPACED) {
                    item["namespace"] = json!(namespace);
                    item["name"] = json!(tool);
                }
                event(
                    json!({"output_index": index, "item": item.clone()}),
                    "response.output_item.added",
                );
                event(
                    json!({"output_index": index, "item": item.clone()}),
                    "response.output_item.done",
                );
                output.push(item);
            }
        }
    }
    let (input, cached, output_tokens, _) = *usage;
    event(
        json!({"response": {"id": response_id, "object": "response", "status": "completed",
            "model": model, "output": output,
            "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                      "output_tokens": output_tokens,
                      "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": input + output_tokens}}}),
        "response.completed",
    );
    out
}

fn chat_sse(
    turn: &Turn,
    reply: &Reply,
    usage: &(u64, u64, u64, Option<f64>),
    ids: &AtomicUsize,
) -> String {
    let id = format!("chatcmpl-{:020}", ids.fetch_add(1, Ordering::Relaxed));
    let model = model_of(turn);
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut out = String::new();
    let mut chunk = |choices: Value, usage: Option<Value>| {
        let mut data = json!({"id": id, "object": "chat.completion.chunk", "created": created,
                              "model": model, "choices": choices});
        if let Some(usage) = usage {
            data["usage"] = usage;
        }
        out.push_str(&format!("data: {data}\n\n"));
    };
    let delta = |d: Value| json!([{"index": 0, "delta": d, "finish_reason": null}]);
    chunk(delta(json!({"role": "assistant", "content": ""})), None);
    let text: Vec<&str> = reply
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            Block::ToolUse { .. } => None,
        })
        .collect();
    if !text.is_empty() {
        chunk(delta(json!({"content": text.join("\n\n")})), None);
    }
    let calls: Vec<Value> = reply
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { name, input } => Some((name, input)),
            Block::Text(_) => None,
        })
        .enumerate()
        .map(|(index, (name, input))| {
            json!({"index": index, "id": format!("call_{id}_{index}"), "type": "function",
                   "function": {"name": name, "arguments": input.to_string()}})
        })
        .collect();
    let finish = if calls.is_empty() {
        "stop"
    } else {
        chunk(delta(json!({"tool_calls": calls})), None);
        "tool_calls"
    };
    chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
        None,
    );
    let (input, cached, output, cost) = *usage;
    let mut usage = json!({"prompt_tokens": input, "completion_tokens": output,
                           "total_tokens": input + output,
                           "prompt_tokens_details": {"cached_tokens": cached}});
    if let Some(cost) = cost {
        usage["cost"] = json!(cost);
    }
    chunk(json!([]), Some(usage));
    out.push_str("data: [DONE]\n\n");
    out
}
