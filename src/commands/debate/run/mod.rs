//! `anvil run`: a whole debate, headless, with `claude -p`, shown as it happens ([`show`]);
//! the human is asked at the terminal (or in the page of `anvil serve`, whichever answers
//! first).

mod claude;
mod show;
mod terminal;
mod writing;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anvil_core::home::{Home, LineRef};
use anvil_core::model::provenance::RunTally;
use anvil_core::model::state::{Role, State, Status};
use anvil_core::seat::Turned;

use crate::commands::start::DebateArgs;
use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::view;

use claude::{allowed_tools, spawn_claude, watch};
use show::{Kind, Show, Who};
use terminal::Input;

/// Run a whole debate headless with `claude -p`, showing it as it happens.
///
/// Each phase is shown as its agent writes it, under a header naming its round, its role and
/// who plays it, then where the debate ends (the consensus, the points still open) and the
/// report's path. A terminal gets styled, wrapped text (plain with NO_COLOR); a pipe gets plain
/// text. --quiet prints one progress line per phase instead, --json one JSON event per line.
///
/// Takes the options of `anvil start`, or --line to run a line that exists (a branch, a line
/// that stopped). With --interactive, each pause asks you at the terminal how to steer the
/// next round (a line of text; Enter continues, `synthesize` concludes); a debater's `anvil
/// ask` question is asked here too. Without a terminal, answers are read from stdin, one line
/// each. Whichever comes first wins: a line typed here, or an answer or steering given
/// elsewhere (`anvil answer`, `anvil steer`, the page of `anvil serve`). The report's path is
/// printed on stdout at the end.
///
/// A role with a seat (--seat ROLE=AGENT[:MODEL], or [seats] in .anvil/config.toml) is played
/// by that agent (one of those `anvil seats` lists), headless, read-only, in a session of its
/// own; the others by claude as above. A seat that fails stops the run with nothing of its
/// phase recorded (retry with --line), unless --fallback host lets claude play it.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil run \"Should we adopt GraphQL?\" --rounds 2 --interactive
  anvil run \"Rewrite billing in Rust?\" --seat critic=codex --framework adr
  anvil run --line graphql@keep-rest        go on with a line (a branch, one that stopped)")]
pub struct Args {
    #[command(flatten)]
    debate: DebateArgs,

    /// Run this line of a debate instead of starting one.
    ///
    /// NAME[@LINE]: any name of the debate (see `anvil log --help`). The line is bound to a new
    /// headless session and goes on where it stands. Refused when the line is over or another
    /// `anvil run` drives it.
    #[arg(long, value_name = "NAME[@LINE]", conflicts_with = "DebateArgs")]
    line: Option<String>,

    /// Never read stdin: wait for `anvil steer` and `anvil answer`.
    ///
    /// Pauses wait for steering queued with `anvil steer` (or the page), questions for `anvil
    /// answer` (or the page). This is how `anvil serve` runs a line.
    #[arg(long, hide_short_help = true)]
    no_stdin: bool,

    /// The Claude Code CLI to run.
    ///
    /// Default: $ANVIL_CLAUDE_BIN, else `claude` on PATH.
    #[arg(long, value_name = "PATH", hide_short_help = true)]
    claude: Option<PathBuf>,

    /// An extra argument for claude (repeatable).
    ///
    /// For example --claude-arg=--model --claude-arg=sonnet.
    #[arg(
        long = "claude-arg",
        value_name = "ARG",
        allow_hyphen_values = true,
        hide_short_help = true
    )]
    claude_args: Vec<String>,

    /// Where this run's output goes, relative to the project, as the line's headless record
    /// shows it (set by `anvil serve`, which starts the run with its output in that file).
    #[arg(long, hide = true, value_name = "PATH")]
    log: Option<String>,

    /// Show one progress line per phase on stderr instead of the debate; stdout gets the
    /// report's path only.
    #[arg(long, short = 'q', conflicts_with = "json")]
    quiet: bool,

    /// Print the run as JSON events on stdout, one per line, for scripts (docs/run.md lists
    /// them).
    #[arg(long)]
    json: bool,
}
pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let claude = args
        .claude
        .or_else(|| std::env::var_os("ANVIL_CLAUDE_BIN").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("claude"));
    let session = anvil_core::agent::new_session_id();
    // `--fallback host` says how this run plays the line, whether it starts a debate or not.
    let fallback_given = args.debate.options.fallback.is_some();
    let (line, prompt) = match &args.line {
        Some(name) => {
            let record = view::record(&home)?;
            let line = crate::naming::line(ctx, &home, &record, Some(name))?.line;
            // Refused before the line is rebound, when another run drives it.
            anvil_core::line::headless::can_run(&home, &line)?;
            let restored =
                anvil_core::line::restore::resume(&home, &record, &line, Some(&session))?;
            (line, restored.prompt)
        }
        None => {
            crate::commands::start::asks_something(&args.debate, "run")?;
            let (started, _) =
                crate::commands::start::create(ctx, &home, args.debate, Some(&session))?;
            (started.line, started.prompt)
        }
    };
    let claim = anvil_core::line::headless::claim(&home, &line, args.log)?;
    let mut cost = RunTally::default();
    let show = Show::new(
        Kind::of(args.quiet, args.json),
        &home,
        &line,
        Instant::now(),
    );
    let json = show.is_json();
    let config = anvil_core::model::config::Config::load(&home)?;
    let fallback = fallback_given || config.seat_fallback() || {
        let state = State::load(&home.state_path(&line))?;
        state.setup.seats.fallback.is_some()
    };
    let driven = Driver {
        home: &home,
        line: &line,
        claude: &claude,
        claude_args: &args.claude_args,
        session: &session,
        fallback,
        seat_timeout: config.seat_timeout(),
        config: anvil_core::model::config::Lazy::read(&home, config),
        input: Input::new(!args.no_stdin),
        show,
    }
    .drive(prompt, &mut cost);
    // What the runs cost goes in the record however they ended.
    if cost.total.runs > 0
        && let Err(e) = anvil_core::line::control::record_run(&home, &line, &session, &cost.total)
    {
        say(&format!(
            "anvil: note: the runs' cost was not recorded: {e}"
        ));
    }
    let outcome = match &driven {
        Ok(report) => Ok(format!(
            "done; report at {}",
            report
                .strip_prefix(home.project())
                .unwrap_or(report)
                .display()
        )),
        Err(e) => Err(e.message.clone()),
    };
    if let Err(e) = claim.finish(outcome) {
        say(&format!("anvil: note: {e}"));
    }
    let report = driven?;
    // The report's path ends stdout, for scripts (the JSON events' `done` holds it).
    if json {
        return Ok(());
    }
    out(&format!("{}\n", report.display()))
}

/// One headless run of a line.
struct Driver<'a> {
    home: &'a Home,
    line: &'a LineRef,
    claude: &'a Path,
    claude_args: &'a [String],
    session: &'a str,
    /// The host plays a seat that fails.
    fallback: bool,
    seat_timeout: Duration,
    /// The project's config, read once for the whole run.
    config: anvil_core::model::config::Lazy,
    input: Input,
    /// What the person sees of the run.
    show: Show,
}

impl Driver<'_> {
    /// Runs claude from `prompt` until the line is done; returns the report's path. What
    /// each run cost is added to `cost`, whatever happens.
    fn drive(mut self, prompt: String, cost: &mut RunTally) -> Result<PathBuf, CliError> {
        let (home, line) = (self.home, self.line);
        anvil_core::line::control::drive_headless(home, line)?;

        // Claude needs anvil's Stop hook: the user's own if their settings run it (the session
        // reads no project settings, see `claude.rs`), else one for this run.
        let settings = if anvil_core::claude::install::user_runs_stop_hook() {
            None
        } else {
            let mut file = tempfile::Builder::new()
                .prefix("anvil-run-settings")
                .suffix(".json")
                .tempfile()?;
            let json = anvil_core::claude::install::hook_settings(
                &anvil_core::claude::install::local_hook_program(),
            );
            std::io::Write::write_all(&mut file, json.to_string().as_bytes())?;
            Some(file)
        };

        self.show.start(home, line, self.claude);
        let state = State::load(&home.state_path(line))?;
        // Not while phases due at once start: several agents' cold starts are slow enough.
        if self.due()?.is_empty() {
            self.know_versions(&state);
        }
        let allowed = allowed_tools(&state.setup);
        // A line that stands at a pause (resumed there) asks the human before Claude runs.
        let mut prompt = (state.progress.phase != Role::InteractivePause).then_some(prompt);
        let mut claude_ran = false;
        loop {
            // A seat's phase is played by its agent, never by claude.
            let due = self.due()?;
            if !due.is_empty() {
                prompt = self.play_due(&due)?;
                self.know_versions(&State::load(&home.state_path(line))?);
                continue;
            }
            if let Some(out) = anvil_core::seat::out(home, line)? {
                prompt = self.play_seat(out)?;
                continue;
            }
            if let Some(prompt) = prompt.take() {
                let child = spawn_claude(
                    self.claude,
                    home.project(),
                    &prompt,
                    self.session,
                    claude_ran,
                    settings.as_ref().map(|f| f.path()),
                    &allowed,
                    self.claude_args,
                )?;
                claude_ran = true;
                watch(child, home, line, &mut self.input, &mut self.show, cost)?;
            }
            let state = State::load(&home.state_path(line))?;
            match (state.progress.status, state.progress.phase) {
                (Status::Done, _) => break,
                (Status::Active, Role::InteractivePause) => {
                    let Some(text) = self.pause(&state)? else {
                        continue;
                    };
                    match anvil_core::line::stop::record_turn(home, line, self.session, &text)?
                        .into_prompt()
                    {
                        Some(next) => prompt = Some(next),
                        None => continue,
                    }
                }
                // Claude stopped for a seat's phase: played at the top of the loop.
                (Status::Active, _) if anvil_core::seat::out(home, line)?.is_some() => {}
                (status, phase) => {
                    return Err(CliError::new(format!(
                        "claude stopped before the debate finished ({} at round {}, {})",
                        status.name(),
                        state.progress.round,
                        phase.name()
                    ))
                    .hint(format!("continue it with `anvil run --line {line}`")));
                }
            }
        }
        let state = State::load(&home.state_path(line))?;
        let report = anvil_core::review::report::output_path(home, &state);
        self.show.done(home, line, &report, cost);
        Ok(report)
    }

    /// Asks each seat's agent its version, in the background, so that its phase's header can
    /// name it without waiting (the answer is kept for the run; `--quiet` names no version).
    fn know_versions(&self, state: &State) {
        if matches!(self.show.kind(), Kind::Quiet) {
            return;
        }
        let mut agents: Vec<&'static dyn anvil_core::agent::Agent> = Vec::new();
        for seat in state.setup.seats.roles.values() {
            if !agents.contains(&seat.agent) && seat.agent != anvil_core::agent::RUN_HOST {
                agents.push(seat.agent);
            }
        }
        for agent in agents {
            std::thread::spawn(move || anvil_core::agent::known_version(agent));
        }
    }

    /// Who plays `out`, as far as it is known before the agent says anything: its version,
    /// and its model when the seat names one, or the model it played with last on the line.
    fn who_plays(&self, out: &anvil_core::seat::Out) -> Who {
        let agent = out.seat.agent;
        let model = out.seat.model.clone().or_else(|| {
            let record = anvil_core::record::store::Record::open(&self.home.record_dir()).ok()?;
            let history =
                anvil_core::review::history::LineHistory::load(&record, self.line).ok()?;
            history
                .entries
                .iter()
                .rev()
                .find(|e| e.meta.agent.as_deref() == Some(agent.name()))
                .and_then(|e| e.meta.model.clone())
        });
        Who {
            agent: agent.name().to_owned(),
            version: (agent != anvil_core::agent::RUN_HOST)
                .then(|| anvil_core::agent::known_version(agent))
                .flatten(),
            model,
        }
    }

    /// Plays the seat's phase that is out and records it; the next prompt for claude, when
    /// the host plays the next phase (or takes this one over, with --fallback host).
    fn play_seat(&mut self, out: anvil_core::seat::Out) -> Result<Option<String>, CliError> {
        let (home, line) = (self.home, self.line);
        let who = self.who_plays(&out);
        self.show.seat_begins(&out, who);
        let guard = std::env::current_exe().ok();
        // The runner hands on what the agent says from the thread that plays it: this one.
        let show = std::sync::Mutex::new(&mut self.show);
        let watch = |live| {
            show.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .seat_heard(live);
        };
        let turned = anvil_core::seat::play(
            home,
            line,
            self.session,
            &out,
            guard.as_deref(),
            self.seat_timeout,
            &self.config,
            Some(&watch),
        )?;
        self.show.show_recorded(home, line);
        match turned {
            Turned::Played { reply, .. } => Ok(reply.into_prompt()),
            Turned::Failed { error, note } => {
                self.show.stop_writing();
                if let Some(note) = note {
                    self.show.note(&format!("anvil: note: {note}"));
                }
                self.seat_failed(&out.label, &out.seat, &error)
            }
            Turned::Busy => Err(busy(&out, line)),
        }
    }

    /// A seat failed: the host takes it over with --fallback host, else the run stops with
    /// nothing of the phase recorded.
    fn seat_failed(
        &mut self,
        label: &str,
        seat: &anvil_core::model::seats::Seat,
        e: &anvil_core::agent::SeatError,
    ) -> Result<Option<String>, CliError> {
        let line = self.line;
        if self.fallback {
            self.show.note(&crate::term::visible(&format!(
                "anvil: the seat of {label} ({seat}) failed: {e}; the host plays it (--fallback host)"
            )));
            let prompt =
                anvil_core::seat::fall_back(self.home, line, &format!("{seat} failed: {e}"))?;
            return Ok(Some(prompt));
        }
        Err(
            CliError::new(format!("the seat of {label} ({seat}) failed: {e}")).hint(format!(
                "nothing of that phase was recorded and the debate is saved: retry it with \
                 `anvil run --line {line}`, or let the host play the seat with \
                 `anvil run --line {line} --fallback host`"
            )),
        )
    }

    /// The phases due at once that this run plays together ([`anvil_core::seat::due`]): a
    /// round drafted blind, the triage answers, the ballots; claude plays, one-shot, those
    /// without a seat. Empty when one phase alone is out.
    fn due(&self) -> Result<Vec<anvil_core::seat::Out>, CliError> {
        let host = anvil_core::model::seats::Seat {
            agent: anvil_core::agent::RUN_HOST,
            model: None,
        };
        Ok(anvil_core::seat::due(self.home, self.line, Some(&host))?)
    }

    /// Plays the phases `due` at once, each in a session of its own, and records them in
    /// order (each with the prompt it really had); the next prompt for claude, when the host
    /// plays the next phase (or takes a failed one over, with --fallback host).
    fn play_due(&mut self, due: &[anvil_core::seat::Out]) -> Result<Option<String>, CliError> {
        let (home, line) = (self.home, self.line);
        let who: Vec<String> = due
            .iter()
            .map(|o| format!("{} by {}", o.label, o.seat))
            .collect();
        self.show
            .aside(&format!("at once, blind: {}", who.join(", ")));
        let guard = std::env::current_exe().ok();
        let turned = anvil_core::seat::play_due(
            home,
            line,
            self.session,
            due,
            guard.as_deref(),
            self.seat_timeout,
            &self.config,
        )?;
        self.show.show_recorded(home, line);
        let mut prompt = None;
        for (out, turned) in turned {
            prompt = match turned {
                Turned::Played { reply, .. } => reply.into_prompt(),
                Turned::Failed { error, note } => {
                    self.show.stop_writing();
                    if let Some(note) = note {
                        self.show.note(&format!("anvil: note: {note}"));
                    }
                    return self.seat_failed(&out.label, &out.seat, &error);
                }
                Turned::Busy => return Err(busy(&out, line)),
            };
        }
        Ok(prompt)
    }

    /// Asks the human how to steer the round after a pause: a line typed here, or steering
    /// queued elsewhere (`anvil steer`, the page), whichever comes first. Returns the pause's
    /// text to record; `None` when the line changed meanwhile (cancelled, say).
    fn pause(&mut self, state: &State) -> Result<Option<String>, CliError> {
        let (home, line) = (self.home, self.line);
        self.show.round_over(home, line, state);
        self.input.prompt(&format!(
            "Round {} is over. Steer round {} (Enter: continue, `synthesize`: conclude now): ",
            state.progress.round,
            state.progress.round + 1
        ));
        loop {
            let now = State::load(&home.state_path(line))?;
            if now.progress.status != Status::Active
                || now.progress.phase != Role::InteractivePause
                || now.progress.step != state.progress.step
            {
                return Ok(None);
            }
            let queued = home.queued_steering(line)?;
            if !queued.is_empty() || !now.pending_steering.is_empty() {
                // The queue goes with this turn, as the hook delivers it at any stop.
                self.show
                    .note("anvil: steering queued elsewhere; going on with it");
                return Ok(Some(
                    "Steered by the human from elsewhere.\n\n<anvil-steering>continue</anvil-steering>"
                        .to_owned(),
                ));
            }
            if let Some(typed) = self.input.poll() {
                let steering = if typed.trim().is_empty() {
                    "continue"
                } else {
                    typed.trim()
                };
                return Ok(Some(format!(
                    "Steered at the terminal by the human.\n\n<anvil-steering>{steering}</anvil-steering>"
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The error when another process plays the seat of `out`.
fn busy(out: &anvil_core::seat::Out, line: &LineRef) -> CliError {
    CliError::new(format!(
        "the seat of {} ({}) is being played by another process",
        out.label, out.seat
    ))
    .hint(format!(
        "the session that drives {line} plays it; `anvil status {line}` shows when it is done"
    ))
}
