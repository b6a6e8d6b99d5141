//! Which of the rule table's keywords a text holds, found in one pass over it.
//!
//! A rule is looked at only when one of its keywords is in the text, so every text anvil takes
//! in (a phase, and at a synthesis every phase read back for the report) is first searched for
//! about a hundred keywords. Searched one by one, with the standard library's vectorised
//! `contains`, that is a hundred passes over the text: about 115 µs for a 7.5 KB phase, and a
//! quarter of the synthesis's time in the hook. Here each position is looked at once: its two
//! bytes (in lower case) are looked up in a table of the keywords' first two, and only where
//! one begins is it compared. `aho-corasick` (in the tree already) would make the same pass,
//! but building its automaton costs more than the hundred passes it saves in a process that
//! cleans a handful of texts and ends. `cargo bench --bench secrets` measures the three.

use std::sync::OnceLock;

use super::rules::{RULES, Rule, at_word_start};

/// The keywords of every rule, indexed for the pass.
struct Keywords {
    /// Each keyword once.
    list: Vec<&'static str>,
    /// Whether keyword `k` holds a capital letter (then it is matched as written, else in the
    /// text's lower case).
    cased: Vec<bool>,
    /// (lower-case first two bytes, keyword), sorted.
    by_start: Vec<(u16, u16)>,
    /// The first two bytes of some keyword, as a bit per pair.
    starts: Box<[u64; 1024]>,
    /// For rule `i`, its keywords' indexes: `of_rule[i]` is a range of `indexes`.
    of_rule: Vec<std::ops::Range<usize>>,
    indexes: Vec<u16>,
}

fn pair(a: u8, b: u8) -> u16 {
    u16::from(a.to_ascii_lowercase()) << 8 | u16::from(b.to_ascii_lowercase())
}

fn keywords() -> &'static Keywords {
    static KEYWORDS: OnceLock<Keywords> = OnceLock::new();
    KEYWORDS.get_or_init(|| {
        let mut list: Vec<&'static str> = Vec::new();
        let mut of_rule = Vec::with_capacity(RULES.len());
        let mut indexes = Vec::new();
        for rule in RULES {
            let from = indexes.len();
            for &k in rule.keywords {
                assert!(k.len() >= 2, "a keyword of two bytes or more: {k:?}");
                let at = list
                    .iter()
                    .position(|&known| known == k)
                    .unwrap_or_else(|| {
                        list.push(k);
                        list.len() - 1
                    });
                indexes.push(u16::try_from(at).expect("fewer than 65536 keywords"));
            }
            of_rule.push(from..indexes.len());
        }
        let mut starts = Box::new([0u64; 1024]);
        let mut by_start = Vec::with_capacity(list.len());
        for (k, keyword) in list.iter().enumerate() {
            let bytes = keyword.as_bytes();
            let start = pair(bytes[0], bytes[1]);
            starts[usize::from(start >> 6)] |= 1 << (start & 63);
            by_start.push((start, k as u16));
        }
        by_start.sort_unstable();
        Keywords {
            cased: list
                .iter()
                .map(|k| k.bytes().any(|b| b.is_ascii_uppercase()))
                .collect(),
            list,
            by_start,
            starts,
            of_rule,
            indexes,
        }
    })
}

/// Where the keywords occur in one text.
pub(super) struct Seen {
    /// Keyword `k` occurs somewhere.
    anywhere: Vec<bool>,
    /// Keyword `k` occurs at the start of a word.
    at_word_start: Vec<bool>,
}

/// One pass over `text` (`lower`: its ASCII lower case).
pub(super) fn seen(text: &str, lower: &str) -> Seen {
    let keywords = keywords();
    let mut seen = Seen {
        anywhere: vec![false; keywords.list.len()],
        at_word_start: vec![false; keywords.list.len()],
    };
    let (bytes, low) = (text.as_bytes(), lower.as_bytes());
    for (at, two) in low.windows(2).enumerate() {
        let start = u16::from(two[0]) << 8 | u16::from(two[1]);
        if keywords.starts[usize::from(start >> 6)] & (1 << (start & 63)) == 0 {
            continue;
        }
        let first = keywords.by_start.partition_point(|&(s, _)| s < start);
        for &(_, k) in keywords.by_start[first..]
            .iter()
            .take_while(|&&(s, _)| s == start)
        {
            let k = usize::from(k);
            let haystack = if keywords.cased[k] { bytes } else { low };
            if haystack[at..].starts_with(keywords.list[k].as_bytes()) {
                seen.anywhere[k] = true;
                if at_word_start(bytes, at) {
                    seen.at_word_start[k] = true;
                }
            }
        }
    }
    seen
}

impl Seen {
    /// Is one of rule `i`'s keywords in the text? A keyword that begins with a letter or a digit
    /// counts only at the start of a word when the rule says so.
    pub(super) fn mentions(&self, i: usize, rule: &Rule) -> bool {
        let keywords = keywords();
        keywords.indexes[keywords.of_rule[i].clone()]
            .iter()
            .any(|&k| {
                let k = usize::from(k);
                let alphanumeric = keywords.list[k].as_bytes()[0].is_ascii_alphanumeric();
                if rule.word_start && alphanumeric {
                    self.at_word_start[k]
                } else {
                    self.anywhere[k]
                }
            })
    }
}

/// How many of the rules `text` wakes (for `cargo bench --bench secrets`).
pub fn rules_woken(text: &str) -> usize {
    let lower = text.to_ascii_lowercase();
    let seen = seen(text, &lower);
    RULES
        .iter()
        .enumerate()
        .filter(|(i, rule)| seen.mentions(*i, rule))
        .count()
}

/// Every keyword of the rule table, once (for `cargo bench --bench secrets`).
pub fn all() -> impl Iterator<Item = &'static str> {
    keywords().list.iter().copied()
}
