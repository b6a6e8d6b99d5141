//! Text on its way to a terminal.
//!
//! A debater's words, an agent's error, a model name an agent reports, are all untrusted: a
//! text that contains `ESC[2J` would clear the screen of whoever reads it, an OSC 52 sequence
//! would write their clipboard, an OSC 0 one would retitle their window, an OSC 8 one would
//! dress a link up as something else, and a bare carriage return or backspace would overwrite
//! what was printed before it. Whatever anvil shows passes through [`visible`] where it is
//! formatted, so that such characters are *shown*, never obeyed, while anvil's own colours
//! (added afterwards, around the cleaned text) still work. One neutraliser serves every place
//! that shows text: the command line (what `anvil show`, `anvil run` and every error print) and
//! the Stop hook (its notice, `systemMessage`; a block's reason, which clients before Claude
//! Code 2.1.163 show under "Stop hook error"; and the window title and notification of its
//! `terminalSequence`).
//!
//! What is shown, and how (one notation for all, so a reader can tell what was there):
//! - C0 controls except newline and tab, and DEL: `\x1b`, `\x07`, `\x08`, `\x7f`, …;
//!   a carriage return is kept only right before a newline (`\r\n` line ends), else `\x0d`;
//! - C1 controls (U+0080–U+009F, e.g. the one-character CSI U+009B): `\u{9b}`;
//! - Unicode bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which can
//!   make text read in a different order than it is: `\u{202e}`.
//!
//! The record keeps the text whole; only what reaches a terminal is changed.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every character a terminal would obey instead of show replaced by a visible
/// escape (see the module docs). Text without such characters is returned as it is.
pub fn visible(text: &str) -> Cow<'_, str> {
    let Some(first) = first_to_escape(text) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut chars = text[first..].chars().peekable();
    while let Some(c) = chars.next() {
        let crlf = c == '\r' && chars.peek() == Some(&'\n');
        if !needs_escape(c) || crlf {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

/// `text` on one line, for a window title or a notification: line ends and tabs become spaces,
/// and the rest is [`visible`].
pub fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    visible(&spaced).into_owned()
}

/// Where the first character [`visible`] replaces begins, read as bytes: the hook shows whole
/// prompts, and most texts hold none.
fn first_to_escape(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' | b'\t' => {}
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {}
            0x00..=0x1f | 0x7f => return Some(i),
            // U+0080–U+009F.
            0xc2 if matches!(bytes.get(i + 1), Some(0x80..=0x9f)) => return Some(i),
            // U+202A–U+202E and U+2066–U+2069.
            0xe2 if matches!(
                (bytes.get(i + 1), bytes.get(i + 2)),
                (Some(0x80), Some(0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
            ) =>
            {
                return Some(i);
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `c` is one of the characters [`visible`] replaces (newline and tab are not; a
/// carriage return is, unless a newline follows it).
pub fn needs_escape(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        c if c.is_ascii_control() => true,
        '\u{80}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// JSON for a terminal: serde_json already escapes C0 controls in strings; the C1 controls and
/// bidirectional overrides it leaves raw are written as `\u00XX` / `\uXXXX` escapes too, so the
/// value a script parses is the same and a terminal shows them instead of obeying them.
pub fn json(value: &impl serde::Serialize) -> String {
    let text = serde_json::to_string_pretty(value).expect("anvil's JSON output always serialises");
    if !text.chars().any(needs_escape) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        // Outside strings JSON has only ASCII punctuation, newlines and spaces, so every such
        // character is inside a string, where a `\u` escape means the same character.
        if needs_escape(c) && c != '\n' {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "Rust removes bugs.\n\tIndented — ünïcode, emoji 🦀, CRLF\r\nend";
        assert!(matches!(visible(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn each_hostile_sequence_is_shown_not_obeyed() {
        for (raw, shown) in [
            ("a\x1b[2Jb", "a\\x1b[2Jb"),
            ("\x1b]52;c;SGVsbG8=\x07", "\\x1b]52;c;SGVsbG8=\\x07"),
            (
                "\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\",
                "\\x1b]8;;https://evil\\x1b\\link\\x1b]8;;\\x1b\\",
            ),
            ("x\u{9b}31my", "x\\u{9b}31my"),
            ("\u{85}\u{9d}", "\\u{85}\\u{9d}"),
            ("over\rwrite", "over\\x0dwrite"),
            ("end\r", "end\\x0d"),
            ("back\x08\x08", "back\\x08\\x08"),
            ("nul\0bell\x07del\x7f", "nul\\x00bell\\x07del\\x7f"),
            ("abc\u{202e}fed", "abc\\u{202e}fed"),
        ] {
            let got = visible(raw);
            assert_eq!(got, shown, "{raw:?}");
            assert!(!got.chars().any(needs_escape), "{got:?}");
        }
    }

    #[test]
    fn json_keeps_the_value_and_escapes_what_a_terminal_would_obey() {
        let value = serde_json::json!({ "t": "a\u{9b}2J\x1b[0m\u{202e}b\n" });
        let text = json(&value);
        assert!(
            !text.chars().any(|c| needs_escape(c) && c != '\n'),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn one_line_folds_line_ends_and_shows_the_rest() {
        assert_eq!(
            one_line("a\nb\tc\r\nd\x1b]0;title\x07"),
            "a b c  d\\x1b]0;title\\x07"
        );
        assert_eq!(one_line("gpt-5 · “quoted” — ok"), "gpt-5 · “quoted” — ok");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testkit::cases(2048)))]
        #[test]
        fn nothing_a_terminal_obeys_survives(text in "\\PC*|[\\x00-\\x20\\u{80}-\\u{a0}a\\r\\n]*") {
            let got = visible(&text);
            let mut chars = got.chars().peekable();
            while let Some(c) = chars.next() {
                let crlf = c == '\r' && chars.peek() == Some(&'\n');
                proptest::prop_assert!(!needs_escape(c) || crlf, "{got:?}");
            }
        }

        /// The byte scan that lets most texts through untouched agrees with the characters:
        /// a text is borrowed exactly when nothing in it needs an escape.
        #[test]
        fn a_text_is_kept_exactly_when_nothing_needs_an_escape(text in "\\PC*|[\\x00-\\x20\\u{80}-\\u{a0}\\u{2028}-\\u{206f}a\\r\\n·—]*") {
            let chars: Vec<char> = text.chars().collect();
            let clean = chars.iter().enumerate().all(|(i, &c)| {
                !needs_escape(c) || (c == '\r' && chars.get(i + 1) == Some(&'\n'))
            });
            proptest::prop_assert_eq!(matches!(visible(&text), Cow::Borrowed(_)), clean);
        }
    }
}
