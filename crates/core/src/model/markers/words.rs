//! A phase's text for people: the one renderer behind everything anvil shows or shares of a
//! debater's words (the live transcript, the reports, decision records, `show`, `diff`, the
//! search index and its snippets, recall, the MCP answers and the web room). The record keeps
//! the text as the debater wrote it; what people read has anvil's tags as words:
//!
//! | written | read |
//! |---|---|
//! | `<anvil-position stance="for" confidence="0.65">claim</anvil-position>` | **Position:** for 0.65: claim |
//! | `<anvil-open>point</anvil-open>` | **Open point:** point |
//! | `<anvil-steering>text</anvil-steering>` | **Steering:** text |
//! | `<anvil-complete/>` | (nothing; a line it stood alone on goes too) |
//! | `<anvil-rank order="B,A">B: why. A: why</anvil-rank>` | **Ranking:** B, A: B: why. A: why |
//! | `<anvil-other first="B">why</anvil-other>`, any other name | **Other** (first B): why |
//!
//! Every tag the finder sees (any `anvil-` name, see [`super::tags`]) becomes words or goes,
//! so a tag that a later version of anvil asks debaters for never reaches a page as markup,
//! even before this table names it. A tag quoted in code stays as written: it is quoted. A
//! stray closing tag, and an opening tag of a known marker that never closes, go; nested tags
//! inside a marker's body go, their text stays.

use std::borrow::Cow;
use std::ops::Range;

use super::tags::{self, PREFIX, TagAt};
use super::{Marker, read_position};
use crate::model::positions;

/// How many times the renderer reads its own output again. Taking a tag out can change where
/// code begins (a fence that followed it on its line now opens one, a backtick finds a
/// partner), so a tag that was quoted may stand in prose afterwards; each pass renders what is
/// left, and a pass that finds nothing ends it. Texts that need more than one pass are made
/// on purpose (one pass is not enough for the case kept in `proptest-regressions/`); the
/// property test below, run over 100,000 texts made of tags, fences and backticks, found none
/// that four passes leave with a tag. Four bounds the work whatever a text holds.
const PASSES: usize = 4;

/// `text` as people read it: every anvil tag outside code as words, or gone (see the module's
/// documentation). Borrowed when the text holds no tag.
pub fn readable(text: &str) -> Cow<'_, str> {
    let Some(mut out) = once(text) else {
        return text.into();
    };
    for _ in 1..PASSES {
        match once(&out) {
            Some(next) => out = next,
            None => break,
        }
    }
    out.into()
}

/// One pass over `text`; `None` when it holds no tag outside code.
fn once(text: &str) -> Option<String> {
    if !text.contains('<') {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    if !lower.contains(PREFIX) {
        return None;
    }
    let tags = tags::outside_code(text, &lower);
    if tags.is_empty() {
        return None;
    }
    let partners = tags::partners(&tags);
    let mut out = Written {
        text: String::with_capacity(text.len() + text.len() / 8),
        line_start: 0,
        line_blank: true,
    };
    let mut at = 0;
    let mut i = 0;
    while i < tags.len() {
        let tag = &tags[i];
        let (end, words) = match partners[i] {
            Some(j) => {
                let body = without_tags(text, tag.end..tags[j].start, &tags[i + 1..j]);
                i = j + 1;
                (tags[j].end, paired(text, tag, &body))
            }
            None => {
                i += 1;
                (tag.end, alone(text, tag))
            }
        };
        at = put(&mut out, text, at, tag.start..end, words);
    }
    out.push(&text[at..]);
    Some(out.text)
}

/// The text being written, with where its last line starts and whether that line is blank so
/// far: kept as it grows, so that asking costs nothing however long a line is (a hostile text
/// of tags on one line would otherwise be read back once per tag).
struct Written {
    text: String,
    line_start: usize,
    line_blank: bool,
}

impl Written {
    fn push(&mut self, chunk: &str) {
        match chunk.rfind('\n') {
            Some(n) => {
                self.line_start = self.text.len() + n + 1;
                self.line_blank = chunk[n + 1..].trim().is_empty();
            }
            None if self.line_blank => self.line_blank = chunk.trim().is_empty(),
            None => {}
        }
        self.text.push_str(chunk);
    }
}

/// Writes what comes before `span` and the words in its place (or nothing); returns where the
/// text goes on. A tag that leaves no words and stood alone on its line takes the line with
/// it; words followed by a line break end in a hard break, so the next line stays its own.
fn put(
    out: &mut Written,
    text: &str,
    at: usize,
    span: Range<usize>,
    words: Option<String>,
) -> usize {
    out.push(&text[at..span.start]);
    match words {
        Some(words) => {
            out.push(&words);
            if text[span.end..].starts_with(['\n', '\r']) {
                out.push("  ");
            }
            span.end
        }
        None if out.line_blank => {
            // The rest of the line, up to its end or to the first thing that is not blank.
            let rest = &text[span.end..];
            match rest.find(|c: char| c == '\n' || !c.is_whitespace()) {
                Some(n) if !rest[n..].starts_with('\n') => span.end,
                found => {
                    out.text.truncate(out.line_start);
                    found.map_or(text.len(), |n| span.end + n + 1)
                }
            }
        }
        None => span.end,
    }
}

/// `text[range]` without the tags in `inner` (which lie inside it, in order).
fn without_tags(text: &str, range: Range<usize>, inner: &[TagAt<'_>]) -> String {
    let mut out = String::with_capacity(range.len());
    let mut at = range.start;
    for t in inner {
        out.push_str(&text[at..t.start]);
        at = t.end;
    }
    out.push_str(&text[at..range.end]);
    out
}

/// The words for a tag that pairs with a closing one around `body`.
fn paired(text: &str, open: &TagAt<'_>, body: &str) -> Option<String> {
    let attrs = &text[open.attrs.clone()];
    match Marker::named(open.name) {
        Some(Marker::Complete) => None,
        Some(Marker::Steering) => nonempty(body.trim()).map(|b| format!("**Steering:** {b}")),
        Some(Marker::Open) => {
            nonempty(&positions::clean_text(body)).map(|b| format!("**Open point:** {b}"))
        }
        Some(Marker::Position) => match read_position(attrs, body) {
            Some(p) if p.claim.is_empty() => Some(format!("**Position:** {}", p.short())),
            Some(p) => Some(format!("**Position:** {}: {}", p.short(), p.claim)),
            None => generic("Position", attrs, &positions::clean_text(body)),
        },
        Some(Marker::Rank) => {
            let order = tags::attribute(attrs, "order").unwrap_or_default();
            let order = crate::model::vote::labels_of(order).join(", ");
            let reasons = positions::clean_text(body);
            match (order.is_empty(), reasons.is_empty()) {
                (true, true) => None,
                (false, true) => Some(format!("**Ranking:** {order}")),
                (true, false) => Some(format!("**Ranking:** {reasons}")),
                (false, false) => Some(format!("**Ranking:** {order}: {reasons}")),
            }
        }
        None => generic(&label(open.name), attrs, body.trim()),
    }
}

/// The words for a tag that pairs with none: a self-closing one, a stray closing one, or an
/// opening one that never closes. Only a tag no marker knows says something alone (its
/// attributes); anvil's own markers mean nothing without their pair.
fn alone(text: &str, tag: &TagAt<'_>) -> Option<String> {
    if tag.closing || Marker::named(tag.name).is_some() {
        return None;
    }
    generic(&label(tag.name), &text[tag.attrs.clone()], "")
}

/// `**Label** (name value, …): body`, leaving out what is empty; `None` when all is.
fn generic(label: &str, attrs: &str, body: &str) -> Option<String> {
    let attrs: Vec<String> = tags::attributes(attrs)
        .into_iter()
        .map(|(name, value)| {
            let (name, value) = (word(name), word(value));
            if value.is_empty() {
                name
            } else {
                format!("{name} {value}")
            }
        })
        .filter(|a| !a.is_empty())
        .collect();
    match (attrs.is_empty(), body.is_empty()) {
        (true, true) => None,
        (true, false) => Some(format!("**{label}:** {body}")),
        (false, true) => Some(format!("**{label}** ({})", attrs.join(", "))),
        (false, false) => Some(format!("**{label}** ({}): {body}", attrs.join(", "))),
    }
}

/// A tag's name in words: `anvil-red-flag` → `Red flag`.
fn label(name: &str) -> String {
    let words: String = name[PREFIX.len().min(name.len())..]
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => "Note".to_owned(),
    }
}

/// An attribute's name or value as one short, inert run of words: one clean line, and no
/// character that markdown or a tag finder would read as markup.
fn word(text: &str) -> String {
    let clean = positions::clean_text(text);
    let mut out = String::with_capacity(clean.len());
    for c in clean.chars().take(80) {
        match c {
            '<' => out.push('‹'),
            '>' => out.push('›'),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '|' | '!' | '&' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

fn nonempty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::super::scan;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn positions_open_points_and_steering_read_as_words_outside_code_only() {
        let text = "Argument.\n\n<anvil-position stance=\"against\" confidence=\"0.7\">It costs\ntoo much</anvil-position>\n<anvil-open>No rollback</anvil-open>\n\n`<anvil-open>quoted</anvil-open>`\n\n< Anvil-Steering >\n  Focus on cost\n</ANVIL-STEERING>";
        assert_eq!(
            readable(text),
            "Argument.\n\n**Position:** against 0.7: It costs too much  \n**Open point:** No rollback  \n\n`<anvil-open>quoted</anvil-open>`\n\n**Steering:** Focus on cost"
        );
        let fenced = "```\n<anvil-position stance=\"for\">x</anvil-position>\n```\n";
        assert_eq!(readable(fenced), fenced);
        assert!(matches!(readable("no tag here"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_completion_marker_goes_and_takes_its_line_when_alone() {
        assert_eq!(
            readable("We agree.\n\n<anvil-complete/>\n"),
            "We agree.\n\n"
        );
        assert_eq!(readable("We agree.\n\n<anvil-complete/>"), "We agree.\n\n");
        assert_eq!(
            readable("settled < ANVIL-Complete / > here"),
            "settled  here"
        );
        assert_eq!(
            readable("Write `<anvil-complete/>`.\n<anvil-complete/>"),
            "Write `<anvil-complete/>`.\n"
        );
        // Taking it out opens a fence that quotes a position: the quote stays a quote.
        let text = "<anvil-complete/>```\n<anvil-position stance=\"for\">x</anvil-position>\n```\n";
        assert!(
            !readable(text)
                .to_ascii_lowercase()
                .contains("<anvil-complete")
        );
    }

    #[test]
    fn tags_no_code_knows_read_as_words_too() {
        assert_eq!(
            readable(
                "Grade:\n<anvil-grade first=\"B\" second='A'>B argued from data</anvil-grade>\nEnd."
            ),
            "Grade:\n**Grade** (first B, second A): B argued from data  \nEnd."
        );
        assert_eq!(
            readable("Ballot:\n<anvil-rank order=\"b, A\">B: data. A: none</anvil-rank>\nEnd."),
            "Ballot:\n**Ranking:** B, A: B: data. A: none  \nEnd."
        );
        assert_eq!(
            readable(
                "<anvil-red-flag/> <anvil-vote for=\"<anvil-x>\"/> <anvil-note>kept</anvil-note>"
            ),
            " **Vote** (for ‹anvil-x›) **Note:** kept"
        );
        // Unreadable stances and unpaired markers: words, or nothing, never markup.
        assert_eq!(
            readable("<anvil-position stance=\"perhaps\">unsure</anvil-position>."),
            "**Position** (stance perhaps): unsure."
        );
        assert_eq!(
            readable("<anvil-open>dangling <anvil-open>kept</anvil-open> </anvil-position>"),
            "dangling **Open point:** kept "
        );
        // A marker inside another's body leaves its text, not its tags.
        assert_eq!(
            readable(
                "<anvil-open>a <anvil-position stance=\"for\">b</anvil-position> c</anvil-open>"
            ),
            "**Open point:** a b c"
        );
    }

    /// Text made of the pieces tags are made of, so that the interesting cases are common.
    fn markup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("<anvil-complete/>".to_owned()),
            Just("< ANVIL-Complete / >".to_owned()),
            Just("<anvil-steering>".to_owned()),
            Just("</anvil-steering>".to_owned()),
            Just("<anvil-position stance=\"for\" confidence=\"0.7\">".to_owned()),
            Just("<anvil-position stance='x'>".to_owned()),
            Just("</anvil-position>".to_owned()),
            Just("<anvil-open>".to_owned()),
            Just("</anvil-open>".to_owned()),
            Just("<anvil-rank a=\"1\">".to_owned()),
            Just("</anvil-rank>".to_owned()),
            Just("<anvil-x/>".to_owned()),
            Just("```\n".to_owned()),
            Just("~~~\n".to_owned()),
            Just("`".to_owned()),
            Just("``".to_owned()),
            Just("\n    ".to_owned()),
            Just("\n".to_owned()),
            Just("\n\n".to_owned()),
            Just("> ".to_owned()),
            Just("- ".to_owned()),
            "[a-z <>/é\"'=\u{0}]{0,6}",
        ];
        prop::collection::vec(piece, 0..16).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(4096)))]

        /// Whatever the text, what people read holds no tag outside code: nothing the machine
        /// would read as a marker, and nothing the finder calls a tag.
        #[test]
        fn what_people_read_holds_no_tag_outside_code(
            text in prop_oneof![any::<String>(), markup()]
        ) {
            let shown = readable(&text);
            let lower = shown.to_ascii_lowercase();
            let left: Vec<String> = tags::outside_code(&shown, &lower)
                .iter()
                .map(|t| shown[t.start..t.end].to_owned())
                .collect();
            prop_assert!(left.is_empty(), "{:?} → {:?} leaves {:?}", text, shown, left);
            prop_assert_eq!(scan(&shown), super::super::Markers::default());
            // Reading it again changes nothing.
            let again = readable(&shown);
            prop_assert_eq!(again.as_ref(), shown.as_ref());
        }
    }
}
