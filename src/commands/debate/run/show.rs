//! What `anvil run` shows of a debate as it happens, in one of three ways
//! (`docs/run.md` says what each prints):
//!
//! - **for people** (the default), on stdout: a header per phase naming its round, its role
//!   and who plays it (`Round 1 · Critic — codex 0.169.0 (gpt-5.4)`), then its text as the
//!   agent writes it, markdown styled and wrapped to the terminal ([`crate::markdown`]), its
//!   position and open points as words; at an interactive pause, where each seat stands
//!   before the person is asked; at the end, the consensus and the points still open. A
//!   terminal gets styles (unless `NO_COLOR` is set) and the row being written rewritten as
//!   words arrive; a pipe or a file gets plain text, a block at a time.
//! - `--quiet`: one progress line per phase on stderr, as `anvil run` always printed.
//! - `--json`: one JSON object per line on stdout, for scripts.
//!
//! Where the text comes from: the agent's own output as it runs, read by its file in the agent
//! room ([`anvil_core::agent::Agent::hear`]), for the host's `claude -p` and for every seat
//! alike; a phase whose agent says nothing until it is done (or a run's output that could not
//! be read) is shown from the record once recorded. Which phase a host's message writes is
//! the line's state's answer when its first words arrive: the Stop hook recorded the phase
//! before and handed out the next before Claude writes again. What is shown passes the same
//! door as what is recorded (credentials out), and anvil's tags become words.
//!
//! anvil's own notes and questions go to stderr as before; the row being written is taken
//! back first, so they never land in the middle of a sentence.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Instant;

use anstyle::{AnsiColor, Style};
use anvil_core::agent::Live;
use anvil_core::home::{Home, LineRef};
use anvil_core::model::positions::{self, OpenPoint};
use anvil_core::model::provenance::RunTally;
use anvil_core::model::secrets::Intake;
use anvil_core::model::state::{Role, State};
use anvil_core::record::store::Record;
use anvil_core::review::history::{self, Entry, LineHistory};
use serde_json::{Value, json};

use super::terminal::Progress;
use super::writing::{Blocks, Screen, ready};
use crate::markdown::Look;
use crate::output::say;
use crate::term::visible;

/// How a run is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The debate for people, on stdout; `live`: a terminal whose last row can be rewritten.
    Read { look: Look, live: bool },
    /// Progress lines on stderr.
    Quiet,
    /// JSON events on stdout.
    Json,
}

impl Kind {
    /// The way `--quiet` and `--json` ask for, else the debate for people, as stdout takes it:
    /// a terminal gets styles (without `NO_COLOR`), its width and live rows (unless it is
    /// `TERM=dumb`); anything else plain text, unwrapped.
    pub(super) fn of(quiet: bool, json: bool) -> Kind {
        if json {
            return Kind::Json;
        }
        if quiet {
            return Kind::Quiet;
        }
        let stdout = std::io::stdout();
        if !stdout.is_terminal() {
            return Kind::Read {
                look: Look::plain(None),
                live: false,
            };
        }
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        let width = terminal_size::terminal_size_of(&stdout)
            .map(|(w, _)| usize::from(w.0))
            .filter(|w| *w > 0)
            .unwrap_or(80);
        Kind::Read {
            look: Look {
                styled: !set("NO_COLOR") && !dumb,
                width: Some(width),
            },
            live: !dumb,
        }
    }
}

/// Who plays a phase, as its header names them: `codex 0.169.0 (gpt-5.4)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Who {
    pub(super) agent: String,
    pub(super) version: Option<String>,
    pub(super) model: Option<String>,
}

impl Who {
    fn words(&self) -> String {
        let mut out = self.agent.clone();
        if let Some(v) = &self.version {
            out.push(' ');
            out.push_str(v);
        }
        if let Some(m) = &self.model {
            out.push_str(&format!(" ({m})"));
        }
        out
    }

    /// Who the record says played `entry`: its seat's agent, else the host.
    fn of(entry: &Entry) -> Who {
        let meta = &entry.meta;
        Who {
            agent: meta.agent.clone().unwrap_or_else(|| "claude".to_owned()),
            version: meta
                .agent_version
                .clone()
                .or_else(|| meta.claude_version.clone()),
            model: meta.model.clone(),
        }
    }
}

/// The phase being written.
#[derive(Debug)]
struct Writing {
    /// The step it will be recorded at.
    step: u32,
    role: Role,
    round: u32,
    title: String,
    who: Who,
    /// Its header is shown.
    header: bool,
    blocks: Blocks,
    /// A new message began: its text starts a block of its own.
    message: bool,
}

/// What the person (or a script) is shown of one run.
pub(super) struct Show {
    kind: Kind,
    began: Instant,
    /// `--quiet`'s progress lines.
    progress: Option<Progress>,
    /// The last phase shown as recorded (phases are numbered from 1).
    shown: u32,
    writing: Option<Writing>,
    screen: Screen,
    /// What the host said of itself: its version, the model of its last message.
    host: Who,
    /// A message of the host began: which phase it writes is asked at its first words.
    host_message: bool,
    /// Something was printed on stdout: a header is set apart from it.
    printed: bool,
    /// The door what agents say passes before it is shown.
    intake: Intake,
}

impl Show {
    pub(super) fn new(kind: Kind, home: &Home, line: &LineRef, began: Instant) -> Show {
        let (look, live) = match kind {
            Kind::Read { look, live } => (look, live),
            _ => (Look::plain(None), false),
        };
        let shown = State::load(&home.state_path(line)).map_or(0, |s| s.progress.step);
        Show {
            kind,
            began,
            progress: (kind == Kind::Quiet).then(|| Progress::new(home, line, began)),
            shown,
            writing: None,
            screen: Screen::new(look, live),
            host: Who {
                agent: "claude".to_owned(),
                ..Who::default()
            },
            host_message: false,
            printed: false,
            intake: Intake::new(home.root()),
        }
    }

    pub(super) fn is_json(&self) -> bool {
        self.kind == Kind::Json
    }

    pub(super) fn kind(&self) -> Kind {
        self.kind
    }

    /// The phase being written will not be recorded (its seat failed): what it said so far
    /// stays on the screen, and the next phase starts apart from it.
    pub(super) fn stop_writing(&mut self) {
        self.close();
    }

    /// A line of anvil's about how the run goes: a progress line with `--quiet`, a note among
    /// the phases for people, an event for scripts.
    pub(super) fn aside(&mut self, text: &str) {
        match self.kind {
            Kind::Quiet => say(&format!(
                "[{:>5.1}s] {}",
                self.began.elapsed().as_secs_f64(),
                visible(text)
            )),
            Kind::Json => self.event(json!({"event": "note", "text": text})),
            Kind::Read { .. } => {
                let clear = self.screen.clear();
                let gap = if self.printed { "\n" } else { "" };
                let line = self.paint(&visible(text), Style::new().italic());
                self.print(&format!("{clear}{gap}{line}\n"));
                self.printed = true;
            }
        }
    }

    fn styled(&self) -> bool {
        matches!(self.kind, Kind::Read { look, .. } if look.styled)
    }

    /// Writes to stdout; a closed pipe is not this run's failure.
    fn print(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
    }

    fn event(&mut self, value: Value) {
        self.print(&format!("{value}\n"));
    }

    /// `text` in `style` when styles are shown.
    fn paint(&self, text: &str, style: Style) -> String {
        if self.styled() {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }

    /// Takes back the row being written, before anything else reaches the terminal.
    pub(super) fn interrupt(&mut self) {
        let clear = self.screen.clear();
        self.print(clear);
    }

    /// One of anvil's notes, on stderr.
    pub(super) fn note(&mut self, text: &str) {
        self.interrupt();
        say(text);
    }

    /// The run begins: which line, with which claude.
    pub(super) fn start(&mut self, home: &Home, line: &LineRef, claude: &Path) {
        let Ok(state) = State::load(&home.state_path(line)) else {
            return;
        };
        match self.kind {
            Kind::Quiet => say(&format!("anvil: running {line} with {}", claude.display())),
            Kind::Json => self.event(json!({
                "event": "start",
                "debate": line.debate,
                "line": line.line,
                "question": state.setup.question,
                "mode": state.setup.mode.name(),
                "rounds": state.setup.rounds,
                "phases": anvil_core::model::machine::planned_phases(&state.setup),
            })),
            Kind::Read { .. } => {
                let question = visible(anvil_core::model::state::first_line(&state.setup.question))
                    .into_owned();
                let title = self.paint(&question, Style::new().bold());
                let about = self.paint(
                    &format!(
                        "{line} · {} · {} round{}",
                        state.setup.mode.name(),
                        state.setup.rounds,
                        if state.setup.rounds == 1 { "" } else { "s" }
                    ),
                    Style::new().dimmed(),
                );
                self.print(&format!("{title}\n{about}\n"));
                self.printed = true;
            }
        }
    }

    /// What one line of the host's output said.
    pub(super) fn host_heard(&mut self, live: Live, home: &Home, line: &LineRef) {
        if self.kind == Kind::Quiet {
            return;
        }
        let text = match live {
            Live::Version(v) => {
                self.host.version = Some(v);
                return;
            }
            Live::Begins { model } => {
                if model.is_some() {
                    self.host.model = model;
                }
                self.host_message = true;
                return;
            }
            Live::Text(text) => {
                self.host_message = true;
                text
            }
            Live::More(text) => text,
            _ => return,
        };
        if self.host_message || self.writing.is_none() {
            self.host_message = false;
            self.host_writes(home, line);
        }
        self.text(&text);
    }

    /// A message of the host begins: the phase it writes is the one out now.
    fn host_writes(&mut self, home: &Home, line: &LineRef) {
        let Ok(state) = State::load(&home.state_path(line)) else {
            return;
        };
        let step = state.progress.step + 1;
        match &mut self.writing {
            Some(w) if w.step == step => w.message = true,
            _ => {
                // What was recorded meanwhile is shown first, in its order.
                self.look(home, line);
                let p = &state.progress;
                self.open(
                    step,
                    p.phase,
                    p.round,
                    phase_title(&state),
                    self.host.clone(),
                );
            }
        }
    }

    /// A seat's phase begins: `who` plays `out`.
    pub(super) fn seat_begins(&mut self, out: &anvil_core::seat::Out, who: Who) {
        match self.kind {
            Kind::Quiet => say(&format!(
                "[{:>5.1}s] {} · played by {}",
                self.began.elapsed().as_secs_f64(),
                visible(&out.label),
                visible(&out.seat.to_string())
            )),
            _ => {
                let title = anvil_core::model::transcript::heading(
                    out.role,
                    out.round,
                    out.voice.as_deref(),
                );
                self.open(out.step + 1, out.role, out.round, title, who);
            }
        }
    }

    /// What one line of a seat's output said.
    pub(super) fn seat_heard(&mut self, live: Live) {
        if self.kind == Kind::Quiet {
            return;
        }
        let Some(writing) = &mut self.writing else {
            return;
        };
        match live {
            Live::Version(v) if !writing.header => writing.who.version = Some(v),
            Live::Begins { model } => {
                if let Some(m) = model.filter(|_| !writing.header) {
                    writing.who.model = Some(m);
                }
                writing.message = true;
            }
            Live::Text(text) => {
                writing.message = true;
                self.text(&text);
            }
            Live::More(text) => self.text(&text),
            _ => {}
        }
    }

    /// Starts writing phase `step`; one that was being written and never recorded is shown
    /// as far as it went.
    fn open(&mut self, step: u32, role: Role, round: u32, title: String, who: Who) {
        if self.writing.as_ref().is_some_and(|w| w.step != step) {
            self.close();
        }
        self.writing = Some(Writing {
            step,
            role,
            round,
            title,
            who,
            header: false,
            blocks: Blocks::default(),
            message: false,
        });
    }

    /// The header of the phase being written, once.
    fn header(&mut self) {
        let Some(w) = &mut self.writing else { return };
        if std::mem::replace(&mut w.header, true) {
            return;
        }
        let (step, role, round, title, who) =
            (w.step, w.role, w.round, w.title.clone(), w.who.clone());
        match self.kind {
            Kind::Quiet => {}
            Kind::Json => self.event(json!({
                "event": "phase",
                "step": step,
                "role": role.name(),
                "round": round,
                "title": title,
                "agent": who.agent,
                "version": who.version,
                "model": who.model,
            })),
            Kind::Read { .. } => {
                let clear = self.screen.clear();
                let gap = if self.printed { "\n" } else { "" };
                let title = self.paint(
                    &visible(&title),
                    Style::new()
                        .bold()
                        .fg_color(Some(AnsiColor::Magenta.into())),
                );
                let who = self.paint(
                    &format!("— {}", visible(&who.words())),
                    Style::new().dimmed(),
                );
                self.print(&format!("{clear}{gap}{title} {who}\n\n"));
                self.printed = true;
            }
        }
    }

    /// More of the phase being written.
    fn text(&mut self, more: &str) {
        if self.writing.is_none() || self.kind == Kind::Quiet {
            return;
        }
        self.header();
        let Some(w) = &mut self.writing else { return };
        if std::mem::take(&mut w.message) && !w.blocks.is_empty() {
            w.blocks.push("\n\n");
        }
        w.blocks.push(more);
        let mut ended = Vec::new();
        while let Some(block) = w.blocks.take_ended() {
            ended.push(block);
        }
        let settled = w.blocks.settled();
        for block in ended {
            self.block(&block);
        }
        if self.screen.is_live() && self.kind != Kind::Json {
            let shown = ready(&settled, &mut self.intake);
            let out = self.screen.writing(&shown);
            self.print(&out);
        }
    }

    /// A block of the phase that is over.
    fn block(&mut self, markdown: &str) {
        let shown = ready(markdown, &mut self.intake);
        match self.kind {
            Kind::Json => {
                let step = self.writing.as_ref().map_or(0, |w| w.step);
                if !shown.trim().is_empty() {
                    self.event(
                        json!({"event": "text", "step": step, "markdown": shown.trim_end()}),
                    );
                }
            }
            Kind::Read { .. } => {
                let out = self.screen.ended(&shown);
                self.print(&out);
            }
            Kind::Quiet => {}
        }
    }

    /// The phase being written is over: what is left of it is shown.
    fn close(&mut self) {
        let Some(mut w) = self.writing.take() else {
            return;
        };
        let rest = w.blocks.take_rest();
        self.writing = Some(w);
        if !rest.trim().is_empty() {
            self.block(&rest);
        }
        self.writing = None;
        let end = self.screen.end_phase();
        self.print(end);
    }

    /// A seat's turn is over, or the round, or the run: what was recorded since the last look
    /// is shown (`--quiet`'s progress lines say a phase as it begins, as they always did).
    pub(super) fn show_recorded(&mut self, home: &Home, line: &LineRef) {
        if self.kind != Kind::Quiet {
            self.look(home, line);
        }
    }

    /// The host's `claude -p` starts: `--quiet`'s progress lines go on from where the line
    /// stands (the phases seats played were said as they began).
    pub(super) fn host_begins(&mut self, home: &Home, line: &LineRef) {
        if self.kind == Kind::Quiet {
            self.progress = Some(Progress::new(home, line, self.began));
        }
    }

    /// Shows what was recorded since the last look; returns the line's state.
    pub(super) fn look(&mut self, home: &Home, line: &LineRef) -> Option<State> {
        if let Some(progress) = &mut self.progress {
            return progress.look(home, line);
        }
        let state = State::load(&home.state_path(line)).ok()?;
        if state.progress.step > self.shown {
            self.recorded_since(home, &state);
        }
        Some(state)
    }

    /// Shows each phase recorded after the last one shown, up to where `state` stands.
    fn recorded_since(&mut self, home: &Home, state: &State) {
        let Ok(record) = Record::open(&home.record_dir()) else {
            return;
        };
        let line = LineRef::new(&state.debate, &state.line);
        let Ok(history) = LineHistory::load(&record, &line) else {
            return;
        };
        let after = self.shown;
        for entry in history
            .entries
            .iter()
            .filter(|e| e.step > after && e.step <= state.progress.step && e.role.is_some())
        {
            self.recorded(&record, entry, state);
        }
        self.shown = state.progress.step;
    }

    /// A phase is recorded: the end of what was written of it, or all of it when nothing was.
    fn recorded(&mut self, record: &Record, entry: &Entry, state: &State) {
        let Some(role) = entry.role else { return };
        let streamed = self
            .writing
            .as_ref()
            .is_some_and(|w| w.step == entry.step && w.header);
        if role == Role::InteractivePause {
            self.close();
            self.steered(entry);
            return;
        }
        let text = history::response(record, entry)
            .ok()
            .flatten()
            .unwrap_or_default();
        if streamed {
            self.close();
        } else {
            let title = anvil_core::model::transcript::heading(
                role,
                entry.meta.round,
                entry.meta.voice.as_deref(),
            );
            self.open(entry.step, role, entry.meta.round, title, Who::of(entry));
            if let Some(w) = &mut self.writing {
                w.blocks.push(&text);
            }
            self.header();
            self.close();
        }
        if self.kind == Kind::Json {
            let meta = &entry.meta;
            let who = Who::of(entry);
            let markdown = ready(&text, &mut self.intake);
            self.event(json!({
                "event": "recorded",
                "step": entry.step,
                "role": role.name(),
                "round": meta.round,
                "voice": meta.voice,
                "agent": who.agent,
                "version": who.version,
                "model": who.model,
                "position": anvil_core::review::positions::position(meta).map(|p| json!({
                    "stance": p.stance.to_string(),
                    "confidence": p.confidence.decimal(),
                    "claim": p.claim,
                })),
                "open": meta.open,
                "markdown": markdown.trim_end(),
                "phases": anvil_core::model::machine::planned_phases(&state.setup),
            }));
        }
    }

    /// A pause's steering, as recorded.
    fn steered(&mut self, entry: &Entry) {
        let steering = entry
            .meta
            .steering
            .first()
            .cloned()
            .unwrap_or_else(|| "continue".to_owned());
        match self.kind {
            Kind::Json => self.event(json!({
                "event": "steered",
                "step": entry.step,
                "round": entry.meta.round,
                "steering": steering,
            })),
            Kind::Read { .. } => {
                let line = self.paint(
                    &format!(
                        "Steering for round {}: {}",
                        entry.meta.round + 1,
                        visible(&steering)
                    ),
                    Style::new().italic(),
                );
                let gap = if self.printed { "\n" } else { "" };
                self.print(&format!("{gap}{line}\n"));
                self.printed = true;
            }
            Kind::Quiet => {}
        }
    }

    /// The round is over and the person is about to be asked how to steer the next: where
    /// each seat stands, and the points still open.
    pub(super) fn round_over(&mut self, home: &Home, line: &LineRef, state: &State) {
        self.show_recorded(home, line);
        self.close();
        let round = state.progress.round;
        let stands = stands(home, line, round);
        let open = positions::still_open(&state.positions);
        match self.kind {
            Kind::Quiet => {}
            Kind::Json => self.event(json!({
                "event": "pause",
                "round": round,
                "positions": stands.iter().map(|s| json!({
                    "seat": s.seat, "agent": s.who.agent, "model": s.who.model,
                    "stance": s.stance, "confidence": s.confidence, "claim": s.claim,
                })).collect::<Vec<_>>(),
                "open": open_json(&open),
            })),
            Kind::Read { .. } => {
                let mut out = String::new();
                let gap = if self.printed { "\n" } else { "" };
                let heading = self.paint(
                    &format!("Round {round} is over"),
                    Style::new()
                        .bold()
                        .fg_color(Some(AnsiColor::Magenta.into())),
                );
                out.push_str(&format!("{gap}{heading}\n\n"));
                for s in &stands {
                    let seat = self.paint(&visible(&s.seat), Style::new().bold());
                    let stance = match (&s.stance, &s.confidence) {
                        (Some(stance), Some(c)) => format!("{stance} {c}"),
                        _ => "no position stated".to_owned(),
                    };
                    out.push_str(&format!(
                        "  {seat} ({}): {stance}{}\n",
                        visible(&s.who.words()),
                        if s.claim.is_empty() {
                            String::new()
                        } else {
                            format!(" — {}", visible(&s.claim))
                        }
                    ));
                }
                out.push_str(&self.open_points("Open points", &open));
                self.print(&out);
                self.printed = true;
            }
        }
    }

    /// `points` under `title`, for people.
    fn open_points(&self, title: &str, points: &[OpenPoint]) -> String {
        if points.is_empty() {
            return String::new();
        }
        let mut out = format!("\n  {}\n", self.paint(title, Style::new().bold()));
        for (i, p) in points.iter().enumerate() {
            out.push_str(&format!(
                "    {} ({}): {}\n",
                OpenPoint::label(i),
                visible(&p.seat),
                visible(&p.text)
            ));
        }
        out
    }

    /// A debater asks the person something.
    pub(super) fn question(&mut self, question: &str) {
        self.interrupt();
        if self.kind == Kind::Json {
            self.event(json!({"event": "question", "text": question}));
        }
    }

    /// The debate is done: the consensus and what is still open, what it cost.
    pub(super) fn done(
        &mut self,
        home: &Home,
        line: &LineRef,
        report: &Path,
        cost: &RunTally,
    ) -> Option<()> {
        self.show_recorded(home, line);
        self.close();
        let state = State::load(&home.state_path(line)).ok()?;
        let summary = format!(
            "anvil: {line} done in {:.0?} · {} phases · {}",
            self.began.elapsed(),
            state.progress.step,
            cost.total.summary()
        );
        let finals: Vec<_> = positions::finals(&state.positions)
            .into_iter()
            .map(|(_, s, c)| (s, c))
            .collect();
        let consensus = positions::consensus(&finals);
        let open = positions::still_open(&state.positions);
        match self.kind {
            Kind::Quiet => say(&summary),
            Kind::Json => self.event(json!({
                "event": "done",
                "debate": line.debate,
                "line": line.line,
                "status": state.progress.status.name(),
                "phases": state.progress.step,
                "consensus": consensus.map(|c| c.decimal()),
                "open": open_json(&open),
                "report": report.display().to_string(),
                "seconds": self.began.elapsed().as_secs_f64(),
                "cost_usd": cost.total.cost.decimal(),
            })),
            Kind::Read { .. } => {
                let mut out = String::new();
                if consensus.is_some() || !open.is_empty() {
                    let gap = if self.printed { "\n" } else { "" };
                    let heading = self.paint(
                        "Where the debate ends",
                        Style::new()
                            .bold()
                            .fg_color(Some(AnsiColor::Magenta.into())),
                    );
                    out.push_str(&format!("{gap}{heading}\n\n"));
                    if let Some(c) = consensus {
                        out.push_str(&format!(
                            "  {} {c} (from the final positions)\n",
                            self.paint("Consensus", Style::new().bold())
                        ));
                    }
                    out.push_str(&self.open_points("Still open", &open));
                }
                // The report's path follows, the last line of stdout (see `run`).
                out.push('\n');
                self.print(&out);
                say(&summary);
            }
        }
        if let Some(note) = self.intake.note() {
            say(&format!("anvil: note: {note}"));
        }
        Some(())
    }
}

/// The title of the phase that is out on `state`: `Round 2 · Critic`, `Synthesis`.
fn phase_title(state: &State) -> String {
    let p = &state.progress;
    let voice = anvil_core::model::machine::current_cue(&state.setup, p).voice;
    anvil_core::model::transcript::heading(p.phase, p.round, voice.as_deref())
}

/// Where one seat stands at the end of a round.
struct Stand {
    seat: String,
    who: Who,
    stance: Option<String>,
    confidence: Option<String>,
    claim: String,
}

/// Each debating phase of `round` on the line, with the position it recorded.
fn stands(home: &Home, line: &LineRef, round: u32) -> Vec<Stand> {
    let Ok(record) = Record::open(&home.record_dir()) else {
        return Vec::new();
    };
    let Ok(history) = LineHistory::load(&record, line) else {
        return Vec::new();
    };
    history
        .entries
        .iter()
        .filter(|e| e.meta.round == round && e.role.is_some_and(Role::is_debating))
        .map(|e| {
            let role = e.role.expect("filtered");
            let position = anvil_core::review::positions::position(&e.meta);
            Stand {
                seat: anvil_core::model::transcript::heading(role, round, e.meta.voice.as_deref())
                    .trim_start_matches(&format!("Round {round} · "))
                    .to_owned(),
                who: Who::of(e),
                stance: position.as_ref().map(|p| p.stance.to_string()),
                confidence: position.as_ref().map(|p| p.confidence.decimal()),
                claim: position.map(|p| p.claim).unwrap_or_default(),
            }
        })
        .collect()
}

fn open_json(points: &[OpenPoint]) -> Vec<Value> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| json!({"label": OpenPoint::label(i), "seat": p.seat, "text": p.text}))
        .collect()
}
