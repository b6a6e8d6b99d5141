//! The MCP server's stdio transport: one JSON-RPC message per line, in both directions.
//!
//! rmcp's own stdio transport drops what it cannot read without a word: a line that is not
//! JSON gets no answer (to avoid error storms between two programs that echo each other), and a
//! line longer than its limit (16 MiB) is discarded. A client then waits for an answer that
//! never comes. This transport answers instead, as JSON-RPC 2.0 says a server must:
//! - a line that is not JSON: `-32700` (parse error), `id` null;
//! - JSON that is no JSON-RPC message: `-32600` (invalid request), with its `id` when it has
//!   one (a notification anvil does not know, which expects no answer, is let go, as rmcp does);
//! - a line longer than [`MAX_LINE`]: `-32600` with a message that says so, and the `id` of the
//!   request when it can be read from the line's first or last bytes (a client writes `"id"`
//!   first or last); its bytes are read and dropped as they come, never held.
//!
//! Reading is cancel-safe (rmcp polls [`Transport::receive`] in a `select!`): a partial line
//! stays in the buffer for the next call. Answers to bad lines are written by a task of their
//! own, under the same lock as every other message, so that no two lines interleave.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

/// The longest line read, in bytes. anvil's tools take a few words (a search query is at most
/// 4 KiB): a request a thousand times that size is a mistake, answered with an error.
pub const MAX_LINE: usize = 1024 * 1024;

/// How much of an over-long line's start and end is kept, to find its `id`.
const KEPT: usize = 512;

/// JSON-RPC's parse error and invalid request codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

pub struct Stdio<R, W> {
    read: R,
    line: Vec<u8>,
    /// The line being read is longer than [`MAX_LINE`]: what is kept of it.
    oversized: Option<Oversized>,
    write: Arc<Mutex<W>>,
}

/// What is kept of an over-long line while the rest of it is dropped.
struct Oversized {
    len: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Oversized {
    fn keep_tail(&mut self, chunk: &[u8]) {
        if chunk.len() >= KEPT {
            self.tail.clear();
            self.tail.extend_from_slice(&chunk[chunk.len() - KEPT..]);
        } else {
            self.tail.extend_from_slice(chunk);
            let extra = self.tail.len().saturating_sub(KEPT);
            self.tail.drain(..extra);
        }
    }
}

/// What one read brought.
enum Read {
    Line,
    Oversized(Oversized),
    End,
}

impl<R, W> Stdio<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(read: R, write: W) -> Stdio<R, W> {
        Stdio {
            read,
            line: Vec::new(),
            oversized: None,
            write: Arc::new(Mutex::new(write)),
        }
    }

    /// Reads up to the end of a line, holding at most [`MAX_LINE`] bytes of it.
    async fn read_line(&mut self) -> Read {
        loop {
            let (consumed, ended) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) if !available.is_empty() => available,
                    // The end of the input, or a failing one: the session is over.
                    _ => return Read::End,
                };
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |at| at + 1);
                let chunk = &available[..take];
                if let Some(over) = &mut self.oversized {
                    over.len += take;
                    over.keep_tail(chunk);
                } else if self.line.len() + take > MAX_LINE {
                    let len = self.line.len() + take;
                    let tail = self.line[self.line.len().saturating_sub(KEPT)..].to_vec();
                    let mut head = std::mem::take(&mut self.line);
                    head.truncate(KEPT);
                    head.extend_from_slice(&chunk[..chunk.len().min(KEPT - head.len())]);
                    let mut over = Oversized { len, head, tail };
                    over.keep_tail(chunk);
                    self.oversized = Some(over);
                } else {
                    self.line.extend_from_slice(chunk);
                }
                (take, newline.is_some())
            };
            self.read.consume(consumed);
            if ended {
                return match self.oversized.take() {
                    Some(over) => Read::Oversized(over),
                    None => Read::Line,
                };
            }
        }
    }

    /// Writes `answer` as a line of its own, from a task that finishes even if the read that
    /// asked for it is cancelled.
    fn answer(&self, answer: Value) {
        let write = self.write.clone();
        tokio::spawn(async move {
            let mut line = answer.to_string().into_bytes();
            line.push(b'\n');
            let mut write = write.lock().await;
            let _ = write.write_all(&line).await;
            let _ = write.flush().await;
        });
    }
}

/// A JSON-RPC error answer.
fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

impl<R, W> Transport<RoleServer> for Stdio<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut write = write.lock().await;
            write.write_all(&line).await?;
            write.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Read::End => return None,
                Read::Oversized(over) => {
                    self.answer(error(
                        id_of_oversized(&over.head, &over.tail).unwrap_or(Value::Null),
                        INVALID_REQUEST,
                        format!(
                            "the message is {} bytes long; anvil's MCP server reads lines of at \
                             most {MAX_LINE} bytes",
                            over.len.saturating_sub(1)
                        ),
                    ));
                    continue;
                }
                Read::Line => {}
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                self.line = line;
                self.line.clear();
                continue;
            }
            let parsed = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text);
            let answer = match parsed {
                Ok(message) => {
                    self.line = line;
                    self.line.clear();
                    return Some(message);
                }
                Err(e) => match serde_json::from_slice::<Value>(text) {
                    Err(e) => error(Value::Null, PARSE_ERROR, format!("parse error: {e}")),
                    // A notification (no id) expects no answer, whatever it says.
                    Ok(value) if value.get("method").is_some() && value.get("id").is_none() => {
                        self.line = line;
                        self.line.clear();
                        continue;
                    }
                    Ok(value) => error(
                        value
                            .get("id")
                            .filter(|id| id.is_string() || id.is_number())
                            .cloned()
                            .unwrap_or(Value::Null),
                        INVALID_REQUEST,
                        format!("invalid request: {e}"),
                    ),
                },
            };
            self.line = line;
            self.line.clear();
            self.answer(answer);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}

/// The `id` of a request from the first and last bytes of its line: a top-level `"id"` member
/// that comes before any nested value (`{"jsonrpc":"2.0","id":7,…`), or that ends the object
/// (`…,"id":7}`, as the TypeScript SDK writes it). `None` when neither is there.
fn id_of_oversized(head: &[u8], tail: &[u8]) -> Option<Value> {
    id_at_start(head).or_else(|| id_at_end(tail))
}

fn id_at_start(head: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(head)
        .ok()
        .or_else(|| std::str::from_utf8(&head[..head.len().saturating_sub(3)]).ok())?;
    let mut rest = text.trim_start().strip_prefix('{')?;
    loop {
        rest = rest.trim_start();
        let (key, after) = json_string(rest)?;
        rest = after.trim_start().strip_prefix(':')?.trim_start();
        // A scalar value: a string, or a number, `true`, `false`, `null` up to `,` or `}`.
        let (value, after) = match rest.strip_prefix('"') {
            Some(_) => {
                let (_, after) = json_string(rest)?;
                (&rest[..rest.len() - after.len()], after)
            }
            None => {
                let end = rest.find([',', '}'])?;
                (rest[..end].trim_end(), &rest[end..])
            }
        };
        if key == "id" {
            return scalar_id(value);
        }
        rest = after.trim_start().strip_prefix(',')?;
    }
}

fn id_at_end(tail: &[u8]) -> Option<Value> {
    let start = (0..tail.len().min(4)).find(|&skip| std::str::from_utf8(&tail[skip..]).is_ok())?;
    let text = std::str::from_utf8(&tail[start..]).ok()?;
    let body = text.trim_end().strip_suffix('}')?.trim_end();
    let value_start = if let Some(inner) = body.strip_suffix('"') {
        let open = inner.rfind('"')?;
        if inner[..open].ends_with('\\') {
            return None;
        }
        open
    } else {
        body.rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.')))? + 1
    };
    let value = &body[value_start..];
    let before = body[..value_start].trim_end().strip_suffix(':')?.trim_end();
    let before = before.strip_suffix("\"id\"")?.trim_end();
    (before.ends_with(',') || before.ends_with('{'))
        .then(|| scalar_id(value))
        .flatten()
}

/// A JSON string at the start of `text`: its value and what follows it.
fn json_string(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('"')?;
    let mut escaped = false;
    for (at, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                let value = serde_json::from_str(&text[..at + 2]).ok()?;
                return Some((value, &body[at + 1..]));
            }
            _ => {}
        }
    }
    None
}

/// An `id` as JSON-RPC allows it: a string or a number.
fn scalar_id(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(|v| v.is_string() || v.is_number())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_an_over_long_request_is_read_from_either_end() {
        let big = "x".repeat(100);
        for (line, id) in [
            (
                format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"q":"{big}"#),
                json!(7),
            ),
            (
                format!(r#"{{ "id" : "a-1", "params":{{"q":"{big}"#),
                json!("a-1"),
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"q":"{big}"}},"id":42}}"#),
                json!(42),
            ),
            (format!(r#"…{big}"}},"id":"r\"9"}}"#), Value::Null),
            (format!(r#"…{big}"}},"id": "req-9" }}"#), json!("req-9")),
            (format!(r#"…{big}","x":{{"id":5}}}}"#), Value::Null),
            (format!(r#"…{big}"id":5}}"#), Value::Null),
            ("not json at all".to_owned(), Value::Null),
        ] {
            let bytes = line.as_bytes();
            let head = &bytes[..bytes.len().min(KEPT)];
            let tail = &bytes[bytes.len().saturating_sub(60)..];
            assert_eq!(
                id_of_oversized(head, tail).unwrap_or(Value::Null),
                id,
                "{line}"
            );
        }
    }
}
