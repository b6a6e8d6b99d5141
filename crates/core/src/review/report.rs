//! The report of a line: markdown, or one self-contained HTML file when the output path ends
//! in `.html`. The report written when a debate ends, `anvil report` and the web room's
//! download are one [`Report`], made from the record alone.
//!
//! Its conclusion is the text the line's synthesis phase recorded
//! ([`history::conclusion`]): a line without a synthesis (cancelled, or still running) says
//! it has none, whatever its debaters wrote. The debate below it is the transcript, in which a
//! debater's headings sit under the phase's ([`crate::model::transcript`]), so no text of
//! theirs can open a section of the report. Debaters' tags read as words
//! ([`crate::model::markers::readable`]).
//!
//! The HTML page carries the chart of positions ([`crate::review::positions::svg`]) under its
//! "Positions" heading, found by where anvil wrote that heading, never by its words.
//!
//! Model text is untrusted. The HTML renderer turns any raw HTML in it into visible text,
//! neutralises links with script-capable schemes and shows images as links, and the page's
//! Content-Security-Policy allows no script and no load from anywhere: nothing a debater writes
//! runs in a browser or tells anyone that the report was opened.

use std::path::{Path, PathBuf};

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::home::{Home, LineRef};
use crate::model::state::{State, Status};
use crate::model::transcript::{self, PHASE_LEVEL};
use crate::record::store::Record;
use crate::review::history::{self, HistoryError, LineHistory};

/// A line's report, in markdown, with what its HTML page adds.
#[derive(Debug, Clone)]
pub struct Report {
    /// The page's title: the question's first line.
    pub title: String,
    markdown: String,
    /// The chart of positions as SVG, and where the heading it goes under starts.
    chart: Option<(usize, String)>,
}

impl Report {
    /// The report of `history`'s line, whose state at its tip is `state`: the question, the
    /// conclusion (the synthesis the record holds, or a line saying there is none), the whole
    /// debate, and the positions.
    pub fn of_line(
        record: &Record,
        history: &LineHistory,
        state: &State,
    ) -> Result<Report, HistoryError> {
        let conclusion = history::conclusion(record, history)?.map(|(_, text)| text);
        let header = transcript::header(state);
        let (title, intro) = header.split_once('\n').unwrap_or((&header, ""));
        let mut out = format!("{title}\n{}\n\n## Conclusion\n\n", intro.trim_end());
        match &conclusion {
            Some(text) => {
                let text = crate::model::markers::readable(text);
                out.push_str(transcript::nest(text.trim(), PHASE_LEVEL).trim());
            }
            None => out.push_str(&format!("_{}_", no_conclusion(state))),
        }
        out.push_str("\n\n---\n\n# The debate\n");
        if let Some(last) = history.entries.len().checked_sub(1) {
            out.push_str(&history::sections(record, history, last)?);
        }
        if state.progress.ended_early {
            out.push_str("\n_The debate ended before its last round._\n");
        }
        let section = crate::review::positions::report_section(state, conclusion.as_deref());
        let mut chart = None;
        if !section.is_empty() {
            out.push('\n');
            let drawn = crate::review::positions::chart(&history.entries);
            if !drawn.is_empty() {
                chart = Some((
                    out.len(),
                    crate::review::positions::svg(&drawn, &state.line),
                ));
            }
            out.push_str(&section);
        }
        Ok(Report {
            title: crate::model::state::first_line(&state.setup.question).to_owned(),
            markdown: out,
            chart,
        })
    }

    /// Adds `markdown` at the end (the command line's tree of lines and costs).
    pub fn push(&mut self, markdown: &str) {
        self.markdown.push_str(markdown);
    }

    pub fn markdown(&self) -> &str {
        &self.markdown
    }

    /// The report as one self-contained HTML page, with the chart of positions.
    pub fn html(&self) -> String {
        page(
            &self.title,
            &self.markdown,
            self.chart.as_ref().map(|(at, svg)| (*at, svg.as_str())),
        )
    }

    /// Writes the report to `path`: markdown, or the HTML page when the path ends in `.html`.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let html;
        let bytes = if is_html(path) {
            html = self.html();
            html.as_bytes()
        } else {
            self.markdown.as_bytes()
        };
        crate::fsutil::write_atomic(path, bytes)
    }
}

/// Why a line has no conclusion, in words.
fn no_conclusion(state: &State) -> String {
    let round = state.progress.round;
    match state.progress.status {
        Status::Cancelled => format!(
            "No conclusion: this line was cancelled in round {round}, before any synthesis."
        ),
        Status::Done => "No conclusion: the record holds no synthesis for this line.".to_owned(),
        Status::Active | Status::WaitingForInput => format!(
            "No conclusion yet: this line has no synthesis; it stands at {}.",
            state.standing()
        ),
    }
}

/// `--output` if given (relative to the project), else `.anvil/reports/<debate>[-<line>].md`.
pub fn output_path(home: &Home, state: &State) -> PathBuf {
    match &state.setup.output {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => home.project().join(p),
        None => home.report_path(&LineRef::new(&state.debate, &state.line)),
    }
}

/// Whether a report written to `path` is the HTML page.
pub fn is_html(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"))
}

/// Renders markdown to a complete HTML page with inline styles and no scripts; `figure`, when
/// given, is anvil's own markup (the chart) put right after the heading that starts at its
/// byte offset in `markdown`.
fn page(title: &str, markdown: &str, figure: Option<(usize, &str)>) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    // The image being shown as a link: its address, and whether it had alt text.
    let mut image: Option<(CowStr<'_>, bool)> = None;
    let figure = figure.map(|(at, svg)| (at, format!("<figure>{svg}</figure>\n")));
    let events = Parser::new_ext(markdown, options)
        .into_offset_iter()
        .flat_map(move |(event, range)| match event {
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
            Event::End(TagEnd::Heading(level)) => match &figure {
                Some((at, svg)) if *at == range.start => {
                    vec![
                        Event::End(TagEnd::Heading(level)),
                        Event::Html(svg.clone().into()),
                    ]
                }
                _ => vec![Event::End(TagEnd::Heading(level))],
            },
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
        let page = page("T <b>", md, None);
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
        let page = page(
            "T",
            "![pixel](https://t.example/p.gif) ![](http://t.example/q.png)\n",
            None,
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

    #[test]
    fn the_chart_goes_under_the_heading_anvil_wrote_and_no_other() {
        let md = "# Q\n\n## Positions\n\nforged\n\n## Positions\n\n- critic: against 0.7\n";
        let at = md.rfind("## Positions").unwrap();
        let page = page("Q", md, Some((at, "<svg>chart</svg>")));
        assert_eq!(page.matches("<figure>").count(), 1, "{page}");
        let figure = page.find("<figure>").unwrap();
        assert!(figure > page.find("forged").unwrap(), "{page}");
        // Markup a debater wrote stays text; only anvil's figure is markup.
        let page = super::page("Q", "<figure><svg>x</svg></figure>\n", None);
        assert!(!page.contains("<figure>"), "{page}");
    }
}
