//! The one set of filters for snapshot tests: what changes from run to run or machine to machine
//! (debate ids, commit ids, dates, times, durations, temporary paths, ports, anvil's version)
//! becomes a stable placeholder, so that a snapshot shows what a person reads and nothing that
//! moves under it.
//!
//! ```ignore
//! let f = Filters::of(&project);
//! insta::assert_snapshot!("log_plain", f.redact(&run.stdout));
//! ```
//!
//! | what | looks like | becomes |
//! |---|---|---|
//! | a temporary path (the project's first) | `/tmp/anvil-project-x1Y2/.anvil` | `[project]/.anvil`, `[tmp]` |
//! | a timestamp | `2026-11-22T10:04:00Z` | `[timestamp]` |
//! | a debate id | `20261122-rust-billing-3f2a` | `[debate:rust-billing]` |
//! | a commit id of the record, full or abbreviated | `3f2a9c1` | `[commit]` |
//! | any other 40-digit hex id (a blob, a tree) | `e69de29b…` | `[object]` |
//! | a loose object's file | `objects/75/a52bcd…` | `objects/[object]` |
//! | a date, a time of day | `2026-11-22`, `10:04` | `[date]`, `[time]` |
//! | a duration | `1.25s`, `0.3 s`, `340ms`, `2m 3s` | `[duration]` |
//! | an id cut short in a column | `20261126-should-we-adopt-gr…` | `[debate…]` |
//! | this workspace (where `node_modules/` and `target/` are) | `/home/me/anvil` | `[workspace]` |
//! | a size on disk | `132.0 KiB`, `1.1 MiB` | `[size]` |
//! | a local port | `127.0.0.1:43521` | `127.0.0.1:[port]` |
//! | anvil's own version | `0.1.0` | `[version]` |
//!
//! Token counts and costs, which depend on what an agent CLI sends on this machine, are left
//! to each test: [`Filters::without_usage`].
//!
//! A test with a pinned clock (`ANVIL_NOW`) keeps its dates and times with
//! [`Filters::keep_clock`]: there they are part of what is checked.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use super::anvil::{Project, Run};

/// The filters of one snapshot test.
#[derive(Clone, Default)]
pub struct Filters {
    /// Literal texts (paths first) and what stands for them, longest first when applied.
    literals: Vec<(String, String)>,
    /// A record whose commit ids, full or abbreviated, become `[commit]`.
    record: Option<PathBuf>,
    keep_clock: bool,
    /// A test's own patterns, applied before the shared rules.
    patterns: Vec<(Regex, String)>,
}

struct Rule {
    pattern: Regex,
    replacement: &'static str,
    clock: bool,
}

/// The shared rules, in the order they apply.
fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let rule = |pattern: &str, replacement: &'static str, clock: bool| Rule {
            pattern: Regex::new(pattern).expect("a valid filter"),
            replacement,
            clock,
        };
        vec![
            rule(
                r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?",
                "[timestamp]",
                true,
            ),
            rule(
                r"objects/[0-9a-f]{2}/[0-9a-f]{38}\b",
                "objects/[object]",
                false,
            ),
            rule(r"\b\d{4}-\d{2}-\d{2}\b", "[date]", true),
            rule(r"\b\d{2}:\d{2}(?::\d{2})?\b", "[time]", true),
            rule(
                r"\b(?:\d+h ?)?(?:\d+m ?)?\d+(?:\.\d+)? ?(?:ms|µs|s)\b",
                "[duration]",
                false,
            ),
            // A duration right-aligned in its column (`[  1.2s]`): as wide as it is long.
            rule(r"\[ +\[duration\]", "[[duration]", false),
            rule(r"\b127\.0\.0\.1:\d+", "127.0.0.1:[port]", false),
            rule(r"\b\d+(?:\.\d+)? (?:B|KiB|MiB|GiB)\b", "[size]", false),
        ]
    })
}

impl Filters {
    /// The shared filters alone (no project: temporary paths are still filtered).
    pub fn new() -> Filters {
        Filters::default()
            .path(&std::env::temp_dir(), "[tmp]")
            .path(Path::new(env!("CARGO_MANIFEST_DIR")), "[workspace]")
    }

    /// The shared filters, with `project`'s path as `[project]` and its record's commit ids as
    /// `[commit]`.
    pub fn of(project: &Project) -> Filters {
        Filters::new()
            .path(project.path(), "[project]")
            .record(&project.record_dir())
    }

    /// `path` (and its canonical form, which may differ: `/private/var` on macOS) shown as
    /// `name`.
    pub fn path(mut self, path: &Path, name: &str) -> Filters {
        let mut forms = vec![path.to_path_buf()];
        if let Ok(canonical) = path.canonicalize() {
            forms.push(canonical);
        }
        for form in forms {
            let text = form.to_string_lossy().trim_end_matches('/').to_owned();
            if !text.is_empty() {
                self.literals.push((text, name.to_owned()));
            }
        }
        self
    }

    /// A literal `text` shown as `name` (a random name a test made, a server's address).
    pub fn text(mut self, text: &str, name: &str) -> Filters {
        self.literals.push((text.to_owned(), name.to_owned()));
        self
    }

    /// Commit ids of the record at `dir`, read when a text is redacted.
    pub fn record(mut self, dir: &Path) -> Filters {
        self.record = Some(dir.to_path_buf());
        self
    }

    /// Whatever matches `pattern` (a regex) shown as `replacement` (which may name its groups:
    /// `$1`), for what moves in one test only.
    pub fn pattern(mut self, pattern: &str, replacement: &str) -> Filters {
        let pattern = Regex::new(pattern).expect("a valid filter");
        self.patterns.push((pattern, replacement.to_owned()));
        self
    }

    /// Token counts and costs replaced: what an agent CLI sends (and so what a scripted model
    /// counts) depends on the machine it runs on, its paths and its date.
    pub fn without_usage(self) -> Filters {
        self.pattern(r"\b\d+ (in|out|cache read|cache write)\b", "[n] $1")
            .pattern(r"\$\d+(?:\.\d+)?", "$[cost]")
    }

    /// Keeps dates and times: for a test whose clock is pinned, where they are checked.
    pub fn keep_clock(mut self) -> Filters {
        self.keep_clock = true;
        self
    }

    /// A run as a terminal shows it: the command, what it printed (stdout, then stderr under
    /// a rule) and its exit code when it failed, redacted.
    pub fn run(&self, command: &str, run: &Run) -> String {
        let mut out = format!("$ {command}\n{}", run.stdout);
        if !run.stderr.is_empty() {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("--- stderr\n{}", run.stderr));
        }
        if run.code != Some(0) {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("--- exit {:?}\n", run.code));
        }
        self.redact(&out)
    }

    /// `text` with everything that moves replaced by its placeholder.
    pub fn redact(&self, text: &str) -> String {
        let mut literals = self.literals.clone();
        // The longest first: a project inside the temporary folder is `[project]`, not
        // `[tmp]/anvil-project-…`.
        literals.sort_by_key(|(text, _)| std::cmp::Reverse(text.len()));
        let mut out = text.to_owned();
        for (literal, name) in &literals {
            out = out.replace(literal.as_str(), name);
        }
        // Whatever is left of a temporary name after its folder was replaced.
        out = tmp_leftover().replace_all(&out, "[tmp]").into_owned();
        for (pattern, replacement) in &self.patterns {
            out = pattern.replace_all(&out, replacement.as_str()).into_owned();
        }
        let commits = self.record.as_deref().map(commit_ids).unwrap_or_default();
        out = debate_ids(&out);
        for rule in rules() {
            if rule.clock && self.keep_clock {
                continue;
            }
            out = rule
                .pattern
                .replace_all(&out, rule.replacement)
                .into_owned();
        }
        out = out.replace(env!("CARGO_PKG_VERSION"), "[version]");
        // Abbreviated ids are recognised against the record's own commits, not by their look:
        // an abbreviation may have no digit, or no letter, at all. Any other full id is an
        // object's.
        hex_word()
            .replace_all(&out, |c: &regex::Captures| {
                let word = &c[0];
                if commits.iter().any(|id| id.starts_with(word)) {
                    "[commit]".to_owned()
                } else if word.len() == 40 {
                    "[object]".to_owned()
                } else {
                    word.to_owned()
                }
            })
            .into_owned()
    }
}

/// `[tmp]/anvil-project-AbC123` → `[tmp]`: the random tail of a temporary name.
fn tmp_leftover() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\[tmp\]/\.?[A-Za-z0-9_.-]*").unwrap())
}

/// `20261122-rust-billing-3f2a` → `[debate:rust-billing]`. A debate id is a whole run of
/// lowercase letters, digits and dashes (a session's UUID, which looks alike at its start, is
/// left alone).
fn debate_ids(text: &str) -> String {
    static RUN: OnceLock<Regex> = OnceLock::new();
    static ID: OnceLock<Regex> = OnceLock::new();
    let run = RUN.get_or_init(|| Regex::new(r"\b\d{8}-[a-z0-9-]*[a-z0-9]").unwrap());
    let id = ID.get_or_init(|| Regex::new(r"^\d{8}-([a-z0-9-]+)-[0-9a-f]{4}$").unwrap());
    static CUT: OnceLock<Regex> = OnceLock::new();
    let cut = CUT.get_or_init(|| Regex::new(r"\b\d{8}-[a-z0-9-]*…").unwrap());
    let text = run.replace_all(text, |c: &regex::Captures| match id.captures(&c[0]) {
        Some(id) => format!("[debate:{}]", &id[1]),
        None => c[0].to_owned(),
    });
    // An id cut short by a column's width: its random end may be what was cut.
    cut.replace_all(&text, "[debate…]").into_owned()
}

fn hex_word() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\b[0-9a-f]{7,40}\b").unwrap())
}

/// Every commit reachable from a ref of the record at `dir`, read in-process (no `git` run).
fn commit_ids(dir: &Path) -> HashSet<String> {
    let Ok(repo) = gix::open(dir) else {
        return HashSet::new();
    };
    let mut tips = Vec::new();
    if let Ok(refs) = repo.references()
        && let Ok(all) = refs.all()
    {
        for mut reference in all.flatten() {
            if let Ok(id) = reference.peel_to_id() {
                tips.push(id.detach());
            }
        }
    }
    let mut ids = HashSet::new();
    if let Ok(walk) = repo.rev_walk(tips).all() {
        for info in walk.flatten() {
            ids.insert(info.id.to_string());
        }
    }
    ids
}

#[test]
fn the_filters_leave_words_and_replace_what_moves() {
    let f = Filters::new();
    let text = "20261122-rust-billing-3f2a@main · 2026-11-22 10:04 · took 1.25s, 340ms, 2m 3s \
                · 127.0.0.1:43521 · e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 · round 2 of 3 \
                · 11111111-2222-4333-8444-555555555555";
    assert_eq!(
        f.redact(text),
        "[debate:rust-billing]@main · [date] [time] · took [duration], [duration], [duration] \
         · 127.0.0.1:[port] · [object] · round 2 of 3 · 11111111-2222-4333-8444-555555555555"
    );
    assert_eq!(
        f.clone().keep_clock().redact("2026-11-22 10:04"),
        "2026-11-22 10:04"
    );
    let tmp = std::env::temp_dir().join("anvil-project-Ab1");
    assert_eq!(
        f.redact(&format!("{}/x", tmp.display())),
        "[tmp]/x",
        "a temporary name is replaced whole"
    );
}
