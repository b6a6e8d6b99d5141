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

/// The chart of `entries` (a line's history, or its first part up to some moment).
pub fn chart(entries: &[Entry]) -> Chart {
    let mut out = Chart::default();
    for e in entries {
        let Some(role) = e.role else { continue };
        if e.meta.converged.is_some() && out.converged.is_none() {
            out.converged = e.meta.converged.map(|r| (r, e.meta.converge_stop));
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
    let mut out = Chart {
        converged: state.converged.map(|c| (c.round, c.acted)),
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

/// Dash patterns and marker shapes by series: the lines tell apart without colour.
const DASHES: [&str; 6] = ["", "8 4", "2 3", "10 3 2 3", "4 4", "1 5"];
const COLOURS: [&str; 6] = [
    "#1b6ca8", "#c0392b", "#2e7d32", "#8e44ad", "#b9770e", "#455a64",
];

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
/// its own dash pattern and marker shape, a hollow-then-filled ring where a seat changed
/// stance, and a dashed vertical rule at the convergence. Labelled for screen readers (`role`,
/// `aria-labelledby`, `<title>` on the chart, each series and each point) and readable in
/// black and white. `label` names the chart (a line's name).
pub fn svg(chart: &Chart, label: &str) -> String {
    let frame = Frame::new(chart.rounds);
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

/// Where things go on the chart: its size, the plot's margins (the levels' names on the left,
/// the legend on the right), and a round's and a position's place.
struct Frame {
    rounds: u32,
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    fn new(rounds: u32) -> Frame {
        Frame {
            rounds: rounds.max(1),
            w: 640.0,
            h: 300.0,
            left: 112.0,
            right: 150.0,
            top: 28.0,
            bottom: 40.0,
        }
    }

    fn plot_w(&self) -> f64 {
        self.w - self.left - self.right
    }

    fn plot_h(&self) -> f64 {
        self.h - self.top - self.bottom
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
        self.top + self.plot_h() * (1.0 - v) / 2.0
    }

    /// Up: the stance times the confidence.
    fn y(&self, p: &Position) -> f64 {
        self.level(f64::from(p.stance.sign()) * p.confidence.as_f64())
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
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="anvil-chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-labelledby="{id}-t {id}-d" data-series="{}"><title id="{id}-t">Positions over the rounds: {}</title><desc id="{id}-d">{}</desc>"#,
        chart.series.len(),
        xml(label),
        xml(&desc)
    );
}

/// The three stance levels (for, mixed or undecided, against) and the rounds below them.
fn axes(s: &mut String, frame: &Frame) {
    let (left, plot_w) = (frame.left, frame.plot_w());
    for (v, name) in [
        (1.0, "for 1.0"),
        (0.0, "mixed / undecided"),
        (-1.0, "against 1.0"),
    ] {
        let yy = frame.level(v);
        let _ = write!(
            s,
            r##"<line x1="{left}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#bbb" stroke-width="1"{}/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#333">{name}</text>"##,
            left + plot_w,
            if v == 0.0 {
                ""
            } else {
                r#" stroke-dasharray="2 2""#
            },
            left - 6.0,
            yy + 4.0
        );
    }
    for r in 1..=frame.rounds {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#333">round {r}</text>"##,
            frame.x(r),
            frame.h - frame.bottom + 18.0
        );
    }
}

/// The dashed rule after the round where the positions held steady, if they did.
fn convergence(s: &mut String, chart: &Chart, frame: &Frame) {
    let Some((round, acted)) = chart.converged else {
        return;
    };
    let (xx, top) = (frame.x(round), frame.top);
    let what = if acted {
        format!("stopped: positions steady after round {round}")
    } else {
        format!("would have stopped after round {round}")
    };
    let _ = write!(
        s,
        r##"<g class="convergence"><title>{}</title><line x1="{xx:.1}" y1="{top}" x2="{xx:.1}" y2="{:.1}" stroke="#000" stroke-width="1.5" stroke-dasharray="6 3"/><text x="{xx:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#000">{}</text></g>"##,
        xml(&what),
        top + frame.plot_h(),
        top - 10.0,
        if acted {
            "converged · stopped"
        } else {
            "converged"
        }
    );
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

/// The `i`-th seat's legend: a sample of its line with its marker, and its name; closes the
/// seat's group.
fn legend(s: &mut String, i: usize, series: &Series, frame: &Frame) {
    let colour = COLOURS[i % COLOURS.len()];
    let dash = DASHES[i % DASHES.len()];
    let ly = frame.top + 8.0 + 22.0 * i as f64;
    let lx = frame.w - frame.right + 14.0;
    let _ = write!(
        s,
        r##"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="2.5"{}/>{}<text x="{:.1}" y="{:.1}" font-size="11" fill="#000">{}</text></g>"##,
        lx + 30.0,
        dash_attribute(dash),
        marker(i, lx + 15.0, ly, colour, true),
        lx + 36.0,
        ly + 4.0,
        xml(&short(&series.seat, 16))
    );
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut t: String = text.chars().take(max - 1).collect();
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
        parts.push(if acted {
            format!(
                "positions stopped moving after round {r}, and the debate went to its synthesis"
            )
        } else {
            format!("positions stopped moving after round {r}")
        });
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
