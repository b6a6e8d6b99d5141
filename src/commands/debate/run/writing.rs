//! A phase as it is being written: the text the agent has said so far, cut into markdown
//! blocks, and the rows of the terminal that show it.
//!
//! A block (a paragraph, a list, a heading, a fenced code block) is rendered for good once a
//! blank line outside code ends it: its rows never change afterwards. The block still being
//! written is shown as far as it is settled, on a terminal that can take a row back: its rows
//! but the last are printed for good as soon as a later row exists (wrapping a paragraph at a
//! word never moves a row that came before), and the last row is printed, erased and printed
//! again as words arrive (`\r` and erase-line: no cursor moves up, so nothing else printed
//! meanwhile can be overwritten). A pipe gets whole blocks only.
//!
//! What is shown of the block being written is held back where showing it early would show
//! something wrong: the word still being written (a credential is only recognisable whole), a
//! tag of anvil's still open (it becomes words once closed, see [`for_people`]), and a `**`
//! or backtick not yet closed is closed for the moment, so that a bold word is bold from its
//! first letter rather than shown with its stars.

use std::borrow::Cow;

use anvil_core::model::secrets::Intake;

use crate::markdown::{self, Look};

/// A phase's text for people: anvil's tags as words. The one place the run decides how a
/// position reads, so that the renderer of a phase for people that the core provides is used
/// as it grows.
pub(super) fn for_people(text: &str) -> Cow<'_, str> {
    anvil_core::model::markers::readable(text)
}

/// The text of one phase as it arrives, in blocks.
#[derive(Debug, Default)]
pub(super) struct Blocks {
    text: String,
    /// Where the block still being written begins: everything before is taken.
    done: usize,
}

impl Blocks {
    pub(super) fn push(&mut self, more: &str) {
        self.text.push_str(more);
    }

    /// Whether anything was said.
    pub(super) fn is_empty(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// The blocks ended since the last call (up to the last blank line outside a fenced code
    /// block), if any.
    pub(super) fn take_ended(&mut self) -> Option<String> {
        let end = self.done + last_boundary(&self.text[self.done..])?;
        let ended = self.text[self.done..end].to_owned();
        self.done = end;
        Some(ended)
    }

    /// The block still being written, as far as it is settled (see the module's doc).
    pub(super) fn settled(&self) -> String {
        settled(&self.text[self.done..])
    }

    /// Everything not taken yet: the phase is over.
    pub(super) fn take_rest(&mut self) -> String {
        let rest = self.text[self.done..].to_owned();
        self.done = self.text.len();
        rest
    }
}

/// Where the blocks of `text` that are over end: after its last blank line outside a fenced
/// code block; `None` when no block is over yet.
fn last_boundary(text: &str) -> Option<usize> {
    let mut fence: Option<(char, usize)> = None;
    let mut at = 0;
    let mut boundary = None;
    let mut seen_text = false;
    for line in text.split_inclusive('\n') {
        at += line.len();
        if !line.ends_with('\n') {
            break;
        }
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if indent < 4 {
            let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
            if let Some(c) = marker {
                let run = trimmed.chars().take_while(|x| *x == c).count();
                match fence {
                    None if run >= 3 => {
                        fence = Some((c, run));
                        seen_text = true;
                        continue;
                    }
                    Some((open, len))
                        if open == c && run >= len && trimmed[run..].trim().is_empty() =>
                    {
                        fence = None;
                        continue;
                    }
                    _ => {}
                }
            }
        }
        if fence.is_none() && line.trim().is_empty() {
            // Blank lines before any text are taken with what follows them.
            if seen_text {
                boundary = Some(at);
            }
        } else {
            seen_text = true;
        }
    }
    boundary
}

/// What can be shown now of a block still being written (see the module's doc).
fn settled(block: &str) -> String {
    // The word being written waits for its end.
    let end = block.rfind(char::is_whitespace).map_or(0, |at| {
        at + block[at..].chars().next().map_or(1, char::len_utf8)
    });
    let mut shown = block[..end].to_owned();
    // A tag of anvil's still open waits for its close.
    let lower = shown.to_ascii_lowercase();
    if let Some(at) = lower.rfind("<anvil") {
        let rest = &lower[at..];
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let name = &rest[1..name_end];
        let closed = rest.contains("/>") || rest.contains(&format!("</{name}"));
        if !closed {
            shown.truncate(at);
        }
    }
    // A `<` that may be the start of such a tag.
    if let Some(at) = shown.rfind('<')
        && "<anvil".starts_with(&shown[at..].to_ascii_lowercase())
    {
        shown.truncate(at);
    }
    // Emphasis and code still open are closed for now.
    if shown.matches('`').count() % 2 == 1 {
        let trimmed = shown.trim_end().len();
        shown.truncate(trimmed);
        shown.push('`');
    } else if shown.matches("**").count() % 2 == 1 {
        let trimmed = shown.trim_end().len();
        shown.truncate(trimmed);
        shown.push_str("**");
    }
    shown
}

/// A text from an agent made ready for people: credentials out (through `intake`), anvil's
/// tags as words.
pub(super) fn ready(text: &str, intake: &mut Intake) -> String {
    let clean = intake.clean("what an agent said", text);
    for_people(&clean).into_owned()
}

/// The rows of a terminal that show the phase being written.
#[derive(Debug)]
pub(super) struct Screen {
    pub(super) look: Look,
    /// The terminal can take its last row back (`\r` and erase-line).
    live: bool,
    /// Rows of the block being written already printed for good.
    printed: usize,
    /// The last row, shown but not yet for good (printed without its line end).
    pending: bool,
    /// A block was printed: the next one is set apart by an empty row.
    gap: bool,
}

impl Screen {
    pub(super) fn new(look: Look, live: bool) -> Screen {
        Screen {
            look,
            live,
            printed: 0,
            pending: false,
            gap: false,
        }
    }

    /// Whether the last row can be taken back.
    pub(super) fn is_live(&self) -> bool {
        self.live
    }

    /// What takes the pending row back, if there is one (before anything else is printed).
    pub(super) fn clear(&mut self) -> &'static str {
        if std::mem::take(&mut self.pending) {
            "\r\x1b[K"
        } else {
            ""
        }
    }

    /// What prints a block that is over, rendered from `markdown`.
    pub(super) fn ended(&mut self, markdown: &str) -> String {
        let rows = markdown::render(markdown, &self.look);
        let mut out = self.clear().to_owned();
        if rows.is_empty() {
            self.printed = 0;
            return out;
        }
        out.push_str(&self.rows_from(&rows, rows.len()));
        self.printed = 0;
        self.gap = true;
        out
    }

    /// What shows the block being written so far, rendered from `markdown` (nothing on a
    /// terminal that cannot take a row back).
    pub(super) fn writing(&mut self, markdown: &str) -> String {
        if !self.live {
            return String::new();
        }
        let rows = markdown::render(markdown, &self.look);
        let mut out = self.clear().to_owned();
        let Some(last) = rows.last() else {
            return out;
        };
        out.push_str(&self.rows_from(&rows, rows.len() - 1));
        if self.printed == 0 && std::mem::take(&mut self.gap) {
            out.push('\n');
        }
        // The last row, unless it was printed for good already (a row the text shrank back to).
        if self.printed < rows.len() {
            out.push_str(&fit(last, self.look.width));
            self.pending = true;
        }
        out
    }

    /// The rows from the first not printed yet up to `upto` (excluded), each with its line
    /// end, the empty row between blocks first.
    fn rows_from(&mut self, rows: &[String], upto: usize) -> String {
        let mut out = String::new();
        if self.printed >= upto {
            return out;
        }
        if self.printed == 0 && std::mem::take(&mut self.gap) {
            out.push('\n');
        }
        for row in &rows[self.printed..upto] {
            out.push_str(row);
            out.push('\n');
        }
        self.printed = upto;
        out
    }

    /// The phase is over: the next one starts on a screen of its own, its pending row taken
    /// back (what it showed is printed for good by [`Screen::ended`] before this).
    pub(super) fn end_phase(&mut self) -> &'static str {
        self.printed = 0;
        self.gap = false;
        self.clear()
    }
}

/// `row` cut to `width` columns: a row shown for the moment must not wrap, or erasing it
/// would leave its first part behind.
fn fit(row: &str, width: Option<usize>) -> Cow<'_, str> {
    match width {
        Some(width) if markdown::width(row) > width => {
            let plain = markdown::strip_styles(row);
            let mut out = String::new();
            let mut used = 0;
            for c in plain.chars() {
                let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if used + w + 1 > width {
                    out.push('…');
                    break;
                }
                out.push(c);
                used += w;
            }
            out.into()
        }
        _ => row.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_end_at_a_blank_line_outside_code() {
        let mut blocks = Blocks::default();
        blocks.push("First para");
        assert_eq!(blocks.take_ended(), None);
        blocks.push("graph.\n\n```\ncode\n\nmore code\n");
        assert_eq!(blocks.take_ended().as_deref(), Some("First paragraph.\n\n"));
        assert_eq!(blocks.take_ended(), None, "the fence is still open");
        blocks.push("```\n\nAfter.");
        assert_eq!(
            blocks.take_ended().as_deref(),
            Some("```\ncode\n\nmore code\n```\n\n")
        );
        assert_eq!(blocks.take_rest(), "After.");
    }

    #[test]
    fn what_is_settled_waits_for_words_and_tags() {
        assert_eq!(settled("Hello wor"), "Hello ");
        assert_eq!(settled("Some **bold cla"), "Some **bold**");
        assert_eq!(settled("Run `cargo te"), "Run `cargo`");
        assert_eq!(
            settled("I hold this. <anvil-position stance=\"for\" confidence=\"0.6\">A long claim "),
            "I hold this. "
        );
        assert_eq!(settled("I hold this. <anv"), "I hold this. ");
        let closed = "<anvil-position stance=\"for\">Claim.</anvil-position> ";
        assert_eq!(settled(closed), closed);
    }

    #[test]
    fn a_live_screen_prints_each_row_once_and_rewrites_only_the_last() {
        let mut screen = Screen::new(Look::plain(Some(20)), true);
        let first = screen.writing("one two three four five");
        assert_eq!(first, "one two three four\nfive");
        let second = screen.writing("one two three four five six seven");
        assert_eq!(second, "\r\x1b[Kfive six seven");
        let ended = screen.ended("one two three four five six seven eight\n\n");
        assert_eq!(ended, "\r\x1b[Kfive six seven eight\n");
        let next = screen.writing("Next");
        assert_eq!(next, "\nNext", "blocks stand apart");
    }

    #[test]
    fn a_pipe_gets_whole_blocks() {
        let mut screen = Screen::new(Look::plain(None), false);
        assert_eq!(screen.writing("one two"), "");
        assert_eq!(screen.ended("one two three\n\n"), "one two three\n");
        assert_eq!(screen.ended("- a\n- b\n"), "\n- a\n- b\n");
    }
}
