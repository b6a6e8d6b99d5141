//! The markers a phase may carry: `<anvil-complete/>` (go to synthesis now),
//! `<anvil-steering>…</anvil-steering>` (the human's answer at an interactive pause),
//! `<anvil-position stance="…" confidence="…">claim</anvil-position>` (where a debater stands,
//! see [`crate::model::positions`]) and `<anvil-open>…</anvil-open>` (a point still unanswered).
//!
//! Debaters quote markup all the time, so a marker only counts in prose: never inside a fenced
//! or indented code block, nor inside inline code. Tags are matched without regard to case or
//! to whitespace inside the angle brackets, and the steering text may span lines. A tag that
//! opens pairs with the next closing tag of its name only when no other opening tag of that
//! name comes between (these markers do not nest): so every body is read once, and a scan
//! costs time in proportion to the text, whatever a hostile text holds (`--bench positions`).

use std::ops::Range;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use crate::model::positions::{self, Position, Share, Stance};

const COMPLETE: &str = "anvil-complete";
const STEERING: &str = "anvil-steering";
const POSITION: &str = "anvil-position";
const OPEN: &str = "anvil-open";
const NAMES: [&str; 4] = [COMPLETE, STEERING, POSITION, OPEN];

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
}

pub fn scan(text: &str) -> Markers {
    // Cheap exit for the common case: most phases carry no marker at all.
    if !text.contains('<') {
        return Markers::default();
    }
    let lower = text.to_ascii_lowercase();
    if !NAMES.iter().any(|n| lower.contains(n)) {
        return Markers::default();
    }
    let code = code_ranges(text);
    let tags: Vec<TagAt> = find_tags(&lower)
        .into_iter()
        .filter(|t| !in_code(&code, t.start))
        .collect();
    let complete = tags
        .iter()
        .any(|t| t.name == COMPLETE && (t.self_closing || !t.closing));
    let mut steering = None;
    let mut position = None;
    let mut open_points: Vec<String> = Vec::new();
    for (open, close) in pairs(&tags) {
        let body = &text[open.end..close.start];
        if open.name == STEERING {
            steering = Some(body.trim().to_owned());
            continue;
        }
        if open.name == OPEN {
            if open_points.len() >= positions::MAX_OPEN {
                continue;
            }
            let body = positions::clean_text(body);
            if !body.is_empty() && !open_points.contains(&body) {
                open_points.push(body);
            }
            continue;
        }
        let body = positions::clean_text(body);
        let attrs = &text[open.attrs.clone()];
        let Some(stance) = attribute(attrs, "stance").and_then(Stance::parse) else {
            continue;
        };
        let confidence = attribute(attrs, "confidence")
            .and_then(Share::parse)
            .unwrap_or(Share::HALF);
        position = Some(Position {
            stance,
            confidence,
            claim: body,
        });
    }
    Markers {
        complete,
        steering,
        position,
        open: open_points,
    }
}

/// `text` with its position and open-point tags (the ones that count: outside code) written as
/// people read them, `**Position:** for 0.8: claim` and `**Open point:** text`, each on a line
/// of its own: what the web room shows. The record keeps the text as the debater wrote it.
pub fn readable(text: &str) -> std::borrow::Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    if !text.contains('<') || !(lower.contains(POSITION) || lower.contains(OPEN)) {
        return text.into();
    }
    let code = code_ranges(text);
    let tags: Vec<TagAt> = find_tags(&lower)
        .into_iter()
        .filter(|t| !in_code(&code, t.start))
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (open, close) in pairs(&tags) {
        let body = || positions::clean_text(&text[open.end..close.start]);
        let shown = match open.name {
            OPEN => format!("**Open point:** {}", body()),
            POSITION => {
                let attrs = &text[open.attrs.clone()];
                let Some(stance) = attribute(attrs, "stance").and_then(Stance::parse) else {
                    continue;
                };
                let confidence = attribute(attrs, "confidence")
                    .and_then(Share::parse)
                    .unwrap_or(Share::HALF);
                format!(
                    "**Position:** {stance} {}: {}",
                    confidence.decimal(),
                    body()
                )
            }
            _ => continue,
        };
        out.push_str(&text[at..open.start]);
        out.push_str(&shown);
        // A hard line break: the next tag's line stays a line of its own.
        if text[close.end..].starts_with(['\n', '\r']) {
            out.push_str("  ");
        }
        at = close.end;
    }
    if out.is_empty() {
        return text.into();
    }
    out.push_str(&text[at..]);
    out.into()
}

/// The opening and closing tags that pair up, in order: an opening tag with the next tag of
/// its name, when that one closes. (An opening tag followed by another opening tag of its name
/// is left unpaired, so no text is read as the body of two tags.)
fn pairs(tags: &[TagAt]) -> Vec<(&TagAt, &TagAt)> {
    let mut pending: [Option<&TagAt>; NAMES.len()] = [None; NAMES.len()];
    let mut out = Vec::new();
    for tag in tags {
        if tag.name == COMPLETE || tag.self_closing {
            continue;
        }
        let slot = &mut pending[NAMES.iter().position(|n| *n == tag.name).unwrap_or(0)];
        if !tag.closing {
            *slot = Some(tag);
        } else if let Some(open) = slot.take() {
            out.push((open, tag));
        }
    }
    out
}

/// Whether byte `at` is inside one of `code`'s ranges (sorted and apart, as
/// [`code_ranges`] gives them).
fn in_code(code: &[Range<usize>], at: usize) -> bool {
    let next = code.partition_point(|r| r.end <= at);
    code.get(next).is_some_and(|r| r.start <= at)
}

/// The value of `name="…"` (or `'…'`, or bare) in a tag's attribute text, any case.
fn attribute<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let lower = attrs.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before_ok = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric();
        let rest = attrs[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=').filter(|_| before_ok) else {
            continue;
        };
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'' | '“' | '”')) => {
                let inner = &rest[q.len_utf8()..];
                let end = inner.find(['"', '\'', '“', '”']).unwrap_or(inner.len());
                &inner[..end]
            }
            _ => {
                let end = rest
                    .find(|c: char| c.is_whitespace() || c == '/')
                    .unwrap_or(rest.len());
                &rest[..end]
            }
        };
        return Some(value);
    }
    None
}

/// `text` without its completion markers (the ones that count: outside code), for what people
/// read: the transcript and the report. A line left empty by the removal goes too.
pub(crate) fn strip_complete(text: &str) -> std::borrow::Cow<'_, str> {
    let mut out = strip_once(text);
    // Taking a marker out can change where code begins (a fence that followed it on its line
    // now opens one), so a marker that was in code may count now: take it out too.
    while scan(&out).complete {
        let again = strip_once(&out).into_owned();
        if again == out {
            break;
        }
        out = again.into();
    }
    out
}

fn strip_once(text: &str) -> std::borrow::Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    if !text.contains('<') || !lower.contains(COMPLETE) {
        return text.into();
    }
    let code = code_ranges(text);
    let markers: Vec<Range<usize>> = find_tags(&lower)
        .into_iter()
        .filter(|t| t.name == COMPLETE && (t.self_closing || !t.closing))
        .filter(|t| !in_code(&code, t.start))
        .map(|t| t.start..t.end)
        .collect();
    if markers.is_empty() {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for m in markers {
        let mut start = m.start;
        let mut end = m.end;
        // Alone on its line: take the line out.
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        if text[line_start..start].trim().is_empty() && text[end..line_end].trim().is_empty() {
            start = line_start.max(at);
            end = (line_end + 1).min(text.len());
        }
        out.push_str(&text[at..start]);
        at = end;
    }
    out.push_str(&text[at..]);
    out.into()
}

/// Byte ranges of code blocks and inline code spans, in order and apart.
fn code_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut block_start = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(_)) => block_start = Some(range.start),
            Event::End(TagEnd::CodeBlock) => {
                if let Some(start) = block_start.take() {
                    ranges.push(start..range.end);
                }
            }
            Event::Code(_) => ranges.push(range),
            _ => {}
        }
    }
    // The parser reports them in document order; sorted and merged all the same, since
    // `in_code` searches them by halves.
    ranges.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

struct TagAt {
    name: &'static str,
    start: usize,
    end: usize,
    /// Where the attributes are (empty for every tag but the position's).
    attrs: Range<usize>,
    closing: bool,
    self_closing: bool,
}

/// Finds `<name>`, `</name>` and `<name/>` for the marker names in ASCII-lowercased text; the
/// position's opening tag may carry attributes.
fn find_tags(lower: &str) -> Vec<TagAt> {
    let bytes = lower.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(offset) = lower[at..].find('<') {
        let start = at + offset;
        at = start + 1;
        let mut i = skip_ws(bytes, start + 1);
        let closing = bytes.get(i) == Some(&b'/');
        if closing {
            i = skip_ws(bytes, i + 1);
        }
        let Some(name) = NAMES.into_iter().find(|n| lower[i..].starts_with(n)) else {
            continue;
        };
        i += name.len();
        let mut attrs = i..i;
        if name == POSITION && !closing && bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            // Attributes run to the tag's end; quotes may hold anything but their own mark.
            let mut j = i;
            let mut quote = None;
            while let Some(&b) = bytes.get(j) {
                match (quote, b) {
                    (Some(q), b) if b == q => quote = None,
                    (None, b'"' | b'\'') => quote = Some(b),
                    (None, b'>' | b'<') => break,
                    _ => {}
                }
                j += 1;
            }
            if bytes.get(j) != Some(&b'>') {
                continue;
            }
            attrs = i..j;
            i = j;
        } else if name != COMPLETE
            && !bytes
                .get(i)
                .is_some_and(|b| b.is_ascii_whitespace() || *b == b'>' || *b == b'/')
        {
            // `<anvil-openness>` is no marker.
            continue;
        }
        i = skip_ws(bytes, i);
        let self_closing = bytes.get(i) == Some(&b'/');
        if self_closing {
            i = skip_ws(bytes, i + 1);
        }
        if bytes.get(i) != Some(&b'>') {
            continue;
        }
        out.push(TagAt {
            name,
            start,
            end: i + 1,
            attrs,
            closing,
            self_closing,
        });
        at = i + 1;
    }
    out
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
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
        fn scanning_and_stripping_never_panic(text in prop_oneof![any::<String>(), markup()]) {
            let markers = scan(&text);
            let stripped = strip_complete(&text);
            // What is left says nothing more about completion than before, and a text that
            // counted as complete no longer does once stripped (nothing else changes).
            prop_assert!(!scan(&stripped).complete || !markers.complete);
            if !markers.complete {
                prop_assert_eq!(stripped.as_ref(), text.as_str());
            }
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(512)))]

        /// Looking a byte up by halves agrees with looking through every range.
        #[test]
        fn in_code_agrees_with_a_linear_search(text in markup()) {
            let code = code_ranges(&text);
            prop_assert!(code.windows(2).all(|w| w[0].end <= w[1].start));
            for at in 0..=text.len() {
                prop_assert_eq!(in_code(&code, at), code.iter().any(|r| r.contains(&at)));
            }
        }
    }

    #[test]
    fn positions_are_made_readable_outside_code_only() {
        let text = "Argument.\n\n<anvil-position stance=\"against\" confidence=\"0.7\">It costs\ntoo much</anvil-position>\n<anvil-open>No rollback</anvil-open>\n\n`<anvil-open>quoted</anvil-open>`";
        assert_eq!(
            readable(text),
            "Argument.\n\n**Position:** against 0.7: It costs too much  \n**Open point:** No rollback  \n\n`<anvil-open>quoted</anvil-open>`"
        );
        let plain = "No tags, or <anvil-position stance=\"perhaps\">unreadable</anvil-position>.";
        assert_eq!(readable(plain), plain);
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
    fn the_completion_marker_is_stripped_from_prose_only() {
        assert_eq!(
            strip_complete("We agree.\n\n<anvil-complete/>\n"),
            "We agree.\n\n"
        );
        assert_eq!(
            strip_complete("We agree.\n\n<anvil-complete/>"),
            "We agree.\n\n"
        );
        assert_eq!(
            strip_complete("settled < ANVIL-Complete / > here"),
            "settled  here"
        );
        let fenced = "```\n<anvil-complete/>\n```\n";
        assert_eq!(strip_complete(fenced), fenced);
        assert_eq!(
            strip_complete("Write `<anvil-complete/>`.\n<anvil-complete/>"),
            "Write `<anvil-complete/>`.\n"
        );
    }
}
