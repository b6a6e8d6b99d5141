//! Which model answered a phase, what it cost in tokens and how long the turn took, read
//! from Claude Code's session transcript by the Stop hook.
//!
//! Claude Code appends one JSONL line per content block of each assistant message; every
//! line carries the message's `model`, its `usage` (input, output, cache read, cache write)
//! and a `timestamp`, and Claude Code's `version`. A turn is everything after the last
//! human-side message (the prompt, or the Stop hook's block reason that started this phase;
//! tool results do not end a turn): its API calls are told apart by message id, and each
//! call's usage is the one on its last line. Only the turn is read, from the end of the
//! transcript backwards ([`crate::claude::session_log::read_turn`]), so the cost stays flat
//! however long the session.
//!
//! `anvil run` adds what its `claude -p` runs cost in all ([`RunCost`], from their JSON
//! results: the price Claude Code computed, tokens, turns, durations, per model), recorded in
//! a bookkeeping commit of the line once the runs are over.

use serde_json::Value;

use crate::model::secrets::Intake;
use crate::record::schema::Meta;
use crate::record::usage::{ModelUsage, Usd};

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
    /// The other agent that hosted the phase, and its version (`qwen 0.24.4`): `None` for
    /// Claude Code and for a seat.
    pub host: Option<String>,
    /// The agent of the seat that played the phase; `None` for the host session.
    pub agent: Option<String>,
    pub agent_version: Option<String>,
    /// The seat's own session.
    pub agent_session: Option<String>,
    /// The price, where the agent reports one.
    pub cost: Option<Usd>,
    /// The client's own id of the turn's last answer (Claude Code's `message.id`): two turns
    /// in the same words are told apart by it (see `line::stop::guard`). Not recorded.
    pub turn: Option<String>,
}

impl Provenance {
    pub fn is_empty(&self) -> bool {
        *self == Provenance::default()
    }

    /// The texts an agent reported of its turn (the model, its version, its session), cleaned
    /// by `intake`: they become trailers, the transcript's heading and the hook's notice, and
    /// an agent's output is outside text like any other.
    pub fn clean(&mut self, intake: &mut Intake) {
        intake.clean_option("the model's name", &mut self.model);
        intake.clean_option("Claude Code's version", &mut self.claude_version);
        intake.clean_option("the host's version", &mut self.host);
        intake.clean_option("the agent's version", &mut self.agent_version);
        intake.clean_option("the agent's session", &mut self.agent_session);
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
        if other.host.is_some() {
            self.host.clone_from(&other.host);
        }
        if let Some(cost) = other.cost {
            self.cost.get_or_insert_with(Usd::default).nanos += cost.nanos;
        }
    }
}

impl Provenance {
    /// Puts the figures in a commit's trailers.
    pub(crate) fn write_to(&self, meta: &mut Meta) {
        meta.model.clone_from(&self.model);
        meta.tokens_input = Some(self.input_tokens);
        meta.tokens_output = Some(self.output_tokens);
        meta.tokens_cache_read = Some(self.cache_read_tokens);
        meta.tokens_cache_write = Some(self.cache_write_tokens);
        meta.duration_ms = self.duration_ms;
        meta.claude_version.clone_from(&self.claude_version);
        meta.host.clone_from(&self.host);
        meta.agent.clone_from(&self.agent);
        meta.agent_version.clone_from(&self.agent_version);
        meta.agent_session.clone_from(&self.agent_session);
        meta.cost_usd = self.cost;
    }

    /// The figures a commit's trailers hold; `None` when it recorded none.
    pub fn read_from(meta: &Meta) -> Option<Provenance> {
        let p = Provenance {
            model: meta.model.clone(),
            input_tokens: meta.tokens_input.unwrap_or(0),
            output_tokens: meta.tokens_output.unwrap_or(0),
            cache_read_tokens: meta.tokens_cache_read.unwrap_or(0),
            cache_write_tokens: meta.tokens_cache_write.unwrap_or(0),
            duration_ms: meta.duration_ms,
            claude_version: meta.claude_version.clone(),
            host: meta.host.clone(),
            agent: meta.agent.clone(),
            agent_version: meta.agent_version.clone(),
            agent_session: meta.agent_session.clone(),
            cost: meta.cost_usd,
            turn: None,
        };
        (!p.is_empty()).then_some(p)
    }

    /// Who played the phase, for people, when a seat did: `codex 0.169.0 (gpt-5.4)`; `None`
    /// for the host session.
    pub fn played_by(&self) -> Option<String> {
        let agent = self.agent.as_ref()?;
        let mut out = agent.clone();
        if let Some(version) = &self.agent_version {
            out.push(' ');
            out.push_str(version);
        }
        if let Some(model) = &self.model {
            out.push_str(&format!(" ({model})"));
        }
        Some(out)
    }

    /// The tokens and the price alone, for people: `150 in, 50 out, 7 cache read, 3 cache
    /// write tokens · $0.0125`.
    pub fn tokens_and_cost(&self) -> String {
        let tokens = format!(
            "{} in, {} out, {} cache read, {} cache write tokens",
            self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens
        );
        match self.cost {
            Some(cost) => format!("{tokens} · {}", cost.human()),
            None => tokens,
        }
    }

    /// One line for people: `claude-x · 150 in, 50 out, 7 cache read, 3 cache write · 5.5 s`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(agent) = &self.agent {
            parts.push(match &self.agent_version {
                Some(v) => format!("{agent} {v}"),
                None => agent.clone(),
            });
        }
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
        if let Some(cost) = self.cost {
            parts.push(cost.human());
        }
        if let Some(v) = self
            .claude_version
            .as_ref()
            .filter(|_| self.agent.is_none())
        {
            parts.push(format!("Claude Code {v}"));
        }
        parts.join(" · ")
    }

    /// The figures as JSON for `--json` outputs.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "model": self.model,
            "tokens": tokens_json(
                self.input_tokens,
                self.output_tokens,
                self.cache_read_tokens,
                self.cache_write_tokens
            ),
            "duration_ms": self.duration_ms,
            "claude_version": self.claude_version,
            "agent": self.agent,
            "agent_version": self.agent_version,
            "agent_session": self.agent_session,
            "cost_usd": self.cost.map(Usd::as_f64),
        })
    }
}

/// Token counts as `--json` outputs show them, wherever they come from.
fn tokens_json(input: u64, output: u64, cache_read: u64, cache_write: u64) -> serde_json::Value {
    serde_json::json!({
        "input": input,
        "output": output,
        "cache_read": cache_read,
        "cache_write": cache_write,
    })
}

/// What the `claude -p` runs of `anvil run` cost, as Claude Code reported each in its JSON
/// result: the price it computed, the tokens of every API call it made (the debaters' turns,
/// and any request of its own), turns and durations, and the same per model. The phases'
/// own figures come from the transcript ([`Provenance`]); these are the runs' totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunCost {
    /// `claude -p` runs (one per stretch between interactive pauses).
    pub runs: u32,
    pub cost: Usd,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Wall time of the runs, as Claude Code measured it.
    pub duration_ms: u64,
    /// Of which waiting for the API.
    pub api_duration_ms: u64,
    pub turns: u64,
    pub models: Vec<ModelUsage>,
}

impl RunCost {
    /// The figures of one run from `claude -p --output-format json`'s result; `None` when it
    /// holds none (not a result object).
    pub fn from_result(json: &Value) -> Option<RunCost> {
        if !json.is_object() || json.get("usage").is_none() && json.get("total_cost_usd").is_none()
        {
            return None;
        }
        let number = |v: &Value, key: &str| v[key].as_u64().unwrap_or(0);
        let usage = &json["usage"];
        let mut models: Vec<ModelUsage> = json["modelUsage"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(model, u)| ModelUsage {
                model: model.clone(),
                input_tokens: number(u, "inputTokens"),
                output_tokens: number(u, "outputTokens"),
                cache_read_tokens: number(u, "cacheReadInputTokens"),
                cache_write_tokens: number(u, "cacheCreationInputTokens"),
                cost: u["costUSD"]
                    .as_f64()
                    .and_then(Usd::from_f64)
                    .unwrap_or_default(),
            })
            .collect();
        models.sort_by(|a, b| a.model.cmp(&b.model));
        Some(RunCost {
            runs: 1,
            cost: json["total_cost_usd"]
                .as_f64()
                .and_then(Usd::from_f64)
                .unwrap_or_default(),
            input_tokens: number(usage, "input_tokens"),
            output_tokens: number(usage, "output_tokens"),
            cache_read_tokens: number(usage, "cache_read_input_tokens"),
            cache_write_tokens: number(usage, "cache_creation_input_tokens"),
            duration_ms: number(json, "duration_ms"),
            api_duration_ms: number(json, "duration_api_ms"),
            turns: number(json, "num_turns"),
            models,
        })
    }

    /// The models' names Claude Code reported, cleaned by `intake` before they are recorded.
    pub fn clean(&mut self, intake: &mut Intake) {
        for m in &mut self.models {
            intake.clean_in_place("the model's name", &mut m.model);
        }
    }

    /// Adds another run's figures (runs of one `anvil run`, or of a line, or of a debate).
    pub fn add(&mut self, other: &RunCost) {
        self.runs += other.runs;
        self.cost.nanos += other.cost.nanos;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.duration_ms += other.duration_ms;
        self.api_duration_ms += other.api_duration_ms;
        self.turns += other.turns;
        for m in &other.models {
            match self.models.iter_mut().find(|known| known.model == m.model) {
                Some(known) => {
                    known.input_tokens += m.input_tokens;
                    known.output_tokens += m.output_tokens;
                    known.cache_read_tokens += m.cache_read_tokens;
                    known.cache_write_tokens += m.cache_write_tokens;
                    known.cost.nanos += m.cost.nanos;
                }
                None => self.models.push(m.clone()),
            }
        }
        self.models.sort_by(|a, b| a.model.cmp(&b.model));
    }

    /// Puts the figures in a commit's trailers.
    pub(crate) fn write_to(&self, meta: &mut Meta) {
        meta.run_count = Some(self.runs);
        meta.run_cost_usd = Some(self.cost);
        meta.run_tokens_input = Some(self.input_tokens);
        meta.run_tokens_output = Some(self.output_tokens);
        meta.run_tokens_cache_read = Some(self.cache_read_tokens);
        meta.run_tokens_cache_write = Some(self.cache_write_tokens);
        meta.run_duration_ms = Some(self.duration_ms);
        meta.run_api_duration_ms = Some(self.api_duration_ms);
        meta.run_turns = Some(self.turns);
        meta.run_models.clone_from(&self.models);
    }

    /// The figures a commit's trailers hold; `None` when it recorded no run.
    pub fn read_from(meta: &Meta) -> Option<RunCost> {
        Some(RunCost {
            runs: meta.run_count?,
            cost: meta.run_cost_usd.unwrap_or_default(),
            input_tokens: meta.run_tokens_input.unwrap_or(0),
            output_tokens: meta.run_tokens_output.unwrap_or(0),
            cache_read_tokens: meta.run_tokens_cache_read.unwrap_or(0),
            cache_write_tokens: meta.run_tokens_cache_write.unwrap_or(0),
            duration_ms: meta.run_duration_ms.unwrap_or(0),
            api_duration_ms: meta.run_api_duration_ms.unwrap_or(0),
            turns: meta.run_turns.unwrap_or(0),
            models: meta.run_models.clone(),
        })
    }

    /// One line for people: `$0.0123 · 2 runs, 7 turns · 150 in, 50 out, … tokens · 12.5 s`.
    pub fn summary(&self) -> String {
        format!(
            "{} · {} run{}, {} turn{} · {} in, {} out, {} cache read, {} cache write tokens · {:.1} s",
            self.cost.human(),
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.turns,
            if self.turns == 1 { "" } else { "s" },
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.duration_ms as f64 / 1000.0
        )
    }

    /// The figures as JSON for `--json` outputs (the cost as a number of dollars, and exact
    /// as text).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "runs": self.runs,
            "cost_usd": self.cost.as_f64(),
            "cost_usd_exact": self.cost.decimal(),
            "tokens": tokens_json(
                self.input_tokens,
                self.output_tokens,
                self.cache_read_tokens,
                self.cache_write_tokens
            ),
            "duration_ms": self.duration_ms,
            "api_duration_ms": self.api_duration_ms,
            "turns": self.turns,
            "models": self.models.iter().map(|m| serde_json::json!({
                "model": m.model,
                "tokens": tokens_json(
                    m.input_tokens,
                    m.output_tokens,
                    m.cache_read_tokens,
                    m.cache_write_tokens
                ),
                "cost_usd": m.cost.as_f64(),
            })).collect::<Vec<_>>(),
        })
    }
}

/// What the runs of one `anvil run` cost, from their results as they come.
///
/// Claude Code reports each run's `usage` for that run alone. Its price (`total_cost_usd`) and
/// its `modelUsage` are the run's own in 2.1.19x, but from 2.1.33x a run that resumes a
/// session (`--resume`, which `anvil run` uses after each pause) reports them for the whole
/// session so far: adding them as they come would count every earlier run again (a line's
/// runs said `300 in` in all, and `600 in` for their one model). So a run's price and models
/// are taken as reported, or, when the session's previous report explains its own `usage`
/// better, as the difference from that report.
#[derive(Debug, Clone, Default)]
pub struct RunTally {
    pub total: RunCost,
    /// Each session's last report as it came: its price and its models.
    reported: Vec<(String, Usd, Vec<ModelUsage>)>,
}

impl RunTally {
    /// Adds the figures of one run's JSON result (nothing when it holds none).
    pub fn add_result(&mut self, json: &Value) {
        let Some(mut run) = RunCost::from_result(json) else {
            return;
        };
        let session = json["session_id"].as_str().unwrap_or_default().to_owned();
        let as_reported = (run.cost, run.models.clone());
        let before = self
            .reported
            .iter()
            .position(|(s, _, _)| !session.is_empty() && *s == session);
        if let Some(i) = before {
            let (_, cost, models) = &self.reported[i];
            if holds_earlier_runs(&run, models) {
                run.cost.nanos = run.cost.nanos.saturating_sub(cost.nanos);
                for m in &mut run.models {
                    if let Some(earlier) = models.iter().find(|e| e.model == m.model) {
                        m.input_tokens = m.input_tokens.saturating_sub(earlier.input_tokens);
                        m.output_tokens = m.output_tokens.saturating_sub(earlier.output_tokens);
                        m.cache_read_tokens = m
                            .cache_read_tokens
                            .saturating_sub(earlier.cache_read_tokens);
                        m.cache_write_tokens = m
                            .cache_write_tokens
                            .saturating_sub(earlier.cache_write_tokens);
                        m.cost.nanos = m.cost.nanos.saturating_sub(earlier.cost.nanos);
                    }
                }
                run.models.retain(|m| {
                    m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens
                        > 0
                        || m.cost.nanos > 0
                });
            }
            self.reported.remove(i);
        }
        self.reported.push((session, as_reported.0, as_reported.1));
        self.total.add(&run);
    }
}

/// Do `run`'s models, as reported, hold the session's earlier runs too (`before`: the
/// session's previous report)? They do when less `before` they come nearer the run's own
/// `usage` than as they are.
fn holds_earlier_runs(run: &RunCost, before: &[ModelUsage]) -> bool {
    let tokens = |models: &[ModelUsage]| -> u64 {
        models
            .iter()
            .map(|m| m.input_tokens + m.output_tokens + m.cache_read_tokens + m.cache_write_tokens)
            .sum()
    };
    let own = run.input_tokens + run.output_tokens + run.cache_read_tokens + run.cache_write_tokens;
    let (now, earlier) = (tokens(&run.models), tokens(before));
    earlier > 0 && now >= earlier && (now - earlier).abs_diff(own) < now.abs_diff(own)
}

/// The provenance of a transcript's last turn, `entries` (oldest first, led by the entry that
/// started the turn when it is known: see [`crate::claude::session_log::read_turn`]), if that
/// turn ended with `text` (`None`: any text). `None` when the turn holds no assistant message,
/// or when its last one is not `text`: the figures of the turn before must never be taken for
/// this one's.
pub(crate) fn from_turn(entries: &[Value], text: Option<&str>) -> Option<Provenance> {
    let (started, turn) = match entries.split_first() {
        Some((first, rest)) if is_turn_start(first) => (Some(first), rest),
        _ => (None, entries),
    };
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
        turn: last["message"]["id"].as_str().map(str::to_owned),
        ..Provenance::default()
    };
    for (_, usage) in &calls {
        out.input_tokens += number(usage, "input_tokens");
        out.output_tokens += number(usage, "output_tokens");
        out.cache_read_tokens += number(usage, "cache_read_input_tokens");
        out.cache_write_tokens += number(usage, "cache_creation_input_tokens");
    }
    let began = started
        .and_then(timestamp)
        .or_else(|| turn.first().and_then(timestamp));
    if let (Some(began), Some(ended)) = (began, timestamp(last)) {
        out.duration_ms = u64::try_from(ended.duration_since(began).as_millis()).ok();
    }
    Some(out)
}

/// A user entry that is not a tool result: the prompt or a hook's reason that starts a turn.
pub(crate) fn is_turn_start(entry: &Value) -> bool {
    // A Stop hook's `additionalContext` starts the next turn without a user entry (Claude Code
    // records it as an attachment).
    if entry["type"] == "attachment" {
        return entry["attachment"]["type"] == "hook_additional_context";
    }
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

    /// The provenance of the last turn of `tail` (whole lines; a line cut or written halfway
    /// is skipped), from the entry that started it, as the hook reads a transcript's end.
    fn from_transcript_tail(tail: &[u8], text: Option<&str>) -> Option<Provenance> {
        let entries: Vec<Value> = tail
            .split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice(line).ok())
            .collect();
        let start = entries.iter().rposition(is_turn_start).unwrap_or(0);
        from_turn(&entries[start..], text)
    }

    /// Handed the next prompt as `additionalContext`, the turn starts at the attachment Claude
    /// Code records for it: the previous phase's call is not counted again.
    #[test]
    fn a_turn_started_by_a_hooks_additional_context_counts_its_own_calls_only() {
        let mut tail = line(serde_json::json!({
            "type": "assistant", "timestamp": "2026-11-22T10:00:00Z", "version": "2.1.197",
            "message": {"id": "advocate", "model": "m", "usage": {"input_tokens": 900, "output_tokens": 90}}
        }));
        for kind in [
            "hook_success",
            "hook_system_message",
            "hook_additional_context",
        ] {
            tail += &line(serde_json::json!({
                "type": "attachment", "timestamp": "2026-11-22T10:00:01Z",
                "attachment": {"type": kind}
            }));
        }
        tail += &line(serde_json::json!({
            "type": "assistant", "timestamp": "2026-11-22T10:00:04Z", "version": "2.1.197",
            "message": {"id": "critic", "model": "m", "content": [{"type": "text", "text": "CRITIC"}],
                        "usage": {"input_tokens": 40, "output_tokens": 4}}
        }));
        let p = from_transcript_tail(tail.as_bytes(), Some("CRITIC")).unwrap();
        assert_eq!((p.input_tokens, p.output_tokens), (40, 4));
        assert_eq!(p.duration_ms, Some(3_000));
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
                turn: Some("b".into()),
                ..Provenance::default()
            }
        );
    }

    #[test]
    fn a_runs_result_gives_its_totals_and_models_and_runs_add_up() {
        let result = serde_json::json!({
            "type": "result", "subtype": "success", "is_error": false,
            "duration_ms": 12_345, "duration_api_ms": 9_000, "num_turns": 4,
            "total_cost_usd": 0.012_345_678_9,
            "usage": {"input_tokens": 100, "output_tokens": 40,
                      "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3,
                      "server_tool_use": {"web_search_requests": 0}},
            "modelUsage": {
                "claude-z": {"inputTokens": 90, "outputTokens": 38, "cacheReadInputTokens": 7,
                             "cacheCreationInputTokens": 3, "costUSD": 0.012},
                "claude-a": {"inputTokens": 10, "outputTokens": 2, "costUSD": 0.000_345_678_9},
            },
        });
        let one = RunCost::from_result(&result).unwrap();
        assert_eq!(one.runs, 1);
        assert_eq!(one.cost.decimal(), "0.012345679");
        assert_eq!(
            (
                one.input_tokens,
                one.output_tokens,
                one.cache_read_tokens,
                one.cache_write_tokens
            ),
            (100, 40, 7, 3)
        );
        assert_eq!(
            (one.duration_ms, one.api_duration_ms, one.turns),
            (12_345, 9_000, 4)
        );
        let names: Vec<&str> = one.models.iter().map(|m| m.model.as_str()).collect();
        assert_eq!(names, ["claude-a", "claude-z"]);
        assert_eq!(one.models[1].output_tokens, 38);

        let mut two = one.clone();
        two.add(&one);
        assert_eq!((two.runs, two.turns, two.input_tokens), (2, 8, 200));
        assert_eq!(two.cost.nanos, 2 * one.cost.nanos);
        assert_eq!(two.models[0].cost.nanos, 2 * one.models[0].cost.nanos);
        assert!(
            two.summary()
                .starts_with("$0.02 · 2 runs, 8 turns · 200 in"),
            "{}",
            two.summary()
        );

        let mut meta = crate::record::schema::Meta::default();
        assert_eq!(RunCost::read_from(&meta), None);
        two.write_to(&mut meta);
        let text = crate::record::schema::message("run", &meta);
        assert!(
            text.contains("\nAnvil-Run-Cost-Usd: 0.024691358\n"),
            "{text}"
        );
        assert!(
            text.contains("\nAnvil-Run-Model: input=20 output=4 cache_read=0 cache_write=0 cost_usd=0.000691358 model=claude-a\n"),
            "{text}"
        );
        assert_eq!(
            RunCost::read_from(&crate::record::schema::parse(&text).1),
            Some(two)
        );
        assert_eq!(
            RunCost::from_result(&serde_json::json!("not a result")),
            None
        );
    }

    /// Two runs of one session, as each client reports them: 2.1.197 each run's own figures,
    /// 2.1.332 the second run's price and models for the whole session (numbers as observed).
    #[test]
    fn a_resumed_sessions_runs_are_counted_once_whatever_the_client_reports() {
        let result = |usage: [u64; 4], cost: f64, models: [u64; 4], model: &str| {
            serde_json::json!({
                "type": "result", "session_id": "s", "num_turns": 1, "total_cost_usd": cost,
                "usage": {"input_tokens": usage[0], "output_tokens": usage[1],
                          "cache_read_input_tokens": usage[2],
                          "cache_creation_input_tokens": usage[3]},
                "modelUsage": {model: {"inputTokens": models[0], "outputTokens": models[1],
                                       "cacheReadInputTokens": models[2],
                                       "cacheCreationInputTokens": models[3], "costUSD": cost}},
            })
        };
        let first = [6609, 62, 2204, 947];
        let second = [12399, 93, 4135, 1776];
        let session_so_far = [19008, 155, 6339, 2723];
        let mut newest = RunTally::default();
        newest.add_result(&result(first, 0.0328518, first, "opus"));
        newest.add_result(&result(second, 0.0940148, session_so_far, "opus"));
        let mut oldest = RunTally::default();
        oldest.add_result(&result(first, 0.0328518, first, "opus"));
        oldest.add_result(&result(second, 0.061163, second, "opus"));
        for tally in [newest, oldest] {
            let total = &tally.total;
            assert_eq!((total.runs, total.input_tokens), (2, 19008));
            assert_eq!(total.models.len(), 1);
            let m = &total.models[0];
            assert_eq!(
                [
                    m.input_tokens,
                    m.output_tokens,
                    m.cache_read_tokens,
                    m.cache_write_tokens
                ],
                session_so_far
            );
            assert_eq!(total.cost, m.cost);
            assert_eq!(total.cost.decimal(), "0.0940148");
        }
        // Another session's report is never taken from this one.
        let mut two_sessions = RunTally::default();
        two_sessions.add_result(&result(first, 0.0328518, first, "opus"));
        let mut other = result(second, 0.061163, second, "opus");
        other["session_id"] = "t".into();
        two_sessions.add_result(&other);
        assert_eq!(two_sessions.total.models[0].input_tokens, 19008);
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
