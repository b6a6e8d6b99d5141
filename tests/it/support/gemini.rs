//! The Gemini side of the scripted model server: Google's Generative Language API, which Gemini
//! CLI speaks. Requests are parsed into the same [`Turn`] as the other APIs' and answered by the
//! same script; a [`Reply`]'s text becomes text parts, its tool uses become `functionCall`
//! parts.
//!
//! What Gemini CLI 0.61.0 sends (`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`, any
//! `GEMINI_API_KEY`, and `~/.gemini/settings.json` choosing `gemini-api-key`):
//! - `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` for each turn of the
//!   conversation, the key in `x-goog-api-key`: `contents` (`role` `user` or `model`, each with
//!   `parts`: `text`, `functionCall`, `functionResponse`), `systemInstruction`, `tools`
//!   (`functionDeclarations`). It wants server-sent events, each `data:` one
//!   `GenerateContentResponse` (`candidates[0].content.parts`, `finishReason`,
//!   `usageMetadata`: `promptTokenCount`, `candidatesTokenCount`, `cachedContentTokenCount`).
//! - `POST /v1beta/models/MODEL:generateContent` for side calls that ask for JSON by schema
//!   (`generationConfig.responseJsonSchema` or `responseSchema`): its model router (a
//!   `complexity_score`; not asked with an API key and none was seen here, with or without
//!   `-m`), its check of whether the model speaks next (`next_speaker`), and after many turns
//!   its loop check (`…_confidence`). A turn without `-m` goes to its default model. They
//!   are side requests here, answered with the schema filled: numbers 1 (a confidence 0),
//!   `next_speaker` `user`, an enum's first value, strings `scripted`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::model_server::{
    Agent, Api, Block, Reply, Script, Shared, Turn, admit, answer, answered, header, respond, sent,
};

/// An error as Google's APIs shape it.
pub(super) fn error_body(status: u16, message: &str) -> String {
    let kind = match status {
        400 => "INVALID_ARGUMENT",
        401 | 403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        _ => "INTERNAL",
    };
    json!({"error": {"code": status, "message": message, "status": kind}}).to_string()
}

/// Is `path` one of the API's (`/v1beta/models/MODEL:METHOD`)?
pub(super) fn is_gemini(path: &str) -> bool {
    path.starts_with("/v1beta/models/") && path.contains(':')
}

pub(super) fn handle(
    request: tiny_http::Request,
    path: &str,
    body: Value,
    shared: &Mutex<Shared>,
    script: &Script,
    ids: &AtomicUsize,
) {
    let (model, method) = path["/v1beta/models/".len()..]
        .split_once(':')
        .unwrap_or_default();
    let main = method == "streamGenerateContent";
    let credential = header(&request, "x-goog-api-key");
    let turn = admit(shared, |seq| Turn {
        path: path.to_owned(),
        credential,
        ..parse(seq, model, main, body)
    });
    if !main {
        // A side call: the schema it asks for, filled.
        let schema = &turn.body["generationConfig"];
        let schema = schema
            .get("responseJsonSchema")
            .or_else(|| schema.get("responseSchema"));
        let text = match schema {
            Some(schema) => fill("", schema).to_string(),
            None => "ok".to_owned(),
        };
        let reply = Reply::text(text);
        let usage = usage(&turn, &reply);
        respond(
            request,
            200,
            "application/json",
            response(&turn, &reply, &usage, ids).to_string(),
        );
        return answered(shared, &turn);
    }
    let reply = answer(&turn, shared, script);
    if let Some((status, message)) = &reply.error {
        respond(
            request,
            *status,
            "application/json",
            error_body(*status, message),
        );
        return answered(shared, &turn);
    }
    let usage = usage(&turn, &reply);
    sent(
        shared,
        json!({"api": "Gemini", "agent": "gemini", "model": turn.model,
               "usage": [usage.0, usage.1, usage.2]}),
    );
    let message = response(&turn, &reply, &usage, ids);
    respond(
        request,
        200,
        "text/event-stream",
        format!("data: {message}\r\n\r\n"),
    );
    answered(shared, &turn);
}

/// A value of `schema`, for the property `name`.
fn fill(name: &str, schema: &Value) -> Value {
    if let Some(values) = schema["enum"].as_array() {
        return values
            .iter()
            .find(|v| *v == "user")
            .or_else(|| values.first())
            .cloned()
            .unwrap_or(Value::Null);
    }
    let kind = schema["type"].as_str().unwrap_or("object").to_lowercase();
    match kind.as_str() {
        "object" => Value::Object(
            schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, sub)| (key.clone(), fill(key, sub)))
                .collect(),
        ),
        "array" => json!([]),
        "number" | "integer" if name.ends_with("_confidence") => json!(0),
        "number" | "integer" => json!(1),
        "boolean" => json!(false),
        _ => json!("scripted"),
    }
}

/// The text parts of `content`, as the model reads them: anvil hands Gemini CLI every `@` as
/// `\@` (else it would inline a file), which Gemini CLI sends on as it is.
fn text_of(content: &Value) -> String {
    content["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
        .replace("\\@", "@")
}

fn parse(seq: usize, model: &str, main: bool, body: Value) -> Turn {
    let contents: Vec<Value> = body["contents"].as_array().cloned().unwrap_or_default();
    let is_user = |c: &&Value| c["role"] == "user";
    let latest_user_text = contents
        .iter()
        .rev()
        .filter(is_user)
        .map(text_of)
        .find(|t| !t.is_empty())
        .unwrap_or_default();
    let user_text = contents
        .iter()
        .filter(is_user)
        .map(text_of)
        .collect::<Vec<_>>()
        .join("\n");
    // The function responses of the last user content, when it answers the model's calls.
    let tool_results = contents
        .last()
        .filter(is_user)
        .and_then(|c| c["parts"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let response = p.get("functionResponse")?;
            Some((
                response["name"].as_str().unwrap_or_default().to_owned(),
                response["response"].to_string(),
                false,
            ))
        })
        .collect();
    let tools = body["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["functionDeclarations"].is_array()));
    Turn {
        api: Api::Gemini,
        agent: Agent::Gemini,
        received: std::time::Instant::now(),
        seq,
        main_index: None,
        session_index: None,
        session_id: None,
        model: model.to_owned(),
        stream: main,
        max_tokens: body["generationConfig"]["maxOutputTokens"]
            .as_u64()
            .unwrap_or(0),
        has_tools: tools,
        latest_user_text,
        hook_context: None,
        hook_block: None,
        openai_tool_results: tool_results,
        openai_system: text_of(&body["systemInstruction"]),
        path: String::new(),
        credential: None,
        openai_user_text: user_text,
        openai_main: main,
        body,
    }
}

/// Made-up but distinct token figures: (input, cached, output); or those the reply names.
fn usage(turn: &Turn, reply: &Reply) -> (u64, u64, u64) {
    if let Some((input, output)) = reply.usage {
        return (input, 0, output);
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
    (input, input / 3 + 1, output.max(1))
}

/// The `GenerateContentResponse` of `reply`.
fn response(turn: &Turn, reply: &Reply, usage: &(u64, u64, u64), ids: &AtomicUsize) -> Value {
    let parts: Vec<Value> = reply
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(text) => json!({"text": text}),
            Block::ToolUse { name, input } => {
                json!({"functionCall": {"name": name, "args": input}})
            }
        })
        .collect();
    let (input, cached, output) = *usage;
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": parts},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {
            "promptTokenCount": input,
            "cachedContentTokenCount": cached,
            "candidatesTokenCount": output,
            "totalTokenCount": input + output,
        },
        "modelVersion": turn.model,
        "responseId": format!("resp_{:020}", ids.fetch_add(1, Ordering::Relaxed)),
    })
}
