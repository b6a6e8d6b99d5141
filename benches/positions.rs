//! Speed of positions (issue "Positions", its Speed section).
//!
//! `cargo bench --bench positions` prints medians for:
//! 1. the marker parser alone (`model::markers::scan`, what the hook runs on every phase), in
//!    process: on a 7.5 KB phase that ends with a position and two open points, and on 5 MB
//!    texts of three shapes: prose with the tags at its end; prose with a tag, an open point
//!    and inline code in every paragraph; and a hostile one, 5 MB of `<anvil-open>` tags and a
//!    single closing tag at its end. (Its share of a whole mid-debate hook is measured by `--bench hook`.)
//! 2. the web room's debate page of a 10-round debate with three lines (main and two branches,
//!    every phase with a position and open points, every line synthesized), served by the real
//!    `anvil serve` on 127.0.0.1: the whole request (record read, three lines' views and
//!    charts, template) and, within it, the template's render (its `Server-Timing`); beside
//!    it the charts alone (the three lines' `chart` and `svg`), in process. Target: < 100 ms.
//!
//! 3. a phase for people (issue "The first hour", its Speed section: a 400-word phase under
//!    5 ms), in process: a 400-word phase (a heading, a list, a fenced block quoting a tag, a
//!    position and two open points) through `markers::readable`, the one renderer of a phase
//!    for people; the same phase as a transcript section (`transcript::section`: words,
//!    headings nested under the phase's), what the hook appends at every stop; and the whole
//!    report of a 10-round debate (21 phases) made from the record and rendered as its HTML
//!    page with the chart (`Report::of_line` + `html`), what the hook writes at the end; and
//!    the renderer on measurement 1's three 5 MB texts.
//!
//! `cargo bench --bench positions -- prose` runs measurement 3 alone.
//!
//! The debates are built in process through the library calls the Stop hook makes; branches
//! through the `anvil branch` command.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anvil_core::home::{Home, LineRef};
use anvil_core::model::markers;

const ANVIL: &str = env!("CARGO_BIN_EXE_anvil");
const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";
const MB5: usize = 5 * 1024 * 1024;

fn main() {
    if std::env::args().any(|a| a == "prose") {
        return people();
    }
    parser();
    page();
    people();
}

/// Measurement 1.
fn parser() {
    let phase = format!(
        "{}\n\n{}",
        prose(7_500),
        tags(
            "against",
            "0.7",
            "Billing's write path is not the bottleneck"
        )
    );
    let small = markers::scan(&phase);
    assert!(small.position.is_some() && small.open.len() == 2);
    let phase_time = time(2_001, || markers::scan(&phase));
    println!(
        "marker parser, in process (median):\n  7.5 KB phase with a position and 2 open points   {:>9.3} ms",
        ms(phase_time)
    );

    for (what, text) in &big_texts() {
        let found = markers::scan(text);
        let t = time(5, || markers::scan(text));
        println!(
            "  {what} {:>9.1} ms  (position: {}, open points: {})",
            ms(t),
            found.position.is_some(),
            found.open.len()
        );
    }
}

/// Three 5 MB texts: prose with the tags at its end; a tag and inline code in every paragraph;
/// and a hostile one, opening tags and a single closing tag at its end.
fn big_texts() -> [(&'static str, String); 3] {
    let tail = format!(
        "{}\n\n{}",
        prose(MB5),
        tags("for", "0.8", "Move billing to DynamoDB")
    );
    let mut dense = String::with_capacity(MB5 + 4096);
    let mut i = 0;
    while dense.len() < MB5 {
        dense.push_str(&format!(
            "Paragraph {i}: the cost of `reads` against the cost of writes, again and again.\n\n{}\n\n",
            tags("mixed", "0.6", &format!("claim {i}"))
        ));
        i += 1;
    }
    let unit = "<anvil-open>never closed ";
    let hostile = format!("{}</anvil-open>", unit.repeat(MB5 / unit.len()));
    [
        ("5 MB of prose, the tags at its end            ", tail),
        ("5 MB, a tag and inline code in each paragraph ", dense),
        ("5 MB of opening tags, one close at the end   ", hostile),
    ]
}

/// Measurement 2.
fn page() {
    let work = tempfile::tempdir().expect("temp dir");
    let project = work.path();
    let home = Home::init(project).expect("init");
    let main = debate(&home);
    // Two branches, from round 3 and round 6, each argued to the end with its own positions.
    let mut lines = vec![main.clone()];
    for (from, name) in [(3, "cost"), (6, "risk")] {
        branch(project, &main.debate, from, name);
        let line = LineRef::new(&main.debate, name);
        for round in from + 1..=10 {
            turn(
                &home,
                &line,
                "advocate",
                round,
                ("for", 0.6 + 0.02 * round as f64),
            );
            turn(&home, &line, "critic", round, ("against", 0.55));
        }
        synthesis(&home, &line);
        lines.push(line);
    }
    let record = anvil_core::record::store::Record::open(&home.record_dir()).expect("record");
    let histories =
        anvil_core::review::history::load_debate(&record, &main.debate).expect("histories");
    assert_eq!(histories.len(), 3, "three lines");
    let charts = time(201, || {
        histories
            .iter()
            .map(|h| {
                let chart = anvil_core::review::positions::chart(&h.entries);
                anvil_core::review::positions::svg(&chart, &h.line.line).len()
            })
            .sum::<usize>()
    });

    let mut child = Command::new(ANVIL)
        .arg("serve")
        .current_dir(project)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start anvil serve");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("the URL");
    let port: u16 = url["http://127.0.0.1:".len()..]
        .split('/')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let token = url.trim().split("token=").nth(1).expect("token").to_owned();
    let path = format!("/debates/{}", main.debate);
    let (mut walls, mut renders) = (Vec::new(), Vec::new());
    let mut bytes = 0;
    for _ in 0..51 {
        let began = Instant::now();
        let (status, head, body) = get(port, &token, &path);
        walls.push(began.elapsed());
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("anvil-chart"), "the page draws the chart");
        assert!(body.contains("Round 10"), "the page shows round 10");
        bytes = body.len();
        let dur: f64 = head
            .lines()
            .find_map(|l| l.strip_prefix("server-timing: render;dur="))
            .and_then(|d| d.trim().parse().ok())
            .expect("Server-Timing");
        renders.push(Duration::from_secs_f64(dur / 1000.0));
    }
    let _ = child.kill();
    let _ = child.wait();
    let whole = median(&mut walls);
    println!(
        "debate page, 10 rounds, 3 lines, charted (median of 51, target < 100 ms):\n  \
         whole request {:>7.2} ms  (max {:.2} ms; {} KB of HTML)\n  \
         of which the template's render {:>7.2} ms\n  \
         the three lines' charts alone (chart + svg) {:>7.3} ms",
        ms(whole),
        ms(*walls.iter().max().unwrap()),
        bytes / 1024,
        ms(median(&mut renders)),
        ms(charts)
    );
}

/// Measurement 3.
fn people() {
    let phase = four_hundred_words();
    let words = phase.split_whitespace().count();
    let shown = markers::readable(&phase);
    assert!(
        shown.contains("**Position:** against 0.7") && shown.contains("```xml\n<anvil-open>"),
        "{shown}"
    );
    let finished = anvil_core::model::machine::Finished {
        role: anvil_core::model::state::Role::Critic,
        round: 2,
        voice: None,
        markers: markers::scan(&phase),
        steering: Vec::new(),
    };
    let readable = time(2_001, || markers::readable(&phase).len());
    let section = time(2_001, || {
        anvil_core::model::transcript::section(&finished, &phase, None).len()
    });

    let work = tempfile::tempdir().expect("temp dir");
    let home = Home::init(work.path()).expect("init");
    let line = debate(&home);
    let record = anvil_core::record::store::Record::open(&home.record_dir()).expect("record");
    let history = anvil_core::review::history::LineHistory::load(&record, &line).expect("history");
    let state = anvil_core::review::history::state_at(&record, history.tip).expect("state");
    let page = anvil_core::review::report::Report::of_line(&record, &history, &state)
        .expect("report")
        .html();
    assert!(page.contains("anvil-chart") && !page.contains("&lt;anvil-"));
    let report = time(51, || {
        anvil_core::review::report::Report::of_line(&record, &history, &state)
            .expect("report")
            .html()
            .len()
    });
    let big: Vec<(&str, f64)> = big_texts()
        .iter()
        .map(|(what, text)| {
            let shown = markers::readable(text);
            assert!(markers::scan(&shown) == markers::Markers::default());
            (*what, ms(time(5, || markers::readable(text).len())))
        })
        .collect();
    println!(
        "a phase for people (median, in process; target: a 400-word phase under 5 ms):\n  \
         {words}-word phase ({} KB), a position, 2 open points: markers::readable   {:>8.3} ms\n  \
         the same as a transcript section (words, headings nested)      {:>8.3} ms\n  \
         report of a 10-round debate ({} phases) from the record, HTML + chart {:>8.3} ms  ({} KB)",
        phase.len() / 1024,
        ms(readable),
        ms(section),
        history.entries.iter().filter(|e| e.role.is_some()).count(),
        ms(report),
        page.len() / 1024
    );
    for (what, t) in big {
        println!("  markers::readable, {what} {t:>9.1} ms");
    }
}

/// About 400 words as a debater writes them: a heading, paragraphs, a list, a fenced block
/// that quotes a tag (left as it is), a position and two open points.
fn four_hundred_words() -> String {
    let mut text = String::from("## Why the write path is not the bottleneck\n\n");
    text.push_str(&prose(1_100));
    text.push_str(
        "\n\n- replicas take the reads\n- the ledger keeps its transactions\n\
         - the migration waits a year\n\n```xml\n<anvil-open>quoted, not a point</anvil-open>\n```\n\n",
    );
    text.push_str(&prose(1_200));
    text.push_str("\n\n");
    text.push_str(&tags(
        "against",
        "0.7",
        "Billing's write path is not the bottleneck",
    ));
    text
}

/// A 10-round debate whose seats state positions that move (the critic softens, then turns
/// mixed in round 5), with an open point from each, synthesized.
fn debate(home: &Home) -> LineRef {
    let setup = anvil_core::model::options::Options {
        question: "Should billing move to DynamoDB?".to_owned(),
        rounds: Some(10),
        ..Default::default()
    }
    .into_setup()
    .expect("setup");
    let started = anvil_core::line::start::start(home, setup, Some(SESSION)).expect("start");
    let line = started.line.clone();
    for round in 1..=10 {
        turn(home, &line, "advocate", round, ("for", 0.8));
        let critic = if round < 5 {
            ("against", 0.9 - 0.05 * round as f64)
        } else {
            ("mixed", 0.6)
        };
        turn(home, &line, "critic", round, critic);
    }
    synthesis(home, &line);
    line
}

fn turn(home: &Home, line: &LineRef, seat: &str, round: u32, (stance, confidence): (&str, f64)) {
    let text = format!(
        "## {seat} round {round}\n\n{}\n\n{}",
        prose(1_500),
        tags(
            stance,
            &format!("{confidence:.2}"),
            &format!("{seat} holds its ground in round {round}")
        )
    );
    anvil_core::line::stop::record_turn(home, line, SESSION, &text).expect("turn");
}

fn synthesis(home: &Home, line: &LineRef) {
    let text = format!(
        "## Synthesis\n\n{}\n\nO1 and O2 are carried as dissent.",
        prose(2_000)
    );
    anvil_core::line::stop::record_turn(home, line, SESSION, &text).expect("synthesis");
}

fn branch(project: &Path, debate: &str, round: u32, name: &str) {
    let out = Command::new(ANVIL)
        .args([
            "branch",
            "--from",
            &format!("{debate}@main:round-{round}"),
            "--steer",
            &format!("weigh the {name} first"),
            "--name",
            name,
            "--session",
            SESSION,
        ])
        .current_dir(project)
        .output()
        .expect("anvil branch");
    assert!(
        out.status.success(),
        "anvil branch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A position and two open points, as a debater ends a phase.
fn tags(stance: &str, confidence: &str, claim: &str) -> String {
    format!(
        "<anvil-position stance=\"{stance}\" confidence=\"{confidence}\">{claim}</anvil-position>\n\
         <anvil-open>Who pays for the second region?</anvil-open>\n\
         <anvil-open>No rollback plan for the cut-over</anvil-open>\n"
    )
}

fn prose(bytes: usize) -> String {
    let sentence =
        "The argument turns on migration cost, operational risk and the team's experience. ";
    let mut text = String::with_capacity(bytes + sentence.len());
    let mut n = 0;
    while text.len() < bytes {
        text.push_str(sentence);
        n += 1;
        if n % 6 == 0 {
            text.push_str("\n\n");
        }
    }
    text
}

/// The median of `n` runs of `f`.
fn time<T>(n: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let began = Instant::now();
            std::hint::black_box(f());
            began.elapsed()
        })
        .collect();
    median(&mut times)
}

fn get(port: u16, token: &str, path: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
