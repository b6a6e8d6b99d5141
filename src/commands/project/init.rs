//! `anvil init`: create `.anvil/` (and its record) in the current directory.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::say;

/// Create anvil's home, `.anvil/`, in this directory.
///
/// It holds the record (a bare git repository of every debate), the live files of running
/// debates, optional prompt overrides and `config.toml`. Running it again is harmless.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil init && anvil install     set anvil up in this project for Claude Code
  anvil init && anvil run \"Should we adopt GraphQL?\"")]
pub struct Args {}

pub fn run(ctx: &Ctx, _args: Args) -> Result<(), CliError> {
    let home = anvil_core::home::Home::init(&ctx.cwd)?;
    anvil_core::line::transaction::open_record(&home)?;
    say(&format!(
        "anvil: ready in {}\nnext: `anvil install` to add the Stop hook and /anvil to Claude Code",
        home.root().display()
    ));
    Ok(())
}
