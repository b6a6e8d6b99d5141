//! Text from models and users on its way to a terminal.
//!
//! A debater's words are untrusted: a phase that contains `ESC[2J` would clear the screen of
//! whoever runs `anvil show`, an OSC 52 sequence would write their clipboard, an OSC 8 one
//! would dress a link up as something else, and a bare carriage return or backspace would
//! overwrite what was printed before it. Every command that prints recorded text passes it
//! through [`visible`] where it formats it, so that such characters are *shown*, never obeyed,
//! while anvil's own colours (added afterwards, around the cleaned text) still work.
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
    let mut chars = text.char_indices().peekable();
    let mut out: Option<String> = None;
    while let Some((i, c)) = chars.next() {
        let crlf = c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n');
        if !needs_escape(c) || crlf {
            if let Some(out) = &mut out {
                out.push(c);
            }
            continue;
        }
        let out = out.get_or_insert_with(|| {
            let mut s = String::with_capacity(text.len() + 16);
            s.push_str(&text[..i]);
            s
        });
        if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    match out {
        Some(out) => Cow::Owned(out),
        None => Cow::Borrowed(text),
    }
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2048)))]
        #[test]
        fn nothing_a_terminal_obeys_survives(text in "\\PC*|[\\x00-\\x20\\u{80}-\\u{a0}a\\r\\n]*") {
            let got = visible(&text);
            let mut chars = got.chars().peekable();
            while let Some(c) = chars.next() {
                let crlf = c == '\r' && chars.peek() == Some(&'\n');
                proptest::prop_assert!(!needs_escape(c) || crlf, "{got:?}");
            }
        }
    }
}
