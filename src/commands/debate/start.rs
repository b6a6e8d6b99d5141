//! `anvil start`: create a debate and print its first prompt.

use anvil_core::line::start::StartInputs;
use anvil_core::model::config::Config;
use anvil_core::model::options::Options;

use crate::ctx::Ctx;
use crate::error::CliError;
pub use crate::flags::DebateArgs;
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
/// set in .anvil/config.toml; flags override them.
#[derive(Debug, clap::Args)]
#[command(long_about = long_about(), after_long_help = EXAMPLES)]
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

/// `--help`'s words above the options: the doc comment above, with the config's keys named.
fn long_about() -> String {
    format!(
        "Start a debate on QUESTION and print the first phase's prompt on stdout.\n\n\
         Inside Claude Code (the /anvil command) the debate is bound to the running session at \
         once. In a terminal, the next Claude session that stops in this project claims it, \
         e.g.:\n\nclaude \"$(anvil start \"Should we adopt GraphQL?\" --rounds 2)\"\n\n\
         The Stop hook then drives every phase to the synthesis. Defaults for every option can \
         be set in .anvil/config.toml (keys: {}); flags override them.",
        crate::flags::config_keys()
    )
}

const EXAMPLES: &str = "Examples:
  anvil start \"Should we adopt GraphQL?\" --rounds 2
  anvil start \"Rewrite billing in Rust?\" --framework adr --focus security --context src/
  anvil start \"Is this change safe to ship?\" --diff --framework red-team
  anvil start \"Which plan?\" --persona startup-cfo --persona junior-developer
  anvil start --versus plan-a.md plan-b.md
  anvil start \"What next?\" --follow-up 20261122-graphql-3f2a@main --research";

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let slash = args.slash;
    slash_safe(slash, || {
        let home = ctx.home()?;
        asks_something(&args.debate, "start")?;
        let session = ctx.session_or(args.session)?;
        let (started, seats) = create(ctx, &home, args.debate, session.as_deref())?;
        // In Claude Code, the command's output is what the person sees of it: the seats the
        // config chose are named there too, before the prompt.
        if let Some(seats) = seats.filter(|_| slash) {
            out(&format!("{seats}\n\n"))?;
        }
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

/// Refuses a debate with nothing to argue (no question, no --versus) with what to type, for
/// `anvil COMMAND` (start or run).
pub fn asks_something(args: &DebateArgs, command: &str) -> Result<(), CliError> {
    if !args.options.question.trim().is_empty() || !args.options.versus.is_empty() {
        return Ok(());
    }
    let mut examples = vec![
        (format!("anvil {command} \"Should we adopt GraphQL?\""), ""),
        (
            format!("anvil {command} \"Rewrite billing in Rust?\" --rounds 2 --interactive"),
            "",
        ),
    ];
    if command == "run" {
        examples.push((
            "anvil run --line NAME[@LINE]".to_owned(),
            "go on with a line of a recorded debate",
        ));
    }
    examples.push((format!("anvil {command} -h"), "every option"));
    let width = examples
        .iter()
        .filter(|(_, what)| !what.is_empty())
        .map(|(example, _)| example.len())
        .max()
        .unwrap_or(0);
    let examples: Vec<String> = examples
        .iter()
        .map(|(example, what)| match what.is_empty() {
            true => format!("  {example}"),
            false => format!("  {example:<width$}   {what}"),
        })
        .collect();
    Err(
        CliError::new(format!("`anvil {command}` needs a question to debate"))
            .hint(format!("for example\n{}", examples.join("\n")))
            .usage(),
    )
}

/// Creates a debate from the options: config defaults, validation, material, first commit.
/// Says which seats the project's config chose, if any, and returns that too.
pub fn create(
    ctx: &Ctx,
    home: &anvil_core::home::Home,
    args: DebateArgs,
    session: Option<&str>,
) -> Result<(anvil_core::line::start::Started, Option<String>), CliError> {
    let mut config = Config::load(home)?;
    // Context paths in the config are relative to the project, flags' to the cwd.
    for p in &mut config.defaults.context {
        *p = home.project().join(&*p).display().to_string();
    }
    // The roles the command line seats; the config's `[seats]` fills the others.
    let seated_here: Vec<String> = args
        .options
        .seats
        .iter()
        .filter_map(|s| {
            s.split_once('=')
                .map(|(role, _)| role.trim().to_lowercase())
        })
        .collect();
    let options = Options {
        cwd: ctx.cwd.clone(),
        ..args.options
    }
    .with_config(&config);
    let recall = options.recall != Some(false);
    let output_dir = options.output_dir.clone();
    let mut setup = options
        .into_setup()
        .map_err(|e| CliError::from_display(e).usage())?;
    let seats = seats_notice(&setup.seats, &seated_here, &config);
    let mut earlier = anvil_core::review::earlier::read(home, &ctx.cwd, &setup.inputs)?;
    if recall && setup.inputs.versus.is_empty() {
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
        output_dir,
    };
    let started = anvil_core::line::start::start_with(home, setup, session, inputs)?;
    if let Some(seats) = &seats {
        say(seats);
    }
    for note in &started.notes {
        say(&format!("anvil: note: {note}"));
    }
    Ok((started, seats))
}

/// The one notice of the seats a person did not choose on this command line, or whose turns
/// leave for an endpoint: the roles `[seats]` in `.anvil/config.toml` filled (agent and model),
/// where each endpoint seat's turns go (base URL and key variable), and what `[seats] env`
/// passes to every seat. A committed config runs other agents on the person's machine and can
/// name an endpoint, so nobody runs one, or sends a debate somewhere, they were not shown.
fn seats_notice(
    seats: &anvil_core::model::seats::Seats,
    seated_here: &[String],
    config: &Config,
) -> Option<String> {
    let described = |role: &str, seat: &anvil_core::model::seats::Seat| {
        let model = match seat
            .model
            .as_deref()
            .or(seat.agent.endpoint().and_then(|e| e.default_model()))
        {
            Some(model) => format!("model {model}"),
            None => "its default model".to_owned(),
        };
        let to = seat
            .destination()
            .map(|to| format!(", its turns sent to {to}"))
            .unwrap_or_default();
        format!(
            "{role} by {} ({}, {model}{to})",
            seat.agent,
            seat.agent.title()
        )
    };
    let (here, chosen): (Vec<_>, Vec<_>) = seats
        .roles
        .iter()
        .partition(|(role, _)| seated_here.contains(&role.trim().to_lowercase()));
    let mut parts = Vec::new();
    if !chosen.is_empty() {
        let chosen: Vec<String> = chosen.iter().map(|(r, s)| described(r, s)).collect();
        parts.push(format!(".anvil/config.toml seats {}", chosen.join(", ")));
    }
    let env = config.seat_env();
    if !env.is_empty() && !seats.roles.is_empty() {
        let env: Vec<String> = env.iter().map(|v| format!("${v}")).collect();
        parts.push(format!(
            "{} passes {} to every seat",
            if parts.is_empty() {
                ".anvil/config.toml"
            } else {
                "it"
            },
            env.join(", ")
        ));
    }
    let endpoints: Vec<String> = here
        .iter()
        .filter(|(_, s)| s.agent.endpoint().is_some())
        .map(|(r, s)| described(r, s))
        .collect();
    if !endpoints.is_empty() {
        parts.push(format!("the command line seats {}", endpoints.join(", ")));
    }
    (!parts.is_empty()).then(|| format!("anvil: {}", crate::term::visible(&parts.join("; "))))
}
