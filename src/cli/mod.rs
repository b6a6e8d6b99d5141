//! The command line: one file per subcommand, each with an `Args` struct whose doc comments are
//! its `--help`, and a `run(ctx, args)` function. This module parses and dispatches.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use anvil::home::{Home, LineRef};

mod ask;
mod branch;
mod cancel;
mod completions;
mod diff;
mod doctor;
mod gc;
mod hook;
mod init;
mod install;
mod log;
mod pager;
mod prompts;
mod push;
mod replay;
mod report;
mod resume;
mod run;
mod serve;
mod show;
mod slash;
mod start;
mod status;
mod steer;
mod view;

/// Structured AI debates inside Claude Code, every step recorded in git.
#[derive(Debug, Parser)]
#[command(name = "anvil", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
enum Command {
    Init(init::Args),
    Install(install::Args),
    Uninstall(install::UninstallArgs),
    Plugin(install::PluginArgs),
    Doctor(doctor::Args),
    Start(start::Args),
    Run(run::Args),
    Status(status::Args),
    Cancel(cancel::Args),
    Steer(steer::Args),
    Ask(ask::Args),
    Answer(ask::AnswerArgs),
    Log(log::Args),
    Show(show::Args),
    Diff(diff::Args),
    Branch(branch::Args),
    Resume(resume::Args),
    Replay(replay::Args),
    Report(report::Args),
    Serve(serve::Args),
    Gc(gc::Args),
    Push(push::Args),
    Pull(push::PullArgs),
    /// List, show or eject the prompt files (built-in, or overridden in .anvil/prompts/).
    #[command(subcommand)]
    Prompts(prompts::Command),
    Completions(completions::Args),
    #[command(subcommand)]
    Hook(hook::Command),
    #[command(hide = true)]
    Slash(slash::Args),
}

/// What every command gets: where it runs, and anvil's home if there is one.
pub struct Ctx {
    pub cwd: PathBuf,
}

impl Ctx {
    /// The `.anvil` of this project, or an error that says how to make one.
    pub fn home(&self) -> Result<Home, CliError> {
        Home::find(&self.cwd).ok_or_else(|| {
            CliError::new("no .anvil here or in any parent directory")
                .hint("run `anvil init` in your project first")
        })
    }

    /// The Claude Code session this command runs in, if it runs inside one.
    pub fn session(&self) -> Option<String> {
        std::env::var("CLAUDE_CODE_SESSION_ID")
            .ok()
            .filter(|s| anvil::home::valid_session(s))
    }

    /// The session a command binds to: the one given (checked), else the one it runs in.
    pub fn session_or(&self, given: Option<String>) -> Result<Option<String>, CliError> {
        match given {
            Some(s) if anvil::home::valid_session(&s) => Ok(Some(s)),
            Some(s) => Err(CliError::new(format!("'{s}' is not a Claude Code session id")).usage()),
            None => Ok(self.session()),
        }
    }

    /// The line a command is about: the one named, else this session's, else the only
    /// active one. Only the named debates, or the active lines, are read.
    pub fn resolve_line(&self, home: &Home, name: Option<&str>) -> Result<LineRef, CliError> {
        if let Some(name) = name {
            let debate = name.split_once('@').map_or(name, |(d, _)| d);
            let lines = anvil::debate::live_lines_with_prefix(home, debate)
                .map_err(CliError::from_display)?;
            return match_line(name, &lines).map_err(|e| {
                if lines.is_empty() {
                    e.hint("`anvil status --all` lists the debates here")
                } else {
                    e
                }
            });
        }
        if let Some(session) = self.session()
            && let Some(line) = home.bound_line(&session).map_err(CliError::from_display)?
        {
            return Ok(line);
        }
        let active: Vec<LineRef> = anvil::active::lines(home)
            .map_err(CliError::from_display)?
            .into_iter()
            .map(|(line, _)| line)
            .collect();
        match active.as_slice() {
            [one] => Ok(one.clone()),
            [] => {
                Err(CliError::new("no active debate")
                    .hint("start one with `anvil start \"QUESTION\"`"))
            }
            many => Err(CliError::new("several debates are active; name one")
                .hint(join(many.iter().map(|l| l.to_string())))),
        }
    }
}

/// The line `name` (`DEBATE[@LINE]`, a prefix of the debate id is enough) names among
/// `lines`; an exact id wins over prefixes. The errors list what there is.
pub fn match_line(name: &str, lines: &[LineRef]) -> Result<LineRef, CliError> {
    let (debate, line) = name.split_once('@').unwrap_or((name, "main"));
    let matches: Vec<&LineRef> = lines
        .iter()
        .filter(|l| l.line == line && l.debate.starts_with(debate))
        .collect();
    if let Some(exact) = matches.iter().find(|l| l.debate == debate) {
        return Ok((*exact).clone());
    }
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(CliError::new(format!("no debate line '{name}'")).hint(list_hint(lines))),
        many => Err(
            CliError::new(format!("'{name}' is ambiguous")).hint(format!(
                "it matches {}",
                join(many.iter().map(|l| l.to_string()))
            )),
        ),
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn list_hint(lines: &[LineRef]) -> String {
    if lines.is_empty() {
        "there are no debates yet".into()
    } else {
        format!(
            "debates here: {}",
            join(lines.iter().map(|l| l.to_string()))
        )
    }
}

/// An error for the user: what went wrong, what to do, and the exit code.
#[derive(Debug)]
pub struct CliError {
    message: String,
    hint: Option<String>,
    code: u8,
}

impl CliError {
    pub fn new(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            hint: None,
            code: 1,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> CliError {
        self.hint = Some(hint.into());
        self
    }

    pub fn usage(mut self) -> CliError {
        self.code = 2;
        self
    }

    pub fn from_display(e: impl std::fmt::Display) -> CliError {
        CliError::new(e.to_string())
    }

    /// The error as `!` lines of slash commands show it: they must always exit 0, or Claude
    /// Code drops the whole command without a word.
    pub fn to_text(&self) -> String {
        match &self.hint {
            Some(h) => format!("error: {}\nhint: {h}\n", self.message),
            None => format!("error: {}\n", self.message),
        }
    }
}

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> CliError {
        CliError::new(e.to_string())
    }
}

/// Writes to stdout; a closed pipe (`anvil status | head`) is not an error.
pub fn out(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::from_display(e)),
        _ => Ok(()),
    }
}

/// Progress and chatter go to stderr.
pub fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Runs a slash-command-facing body: with `slash`, errors go to stdout and the exit is 0.
pub fn slash_safe(
    slash: bool,
    body: impl FnOnce() -> Result<(), CliError>,
) -> Result<(), CliError> {
    match body() {
        Err(e) if slash => out(&e.to_text()),
        other => other,
    }
}

pub fn main() -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let ctx = Ctx { cwd };
    // The Stop hook runs at the end of every turn of every Claude session: it skips building
    // the whole command line, which costs more than everything else it does when idle.
    if let Some(handler) = hook::fast_path() {
        anvil::hook_process::run(handler);
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    finish(dispatch(&ctx, cli.command))
}

/// Runs one parsed command (typed, or built by `anvil slash` from a slash command's arguments).
fn dispatch(ctx: &Ctx, command: Command) -> Result<(), CliError> {
    // Commands that add to the record start its maintenance when it is due, detached, the
    // way git runs `gc --auto` after the commands that write.
    let writes = matches!(
        command,
        Command::Start(_)
            | Command::Run(_)
            | Command::Branch(_)
            | Command::Resume(_)
            | Command::Cancel(_)
            | Command::Answer(_)
            | Command::Pull(_)
    );
    let result = match command {
        Command::Init(args) => init::run(ctx, args),
        Command::Install(args) => install::run(ctx, args),
        Command::Uninstall(args) => install::run_uninstall(ctx, args),
        Command::Plugin(args) => install::run_plugin(ctx, args),
        Command::Doctor(args) => doctor::run(ctx, args),
        Command::Start(args) => start::run(ctx, args),
        Command::Run(args) => run::run(ctx, args),
        Command::Status(args) => status::run(ctx, args),
        Command::Cancel(args) => cancel::run(ctx, args),
        Command::Steer(args) => steer::run(ctx, args),
        Command::Ask(args) => ask::run(ctx, args),
        Command::Answer(args) => ask::run_answer(ctx, args),
        Command::Log(args) => log::run(ctx, args),
        Command::Show(args) => show::run(ctx, args),
        Command::Diff(args) => diff::run(ctx, args),
        Command::Branch(args) => branch::run(ctx, args),
        Command::Resume(args) => resume::run(ctx, args),
        Command::Replay(args) => replay::run(ctx, args),
        Command::Report(args) => report::run(ctx, args),
        Command::Serve(args) => serve::run(ctx, args),
        Command::Gc(args) => gc::run(ctx, args),
        Command::Push(args) => push::run(ctx, args),
        Command::Pull(args) => push::run_pull(ctx, args),
        Command::Prompts(command) => prompts::run(ctx, command),
        Command::Completions(args) => completions::run(ctx, args),
        Command::Hook(command) => hook::run(ctx, command),
        Command::Slash(args) => slash::run(ctx, args),
    };
    if writes
        && result.is_ok()
        && let Some(home) = Home::find(&ctx.cwd)
    {
        anvil::maintenance::start_if_due(&home);
    }
    result
}

fn finish(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stderr().write_all(e.to_text().as_bytes());
            ExitCode::from(e.code)
        }
    }
}
