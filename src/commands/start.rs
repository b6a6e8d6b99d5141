//! `anvil start`: create a debate and print its first prompt.

use std::path::PathBuf;

use anvil_core::line::start::StartInputs;
use anvil_core::model::config::Config;
use anvil_core::model::options::Options;
use anvil_core::model::state::Mode;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::output::slash_safe;

/// Start a debate on QUESTION and print the first phase's prompt on stdout.
///
/// Inside Claude Code (the /anvil command) the debate is bound to the running session at once.
/// In a terminal, the next Claude session that stops in this project claims it, e.g.:
///
///   claude "$(anvil start "Should we adopt GraphQL?" --rounds 2)"
///
/// The Stop hook then drives every phase to the synthesis. Defaults for every option can be
/// set in .anvil/config.toml (keys: mode, rounds, position, stakeholders, personas,
/// interactive, framework, focus, research, autonomy, output, output_dir, context, diff, and
/// the [seats] table); flags override them.
#[derive(Debug, clap::Args)]
#[command(after_long_help = EXAMPLES)]
pub struct Args {
    #[command(flatten)]
    pub debate: DebateArgs,

    /// Bind the debate to this Claude Code session id (default: $CLAUDE_CODE_SESSION_ID, or the
    /// first session that stops here).
    #[arg(long)]
    session: Option<String>,

    /// Called from a slash command: print errors on stdout and exit 0, so Claude Code shows them.
    #[arg(long, hide = true)]
    slash: bool,
}

/// The question and the options of a debate, shared by `anvil start` and `anvil run`.
#[derive(Debug, Clone, clap::Args)]
pub struct DebateArgs {
    /// The question to stress-test, e.g. "Should we rewrite billing in Rust?". May be left out
    /// with --versus, which then asks which result is stronger and why.
    pub question: Vec<String>,

    /// Tone and rules of the debate [default: analyst].
    ///
    /// Example: --mode devils-advocate --position "We should keep the monolith"
    #[arg(long, value_parser = parse_mode)]
    mode: Option<Mode>,

    /// Advocate/critic rounds (1-10) [default: 3]; in a rotation, rounds = voices.
    ///
    /// Example: --rounds 2
    #[arg(long)]
    rounds: Option<u32>,

    /// Your own stance; required by --mode devils-advocate, which attacks it.
    ///
    /// Example: --position "Postgres is enough for our queue"
    #[arg(long)]
    position: Option<String>,

    /// Stakeholder rotation, e.g. "Engineering Team,Product/UX,Business/Management" (the
    /// default when given without a value). Implies --mode stakeholders.
    ///
    /// Example: --stakeholders "Ops,Legal,Finance"
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    stakeholders: Option<String>,

    /// A persona of a persona rotation (repeat, at least twice): a preset
    /// (security-engineer, startup-cfo, junior-developer, end-user) or free text.
    ///
    /// Example: --persona startup-cfo --persona "a burned-out SRE"
    #[arg(long = "persona", value_name = "NAME")]
    personas: Vec<String>,

    /// Pause after every round so the human can steer the next one.
    ///
    /// Example: --interactive
    #[arg(long, overrides_with = "no_interactive")]
    interactive: bool,

    /// No pauses, even when .anvil/config.toml asks for them.
    #[arg(long, overrides_with = "interactive")]
    no_interactive: bool,

    /// Shape of the synthesis: adr, pre-mortem, red-team, rfc or risks.
    ///
    /// Example: --framework adr
    #[arg(long, value_name = "NAME")]
    framework: Option<String>,

    /// One lens for every phase: a preset (security, performance, developer-experience,
    /// operational-cost, maintainability) or free text.
    ///
    /// Example: --focus security, or --focus "GDPR compliance"
    #[arg(long, value_name = "LENS")]
    focus: Option<String>,

    /// Code the debate is about: a file or a directory (repeatable). Directories respect
    /// .gitignore; binary files are skipped; the total is capped at 128 KiB, and what was cut
    /// is listed.
    ///
    /// Example: --context src/ --context Cargo.toml
    #[arg(long, value_name = "PATH")]
    context: Vec<String>,

    /// Add the project's uncommitted changes (staged, unstaged, untracked) as a diff.
    ///
    /// Example: --diff "Is this change safe to ship?"
    #[arg(long, overrides_with = "no_diff")]
    diff: bool,

    /// No diff, even when .anvil/config.toml asks for one.
    #[arg(long, overrides_with = "diff")]
    no_diff: bool,

    /// Add a pull request's changes: fetched from the project's `origin` (or `upstream`,
    /// where a fork's pull requests live) as the forge publishes them (refs/pull/N/head, or
    /// refs/merge-requests/N/head), diffed against the merge base with the default branch.
    ///
    /// Example: --pr 42 "Should we merge this?"
    #[arg(long, value_name = "N")]
    pr: Option<u32>,

    /// Build on an earlier result: a report file, or a recorded debate DEBATE[@LINE].
    ///
    /// Example: --follow-up .anvil/reports/20261122-graphql-3f2a.md
    #[arg(long, value_name = "FILE|DEBATE")]
    follow_up: Option<String>,

    /// Pit two earlier results against each other (files, or recorded debates DEBATE[@LINE]).
    /// Without a question, the debate asks which is stronger and why.
    ///
    /// Example: --versus plan-a.md plan-b.md
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    versus: Vec<String>,

    /// Ask the debaters to ground claims in web research; the synthesis lists its sources.
    ///
    /// Example: --research
    #[arg(long, overrides_with = "no_research")]
    research: bool,

    /// No web research, even when .anvil/config.toml asks for it.
    #[arg(long, overrides_with = "research")]
    no_research: bool,

    /// How readily debaters ask you questions with `anvil ask`: 0 never (default) … 5 whenever
    /// anything is ambiguous.
    ///
    /// Example: --autonomy 2
    #[arg(long, value_name = "0-5")]
    autonomy: Option<u8>,

    /// Where the final report goes (.md, or a self-contained .html).
    ///
    /// Example: --output docs/decisions/graphql.html
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,

    /// Do not give the debaters the earlier conclusions of this project related to the
    /// question (`recall = false` in .anvil/config.toml turns recall off for every debate).
    #[arg(long)]
    no_recall: bool,

    #[command(flatten)]
    seats: SeatArgs,
}

/// Who plays each role, and the debate's budget: the seat options, kept together.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Seats")]
pub struct SeatArgs {
    /// Let another agent play a role, in a session of its own, read-only (repeatable):
    /// ROLE is advocate, critic, synthesizer, stakeholder, persona, or a voice of the
    /// rotation; AGENT is claude, codex, copilot or qwen, run as you configured it; MODEL is
    /// passed to it. A role without a seat is played by the session that drives the debate.
    /// Defaults: `[seats]` in .anvil/config.toml. See `anvil seats`.
    ///
    /// Example: --seat critic=codex --seat synthesizer=copilot:gpt-5.4
    #[arg(long = "seat", value_name = "ROLE=AGENT[:MODEL]")]
    pub seat: Vec<String>,

    /// Round 1's openings are drafted blind and in parallel: no seat sees another's opening
    /// until round 2.
    #[arg(long)]
    pub independent: bool,

    /// Tokens (input and output, all seats and the host) the debate may spend: when the next
    /// phase would go past it, the debate goes to its synthesis, and the record says why.
    ///
    /// Example: --budget-tokens 200000
    #[arg(long, value_name = "N")]
    pub budget_tokens: Option<u64>,

    /// Dollars the debate may spend, counted where an agent reports a price (Claude Code);
    /// like --budget-tokens otherwise.
    ///
    /// Example: --budget-usd 0.50
    #[arg(long, value_name = "X")]
    pub budget_usd: Option<String>,
}

const EXAMPLES: &str = "Examples:
  anvil start \"Should we adopt GraphQL?\" --rounds 2
  anvil start \"Rewrite billing in Rust?\" --framework adr --focus security --context src/
  anvil start \"Is this change safe to ship?\" --diff --framework red-team
  anvil start \"Which plan?\" --persona startup-cfo --persona junior-developer
  anvil start --versus plan-a.md plan-b.md
  anvil start \"What next?\" --follow-up 20261122-graphql-3f2a@main --research";

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
        let session = ctx.session_or(args.session)?;
        let started = create(ctx, &home, args.debate, session.as_deref())?;
        // The prompt carries recorded text (earlier conclusions, a follow-up, context files):
        // shown, never obeyed, like every model text printed here. The record keeps it whole.
        out(&crate::term::visible(&started.prompt))?;
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

/// Creates a debate from the options: config defaults, validation, material, first commit.
pub fn create(
    ctx: &Ctx,
    home: &anvil_core::home::Home,
    args: DebateArgs,
    session: Option<&str>,
) -> Result<anvil_core::line::start::Started, CliError> {
    let mut config = Config::load(home.root())?;
    // Context paths in the config are relative to the project, flags' to the cwd.
    if let Some(paths) = &mut config.context {
        for p in paths.iter_mut() {
            *p = home.project().join(&*p).display().to_string();
        }
    }
    let setup = Options {
        question: args.question.join(" "),
        mode: args.mode,
        rounds: args.rounds,
        position: args.position,
        stakeholders: args.stakeholders,
        personas: args.personas,
        interactive: args.interactive,
        framework: args.framework,
        focus: args.focus,
        research: args.research,
        autonomy: args.autonomy,
        output: args.output,
        context: args.context,
        diff: args.diff,
        pr: args.pr,
        follow_up: args.follow_up,
        versus: args.versus,
        seats: args.seats.seat,
        independent: args.seats.independent,
        budget_tokens: args.seats.budget_tokens,
        budget_usd: args.seats.budget_usd,
        cwd: ctx.cwd.clone(),
        from_config: Default::default(),
        turned_off: [
            ("interactive", args.no_interactive),
            ("research", args.no_research),
            ("diff", args.no_diff),
        ]
        .into_iter()
        .filter_map(|(key, off)| off.then_some(key))
        .collect(),
    }
    .with_config(&config)
    .into_setup()
    .map_err(|e| CliError::from_display(e).usage())?;
    let mut setup = setup;
    let mut earlier = anvil_core::review::earlier::read(home, &ctx.cwd, &setup.inputs)?;
    if !args.no_recall && config.recall != Some(false) && setup.inputs.versus.is_empty() {
        // A debate that follows one up gets that one in full; it is not recalled again.
        let skip = setup
            .inputs
            .follow_up
            .as_deref()
            .and_then(anvil_core::home::LineRef::parse)
            .map(|l| l.debate);
        match crate::memory::recall::recall(home, &setup.question, skip.as_deref()) {
            Ok(found) if !found.recalled.is_empty() => {
                setup.inputs.recalled = found.recalled;
                earlier.recalled = Some(found.text);
            }
            Ok(_) => {}
            // Recall helps; it never stops a debate from starting.
            Err(e) => say(&format!(
                "anvil: note: no earlier conclusions recalled: {}",
                e.to_text().trim()
            )),
        }
    }
    let material = anvil_core::review::context::gather(
        home,
        &ctx.cwd,
        &setup.inputs,
        earlier,
        anvil_core::review::context::MAX_BYTES,
    )?;
    let inputs = StartInputs {
        material,
        output_dir: config.output_dir.clone(),
    };
    let started = anvil_core::line::start::start_with(home, setup, session, inputs)?;
    for note in &started.notes {
        say(&format!("anvil: note: {note}"));
    }
    Ok(started)
}
