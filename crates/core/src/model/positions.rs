//! Where each debating seat stands: the position a debater states at the end of its phase
//! (`<anvil-position stance="…" confidence="…">claim</anvil-position>`), the points it says
//! the other side left unanswered (`<anvil-open>…</anvil-open>`), and the arithmetic over
//! them: who moved, whether the debate stopped moving (convergence), how far the seats agree
//! at the end (the consensus score) and which points are still open.
//!
//! Everything here is pure and deterministic: the same positions give the same answers, so
//! what the record says can be recomputed by anyone from its trailers.

use serde::{Deserialize, Serialize};

pub use crate::record::stance::{OpenPoint, Saving, Share, Stance};

/// A claim or an open point is kept to this many characters (the whole text is in the
/// phase's response): enough for a sentence, small enough for a trailer and a log line.
pub const MAX_TEXT: usize = 400;
/// A phase's open points past this many are left out.
pub const MAX_OPEN: usize = 12;
/// Convergence allows a seat's confidence to move by this much (hundredths) between rounds.
pub const STEADY: u8 = 10;

/// One stated position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub stance: Stance,
    /// A confidence the debater left out or wrote unreadably counts as 0.5.
    pub confidence: Share,
    /// One sentence, cleaned (no control characters, one line, at most [`MAX_TEXT`]).
    pub claim: String,
}

impl Position {
    /// `against 0.7`.
    pub fn short(&self) -> String {
        format!("{} {}", self.stance, self.confidence)
    }
}

/// Text from a debater made fit for one line anywhere (a trailer, a log line, an SVG title):
/// control characters become spaces, whitespace is folded, and it is cut at [`MAX_TEXT`]
/// characters.
pub fn clean_text(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let folded = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= MAX_TEXT {
        return folded;
    }
    let mut cut: String = folded.chars().take(MAX_TEXT - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// What one debating phase held, as the line's state keeps it (the claim is in the record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Held {
    /// The seat: the role's name, or the voice of a stakeholder or persona.
    pub seat: String,
    pub round: u32,
    /// `None`: the phase stated no position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stance: Option<Stance>,
    #[serde(default)]
    pub confidence: Share,
    /// The points this phase said are still unanswered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open: Vec<String>,
}

/// The seat a phase speaks for: its voice in a rotation, else its role.
pub fn seat_label(role: &str, voice: Option<&str>) -> String {
    match voice {
        Some(v) if !v.trim().is_empty() => clean_text(v),
        _ => role.to_owned(),
    }
}

/// Did every seat that spoke in `round` keep its stance, its confidence within [`STEADY`],
/// against the round before? A seat without a position in either round, or one that spoke
/// in only one of them, means nobody can tell: not converged.
pub fn converged(held: &[Held], round: u32) -> bool {
    if round < 2 {
        return false;
    }
    let now: Vec<&Held> = held.iter().filter(|h| h.round == round).collect();
    let before: Vec<&Held> = held.iter().filter(|h| h.round == round - 1).collect();
    if now.is_empty() || now.len() != before.len() {
        return false;
    }
    now.iter().all(|h| {
        let Some(prev) = before.iter().rev().find(|b| b.seat == h.seat) else {
            return false;
        };
        match (h.stance, prev.stance) {
            (Some(a), Some(b)) => a == b && h.confidence.0.abs_diff(prev.confidence.0) <= STEADY,
            _ => false,
        }
    })
}

/// Each seat's last stated position, in the order the seats first spoke.
pub fn finals(held: &[Held]) -> Vec<(&str, Stance, Share)> {
    let mut out: Vec<(&str, Stance, Share)> = Vec::new();
    for h in held {
        let Some(stance) = h.stance else { continue };
        match out.iter_mut().find(|(s, _, _)| *s == h.seat) {
            Some(slot) => *slot = (&h.seat, stance, h.confidence),
            None => out.push((&h.seat, stance, h.confidence)),
        }
    }
    out
}

/// The consensus score of final positions, by arithmetic (docs/positions.md): each seat is a
/// point on one axis, `+confidence` for, `−confidence` against, 0 mixed or undecided; the
/// score is one minus the mean distance between every two seats, halved (the axis is 2
/// long), rounded to hundredths. 1.0: every seat at the same point; 0.0: two seats sure of
/// opposite stances. `None` with fewer than two positions.
pub fn consensus(finals: &[(Stance, Share)]) -> Option<Share> {
    if finals.len() < 2 {
        return None;
    }
    let point = |(s, c): &(Stance, Share)| s.sign() * i32::from(c.0.min(100));
    // Whole hundredths: the sum of distances is exact, and so is the rounding below.
    let mut sum: i64 = 0;
    let mut pairs: i64 = 0;
    for (i, a) in finals.iter().enumerate() {
        for b in &finals[i + 1..] {
            sum += i64::from((point(a) - point(b)).abs());
            pairs += 1;
        }
    }
    // mean distance in hundredths = sum / pairs, on an axis 200 long; score = 1 − mean/200.
    // In hundredths: 100 − sum / (2·pairs), rounded half up.
    let lost = (sum + pairs) / (2 * pairs);
    Some(Share((100 - lost.clamp(0, 100)) as u8))
}

/// The points still open at the end: for each seat, those of its last phase that stated a
/// position or open points (a point its holder dropped is no longer open), seats in the
/// order they first spoke.
pub fn still_open(held: &[Held]) -> Vec<OpenPoint> {
    let mut seats: Vec<&str> = Vec::new();
    for h in held {
        if !seats.contains(&h.seat.as_str()) {
            seats.push(&h.seat);
        }
    }
    let mut out = Vec::new();
    for seat in seats {
        let last = held
            .iter()
            .rev()
            .find(|h| h.seat == seat && (h.stance.is_some() || !h.open.is_empty()));
        for text in last.map(|h| h.open.as_slice()).unwrap_or_default() {
            out.push(OpenPoint {
                seat: seat.to_owned(),
                text: text.clone(),
            });
        }
    }
    out
}

/// The open points a synthesis does not mention: neither by its label (`O2`) nor by its text
/// (compared without case, punctuation or spacing).
pub fn unmentioned<'a>(points: &'a [OpenPoint], synthesis: &str) -> Vec<&'a OpenPoint> {
    // The synthesis is flattened for the points alone: a debate without open points (most of
    // them) spares the hook's last stop a pass over it, char by char.
    if points.is_empty() {
        return Vec::new();
    }
    let flat = |t: &str| -> String {
        t.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let text = flat(synthesis);
    let words: Vec<&str> = synthesis
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    points
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            let label = OpenPoint::label(*i);
            let cited = words.iter().any(|w| w.eq_ignore_ascii_case(&label));
            let flat_point = flat(&p.text);
            !cited && (flat_point.is_empty() || !text.contains(&flat_point))
        })
        .map(|(_, p)| p)
        .collect()
}

/// How each seat moved over the rounds, for the synthesizer and for people: one line per
/// seat that stated positions in two rounds or more, `critic: against 0.7 → mixed 0.6`, with
/// the rounds where it changed stance. The second value says whether the seat changed stance.
pub fn trajectories(held: &[Held]) -> Vec<(String, bool)> {
    let mut seats: Vec<&str> = Vec::new();
    for h in held {
        if !seats.contains(&h.seat.as_str()) {
            seats.push(&h.seat);
        }
    }
    let mut out = Vec::new();
    for seat in seats {
        let stated: Vec<&Held> = held
            .iter()
            .filter(|h| h.seat == seat && h.stance.is_some())
            .collect();
        if stated.len() < 2 {
            continue;
        }
        let path: Vec<String> = stated
            .iter()
            .map(|h| {
                format!(
                    "{} {}",
                    h.stance.unwrap_or_default(),
                    h.confidence.decimal()
                )
            })
            .collect();
        let changes: Vec<String> = stated
            .windows(2)
            .filter(|w| w[0].stance != w[1].stance)
            .map(|w| format!("round {}", w[1].round))
            .collect();
        let mut line = format!("{seat}: {}", path.join(" → "));
        if !changes.is_empty() {
            line.push_str(&format!(" (changed stance in {})", changes.join(", ")));
        }
        out.push((line, !changes.is_empty()));
    }
    out
}

/// The rounds-so-far saving of a debate that would have stopped at its convergence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Converged {
    /// The round after which positions stopped moving.
    pub round: u32,
    /// Phases recorded on the line at that point.
    pub step: u32,
    /// Tokens spent by then, and how many phases had a known cost.
    #[serde(default)]
    pub tokens: u64,
    #[serde(default)]
    pub priced: u32,
    /// `--converge` acted on it: the debate went to its synthesis.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub acted: bool,
}

/// How sure every seat must be, by default, for triage to settle a question.
pub const TRIAGE_THRESHOLD: Share = Share(80);

/// Triage's answer: the seats agree, or not and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Triage {
    /// `3 of 3 for, min confidence 0.85`.
    Settled {
        stance: Stance,
        seats: usize,
        least: Share,
    },
    /// Why the question is debated: `2 for, 1 against`, `one confidence below 0.8`.
    Debate(String),
}

impl Triage {
    /// In the record's words: `settled at triage: 3 of 3 for, min confidence 0.85`, or
    /// `debated: …`.
    pub fn words(&self) -> String {
        match self {
            Triage::Settled {
                stance,
                seats,
                least,
            } => format!(
                "settled at triage: {seats} of {seats} {}, min confidence {least}",
                stance.name()
            ),
            Triage::Debate(why) => format!("debated: {why}"),
        }
    }
}

/// What triage decides from each seat's answer (`answers`: one per seat, in order): settled
/// when every seat states the same stance, for or against, each with a confidence at or above
/// `threshold`; else debated, and why. A seat without a position, or a mixed or undecided
/// stance, is no agreement.
pub fn settled(answers: &[Held], threshold: Share) -> Triage {
    if answers.is_empty() {
        return Triage::Debate("no seat answered".to_owned());
    }
    let mut counts: Vec<(Stance, usize)> = Vec::new();
    let mut unstated = 0;
    for h in answers {
        match h.stance {
            Some(s) => match counts.iter_mut().find(|(k, _)| *k == s) {
                Some((_, n)) => *n += 1,
                None => counts.push((s, 1)),
            },
            None => unstated += 1,
        }
    }
    let least = answers
        .iter()
        .map(|h| h.confidence)
        .min()
        .unwrap_or_default();
    let mut said: Vec<String> = counts
        .iter()
        .map(|(s, n)| format!("{n} {}", s.name()))
        .collect();
    if unstated > 0 {
        said.push(format!("{unstated} without a position"));
    }
    match counts.as_slice() {
        [(stance, n)] if unstated == 0 && matches!(stance, Stance::For | Stance::Against) => {
            if least >= threshold {
                Triage::Settled {
                    stance: *stance,
                    seats: *n,
                    least,
                }
            } else {
                Triage::Debate(format!(
                    "{}, but min confidence {least} is below {threshold}",
                    said.join(", ")
                ))
            }
        }
        _ => Triage::Debate(said.join(", ")),
    }
}

/// The record's note of what triage would have decided on a debate run without it: taken
/// from each seat's first position, at the step where the last seat first spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shadow {
    /// Triage would have settled the question there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settled: bool,
    /// Phases recorded on the line at that point.
    pub step: u32,
    /// Tokens spent by then, and how many phases had a known cost.
    #[serde(default)]
    pub tokens: u64,
    #[serde(default)]
    pub priced: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triage_settles_only_on_one_sure_stance() {
        let h = |stance: Option<Stance>, c: u8| held("s", 1, stance, c);
        let t = TRIAGE_THRESHOLD;
        assert_eq!(
            settled(&[h(Some(Stance::For), 90), h(Some(Stance::For), 85)], t).words(),
            "settled at triage: 2 of 2 for, min confidence 0.85"
        );
        assert_eq!(
            settled(&[h(Some(Stance::For), 90), h(Some(Stance::For), 70)], t).words(),
            "debated: 2 for, but min confidence 0.7 is below 0.8"
        );
        assert_eq!(
            settled(&[h(Some(Stance::For), 90), h(Some(Stance::Against), 90)], t).words(),
            "debated: 1 for, 1 against"
        );
        assert_eq!(
            settled(&[h(Some(Stance::Mixed), 90), h(Some(Stance::Mixed), 90)], t).words(),
            "debated: 2 mixed"
        );
        assert_eq!(
            settled(&[h(Some(Stance::For), 90), h(None, 50)], t).words(),
            "debated: 1 for, 1 without a position"
        );
        assert!(matches!(
            settled(&[h(Some(Stance::Against), 80)], t),
            Triage::Settled { .. }
        ));
    }

    fn held(seat: &str, round: u32, stance: Option<Stance>, conf: u8) -> Held {
        Held {
            seat: seat.into(),
            round,
            stance,
            confidence: Share(conf),
            open: Vec::new(),
        }
    }

    #[test]
    fn shares_read_and_print_as_people_write_them() {
        assert_eq!(Share::parse("0.7"), Some(Share(70)));
        assert_eq!(Share::parse(".65"), Some(Share(65)));
        assert_eq!(Share::parse("70%"), Some(Share(70)));
        assert_eq!(Share::parse("7"), Some(Share(100)));
        assert_eq!(Share::parse("-3"), Some(Share(0)));
        assert_eq!(Share::parse("NaN"), None);
        assert_eq!(Share::parse("high"), None);
        assert_eq!(Share(70).decimal(), "0.7");
        assert_eq!(Share(65).decimal(), "0.65");
        assert_eq!(Share(5).decimal(), "0.05");
        assert_eq!(Share(100).decimal(), "1.0");
        assert_eq!(Share(0).decimal(), "0.0");
    }

    #[test]
    fn convergence_needs_every_seat_steady() {
        use Stance::*;
        let mut h = vec![
            held("advocate", 1, Some(For), 80),
            held("critic", 1, Some(Against), 70),
            held("advocate", 2, Some(For), 75),
            held("critic", 2, Some(Against), 60),
        ];
        assert!(!converged(&h, 1));
        assert!(converged(&h, 2));
        h[3].confidence = Share(59);
        assert!(!converged(&h, 2), "moved by 0.11");
        h[3] = held("critic", 2, Some(Mixed), 70);
        assert!(!converged(&h, 2), "changed stance");
        h[3] = held("critic", 2, None, 70);
        assert!(!converged(&h, 2), "no position");
        // A rotation: no seat speaks twice, so nothing can be said to have stopped moving.
        let r = vec![
            held("Ops", 1, Some(For), 80),
            held("Product", 2, Some(For), 80),
        ];
        assert!(!converged(&r, 2));
    }

    #[test]
    fn consensus_is_arithmetic_and_deterministic() {
        use Stance::*;
        assert_eq!(
            consensus(&[(For, Share(80)), (For, Share(80))]),
            Some(Share(100))
        );
        assert_eq!(
            consensus(&[(For, Share(100)), (Against, Share(100))]),
            Some(Share(0))
        );
        assert_eq!(
            consensus(&[(For, Share(60)), (Mixed, Share(90))]),
            Some(Share(70))
        );
        // Three seats: distances 0.7+0.2+0.5 = 1.4 over three pairs, halved: 0.2333 → 0.77.
        let three = [(For, Share(70)), (Mixed, Share(50)), (For, Share(20))];
        assert_eq!(consensus(&three), Some(Share(77)));
        assert_eq!(consensus(&three), consensus(&three));
        assert_eq!(consensus(&[(For, Share(70))]), None);
    }

    #[test]
    fn open_points_are_the_last_word_of_each_seat() {
        let mut a1 = held("advocate", 1, Some(Stance::For), 80);
        a1.open = vec!["who pays for migration".into()];
        let mut c1 = held("critic", 1, Some(Stance::Against), 70);
        c1.open = vec!["rollback plan".into(), "latency budget".into()];
        let mut c2 = held("critic", 2, Some(Stance::Against), 70);
        c2.open = vec!["rollback plan".into()];
        let a2 = held("advocate", 2, None, 50);
        let open = still_open(&[a1, c1, c2, a2]);
        let texts: Vec<(&str, &str)> = open
            .iter()
            .map(|p| (p.seat.as_str(), p.text.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                ("advocate", "who pays for migration"),
                ("critic", "rollback plan")
            ]
        );
        let missing = unmentioned(&open, "We address O1 here. Nothing else.");
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].text, "rollback plan");
        assert!(unmentioned(&open, "[O1] … the Rollback   plan stays open").is_empty());
        assert_eq!(unmentioned(&open, "O10 and O11 only").len(), 2);
    }

    #[test]
    fn trajectories_flag_a_change_of_stance() {
        use Stance::*;
        let h = vec![
            held("advocate", 1, Some(For), 80),
            held("critic", 1, Some(Against), 70),
            held("advocate", 2, Some(For), 80),
            held("critic", 2, Some(Mixed), 60),
        ];
        let t = trajectories(&h);
        assert_eq!(t[0], ("advocate: for 0.8 → for 0.8".to_owned(), false));
        assert_eq!(
            t[1],
            (
                "critic: against 0.7 → mixed 0.6 (changed stance in round 2)".to_owned(),
                true
            )
        );
    }

    #[test]
    fn hostile_text_is_one_clean_line() {
        let t = clean_text("a\nb\0c\u{1b}[2J  d\r\n");
        assert_eq!(t, "a b c [2J d");
        let huge = "x".repeat(100_000);
        assert_eq!(clean_text(&huge).chars().count(), MAX_TEXT);
    }

    #[test]
    fn savings_round_trip() {
        let s = Saving {
            round: 2,
            phases: 4,
            tokens: Some(812),
        };
        assert_eq!(Saving::decode(&s.encode()), Some(s));
        let s = Saving { tokens: None, ..s };
        assert_eq!(Saving::decode(&s.encode()), Some(s));
        assert_eq!(Saving::decode("phases=x"), None);
    }
}
