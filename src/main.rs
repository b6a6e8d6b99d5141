//! `anvil`: the command line and the web room over anvil-core. One file per subcommand in
//! `commands/`, each with an `Args` struct whose doc comments are its `--help` (the first line
//! its `-h` and its line in `anvil --help`, the rest and its examples in `--help`), and a
//! `run(ctx, args)` function; this file parses and dispatches, and `help` lays out `anvil
//! --help` and suggests what a mistype meant.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use anvil_core::home::Home;

mod commands;
mod ctx;
mod endpoint;
mod error;
mod flags;
mod help;
mod markdown;
mod mcp_stdio;
mod memory;
mod naming;
mod output;
mod pager;
mod serve;
mod view;
// Text on its way to a terminal: the core's neutraliser, which the hook's notices use too.
use anvil_core::term;

use commands::{
    adr, ask, branch, cancel, completions, diff, doctor, gc, hook, init, install, log, mcp,
    prompts, push, replay, report, resume, run, search, seats, show, slash, start, status, steer,
};
use ctx::Ctx;
use error::CliError;

/// Structured AI debates inside Claude Code, every step recorded in git.
///
/// A question is argued by an advocate and a critic (or stakeholders, or personas) for a few
/// rounds, then a neutral synthesis concludes; other agents can take a seat (`anvil seats` lists
/// them). Every phase is a commit of the record in `.anvil/`, so a debate can be resumed,
/// branched, compared, reported and shared.
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
    #[command(
        about = "List the agents that can take a seat, or try one",
        after_long_help = "Examples:
  anvil seats
  anvil seats --try codex:gpt-5.4 --prompt \"Say hello in five words.\""
    )]
    Seats(seats::Args),
    Adr(adr::Args),
    Mcp(mcp::Args),
    Show(show::Args),
    Diff(diff::Args),
    Branch(branch::Args),
    Resume(resume::Args),
    Replay(replay::Args),
    Report(report::Args),
    #[command(
        about = "Open the debate room in a browser",
        after_long_help = "Examples:
  anvil serve --open
  anvil serve --port 8400"
    )]
    Serve(serve::Args),
    Gc(gc::Args),
    Push(push::Args),
    Pull(push::PullArgs),
    /// List, show or eject the prompt files (built-in, or overridden in .anvil/prompts/).
    #[command(
        subcommand,
        after_long_help = "Examples:
  anvil prompts list
  anvil prompts show roles/critic.md
  anvil prompts eject frameworks/adr.md"
    )]
    Prompts(prompts::Command),
    Completions(completions::Args),
    #[command(subcommand)]
    Hook(hook::Command),
    #[command(hide = true)]
    Slash(slash::Args),
}

fn main() -> ExitCode {
    anvil_core::launcher::die_with_launcher();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let ctx = Ctx { cwd };
    // The Stop hook runs at the end of every turn of every Claude session: it skips building
    // the whole command line, which costs more than everything else it does when idle.
    if let Some(handler) = hook::fast_path() {
        anvil_core::claude::process::run(handler);
        return ExitCode::SUCCESS;
    }
    // `anvil seat-guard PROGRAM ARGS…`: this binary watching a seat's agent for `anvil run`
    // (see anvil_core::agent::guard); `anvil endpoint-turn ARGS…`: one turn of a seat on an
    // endpoint (see endpoint/). Neither is a command for people, nor pays for the parser.
    let mut args = std::env::args_os().skip(1);
    match args.next() {
        Some(word) if word == anvil_core::agent::GUARD_WORD => {
            std::process::exit(anvil_core::agent::guard(args));
        }
        Some(word) if word == anvil_core::agent::endpoint::TURN_WORD => {
            std::process::exit(endpoint::main(args));
        }
        _ => {}
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    let cli = parse_from(&args).unwrap_or_else(|e| e.exit());
    finish(dispatch(&ctx, cli.command))
}

/// The command line's definition, with `anvil --help` laid out (see [`help`]): what `--help`,
/// the completions and every parse use.
pub(crate) fn cli() -> clap::Command {
    help::laid_out(Cli::command())
}

/// Parses `args` (the program's name first); an error suggests what a mistype meant.
pub(crate) fn parse_from(args: &[OsString]) -> Result<Cli, clap::Error> {
    let matches = cli()
        .try_get_matches_from(args)
        .map_err(|e| help::with_suggestion(e, &cli(), args.get(1..).unwrap_or_default()))?;
    Cli::from_arg_matches(&matches)
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

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The whole `--help` surface, every command and subcommand, in one snapshot
    /// (`src/snapshots/`): a change to any command's words, options or order shows in review.
    /// Rendered in-process at a fixed width, so it costs no process and no terminal.
    #[test]
    fn the_help_of_every_command_reads_as_its_snapshot() {
        fn walk(command: &mut clap::Command, path: &str, out: &mut String) {
            let name = match path {
                "" => command.get_name().to_owned(),
                _ => format!("{path} {}", command.get_name()),
            };
            // Hidden commands are no one's to read; `help` only repeats the others.
            if command.is_hide_set() || command.get_name() == "help" {
                return;
            }
            for (flag, help) in [
                ("-h", command.render_help().to_string()),
                ("--help", command.render_long_help().to_string()),
            ] {
                let help: Vec<&str> = help.lines().map(str::trim_end).collect();
                out.push_str(&format!(
                    "## {name} {flag}\n\n```text\n{}\n```\n\n",
                    help.join("\n")
                ));
            }
            for sub in command.get_subcommands_mut() {
                walk(sub, &name, out);
            }
        }
        let mut cli = super::cli().term_width(100);
        cli.build();
        let mut out = String::new();
        walk(&mut cli, "", &mut out);
        insta::assert_snapshot!("help_surface", out);
    }

    /// What a person reads for a mistyped command or option, and for a command with nothing to
    /// do: each says what was meant, or what to type.
    #[test]
    fn mistypes_get_a_suggestion() {
        let mut out = String::new();
        for line in [
            "anvil lgo",
            "anvil strat",
            "anvil sohw round-2",
            "anvil prompts shwo roles/critic.md",
            "anvil log --stst",
            "anvil log --josn",
            "anvil run --ronuds 2",
            "anvil branch --form round-2 --steer x",
            "anvil report --outptu x.html",
            "anvil xyzzy",
        ] {
            let args: Vec<std::ffi::OsString> = line.split(' ').map(Into::into).collect();
            let error = super::parse_from(&args).expect_err(line);
            let text = error.render().to_string();
            let text: Vec<&str> = text.lines().map(str::trim_end).collect();
            out.push_str(&format!("$ {line}\n{}\n\n", text.join("\n")));
        }
        insta::assert_snapshot!("mistypes", out);
    }

    /// Every command `anvil --help` can list is in exactly one of its groups.
    #[test]
    fn every_command_is_in_one_group_of_the_help() {
        let cli = super::Cli::command();
        let listed: Vec<&str> = crate::help::GROUPS
            .iter()
            .flat_map(|(_, names)| names.iter().copied())
            .collect();
        for command in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
            let n = listed.iter().filter(|l| **l == command.get_name()).count();
            assert_eq!(n, 1, "`{}` in {n} groups", command.get_name());
        }
        for name in listed {
            assert!(cli.find_subcommand(name).is_some(), "no command `{name}`");
        }
    }
}
