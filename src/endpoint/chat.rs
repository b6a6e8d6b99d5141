//! One Chat Completions request (`POST BASE_URL/chat/completions`) and its answer, streamed
//! (server-sent events: `data: {chunk}` lines, a usage chunk, `data: [DONE]`) where the server
//! streams, one JSON body where it does not.
//!
//! Every way an endpoint can fail or misbehave ends in an `Err` that says so in its own
//! words: unreachable, an HTTP error (`401` names the key's variable, `429` its `Retry-After`),
//! a redirect (never followed: the key goes to its endpoint only), an answer past
//! [`super::MAX_ANSWER`], a body that is not Chat Completions, an error inside the stream, or
//! no end before the deadline.

use std::io::{BufRead, BufReader, Read};
use std::time::Instant;

use serde_json::{Value, json};

use super::MAX_ANSWER;
use super::session::Message;

/// The most of an error's body read.
const MAX_ERROR_BODY: u64 = 64 * 1024;

pub struct Request<'a> {
    pub base_url: &'a str,
    pub key: Option<&'a str>,
    /// The variable the key came from, to name in a refusal.
    pub key_env: Option<&'a str>,
    pub model: &'a str,
    pub messages: &'a [Message],
    pub deadline: Instant,
}

/// What the endpoint answered.
#[derive(Debug, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub model: Option<String>,
    pub usage: Usage,
}

/// Tokens and price, as the endpoint reports them.
#[derive(Debug, Default, PartialEq)]
pub struct Usage {
    /// Prompt tokens, cached ones included (as OpenAI counts them).
    pub input: u64,
    pub output: u64,
    pub cached: u64,
    /// Dollars, where the endpoint says (OpenRouter's `usage.cost`).
    pub cost: Option<f64>,
}

impl Usage {
    fn read(usage: &Value) -> Option<Usage> {
        usage.is_object().then(|| Usage {
            input: usage["prompt_tokens"].as_u64().unwrap_or(0),
            output: usage["completion_tokens"].as_u64().unwrap_or(0),
            cached: usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .unwrap_or(0),
            cost: usage["cost"]
                .as_f64()
                .filter(|c| c.is_finite() && *c >= 0.0),
        })
    }
}

/// The HTTP client of one request: done within `timeout`, following no redirect (the key
/// goes to its endpoint and nowhere else), an HTTP error read as an answer.
fn client(timeout: std::time::Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .user_agent(format!("anvil/{}", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// Sends `request` and reads its answer, by the deadline.
pub fn send(request: &Request<'_>) -> Result<Reply, String> {
    let url = format!(
        "{}/chat/completions",
        request.base_url.trim_end_matches('/')
    );
    let left = request
        .deadline
        .saturating_duration_since(Instant::now())
        .max(std::time::Duration::from_millis(100));
    let agent = client(left);
    let body = json!({
        "model": request.model,
        "messages": request.messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let mut call = agent
        .post(&url)
        .header("Content-Type", "application/json")
        .header("Accept", "text/event-stream, application/json");
    if let Some(key) = request.key {
        call = call.header("Authorization", format!("Bearer {key}"));
    }
    let seconds = left.as_secs().max(1);
    let response = call.send(body.to_string()).map_err(|e| match e {
        ureq::Error::Timeout(_) => format!("no answer from {url} within {seconds} s"),
        e => format!("cannot reach {url}: {e}"),
    })?;
    let status = response.status();
    let headers = response.headers().clone();
    let streamed = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let reader = response
        .into_body()
        .into_with_config()
        .limit(if status.is_success() {
            MAX_ANSWER
        } else {
            MAX_ERROR_BODY
        })
        .reader();
    let failed_read = |e: std::io::Error| {
        let limit = e
            .get_ref()
            .is_some_and(|inner| inner.to_string().contains("larger than request limit"));
        if limit {
            format!(
                "the answer from {url} passed {} MiB; anvil stopped reading it",
                MAX_ANSWER / (1024 * 1024)
            )
        } else if e.kind() == std::io::ErrorKind::TimedOut
            || e.to_string().to_lowercase().contains("timeout")
        {
            format!("the answer from {url} did not end within {seconds} s")
        } else {
            format!("the answer from {url} broke off: {e}")
        }
    };
    if status.is_redirection() {
        let to = headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("elsewhere");
        return Err(format!(
            "{url} answered {status} (to {to}), and anvil follows no redirect (the key goes to \
             its endpoint only): put the URL it names in base_url"
        ));
    }
    if !status.is_success() {
        let mut text = String::new();
        let _ = BufReader::new(reader).read_to_string(&mut text);
        let said = error_words(&text);
        let mut why = format!("{status} from {url}: {said}");
        if status.as_u16() == 429 {
            match headers.get("retry-after").and_then(|v| v.to_str().ok()) {
                Some(after) => why.push_str(&format!("; retry after {} s", after.trim())),
                None => why.push_str("; it gave no time to retry after"),
            }
        }
        if matches!(status.as_u16(), 401 | 403) {
            match request.key_env {
                Some(var) => why.push_str(&format!(" (the key was read from ${var})")),
                None => why.push_str(" (no key was sent: name its variable, api_key_env)"),
            }
        }
        return Err(why);
    }
    if streamed {
        read_stream(BufReader::new(reader), &url).map_err(|e| match e {
            Broken::Io(e) => failed_read(e),
            Broken::Said(why) => why,
        })
    } else {
        let mut text = String::new();
        BufReader::new(reader)
            .read_to_string(&mut text)
            .map_err(failed_read)?;
        read_body(&text, &url)
    }
}

/// `GET BASE_URL/models` within `timeout`: how many models the endpoint lists, or why it did
/// not answer.
pub fn models(
    base_url: &str,
    key: Option<&str>,
    timeout: std::time::Duration,
) -> Result<String, String> {
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let agent = client(timeout);
    let mut call = agent.get(&url);
    if let Some(key) = key {
        call = call.header("Authorization", format!("Bearer {key}"));
    }
    let response = call.call().map_err(|e| match e {
        ureq::Error::Timeout(_) => format!("no answer from {url} within {} s", timeout.as_secs()),
        e => format!("cannot reach {url}: {e}"),
    })?;
    let status = response.status();
    let mut text = String::new();
    let _ = response
        .into_body()
        .into_with_config()
        .limit(MAX_ERROR_BODY * 16)
        .reader()
        .read_to_string(&mut text);
    if !status.is_success() {
        return Err(format!("{status} from {url}: {}", error_words(&text)));
    }
    let listed = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v["data"].as_array().map(Vec::len));
    Ok(match listed {
        Some(1) => "it answers (1 model listed)".to_owned(),
        Some(n) => format!("it answers ({n} models listed)"),
        None => "it answers".to_owned(),
    })
}

/// Why a stream could not be read.
enum Broken {
    Io(std::io::Error),
    Said(String),
}

/// The reply of a stream of chunks.
fn read_stream(mut stream: impl BufRead, url: &str) -> Result<Reply, Broken> {
    let mut reply = Reply::default();
    let mut line = String::new();
    loop {
        line.clear();
        if stream.read_line(&mut line).map_err(Broken::Io)? == 0 {
            break;
        }
        let Some(data) = line.trim_end().strip_prefix("data:") else {
            // Comments (`: keep-alive`), `event:` and `id:` lines, the blank line between
            // events.
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(data).map_err(|_| {
            Broken::Said(format!(
                "the stream from {url} holds a chunk that is not JSON: {}",
                cut(data)
            ))
        })?;
        if !chunk["error"].is_null() {
            return Err(Broken::Said(format!(
                "the stream from {url} ended in an error: {}",
                error_words(&chunk.to_string())
            )));
        }
        if let Some(text) = chunk["choices"][0]["delta"]["content"].as_str() {
            reply.text.push_str(text);
        }
        if let Some(model) = chunk["model"].as_str().filter(|m| !m.is_empty()) {
            reply.model = Some(model.to_owned());
        }
        if let Some(usage) = Usage::read(&chunk["usage"]) {
            reply.usage = usage;
        }
    }
    Ok(reply)
}

/// The reply of one JSON body (a server that does not stream).
fn read_body(text: &str, url: &str) -> Result<Reply, String> {
    let body: Value = serde_json::from_str(text).map_err(|_| {
        format!(
            "the answer from {url} is not Chat Completions JSON: {}",
            cut(text)
        )
    })?;
    if !body["error"].is_null() {
        return Err(format!("{url} answered an error: {}", error_words(text)));
    }
    let message = &body["choices"][0]["message"];
    let Some(content) = message["content"].as_str() else {
        return Err(format!(
            "the answer from {url} has no choices[0].message.content: {}",
            cut(text)
        ));
    };
    Ok(Reply {
        text: content.to_owned(),
        model: body["model"].as_str().map(str::to_owned),
        usage: Usage::read(&body["usage"]).unwrap_or_default(),
    })
}

/// What an error body says: OpenAI's `error.message` (and its code), a plain `error` or
/// `message`, else the body itself.
fn error_words(body: &str) -> String {
    let Ok(json) = serde_json::from_str::<Value>(body) else {
        return cut(body);
    };
    let error = &json["error"];
    let message = error["message"]
        .as_str()
        .or_else(|| error.as_str())
        .or_else(|| json["message"].as_str())
        .or_else(|| json["detail"].as_str());
    match (message, error["code"].as_str().or(error["type"].as_str())) {
        (Some(m), Some(code)) if !m.contains(code) => format!("{m} ({code})"),
        (Some(m), _) => m.to_owned(),
        (None, _) => cut(body),
    }
}

/// The start of `text`, for a message (the failure's cleaning cuts it again).
fn cut(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() > 300 {
        format!("{}…", text.chars().take(300).collect::<String>())
    } else if text.is_empty() {
        "(empty)".to_owned()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_gives_its_text_model_and_usage_and_ends_at_done() {
        let stream = "data: {\"model\":\"m-1\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n\
                      : keep-alive\n\n\
                      data: {\"choices\":[{\"delta\":{\"content\":\"Hello, \"}}]}\n\n\
                      data: {\"choices\":[{\"delta\":{\"content\":\"world\"}}]}\n\n\
                      data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":4},\"cost\":0.00042}}\n\n\
                      data: [DONE]\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"after\"}}]}\n";
        let Ok(reply) = read_stream(stream.as_bytes(), "u") else {
            panic!("a stream that reads")
        };
        assert_eq!(
            reply,
            Reply {
                text: "Hello, world".into(),
                model: Some("m-1".into()),
                usage: Usage {
                    input: 12,
                    output: 3,
                    cached: 4,
                    cost: Some(0.00042)
                }
            }
        );
    }

    #[test]
    fn a_broken_stream_or_body_is_a_failure_that_says_what_it_held() {
        let said = |r: Result<Reply, Broken>| match r {
            Err(Broken::Said(why)) => why,
            _ => panic!("a failure"),
        };
        let why = said(read_stream(&b"data: {not json\n"[..], "u"));
        assert!(why.contains("not JSON: {not json"), "{why}");
        let why = said(read_stream(
            &b"data: {\"error\":{\"message\":\"upstream overloaded\",\"code\":502}}\n"[..],
            "u",
        ));
        assert!(why.contains("upstream overloaded"), "{why}");
        let why = read_body("<html>oops</html>", "u").unwrap_err();
        assert!(
            why.contains("not Chat Completions JSON: <html>oops</html>"),
            "{why}"
        );
        let why = read_body("{\"choices\":[]}", "u").unwrap_err();
        assert!(why.contains("no choices[0].message.content"), "{why}");
        assert_eq!(
            error_words(r#"{"error":{"message":"model 'x' not found","type":"not_found"}}"#),
            "model 'x' not found (not_found)"
        );
        assert_eq!(
            error_words(r#"{"error":"model \"x\" not found, try pulling it first"}"#),
            "model \"x\" not found, try pulling it first"
        );
    }

    #[test]
    fn a_body_that_does_not_stream_is_read_whole() {
        let reply = read_body(
            r#"{"model":"m","choices":[{"message":{"role":"assistant","content":"Hi"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}"#,
            "u",
        )
        .unwrap();
        assert_eq!((reply.text.as_str(), reply.usage.input), ("Hi", 5));
    }
}
