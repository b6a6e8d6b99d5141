//! `anvil ask` (run by a debater) and `anvil answer` (run by the human).

use std::time::Duration;

use anvil_core::line::ask::Asked;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;

/// Ask the human a question from inside a debate, and wait for the answer.
///
/// Meant for the debaters: Claude runs it with its Bash tool. The debate shows the question
/// (`anvil status`) and waits for `anvil answer "…"`; the answer is printed on stdout so the
/// phase goes on with it. Without an answer in time, it says so and the debater states its
/// assumption instead.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Example (as a debater runs it):
  anvil ask \"What is the monthly budget for this?\"")]
pub struct Args {
    /// The question, e.g. "What is the monthly budget for this?".
    question: Vec<String>,

    /// The line that asks, as NAME[@LINE] (default: this session's).
    #[arg(long)]
    line: Option<String>,

    /// Seconds to wait for the answer (Claude Code's Bash tool gives up after 120).
    #[arg(long, default_value_t = 110)]
    wait: u64,
}

/// Answer the question a debater asked (see `anvil status`).
///
/// A debater waiting in `anvil ask` gets it at once; otherwise it goes with the next phase.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil status                                   shows the question
  anvil answer \"About 40k a year; hiring is frozen until Q3\"")]
pub struct AnswerArgs {
    /// The answer, e.g. "About 40k a year; hiring is frozen until Q3".
    text: Vec<String>,

    /// The line whose question this answers, as NAME[@LINE] (default: the only one waiting).
    #[arg(long)]
    line: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let line = ctx.resolve_line(&home, args.line.as_deref())?;
    let question = args.question.join(" ");
    // Nothing on stdout or stderr until the answer: both become the tool's result.
    let asked = anvil_core::line::ask::ask(&home, &line, &question)?
        .wait(Duration::from_secs(args.wait), Duration::from_millis(200))?;
    match asked {
        Asked::Answered(answer) => out(&format!("The human answered: {answer}\n")),
        Asked::NoAnswer => out(
            "No answer came in time. State the assumption you make instead, clearly marked, and go on.\n",
        ),
    }
}

pub fn run_answer(ctx: &Ctx, args: AnswerArgs) -> Result<(), CliError> {
    let home = ctx.home()?;
    let line = match args.line {
        Some(name) => ctx.resolve_line(&home, Some(&name))?,
        None => waiting_line(ctx, &home)?,
    };
    let delivered = anvil_core::line::ask::answer(&home, &line, &args.text.join(" "))?.now;
    say(&if delivered {
        format!("anvil: answered; the debater of {line} goes on with it now")
    } else {
        format!(
            "anvil: answered; it reaches {line} with the next phase (type `continue` in its Claude session)"
        )
    });
    Ok(())
}

/// The one line with an open question.
fn waiting_line(
    ctx: &Ctx,
    home: &anvil_core::home::Home,
) -> Result<anvil_core::home::LineRef, CliError> {
    let waiting: Vec<_> = home
        .live_lines()?
        .into_iter()
        .filter(|l| {
            anvil_core::line::transaction::view(home, l).is_ok_and(|s| {
                s.progress.status == anvil_core::model::state::Status::WaitingForInput
                    && s.question.is_some_and(|q| q.answer.is_none())
            })
        })
        .collect();
    match waiting.as_slice() {
        [one] => Ok(one.clone()),
        [] => ctx.resolve_line(home, None),
        many => Err(
            CliError::new("several debates wait for an answer; name one with --line").hint(
                many.iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
    }
}
