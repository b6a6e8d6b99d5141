//! `anvil status`: where the debates of this project stand.

use anvil_core::model::state::State;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::slash_safe;

/// Show where the debates stand, and what to do next.
///
/// For each active line (every line with --all): its phase and round, the session that drives
/// it, an open question, and the command that goes on with it.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil status             the active debates
  anvil status --all       finished and cancelled ones too
  anvil status billing     one debate, by any of its names")]
pub struct Args {
    /// One line, as NAME[@LINE]: any name of its debate (see `anvil log --help`).
    line: Option<String>,

    /// Include finished and cancelled debates.
    #[arg(long)]
    all: bool,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,

    #[arg(long, hide = true)]
    slash: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    slash_safe(args.slash, || {
        let home = ctx.home()?;
        // Without --all only the active lines are read, through their index: a project's
        // thousands of finished debates cost nothing here.
        let states: Vec<State> = match &args.line {
            // One line: as the record has it, with who drives it from the live file.
            Some(name) => vec![anvil_core::line::transaction::view(
                &home,
                &ctx.resolve_line(&home, Some(name))?,
            )?],
            None if args.all => home
                .live_lines()?
                .iter()
                .map(|line| State::load(&home.state_path(line)))
                .collect::<Result<_, _>>()?,
            None => anvil_core::line::active::lines(&home)?
                .into_iter()
                .map(|(_, state)| state)
                .collect(),
        };
        if args.json {
            let list: Vec<serde_json::Value> = states.iter().map(to_json).collect();
            return out(&format!("{}\n", crate::term::json(&list)));
        }
        if states.is_empty() {
            return out(if args.all {
                "no debates yet; start one with `anvil start \"QUESTION\"`\n"
            } else {
                "no active debates (`anvil status --all` lists finished ones)\n"
            });
        }
        let mut text = String::new();
        for s in &states {
            let p = &s.progress;
            let now = match p.status {
                anvil_core::model::state::Status::WaitingForInput => {
                    format!("{} (anvil answer \"…\")", s.standing())
                }
                _ => s.standing(),
            };
            let shown = format!(
                "{}@{}  {}  [{}]  {}\n    {}\n",
                s.debate,
                s.line,
                now,
                s.setup.mode.name(),
                match &s.session {
                    Some(sid) => format!("session {sid}"),
                    None => format!(
                        "waiting for a Claude session: the next `claude` started in this \
                         project takes it (sessions already at work never do), or \
                         `anvil resume {}@{} --session ID` hands it to one",
                        s.debate, s.line
                    ),
                },
                anvil_core::model::state::first_line(&s.setup.question)
            );
            // No colour of ours here: the whole line is recorded text and is made visible.
            text.push_str(&crate::term::visible(&shown));
        }
        out(&text)
    })
}

fn to_json(s: &State) -> serde_json::Value {
    serde_json::json!({
        "debate": s.debate,
        "line": s.line,
        "question": s.setup.question,
        "mode": s.setup.mode.name(),
        "status": s.progress.status.name(),
        "phase": s.progress.phase.name(),
        "round": s.progress.round,
        "rounds": s.setup.rounds,
        "step": s.progress.step,
        "session": s.session,
        // A debater's open question (`anvil ask`); "question" is the debate's own.
        "pending_question": s.question.as_ref().map(|q| q.text.clone()),
        "updated": s.updated,
    })
}
