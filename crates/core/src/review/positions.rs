//! Positions read back from a line's history: each seat's stance and confidence round by
//! round, how they moved between two moments, what the synthesis recorded (consensus, dissent,
//! saving), and the chart of it all as SVG made here, on the server, for the web room and the
//! HTML report alike.
//!
//! Everything is read from the trailers (`entry.meta`), never from prose.

use std::fmt::Write as _;

use crate::model::positions::{OpenPoint, Position, Saving, Share, Stance, seat_label};
use crate::record::schema::Meta;
use crate::review::history::Entry;

/// One debating phase on the chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    pub round: u32,
    /// `None`: the phase stated no position.
    pub position: Option<Position>,
}

/// One seat's positions over the rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub seat: String,
    pub points: Vec<Point>,
}

/// A line's positions, as the chart and the commands show them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chart {
    pub series: Vec<Series>,
    /// The last round any seat spoke in.
    pub rounds: u32,
    /// The round after which positions stopped moving, and whether `--converge` acted on it.
    pub converged: Option<(u32, bool)>,
    pub consensus: Option<Share>,
}

/// The position a commit recorded, if any.
pub fn position(meta: &Meta) -> Option<Position> {
    Some(Position {
        stance: meta.stance?,
        confidence: meta.confidence.unwrap_or(Share::HALF),
        claim: meta.claim.clone().unwrap_or_default(),
    })
}

/// Where positions stopped moving, as the commit that closed that round records it, when it is
/// worth saying: `(round, acted)`, `acted` when `--converge` sent the debate to its synthesis
/// there. `None` when they did not stop there, or when stopping there would have saved nothing
/// because the synthesis came next anyway (a two-round debate's round 2, a debater who ended
/// the debate with that phase, a budget spent). `log`, `show`, the web room and the chart all
/// ask this one question.
pub fn steady(meta: &Meta) -> Option<(u32, bool)> {
    let round = meta.converged?;
    let synthesis_next = matches!(meta.next.as_deref(), Some("synthesizer" | "done"));
    (meta.converge_stop || !synthesis_next).then_some((round, meta.converge_stop))
}

/// What convergence did, in the words every reader of the record uses: `stopped after round
/// 2` when `--converge` acted on it, `would have stopped after round 2` when it was only noted.
pub fn stop_words(round: u32, acted: bool) -> String {
    if acted {
        format!("stopped after round {round}")
    } else {
        format!("would have stopped after round {round}")
    }
}

/// The chart of `entries` (a line's history, or its first part up to some moment).
pub fn chart(entries: &[Entry]) -> Chart {
    let mut out = Chart::default();
    for e in entries {
        let Some(role) = e.role else { continue };
        if out.converged.is_none() {
            out.converged = steady(&e.meta);
        }
        if e.meta.consensus.is_some() {
            out.consensus = e.meta.consensus;
        }
        if !role.is_debating() {
            continue;
        }
        let seat = seat_label(role.name(), e.meta.voice.as_deref());
        let point = Point {
            round: e.meta.round,
            position: position(&e.meta),
        };
        out.rounds = out.rounds.max(e.meta.round);
        match out.series.iter_mut().find(|s| s.seat == seat) {
            Some(s) => s.points.push(point),
            None => out.series.push(Series {
                seat,
                points: vec![point],
            }),
        }
    }
    out
}

impl Chart {
    /// Whether any phase stated a position.
    pub fn is_empty(&self) -> bool {
        !self
            .series
            .iter()
            .any(|s| s.points.iter().any(|p| p.position.is_some()))
    }

    /// Each seat's last stated position.
    pub fn last(&self) -> Vec<(&str, &Position)> {
        self.series
            .iter()
            .filter_map(|s| {
                let p = s.points.iter().rev().find_map(|p| p.position.as_ref())?;
                Some((s.seat.as_str(), p))
            })
            .collect()
    }
}

/// How each seat moved from `a` to `b` (two moments' charts): `critic: against 0.7 → mixed
/// 0.6`, flagged `(changed stance)` when it did; `–` for a seat with no position at a side.
pub fn movement(a: &Chart, b: &Chart) -> Vec<String> {
    let before = a.last();
    let after = b.last();
    let mut seats: Vec<&str> = Vec::new();
    for (s, _) in before.iter().chain(after.iter()) {
        if !seats.contains(s) {
            seats.push(s);
        }
    }
    seats
        .into_iter()
        .map(|seat| {
            let find = |side: &[(&str, &Position)]| {
                side.iter()
                    .find(|(s, _)| *s == seat)
                    .map(|(_, p)| (*p).clone())
            };
            let (x, y) = (find(&before), find(&after));
            let show = |p: &Option<Position>| p.as_ref().map_or("–".to_owned(), Position::short);
            let mut line = format!("{seat}: {} → {}", show(&x), show(&y));
            if let (Some(x), Some(y)) = (&x, &y)
                && x.stance != y.stance
            {
                line.push_str(" (changed stance)");
            }
            line
        })
        .collect()
}

/// What a commit says about positions, for `--json`: `null` fields left out.
pub fn to_json(meta: &Meta) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    if let Some(p) = position(meta) {
        out.insert(
            "position".into(),
            serde_json::json!({
                "stance": p.stance.name(),
                "confidence": p.confidence.as_f64(),
                "claim": p.claim,
            }),
        );
    }
    if !meta.open.is_empty() {
        out.insert("open".into(), serde_json::json!(meta.open));
    }
    if let Some(r) = meta.converged {
        out.insert(
            "converged".into(),
            serde_json::json!({ "round": r, "stopped": meta.converge_stop, "held": meta.converge_held }),
        );
    }
    if let Some(c) = meta.consensus {
        out.insert("consensus".into(), serde_json::json!(c.as_f64()));
    }
    let points = |list: &[OpenPoint]| -> serde_json::Value {
        list.iter()
            .map(|p| serde_json::json!({ "seat": p.seat, "point": p.text }))
            .collect()
    };
    if !meta.dissent.is_empty() {
        out.insert("dissent".into(), points(&meta.dissent));
    }
    if !meta.dissent_missing.is_empty() {
        out.insert("dissent_missing".into(), points(&meta.dissent_missing));
    }
    if let Some(s) = meta.saving {
        out.insert("saving".into(), saving_json(&s));
    }
    serde_json::Value::Object(out)
}

pub fn saving_json(s: &Saving) -> serde_json::Value {
    serde_json::json!({ "after_round": s.round, "phases": s.phases, "tokens": s.tokens })
}

/// One line for people: `against 0.7`, with the claim when asked.
pub fn summary(meta: &Meta) -> Option<String> {
    position(meta).map(|p| p.short())
}

/// The chart of a line from its state (the claims are in the record, not in the state): what
/// the report is written from, at the synthesis.
pub fn chart_of_state(state: &crate::model::state::State) -> Chart {
    // Worth saying as for [`steady`]: `--converge` acted, or a round came after it (or will).
    let last = if state.progress.status.is_over() {
        state.progress.round
    } else {
        state.setup.rounds
    };
    let mut out = Chart {
        converged: state
            .converged
            .filter(|c| c.acted || c.round < last)
            .map(|c| (c.round, c.acted)),
        ..Chart::default()
    };
    for h in &state.positions {
        let point = Point {
            round: h.round,
            position: h.stance.map(|stance| Position {
                stance,
                confidence: h.confidence,
                claim: String::new(),
            }),
        };
        out.rounds = out.rounds.max(h.round);
        match out.series.iter_mut().find(|s| s.seat == h.seat) {
            Some(s) => s.points.push(point),
            None => out.series.push(Series {
                seat: h.seat.clone(),
                points: vec![point],
            }),
        }
    }
    let finals: Vec<(Stance, Share)> = crate::model::positions::finals(&state.positions)
        .into_iter()
        .map(|(_, s, c)| (s, c))
        .collect();
    out.consensus = crate::model::positions::consensus(&finals);
    out
}

/// The report's section on positions, in markdown: the consensus score, how each seat moved,
/// when positions stopped moving, and the dissent (the points still open, each marked when
/// the synthesis does not mention it). Empty when no phase stated a position.
pub fn report_section(state: &crate::model::state::State, synthesis: Option<&str>) -> String {
    use crate::model::positions as p;
    let chart = chart_of_state(state);
    let open = p::still_open(&state.positions);
    if chart.is_empty() && open.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Positions\n\n");
    if let Some(c) = chart.consensus {
        out.push_str(&format!(
            "**Consensus score: {c}** (from the final positions, by arithmetic: see anvil's docs/positions.md)\n\n"
        ));
    }
    for (line, _) in p::trajectories(&state.positions) {
        out.push_str(&format!("- {}\n", md(&line)));
    }
    for (seat, pos) in chart.last() {
        if chart.series.iter().any(|s| {
            s.seat == seat && s.points.iter().filter(|q| q.position.is_some()).count() == 1
        }) {
            out.push_str(&format!("- {}: {}\n", md(seat), pos.short()));
        }
    }
    if let Some((round, acted)) = chart.converged {
        out.push_str(&if acted {
            format!("\nPositions stopped moving after round {round}; the debate went to its synthesis.\n")
        } else {
            format!("\nPositions stopped moving after round {round}: the debate would have stopped there.\n")
        });
    }
    if !open.is_empty() {
        let missing = synthesis
            .map(|t| p::unmentioned(&open, t))
            .unwrap_or_default();
        out.push_str("\n### Dissent\n\nPoints still open at the end, raised and never answered or conceded:\n\n");
        for (i, point) in open.iter().enumerate() {
            out.push_str(&format!(
                "- {} ({}): {}{}\n",
                p::OpenPoint::label(i),
                md(&point.seat),
                md(&point.text),
                if missing.contains(&point) {
                    " _(not mentioned by the synthesis)_"
                } else {
                    ""
                }
            ));
        }
    }
    out
}

/// Debater text made inert in markdown: it stays text, whatever it holds.
fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '!' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The chart as SVG
//
// Drawn for a phone first: 400 units wide with 14-unit text, so that shrunk to the column of a
// 390-pixel screen (340 to 360 pixels) its words stay about 12 pixels high, and shown at its
// own size on a wide screen. The stance levels are single words in a narrow gutter, the
// rounds are numbers, and the legend sits under the plot in two columns: nothing takes the
// width a legend at the side would. A page lets it follow the page's width with `max-width:
// 100%; height: auto`; its `width` and `height` are its natural size, the viewBox keeps its
// proportions.

/// Dash patterns and marker shapes by series: the lines tell apart without colour.
const DASHES: [&str; 6] = ["", "8 4", "2 3", "10 3 2 3", "4 4", "1 5"];
const COLOURS: [&str; 6] = [
    "#1b6ca8", "#c0392b", "#2e7d32", "#8e44ad", "#b9770e", "#455a64",
];

/// The size of every word on the chart, in its units.
const TEXT: f64 = 14.0;

/// The room the layout leaves for one character of the chart's text, in `em`: generous, as
/// the common sans-serif fonts of browsers take 0.5 to 0.6.
const CHAR_EM: f64 = 0.62;

/// How wide `text` may be drawn, in the chart's units.
fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_EM * TEXT
}

fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn marker(shape: usize, x: f64, y: f64, colour: &str, filled: bool) -> String {
    let fill = if filled { colour } else { "#fff" };
    match shape % 4 {
        0 => format!(
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="4.5" fill="{fill}" stroke="{colour}" stroke-width="2"/>"#
        ),
        1 => format!(
            r#"<rect x="{:.1}" y="{:.1}" width="9" height="9" fill="{fill}" stroke="{colour}" stroke-width="2"/>"#,
            x - 4.5,
            y - 4.5
        ),
        2 => format!(
            r#"<path d="M{x:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z" fill="{fill}" stroke="{colour}" stroke-width="2"/>"#,
            y - 5.5,
            x + 5.5,
            y + 4.5,
            x - 5.5,
            y + 4.5
        ),
        _ => format!(
            r#"<path d="M{x:.1} {:.1} L{:.1} {y:.1} L{x:.1} {:.1} L{:.1} {y:.1} Z" fill="{fill}" stroke="{colour}" stroke-width="2"/>"#,
            y - 6.0,
            x + 6.0,
            y + 6.0,
            x - 6.0
        ),
    }
}

/// The chart as one `<svg>` element: rounds across, stance×confidence up (for at the top,
/// against at the bottom, mixed and undecided on the middle line), one polyline per seat with
/// its own dash pattern and marker shape, a ring where a seat changed stance, a dashed
/// vertical rule at the convergence, and the legend under the plot. Labelled for screen
/// readers (`role`, `aria-labelledby`, `<title>` on the chart, each series and each point)
/// and readable in black and white. `label` names the chart (a line's name).
pub fn svg(chart: &Chart, label: &str) -> String {
    let frame = Frame::new(chart.rounds, chart.series.len());
    let mut s = String::with_capacity(4096);
    open_svg(&mut s, chart, label, &frame);
    axes(&mut s, &frame);
    convergence(&mut s, chart, &frame);
    for (i, series) in chart.series.iter().enumerate() {
        seat_series(&mut s, i, series, &frame);
        legend(&mut s, i, series, &frame);
    }
    s.push_str("</svg>");
    s
}

/// The vote's result as a small bar chart (SVG made on the server, every text escaped): one
/// row per seat, best first, its bar as long as its Borda points against the most any seat
/// got, the points written at its end. `label` names the chart (a line's name); a `<title>`
/// and a `<desc>` say it all for screen readers.
pub fn vote_svg(rows: &[(String, u32)], label: &str) -> String {
    let (w, row, gutter, top) = (400.0, 24.0, 150.0, 8.0);
    let h = top * 2.0 + row * rows.len().max(1) as f64;
    let most = rows.iter().map(|r| r.1).max().unwrap_or(0).max(1);
    let said: Vec<String> = rows
        .iter()
        .map(|(seat, points)| format!("{seat} {points}"))
        .collect();
    let mut s = String::with_capacity(1024);
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="vote-chart" role="img" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="sans-serif" font-size="13" aria-labelledby="vote-title-{id} vote-desc-{id}"><title id="vote-title-{id}">The blind vote of {name}, Borda points</title><desc id="vote-desc-{id}">{desc}</desc>"#,
        id = xml(&label.replace(|c: char| !c.is_ascii_alphanumeric(), "-")),
        name = xml(label),
        desc = xml(&said.join(", ")),
    );
    for (i, (seat, points)) in rows.iter().enumerate() {
        let y = top + row * i as f64;
        let bar = (w - gutter - 40.0) * f64::from(*points) / f64::from(most);
        text(
            &mut s,
            gutter - 8.0,
            y + 16.0,
            "end",
            "#222",
            &short(seat, 20),
        );
        let _ = write!(
            s,
            r##"<rect x="{gutter}" y="{:.1}" width="{bar:.1}" height="{:.1}" fill="#4a6fa5"><title>{}</title></rect>"##,
            y + 4.0,
            row - 8.0,
            xml(&format!(
                "{seat}: {points} point{}",
                if *points == 1 { "" } else { "s" }
            ))
        );
        text(
            &mut s,
            gutter + bar + 6.0,
            y + 16.0,
            "start",
            "#222",
            &points.to_string(),
        );
    }
    s.push_str("</svg>");
    s
}

/// Where things go on the chart: its size, the plot's place (the levels' names in a gutter on
/// the left, the rounds' numbers under it, the legend under those), and a round's and a
/// position's place.
struct Frame {
    rounds: u32,
    w: f64,
    h: f64,
    /// The plot's edges.
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

/// A row of the legend.
const LEGEND_ROW: f64 = 22.0;
/// Where the legend starts under the plot: below the rounds' numbers.
const LEGEND_TOP: f64 = 42.0;

impl Frame {
    fn new(rounds: u32, seats: usize) -> Frame {
        let (w, top, plot_h) = (400.0, 32.0, 160.0);
        let bottom = top + plot_h;
        let rows = seats.div_ceil(2) as f64;
        Frame {
            rounds: rounds.max(1),
            w,
            // The numbers of the rounds, then the legend's rows.
            h: bottom + LEGEND_TOP + LEGEND_ROW * rows + 6.0,
            left: 88.0,
            right: w - 18.0,
            top,
            bottom,
        }
    }

    fn plot_w(&self) -> f64 {
        self.right - self.left
    }

    /// Across: the round (a single round in the middle).
    fn x(&self, round: u32) -> f64 {
        if self.rounds == 1 {
            self.left + self.plot_w() / 2.0
        } else {
            self.left + self.plot_w() * f64::from(round - 1) / f64::from(self.rounds - 1)
        }
    }

    /// Up: `v` from -1 (against, at the bottom) to 1 (for, at the top).
    fn level(&self, v: f64) -> f64 {
        self.top + (self.bottom - self.top) * (1.0 - v) / 2.0
    }

    /// Up: the stance times the confidence.
    fn y(&self, p: &Position) -> f64 {
        self.level(f64::from(p.stance.sign()) * p.confidence.as_f64())
    }

    /// The baseline of the rounds' numbers.
    fn rounds_y(&self) -> f64 {
        self.bottom + 28.0
    }

    /// Every how many rounds a number is written, so that numbers never touch.
    fn round_step(&self) -> u32 {
        if self.rounds < 2 {
            return 1;
        }
        let gap = self.plot_w() / f64::from(self.rounds - 1);
        let needed = text_width("00") + 8.0;
        (needed / gap).ceil().max(1.0) as u32
    }

    /// The middle of the left end of the `i`-th seat's legend entry: two columns.
    fn legend_at(&self, i: usize) -> (f64, f64) {
        let (col, row) = ((i % 2) as f64, (i / 2) as f64);
        (
            8.0 + col * self.w / 2.0,
            self.bottom + LEGEND_TOP + LEGEND_ROW * row + LEGEND_ROW / 2.0,
        )
    }

    /// How many characters of a seat's name its legend entry holds.
    fn legend_chars(&self) -> usize {
        // Half the width, less the sample of the line and the gaps.
        ((self.w / 2.0 - 8.0 - 36.0 - 8.0) / (CHAR_EM * TEXT)).floor() as usize
    }
}

/// The `<svg>` element's opening, with the chart's title and its description in words.
fn open_svg(s: &mut String, chart: &Chart, label: &str, frame: &Frame) {
    let (w, h) = (frame.w, frame.h);
    let id = format!(
        "anvil-chart-{:x}",
        label
            .bytes()
            .fold(0xcbf29ce484222325u64, |h, b| (h ^ u64::from(b))
                .wrapping_mul(0x100000001b3))
    );
    let desc = describe(chart);
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="anvil-chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="{TEXT}" role="img" aria-labelledby="{id}-t {id}-d" data-series="{}"><title id="{id}-t">Positions over the rounds: {}</title><desc id="{id}-d">{}</desc>"#,
        chart.series.len(),
        xml(label),
        xml(&desc)
    );
}

/// `text` at (`x`, `y`), anchored `anchor` (`start`, `middle`, `end`).
fn text(s: &mut String, x: f64, y: f64, anchor: &str, fill: &str, words: &str) {
    let _ = write!(
        s,
        r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" fill="{fill}">{}</text>"#,
        xml(words)
    );
}

/// The three stance levels (for, mixed or undecided, against) and the rounds under them.
fn axes(s: &mut String, frame: &Frame) {
    let (left, right) = (frame.left, frame.right);
    let gutter = left - 8.0;
    for v in [1.0, 0.0, -1.0] {
        let yy = frame.level(v);
        let _ = write!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{right:.1}" y2="{yy:.1}" stroke="#bbb" stroke-width="1"{}/>"##,
            if v == 0.0 {
                ""
            } else {
                r#" stroke-dasharray="2 2""#
            },
        );
    }
    text(s, gutter, frame.level(1.0) + 5.0, "end", "#333", "for");
    // Two lines a font's whole height apart (1.2 em), either side of the middle line.
    text(s, gutter, frame.level(0.0) - 3.0, "end", "#333", "mixed");
    text(
        s,
        gutter,
        frame.level(0.0) + 14.0,
        "end",
        "#333",
        "undecided",
    );
    text(s, gutter, frame.level(-1.0) + 5.0, "end", "#333", "against");
    let yy = frame.rounds_y();
    text(s, gutter, yy, "end", "#333", "round");
    let step = frame.round_step();
    for r in (1..=frame.rounds).step_by(step as usize) {
        text(s, frame.x(r), yy, "middle", "#333", &r.to_string());
    }
}

/// The dashed rule after the round where the positions held steady, if they did, named above
/// the plot (moved in from an edge so it is never cut).
fn convergence(s: &mut String, chart: &Chart, frame: &Frame) {
    let Some((round, acted)) = chart.converged else {
        return;
    };
    let (xx, top, bottom) = (frame.x(round), frame.top, frame.bottom);
    let name = if acted {
        "converged · stopped"
    } else {
        "converged"
    };
    let half = text_width(name) / 2.0;
    let at = xx.min(frame.w - 2.0 - half).max(2.0 + half);
    let _ = write!(
        s,
        r##"<g class="convergence"><title>{}</title><line x1="{xx:.1}" y1="{top}" x2="{xx:.1}" y2="{bottom:.1}" stroke="#000" stroke-width="1.5" stroke-dasharray="6 3"/>"##,
        xml(&stop_words(round, acted)),
    );
    text(s, at, top - 12.0, "middle", "#000", name);
    s.push_str("</g>");
}

/// ` stroke-dasharray="…"` for a dash pattern, nothing for a solid line.
fn dash_attribute(dash: &str) -> String {
    if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    }
}

/// The `i`-th seat's line and its points, a ring where it changed stance. Its group is left
/// open for the legend.
fn seat_series(s: &mut String, i: usize, series: &Series, frame: &Frame) {
    let colour = COLOURS[i % COLOURS.len()];
    let dash = DASHES[i % DASHES.len()];
    let stated: Vec<(u32, &Position)> = series
        .points
        .iter()
        .filter_map(|p| p.position.as_ref().map(|q| (p.round, q)))
        .collect();
    let trail: Vec<String> = stated
        .iter()
        .map(|(r, p)| format!("round {r}: {}", p.short()))
        .collect();
    let _ = write!(
        s,
        r#"<g class="series" data-seat="{}" aria-label="{}"><title>{}: {}</title>"#,
        xml(&series.seat),
        xml(&format!("{}: {}", series.seat, trail.join(", "))),
        xml(&series.seat),
        xml(&trail.join(", "))
    );
    let points: Vec<String> = stated
        .iter()
        .map(|(r, p)| format!("{:.1},{:.1}", frame.x(*r), frame.y(p)))
        .collect();
    let _ = write!(
        s,
        r#"<polyline fill="none" stroke="{colour}" stroke-width="2.5" points="{}"{}/>"#,
        points.join(" "),
        dash_attribute(dash)
    );
    let mut prev: Option<Stance> = None;
    for (r, p) in &stated {
        let (xx, yy) = (frame.x(*r), frame.y(p));
        let changed = prev.is_some_and(|s| s != p.stance);
        prev = Some(p.stance);
        let _ = write!(
            s,
            r#"<g class="point{}"><title>{} · round {r}: {}{} — {}</title>{}"#,
            if changed { " changed" } else { "" },
            xml(&series.seat),
            p.short(),
            if changed { " (changed stance)" } else { "" },
            xml(&p.claim),
            marker(i, xx, yy, colour, true)
        );
        if changed {
            let _ = write!(
                s,
                r#"<circle cx="{xx:.1}" cy="{yy:.1}" r="10" fill="none" stroke="{colour}" stroke-width="1.5"/>"#
            );
        }
        s.push_str("</g>");
    }
}

/// The `i`-th seat's legend entry under the plot: a sample of its line with its marker, and its
/// name; closes the seat's group.
fn legend(s: &mut String, i: usize, series: &Series, frame: &Frame) {
    let colour = COLOURS[i % COLOURS.len()];
    let dash = DASHES[i % DASHES.len()];
    let (lx, ly) = frame.legend_at(i);
    let _ = write!(
        s,
        r##"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="2.5"{}/>{}"##,
        lx + 30.0,
        dash_attribute(dash),
        marker(i, lx + 15.0, ly, colour, true),
    );
    text(
        s,
        lx + 36.0,
        ly + 5.0,
        "start",
        "#000",
        &short(&series.seat, frame.legend_chars()),
    );
    s.push_str("</g>");
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut t: String = text.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// The chart in words, for screen readers.
fn describe(chart: &Chart) -> String {
    let mut parts: Vec<String> = chart
        .series
        .iter()
        .map(|s| {
            let trail: Vec<String> = s
                .points
                .iter()
                .map(|p| match &p.position {
                    Some(q) => format!("round {} {}", p.round, q.short()),
                    None => format!("round {} no position", p.round),
                })
                .collect();
            format!("{}: {}", s.seat, trail.join(", "))
        })
        .collect();
    if let Some((r, acted)) = chart.converged {
        parts.push(format!("positions steady: {}", stop_words(r, acted)));
    }
    if let Some(c) = chart.consensus {
        parts.push(format!("consensus {c}"));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> Chart {
        let p = |s, c: u8| {
            Some(Position {
                stance: s,
                confidence: Share(c),
                claim: "a <claim> & \"more\"".into(),
            })
        };
        Chart {
            series: vec![
                Series {
                    seat: "advocate".into(),
                    points: vec![
                        Point {
                            round: 1,
                            position: p(Stance::For, 80),
                        },
                        Point {
                            round: 2,
                            position: p(Stance::For, 75),
                        },
                    ],
                },
                Series {
                    seat: "critic".into(),
                    points: vec![
                        Point {
                            round: 1,
                            position: p(Stance::Against, 70),
                        },
                        Point {
                            round: 2,
                            position: p(Stance::Mixed, 60),
                        },
                    ],
                },
            ],
            rounds: 2,
            converged: Some((2, false)),
            consensus: Some(Share(70)),
        }
    }

    #[test]
    fn movement_lines_name_each_seat_and_flag_a_change() {
        let full = chart();
        let mut first = full.clone();
        for s in &mut first.series {
            s.points.truncate(1);
        }
        assert_eq!(
            movement(&first, &full),
            [
                "advocate: for 0.8 → for 0.75",
                "critic: against 0.7 → mixed 0.6 (changed stance)"
            ]
        );
    }

    #[test]
    fn convergence_is_said_only_when_stopping_would_have_saved_something() {
        let meta = |next: &str, stop: bool| Meta {
            converged: Some(2),
            converge_stop: stop,
            next: Some(next.into()),
            ..Meta::default()
        };
        assert_eq!(steady(&meta("advocate", false)), Some((2, false)));
        assert_eq!(steady(&meta("interactive-pause", false)), Some((2, false)));
        // Round 2 of a two-round debate: the synthesis came next anyway.
        assert_eq!(steady(&meta("synthesizer", false)), None);
        assert_eq!(steady(&meta("done", false)), None);
        assert_eq!(steady(&meta("synthesizer", true)), Some((2, true)));
        assert_eq!(steady(&Meta::default()), None);
        assert_eq!(stop_words(2, false), "would have stopped after round 2");
        assert_eq!(stop_words(3, true), "stopped after round 3");
    }

    /// Each `<text>` of an SVG as the box the layout leaves it: (left, top, right, bottom).
    fn text_boxes(svg: &str) -> Vec<(f64, f64, f64, f64, String)> {
        let attr = |tag: &str, name: &str| -> String {
            let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            tag[at..at + tag[at..].find('"').unwrap()].to_owned()
        };
        svg.split("<text ")
            .skip(1)
            .map(|rest| {
                let (tag, body) = rest.split_once('>').unwrap();
                let tag = format!(" {tag}");
                let words = body.split("</text>").next().unwrap();
                let words = words.replace("&amp;", "&").replace("&lt;", "<");
                let (x, y): (f64, f64) = (
                    attr(&tag, "x").parse().unwrap(),
                    attr(&tag, "y").parse().unwrap(),
                );
                let w = text_width(&words);
                let left = match attr(&tag, "text-anchor").as_str() {
                    "end" => x - w,
                    "middle" => x - w / 2.0,
                    _ => x,
                };
                // A line of text: its ascent above the baseline, its descent below.
                (left, y - TEXT * 0.8, left + w, y + TEXT * 0.25, words)
            })
            .collect()
    }

    #[test]
    fn no_word_of_the_chart_is_cut_or_covers_another() {
        let seats = [
            "advocate",
            "critic",
            "Engineering Team",
            "Product/UX",
            "Business/Management",
            "a seat with a very long name indeed",
        ];
        for rounds in 1..=16 {
            for n in 0..=seats.len() {
                let series: Vec<Series> = seats[..n]
                    .iter()
                    .map(|seat| Series {
                        seat: (*seat).into(),
                        points: (1..=rounds)
                            .map(|round| Point {
                                round,
                                position: Some(Position {
                                    stance: Stance::For,
                                    confidence: Share(100),
                                    claim: String::new(),
                                }),
                            })
                            .collect(),
                    })
                    .collect();
                for converged in [
                    None,
                    Some((1, true)),
                    Some((rounds, false)),
                    Some((rounds, true)),
                ] {
                    let chart = Chart {
                        series: series.clone(),
                        rounds,
                        converged,
                        consensus: None,
                    };
                    let svg = svg(&chart, "main");
                    let vb: Vec<f64> = svg
                        .split("viewBox=\"")
                        .nth(1)
                        .unwrap()
                        .split('"')
                        .next()
                        .unwrap()
                        .split(' ')
                        .map(|v| v.parse().unwrap())
                        .collect();
                    let boxes = text_boxes(&svg);
                    for (l, t, r, b, words) in &boxes {
                        assert!(
                            *l >= 0.0 && *r <= vb[2] && *t >= 0.0 && *b <= vb[3],
                            "{words:?} is cut: {rounds} rounds, {n} seats, {converged:?}"
                        );
                    }
                    for (i, a) in boxes.iter().enumerate() {
                        for b in &boxes[i + 1..] {
                            let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
                            assert!(
                                apart,
                                "{:?} covers {:?}: {rounds} rounds, {n} seats, {converged:?}",
                                a.4, b.4
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_svg_has_a_series_per_seat_labelled_and_escaped() {
        let svg = svg(&chart(), "main <x>");
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches(r#"class="series""#).count(), 2);
        assert!(svg.contains(r#"stroke-dasharray="8 4""#));
        assert!(svg.contains("<title id="));
        assert!(svg.contains("class=\"point changed\""));
        assert!(svg.contains("would have stopped after round 2"));
        assert!(svg.contains("main &lt;x&gt;") && !svg.contains("<claim>"));
    }
}
