//! `anvil mcp`: the record as read-only Model Context Protocol tools over stdio, so Claude can
//! consult earlier debates. Every answer cites where it comes from: `DEBATE@LINE`, the phase
//! and the full commit id.

use std::path::PathBuf;

use anvil_core::home::Home;
use anvil_core::record::store::Record;
use anvil_core::review::{compare, history};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::memory::index::{CLOSE, Index, OPEN, Query, SearchError};
use crate::view;

/// Serve the record to Claude Code as read-only MCP tools.
///
/// Over stdin/stdout: list debates, search them, read a phase or a synthesis, compare two
/// moments, see what is running. `anvil install` and the plugin register it; you do not run it
/// yourself.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// What the server tells the client about itself: when to reach for these tools. Claude Code
/// 2.1.33x shows it beside the names of the deferred tools, so it is what makes a model look
/// for them when a person asks about the past.
const INSTRUCTIONS: &str = "anvil is this project's memory of its decisions: structured \
debates (advocate, critic, synthesizer…) recorded in git under .anvil/. When the person asks \
what was decided, discussed or argued earlier (\"what did we decide about billing?\", \"did we \
already consider Kafka?\", \"why did we pick Postgres?\"), or before you weigh a design choice \
this project may have debated already, search the past debates first: `search` with the words \
of the question, then `synthesis` for a debate's conclusion or `read_phase` for one phase in \
full. Quote the citation each answer gives (DEBATE@LINE, phase, commit) when you rely on it. \
`running` says which debates are in progress. The tools only read.";

/// Answers longer than this are cut, with a note; a phase is rarely near it.
const MAX_ANSWER: usize = 60_000;

pub fn run(ctx: &Ctx, _args: Args) -> Result<(), CliError> {
    let server = Server::new(ctx.cwd.clone());
    // Several threads: a search that reads the record for a while (each tool call runs on a
    // thread of its own, see `Server::answer`) never holds up a `ping` or another call.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the MCP server: {e}")))?;
    runtime.block_on(async move {
        let transport = crate::mcp_stdio::Stdio::new(
            tokio::io::BufReader::new(tokio::io::stdin()),
            tokio::io::stdout(),
        );
        let service = server
            .serve(transport)
            .await
            .map_err(|e| CliError::new(format!("MCP handshake failed: {e}")))?;
        service
            .waiting()
            .await
            .map_err(|e| CliError::new(format!("the MCP server stopped: {e}")))?;
        Ok(())
    })
}

#[derive(Clone)]
pub struct Server {
    cwd: PathBuf,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// How many debates, newest first (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for; word forms match ("migrating" finds "migration"), "quoted words"
    /// match as a phrase.
    pub query: String,
    /// Only this debate (its id, as `list_debates` gives it).
    #[serde(default)]
    pub debate: Option<String>,
    /// Only this phase: advocate, critic, synthesizer, stakeholder, persona, start, branch…
    #[serde(default)]
    pub role: Option<String>,
    /// How many hits at most (default 8).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct RevArgs {
    /// Which phase: a commit id (or prefix) from `search`, or DEBATE@LINE:round-N/ROLE,
    /// DEBATE@LINE:synthesis, DEBATE@LINE (its latest phase).
    pub rev: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct DebateArgs {
    /// The debate, as DEBATE or DEBATE@LINE (a prefix of the id is enough; line main by default).
    pub debate: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct CompareArgs {
    /// The earlier moment: a commit id, DEBATE@LINE:round-N, DEBATE@LINE…
    pub from: String,
    /// The later moment, named the same way.
    pub to: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}

type Answer = Result<String, String>;

#[tool_router]
impl Server {
    pub fn new(cwd: PathBuf) -> Server {
        Server { cwd }
    }

    #[tool(
        description = "List the past debates and decisions recorded in this project, newest \
                       first: id, question, each line's status and its latest commit.",
        annotations(read_only_hint = true)
    )]
    fn list_debates(&self, Parameters(args): Parameters<ListArgs>) -> Answer {
        self.answer(|home, record| list(home, record, args.limit.unwrap_or(20)))
    }

    #[tool(
        description = "Search past decisions: each earlier decision, and what this project \
                       discussed or argued before it, in every recorded phase of every debate \
                       (pulled ones too), by the words of a question, most relevant first. Each hit cites \
                       DEBATE@LINE, the phase, its commit id and date, with a snippet; read the \
                       whole phase with read_phase.",
        annotations(read_only_hint = true)
    )]
    fn search(&self, Parameters(args): Parameters<SearchArgs>) -> Answer {
        self.answer(|home, record| search(home, record, args))
    }

    #[tool(
        description = "Read one phase of a past debate in full (a commit id from search, or \
                       DEBATE@LINE:round-N/ROLE), with its citation.",
        annotations(read_only_hint = true)
    )]
    fn read_phase(&self, Parameters(args): Parameters<RevArgs>) -> Answer {
        self.answer(|_, record| read(&self.ctx(), record, &args.rev))
    }

    #[tool(
        description = "The decision a debate reached: its synthesis (conclusion) in full, with \
                       its citation (or where the debate stands if it has none yet).",
        annotations(read_only_hint = true)
    )]
    fn synthesis(&self, Parameters(args): Parameters<DebateArgs>) -> Answer {
        self.answer(|home, record| {
            let ctx = self.ctx();
            let line = crate::naming::line(&ctx, home, record, Some(&args.debate))?.line;
            let rev = format!("{line}:synthesis");
            match read(&ctx, record, &rev) {
                Ok(text) => Ok(text),
                Err(_) => Ok(format!(
                    "{line} has no synthesis yet; its latest phase:\n\n{}",
                    read(&ctx, record, &line.to_string())?
                )),
            }
        })
    }

    #[tool(
        description = "Compare two moments of a debate's record (two lines, two rounds, two \
                       commits): a unified diff of what changed, each side cited.",
        annotations(read_only_hint = true)
    )]
    fn compare(&self, Parameters(args): Parameters<CompareArgs>) -> Answer {
        self.answer(|home, record| {
            let ctx = self.ctx();
            let a = crate::naming::resolve(&ctx, home, record, &args.from)?.resolved;
            let b = crate::naming::resolve(&ctx, home, record, &args.to)?.resolved;
            let mut text = format!(
                "from {} (commit {})\nto   {} (commit {})\n",
                a.canonical(),
                a.entry().commit,
                b.canonical(),
                b.entry().commit
            );
            let pairs = compare::pairs(record, &a, &b)?;
            if pairs.iter().all(|p| p.old_text() == p.new_text()) {
                text.push_str("\nno difference\n");
            }
            for pair in pairs.iter().filter(|p| p.old_text() != p.new_text()) {
                text.push('\n');
                text.push_str(&pair.unified());
            }
            Ok(text)
        })
    }

    #[tool(
        description = "The debates running now: each active debate line, its phase, round and \
                       who drives it.",
        annotations(read_only_hint = true)
    )]
    fn running(&self, Parameters(_): Parameters<NoArgs>) -> Answer {
        let ctx = self.ctx();
        let home = ctx.home().map_err(|e| e.to_text())?;
        let lines = anvil_core::line::active::lines(&home)
            .map_err(|e| format!("cannot read the active debates: {e}"))?;
        if lines.is_empty() {
            return Ok("no debate is running\n".into());
        }
        let mut text = String::new();
        for (line, state) in lines {
            text.push_str(&format!(
                "{line}: {} — {}\n  {}\n",
                state.standing(),
                match &state.session {
                    Some(s) => format!("session {s}"),
                    None => "waiting for a Claude session".into(),
                },
                anvil_core::model::state::first_line(&state.setup.question)
            ));
            if let Some(commit) = state.tip.as_deref() {
                text.push_str(&format!("  at commit {commit}\n"));
            }
        }
        Ok(text)
    }
}

impl Server {
    fn ctx(&self) -> Ctx {
        Ctx {
            cwd: self.cwd.clone(),
        }
    }

    /// Runs `f` on the record, and turns anvil's errors into a tool error Claude can read.
    /// The work blocks (files, the record, SQLite): the runtime is told so, and moves the
    /// thread's other tasks (a `ping`, another call) to a thread of their own meanwhile.
    fn answer(&self, f: impl FnOnce(&Home, &Record) -> Result<String, CliError>) -> Answer {
        let result = tokio::task::block_in_place(|| {
            self.ctx()
                .home()
                .and_then(|home| view::record(&home).and_then(|record| f(&home, &record)))
        });
        match result {
            Ok(mut text) => {
                if text.len() > MAX_ANSWER {
                    text.truncate(text.floor_char_boundary(MAX_ANSWER));
                    text.push_str("\n\n[cut here: the answer was too long]\n");
                }
                Ok(text)
            }
            Err(e) => Err(e.to_text()),
        }
    }
}

#[tool_handler]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("anvil", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

fn list(home: &Home, record: &Record, limit: usize) -> Result<String, CliError> {
    let _ = home;
    let mut text = String::new();
    let newest = anvil_core::record::recent::Newest::new(record, limit.max(1))?;
    for item in newest.take(limit.max(1)) {
        let (debate, _) = item?;
        let lines = record.lines_of_debate(&debate)?;
        let mut question = None;
        let mut shown = Vec::new();
        for (line, tip) in lines {
            let Ok(state) = history::state_at(record, tip) else {
                shown.push(format!(
                    "  {debate}@{line}: unreadable (see `anvil doctor`)"
                ));
                continue;
            };
            question.get_or_insert_with(|| state.setup.question.clone());
            shown.push(format!(
                "  {debate}@{line}: {} · latest commit {tip}",
                state.standing()
            ));
        }
        text.push_str(&format!(
            "{debate}: {}\n{}\n",
            anvil_core::model::state::first_line(question.as_deref().unwrap_or("")),
            shown.join("\n")
        ));
    }
    if text.is_empty() {
        text.push_str("no debates recorded yet\n");
    }
    Ok(text)
}

fn search(home: &Home, record: &Record, args: SearchArgs) -> Result<String, CliError> {
    // A query no search takes is refused before the index is opened or caught up.
    crate::memory::index::terms(&args.query).map_err(SearchError::Query)?;
    let index = Index::open(home, record)?;
    let hits = index.search(&Query {
        text: args.query.clone(),
        debate: args.debate,
        line: None,
        phase: args.role,
        since: None,
        until: None,
        limit: args.limit.unwrap_or(8).clamp(1, 50),
    })?;
    if hits.is_empty() {
        return Ok(format!("no recorded phase matches {}\n", args.query));
    }
    let mut text = String::new();
    for (n, hit) in hits.iter().enumerate() {
        let phase = hit.place();
        text.push_str(&format!(
            "{}. {}@{} · {phase} · commit {} · {}\n   {}\n",
            n + 1,
            hit.debate,
            hit.line,
            hit.commit,
            view::time(hit.time),
            hit.snippet
                .replace('\n', " ")
                .replace(OPEN, "**")
                .replace(CLOSE, "**")
                .trim()
        ));
    }
    text.push_str("\nread a whole phase with read_phase {\"rev\": \"<commit>\"}\n");
    Ok(text)
}

/// One phase in full, headed by its citation.
fn read(ctx: &Ctx, record: &Record, rev: &str) -> Result<String, CliError> {
    let home = ctx.home()?;
    let resolved = crate::naming::resolve(ctx, &home, record, rev)?.resolved;
    let entry = resolved.entry();
    let body = match entry.role {
        Some(_) => view::phase_text(record, entry)?,
        None => entry.describe(),
    };
    Ok(format!(
        "Source: {} · {} · commit {} · {}\n\n{}\n",
        resolved.canonical(),
        entry.heading(),
        entry.commit,
        view::time(entry.time),
        body.trim_end()
    ))
}
