//! What a commit of the record says about itself: one [`Meta`] struct for every `Anvil-*`
//! trailer, one encoder ([`message`]) and one decoder ([`parse`]). Writers build a `Meta`;
//! history, log and every other reader get one back. Nothing else knows a trailer's name.
//!
//! A commit message is a subject line, a blank line, then one trailer per line
//! (`Anvil-Phase: critic`), as `git interpret-trailers` reads it. Values are free text (a
//! question, steering, a persona's name), so they are escaped to stay on one line and to
//! survive exactly: `%`, every control character (newline, NUL, ESC, …) and a space at
//! either end are written as `%XX`, the bytes of their UTF-8 form. Everything else — quotes,
//! `<`, unicode — is written as it is, so ordinary values read the same in `git log`. An
//! empty value is `Anvil-Key: ` with nothing after the space.
//!
//! Headers are stricter than messages: git refuses `<`, `>` and newlines in a name and NUL
//! anywhere in a commit. [`safe_name`] and [`safe_subject`] make any text fit; the original
//! text is always in the commit's tree (`state.md`, the phase files).

use std::fmt::Write as _;

use crate::record::stance::{Cast, OpenPoint, Saving, Share, Stance, Tabbed};
use crate::record::usage::{ModelUsage, Usd};

/// One kind of trailer value: how it is written and read back.
trait Field {
    /// Appends `key: value` lines for this value (none for an absent one).
    fn put(&self, key: &str, out: &mut Vec<(String, String)>);
    /// Takes a decoded value; `false` when it does not fit (it is kept in `other`).
    fn take(&mut self, value: &str) -> bool;
}

impl Field for String {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        out.push((key.to_owned(), self.clone()));
    }
    fn take(&mut self, value: &str) -> bool {
        value.clone_into(self);
        true
    }
}

macro_rules! number_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
                out.push((key.to_owned(), self.to_string()));
            }
            fn take(&mut self, value: &str) -> bool {
                value.parse().map(|v| *self = v).is_ok()
            }
        }
    )*};
}
number_field!(u32, u64);

/// Dollars as exact decimal text (`0.012345678`).
impl Field for Usd {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        out.push((key.to_owned(), self.decimal()));
    }
    fn take(&mut self, value: &str) -> bool {
        Usd::parse(value).map(|v| *self = v).is_some()
    }
}

/// A list of models' usage is one trailer per model, in order.
impl Field for Vec<ModelUsage> {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        for item in self {
            out.push((key.to_owned(), item.encode()));
        }
    }
    fn take(&mut self, value: &str) -> bool {
        ModelUsage::decode(value).map(|m| self.push(m)).is_some()
    }
}

/// A stance by its word (`for`, `against`, `mixed`, `undecided`).
impl Field for Stance {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        out.push((key.to_owned(), self.name().to_owned()));
    }
    fn take(&mut self, value: &str) -> bool {
        Stance::parse(value).map(|v| *self = v).is_some()
    }
}

/// A share of one as a decimal (`0.7`).
impl Field for Share {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        out.push((key.to_owned(), self.decimal()));
    }
    fn take(&mut self, value: &str) -> bool {
        Share::parse(value).map(|v| *self = v).is_some()
    }
}

/// A saving as `round=2 phases=4 tokens=812`.
impl Field for Saving {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        out.push((key.to_owned(), self.encode()));
    }
    fn take(&mut self, value: &str) -> bool {
        Saving::decode(value).map(|v| *self = v).is_some()
    }
}

/// Open points, one trailer each: the seat, a tab, the point.
impl Field for Vec<OpenPoint> {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        for item in self {
            out.push((key.to_owned(), item.encode()));
        }
    }
    fn take(&mut self, value: &str) -> bool {
        OpenPoint::decode(value).map(|p| self.push(p)).is_some()
    }
}

/// A ballot as `ranked<TAB>SEAT…` or `abstained<TAB>WHY`.
impl Field for Cast {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        out.push((key.to_owned(), self.encode()));
    }
    fn take(&mut self, value: &str) -> bool {
        Cast::decode(value).map(|v| *self = v).is_some()
    }
}

/// Pairs, one trailer each: a name, a tab, a value.
impl Field for Vec<Tabbed> {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        for item in self {
            out.push((key.to_owned(), item.encode()));
        }
    }
    fn take(&mut self, value: &str) -> bool {
        Tabbed::decode(value).map(|p| self.push(p)).is_some()
    }
}

/// A flag is written as `yes` when set and left out otherwise.
impl Field for bool {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        if *self {
            out.push((key.to_owned(), "yes".to_owned()));
        }
    }
    fn take(&mut self, value: &str) -> bool {
        *self = value == "yes";
        *self
    }
}

impl<T: Field + Default> Field for Option<T> {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        if let Some(v) = self {
            v.put(key, out);
        }
    }
    fn take(&mut self, value: &str) -> bool {
        let mut v = T::default();
        let ok = v.take(value);
        if ok {
            *self = Some(v);
        }
        ok
    }
}

/// A list is one trailer per item, in order.
impl Field for Vec<String> {
    fn put(&self, key: &str, out: &mut Vec<(String, String)>) {
        for item in self {
            out.push((key.to_owned(), item.clone()));
        }
    }
    fn take(&mut self, value: &str) -> bool {
        self.push(value.to_owned());
        true
    }
}

/// Declares [`Meta`]: each line is a field, its type and its trailer key. Adding a trailer is
/// adding a line here.
macro_rules! schema {
    ($( $(#[$doc:meta])* $field:ident : $ty:ty = $key:literal, )*) => {
        /// Everything a commit of the record says in its trailers.
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct Meta {
            $( $(#[$doc])* pub $field: $ty, )*
            /// Trailers this build does not know (or whose value did not parse), in order.
            pub other: Vec<(String, String)>,
        }

        impl Meta {
            /// The trailers as `(key, value)` pairs, values unescaped, in writing order.
            pub fn pairs(&self) -> Vec<(String, String)> {
                let mut out = Vec::new();
                $( Field::put(&self.$field, $key, &mut out); )*
                out.extend(self.other.iter().cloned());
                out
            }

            fn take(&mut self, key: &str, value: &str) {
                let taken = match key {
                    $( k if k.eq_ignore_ascii_case($key) => Field::take(&mut self.$field, value), )*
                    _ => false,
                };
                if !taken {
                    self.other.push((key.to_owned(), value.to_owned()));
                }
            }
        }
    };
}

schema! {
    debate: String = "Anvil-Debate",
    line: String = "Anvil-Line",
    /// A role's name for a phase, else `start`, `branch`, `cancel`, `ask`, `answer`, `resume`…
    phase: String = "Anvil-Phase",
    round: u32 = "Anvil-Round",
    /// Phases recorded on the line up to and including this commit (absent in old records).
    step: Option<u32> = "Anvil-Step",
    session: Option<String> = "Anvil-Session",
    /// The stakeholder or persona who spoke.
    voice: Option<String> = "Anvil-Voice",
    /// Steering that arrived with this commit.
    steering: Vec<String> = "Anvil-Steering",
    /// The debater wrote the completion marker.
    complete: bool = "Anvil-Complete",
    /// The phase was drafted blind within its round (`--all-draft`, `--independent`): its
    /// prompt held the rounds before and none of its own round's other drafts, which were
    /// played at the same time; a round of such phases is one moment with several voices.
    drafted: bool = "Anvil-Drafted",
    /// Blob id of the response this commit records: a text delivered again is a repeat.
    response: Option<String> = "Anvil-Response",
    question: Option<String> = "Anvil-Question",
    answer: Option<String> = "Anvil-Answer",
    reason: Option<String> = "Anvil-Reason",
    branched_from: Option<String> = "Anvil-Branched-From",
    /// The decision record `anvil adr` wrote from this line, relative to the project.
    decision_record: Option<String> = "Anvil-Decision-Record",
    /// The phase whose prompt is out after this commit, or `done`.
    next: Option<String> = "Anvil-Next",
    /// Provenance and cost of the phase's turn (see `provenance`): the model that answered,
    model: Option<String> = "Anvil-Model",
    /// its tokens: input, output, cache read and cache write,
    tokens_input: Option<u64> = "Anvil-Tokens-Input",
    tokens_output: Option<u64> = "Anvil-Tokens-Output",
    tokens_cache_read: Option<u64> = "Anvil-Tokens-Cache-Read",
    tokens_cache_write: Option<u64> = "Anvil-Tokens-Cache-Write",
    /// how long the turn took,
    duration_ms: Option<u64> = "Anvil-Duration-Ms",
    /// and the Claude Code version that ran it, or the other agent that hosted the debate
    /// and its version (`qwen 0.24.4`; see `agent::host`).
    claude_version: Option<String> = "Anvil-Claude-Version",
    host: Option<String> = "Anvil-Host",
    /// A phase played by a seat (see `seat`): the agent (its name in `agent::AGENTS`;
    /// absent when the session driving the line played it),
    agent: Option<String> = "Anvil-Agent",
    /// its version,
    agent_version: Option<String> = "Anvil-Agent-Version",
    /// the agent's own session,
    agent_session: Option<String> = "Anvil-Agent-Session",
    /// and its price in dollars, where the agent reports one.
    cost_usd: Option<Usd> = "Anvil-Cost-Usd",
    /// The host played this phase because its seat failed: which seat, and why.
    seat_fallback: Option<String> = "Anvil-Seat-Fallback",
    /// The debate's budget ended it: what was spent, against what limit.
    budget: Option<String> = "Anvil-Budget",
    /// Where the debater stands at the end of its phase (see `model::positions`): its stance,
    stance: Option<Stance> = "Anvil-Stance",
    /// its confidence,
    confidence: Option<Share> = "Anvil-Confidence",
    /// its claim in one line,
    claim: Option<String> = "Anvil-Claim",
    /// and the points it says the other side left unanswered.
    open: Vec<String> = "Anvil-Open",
    /// Positions stopped moving with this round (the first time on the line): on the commit
    /// that closed it.
    converged: Option<u32> = "Anvil-Converged",
    /// `--converge` acted on it: the debate went to its synthesis after this commit.
    converge_stop: bool = "Anvil-Converge-Stop",
    /// `--converge` did not act on it, and why (steering, a pause, an open question).
    converge_held: Option<String> = "Anvil-Converge-Held",
    /// On the synthesis: what stopping at the convergence would have saved.
    saving: Option<Saving> = "Anvil-Saving",
    /// On the synthesis: the consensus score of the final positions,
    consensus: Option<Share> = "Anvil-Consensus",
    /// the points still open at the end, handed to the synthesizer,
    dissent: Vec<OpenPoint> = "Anvil-Dissent",
    /// and those of them the synthesis does not mention.
    dissent_missing: Vec<OpenPoint> = "Anvil-Dissent-Missing",
    /// A voter's ballot (`--vote`, see `model::vote`): each label it was shown and the seat
    /// behind it (`A<TAB>critic`), in label order,
    ballot_shown: Vec<Tabbed> = "Anvil-Ballot-Shown",
    /// and what it cast: the seats best first, or an abstention and why.
    ballot: Option<Cast> = "Anvil-Ballot",
    /// On the last ballot: the vote's result, each seat with its Borda points, best first,
    vote: Vec<Tabbed> = "Anvil-Vote",
    /// and how many ballots were cast of how many (`2/3`).
    vote_cast: Option<String> = "Anvil-Vote-Cast",
    /// On the last triage answer (`--triage`): what triage decided, `settled at triage: 3 of
    /// 3 for, min confidence 0.85` or `debated: 2 for, 1 against`.
    triage: Option<String> = "Anvil-Triage",
    /// On the phase after which every seat had spoken once, in a debate run without triage:
    /// what triage would have decided from their first positions.
    triage_shadow: Option<String> = "Anvil-Triage-Shadow",
    /// On the synthesis: what triage would have saved, had it settled the question (the
    /// phases, and their tokens when known, recorded after every seat first spoke).
    triage_saving: Option<Saving> = "Anvil-Triage-Saving",
    /// What the headless runs of `anvil run` cost, on the commit recorded after them (see
    /// `provenance::RunCost`): how many `claude -p` runs,
    run_count: Option<u32> = "Anvil-Run-Count",
    /// the price Claude Code computed,
    run_cost_usd: Option<Usd> = "Anvil-Run-Cost-Usd",
    /// the tokens of all their API calls,
    run_tokens_input: Option<u64> = "Anvil-Run-Tokens-Input",
    run_tokens_output: Option<u64> = "Anvil-Run-Tokens-Output",
    run_tokens_cache_read: Option<u64> = "Anvil-Run-Tokens-Cache-Read",
    run_tokens_cache_write: Option<u64> = "Anvil-Run-Tokens-Cache-Write",
    /// their wall time and the part of it spent on the API,
    run_duration_ms: Option<u64> = "Anvil-Run-Duration-Ms",
    run_api_duration_ms: Option<u64> = "Anvil-Run-Api-Duration-Ms",
    /// their turns,
    run_turns: Option<u64> = "Anvil-Run-Turns",
    /// and the same per model.
    run_models: Vec<ModelUsage> = "Anvil-Run-Model",
}

/// The whole commit message: the subject (made safe), a blank line, the trailers.
pub fn message(subject: &str, meta: &Meta) -> String {
    let mut out = safe_subject(subject);
    out.push_str("\n\n");
    for (key, value) in meta.pairs() {
        out.push_str(&key);
        out.push_str(": ");
        escape(&value, &mut out);
        out.push('\n');
    }
    out
}

/// Reads a commit message back: its subject and its trailers (the last paragraph, when every
/// line of it is `Key: value`). Any text is accepted; what is not understood is left out.
pub fn parse(message: &str) -> (String, Meta) {
    let subject = message.lines().next().unwrap_or("").trim().to_owned();
    let mut meta = Meta::default();
    let body = message.trim_end_matches(['\n', '\r']);
    let Some((_, last)) = body.rsplit_once("\n\n") else {
        return (subject, meta);
    };
    let mut pairs = Vec::new();
    for line in last.split('\n') {
        let Some((key, value)) = line.split_once(':') else {
            return (subject, meta);
        };
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return (subject, meta);
        }
        pairs.push((key, value.strip_prefix(' ').unwrap_or(value)));
    }
    for (key, value) in pairs {
        meta.take(key, &unescape(value));
    }
    (subject, meta)
}

fn escape(value: &str, out: &mut String) {
    let last = value.len().saturating_sub(1);
    for (i, c) in value.char_indices() {
        let edge_space = c == ' ' && (i == 0 || i == last);
        if c == '%' || c.is_control() || edge_space {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
}

fn unescape(value: &str) -> String {
    if !value.contains('%') {
        return value.to_owned();
    }
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A subject line from any text: its first non-empty line, control characters (NUL, ESC, …)
/// turned into spaces, runs of spaces folded, at most 200 characters.
pub(crate) fn safe_subject(text: &str) -> String {
    let line = text
        .split(['\n', '\r'])
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let cleaned: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let folded = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    folded.chars().take(200).collect()
}

/// An author name git accepts from any text: `<` and `>` become `‹` and `›`, control
/// characters become spaces, spaces are folded, and an empty name becomes `anvil`.
pub(crate) fn safe_name(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| match c {
            '<' => '‹',
            '>' => '›',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    let folded: String = cleaned
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(200)
        .collect();
    if folded.is_empty() {
        "anvil".to_owned()
    } else {
        folded
    }
}

// ---------------------------------------------------------------------------------------------
// The tree of a commit

/// The line's state at the commit, at the root of every commit's tree.
pub(crate) const STATE_FILE: &str = "state.md";

/// The two files a phase leaves in the record: the prompt that asked for it and the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PhaseFile {
    Prompt,
    Response,
}

/// `003-critic.response.md` (`role` is the role's name): numbered so that a tree listing reads in order, and at the tree's
/// root, next to `state.md`, so that a commit writes one tree and no more.
pub(crate) fn phase_file(step: u32, role: &str, file: PhaseFile) -> String {
    let kind = match file {
        PhaseFile::Prompt => "prompt",
        PhaseFile::Response => "response",
    };
    format!("{step:03}-{role}.{kind}.md")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Meta {
        Meta {
            debate: "20261122-q-3f2a".into(),
            line: "main".into(),
            phase: "advocate".into(),
            round: 2,
            step: Some(3),
            session: Some("s-1".into()),
            voice: Some("Customers >1k seats\nand <more>".into()),
            steering: vec![
                "".into(),
                " 20% less ".into(),
                "línea\r\n\0\u{1b}[2J".into(),
            ],
            complete: true,
            next: Some("critic".into()),
            ..Meta::default()
        }
    }

    #[test]
    fn a_message_reads_back_as_written_and_ordinary_values_stay_readable() {
        let meta = sample();
        let text = message("round 2 advocate: yes", &meta);
        assert!(text.starts_with("round 2 advocate: yes\n\nAnvil-Debate: 20261122-q-3f2a\n"));
        assert!(text.contains("\nAnvil-Phase: advocate\n"), "{text}");
        assert!(text.contains("\nAnvil-Steering: \n"), "{text}");
        assert!(
            text.contains("\nAnvil-Steering: %2020%25 less%20\n"),
            "{text}"
        );
        assert!(!text.contains('\0') && !text.contains('\u{1b}'), "{text}");
        assert_eq!(text.lines().count(), 2 + meta.pairs().len());
        assert_eq!(parse(&text), ("round 2 advocate: yes".to_owned(), meta));
    }

    #[test]
    fn old_and_foreign_messages_are_read_leniently() {
        let (subject, meta) =
            parse("start: Q\n\nNote: prose\nmore prose\n\nAnvil-Phase: start\nAnvil-Round: x\n");
        assert_eq!(subject, "start: Q");
        assert_eq!(meta.phase, "start");
        assert_eq!(meta.round, 0);
        assert_eq!(meta.other, [("Anvil-Round".to_owned(), "x".to_owned())]);
        assert_eq!(parse("just a subject\n").1, Meta::default());
        assert_eq!(parse("s\n\nnot: a\ntrailer block\n").1, Meta::default());
        // A literal `%` that is no escape stays as it is.
        assert_eq!(
            parse("s\n\nAnvil-Reason: 100%\n").1.reason.as_deref(),
            Some("100%")
        );
    }

    #[test]
    fn hostile_names_and_subjects_fit_in_git_headers() {
        assert_eq!(safe_name("Customers >1k seats"), "Customers ›1k seats");
        assert_eq!(safe_name("Ops\nlead <x@y>"), "Ops lead ‹x@y›");
        assert_eq!(safe_name(" \0\n "), "anvil");
        assert_eq!(safe_subject("\n\n a\0b \u{1b}[2J  c\nsecond"), "a b [2J c");
    }

    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof![any::<String>(), "[ %\\n\\r\\t\\x00\\x1b<>a-z:é日]{0,12}",]
    }

    fn any_meta() -> impl Strategy<Value = Meta> {
        let strings = (any_text(), any_text(), any_text(), any::<u32>());
        let options = prop::collection::vec(prop::option::of(any_text()), 17);
        let numbers = prop::collection::vec(prop::option::of(any::<u64>()), 6);
        let lists = (
            prop::collection::vec(any_text(), 0..4),
            any::<bool>(),
            any::<bool>(),
        );
        let extra = prop::collection::vec(("X-[A-Za-z0-9-]{0,8}", any_text()), 0..3);
        let positions = (
            prop::option::of(prop::sample::select(Stance::ALL.to_vec())),
            prop::option::of((0u8..=100).prop_map(Share)),
            prop::option::of(any_text()),
            prop::collection::vec(any_text(), 0..3),
            prop::option::of(any::<u32>()),
            any::<bool>(),
            prop::option::of(any_text()),
            prop::option::of((any::<u32>(), any::<u32>(), prop::option::of(any::<u64>()))),
            prop::collection::vec(any_point(), 0..3),
        );
        let runs = (
            prop::option::of(any::<u32>()),
            prop::option::of(any::<u64>()),
            prop::collection::vec(prop::option::of(any::<u64>()), 7),
            prop::collection::vec(any_model_usage(), 0..3),
        );
        (
            strings,
            options,
            lists,
            extra,
            prop::option::of(any::<u32>()),
            numbers,
            runs,
            positions,
        )
            .prop_map(
                |(
                    (debate, line, phase, round),
                    o,
                    (steering, complete, drafted),
                    other,
                    step,
                    n,
                    (run_count, cost, r, run_models),
                    (
                        stance,
                        confidence,
                        claim,
                        open,
                        converged,
                        converge_stop,
                        converge_held,
                        saving,
                        dissent,
                    ),
                )| Meta {
                    debate,
                    line,
                    phase,
                    round,
                    step,
                    session: o[0].clone(),
                    voice: o[1].clone(),
                    steering,
                    complete,
                    drafted,
                    response: o[2].clone(),
                    question: o[3].clone(),
                    answer: o[4].clone(),
                    reason: o[5].clone(),
                    branched_from: o[6].clone(),
                    decision_record: o[10].clone(),
                    next: o[7].clone(),
                    model: o[8].clone(),
                    tokens_input: n[0],
                    tokens_output: n[1],
                    tokens_cache_read: n[2],
                    tokens_cache_write: n[3],
                    duration_ms: n[4],
                    claude_version: o[9].clone(),
                    host: o[16].clone(),
                    agent: o[11].clone(),
                    agent_version: o[12].clone(),
                    agent_session: o[13].clone(),
                    cost_usd: n[5].map(|nanos| Usd { nanos }),
                    seat_fallback: o[14].clone(),
                    budget: o[15].clone(),
                    run_count,
                    run_cost_usd: cost.map(|nanos| Usd { nanos }),
                    run_tokens_input: r[0],
                    run_tokens_output: r[1],
                    run_tokens_cache_read: r[2],
                    run_tokens_cache_write: r[3],
                    run_duration_ms: r[4],
                    run_api_duration_ms: r[5],
                    run_turns: r[6],
                    run_models,
                    stance,
                    confidence,
                    claim: claim.clone(),
                    open,
                    converged,
                    converge_stop,
                    converge_held,
                    saving: saving.map(|(round, phases, tokens)| Saving {
                        round,
                        phases,
                        tokens,
                    }),
                    consensus: confidence,
                    dissent_missing: dissent.iter().take(1).cloned().collect(),
                    ballot_shown: dissent
                        .iter()
                        .map(|p| Tabbed::new(p.seat.clone(), p.text.clone()))
                        .collect(),
                    ballot: match dissent.first() {
                        Some(p) if p.text.len() % 2 == 0 => Some(Cast::Abstained(p.text.clone())),
                        Some(_) => Some(Cast::Ranked(
                            dissent.iter().map(|p| p.seat.clone()).collect(),
                        )),
                        None => None,
                    },
                    vote: dissent
                        .iter()
                        .rev()
                        .map(|p| Tabbed::new(p.seat.clone(), p.text.clone()))
                        .collect(),
                    vote_cast: claim.clone(),
                    triage: claim.clone(),
                    triage_shadow: o[9].clone(),
                    triage_saving: saving.map(|(round, phases, tokens)| Saving {
                        round,
                        phases,
                        tokens,
                    }),
                    dissent,
                    other,
                },
            )
    }

    fn any_point() -> impl Strategy<Value = OpenPoint> {
        ("[^\t]{0,8}", any_text()).prop_map(|(seat, text)| OpenPoint { seat, text })
    }

    fn any_model_usage() -> impl Strategy<Value = ModelUsage> {
        (any_text(), prop::collection::vec(any::<u64>(), 5)).prop_map(|(model, n)| ModelUsage {
            model,
            input_tokens: n[0],
            output_tokens: n[1],
            cache_read_tokens: n[2],
            cache_write_tokens: n[3],
            cost: Usd { nanos: n[4] },
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(4096)))]

        #[test]
        fn every_meta_round_trips(meta in any_meta(), subject in any_text()) {
            let text = message(&subject, &meta);
            prop_assert!(!text.contains('\0'));
            let (read_subject, read) = parse(&text);
            let expected = safe_subject(&subject);
            prop_assert_eq!(read_subject.as_str(), expected.trim());
            prop_assert_eq!(read, meta);
        }

        #[test]
        fn any_message_is_parsed_without_panic(text in any::<String>()) {
            let _ = parse(&text);
        }

        #[test]
        fn safe_headers_never_carry_what_git_refuses(text in any_text()) {
            let name = safe_name(&text);
            prop_assert!(!name.is_empty());
            prop_assert!(!name.contains(['<', '>', '\n', '\0']));
            let subject = safe_subject(&text);
            prop_assert!(!subject.contains(['\n', '\0', '\r']));
        }
    }
}
