//! `anvil start`: create a debate and print its first prompt.

use std::path::PathBuf;

use anvil::options::Options;
use anvil::state::Mode;

use super::{CliError, Ctx, out, say, slash_safe};

/// Start a debate on QUESTION and print the first phase's prompt on stdout.
///
/// Inside Claude Code (the /anvil command) the debate is bound to the running session at once.
/// In a terminal, the next Claude session that stops in this project claims it, e.g.:
///
///   claude "$(anvil start "Should we adopt GraphQL?" --rounds 2)"
///
/// The Stop hook then drives every phase to the synthesis.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The question to stress-test, e.g. "Should we rewrite billing in Rust?".
    question: Vec<String>,

    /// Tone and rules of the debate [default: analyst].
    #[arg(long, value_parser = parse_mode)]
    mode: Option<Mode>,

    /// Advocate/critic rounds (1-10) [default: 3]; in a rotation, rounds = voices.
    #[arg(long)]
    rounds: Option<u32>,

    /// Your own stance; required by --mode devils-advocate, which attacks it.
    #[arg(long)]
    position: Option<String>,

    /// Stakeholder rotation, e.g. "Engineering Team,Product/UX,Business/Management" (the
    /// default when given without a value). Implies --mode stakeholders.
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    stakeholders: Option<String>,

    /// A persona of a persona rotation (repeat, at least twice), e.g. --persona startup-cfo.
    #[arg(long = "persona")]
    personas: Vec<String>,

    /// Pause after every round so the human can steer the next one.
    #[arg(long)]
    interactive: bool,

    /// Where the final report goes (.md, or a self-contained .html).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,

    /// Bind the debate to this Claude Code session id (default: $CLAUDE_CODE_SESSION_ID, or the
    /// first session that stops here).
    #[arg(long)]
    session: Option<String>,

    /// Called from a slash command: print errors on stdout and exit 0, so Claude Code shows them.
    #[arg(long, hide = true)]
    slash: bool,
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::ALL
        .into_iter()
        .find(|m| m.name() == s)
        .ok_or_else(|| {
            format!(
                "unknown mode '{s}'; choose one of: {}",
                Mode::ALL.map(Mode::name).join(", ")
            )
        })
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let slash = args.slash;
    slash_safe(slash, || {
        let home = ctx.home()?;
        let session = match args.session {
            Some(s) if !anvil::home::valid_session(&s) => {
                return Err(
                    CliError::new(format!("'{s}' is not a Claude Code session id")).usage(),
                );
            }
            Some(s) => Some(s),
            None => ctx.session(),
        };
        let setup = Options {
            question: args.question.join(" "),
            mode: args.mode,
            rounds: args.rounds,
            position: args.position,
            stakeholders: args.stakeholders,
            personas: args.personas,
            interactive: args.interactive,
            framework: None,
            focus: None,
            research: false,
            autonomy: None,
            output: args.output,
        }
        .into_setup()
        .map_err(|e| CliError::from_display(e).usage())?;
        let started = anvil::debate::start(&home, setup, session.as_deref())?;
        out(&started.prompt)?;
        if !slash {
            let how = match session {
                Some(_) => "it runs in this Claude Code session".to_owned(),
                None => {
                    "the next Claude Code session that stops in this project runs it".to_owned()
                }
            };
            say(&format!("anvil: started {} ({how})", started.line));
        }
        Ok(())
    })
}
