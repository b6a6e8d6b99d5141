//! The `anvil` binary: parse, dispatch, report errors. Everything else lives in the library.

fn main() -> std::process::ExitCode {
    anvil_cli::main()
}

#[path = "cli/mod.rs"]
mod anvil_cli;
