//! Credentials that must not reach anything anvil writes: API keys, access tokens, private
//! keys, passwords in URLs and values assigned to a credential's name.
//!
//! Every text enters anvil at one of a few doors (a phase's text, steering, a question and its
//! answer, a debate's setup, the material of `--context`/`--diff`/`--pr`/`--follow-up`, a
//! commit read back from the record, which a pull may have brought) and is cleaned there,
//! once, by an [`Intake`], before anything derived from it is written: the record, the live
//! files, the report, the search index, what `show` and the web room print are then clean by
//! construction, and nothing serialised (a YAML state file) is ever edited afterwards. Each
//! credential is replaced by `[redacted: KIND]`; the person is told what was replaced and
//! where. `[secrets] redact = false` in `.anvil/config.toml` keeps the texts as they are (the
//! person is told that too), and `anvil push` refuses to send a commit that holds one however
//! it got there ([`find`]).
//!
//! The families and their shapes are data, in [`rules`]: keywords first (a rule is looked at
//! only when one of its words is in the text), then a pattern or a parser. Beside the tokens
//! whose issuers give them a prefix, they cover what models and config files write: a value
//! assigned to a credential's name (`DB_PASSWORD=…`, `"clientSecret": …`, `--password=…`),
//! under a label (`**API key:** …`, a table's `| DB_PASSWORD | … |`, `<password>…</password>`)
//! or named beside it (`name: DB_PASSWORD` / `value: …`); passwords in URLs, on command lines
//! (`curl -u user:…`, `mysql -p…`, `sshpass -p`, `redis-cli -a`, `docker login -p`), in a
//! `.netrc`, in docker's `auth`, in an `Authorization` header of any scheme or in code
//! (`auth=("user", …)`), and stated in words (`the password is …`, `pw: …`).
//!
//! What is out of reach: a credential encoded (base64, hex, split across lines or strings), a
//! password of letters alone (it reads as a word: `the password is required` stays), a token
//! with no known prefix that is not assigned to a credential's name nor given in an
//! `Authorization` header, and every secret a shape cannot tell from ordinary text (a
//! passphrase in prose). What must stay as written does: commit ids, UUIDs, lockfile hashes
//! (`integrity sha512-…`), base64 images, and prose about passwords that gives none.

mod assignments;
pub mod keywords;
mod rules;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use rules::{RULES, Shape};

use crate::model::config::Lazy;

/// One credential found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: &'static str,
    /// Byte range in the text.
    pub range: Range<usize>,
}

/// The compiled pattern of rule `i`, compiled the first time the rule is looked at.
///
/// The engine is `regex-lite`: the hook is a fresh process at every stop of every session,
/// and the full `regex` crate's Unicode tables add about 100 µs to each process's start
/// (measured on a static build: 1.6 MB more to map and relocate), where `regex-lite` adds
/// next to nothing; the patterns are ASCII and run only on texts that hold their keywords.
fn compiled(i: usize, pattern: &str) -> &'static regex_lite::Regex {
    static COMPILED: [OnceLock<regex_lite::Regex>; RULES.len()] =
        [const { OnceLock::new() }; RULES.len()];
    COMPILED[i].get_or_init(|| {
        regex_lite::Regex::new(pattern)
            .expect("every rule's pattern compiles (a unit test builds them all)")
    })
}

/// The regular expressions of the rule table (the families not parsed by code), for the
/// benchmark that weighs compiling them all up front (`cargo bench --bench secrets`).
pub fn patterns() -> impl Iterator<Item = &'static str> {
    RULES.iter().filter_map(|rule| match rule.shape {
        Shape::Pattern { regex, .. } => Some(regex),
        Shape::Code(_) => None,
    })
}

/// Every credential in `text`, in order, not overlapping. Where two families find the same
/// text, the one that starts first wins, then the longer, then the more specific.
pub fn find(text: &str) -> Vec<Found> {
    if text.len() < 8 {
        return Vec::new();
    }
    let lower = text.to_ascii_lowercase();
    let seen = keywords::seen(text, &lower);
    let mut candidates: Vec<(Found, usize)> = Vec::new();
    let mut scratch = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        if !seen.mentions(i, rule) {
            continue;
        }
        match &rule.shape {
            Shape::Pattern { regex, accept } => {
                for captures in compiled(i, regex).captures_iter(text) {
                    let Some(m) = captures.get(1).or_else(|| captures.get(0)) else {
                        continue;
                    };
                    let range = m.range();
                    if accept.is_none_or(|accept| accept(&text[range.clone()])) {
                        candidates.push((
                            Found {
                                kind: rule.kind,
                                range,
                            },
                            i,
                        ));
                    }
                }
            }
            Shape::Code(find) => {
                find(text, &lower, &mut scratch);
                candidates.extend(scratch.drain(..).map(|f| (f, i)));
            }
        }
    }
    candidates.sort_by_key(|(f, i)| (f.range.start, std::cmp::Reverse(f.range.end), *i));
    let mut out: Vec<Found> = Vec::with_capacity(candidates.len());
    for (f, _) in candidates {
        if f.range.is_empty()
            || out
                .last()
                .is_some_and(|last| f.range.start < last.range.end)
        {
            continue;
        }
        out.push(f);
    }
    out
}

/// `text` with every credential replaced by `[redacted: KIND]`, and the kinds replaced.
pub fn redact(text: &str) -> (Cow<'_, str>, Vec<&'static str>) {
    let found = find(text);
    if found.is_empty() {
        return (Cow::Borrowed(text), Vec::new());
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in &found {
        out.push_str(&text[at..f.range.start]);
        out.push_str("[redacted: ");
        out.push_str(f.kind);
        out.push(']');
        at = f.range.end;
    }
    out.push_str(&text[at..]);
    (Cow::Owned(out), found.iter().map(|f| f.kind).collect())
}

/// The door through which texts enter one project in one command (or one stop of the hook):
/// it cleans each text (or keeps it, with `[secrets] redact = false`), remembers what it found
/// where, and says so once ([`Intake::note`]). The project's config is read only when
/// something is found, and once for a door that shares the run's ([`Intake::with_config`]).
#[derive(Debug, Clone, Default)]
pub struct Intake {
    /// The project's config; `None`: no config to read (credentials are redacted).
    config: Option<Lazy>,
    /// What was found, by where it was: (place, kinds).
    found: Vec<(String, Vec<&'static str>)>,
}

impl Intake {
    /// The door of the project whose home (`.anvil`) is `anvil_root`.
    pub fn new(anvil_root: &Path) -> Intake {
        Intake::with_config(&Lazy::new(&crate::home::Home::at(anvil_root)))
    }

    /// The door of the project whose config is `config`, read by whichever of the run's steps
    /// needs it first.
    pub fn with_config(config: &Lazy) -> Intake {
        Intake {
            config: Some(config.clone()),
            ..Intake::default()
        }
    }

    /// Whether this project keeps credentials as they are (`[secrets] redact = false`). A
    /// config file that cannot be read keeps nothing.
    fn keeps(&self) -> bool {
        self.config
            .as_ref()
            .and_then(Lazy::get)
            .is_some_and(crate::model::config::Config::keeps_credentials)
    }

    /// `text` cleaned; `place` says where it came from, in the note ("the question", "steering",
    /// "--context src/.env").
    pub fn clean<'a>(&mut self, place: &str, text: &'a str) -> Cow<'a, str> {
        let found = find(text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut kinds: Vec<&'static str> = found.iter().map(|f| f.kind).collect();
        kinds.dedup();
        match self.found.iter_mut().find(|(p, _)| p == place) {
            Some((_, known)) => known.extend(kinds),
            None => self.found.push((place.to_owned(), kinds)),
        }
        if self.keeps() {
            return Cow::Borrowed(text);
        }
        redact(text).0
    }

    /// [`Intake::clean`] of a text owned by the caller, in place.
    pub fn clean_in_place(&mut self, place: &str, text: &mut String) {
        if let Cow::Owned(clean) = self.clean(place, text) {
            *text = clean;
        }
    }

    /// [`Intake::clean`] of an optional text.
    pub fn clean_option(&mut self, place: &str, text: &mut Option<String>) {
        if let Some(text) = text {
            self.clean_in_place(place, text);
        }
    }

    /// Whether anything was found.
    pub fn found_any(&self) -> bool {
        !self.found.is_empty()
    }

    /// What the person is told: what was found where, and what became of it; `None` when
    /// nothing was found.
    pub fn note(&mut self) -> Option<String> {
        if self.found.is_empty() {
            return None;
        }
        let what: Vec<String> = self
            .found
            .iter()
            .map(|(place, kinds)| {
                let mut kinds = kinds.clone();
                kinds.sort_unstable();
                kinds.dedup();
                format!("{} in {place}", kinds.join(", "))
            })
            .collect();
        let what = what.join("; ");
        Some(if self.keeps() {
            format!(
                "what looks like a credential ({what}) was recorded as it is ([secrets] redact \
                 = false); `anvil push` will refuse to send it"
            )
        } else {
            format!(
                "what looked like a credential ({what}) was replaced by [redacted: …] before \
                 anything was written; the record is meant to be pushed, so keep secrets out \
                 of debates"
            )
        })
    }

    /// Merges what `other` found into this one.
    pub fn absorb(&mut self, other: Intake) {
        for (place, kinds) in other.found {
            match self.found.iter_mut().find(|(p, _)| *p == place) {
                Some((_, known)) => known.extend(kinds),
                None => self.found.push((place, kinds)),
            }
        }
        // The other door's config when this one has none, or has not read it and the other
        // has: one read serves both.
        match (&self.config, other.config) {
            (None, theirs) => self.config = theirs,
            (Some(ours), Some(theirs)) if !ours.is_read() && theirs.is_read() => {
                self.config = Some(theirs);
            }
            _ => {}
        }
    }
}

/// A text read back from the record of the project whose record is `record_dir` (a commit
/// pulled from a teammate, recorded by an older anvil, or written with git), cleaned as an
/// [`Intake`] would have cleaned it, unless the project keeps credentials.
pub fn read_back(record_dir: &Path, text: String) -> String {
    if !needs_cleaning(record_dir, &text) {
        return text;
    }
    redact(&text).0.into_owned()
}

/// Does the project whose home is `anvil_root` keep credentials as they are
/// (`[secrets] redact = false`)? A config file that cannot be read keeps nothing.
fn keeps_credentials(anvil_root: &Path) -> bool {
    crate::model::config::Config::load(&crate::home::Home::at(anvil_root))
        .is_ok_and(|c| c.keeps_credentials())
}

/// Would [`read_back`] change `text`?
pub fn needs_cleaning(record_dir: &Path, text: &str) -> bool {
    !find(text).is_empty() && !record_dir.parent().is_some_and(keeps_credentials)
}

/// [`read_back`] of the free texts of a commit's trailers.
pub fn read_back_all<'a>(record_dir: &Path, texts: impl IntoIterator<Item = &'a mut String>) {
    for text in texts {
        *text = read_back(record_dir, std::mem::take(text));
    }
}
