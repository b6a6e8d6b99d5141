//! Which model answered a phase, what it cost in tokens and how long the turn took, read
//! from Claude Code's session transcript by the Stop hook.
//!
//! Claude Code appends one JSONL line per content block of each assistant message; every
//! line carries the message's `model`, its `usage` (input, output, cache read, cache write)
//! and a `timestamp`, and Claude Code's `version`. A turn is everything after the last
//! human-side message (the prompt, or the Stop hook's block reason that started this phase;
//! tool results do not end a turn): its API calls are told apart by message id, and each
//! call's usage is the one on its last line. Only the end of the transcript is read (the
//! same bounded tail the hook reads for the text), so the cost stays flat however long the
//! session.

use serde_json::Value;

/// What one phase cost, as far as the transcript tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The model of the turn's last answer (`claude-sonnet-4-5`, …).
    pub model: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// From the message that started the turn to the last answer, in milliseconds.
    pub duration_ms: Option<u64>,
    /// The Claude Code version that wrote the transcript.
    pub claude_version: Option<String>,
}

impl Provenance {
    pub fn is_empty(&self) -> bool {
        *self == Provenance::default()
    }

    /// Adds another phase's figures (for a line's or a debate's totals).
    pub fn add(&mut self, other: &Provenance) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        if let Some(ms) = other.duration_ms {
            *self.duration_ms.get_or_insert(0) += ms;
        }
        if other.model.is_some() {
            self.model.clone_from(&other.model);
        }
        if other.claude_version.is_some() {
            self.claude_version.clone_from(&other.claude_version);
        }
    }
}

impl Provenance {
    /// Puts the figures in a commit's trailers.
    pub fn write_to(&self, meta: &mut crate::commit::Meta) {
        meta.model.clone_from(&self.model);
        meta.tokens_input = Some(self.input_tokens);
        meta.tokens_output = Some(self.output_tokens);
        meta.tokens_cache_read = Some(self.cache_read_tokens);
        meta.tokens_cache_write = Some(self.cache_write_tokens);
        meta.duration_ms = self.duration_ms;
        meta.claude_version.clone_from(&self.claude_version);
    }

    /// The figures a commit's trailers hold; `None` when it recorded none.
    pub fn read_from(meta: &crate::commit::Meta) -> Option<Provenance> {
        let p = Provenance {
            model: meta.model.clone(),
            input_tokens: meta.tokens_input.unwrap_or(0),
            output_tokens: meta.tokens_output.unwrap_or(0),
            cache_read_tokens: meta.tokens_cache_read.unwrap_or(0),
            cache_write_tokens: meta.tokens_cache_write.unwrap_or(0),
            duration_ms: meta.duration_ms,
            claude_version: meta.claude_version.clone(),
        };
        (!p.is_empty()).then_some(p)
    }

    /// One line for people: `claude-x · 150 in, 50 out, 7 cache read, 3 cache write · 5.5 s`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(model) = &self.model {
            parts.push(model.clone());
        }
        parts.push(format!(
            "{} in, {} out, {} cache read, {} cache write tokens",
            self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens
        ));
        if let Some(ms) = self.duration_ms {
            parts.push(format!("{:.1} s", ms as f64 / 1000.0));
        }
        if let Some(v) = &self.claude_version {
            parts.push(format!("Claude Code {v}"));
        }
        parts.join(" · ")
    }

    /// The figures as JSON for `--json` outputs.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "model": self.model,
            "tokens": {
                "input": self.input_tokens,
                "output": self.output_tokens,
                "cache_read": self.cache_read_tokens,
                "cache_write": self.cache_write_tokens,
            },
            "duration_ms": self.duration_ms,
            "claude_version": self.claude_version,
        })
    }
}

/// The last turn's provenance in `tail`, the end of a transcript (whole lines; a line cut at
/// the start or written halfway is skipped), if that turn ended with `text` (`None`: any
/// text). `None` when the tail holds no assistant message, or when its last one is not
/// `text`: Claude Code writes its transcript a moment after the turn, and the figures of the
/// turn before must not be taken for this one's.
pub fn from_transcript_tail(tail: &[u8], text: Option<&str>) -> Option<Provenance> {
    let entries: Vec<Value> = tail
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .collect();
    // The turn starts after the last human-side entry.
    let start = entries.iter().rposition(is_turn_start).map_or(0, |i| i + 1);
    let turn = &entries[start..];
    let mut calls: Vec<(String, &Value)> = Vec::new();
    let mut last_assistant = None;
    for entry in turn {
        if entry["type"] != "assistant" {
            continue;
        }
        let message = &entry["message"];
        let id = message["id"].as_str().unwrap_or_default().to_owned();
        match calls.iter_mut().find(|(known, _)| *known == id) {
            // A later line of the same call has the final usage.
            Some(call) => call.1 = &message["usage"],
            None => calls.push((id, &message["usage"])),
        }
        last_assistant = Some(entry);
    }
    let last = last_assistant?;
    if let Some(text) = text {
        let id = &last["message"]["id"];
        let blocks: Vec<&str> = turn
            .iter()
            .filter(|e| e["type"] == "assistant" && e["message"]["id"] == *id)
            .flat_map(|e| e["message"]["content"].as_array().into_iter().flatten())
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .filter(|t| !t.trim().is_empty())
            .collect();
        if blocks.is_empty() || !blocks.iter().all(|b| text.contains(b.trim())) {
            return None;
        }
    }
    let number = |usage: &Value, key: &str| usage[key].as_u64().unwrap_or(0);
    let mut out = Provenance {
        model: last["message"]["model"]
            .as_str()
            .filter(|m| !m.is_empty() && *m != "<synthetic>")
            .map(str::to_owned),
        claude_version: last["version"].as_str().map(str::to_owned),
        ..Provenance::default()
    };
    for (_, usage) in &calls {
        out.input_tokens += number(usage, "input_tokens");
        out.output_tokens += number(usage, "output_tokens");
        out.cache_read_tokens += number(usage, "cache_read_input_tokens");
        out.cache_write_tokens += number(usage, "cache_creation_input_tokens");
    }
    let began = start
        .checked_sub(1)
        .and_then(|i| timestamp(&entries[i]))
        .or_else(|| turn.first().and_then(timestamp));
    if let (Some(began), Some(ended)) = (began, timestamp(last)) {
        out.duration_ms = u64::try_from(ended.duration_since(began).as_millis()).ok();
    }
    Some(out)
}

/// A user entry that is not a tool result: the prompt or a hook's reason that starts a turn.
fn is_turn_start(entry: &Value) -> bool {
    if entry["type"] != "user" {
        return false;
    }
    match &entry["message"]["content"] {
        Value::Array(blocks) => !blocks.iter().any(|b| b["type"] == "tool_result"),
        _ => true,
    }
}

fn timestamp(entry: &Value) -> Option<jiff::Timestamp> {
    entry["timestamp"].as_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(value: Value) -> String {
        format!("{value}\n")
    }

    #[test]
    fn a_turn_sums_its_calls_and_takes_each_calls_last_usage() {
        let mut tail = String::from("{\"cut\": tru\n");
        tail += &line(serde_json::json!({
            "type": "assistant", "timestamp": "2026-11-22T10:00:00Z", "version": "2.1.0",
            "message": {"id": "old", "model": "m-old", "usage": {"input_tokens": 999, "output_tokens": 999}}
        }));
        tail += &line(serde_json::json!({
            "type": "user", "timestamp": "2026-11-22T10:00:10Z",
            "message": {"role": "user", "content": "Stop hook feedback: next phase"}
        }));
        tail += &line(serde_json::json!({
            "type": "assistant", "timestamp": "2026-11-22T10:00:12Z", "version": "2.1.5",
            "message": {"id": "a", "model": "claude-x", "content": [{"type": "tool_use"}],
                        "usage": {"input_tokens": 100, "output_tokens": 1, "cache_read_input_tokens": 7}}
        }));
        tail += &line(serde_json::json!({
            "type": "assistant", "timestamp": "2026-11-22T10:00:13Z", "version": "2.1.5",
            "message": {"id": "a", "model": "claude-x",
                        "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 7}}
        }));
        tail += &line(serde_json::json!({
            "type": "user", "timestamp": "2026-11-22T10:00:14Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}
        }));
        tail += &line(serde_json::json!({
            "type": "assistant", "timestamp": "2026-11-22T10:00:15.5Z", "version": "2.1.5",
            "message": {"id": "b", "model": "claude-y",
                        "usage": {"input_tokens": 50, "output_tokens": 30, "cache_creation_input_tokens": 3}}
        }));
        tail += "{\"type\": \"assistant\", \"half";
        let p = from_transcript_tail(tail.as_bytes(), None).unwrap();
        assert_eq!(
            p,
            Provenance {
                model: Some("claude-y".into()),
                input_tokens: 150,
                output_tokens: 50,
                cache_read_tokens: 7,
                cache_write_tokens: 3,
                duration_ms: Some(5_500),
                claude_version: Some("2.1.5".into()),
            }
        );
    }

    #[test]
    fn no_assistant_message_means_nothing_known() {
        assert_eq!(from_transcript_tail(b"", None), None);
        assert_eq!(
            from_transcript_tail(line(serde_json::json!({"type": "user"})).as_bytes(), None),
            None
        );
    }
}
