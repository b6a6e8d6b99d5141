//! Model text as HTML for the page. Debaters' text is untrusted: raw HTML in it is shown as
//! text, and what the markdown renderer makes of the rest goes through `ammonia`, a maintained
//! HTML sanitiser, so no script, event handler or script-capable URL reaches the browser.

use std::sync::LazyLock;

use pulldown_cmark::{Event, Options, Parser};

static CLEANER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut b = ammonia::Builder::default();
    b.url_schemes(["http", "https", "mailto"].into_iter().collect())
        .link_rel(Some("noopener noreferrer nofollow"))
        .url_relative(ammonia::UrlRelative::Deny)
        // Images would load from elsewhere (the CSP would block them anyway): show none.
        .rm_tags(["img"]);
    b
});

/// Markdown to safe HTML; a debater's position and open points are shown as words, not tags.
pub fn markdown(text: &str) -> String {
    let text = anvil_core::model::markers::readable(text);
    let text = text.as_ref();
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    let events = Parser::new_ext(text, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        other => other,
    });
    let mut html = String::with_capacity(text.len() * 5 / 4);
    pulldown_cmark::html::push_html(&mut html, events);
    CLEANER.clean(&html).to_string()
}

/// A debater's text as plain words, for the compare page (which shows text, not markdown): its
/// position and open points as the debate page words them, without the emphasis.
pub fn plain(text: &str) -> String {
    anvil_core::model::markers::readable(text)
        .replace("**Position:**", "Position:")
        .replace("**Open point:**", "Open point:")
        // Markdown's hard line breaks, which keep each of them on a line of its own.
        .replace("  \n", "\n")
}

/// Text escaped for HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Two texts side by side, word by word, as `anvil diff --word` compares them: the old side
/// with its removed words marked, the new side with its added words marked.
pub fn word_diff(old: &str, new: &str) -> (String, String) {
    let diff = similar::TextDiff::from_words(old, new);
    let (mut left, mut right) = (String::new(), String::new());
    for change in diff.iter_all_changes() {
        let value = escape(change.value());
        match change.tag() {
            similar::ChangeTag::Equal => {
                left.push_str(&value);
                right.push_str(&value);
            }
            similar::ChangeTag::Delete => {
                left.push_str(&format!("<del>{value}</del>"));
            }
            similar::ChangeTag::Insert => {
                right.push_str(&format!("<ins>{value}</ins>"));
            }
        }
    }
    (left, right)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_model_text_is_shown_never_run() {
        let html = markdown(
            "<script>alert(1)</script>\n\nA <img src=x onerror=alert(2)> b\n\n\
             [click](javascript:alert(3)) [fine](https://example.org)\n\n\
             <a href=\"javascript:alert(4)\">x</a>",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        // No live javascript: link; the raw tag may stay visible as escaped text.
        let lower = html.to_lowercase();
        assert!(!lower.contains("<a href=\"javascript"), "{html}");
        assert!(!lower.contains("href=\"javascript:alert(3)"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(html.contains("onerror=alert(2)"), "shown as text: {html}");
        assert!(html.contains("href=\"https://example.org\""), "{html}");
    }

    #[test]
    fn plain_text_has_no_tags_and_no_emphasis_marks() {
        let text = "Yes.\n\n<anvil-position stance=\"for\" confidence=\"0.8\">It pays</anvil-position>\n<anvil-open>Who runs it?</anvil-open>";
        assert_eq!(
            plain(text),
            "Yes.\n\nPosition: for 0.8: It pays\nOpen point: Who runs it?"
        );
    }

    #[test]
    fn word_diff_marks_each_side() {
        let (l, r) = word_diff("cost is <high>", "cost is low");
        assert_eq!(l, "cost is <del>&lt;high&gt;</del>");
        assert_eq!(r, "cost is <ins>low</ins>");
    }
}
