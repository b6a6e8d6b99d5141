//! What cleaning a phase of credentials costs the Stop hook, which is a fresh process at every
//! phase: every sample runs in a new child process, which times its own first clean of the
//! text (so the rules are compiled inside the measurement, as in the hook).
//!
//! `cargo bench --bench secrets` prints medians for three 7.5 KB phases (ordinary prose; prose
//! about keys, tokens, passwords and URLs, which wakes the parsers of assignments and URLs; and
//! one that holds six credentials of different families), each cleaned two ways:
//! - anvil's detector (`anvil_core::model::secrets`): a keyword prefilter, then only the rules
//!   whose keywords are in the text, their patterns compiled on first use (`regex-lite`), and
//!   what prose about security says often (assignments to a credential's name, URLs' user
//!   parts, `Bearer`, `Authorization: Basic`) parsed by code;
//! - the alternative: every pattern compiled up front into a `regex::RegexSet` at process
//!   start (with regular expressions for assignments and URLs in place of the parsers), the set
//!   run over the text, and the patterns that matched run again for their positions.
//!
//! It then times the detector's first step alone, which rules a phase wakes, on two of them,
//! three ways: anvil's one pass over the text (`secrets::keywords`), a `contains` per keyword,
//! and an `aho-corasick` automaton of the keywords, built in the process as the hook would
//! have to build it. The one pass is hand-written because of these numbers.
//!
//! (Linking the full `regex` crate into the hook would also cost every process start, the
//! no-debate path included, about 100 µs on a static build: its Unicode tables are 1.6 MB to
//! map and relocate. `regex-lite` adds a few µs.)
//!
//! The hook's whole mid-debate phase costs about 3 ms (`cargo bench --bench hook`); the
//! detector's share is what this bench shows.

use std::process::Command;
use std::time::{Duration, Instant};

const SAMPLES: usize = 101;
const CHILD: &str = "--clean-in-a-fresh-process";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, how, file] = args.as_slice()
        && flag == CHILD
    {
        child(how, file);
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    let texts = [
        ("ordinary prose", ordinary()),
        ("prose about keys and tokens", security_prose()),
        ("six credentials", with_credentials()),
    ];
    println!(
        "cleaning a 7.5 KB phase of credentials, first call in a fresh process, median of {SAMPLES}"
    );
    for (name, text) in texts {
        let file = work.path().join(format!("{}.txt", name.replace(' ', "-")));
        std::fs::write(&file, &text).unwrap();
        let [ours, eager] = side_by_side([
            &mut || in_child("ours", file.to_str().unwrap()),
            &mut || in_child("eager", file.to_str().unwrap()),
        ]);
        println!(
            "  {name:<28} anvil's detector {:>8.1} µs   every rule compiled up front {:>8.1} µs  ({:.1}x)",
            us(ours),
            us(eager),
            eager.as_secs_f64() / ours.as_secs_f64()
        );
    }
    // Which rules a text wakes: the detector's first step, on every text it cleans.
    println!(
        "finding the rules' keywords in a 7.5 KB phase, first call in a fresh process, median of {SAMPLES}"
    );
    for (name, text) in [
        ("ordinary prose", ordinary()),
        ("prose about keys and tokens", security_prose()),
    ] {
        let file = work.path().join(format!("{}.txt", name.replace(' ', "-")));
        std::fs::write(&file, &text).unwrap();
        let [pass, contains, aho] = side_by_side([
            &mut || in_child("pass", file.to_str().unwrap()),
            &mut || in_child("contains", file.to_str().unwrap()),
            &mut || in_child("aho", file.to_str().unwrap()),
        ]);
        println!(
            "  {name:<28} one pass (anvil's) {:>7.1} µs   a `contains` per keyword {:>7.1} µs ({:.1}x)   \
             aho-corasick, built and run {:>7.1} µs ({:.1}x)",
            us(pass),
            us(contains),
            contains.as_secs_f64() / pass.as_secs_f64(),
            us(aho),
            aho.as_secs_f64() / pass.as_secs_f64()
        );
    }
}

/// The child: one clean of the text in `file`, timed from before the first rule is touched;
/// prints the nanoseconds it took and what it found, so both ways can be checked to agree.
fn child(how: &str, file: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let start = Instant::now();
    let found = match how {
        "ours" => anvil_core::model::secrets::redact(&text).1.len(),
        "pass" => anvil_core::model::secrets::keywords::rules_woken(&text),
        "contains" => keywords_one_by_one(&text),
        "aho" => keywords_by_automaton(&text),
        _ => eager_alternative(&text),
    };
    let elapsed = start.elapsed();
    println!("{} {found}", elapsed.as_nanos());
}

/// The keywords found one by one, each with the standard library's `contains` (in the lower
/// case for the keywords without a capital, as the detector matches them): how many occur.
fn keywords_one_by_one(text: &str) -> usize {
    let lower = text.to_ascii_lowercase();
    anvil_core::model::secrets::keywords::all()
        .filter(|k| {
            if k.bytes().any(|b| b.is_ascii_uppercase()) {
                text.contains(k)
            } else {
                lower.contains(k)
            }
        })
        .count()
}

/// The keywords found by one `aho-corasick` automaton, built in the process as the hook would
/// have to: how many occur.
fn keywords_by_automaton(text: &str) -> usize {
    let keywords: Vec<&str> = anvil_core::model::secrets::keywords::all().collect();
    let automaton = aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(&keywords)
        .expect("the automaton builds");
    let mut found = vec![false; keywords.len()];
    for m in automaton.find_overlapping_iter(text) {
        found[m.pattern().as_usize()] = true;
    }
    found.iter().filter(|f| **f).count()
}

/// The alternative: a `RegexSet` of every rule, built at process start, then the matching
/// rules run again for their positions.
fn eager_alternative(text: &str) -> usize {
    let mut patterns: Vec<&str> = anvil_core::model::secrets::patterns().collect();
    // Regular expressions in place of the two parsers.
    patterns.push(
        r#"(?:^|[^A-Za-z0-9_.-])([A-Za-z0-9_.-]*(?:[Pp]assword|PASSWORD|[Ss]ecret|SECRET|[Tt]oken|TOKEN|[Kk]ey|KEY|[Pp]wd|PWD|[Cc]redentials?|CREDENTIALS?))["'\]`*]*[ \t]*(?::=|=>|=|:)[ \t]*["'`]?([A-Za-z0-9_./+=~!@#$%^&*-]{8,})"#,
    );
    patterns.push(
        r"[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9._%~!$&'*+,;=-]*):([A-Za-z0-9._%~!$&'*+,;=-]+)@",
    );
    let set = regex::bytes::RegexSetBuilder::new(&patterns)
        .unicode(false)
        .build()
        .expect("the set compiles");
    let mut found = 0;
    for i in set.matches(text.as_bytes()).iter() {
        let one = regex::bytes::RegexBuilder::new(patterns[i])
            .unicode(false)
            .build()
            .expect("the pattern compiles");
        found += one.find_iter(text.as_bytes()).count();
    }
    found
}

fn in_child(how: &str, file: &str) -> Duration {
    let me = std::env::current_exe().expect("the bench's own path");
    let out = Command::new(me)
        .args([CHILD, how, file])
        .output()
        .expect("the child");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8(out.stdout).unwrap();
    let nanos: u64 = said.split_whitespace().next().unwrap().parse().unwrap();
    Duration::from_nanos(nanos)
}

/// Medians of several measurements whose samples alternate.
fn side_by_side<const N: usize>(mut runs: [&mut dyn FnMut() -> Duration; N]) -> [Duration; N] {
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(SAMPLES));
    for _ in 0..SAMPLES {
        for (run, times) in runs.iter_mut().zip(times.iter_mut()) {
            times.push(run());
        }
    }
    times.map(|mut t| {
        t.sort();
        t[SAMPLES / 2]
    })
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn fill(sentences: &[&str]) -> String {
    let mut text = String::from("## ADVOCATE round 3\n\n");
    for s in sentences.iter().cycle() {
        if text.len() >= 7_500 {
            break;
        }
        text.push_str(s);
        text.push(' ');
    }
    text
}

fn ordinary() -> String {
    fill(&["The argument turns on migration cost, operational risk and the team's experience."])
}

fn security_prose() -> String {
    fill(&[
        "The key point: API keys and tokens must be rotated, and the password policy enforced.",
        "Store the secret in the vault; the service reads `api_key: str = Field(...)` at start.",
        "Clients send `Authorization: Bearer <token>` to https://api.example.com/v1/charges.",
        "CSRF_TOKEN = generate_csrf_token() stays; PRIMARY_KEY: customer_id_column too.",
        "See https://docs.example.com/auth and postgres://user:password@localhost/app.",
    ])
}

fn with_credentials() -> String {
    let mut text = security_prose();
    text.truncate(6_500);
    let body = "q7W2e9R4t1Y6u3I8o5P0a2S7d4F9g6H1j8K3l5Z0x".repeat(3);
    text.push_str(&format!(
        "\nghp_{}\nsk_live_{}\nDB_PASSWORD={}\npostgres://app:{}@db/prod\n\
         Authorization: Bearer {}\n-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        &body[..36],
        &body[..24],
        &body[..14],
        &body[..12],
        &body[..32],
        &body[..64],
    ));
    text
}
