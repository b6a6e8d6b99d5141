//! The state file of one line: `state.md`, YAML frontmatter for the machine and a short body
//! for people.
//!
//! The frontmatter is the single source of truth for where a line stands; the body is derived
//! from it on every write and ignored on read, so a person may scribble there without harm.
//! A damaged file is reported with its path and the field that is wrong, never replaced.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The version of the frontmatter layout written by this build.
pub(crate) const FORMAT: u32 = 1;

/// Everything decided when the debate was created; never changes along a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    pub question: String,
    pub mode: Mode,
    /// Advocate/critic rounds, or the number of voices in a rotation.
    pub rounds: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// Stakeholder or persona voices, in speaking order; empty for advocate/critic debates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub voices: Vec<String>,
    #[serde(default)]
    pub rotation: Rotation,
    #[serde(default)]
    pub interactive: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    #[serde(default)]
    pub research: bool,
    #[serde(default)]
    pub autonomy: u8,
    /// Where the final report goes, relative to the project root unless absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<PathBuf>,
    /// Material the debate is about (code context, earlier reports), recorded in the first
    /// commit under `context/`.
    #[serde(default, skip_serializing_if = "Inputs::is_empty")]
    pub inputs: Inputs,
    /// `--converge`: go to the synthesis once positions stop moving (see `model::positions`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub converge: bool,
    /// `--vote`: after the last debating round every debating seat ranks the others' final
    /// phases blind, and the synthesizer is handed the result (see `model::vote`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vote: bool,
    /// `--triage`: every debating seat first answers blind; agreement at or above the
    /// threshold goes straight to the synthesis (see `model::positions::settled`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub triage: bool,
    /// `--all-draft`: every debating seat speaks in every round, blind within the round (see
    /// `model::machine::drafted`); `--independent` is its round-1-only case.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_draft: bool,
    /// `--protocol NAME`: the preset the options above were filled from (flags given beside it
    /// won); `options::protocol::words` says what ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// `--triage-threshold`, when not the default ([`Setup::triage_threshold`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triage_threshold: Option<crate::record::stance::Share>,
    /// Who plays each role (when not the host session), independent openings, the budget.
    #[serde(default, skip_serializing_if = "crate::model::seats::Seats::is_empty")]
    pub seats: crate::model::seats::Seats,
}

/// What was given to the debaters besides the question, by name; the material itself is in
/// the record's first commit and in the debate's `context.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inputs {
    /// `--context` paths as the user gave them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
    /// `--diff`: the project's uncommitted changes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub diff: bool,
    /// `--pr N`: a pull request's changes, fetched from the project's remote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u32>,
    /// `--follow-up`: the earlier report (a file, or `DEBATE@LINE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_up: Option<String>,
    /// `--versus A B`: the two results pitted against each other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versus: Vec<String>,
    /// Earlier conclusions of this project related to the question, recalled when the debate
    /// started (their texts are in the material); empty with `--no-recall`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<Recalled>,
}

/// One earlier conclusion a debate was given at its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recalled {
    /// `DEBATE@LINE`.
    pub line: String,
    /// The synthesis commit, in full.
    pub commit: String,
    /// The earlier debate's question.
    pub question: String,
}

impl Recalled {
    /// `DEBATE@LINE (commit 1234567890ab)`, as prompts name it.
    pub fn label(&self) -> String {
        let short: String = self.commit.chars().take(12).collect();
        format!("{} (commit {short})", self.line)
    }
}

impl Inputs {
    pub fn is_empty(&self) -> bool {
        self.context.is_empty()
            && !self.diff
            && self.pr.is_none()
            && self.follow_up.is_none()
            && self.versus.is_empty()
            && self.recalled.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Analyst,
    Philosopher,
    DevilsAdvocate,
    Stakeholders,
}

impl Mode {
    pub const ALL: [Mode; 4] = [
        Mode::Analyst,
        Mode::Philosopher,
        Mode::DevilsAdvocate,
        Mode::Stakeholders,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Analyst => "analyst",
            Mode::Philosopher => "philosopher",
            Mode::DevilsAdvocate => "devils-advocate",
            Mode::Stakeholders => "stakeholders",
        }
    }

    /// The mode named `name`; the error lists the modes.
    pub fn parse(name: &str) -> Result<Mode, String> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown mode '{name}'; choose one of: {}",
                    Mode::ALL.map(Mode::name).join(", ")
                )
            })
    }
}

/// Who speaks in a round: the advocate/critic pair, or one voice of a rotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rotation {
    #[default]
    Pair,
    Stakeholders,
    Personas,
}

/// A phase is one turn of one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Advocate,
    Critic,
    Stakeholder,
    Persona,
    InteractivePause,
    /// A debating seat's brief blind answer before the debate (`--triage`).
    Triage,
    /// A debating seat's blind ballot (`--vote`): it ranks the other seats' final phases.
    Voter,
    Synthesizer,
}

impl Role {
    /// Every role, in the order a debate meets them.
    pub const ALL: [Role; 8] = [
        Role::Advocate,
        Role::Critic,
        Role::Stakeholder,
        Role::Persona,
        Role::InteractivePause,
        Role::Triage,
        Role::Voter,
        Role::Synthesizer,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Role::Advocate => "advocate",
            Role::Critic => "critic",
            Role::Stakeholder => "stakeholder",
            Role::Persona => "persona",
            Role::InteractivePause => "interactive-pause",
            Role::Triage => "triage",
            Role::Voter => "voter",
            Role::Synthesizer => "synthesizer",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Role::Advocate => "Advocate",
            Role::Critic => "Critic",
            Role::Stakeholder => "Stakeholder",
            Role::Persona => "Persona",
            Role::InteractivePause => "Interactive pause",
            Role::Triage => "Triage",
            Role::Voter => "Voter",
            Role::Synthesizer => "Synthesizer",
        }
    }

    /// Debating phases are the ones that argue; they may end the debate early.
    pub fn is_debating(self) -> bool {
        matches!(
            self,
            Role::Advocate | Role::Critic | Role::Stakeholder | Role::Persona
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A phase prompt is out; the next stop records its answer.
    Active,
    /// A debater asked the human something; nothing moves until it is answered.
    WaitingForInput,
    Done,
    Cancelled,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::WaitingForInput => "waiting_for_input",
            Status::Done => "done",
            Status::Cancelled => "cancelled",
        }
    }

    pub fn is_over(self) -> bool {
        matches!(self, Status::Done | Status::Cancelled)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a line stands: the machine's part of the state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Progress {
    pub status: Status,
    /// The phase whose prompt is out (or was last, once the line is over).
    pub phase: Role,
    pub round: u32,
    /// Phases recorded so far on this line; numbers the phase files of the record.
    pub step: u32,
    /// Steering that the next prompt carries (from a pause or `anvil steer`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steering: Vec<String>,
    /// Set when a debater or a steering ended the debate before its last round.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended_early: bool,
    /// While the phase is [`Role::Voter`] or [`Role::Triage`]: which seat's ballot or answer is
    /// out, counted from 0 in the order of `model::vote::voters`; in a rotation's round drafted
    /// blind (`model::machine::drafted`), which voice's draft.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub voter: u32,
    /// A debater of the round being drafted blind asked to end the debate: the round ends first
    /// (every seat's draft of it is due), then the debate goes to its conclusion.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ending: bool,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// A question a debater asked the human, and the answer once there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// The whole state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub format: u32,
    pub debate: String,
    pub line: String,
    /// The Claude Code session driving this line, once one has claimed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The session that holds the debate so far in its context; any other gets it in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub informed_session: Option<String>,
    /// Blob id of the last recorded response: a stop that brings it again is a repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_response: Option<String>,
    /// The client's id of the turn last recorded, when it told one (Claude Code's message id;
    /// see [`crate::model::provenance::Provenance::turn`]): a stop that brings the same text
    /// from another turn is a new phase in the same words, not a repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn: Option<String>,
    /// Blob id of the host's last turn that came while a seat's phase was out: no phase (an
    /// answer to a notice, to `continue`); a stop that brings it again, once the seat has
    /// played, is a repeat too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aside_response: Option<String>,
    /// The line this one was branched from, as `LINE@COMMIT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branched_from: Option<String>,
    /// A debater's question to the human (`anvil ask`), open until answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<Question>,
    /// Driven by `anvil run`: interactive pauses are asked at the terminal, not by Claude.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headless: bool,
    /// Steering recorded for the next prompt but not delivered yet (the answer to a question
    /// whose asker had gone): the next recorded phase hands it on with the queue.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_steering: Vec<String>,
    /// The number of the last queued steering (`anvil steer`) taken into the record: queue
    /// files numbered up to it are delivered, even if one is still on disk.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub steering_taken: u64,
    /// The record commit the live files show. Only in the live `state.md` (the record's own
    /// copy cannot name the commit it is in): when the line's ref has moved past it, the live
    /// files are behind and are brought forward from the record before anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tip: Option<String>,
    /// The host plays the phase that is out in place of its seat, which failed: why. Recorded
    /// with that phase, then cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat_fallback: Option<String>,
    /// What the line's phases have cost so far, for the debate's budget.
    #[serde(default, skip_serializing_if = "Spent::is_zero")]
    pub spent: Spent,
    /// Where each debating phase left its seat, in order: what convergence, the synthesizer's
    /// brief and the open points are computed from (the claims are in the record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub positions: Vec<crate::model::positions::Held>,
    /// The round after which positions first stopped moving, and what had been spent then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converged: Option<crate::model::positions::Converged>,
    /// The ballots cast so far (`--vote`), in voting order: what the vote's result is
    /// counted from (the reasons are in the record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ballots: Vec<Ballot>,
    /// The triage answers (`--triage`), each seat's brief blind position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triage: Vec<crate::model::positions::Held>,
    /// Where every seat had first spoken, and what triage would have decided from those
    /// first positions, with what had been spent then: the record's note of what triage would
    /// have saved (see `model::positions::settled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triage_shadow: Option<crate::model::positions::Shadow>,
    pub created: String,
    pub updated: String,
    pub setup: Setup,
    pub progress: Progress,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}{}", crate::fsutil::advice_after(source.kind()))]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} has no YAML frontmatter (expected it between two '---' lines at the top)")]
    NoFrontmatter { path: PathBuf },
    #[error("{path}: {detail}")]
    Invalid { path: PathBuf, detail: String },
    #[error("{path}: written by a newer anvil (format {found}, this build reads {FORMAT})")]
    TooNew { path: PathBuf, found: u32 },
}

impl Setup {
    /// The pair's speaking order in a round: devil's advocate reverses it, so the case against
    /// the user's position opens each round.
    pub(crate) fn pair_order(&self) -> [Role; 2] {
        if self.mode == Mode::DevilsAdvocate {
            [Role::Critic, Role::Advocate]
        } else {
            [Role::Advocate, Role::Critic]
        }
    }

    /// How sure every seat must be for triage to settle the question (and for the record's
    /// note of what triage would have decided).
    pub fn triage_threshold(&self) -> crate::record::stance::Share {
        self.triage_threshold
            .unwrap_or(crate::model::positions::TRIAGE_THRESHOLD)
    }

    /// The texts a person wrote into the setup, each with what a note calls it (see
    /// [`crate::model::secrets::Intake`]).
    pub fn free_texts_mut(&mut self) -> Vec<(&'static str, &mut String)> {
        let mut out = vec![("the question", &mut self.question)];
        out.extend(self.position.as_mut().map(|p| ("--position", p)));
        out.extend(self.focus.as_mut().map(|f| ("--focus", f)));
        out.extend(self.framework.as_mut().map(|f| ("--framework", f)));
        out.extend(self.voices.iter_mut().map(|v| ("a voice's name", v)));
        out.extend(
            self.inputs
                .recalled
                .iter_mut()
                .map(|r| ("a recalled question", &mut r.question)),
        );
        out
    }
}

impl State {
    /// The texts people and debaters wrote into the state: the setup's, an open question and
    /// its answer, steering not yet delivered.
    pub fn free_texts_mut(&mut self) -> Vec<(&'static str, &mut String)> {
        let mut out = self.setup.free_texts_mut();
        if let Some(q) = &mut self.question {
            out.push(("a debater's question", &mut q.text));
            out.extend(q.answer.as_mut().map(|a| ("an answer", a)));
        }
        out.extend(self.pending_steering.iter_mut().map(|s| ("steering", s)));
        out.extend(self.progress.steering.iter_mut().map(|s| ("steering", s)));
        out
    }

    /// Renders the whole file: frontmatter, then a body for people.
    pub(crate) fn to_markdown(&self) -> String {
        let yaml = serde_saphyr::to_string(self).expect("the state always serialises");
        let mut out = String::with_capacity(yaml.len() + 256);
        out.push_str("---\n");
        out.push_str(&yaml);
        if !yaml.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("---\n");
        out.push_str(&self.body());
        out
    }

    /// Where the line stands, in a few words: `round 2/3 · critic`, `synthesis`,
    /// `waiting for your answer to: …`, `done`, `cancelled`.
    pub fn standing(&self) -> String {
        let p = &self.progress;
        match (p.status, p.phase) {
            (Status::Active, phase) => phase_label(phase, p.round, self.setup.rounds),
            (Status::WaitingForInput, _) => format!(
                "waiting for your answer to: {}",
                self.question.as_ref().map_or("", |q| q.text.as_str())
            ),
            (status, _) => status.name().to_owned(),
        }
    }

    fn body(&self) -> String {
        let p = &self.progress;
        let mut body = format!(
            "\n# {}\n\nDebate `{}`, line `{}`: {} mode, {} round{}.\n\n",
            first_line(&self.setup.question),
            self.debate,
            self.line,
            self.setup.mode.name(),
            self.setup.rounds,
            if self.setup.rounds == 1 { "" } else { "s" }
        );
        let now = format!("Now: {} ({} phases recorded).", self.standing(), p.step);
        body.push_str(&now);
        body.push_str("\n\nThe machine reads only the frontmatter above; edit it with care.\n");
        body
    }

    /// Parses a state file's text; `path` only names the file in errors.
    pub fn from_markdown(text: &str, path: &Path) -> Result<State, StateError> {
        let yaml = frontmatter(text).ok_or_else(|| StateError::NoFrontmatter {
            path: path.to_owned(),
        })?;
        let state: State = serde_saphyr::from_str(yaml).map_err(|err| StateError::Invalid {
            path: path.to_owned(),
            detail: describe_yaml_error(yaml, &err),
        })?;
        if state.format > FORMAT {
            return Err(StateError::TooNew {
                path: path.to_owned(),
                found: state.format,
            });
        }
        Ok(state)
    }

    /// Where the line of the state file `text` stands: its `progress` alone. Every stop
    /// compares the record's with the live state's, and the whole file grows with the debate
    /// (a position per phase): so the section is read by itself when the file has it last at
    /// its top level, as anvil writes it (a top-level key starts a line; what any value holds
    /// is indented), and the whole file is read otherwise.
    pub fn progress_from_markdown(text: &str, path: &Path) -> Result<Progress, StateError> {
        #[derive(Deserialize)]
        struct Section {
            progress: Progress,
        }
        let section = frontmatter(text)
            .and_then(|yaml| yaml.rfind("\nprogress:\n").map(|at| &yaml[at + 1..]))
            .and_then(|section| serde_saphyr::from_str::<Section>(section).ok());
        match section {
            Some(section) => Ok(section.progress),
            None => Ok(State::from_markdown(text, path)?.progress),
        }
    }

    pub fn load(path: &Path) -> Result<State, StateError> {
        let text = std::fs::read_to_string(path).map_err(|source| StateError::Read {
            path: path.to_owned(),
            source,
        })?;
        State::from_markdown(&text, path)
    }

    /// Writes atomically: a reader sees the old file or the new one, never half of one.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        crate::fsutil::write_atomic(path, self.to_markdown().as_bytes()).map_err(|source| {
            StateError::Write {
                path: path.to_owned(),
                source,
            }
        })
    }
}

/// What a line has spent: tokens (input and output) and dollars of its recorded phases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spent {
    #[serde(default)]
    pub tokens: u64,
    /// Billionths of a dollar, where agents report a price.
    #[serde(default)]
    pub usd_nanos: u64,
    /// Phases counted.
    #[serde(default)]
    pub phases: u32,
}

impl Spent {
    pub fn is_zero(&self) -> bool {
        *self == Spent::default()
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Says which field is wrong and where, in the file's own line numbers, then shows the place.
fn describe_yaml_error(yaml: &str, err: &serde_saphyr::Error) -> String {
    let plain = err.without_snippet().to_string();
    let reason = plain
        .split_once(": ")
        .filter(|(head, _)| head.starts_with("error"))
        .map_or(plain.as_str(), |(_, rest)| rest);
    // "line L column C: reason" → "reason"; the location is given below in file terms.
    let reason = reason
        .strip_prefix("line ")
        .and_then(|r| r.split_once(": "))
        .map_or(reason, |(_, rest)| rest);
    let reason = reason
        .rsplit_once(" at line ")
        .filter(|(_, tail)| tail.split(", column ").count() == 2)
        .map_or(reason, |(head, _)| head);
    match err.location() {
        Some(at) => {
            let file_line = at.line() + 1; // the opening `---` is line 1
            let field = field_at(yaml, usize::try_from(at.line()).unwrap_or(usize::MAX))
                .map(|f| format!("field `{f}`"))
                .unwrap_or_else(|| "frontmatter".to_owned());
            format!(
                "{field} (line {file_line}, column {}): {reason}",
                at.column()
            )
        }
        None => reason.to_owned(),
    }
}

/// The dotted path of the key on 1-based `line` of `yaml` (`progress.status`), read from
/// indentation: the state file is written in block style, one key per line.
fn field_at(yaml: &str, line: usize) -> Option<String> {
    let mut stack: Vec<(usize, &str)> = Vec::new();
    let mut found = None;
    for text in yaml.lines().take(line) {
        let indent = text.len() - text.trim_start().len();
        let Some((key, _)) = text.trim_start().split_once(':') else {
            continue;
        };
        if key.starts_with(['-', '#', '"', '\'']) || key.contains(' ') {
            continue;
        }
        stack.retain(|(i, _)| *i < indent);
        stack.push((indent, key));
        found = Some(stack.iter().map(|(_, k)| *k).collect::<Vec<_>>().join("."));
    }
    found
}

/// The YAML between the opening `---` line and the next line that is exactly `---`.
fn frontmatter(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return Some(&rest[..offset]);
        }
        offset += line.len();
    }
    None
}

/// How a phase is named in progress lines: `round 2/3 · critic`, or `synthesis`.
pub fn phase_label(role: Role, round: u32, rounds: u32) -> String {
    match role {
        Role::Synthesizer => "synthesis".to_owned(),
        Role::Voter => "vote".to_owned(),
        Role::Triage => "triage".to_owned(),
        role => format!("round {round}/{rounds} · {}", role.name()),
    }
}

pub fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn sample(question: &str) -> State {
        State {
            format: FORMAT,
            debate: "20261122-q-0000".into(),
            line: "main".into(),
            session: None,
            informed_session: None,
            last_response: None,
            last_turn: None,
            aside_response: None,
            branched_from: None,
            question: None,
            headless: false,
            pending_steering: Vec::new(),
            steering_taken: 0,
            tip: None,
            seat_fallback: None,
            spent: Default::default(),
            positions: Vec::new(),
            converged: None,
            ballots: Vec::new(),
            triage: Vec::new(),
            triage_shadow: None,
            created: "2026-11-22T10:00:00Z".into(),
            updated: "2026-11-22T10:00:00Z".into(),
            setup: Setup {
                question: question.into(),
                position: Some(question.into()),
                voices: vec![question.into(), "B".into()],
                ..crate::model::machine::tests::setup(Mode::Analyst, Rotation::Pair, 3, true)
            },
            progress: Progress {
                status: Status::Active,
                phase: Role::Advocate,
                round: 1,
                step: 0,
                steering: vec![question.into()],
                ended_early: false,
                voter: 0,
                ending: false,
            },
        }
    }

    fn round_trip(question: &str) {
        let state = sample(question);
        let text = state.to_markdown();
        let back = State::from_markdown(&text, Path::new("state.md"))
            .unwrap_or_else(|e| panic!("{e}\n--- file ---\n{text}"));
        assert_eq!(back, state, "--- file ---\n{text}");
        // The progress read by itself is the whole file's (the question is also its steering).
        let progress = State::progress_from_markdown(&text, Path::new("state.md")).unwrap();
        assert_eq!(progress, state.progress, "--- file ---\n{text}");
    }

    #[test]
    fn awkward_questions_round_trip() {
        for q in [
            "Should we \"rewrite\" billing in Rust?",
            "back\\slash \\n and 'single' quotes",
            "line one\nline two\n\n---\nafter a rule",
            "---",
            "# not a heading",
            "no",
            "null",
            "~",
            "yes",
            "3.14",
            "  leading and trailing spaces  ",
            "ünïcødé — 日本語 — 🚀",
            "key: value",
            "- a list?",
            "&anchor *alias !tag %directive @at `tick`",
            "\ttab",
            "",
            "trailing newline\n",
            "a line\nprogress:\n  status: done\n  step: 99",
        ] {
            round_trip(q);
        }
    }

    /// A state file written otherwise than anvil writes it (by hand, by another tool) still
    /// tells where its line stands: its progress is read wherever it is, or with the whole
    /// file.
    #[test]
    fn the_progress_is_read_wherever_the_file_has_it() {
        let state = sample("Q?");
        let text = state.to_markdown();
        let yaml = frontmatter(&text).unwrap();
        let at = yaml.rfind("\nprogress:\n").unwrap() + 1;
        let moved = format!("---\n{}{}---\n", &yaml[at..], &yaml[..at]);
        let path = Path::new("state.md");
        assert_eq!(
            State::progress_from_markdown(&moved, path).unwrap(),
            state.progress
        );
        let flow = text.replacen(
            "\nprogress:\n",
            "\nprogress: {status: done, phase: synthesizer, round: 3, step: 7}\nunread:\n",
            1,
        );
        let flow = flow.split("\nunread:\n").next().unwrap().to_owned() + "\n---\n";
        let progress = State::progress_from_markdown(&flow, path).unwrap();
        assert_eq!((progress.status, progress.step), (Status::Done, 7));
        assert!(State::progress_from_markdown("no frontmatter", path).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(2048)))]
        #[test]
        fn any_question_round_trips(q in any::<String>()) {
            // Control characters other than tab/newline cannot be stored in YAML text as-is.
            prop_assume!(!q.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
            round_trip(&q);
        }
    }

    #[test]
    fn missing_frontmatter_is_named() {
        let err = State::from_markdown("# just text\n", Path::new("x/state.md")).unwrap_err();
        assert!(err.to_string().contains("x/state.md"), "{err}");
        assert!(err.to_string().contains("frontmatter"), "{err}");
    }

    #[test]
    fn a_damaged_field_is_named_with_its_file_and_dotted_path() {
        for (from, to, file, expected) in [
            (
                "rounds: 3",
                "rounds: many",
                "d/state.md",
                &["d/state.md", "field `setup.rounds` (line "][..],
            ),
            // An unknown field is an error, not ignored.
            (
                "line: main",
                "line: main\nlnie: typo",
                "state.md",
                &["field `lnie`"],
            ),
            // A bad value deep in the file names its dotted field.
            (
                "status: active",
                "status: paused",
                "state.md",
                &["field `progress.status`", "paused"],
            ),
        ] {
            let text = sample("Q").to_markdown().replace(from, to);
            let err = State::from_markdown(&text, Path::new(file))
                .unwrap_err()
                .to_string();
            for part in expected {
                assert!(err.contains(part), "{to}: {err}");
            }
        }
    }

    #[test]
    fn comments_in_the_frontmatter_are_read_past() {
        let text = sample("Q")
            .to_markdown()
            .replacen("\nline: ", "\n# the line, edited by hand\nline: ", 1)
            .replacen("\nsetup:", "\nsetup: # what the user asked for", 1);
        assert!(text.contains("# the line, edited by hand"), "{text}");
        assert!(text.contains("setup: # what the user asked for"), "{text}");
        assert_eq!(
            State::from_markdown(&text, Path::new("s")).unwrap(),
            sample("Q")
        );
    }

    #[test]
    fn body_edits_are_harmless() {
        let mut text = sample("Q").to_markdown();
        text.push_str("\nmy own notes\n---\nmore\n");
        assert_eq!(
            State::from_markdown(&text, Path::new("s")).unwrap(),
            sample("Q")
        );
    }
}

/// One voter's ballot, as the line's state keeps it (read and counted in
/// [`crate::model::vote`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ballot {
    /// The voter's seat.
    pub voter: String,
    /// The seats it was shown, in label order (`A` first).
    pub shown: Vec<String>,
    pub cast: crate::record::stance::Cast,
}
