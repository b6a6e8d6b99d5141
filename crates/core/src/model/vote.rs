//! The blind vote (`--vote`): after the last debating round each debating seat ranks the other
//! seats' final phases, shown without a name, and anvil counts the ballots. Arithmetic and
//! decisions only: who votes, whom each voter is shown under which label, what a ballot says,
//! and the result; the prompt is `prompts/ballot.md`, the recording `line/stop/record.rs`.
//!
//! - **Voters**: every debating seat of the setup, in speaking order (the advocate/critic
//!   pair, or each voice of a rotation).
//! - **Candidates**: the seats that stated a phase, in the order they first spoke, less the
//!   voter: a voter is never shown its own phase, so a self-vote cannot be cast.
//! - **Labels**: `A`, `B`, `C`, … in an order shuffled per voter, from a seed made of the
//!   debate and the voter (the same every time it is asked, so the ballot is read back with the
//!   labels the voter saw).
//! - **A ballot** is the voter's `<anvil-rank order="B,A,C">` tag: every label it was shown,
//!   once each, best first. Anything else (no tag, a label it was not shown, one missing or
//!   twice) is recorded as written and counts as an abstention.
//! - **The result** is a Borda count: on a ballot of `n` labels the first gets `n − 1` points,
//!   the last 0. Seats are ordered by points, ties by the confidence of their last stated
//!   position (higher first), then by the order they first spoke.

use serde::{Deserialize, Serialize};

use crate::model::positions::{Held, seat_label};
use crate::model::state::{Role, Rotation, Setup};
use crate::record::stance::Share;

/// A debating seat that casts a ballot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voter {
    /// The role it debated in.
    pub role: Role,
    /// Its voice, in a rotation.
    pub voice: Option<String>,
}

impl Voter {
    /// Its seat's label, as positions name it (`critic`, `Product/UX`).
    pub fn seat(&self) -> String {
        seat_label(self.role.name(), self.voice.as_deref())
    }
}

/// The voters of `setup`, in the order they vote.
pub fn voters(setup: &Setup) -> Vec<Voter> {
    match setup.rotation {
        Rotation::Pair => crate::model::machine::pair_order(setup)
            .into_iter()
            .map(|role| Voter { role, voice: None })
            .collect(),
        Rotation::Stakeholders | Rotation::Personas => {
            let role = if setup.rotation == Rotation::Stakeholders {
                Role::Stakeholder
            } else {
                Role::Persona
            };
            setup
                .voices
                .iter()
                .map(|v| Voter {
                    role,
                    voice: Some(v.clone()),
                })
                .collect()
        }
    }
}

/// The seats `voter` ranks: every seat that spoke (in `held`, the line's positions), in the
/// order they first spoke, less the voter itself.
pub fn candidates(held: &[Held], voter: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in held {
        if h.seat != voter && !out.contains(&h.seat) {
            out.push(h.seat.clone());
        }
    }
    out
}

/// `candidates` in the order the voter sees them: the first is `A`, the next `B`, … Shuffled
/// by a permutation seeded from `seed` (the debate and the voter), the same on every call.
pub fn shown(seed: &str, candidates: &[String]) -> Vec<String> {
    let mut out = candidates.to_vec();
    let mut state = fnv1a(seed.as_bytes()) | 1;
    for i in (1..out.len()).rev() {
        // xorshift64*: small, well spread, and the same on every platform.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let draw = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let j = usize::try_from(draw % (i as u64 + 1)).expect("below the length");
        out.swap(i, j);
    }
    out
}

/// The seed of a voter's labels.
pub fn seed(debate: &str, voter: &str) -> String {
    format!("{debate}\u{0}{voter}")
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The label of the `i`th shown candidate: `A` … `Z`, then `A2` … `Z2`, and so on.
pub fn label(i: usize) -> String {
    let letter = char::from(b'A' + u8::try_from(i % 26).expect("below 26"));
    match i / 26 {
        0 => letter.to_string(),
        lap => format!("{letter}{}", lap + 1),
    }
}

/// The labels an `order` attribute names, as written, in order: split at commas, `>`,
/// semicolons or spaces, trimmed, upper-cased.
pub fn labels_of(order: &str) -> Vec<String> {
    order
        .split([',', '>', ';', ' ', '\t'])
        .map(|l| l.trim().to_ascii_uppercase())
        .filter(|l| !l.is_empty())
        .collect()
}

/// One voter's ballot, as the line's state keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ballot {
    /// The voter's seat.
    pub voter: String,
    /// The seats it was shown, in label order (`A` first).
    pub shown: Vec<String>,
    pub cast: Cast,
}

pub use crate::record::stance::Cast;

/// Reads the ballot of a voter shown `shown` (in label order) from its `order` attribute
/// (`None`: the phase had no ranking tag).
pub fn read(shown: &[String], order: Option<&str>) -> Cast {
    let Some(order) = order else {
        return Cast::Abstained("no ranking tag".to_owned());
    };
    let labels = labels_of(order);
    if labels.is_empty() {
        return Cast::Abstained("the ranking names no label".to_owned());
    }
    let mut ranked: Vec<String> = Vec::new();
    for l in &labels {
        let Some(i) = (0..shown.len()).find(|&i| label(i) == *l) else {
            return Cast::Abstained(format!("label {l} was not on the ballot"));
        };
        if ranked.contains(&shown[i]) {
            return Cast::Abstained(format!("label {l} is ranked twice"));
        }
        ranked.push(shown[i].clone());
    }
    if let Some(i) = (0..shown.len()).find(|&i| !ranked.contains(&shown[i])) {
        return Cast::Abstained(format!("label {} is not ranked", label(i)));
    }
    Cast::Ranked(ranked)
}

/// One seat's place in the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub seat: String,
    pub points: u32,
    /// The confidence of its last stated position, which breaks a tie of points.
    pub confidence: Option<Share>,
}

/// The result of `ballots`: every seat that was a candidate on any ballot, best first (see the
/// module's documentation for the rule). `held` gives the seats' order of speaking and their
/// confidences.
pub fn tally(ballots: &[Ballot], held: &[Held]) -> Vec<Standing> {
    let order = candidates(held, "");
    let mut seats: Vec<String> = order.clone();
    for b in ballots {
        for s in &b.shown {
            if !seats.contains(s) {
                seats.push(s.clone());
            }
        }
    }
    let confidence = |seat: &str| {
        held.iter()
            .rev()
            .find(|h| h.seat == seat && h.stance.is_some())
            .map(|h| h.confidence)
    };
    let mut standings: Vec<Standing> = seats
        .iter()
        .map(|seat| Standing {
            seat: seat.clone(),
            points: 0,
            confidence: confidence(seat),
        })
        .collect();
    for b in ballots {
        let Cast::Ranked(ranked) = &b.cast else {
            continue;
        };
        let n = u32::try_from(ranked.len()).unwrap_or(u32::MAX);
        for (place, seat) in (0u32..).zip(ranked) {
            if let Some(s) = standings.iter_mut().find(|s| s.seat == *seat) {
                s.points += n - 1 - place;
            }
        }
    }
    let spoke = |seat: &str| seats.iter().position(|s| s == seat);
    standings.sort_by(|a, b| {
        b.points
            .cmp(&a.points)
            .then(b.confidence.cmp(&a.confidence))
            .then(spoke(&a.seat).cmp(&spoke(&b.seat)))
    });
    standings
}

/// A ballot in one line for people: `Labels: A = critic, B = Finance. Counted: Finance >
/// critic.` or `… Counted as an abstention: no ranking tag.`
pub fn counted(ballot: &Ballot) -> String {
    let labels: Vec<String> = ballot
        .shown
        .iter()
        .enumerate()
        .map(|(i, seat)| format!("{} = {seat}", label(i)))
        .collect();
    let labels = if labels.is_empty() {
        "No statement to rank.".to_owned()
    } else {
        format!("Labels: {}.", labels.join(", "))
    };
    match &ballot.cast {
        Cast::Ranked(seats) => format!("{labels} Counted: {}.", seats.join(" > ")),
        Cast::Abstained(why) => format!("{labels} Counted as an abstention: {why}."),
    }
}

/// What a commit's trailers say of the vote, for people: its ballot (the labels the voter saw
/// and what was counted), and the result when it carries it. One line each; none for a
/// commit that is no ballot. `show`, the report, the decision record and the web room say it
/// so.
pub fn words(meta: &crate::record::schema::Meta) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(cast) = &meta.ballot {
        let ballot = Ballot {
            voter: meta.voice.clone().unwrap_or_default(),
            shown: meta.ballot_shown.iter().map(|t| t.value.clone()).collect(),
            cast: cast.clone(),
        };
        out.push(format!("Ballot of {}: {}", ballot.voter, counted(&ballot)));
    }
    if let Some(line) = result_words(meta) {
        out.push(line);
    }
    out
}

/// The vote's result a commit records, in words: `Vote (Borda, 1 of 3 ballots cast):
/// Business 1, Product/UX 0.`
pub fn result_words(meta: &crate::record::schema::Meta) -> Option<String> {
    if meta.vote.is_empty() {
        return None;
    }
    let seats: Vec<String> = meta
        .vote
        .iter()
        .map(|t| format!("{} {}", t.name, t.value))
        .collect();
    let cast = meta
        .vote_cast
        .as_deref()
        .and_then(|c| c.split_once('/'))
        .map(|(n, of)| format!(", {n} of {of} ballots cast"))
        .unwrap_or_default();
    Some(format!("Vote (Borda{cast}): {}.", seats.join(", ")))
}

/// How many ballots were cast (not abstentions).
pub fn cast(ballots: &[Ballot]) -> usize {
    ballots
        .iter()
        .filter(|b| matches!(b.cast, Cast::Ranked(_)))
        .count()
}

/// The result in one line for people: `critic 3, Product/UX 2, advocate 1 (Borda; 2 of 3
/// ballots cast)`.
pub fn summary(standings: &[Standing], ballots: &[Ballot]) -> String {
    let seats: Vec<String> = standings
        .iter()
        .map(|s| format!("{} {}", s.seat, s.points))
        .collect();
    format!(
        "{} (Borda; {} of {} ballots cast)",
        seats.join(", "),
        cast(ballots),
        ballots.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::positions::Stance;

    fn held(seat: &str, confidence: u8) -> Held {
        Held {
            seat: seat.into(),
            round: 1,
            stance: Some(Stance::For),
            confidence: Share(confidence),
            open: Vec::new(),
        }
    }

    fn seats(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_voter_is_never_its_own_candidate() {
        let h = [held("a", 50), held("b", 50), held("c", 50), held("a", 60)];
        assert_eq!(candidates(&h, "a"), seats(&["b", "c"]));
        assert_eq!(candidates(&h, "b"), seats(&["a", "c"]));
    }

    #[test]
    fn labels_are_shuffled_per_voter_and_the_same_every_time() {
        let c = seats(&["a", "b", "c", "d", "e", "f"]);
        let one = shown(&seed("d1", "x"), &c);
        assert_eq!(one, shown(&seed("d1", "x"), &c));
        let mut sorted = one.clone();
        sorted.sort();
        assert_eq!(sorted, c, "a permutation");
        let orders: std::collections::HashSet<Vec<String>> = (0..40)
            .map(|v| shown(&seed("d1", &format!("voter {v}")), &c))
            .collect();
        assert!(orders.len() > 20, "voters see different orders: {orders:?}");
        // Every order of three comes up for some voter.
        let three = seats(&["a", "b", "c"]);
        let orders: std::collections::HashSet<Vec<String>> = (0..200)
            .map(|v| shown(&seed("d1", &format!("v{v}")), &three))
            .collect();
        assert_eq!(orders.len(), 6);
    }

    #[test]
    fn labels_run_past_z() {
        assert_eq!(label(0), "A");
        assert_eq!(label(25), "Z");
        assert_eq!(label(26), "A2");
        assert_eq!(labels_of(" b, a >c;d"), seats(&["B", "A", "C", "D"]));
    }

    #[test]
    fn a_ballot_names_every_label_it_was_shown_once() {
        let shown = seats(&["b", "c"]);
        let table: [(Option<&str>, Cast); 7] = [
            (Some("B,A"), Cast::Ranked(seats(&["c", "b"]))),
            (Some("a b"), Cast::Ranked(seats(&["b", "c"]))),
            (None, Cast::Abstained("no ranking tag".into())),
            (
                Some(""),
                Cast::Abstained("the ranking names no label".into()),
            ),
            (
                Some("A,B,C"),
                Cast::Abstained("label C was not on the ballot".into()),
            ),
            (
                Some("A,A"),
                Cast::Abstained("label A is ranked twice".into()),
            ),
            (Some("B"), Cast::Abstained("label A is not ranked".into())),
        ];
        for (order, expected) in table {
            assert_eq!(read(&shown, order), expected, "{order:?}");
        }
    }

    fn ballot(voter: &str, shown: &[&str], cast: Cast) -> Ballot {
        Ballot {
            voter: voter.into(),
            shown: seats(shown),
            cast,
        }
    }

    #[test]
    fn borda_counts_and_breaks_ties_by_confidence_then_speaking_order() {
        let h = [held("a", 60), held("b", 90), held("c", 70)];
        let ballots = [
            ballot("a", &["b", "c"], Cast::Ranked(seats(&["c", "b"]))),
            ballot("b", &["c", "a"], Cast::Ranked(seats(&["a", "c"]))),
            ballot("c", &["a", "b"], Cast::Ranked(seats(&["b", "a"]))),
        ];
        // One point each: confidence decides (b 0.9, c 0.7, a 0.6).
        let result = tally(&ballots, &h);
        let order: Vec<(&str, u32)> = result.iter().map(|s| (s.seat.as_str(), s.points)).collect();
        assert_eq!(order, [("b", 1), ("c", 1), ("a", 1)]);
        // The same ballots give the same result, in any order they are counted.
        let mut reversed = ballots.to_vec();
        reversed.reverse();
        assert_eq!(tally(&reversed, &h), result);
        // Equal confidence: the order they spoke.
        let same = [held("a", 50), held("b", 50), held("c", 50)];
        let order: Vec<String> = tally(&ballots, &same).into_iter().map(|s| s.seat).collect();
        assert_eq!(order, seats(&["a", "b", "c"]));
    }

    #[test]
    fn an_abstention_counts_nothing() {
        let h = [held("a", 50), held("b", 50), held("c", 50)];
        let ballots = [
            ballot("a", &["b", "c"], Cast::Ranked(seats(&["c", "b"]))),
            ballot("b", &["c", "a"], Cast::Abstained("no ranking tag".into())),
        ];
        let result = tally(&ballots, &h);
        assert_eq!(result[0].seat, "c");
        assert_eq!(result[0].points, 1);
        assert_eq!(result.iter().map(|s| s.points).sum::<u32>(), 1);
        assert_eq!(
            summary(&result, &ballots),
            "c 1, a 0, b 0 (Borda; 1 of 2 ballots cast)"
        );
    }
}
