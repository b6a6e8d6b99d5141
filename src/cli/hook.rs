//! `anvil hook stop`: the entry point Claude Code calls at the end of every turn.

use std::io::Read;

use super::{CliError, Ctx, out};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Claude Code's Stop hook: record the phase that just ended and hand out the next one.
    ///
    /// Reads the hook's JSON on stdin and prints only the hook's JSON answer on stdout.
    Stop,
}

pub fn run(ctx: &Ctx, command: Command) -> Result<(), CliError> {
    match command {
        Command::Stop => {
            let mut input = Vec::new();
            let answer = match std::io::stdin().read_to_end(&mut input) {
                Ok(_) => std::panic::catch_unwind(|| anvil::hook::stop(&input, &ctx.cwd))
                    .unwrap_or_else(|_| {
                        anvil::hook::Answer::Message(
                            "anvil: the Stop hook failed unexpectedly; no phase was lost on purpose, \
                             see `anvil status`"
                                .into(),
                        )
                    }),
                Err(e) => anvil::hook::Answer::Message(format!("anvil: cannot read hook input: {e}")),
            };
            if let Some(json) = answer.to_json() {
                out(&format!("{json}\n"))?;
            }
            Ok(())
        }
    }
}
