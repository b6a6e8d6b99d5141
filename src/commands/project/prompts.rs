//! `anvil prompts`: see, read and take over the prompt files anvil renders.

use anvil_core::model::prompt::{Prompts, Source, builtin_text};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;

/// List, show or eject the prompt files (built-in, or overridden in .anvil/prompts/).
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Every prompt file, and whether it is built-in or overridden; broken templates are marked.
    ///
    /// Example: anvil prompts list
    List,
    /// Print the effective text of a prompt file (the override if there is one).
    ///
    /// Example: anvil prompts show roles/critic.md
    Show {
        /// Path relative to prompts/, e.g. frameworks/adr.md.
        path: String,
    },
    /// Copy a built-in prompt into .anvil/prompts/ for editing; anvil uses the copy from then on.
    ///
    /// Example: anvil prompts eject frameworks/adr.md
    Eject {
        /// Path relative to prompts/, e.g. roles/synthesizer.md.
        path: String,
        /// Replace an existing override with the built-in text.
        #[arg(long)]
        force: bool,
    },
}

pub fn run(ctx: &Ctx, command: Command) -> Result<(), CliError> {
    // Outside a project the built-ins are still worth listing and showing.
    let home = anvil_core::home::Home::find(&ctx.cwd);
    let prompts = Prompts::new(home.as_ref().map(|h| h.prompts_dir()));
    match command {
        Command::List => {
            let mut text = String::new();
            for (name, source) in prompts.list() {
                let origin = match &source {
                    Source::Builtin => "built-in".to_owned(),
                    Source::Override(path) if builtin_text(&name).is_some() => {
                        format!("overridden: {}", path.display())
                    }
                    Source::Override(path) => format!("added: {}", path.display()),
                };
                let broken = match prompts.check(&name) {
                    Ok(()) => String::new(),
                    Err(e) => format!("  BROKEN: {e}"),
                };
                text.push_str(&format!("{name:<32} {origin}{broken}\n"));
            }
            out(&text)
        }
        Command::Show { path } => {
            let name = normalize(&path);
            match prompts.text(&name)? {
                Some(text) => {
                    if let Err(e) = prompts.check(&name) {
                        say(&format!("warning: {e}"));
                    }
                    out(&text)
                }
                None => Err(unknown(&path)),
            }
        }
        Command::Eject { path, force } => {
            let name = normalize(&path);
            let home = ctx.home()?;
            let Some(text) = builtin_text(&name) else {
                return Err(unknown(&path));
            };
            let target = home.prompts_dir().join(&name);
            if target.exists() && !force {
                return Err(
                    CliError::new(format!("{} already exists", target.display()))
                        .hint("edit it, or pass --force to replace it with the built-in text"),
                );
            }
            anvil_core::fsutil::write_atomic(&target, text.as_bytes())?;
            say(&format!(
                "anvil: {} now overrides the built-in {name}; edit it freely",
                target.display()
            ));
            Ok(())
        }
    }
}

/// `prompts/roles/critic.md`, `./roles/critic.md` and `roles/critic` all name `roles/critic.md`.
fn normalize(path: &str) -> String {
    let path = path.trim().trim_start_matches("./");
    let path = path.strip_prefix("prompts/").unwrap_or(path);
    let path = path.strip_prefix(".anvil/prompts/").unwrap_or(path);
    if path.ends_with(".md") {
        path.to_owned()
    } else {
        format!("{path}.md")
    }
}

fn unknown(path: &str) -> CliError {
    CliError::new(format!("no prompt file '{path}'"))
        .hint("`anvil prompts list` shows every prompt file")
}
