//! The final report of a line: markdown, or one self-contained HTML file when the output path
//! ends in `.html`.
//!
//! Model text is untrusted. The HTML renderer turns any raw HTML in it into visible text,
//! neutralises links with script-capable schemes and shows images as links, and the page's
//! Content-Security-Policy allows no script and no load from anywhere: nothing a debater writes
//! runs in a browser or tells anyone that the report was opened.

use std::path::{Path, PathBuf};

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::home::{Home, LineRef};
use crate::model::state::State;

/// Writes the report of a finished line to `path` (from [`output_path`]): markdown, or one
/// self-contained HTML page when the path ends in `.html`.
pub fn write(path: &Path, state: &State, transcript: &str) -> std::io::Result<()> {
    let markdown = markdown(state, transcript);
    let bytes = if is_html(path) {
        let page = html(
            crate::model::state::first_line(&state.setup.question),
            &markdown,
        );
        with_chart(page, state)
    } else {
        markdown
    };
    crate::fsutil::write_atomic(path, bytes.as_bytes())
}

/// `--output` if given (relative to the project), else `.anvil/reports/<debate>[-<line>].md`.
pub fn output_path(home: &Home, state: &State) -> PathBuf {
    match &state.setup.output {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => home.project().join(p),
        None => home.report_path(&LineRef::new(&state.debate, &state.line)),
    }
}

fn is_html(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"))
}

/// The report as markdown: the synthesis first, then the whole debate.
pub fn markdown(state: &State, transcript: &str) -> String {
    let synthesis = transcript
        .rsplit_once("\n## Synthesis\n")
        .map(|(_, s)| s.trim());
    let mut out = String::new();
    let (title, rest) = transcript.split_once('\n').unwrap_or((transcript, ""));
    out.push_str(title);
    out.push('\n');
    if let Some(synthesis) = synthesis {
        let (intro, _) = rest.split_once("\n## ").unwrap_or((rest, ""));
        out.push_str(intro.trim_end());
        out.push_str("\n\n## Conclusion\n\n");
        out.push_str(synthesis);
        out.push_str("\n\n---\n\n# The debate\n");
        out.push_str(&rest[intro.len()..]);
    } else {
        out.push_str(rest);
    }
    if state.progress.ended_early {
        out.push_str("\n_The debate ended before its last round._\n");
    }
    let section = crate::review::positions::report_section(state, synthesis);
    if !section.is_empty() {
        out.push('\n');
        out.push_str(&section);
    }
    out
}

/// The HTML report with the chart of positions (SVG made here, no script) under its
/// "Positions" heading.
fn with_chart(page: String, state: &State) -> String {
    let chart = crate::review::positions::chart_of_state(state);
    let heading = "<h2>Positions</h2>\n";
    match page.rfind(heading) {
        Some(at) if !chart.is_empty() => {
            let svg = crate::review::positions::svg(&chart, &state.line);
            let at = at + heading.len();
            format!("{}<figure>{svg}</figure>\n{}", &page[..at], &page[at..])
        }
        _ => page,
    }
}

/// Renders markdown to a complete HTML page with inline styles and no scripts.
pub fn html(title: &str, markdown: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    // The image being shown as a link: its address, and whether it had alt text.
    let mut image: Option<(CowStr<'_>, bool)> = None;
    let events = Parser::new_ext(markdown, options).flat_map(move |event| match event {
        // Raw HTML from the model is shown, never interpreted.
        Event::Html(raw) | Event::InlineHtml(raw) => vec![Event::Text(raw)],
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => vec![Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        })],
        // An image from model text would load when the report is opened (a tracking pixel):
        // it is shown as a link to the image instead, its alt text (else its address) as the
        // link's text.
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let dest_url = safe_url(dest_url);
            image = Some((dest_url.clone(), false));
            vec![Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })]
        }
        Event::End(TagEnd::Image) => match image.take() {
            Some((url, false)) => vec![Event::Text(url), Event::End(TagEnd::Link)],
            _ => vec![Event::End(TagEnd::Link)],
        },
        other => {
            if let Some((_, alt)) = &mut image {
                *alt = true;
            }
            vec![other]
        }
    });
    let mut body = String::new();
    pulldown_cmark::html::push_html(&mut body, events);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        escape(title)
    )
}

const STYLE: &str = "body{font:16px/1.55 system-ui,sans-serif;margin:0;background:#fafafa;color:#1d1d1f}\
main{max-width:46rem;margin:2rem auto;padding:0 1.25rem}\
h1{font-size:1.7rem}h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}\
blockquote{margin:0;padding:.2rem 1rem;border-left:4px solid #c8a24a;background:#fff8e6}\
pre{background:#f0f0f0;padding:.8rem;overflow:auto}code{font-size:.92em}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .6rem}";

fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let scheme: String = url
        .trim_start()
        .chars()
        .take_while(|c| *c != ':' && *c != '/' && *c != '?' && *c != '#')
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    let has_scheme = url.contains(':')
        && !scheme.is_empty()
        && url.trim_start().len() > scheme.len()
        && url.trim_start()[scheme.len()..].starts_with(':');
    if has_scheme && !matches!(scheme.as_str(), "http" | "https" | "mailto") {
        CowStr::Borrowed("#")
    } else {
        url
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    pulldown_cmark::html::push_html(&mut out, std::iter::once(Event::Text(text.into())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_html_and_scripts_never_reach_the_page() {
        let md = "# T\n\n<script>alert(1)</script>\n\nInline <img src=x onerror=alert(1)> here.\n\n\
                  [click](javascript:alert(1)) [ok](https://example.org) ![i](JaVaScRiPt:x)\n\n\
                  <div onclick=\"x()\">block</div>\n";
        let page = html("T <b>", md);
        assert!(!page.contains("<script>"), "{page}");
        assert!(!page.contains("<img src=x"), "{page}");
        assert!(!page.contains("<div onclick"), "{page}");
        assert!(!page.to_lowercase().contains("javascript:"), "{page}");
        assert!(page.contains("&lt;script&gt;"), "{page}");
        assert!(page.contains("href=\"https://example.org\""), "{page}");
        assert!(page.contains("<title>T &lt;b&gt;</title>"), "{page}");
    }

    #[test]
    fn images_are_links_and_the_page_loads_nothing() {
        let page = html(
            "T",
            "![pixel](https://t.example/p.gif) ![](http://t.example/q.png)\n",
        );
        assert!(!page.contains("<img"), "{page}");
        assert!(
            page.contains("<a href=\"https://t.example/p.gif\">pixel</a>"),
            "{page}"
        );
        assert!(
            page.contains("<a href=\"http://t.example/q.png\">http://t.example/q.png</a>"),
            "{page}"
        );
        assert!(
            !page.contains("img-src") && !page.contains("https:;"),
            "{page}"
        );
    }
}
