//! `anvil slash COMMAND`: the one shell line of anvil's slash command files.
//!
//! It carries no user text: the arguments of `/anvil`, `/anvil-steer` and `/anvil-cancel` come
//! from anvil's UserPromptExpansion hook, untouched by any shell (see `anvil_core::claude::slash`), and run
//! through the same command line as `anvil start`, `anvil steer` and `anvil cancel`.

use anvil_core::claude::slash::Command;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::slash_safe;

/// Run /anvil, /anvil-steer or /anvil-cancel with the arguments that anvil's hook passed on.
/// Used by the command files that `anvil install` writes; not for typing.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_parser = ["start", "steer", "cancel"])]
    command: String,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    slash_safe(true, || {
        let command = Command::from_word(&args.command).expect("clap checked the word");
        let home = ctx.home()?;
        let session = ctx.session().ok_or_else(|| {
            CliError::new("`anvil slash` runs inside Claude Code's slash commands only")
                .hint("type the command itself, e.g. `anvil start \"QUESTION\"`")
        })?;
        let raw = anvil_core::claude::slash::take(&home, &session, command)?.ok_or_else(|| {
            CliError::new(format!(
                "the arguments of /{} did not reach anvil",
                command.slash_name()
            ))
            .hint(
                "anvil's UserPromptExpansion hook (`anvil-hook prompt-expansion`) is not \
                 installed or not on Claude Code's PATH: run `anvil install`, then `anvil doctor`",
            )
        })?;
        let argv = anvil_core::claude::slash::argv(command, &raw, is_start_option);
        let argv: Vec<std::ffi::OsString> = std::iter::once("anvil".to_owned())
            .chain(argv)
            .map(Into::into)
            .collect();
        let cli = crate::parse_from(&argv).map_err(|e| {
            CliError::new(e.render().to_string().trim().trim_start_matches("error: "))
        })?;
        crate::dispatch(ctx, cli.command)
    })
}

/// Is `word` (`--name` or `--name=value`) an option of `anvil start`?
fn is_start_option(word: &str) -> bool {
    let name = word.split_once('=').map_or(word, |(name, _)| name);
    let start =
        <crate::commands::start::Args as clap::Args>::augment_args(clap::Command::new("start"));
    start.get_arguments().any(|arg| {
        arg.get_long()
            .is_some_and(|long| name.strip_prefix("--") == Some(long))
            || arg.get_short().is_some_and(|short| {
                name.strip_prefix('-')
                    .is_some_and(|s| s.len() == short.len_utf8() && s.starts_with(short))
            })
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn start_options_are_known_by_their_names() {
        for word in [
            "--rounds",
            "--interactive",
            "--position=x",
            "-o",
            "--session",
        ] {
            assert!(super::is_start_option(word), "{word}");
        }
        for word in ["--force", "-", "--", "-x", "Should", "--round"] {
            assert!(!super::is_start_option(word), "{word}");
        }
    }
}
