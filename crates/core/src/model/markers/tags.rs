//! Finding anvil's tags in a debater's text: every `<anvil-NAME …>`, `</anvil-NAME>` and
//! `<anvil-NAME …/>`, whatever its name, with where it stands, its attributes, and which
//! closing tag each opening one pairs with; and where the text's code is, since a tag quoted
//! in code is no tag.
//!
//! The finder knows no names: the machine reads the markers it knows from what it returns
//! ([`super::scan`]), and the renderer for people turns every tag it returns into words
//! ([`super::readable`]), so a tag no code knows yet is still never shown as markup.

use std::collections::HashMap;
use std::ops::Range;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// What every anvil tag's name starts with.
pub(super) const PREFIX: &str = "anvil-";

/// One tag, found in the ASCII-lowercased text (byte offsets hold for the original too).
pub(super) struct TagAt<'a> {
    /// The whole name, lowercased: `anvil-open`, `anvil-rank`.
    pub name: &'a str,
    pub start: usize,
    pub end: usize,
    /// Where its attributes are (empty when it has none; never holds a self-closing `/`).
    pub attrs: Range<usize>,
    pub closing: bool,
    pub self_closing: bool,
}

impl TagAt<'_> {
    /// Whether the tag carries attributes (anything but blanks between its name and its end).
    pub fn has_attributes(&self, text: &str) -> bool {
        !text[self.attrs.clone()].trim().is_empty()
    }
}

/// A byte a tag's name may hold after `anvil-`: a letter, a digit, `-`, `_`, `.` or `:`.
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':')
}

/// Finds every anvil tag in ASCII-lowercased text, in order: `<`, blanks, an optional `/`,
/// blanks, `anvil-` and a name; on an opening tag, attributes after a blank (a quoted value may
/// hold anything but its own quote mark); blanks, an optional `/`, blanks, and `>`. Anything
/// else that starts with `<` is not a tag. Every attribute list ends at the next `<` outside
/// quotes or at its own quote's end, so a scan costs time in proportion to the text.
pub(super) fn find_tags(lower: &str) -> Vec<TagAt<'_>> {
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
        if !lower[i..].starts_with(PREFIX) {
            continue;
        }
        let name_start = i;
        i += PREFIX.len();
        while bytes.get(i).copied().is_some_and(is_name_byte) {
            i += 1;
        }
        if i == name_start + PREFIX.len() {
            continue;
        }
        let name = &lower[name_start..i];
        let mut attrs = i..i;
        let mut self_closing = false;
        if !closing && bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
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
            let inside = lower[i..j].trim_end();
            if let Some(before) = inside.strip_suffix('/') {
                self_closing = true;
                attrs = i..i + before.len();
            } else {
                attrs = i..j;
            }
            i = j;
        } else if !bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b'>' || *b == b'/')
        {
            // `<anvil-open!>` is no tag.
            continue;
        } else {
            i = skip_ws(bytes, i);
            self_closing = bytes.get(i) == Some(&b'/');
            if self_closing {
                i = skip_ws(bytes, i + 1);
            }
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

/// For each tag, the index of the closing tag it pairs with: an opening tag pairs with the
/// next tag of its name when that one closes. (An opening tag followed by another opening tag
/// of its name is left unpaired, so no text is read as the body of two tags of a name; tags of
/// other names may stand between.) One pass, whatever a hostile text holds.
pub(super) fn partners(tags: &[TagAt<'_>]) -> Vec<Option<usize>> {
    let mut pending: HashMap<&str, usize> = HashMap::new();
    let mut out = vec![None; tags.len()];
    for (i, tag) in tags.iter().enumerate() {
        if tag.self_closing {
            continue;
        }
        if !tag.closing {
            pending.insert(tag.name, i);
        } else if let Some(open) = pending.remove(tag.name) {
            out[open] = Some(i);
        }
    }
    out
}

/// Whether byte `at` is inside one of `code`'s ranges (sorted and apart, as
/// [`code_ranges`] gives them).
pub(super) fn in_code(code: &[Range<usize>], at: usize) -> bool {
    let next = code.partition_point(|r| r.end <= at);
    code.get(next).is_some_and(|r| r.start <= at)
}

/// Byte ranges of code blocks and inline code spans, in order and apart.
pub(super) fn code_ranges(text: &str) -> Vec<Range<usize>> {
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

/// The tags of `text` that count: those outside code, in order. `lower` is `text`
/// ASCII-lowercased.
pub(super) fn outside_code<'a>(text: &str, lower: &'a str) -> Vec<TagAt<'a>> {
    let code = code_ranges(text);
    find_tags(lower)
        .into_iter()
        .filter(|t| !in_code(&code, t.start))
        .collect()
}

/// The value of `name="…"` (or `'…'`, or bare) in a tag's attribute text, any case.
pub(super) fn attribute<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
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
        return Some(value(rest.trim_start()).0);
    }
    None
}

/// Every attribute of a tag's attribute text, as `(name, value)` in order; a name without
/// `=` has an empty value.
pub(super) fn attributes(attrs: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = attrs.trim_start();
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(rest.len());
        let name = &rest[..end];
        rest = rest[end..].trim_start();
        let mut value_of = "";
        if let Some(after) = rest.strip_prefix('=') {
            let (v, left) = value(after.trim_start());
            value_of = v;
            rest = left;
        }
        if !name.is_empty() {
            out.push((name, value_of));
        } else if value_of.is_empty() {
            // A stray `=` or quote: step over one character so the loop moves on.
            let mut chars = rest.chars();
            chars.next();
            rest = chars.as_str();
        }
        rest = rest.trim_start();
    }
    out
}

/// An attribute's value at the start of `rest` (quoted with `"`, `'`, `“` or `”`, or bare up
/// to a blank or `/`), and what follows it.
fn value(rest: &str) -> (&str, &str) {
    match rest.chars().next() {
        Some(q @ ('"' | '\'' | '“' | '”')) => {
            let inner = &rest[q.len_utf8()..];
            let end = inner.find(['"', '\'', '“', '”']).unwrap_or(inner.len());
            let after = inner[end..]
                .chars()
                .next()
                .map_or(end, |c| end + c.len_utf8());
            (&inner[..end], &inner[after..])
        }
        _ => {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '/')
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(512)))]

        /// Looking a byte up by halves agrees with looking through every range.
        #[test]
        fn in_code_agrees_with_a_linear_search(
            text in "(```\n|`|\n    |\n|<anvil-open>|[a-z <>/])*"
        ) {
            let code = code_ranges(&text);
            prop_assert!(code.windows(2).all(|w| w[0].end <= w[1].start));
            for at in 0..=text.len() {
                prop_assert_eq!(in_code(&code, at), code.iter().any(|r| r.contains(&at)));
            }
        }
    }

    fn names(text: &str) -> Vec<(String, bool, bool)> {
        let lower = text.to_ascii_lowercase();
        find_tags(&lower)
            .iter()
            .map(|t| (t.name.to_owned(), t.closing, t.self_closing))
            .collect()
    }

    #[test]
    fn any_anvil_name_is_a_tag_and_nothing_else_is() {
        assert_eq!(
            names(
                "<anvil-rank first=\"B\"/> < /ANVIL-Rank > <anvil-x.y:z> <anvil-> <anvil-open!> \
                 <anvil-open x=\"a>b\"> <div> <anvil-complete / >"
            ),
            [
                ("anvil-rank".to_owned(), false, true),
                ("anvil-rank".to_owned(), true, false),
                ("anvil-x.y:z".to_owned(), false, false),
                ("anvil-open".to_owned(), false, false),
                ("anvil-complete".to_owned(), false, true),
            ]
        );
        // A closing tag carries no attributes; an attribute list that meets `<` ends no tag.
        assert!(names("</anvil-open x> <anvil-open x <b>").is_empty());
    }

    #[test]
    fn attributes_are_read_quoted_or_bare() {
        assert_eq!(
            attributes(" first=\"B\" second='A c' third=x flag = “y” last"),
            [
                ("first", "B"),
                ("second", "A c"),
                ("third", "x"),
                ("flag", "y"),
                ("last", "")
            ]
        );
        assert_eq!(attributes(" = \" ="), Vec::<(&str, &str)>::new());
        assert_eq!(
            attribute(" stance=For CONFIDENCE='0.7'", "confidence"),
            Some("0.7")
        );
        assert_eq!(attribute(" substance=x", "stance"), None);
    }
}
