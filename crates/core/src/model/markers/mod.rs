//! The markers a phase may carry: `<anvil-complete/>` (go to synthesis now),
//! `<anvil-steering>…</anvil-steering>` (the human's answer at an interactive pause),
//! `<anvil-position stance="…" confidence="…">claim</anvil-position>` (where a debater stands,
//! see [`crate::model::positions`]), `<anvil-open>…</anvil-open>` (a point still unanswered)
//! and `<anvil-rank order="B,A,C">…</anvil-rank>` (a voter's ballot, see
//! [`crate::model::vote`]).
//!
//! Debaters quote markup all the time, so a marker only counts in prose: never inside a fenced
//! or indented code block, nor inside inline code. Tags are matched without regard to case or
//! to whitespace inside the angle brackets, and the steering text may span lines. A tag that
//! opens pairs with the next closing tag of its name only when no other opening tag of that
//! name comes between (these markers do not nest): so every body is read once, and a scan
//! costs time in proportion to the text, whatever a hostile text holds (`--bench positions`).

use crate::model::positions::{self, Position, Share, Stance};

mod tags;
mod words;

pub use words::readable;

use tags::TagAt;

/// The markers anvil reads, each by its tag's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Complete,
    Steering,
    Position,
    Open,
    Rank,
}

impl Marker {
    fn named(name: &str) -> Option<Marker> {
        match name {
            "anvil-complete" => Some(Marker::Complete),
            "anvil-steering" => Some(Marker::Steering),
            "anvil-position" => Some(Marker::Position),
            "anvil-open" => Some(Marker::Open),
            "anvil-rank" => Some(Marker::Rank),
            _ => None,
        }
    }

    /// Whether `tag` is this marker as the machine reads it: only the position's and the
    /// ranking's opening tags carry attributes.
    fn counts(self, tag: &TagAt<'_>, text: &str) -> bool {
        matches!(self, Marker::Position | Marker::Rank) || !tag.has_attributes(text)
    }
}

/// What a phase's text says to the machine.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Markers {
    pub complete: bool,
    /// The text of the last steering marker, trimmed; `None` when there is none.
    pub steering: Option<String>,
    /// The last position marker with a stance anvil reads; `None` when there is none.
    pub position: Option<Position>,
    /// The open points, cleaned, in order, without repeats (at most [`positions::MAX_OPEN`]).
    pub open: Vec<String>,
    /// The last ranking tag (a voter's ballot), as written; `None` when there is none.
    pub rank: Option<Rank>,
}

/// A `<anvil-rank order="…">reasons</anvil-rank>` as written: what the labels mean is the
/// ballot's to say ([`crate::model::vote::read`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rank {
    /// The `order` attribute, as written (empty when it has none).
    pub order: String,
    /// The reasons, cleaned to one line.
    pub reasons: String,
}

pub fn scan(text: &str) -> Markers {
    // Cheap exit for the common case: most phases carry no marker at all.
    if !text.contains('<') {
        return Markers::default();
    }
    let lower = text.to_ascii_lowercase();
    if ![
        "anvil-complete",
        "anvil-steering",
        "anvil-position",
        "anvil-open",
        "anvil-rank",
    ]
    .iter()
    .any(|n| lower.contains(n))
    {
        return Markers::default();
    }
    let (kinds, list): (Vec<Marker>, Vec<TagAt<'_>>) = tags::outside_code(text, &lower)
        .into_iter()
        .filter_map(|t| {
            let marker = Marker::named(t.name)?;
            marker.counts(&t, text).then_some((marker, t))
        })
        .unzip();
    let complete = kinds
        .iter()
        .zip(&list)
        .any(|(m, t)| *m == Marker::Complete && (t.self_closing || !t.closing));
    let partners = tags::partners(&list);
    let mut steering = None;
    let mut position = None;
    let mut open_points: Vec<String> = Vec::new();
    let mut rank = None;
    for (i, (marker, open)) in kinds.iter().zip(&list).enumerate() {
        let Some(close) = partners[i].map(|j| &list[j]) else {
            continue;
        };
        let body = &text[open.end..close.start];
        match marker {
            Marker::Complete => {}
            Marker::Steering => steering = Some(body.trim().to_owned()),
            Marker::Open => {
                if open_points.len() >= positions::MAX_OPEN {
                    continue;
                }
                let body = positions::clean_text(body);
                if !body.is_empty() && !open_points.contains(&body) {
                    open_points.push(body);
                }
            }
            Marker::Position => {
                if let Some(p) = read_position(&text[open.attrs.clone()], body) {
                    position = Some(p);
                }
            }
            Marker::Rank => {
                rank = Some(Rank {
                    order: tags::attribute(&text[open.attrs.clone()], "order")
                        .unwrap_or_default()
                        .trim()
                        .to_owned(),
                    reasons: positions::clean_text(body),
                });
            }
        }
    }
    Markers {
        complete,
        steering,
        position,
        open: open_points,
        rank,
    }
}

/// The position a tag with attribute text `attrs` and body `body` states, if its stance is
/// one anvil reads.
fn read_position(attrs: &str, body: &str) -> Option<Position> {
    let stance = tags::attribute(attrs, "stance").and_then(Stance::parse)?;
    let confidence = tags::attribute(attrs, "confidence")
        .and_then(Share::parse)
        .unwrap_or(Share::HALF);
    Some(Position {
        stance,
        confidence,
        claim: positions::clean_text(body),
    })
}

/// Is this steering an order to stop debating and conclude?
pub(crate) fn ends_debate(steering: &str) -> bool {
    let word = steering
        .trim()
        .trim_end_matches(['.', '!'])
        .to_ascii_lowercase();
    matches!(word.as_str(), "synthesize" | "synthesise" | "skip")
}

/// Is this steering the pause's "no change" answer (`continue`)? It steers nothing, so it is
/// neither passed on to the next phase nor recorded as steering.
pub(crate) fn keeps_course(steering: &str) -> bool {
    let words = steering
        .trim()
        .trim_matches(['"', '\'', '`', '*', '(', ')', '[', ']'])
        .trim()
        .trim_end_matches(['.', '!'])
        .to_ascii_lowercase();
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    matches!(
        words.as_str(),
        "continue"
            | "continue as is"
            | "continue as-is"
            | "none"
            | "no change"
            | "no changes"
            | "no steering"
            | "keep going"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Text made of the pieces markers are made of, so that the interesting cases are common.
    fn markup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("<anvil-complete/>".to_owned()),
            Just("< ANVIL-Complete / >".to_owned()),
            Just("<anvil-steering>".to_owned()),
            Just("</anvil-steering>".to_owned()),
            Just("<anvil-position stance=\"for\" confidence=\"0.7\">".to_owned()),
            Just("</anvil-position>".to_owned()),
            Just("<anvil-open>".to_owned()),
            Just("</anvil-open>".to_owned()),
            Just("```\n".to_owned()),
            Just("`".to_owned()),
            Just("\n    ".to_owned()),
            Just("\n".to_owned()),
            "[a-z <>/é]{0,6}",
        ];
        prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(2048)))]

        #[test]
        fn scanning_never_panics(text in prop_oneof![any::<String>(), markup()]) {
            let markers = scan(&text);
            prop_assert!(markers.open.len() <= positions::MAX_OPEN);
        }
    }

    #[test]
    fn reads_the_last_position_and_every_open_point_outside_code() {
        let text = "Argument.\n\n```\n<anvil-position stance=\"for\" confidence=\"0.9\">fake</anvil-position>\n<anvil-open>fake point</anvil-open>\n```\n\n\
            <anvil-position stance=\"mixed\" confidence=\"0.4\">first</anvil-position>\n\
            < ANVIL-POSITION  confidence='1.7'  stance='Against' >It costs\ntoo much.</anvil-position>\n\
            <anvil-open>Who pays for\nthe migration?</anvil-open>\n<anvil-open>Who pays for the migration?</anvil-open>\n\
            <anvil-open>rollback</anvil-open>";
        let m = scan(text);
        assert_eq!(
            m.position,
            Some(Position {
                stance: Stance::Against,
                confidence: Share(100),
                claim: "It costs too much.".into()
            })
        );
        assert_eq!(m.open, ["Who pays for the migration?", "rollback"]);
        // Inline code and indented code do not count either.
        let m = scan("Write `<anvil-position stance=\"for\">x</anvil-position>` at the end.");
        assert_eq!(m.position, None);
    }

    #[test]
    fn an_opening_tag_pairs_only_with_the_next_tag_of_its_name() {
        // A second opening tag before the close leaves the first one unpaired.
        let m = scan("<anvil-open>dangling <anvil-open>kept</anvil-open>");
        assert_eq!(m.open, ["kept"]);
        let m = scan(
            "<anvil-position stance=\"for\">x <anvil-position stance=\"against\">y</anvil-position>",
        );
        assert_eq!(
            m.position.map(|p| (p.stance, p.claim)),
            Some((Stance::Against, "y".into()))
        );
        // A close with no opening before it pairs with nothing; another name's tags are apart.
        let m = scan("</anvil-open><anvil-open>a<anvil-steering>s</anvil-steering></anvil-open>");
        assert_eq!(m.steering.as_deref(), Some("s"));
        assert_eq!(m.open, ["a<anvil-steering>s</anvil-steering>"]);
        // Many opening tags that never close, then one that does: one point, read once.
        let hostile = format!(
            "{}<anvil-open>last</anvil-open>",
            "<anvil-open>x ".repeat(20_000)
        );
        assert_eq!(scan(&hostile).open, ["last"]);
    }

    #[test]
    fn a_missing_or_unreadable_position_is_tolerated() {
        assert_eq!(scan("No tag at all.").position, None);
        assert_eq!(
            scan("<anvil-position stance=\"perhaps\">x</anvil-position>").position,
            None
        );
        assert_eq!(
            scan("<anvil-position stance=\"for\">never closed").position,
            None
        );
        let m = scan("<anvil-position stance=for confidence=high>ok</anvil-position>");
        assert_eq!(
            m.position.map(|p| (p.stance, p.confidence)),
            Some((Stance::For, Share::HALF))
        );
        // Hostile claims come out as one clean line of bounded length.
        let huge = format!(
            "<anvil-position stance=\"for\" confidence=\"0.5\">a\0b\u{1b}[2J{}</anvil-position>",
            "x".repeat(50_000)
        );
        let claim = scan(&huge).position.unwrap().claim;
        assert!(claim.starts_with("a b [2J") && !claim.contains(['\0', '\u{1b}']));
        assert_eq!(claim.chars().count(), positions::MAX_TEXT);
        assert!(
            !scan("<anvil-openness>x</anvil-openness>")
                .open
                .iter()
                .any(|o| o == "x")
        );
    }

    #[test]
    fn finds_completion_in_prose() {
        assert!(scan("We agree.\n\n<anvil-complete/>").complete);
        assert!(scan("done < ANVIL-Complete / >").complete);
        assert!(!scan("no marker here").complete);
    }

    #[test]
    fn ignores_markers_in_code() {
        let fenced =
            "Example:\n\n```xml\n<anvil-complete/>\n<anvil-steering>x</anvil-steering>\n```\n";
        assert_eq!(scan(fenced), Markers::default());
        assert!(!scan("Write `<anvil-complete/>` to finish.").complete);
        assert!(!scan("Indented:\n\n    <anvil-complete/>\n").complete);
    }

    #[test]
    fn reads_multiline_steering_case_insensitively() {
        let text =
            "Summary.\n\n< Anvil-Steering >\n  Focus on cost\n  and risk.\n</ANVIL-STEERING >";
        assert_eq!(
            scan(text).steering.as_deref(),
            Some("Focus on cost\n  and risk.")
        );
    }

    #[test]
    fn last_steering_wins_and_code_copies_do_not_count() {
        let text = "```\n<anvil-steering>fake</anvil-steering>\n```\n<anvil-steering>one</anvil-steering> then <anvil-steering>two</anvil-steering>";
        assert_eq!(scan(text).steering.as_deref(), Some("two"));
    }

    #[test]
    fn unclosed_steering_is_no_steering() {
        assert_eq!(scan("<anvil-steering>dangling").steering, None);
    }

    #[test]
    fn synthesize_and_skip_end_the_debate() {
        for word in ["synthesize", "Skip", " SYNTHESIZE. ", "synthesise"] {
            assert!(ends_debate(word), "{word}");
        }
        assert!(!ends_debate("synthesize the cost angle first"));
    }

    #[test]
    fn continue_keeps_the_course() {
        for word in [
            "continue",
            " Continue. ",
            "Continue as is",
            "\"Continue as is\"",
            "none",
            "None.",
            "(none)",
            "no change",
        ] {
            assert!(keeps_course(word), "{word}");
        }
        assert!(!keeps_course("continue with the cost angle"));
        assert!(!keeps_course("none of the above: focus on cost"));
    }

    #[test]
    fn only_the_position_carries_attributes_and_only_known_names_count() {
        let m = scan(
            "<anvil-open class=\"x\">no</anvil-open> <anvil-complete now/> <anvil-openness>x</anvil-openness> \
             <anvil-rank a=\"1\">r</anvil-rank> <anvil-open >yes</anvil-open>",
        );
        assert_eq!(m.open, ["yes"]);
        assert!(!m.complete);
        // A self-closing position states nothing.
        assert_eq!(
            scan("<anvil-position stance=\"for\"/>x</anvil-position>").position,
            None
        );
    }
}
