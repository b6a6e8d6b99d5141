//! `anvil completions`: shell completion scripts, generated from the same definitions as
//! `--help`, so they never drift from the real options.

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;

/// Print a completion script for your shell.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil completions bash > ~/.local/share/bash-completion/completions/anvil
  anvil completions zsh > ~/.zfunc/_anvil
  anvil completions fish > ~/.config/fish/completions/anvil.fish")]
pub struct Args {
    /// bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

pub fn run(_ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let mut command = crate::cli();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "anvil", &mut script);
    out(&String::from_utf8_lossy(&script))
}
