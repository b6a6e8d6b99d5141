//! A request as the scripted server saw it: which API, agent and model sent it, and what a
//! script reads of it (the latest user text, a Stop hook's feedback, tool results, deferred
//! tools); and [`discover`], a scripted model's way to a deferred MCP tool.

use serde_json::{Value, json};

use super::Reply;

/// Which API a request came in through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages (`/v1/messages`): Claude Code.
    Messages,
    /// OpenAI Responses (`/v1/responses`): Codex CLI.
    Responses,
    /// OpenAI Chat Completions (`/v1/chat/completions`): Copilot CLI, Qwen Code, OpenCode.
    ChatCompletions,
    /// Google's Generative Language API (`/v1beta/models/MODEL:streamGenerateContent`):
    /// Gemini CLI.
    Gemini,
}

/// Which agent sent a request, told by its `User-Agent` (see [`super::openai`] for what each
/// sends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Copilot,
    Qwen,
    /// anvil itself, playing an endpoint's seat (`anvil endpoint-turn`).
    Anvil,
    Gemini,
    OpenCode,
    Unknown,
}

impl Agent {
    pub(in crate::support) fn from_user_agent(user_agent: &str) -> Agent {
        if user_agent.starts_with("claude-cli") {
            Agent::Claude
        } else if user_agent.starts_with("codex_") {
            Agent::Codex
        } else if user_agent.starts_with("QwenCode") {
            Agent::Qwen
        } else if user_agent.starts_with("OpenAI/JS") {
            Agent::Copilot
        } else if user_agent.starts_with("anvil/") {
            Agent::Anvil
        } else if user_agent.starts_with("opencode") {
            Agent::OpenCode
        } else {
            Agent::Unknown
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
            Agent::Anvil => "anvil",
            Agent::Gemini => "gemini",
            Agent::OpenCode => "opencode",
            Agent::Unknown => "unknown",
        }
    }
}

/// One parsed model request (`POST /v1/messages`, `/v1/responses` or `/v1/chat/completions`).
#[derive(Debug, Clone)]
pub struct Turn {
    pub api: Api,
    /// The agent that sent it, by its `User-Agent`.
    pub agent: Agent,
    /// When the request arrived; [`ModelServer::answered_at`] says when it was answered.
    pub received: std::time::Instant,
    /// Index among every `/v1/messages` request this server received (0-based).
    pub seq: usize,
    /// Index among main turns (0-based); `None` for side requests.
    pub main_index: Option<usize>,
    /// Index among main turns of the same Claude session (by `X-Claude-Code-Session-Id`).
    pub session_index: Option<usize>,
    /// Value of the `X-Claude-Code-Session-Id` header, when present.
    pub session_id: Option<String>,
    /// The request's path (`/v1/chat/completions`, `/api/v1/chat/completions`, …).
    pub path: String,
    /// The credential it carried: its `Authorization` or `x-api-key` header.
    pub credential: Option<String>,
    pub model: String,
    pub stream: bool,
    pub max_tokens: u64,
    pub has_tools: bool,
    /// Text of the last `user` message: its text blocks and tool_result contents, joined with
    /// `"\n"`, leaving out blocks that are wholly a `<system-reminder>…</system-reminder>`.
    pub latest_user_text: String,
    /// What a Stop hook handed over as `additionalContext`, when the latest user message
    /// carries it.
    pub hook_context: Option<String>,
    /// What a Stop hook handed over as a `block` reason, when the latest user message carries
    /// it (either client's form).
    pub hook_block: Option<String>,
    /// The whole request body.
    pub body: Value,
    /// Tool results the request brings back, for the OpenAI and Gemini APIs (Anthropic's are
    /// read from the latest user message by [`Turn::tool_results`]).
    pub(in crate::support) openai_tool_results: Vec<(String, String, bool)>,
    /// The system prompt, for the OpenAI and Gemini APIs.
    pub(in crate::support) openai_system: String,
    /// Every user message's text, for the OpenAI and Gemini APIs.
    pub(in crate::support) openai_user_text: String,
    /// Whether this is a main turn, as the OpenAI and Gemini sides tell it (an agent's
    /// background request, such as Qwen Code's memory extraction or Gemini CLI's JSON side
    /// calls, is not).
    pub(in crate::support) openai_main: bool,
}

impl Turn {
    /// Every string in the request (instructions, messages, tool calls and results), joined:
    /// for "does any part of this request hold X" assertions that JSON escaping would defeat.
    pub fn all_text(&self) -> String {
        fn walk(v: &Value, out: &mut String) {
            match v {
                Value::String(s) => {
                    out.push_str(s);
                    out.push('\n');
                }
                Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
                Value::Object(map) => map.values().for_each(|i| walk(i, out)),
                _ => {}
            }
        }
        let mut out = String::new();
        walk(&self.body, &mut out);
        out
    }

    pub(super) fn parse(seq: usize, session_id: Option<String>, body: Value) -> Turn {
        let model = body["model"].as_str().unwrap_or_default().to_owned();
        let stream = body["stream"].as_bool().unwrap_or(false);
        let max_tokens = body["max_tokens"].as_u64().unwrap_or(0);
        let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        let latest_user_text = last_user_message(&body)
            .map(|m| content_text(&m["content"], false))
            .unwrap_or_default();
        let hook_context = last_user_message(&body).and_then(|m| hook_context(&m["content"]));
        let hook_block = last_user_message(&body).and_then(|m| hook_block(&m["content"]));
        Turn {
            api: Api::Messages,
            agent: Agent::Claude,
            received: std::time::Instant::now(),
            seq,
            main_index: None,
            session_index: None,
            session_id,
            path: String::new(),
            credential: None,
            model,
            stream,
            max_tokens,
            has_tools,
            latest_user_text,
            hook_context,
            hook_block,
            body,
            openai_tool_results: Vec::new(),
            openai_system: String::new(),
            openai_user_text: String::new(),
            openai_main: false,
        }
    }

    /// Whether this is a main conversation turn (the kind the script answers).
    pub fn is_main(&self) -> bool {
        self.main_index.is_some()
    }

    pub(super) fn looks_main(&self) -> bool {
        match self.api {
            Api::Messages => {
                self.has_tools && self.max_tokens > 1 && self.body["messages"].is_array()
            }
            Api::Responses | Api::ChatCompletions | Api::Gemini => self.openai_main,
        }
    }

    /// The main-turn counter (0-based). Panics on a side request.
    pub fn index(&self) -> usize {
        self.main_index.expect("side request has no main index")
    }

    /// `Some(prompt)` when the latest user message carries what a Stop hook handed over to
    /// keep the turn going: its `block` reason ("Stop hook feedback") or its
    /// `additionalContext`.
    pub fn stop_hook_feedback(&self) -> Option<&str> {
        self.stop_hook_block().or(self.hook_context.as_deref())
    }

    /// `Some(reason)` when the latest user message is a Stop hook's `block` feedback.
    pub fn stop_hook_block(&self) -> Option<&str> {
        self.hook_block.as_deref()
    }

    /// The tool calls of the latest assistant message that the latest user message answers:
    /// (tool name, result text, is_error). A `ToolSearch` result's text is the names it
    /// loaded, one a line.
    pub fn answered_calls(&self) -> Vec<(String, String, bool)> {
        let names: std::collections::HashMap<&str, &str> = self
            .messages()
            .iter()
            .rev()
            .find(|m| m["role"] == "assistant")
            .map(calls)
            .into_iter()
            .flatten()
            .collect();
        self.tool_results()
            .into_iter()
            .map(|(id, text, error)| {
                let name = names.get(id.as_str()).copied().unwrap_or_default();
                (name.to_owned(), text, error)
            })
            .collect()
    }

    /// The deferred tools announced to the model so far (2.1.33x): the names listed after
    /// "…are now available via ToolSearch…:" in any message or the system prompt.
    pub fn deferred_tools(&self) -> Vec<String> {
        const MARK: &str = "available via ToolSearch";
        let mut texts = vec![self.system_text()];
        texts.extend(
            self.messages()
                .iter()
                .map(|m| content_text(&m["content"], true)),
        );
        let mut out = Vec::new();
        for text in &texts {
            for (at, _) in text.match_indices(MARK) {
                let rest = &text[at..];
                let Some(start) = rest.find(":\n") else {
                    continue;
                };
                out.extend(
                    rest[start + 2..]
                        .lines()
                        .take_while(|l| !l.trim().is_empty())
                        .map(|l| l.trim().to_owned()),
                );
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// How many times the model called `tool` in this conversation.
    pub fn calls_of(&self, tool: &str) -> usize {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .flat_map(calls)
            .filter(|(_, name)| *name == tool)
            .count()
    }

    /// The latest user message, raw.
    pub fn latest_user_message(&self) -> Option<&Value> {
        last_user_message(&self.body)
    }

    /// Like `latest_user_text` but keeping `<system-reminder>` blocks.
    pub fn latest_user_text_raw(&self) -> String {
        self.latest_user_message()
            .map(|m| content_text(&m["content"], true))
            .unwrap_or_default()
    }

    /// The prompt the request answers, through any API: a Stop hook's feedback (Claude), else
    /// the latest user content with whatever wraps it (Claude's reminders, Copilot's plan
    /// notice).
    pub fn prompt(&self) -> String {
        match self.api {
            Api::Messages => match self.stop_hook_feedback() {
                Some(feedback) => feedback.to_owned(),
                None => self.latest_user_text_raw(),
            },
            _ => self.latest_user_text.clone(),
        }
    }

    /// `tool_result` blocks of the latest user message: `(tool_use_id, content text, is_error)`.
    pub fn tool_results(&self) -> Vec<(String, String, bool)> {
        if self.api != Api::Messages {
            return self.openai_tool_results.clone();
        }
        let Some(Value::Array(blocks)) = self.latest_user_message().map(|m| &m["content"]) else {
            return Vec::new();
        };
        blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                (
                    b["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                    content_text(&b["content"], true),
                    b["is_error"].as_bool().unwrap_or(false),
                )
            })
            .collect()
    }

    /// All text of all `user` messages (system reminders included), for "did X reach the
    /// prompt" assertions.
    pub fn all_user_text(&self) -> String {
        if self.api != Api::Messages {
            return self.openai_user_text.clone();
        }
        self.messages()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| content_text(&m["content"], true))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The system prompt's text.
    pub fn system_text(&self) -> String {
        if self.api != Api::Messages {
            return self.openai_system.clone();
        }
        content_text(&self.body["system"], true)
    }

    /// Names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    // Gemini's declarations sit one level down.
                    .flat_map(|t| match t["functionDeclarations"].as_array() {
                        Some(declared) => declared.iter().collect(),
                        None => vec![t],
                    })
                    .filter_map(|t| {
                        t["name"]
                            .as_str()
                            .or_else(|| t["function"]["name"].as_str())
                            .map(str::to_owned)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The definition of the tool `name`, if offered.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.body["tools"]
            .as_array()?
            .iter()
            .find(|t| t["name"] == name)
    }

    /// The request's `messages`.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// The tool calls of an assistant message, `(id, tool)`: its `tool_use` blocks (Anthropic) or
/// its `tool_calls` (Chat Completions).
fn calls(message: &Value) -> Vec<(&str, &str)> {
    let blocks = message["content"].as_array().into_iter().flatten();
    let anthropic = blocks
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| Some((b["id"].as_str()?, b["name"].as_str()?)));
    let chat = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| Some((c["id"].as_str()?, c["function"]["name"].as_str()?)));
    anthropic.chain(chat).collect()
}

/// The text of a `<system-reminder>` block that carries a Stop hook's additional context.
fn hook_context(content: &Value) -> Option<String> {
    const PREFIX: &str = "Stop hook additional context: ";
    let Value::Array(blocks) = content else {
        return None;
    };
    blocks.iter().find_map(|b| {
        let text = b["text"].as_str()?.trim();
        let inner = text
            .strip_prefix("<system-reminder>")?
            .strip_suffix("</system-reminder>")?
            .trim_start();
        Some(inner.strip_prefix(PREFIX)?.trim_end().to_owned())
    })
}

/// The reason of a Stop hook's `block` in a user message's content: `"Stop hook feedback:\nX"`
/// as the text (2.1.19x), or inside a system reminder that relays a hook's output (2.1.33x).
fn hook_block(content: &Value) -> Option<String> {
    const MARK: &str = "Stop hook feedback:";
    let texts: Vec<&str> = match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => Vec::new(),
    };
    texts.into_iter().find_map(|text| {
        let text = text.trim();
        if let Some(reason) = text.strip_prefix(MARK) {
            return Some(reason.strip_prefix('\n').unwrap_or(reason).to_owned());
        }
        let inner = text
            .strip_prefix("<system-reminder>")?
            .strip_suffix("</system-reminder>")?;
        let at = inner.find(&format!("\n{MARK}\n"))?;
        Some(inner[at + MARK.len() + 2..].trim_end().to_owned())
    })
}

fn last_user_message(body: &Value) -> Option<&Value> {
    body["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
}

fn is_system_reminder(text: &str) -> bool {
    let t = text.trim();
    t.starts_with("<system-reminder>") && t.ends_with("</system-reminder>")
}

/// Text of a message `content` (a string or an array of blocks); tool_result contents included.
fn content_text(content: &Value, keep_reminders: bool) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().map(str::to_owned),
                Some("tool_result") => Some(content_text(&b["content"], keep_reminders)),
                Some("tool_reference") => b["tool_name"].as_str().map(str::to_owned),
                _ => None,
            })
            .filter(|t| keep_reminders || !is_system_reminder(t))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Where a scripted model stands in reaching a tool (see [`discover`]).
pub enum Discovery {
    /// The tool is in the request: call it by this name.
    Call(String),
    /// Not loaded yet: make this reply (a `ToolSearch` call), and look again next turn.
    Search(Reply),
    /// Not to be had: why.
    Missing(String),
}

/// Reaches the tool `wanted` picks, the way the client requires. 2.1.19x offers MCP tools in
/// the request, so it is called at once. 2.1.33x defers them behind `ToolSearch`: a model that
/// was told the name loads it with `select:NAME`; one that was not (the server had not
/// connected when the request went out) searches with `keywords`, the words of the person's
/// question, as a real model does; at most two searches.
pub fn discover(turn: &Turn, wanted: impl Fn(&str) -> bool, keywords: &str) -> Discovery {
    if let Some(name) = turn.tool_names().into_iter().find(|n| wanted(n)) {
        return Discovery::Call(name);
    }
    let searches = turn.calls_of("ToolSearch");
    if turn.tool(TOOL_SEARCH).is_none() || searches >= 2 {
        return Discovery::Missing(format!(
            "no such tool among {:?} (announced: {:?}, searches: {searches})",
            turn.tool_names(),
            turn.deferred_tools()
        ));
    }
    let query = match turn.deferred_tools().into_iter().find(|n| wanted(n)) {
        Some(name) => format!("select:{name}"),
        None => keywords.to_owned(),
    };
    Discovery::Search(Reply::tool_use(TOOL_SEARCH, json!({ "query": query })))
}

/// The tool through which 2.1.33x loads deferred tools.
pub const TOOL_SEARCH: &str = "ToolSearch";
