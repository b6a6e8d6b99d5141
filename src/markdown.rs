//! Markdown for a terminal: a debater's text as a person reads it in `anvil run`, wrapped to
//! the terminal's width, with headings, emphasis, lists, quotes, code and tables styled; or as
//! plain text (no escape sequence at all) for a pipe, a file or `NO_COLOR`.
//!
//! Parsing is pulldown-cmark's, the CommonMark parser anvil already reads every phase with
//! (the markers, the reports, the web room): the terminal sees the same structure as every
//! other reader, tables and strikethrough included. What is ours is the small part a parser
//! does not do: turning its events into rows of a given width, and a handful of styles
//! ([`anstyle`], the styles clap prints with). A crate that renders markdown to a terminal
//! whole (termimad and the like) brings its own markdown dialect and a terminal library with
//! it, and draws to the screen itself; `anvil run` needs rows it can count, since it rewrites
//! the row a phase is being written on as the words arrive ([`render`] returns them).
//!
//! Every row is whole: it fits the width (a word longer than the width, or a line of code, is
//! cut into pieces that fit), and its styles end with it, so a row can be printed, erased and
//! printed again on its own. Text from a debater is hostile: every piece of it passes
//! [`crate::term::visible`] after parsing (an entity such as `&#27;` becomes a control
//! character only then), so what it holds is shown, never obeyed.

use std::borrow::Cow;

use anstyle::{AnsiColor, Style};
use pulldown_cmark::{Alignment, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How the text is shown: with styles or plain, and at what width (`None`: lines are not
/// wrapped, as for a file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    pub styled: bool,
    pub width: Option<usize>,
}

impl Look {
    /// Plain text at `width`.
    pub fn plain(width: Option<usize>) -> Look {
        Look {
            styled: false,
            width,
        }
    }
}

/// The narrowest width text is wrapped to, however narrow the terminal: below it, rows are
/// left to the terminal.
const NARROWEST: usize = 20;

/// `markdown` as rows for a terminal (without line ends), blocks apart by an empty row.
pub fn render(markdown: &str, look: &Look) -> Vec<String> {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    let events: Vec<Event<'_>> = Parser::new_ext(markdown, options).collect();
    let mut out = Rows::new(look);
    let mut i = 0;
    while i < events.len() {
        out.event(&events, i);
        i += 1;
    }
    out.flush_inline();
    out.rows
}

/// A run of text in one style.
#[derive(Debug, Clone)]
struct Piece {
    text: String,
    style: Style,
}

/// What contains the text being written: each adds a prefix to its rows.
#[derive(Debug, Clone)]
enum Frame {
    Quote,
    /// A list: its next number (`None`: bullets), and whether its items are tight (no empty
    /// row between them).
    List {
        next: Option<u64>,
        tight: bool,
    },
    /// An item of a list: its marker (`• `, `3. `), and whether its first row is written yet.
    Item {
        marker: String,
        started: bool,
    },
}

struct Rows<'l> {
    look: &'l Look,
    rows: Vec<String>,
    frames: Vec<Frame>,
    /// The inline text of the block being read.
    pieces: Vec<Piece>,
    /// The styles open (emphasis, strong, a link…), innermost last.
    styles: Vec<Style>,
    /// A block ended: the next one is set apart by an empty row.
    gap: bool,
    /// Where a link goes, for the text that follows it.
    links: Vec<String>,
    /// A code block being read: its text.
    code: Option<String>,
    /// A table being read: its alignments, rows of cells (each cell its pieces), and whether
    /// its head is over.
    table: Option<Table>,
    heading: Option<HeadingLevel>,
}

#[derive(Default)]
struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Vec<Piece>>>,
    head_rows: usize,
}

impl<'l> Rows<'l> {
    fn new(look: &'l Look) -> Rows<'l> {
        Rows {
            look,
            rows: Vec::new(),
            frames: Vec::new(),
            pieces: Vec::new(),
            styles: Vec::new(),
            gap: false,
            links: Vec::new(),
            code: None,
            table: None,
            heading: None,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    /// Opens a style on top of those open: its effects and colour over theirs.
    fn push_style(&mut self, add: Style) {
        let base = self.style();
        let mut style = base.effects(base.get_effects() | add.get_effects());
        if let Some(color) = add.get_fg_color() {
            style = style.fg_color(Some(color));
        }
        self.styles.push(style);
    }

    fn text(&mut self, text: &str, style: Style) {
        if let Some(code) = &mut self.code {
            code.push_str(text);
            return;
        }
        let piece = Piece {
            text: crate::term::visible(text).into_owned(),
            style,
        };
        match &mut self.table {
            Some(table) => {
                if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                    cell.push(piece);
                }
            }
            None => self.pieces.push(piece),
        }
    }

    fn event(&mut self, events: &[Event<'_>], i: usize) {
        let styled = self.look.styled;
        match &events[i] {
            Event::Start(tag) => match tag {
                Tag::Paragraph => self.flush_inline(),
                Tag::Heading { level, .. } => {
                    self.flush_inline();
                    self.heading = Some(*level);
                    let style = match level {
                        HeadingLevel::H1 => Style::new().bold().underline(),
                        HeadingLevel::H2 => Style::new().bold(),
                        _ => Style::new().bold().italic(),
                    };
                    self.push_style(style.fg_color(Some(AnsiColor::Cyan.into())));
                }
                Tag::BlockQuote(_) => {
                    self.flush_inline();
                    // The empty row before a quote is outside it (no bar).
                    self.put_rows(Vec::new());
                    self.frames.push(Frame::Quote);
                }
                Tag::CodeBlock(_) => {
                    self.flush_inline();
                    self.code = Some(String::new());
                }
                Tag::List(start) => {
                    self.flush_inline();
                    self.frames.push(Frame::List {
                        next: *start,
                        tight: tight(events, i),
                    });
                }
                Tag::Item => {
                    self.flush_inline();
                    let marker = match self.frames.iter_mut().rev().find_map(|f| match f {
                        Frame::List { next, .. } => Some(next),
                        _ => None,
                    }) {
                        Some(Some(n)) => {
                            let marker = format!("{n}. ");
                            *n += 1;
                            marker
                        }
                        _ if styled => "• ".to_owned(),
                        _ => "- ".to_owned(),
                    };
                    self.frames.push(Frame::Item {
                        marker,
                        started: false,
                    });
                }
                Tag::Emphasis => self.push_style(Style::new().italic()),
                Tag::Strong => self.push_style(Style::new().bold()),
                Tag::Strikethrough => self.push_style(Style::new().strikethrough()),
                Tag::Link { dest_url, .. } => {
                    self.links.push(dest_url.to_string());
                    self.push_style(Style::new().underline());
                }
                Tag::Image { dest_url, .. } => {
                    self.links.push(dest_url.to_string());
                    self.push_style(Style::new().italic());
                    self.text("image: ", self.style());
                }
                Tag::Table(aligns) => {
                    self.flush_inline();
                    self.table = Some(Table {
                        aligns: aligns.clone(),
                        ..Table::default()
                    });
                }
                Tag::TableHead | Tag::TableRow => {
                    if let Some(table) = &mut self.table {
                        table.rows.push(Vec::new());
                    }
                }
                Tag::TableCell => {
                    if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                        row.push(Vec::new());
                    }
                }
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Paragraph => {
                    self.flush_inline();
                    self.gap = true;
                }
                TagEnd::Heading(_) => {
                    self.flush_inline();
                    self.styles.pop();
                    self.heading = None;
                    self.gap = true;
                }
                TagEnd::BlockQuote(_) => {
                    self.flush_inline();
                    self.frames.pop();
                    self.gap = true;
                }
                TagEnd::CodeBlock => {
                    let code = self.code.take().unwrap_or_default();
                    self.code_rows(&code);
                    self.gap = true;
                }
                TagEnd::List(_) => {
                    self.flush_inline();
                    self.frames.pop();
                    self.gap = true;
                }
                TagEnd::Item => {
                    self.flush_inline();
                    self.frames.pop();
                    // Items of a tight list follow each other; a loose list's are set apart.
                    if self.in_tight_list() {
                        self.gap = false;
                    }
                }
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                    self.styles.pop();
                }
                TagEnd::Link | TagEnd::Image => {
                    self.styles.pop();
                    let dest = self.links.pop().unwrap_or_default();
                    let said: String = self.pieces.iter().map(|p| p.text.as_str()).collect();
                    if !dest.is_empty() && !said.ends_with(&dest) {
                        let style = self.style();
                        self.text(&format!(" ({dest})"), style);
                    }
                }
                TagEnd::TableHead => {
                    if let Some(table) = &mut self.table {
                        table.head_rows = table.rows.len();
                    }
                }
                TagEnd::Table => {
                    if let Some(table) = self.table.take() {
                        self.table_rows(&table);
                    }
                    self.gap = true;
                }
                _ => {}
            },
            Event::Text(text) => {
                let style = self.style();
                self.text(text, style);
            }
            Event::Code(code) => {
                let style = self.style().fg_color(Some(AnsiColor::Yellow.into()));
                if styled {
                    self.text(code, style);
                } else {
                    self.text(&format!("`{code}`"), style);
                }
            }
            Event::InlineMath(math) | Event::DisplayMath(math) => {
                let style = self.style();
                self.text(math, style);
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                let style = self.style();
                // An HTML block ends with a line end of its own.
                self.text(html.trim_end_matches('\n'), style);
                if matches!(events[i], Event::Html(_)) && html.ends_with('\n') {
                    self.pieces.push(Piece {
                        text: "\n".to_owned(),
                        style,
                    });
                }
            }
            Event::FootnoteReference(name) => {
                let style = self.style();
                self.text(&format!("[{name}]"), style);
            }
            Event::SoftBreak => {
                let style = self.style();
                self.text(" ", style);
            }
            Event::HardBreak => self.pieces.push(Piece {
                text: "\n".to_owned(),
                style: Style::new(),
            }),
            Event::Rule => {
                self.flush_inline();
                let width = self.avail().unwrap_or(40).min(40);
                let rule = if styled { "─" } else { "-" }.repeat(width);
                let style = if styled {
                    Style::new().dimmed()
                } else {
                    Style::new()
                };
                self.put_rows(vec![vec![Piece { text: rule, style }]]);
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                let style = self.style();
                self.text(if *done { "[x] " } else { "[ ] " }, style);
            }
        }
    }

    /// Whether the innermost container is an item of a tight list.
    fn in_tight_list(&self) -> bool {
        matches!(self.frames.last(), Some(Frame::List { tight: true, .. }))
    }

    /// The width left for text inside the frames, if there is a width.
    fn avail(&self) -> Option<usize> {
        let used: usize = self.frames.iter().map(prefix_width).sum();
        self.look
            .width
            .map(|w| w.saturating_sub(used).max(NARROWEST.min(w)))
    }

    /// The inline text read so far as wrapped rows.
    fn flush_inline(&mut self) {
        if self.pieces.is_empty() {
            return;
        }
        let pieces = std::mem::take(&mut self.pieces);
        // Leading and trailing spaces of a block (an HTML line's, a soft break's) are not shown.
        let rows = wrap(&pieces, self.avail());
        let rows: Vec<Vec<Piece>> = rows
            .into_iter()
            .filter(|r| !r.iter().all(|p| p.text.trim().is_empty()) || r.is_empty())
            .collect();
        if rows.is_empty() {
            return;
        }
        self.put_rows(rows);
    }

    fn code_rows(&mut self, code: &str) {
        let style = if self.look.styled {
            Style::new().fg_color(Some(AnsiColor::Green.into()))
        } else {
            Style::new()
        };
        let avail = self.avail().map(|w| w.saturating_sub(4).max(1));
        let mut rows = Vec::new();
        for line in code.trim_end_matches('\n').split('\n') {
            let line = crate::term::visible(line.trim_end_matches('\r')).replace('\t', "    ");
            for piece in cut(&line, avail) {
                rows.push(vec![Piece {
                    text: format!("    {piece}"),
                    style,
                }]);
            }
        }
        self.put_rows(rows);
    }

    fn table_rows(&mut self, table: &Table) {
        let styled = self.look.styled;
        let cells: Vec<Vec<String>> = table
            .rows
            .iter()
            .map(|row| row.iter().map(|cell| styled_text(cell, styled)).collect())
            .collect();
        let columns = cells.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                table
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|cell| cell.iter().map(|p| p.text.width()).sum::<usize>())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let (bar, cross, line) = if styled {
            (" │ ", "─┼─", "─")
        } else {
            (" | ", "-|-", "-")
        };
        let mut rows = Vec::new();
        for (r, row) in cells.iter().enumerate() {
            let shown: Vec<String> = (0..columns)
                .map(|c| {
                    let text = row.get(c).cloned().unwrap_or_default();
                    let width = table.rows[r]
                        .get(c)
                        .map_or(0, |cell| cell.iter().map(|p| p.text.width()).sum::<usize>());
                    let pad = widths[c].saturating_sub(width);
                    match table.aligns.get(c) {
                        Some(Alignment::Right) => format!("{}{text}", " ".repeat(pad)),
                        Some(Alignment::Center) => {
                            format!("{}{text}{}", " ".repeat(pad / 2), " ".repeat(pad - pad / 2))
                        }
                        _ => format!("{text}{}", " ".repeat(pad)),
                    }
                })
                .collect();
            rows.push(vec![Piece {
                text: shown.join(bar).trim_end().to_owned(),
                style: Style::new(),
            }]);
            if r + 1 == table.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| line.repeat(*w)).collect();
                rows.push(vec![Piece {
                    text: rule.join(cross),
                    style: if styled {
                        Style::new().dimmed()
                    } else {
                        Style::new()
                    },
                }]);
            }
        }
        self.put_rows(rows);
    }

    /// Writes `rows` inside the frames: an empty row first when a block ended before, each row
    /// behind the frames' prefixes (an item's marker on its first row only).
    fn put_rows(&mut self, rows: Vec<Vec<Piece>>) {
        let styled = self.look.styled;
        if self.gap && !self.rows.is_empty() {
            let quote: String = self
                .frames
                .iter()
                .map(|f| match f {
                    Frame::Quote => quote_bar(styled),
                    _ => String::new(),
                })
                .collect();
            self.rows.push(quote.trim_end().to_owned());
        }
        self.gap = false;
        for row in rows {
            let mut out = String::new();
            for frame in &mut self.frames {
                match frame {
                    Frame::Quote => out.push_str(&quote_bar(styled)),
                    Frame::List { .. } => {}
                    Frame::Item { marker, started } => {
                        if *started {
                            out.push_str(&" ".repeat(marker.width()));
                        } else {
                            out.push_str(marker);
                            *started = true;
                        }
                    }
                }
            }
            out.push_str(&styled_text(&row, styled));
            self.rows.push(out.trim_end().to_owned());
        }
    }
}

/// `│ ` (dimmed) before a quote's rows, `> ` in plain text.
fn quote_bar(styled: bool) -> String {
    if styled {
        format!(
            "{}│{} ",
            Style::new().dimmed().render(),
            Style::new().dimmed().render_reset()
        )
    } else {
        "> ".to_owned()
    }
}

fn prefix_width(frame: &Frame) -> usize {
    match frame {
        Frame::Quote => 2,
        Frame::List { .. } => 0,
        Frame::Item { marker, .. } => marker.width(),
    }
}

/// Whether the list that starts at `events[at]` is tight: no item of its own holds a
/// paragraph (pulldown-cmark wraps a loose list's items' text in paragraphs).
fn tight(events: &[Event<'_>], at: usize) -> bool {
    let mut depth = 0usize;
    let mut in_item = false;
    for event in &events[at + 1..] {
        match event {
            Event::Start(Tag::List(_)) => depth += 1,
            Event::End(TagEnd::List(_)) if depth == 0 => return true,
            Event::End(TagEnd::List(_)) => depth -= 1,
            Event::Start(Tag::Item) if depth == 0 => in_item = true,
            Event::Start(Tag::Paragraph) if depth == 0 && in_item => return false,
            _ => {}
        }
    }
    true
}

/// The pieces as one string: with each piece's style around it, or plain.
fn styled_text(pieces: &[Piece], styled: bool) -> String {
    let mut out = String::new();
    for piece in pieces {
        if styled && piece.style != Style::new() {
            out.push_str(&format!(
                "{}{}{}",
                piece.style.render(),
                piece.text,
                piece.style.render_reset()
            ));
        } else {
            out.push_str(&piece.text);
        }
    }
    out
}

/// `text` in pieces of at most `width` columns (whole when there is no width).
fn cut(text: &str, width: Option<usize>) -> Vec<String> {
    cut_to_fit(text, width.filter(|w| *w > 0), 0)
}

/// A word: the pieces of text between two spaces (a word can change style midway).
type Word = Vec<Piece>;

/// `pieces` laid out in rows of at most `width` columns, a word at a time; a word wider than a
/// row is cut. A `\n` piece (a hard break) ends a row. Without a width, rows end only there.
fn wrap(pieces: &[Piece], width: Option<usize>) -> Vec<Vec<Piece>> {
    let mut rows: Vec<Vec<Piece>> = vec![Vec::new()];
    let mut used = 0usize;
    let mut word: Word = Vec::new();
    let mut space_before = false;
    let place = |word: &mut Word, space: bool, rows: &mut Vec<Vec<Piece>>, used: &mut usize| {
        if word.is_empty() {
            return;
        }
        let w: usize = word.iter().map(|p| p.text.width()).sum();
        let gap = usize::from(space && *used > 0);
        if let Some(width) = width
            && *used > 0
            && *used + gap + w > width
        {
            rows.push(Vec::new());
            *used = 0;
        } else if gap == 1 {
            rows.last_mut().expect("one").push(Piece {
                text: " ".to_owned(),
                style: Style::new(),
            });
            *used += 1;
        }
        for piece in word.drain(..) {
            for (n, part) in cut_to_fit(&piece.text, width, *used)
                .into_iter()
                .enumerate()
            {
                if n > 0 {
                    rows.push(Vec::new());
                    *used = 0;
                }
                *used += part.width();
                rows.last_mut().expect("one").push(Piece {
                    text: part,
                    style: piece.style,
                });
            }
        }
    };
    for piece in pieces {
        if piece.text == "\n" {
            place(&mut word, space_before, &mut rows, &mut used);
            space_before = false;
            rows.push(Vec::new());
            used = 0;
            continue;
        }
        let mut rest = piece.text.as_str();
        while !rest.is_empty() {
            match rest.find(char::is_whitespace) {
                Some(0) => {
                    let end = rest
                        .find(|c: char| !c.is_whitespace())
                        .unwrap_or(rest.len());
                    place(&mut word, space_before, &mut rows, &mut used);
                    space_before = true;
                    rest = &rest[end..];
                }
                Some(at) => {
                    word.push(Piece {
                        text: rest[..at].to_owned(),
                        style: piece.style,
                    });
                    rest = &rest[at..];
                }
                None => {
                    word.push(Piece {
                        text: rest.to_owned(),
                        style: piece.style,
                    });
                    rest = "";
                }
            }
        }
    }
    place(&mut word, space_before, &mut rows, &mut used);
    if rows.len() > 1 && rows.last().is_some_and(Vec::is_empty) {
        rows.pop();
    }
    rows
}

/// `text` cut so that its first part fits what is left of a row of `width` after `used`
/// columns, and each next part a whole row.
fn cut_to_fit(text: &str, width: Option<usize>, used: usize) -> Vec<String> {
    let Some(width) = width else {
        return vec![text.to_owned()];
    };
    if used + text.width() <= width {
        return vec![text.to_owned()];
    }
    let mut out = vec![String::new()];
    let mut at = used;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if at + w > width && at > 0 {
            out.push(String::new());
            at = 0;
        }
        out.last_mut().expect("one").push(c);
        at += w;
    }
    out
}

/// The display width of a row as a terminal shows it: its escape sequences take no room.
pub fn width(row: &str) -> usize {
    strip_styles(row).width()
}

/// `row` without the escape sequences of its styles.
pub fn strip_styles(row: &str) -> Cow<'_, str> {
    if !row.contains('\x1b') {
        return row.into();
    }
    let mut out = String::with_capacity(row.len());
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(markdown: &str, width: usize) -> String {
        render(markdown, &Look::plain(Some(width))).join("\n")
    }

    #[test]
    fn paragraphs_wrap_to_the_width_and_blocks_stand_apart() {
        let text = "One two three four five six seven eight nine ten.\n\nEleven twelve.";
        assert_eq!(
            plain(text, 20),
            "One two three four\nfive six seven eight\nnine ten.\n\nEleven twelve."
        );
        // Without a width, a paragraph is one line.
        assert_eq!(
            render("a\nb", &Look::plain(None)).join("\n"),
            "a b",
            "a soft break is a space"
        );
    }

    #[test]
    fn plain_text_keeps_words_and_marks_only_what_it_must() {
        let text = "# Title\n\nSome **bold** and *soft* text, `code` and \
                    [a link](https://example.com).\n\n- one\n- two\n  - nested\n\n\
                    1. first\n2. second\n\n> quoted\n\n```\nfn main() {}\n```\n\n---\n\n\
                    | a | b |\n|---|--:|\n| 1 | 22 |";
        insta::assert_snapshot!(plain(text, 40), @r"
        Title

        Some bold and soft text, `code` and a
        link (https://example.com).

        - one
        - two
          - nested

        1. first
        2. second

        > quoted

            fn main() {}

        ----------------------------------------

        a |  b
        --|---
        1 | 22
        ");
    }

    #[test]
    fn styles_close_on_every_row() {
        let rows = render(
            "**a bold claim that runs over the row**",
            &Look {
                styled: true,
                width: Some(12),
            },
        );
        assert!(rows.len() > 1, "{rows:?}");
        for row in &rows {
            assert!(row.starts_with("\x1b["), "{row:?}");
            assert!(row.ends_with("\x1b[0m"), "{row:?}");
            assert!(width(row) <= 12, "{row:?}");
        }
    }

    #[test]
    fn no_row_is_wider_than_the_width() {
        let text = format!(
            "{} and a word {}\n\n```\n{}\n```\n\n- {}",
            "word ".repeat(30),
            "x".repeat(70),
            "y".repeat(70),
            "z".repeat(45)
        );
        for styled in [false, true] {
            for row in render(
                &text,
                &Look {
                    styled,
                    width: Some(30),
                },
            ) {
                assert!(width(&row) <= 30, "{row:?}");
            }
        }
    }

    #[test]
    fn a_debaters_escapes_are_shown_never_obeyed() {
        for text in [
            "clear \x1b[2J now",
            "clear &#27;[2J now",
            "`\x1b]52;c;x\x07`",
        ] {
            for styled in [false, true] {
                let rows = render(
                    text,
                    &Look {
                        styled,
                        width: Some(80),
                    },
                )
                .join("\n");
                let bare = strip_styles(&rows);
                assert!(!bare.contains('\x1b') && !bare.contains('\x07'), "{rows:?}");
                assert!(bare.contains("\\x1b"), "{rows:?}");
            }
        }
    }

    #[test]
    fn wide_characters_take_their_columns() {
        let rows = render("日本語の文章です 日本語の文章です", &Look::plain(Some(18)));
        assert_eq!(rows, ["日本語の文章です", "日本語の文章です"]);
    }
}
