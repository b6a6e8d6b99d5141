//! `anvil`: the command line and the web room over anvil-core. One file per subcommand in
//! `commands/`, each with an `Args` struct whose doc comments are its `--help`, and a
//! `run(ctx, args)` function; this file parses and dispatches.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use anvil_core::home::Home;

mod commands;
mod ctx;
mod error;
mod flags;
mod mcp_stdio;
mod memory;
mod output;
mod pager;
mod serve;
mod term;
mod view;

use commands::{
    adr, ask, branch, cancel, completions, diff, doctor, gc, hook, init, install, log, mcp,
    prompts, push, replay, report, resume, run, search, seats, show, slash, start, status, steer,
};
use ctx::Ctx;
use error::CliError;

/// Structured AI debates inside Claude Code, every step recorded in git.
#[derive(Debug, Parser)]
#[command(name = "anvil", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub(crate) enum Command {
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
    Search(search::Args),
    Seats(seats::Args),
    Adr(adr::Args),
    Mcp(mcp::Args),
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

fn main() -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let ctx = Ctx { cwd };
    // The Stop hook runs at the end of every turn of every Claude session: it skips building
    // the whole command line, which costs more than everything else it does when idle.
    if let Some(handler) = hook::fast_path() {
        anvil_core::claude::process::run(handler);
        return ExitCode::SUCCESS;
    }
    // `anvil seat-guard PROGRAM ARGS…`: this binary watching a seat's agent for `anvil run`
    // (see anvil_core::seat::guard); not a command for people.
    let mut args = std::env::args_os().skip(1);
    if args
        .next()
        .is_some_and(|word| word == anvil_core::seat::GUARD_WORD)
    {
        std::process::exit(anvil_core::seat::guard(args));
    }
    let cli = Cli::parse();
    finish(dispatch(&ctx, cli.command))
}

/// Runs one parsed command (typed, or built by `anvil slash` from a slash command's arguments).
pub(crate) fn dispatch(ctx: &Ctx, command: Command) -> Result<(), CliError> {
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
        Command::Search(args) => search::run(ctx, args),
        Command::Seats(args) => seats::run(ctx, args),
        Command::Adr(args) => adr::run(ctx, args),
        Command::Mcp(args) => mcp::run(ctx, args),
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
        && let Ok(config) = anvil_core::model::config::Config::load(&home)
    {
        anvil_core::record::maintenance::start_if_due(&home.record_dir(), &config.gc_limits());
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
