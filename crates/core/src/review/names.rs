//! How a person names a debate.
//!
//! A debate's id (`20261122-should-we-adopt-graphql-3f2a`) is exact but hard to type and
//! to remember: every id starts with a date, and most go on with "should-we". So every place
//! that takes a debate (`anvil log NAME`, `report`, `adr`, `show NAME:round-2`, `--line`,
//! `--follow-up`…) takes any of these, tried in this order, the first rule that finds
//! something deciding:
//!
//! ```text
//! 20261122-should-we-adopt-graphql-3f2a   the id
//! 2                                       the number `anvil log` shows beside the debate:
//!                                         1 is the most recently active (1 to 999)
//! 20261122-sh                             a prefix of the id
//! graphql, adopt-graphql, 3f2a            words of the id after its date, in order (the
//!                                         last may be cut short: `adopt-graph`)
//! billing, "stripe billing"               words of the question (a [`Questions`] search)
//! ```
//!
//! A name that reads as a number (1 to 999) is a place and nothing else: beyond the last
//! debate it names none, rather than a debate whose id happens to end in `3f2a`.
//!
//! A rule that finds several debates hands them all back ([`Named::debates`]): `anvil log`
//! shows them, the others list them and ask for one.
//!
//! # What each rule costs
//!
//! The id reads the debate's own refs; the number reads the journal of recent debates and
//! checks the debates up to it ([`crate::record::recent::Newest`]); a prefix lists the names
//! under `refs/anvil/` without opening a folder, as before this module existed. The words of
//! the id list those names too (a few milliseconds at 5,000 debates), and only when no prefix
//! matched. The question is searched last, by what the caller brings: the command line asks
//! its full-text index (`.anvil/search.sqlite`), which it catches up with the record first;
//! without one, the rule is skipped. So naming a debate by its id, its number or a prefix
//! costs what it did, and only a name that is none of those pays for a listing or a search
//! (`cargo bench --bench scale` times `log WORD` at each size).

use crate::record::store::{Record, RecordError, valid_name};

/// Numbers above this are ids (a date is eight digits), not places in `anvil log`'s order.
pub const MAX_NUMBER: usize = 999;

/// Finds the debates whose question holds every one of a name's words (in any form the search
/// understands). The command line's full-text index is one.
pub trait Questions {
    /// The debates, in any order; the error says why the search could not be made.
    fn holding(&self, words: &[String]) -> Result<Vec<String>, String>;
}

/// Which rule of the module's table matched a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Id,
    Number,
    Prefix,
    Slug,
    Question,
}

impl Rule {
    /// How a message says what the name was taken as: `"billing" (words of the question)`.
    pub fn words(self) -> &'static str {
        match self {
            Rule::Id => "the id",
            Rule::Number => "its number in `anvil log`",
            Rule::Prefix => "a prefix of the id",
            Rule::Slug => "words of the id",
            Rule::Question => "words of the question",
        }
    }
}

/// What a name matched: no debate, one, or several (sorted, newest id first; ids begin with
/// their date).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub debates: Vec<String>,
    /// The rule that found them; `None` when nothing matched.
    pub rule: Option<Rule>,
}

impl Named {
    fn nothing() -> Named {
        Named {
            debates: Vec::new(),
            rule: None,
        }
    }

    fn by(rule: Rule, mut debates: Vec<String>) -> Named {
        debates.sort_by(|a, b| b.cmp(a));
        debates.dedup();
        Named {
            debates,
            rule: Some(rule),
        }
    }

    /// The one debate it names, if it names exactly one.
    pub fn one(&self) -> Option<&str> {
        match self.debates.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NameError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("the question search failed: {0}")]
    Search(String),
}

/// The debates `name` names (see the module's table): [`by_id`], then [`by_words`].
pub fn debates(
    record: &Record,
    name: &str,
    questions: Option<&dyn Questions>,
) -> Result<Named, NameError> {
    let named = by_id(record, name)?;
    if named.rule.is_some() {
        return Ok(named);
    }
    by_words(record, name, questions)
}

/// The first three rules of the module's table: the id, the number, a prefix of the id.
pub fn by_id(record: &Record, name: &str) -> Result<Named, RecordError> {
    let name = name.trim();
    if name.is_empty() {
        return Ok(Named::nothing());
    }
    if valid_name(name) && !record.lines_of_debate(name)?.is_empty() {
        return Ok(Named::by(Rule::Id, vec![name.to_owned()]));
    }
    if let Some(n) = number(name)
        && let Some(debate) = nth_newest(record, n)?
    {
        return Ok(Named::by(Rule::Number, vec![debate]));
    }
    let prefixed = record.debates_with_prefix(name)?;
    if !prefixed.is_empty() {
        return Ok(Named::by(Rule::Prefix, prefixed));
    }
    Ok(Named::nothing())
}

/// Every rule of the module's table but the question's, which needs a search: for a reader
/// without one.
pub fn in_record(record: &Record, name: &str) -> Result<Named, RecordError> {
    let named = by_id(record, name)?;
    if named.rule.is_some() || number(name.trim()).is_some() {
        return Ok(named);
    }
    by_id_words(record, &words(name))
}

/// Words of the id after its date (the fourth rule).
fn by_id_words(record: &Record, wanted: &[String]) -> Result<Named, RecordError> {
    if wanted.is_empty() {
        return Ok(Named::nothing());
    }
    let slugged: Vec<String> = record
        .debate_names()?
        .into_iter()
        .filter(|id| slug_holds(id, wanted))
        .collect();
    Ok(match slugged.is_empty() {
        true => Named::nothing(),
        false => Named::by(Rule::Slug, slugged),
    })
}

/// The last two rules of the module's table: words of the id after its date, then words of
/// the question (asked of `questions`; `None` skips that rule).
pub fn by_words(
    record: &Record,
    name: &str,
    questions: Option<&dyn Questions>,
) -> Result<Named, NameError> {
    if number(name.trim()).is_some() {
        return Ok(Named::nothing());
    }
    let wanted = words(name);
    let slugged = by_id_words(record, &wanted)?;
    if slugged.rule.is_some() || wanted.is_empty() {
        return Ok(slugged);
    }
    if let Some(questions) = questions {
        let found = questions.holding(&wanted).map_err(NameError::Search)?;
        // Only debates that are still in the record (an index may lag behind a deletion).
        let mut kept = Vec::new();
        for debate in found {
            if valid_name(&debate) && !record.lines_of_debate(&debate)?.is_empty() {
                kept.push(debate);
            }
        }
        if !kept.is_empty() {
            return Ok(Named::by(Rule::Question, kept));
        }
    }
    Ok(Named::nothing())
}

/// `name` as a place in `anvil log`'s order: 1 to [`MAX_NUMBER`], without leading zeros.
pub fn number(name: &str) -> Option<usize> {
    if name.is_empty() || name.len() > 3 || name.starts_with('0') {
        return None;
    }
    if !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok().filter(|n| (1..=MAX_NUMBER).contains(n))
}

/// The `n`-th most recently active debate (1 is the newest), if there are that many.
fn nth_newest(record: &Record, n: usize) -> Result<Option<String>, RecordError> {
    let mut newest = crate::record::recent::Newest::new(record, n)?;
    for _ in 1..n {
        if newest.next().transpose()?.is_none() {
            return Ok(None);
        }
    }
    Ok(newest.next().transpose()?.map(|(debate, _)| debate))
}

/// The words of a name, lowercased: what is between its punctuation and spaces.
pub fn words(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The words of a debate's id after its date: `should, we, adopt, graphql, 3f2a`.
fn slug_words(id: &str) -> Vec<&str> {
    let rest = match id.split_once('-') {
        Some((date, rest)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => id,
    };
    rest.split('-').filter(|w| !w.is_empty()).collect()
}

/// Do `wanted` words follow one another among the id's words after its date, the last one
/// perhaps cut short?
fn slug_holds(id: &str, wanted: &[String]) -> bool {
    let slug = slug_words(id);
    if wanted.len() > slug.len() {
        return false;
    }
    let (last, before) = wanted.split_last().expect("not empty");
    slug.windows(wanted.len()).any(|window| {
        let (w_last, w_before) = window.split_last().expect("not empty");
        w_before.iter().zip(before).all(|(w, b)| *w == b) && w_last.starts_with(last.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(name: &str) -> Vec<String> {
        words(name)
    }

    #[test]
    fn numbers_are_places_from_one_to_999() {
        assert_eq!(number("1"), Some(1));
        assert_eq!(number("999"), Some(999));
        for not in ["0", "01", "1000", "2026112", "", "-1", "1a", "²"] {
            assert_eq!(number(not), None, "{not}");
        }
    }

    #[test]
    fn the_words_of_an_id_follow_its_date() {
        let id = "20261122-should-we-adopt-graphql-3f2a";
        assert_eq!(slug_words(id), ["should", "we", "adopt", "graphql", "3f2a"]);
        for yes in [
            "graphql",
            "adopt-graphql",
            "adopt graphql",
            "Adopt-GraphQL",
            "adopt-graph",
            "3f2a",
            "should-we-adopt-graphql-3f2a",
        ] {
            assert!(slug_holds(id, &wanted(yes)), "{yes}");
        }
        // Not in order, not whole, or the date.
        for no in ["graphql-adopt", "dopt", "graph-3f2a", "20261122", "rest"] {
            assert!(!slug_holds(id, &wanted(no)), "{no}");
        }
        // An id without a date is all words.
        assert_eq!(slug_words("imported-debate"), ["imported", "debate"]);
    }

    struct Fixed(Vec<String>);

    impl Questions for Fixed {
        fn holding(&self, _: &[String]) -> Result<Vec<String>, String> {
            Ok(self.0.clone())
        }
    }

    #[test]
    fn each_rule_is_tried_in_turn() {
        let (_dir, home, graphql) = crate::testkit::Debate::new()
            .question("Should we adopt GraphQL for the public API?")
            .start();
        let (record, billing) = {
            let started = crate::line::start::start(
                &home,
                crate::model::options::Options {
                    question: "Should we move billing to Stripe?".into(),
                    ..Default::default()
                }
                .into_setup()
                .unwrap(),
                None,
            )
            .unwrap();
            (
                Record::open(&home.record_dir()).unwrap(),
                started.line.debate,
            )
        };
        let graphql = graphql.debate;
        let find = |name: &str, q: Option<&dyn Questions>| debates(&record, name, q).unwrap();

        let named = find(&graphql, None);
        assert_eq!(
            (named.one(), named.rule),
            (Some(graphql.as_str()), Some(Rule::Id))
        );
        // Billing is the newer: number 1.
        let named = find("1", None);
        assert_eq!(
            (named.one(), named.rule),
            (Some(billing.as_str()), Some(Rule::Number))
        );
        assert_eq!(find("2", None).one(), Some(graphql.as_str()));
        assert_eq!(find("3", None).rule, None);
        // A prefix names both: the newer id first.
        let named = find(&graphql[..6], None);
        assert_eq!(named.rule, Some(Rule::Prefix));
        assert_eq!(named.debates.len(), 2);
        let named = find("move-billing", None);
        assert_eq!(
            (named.one(), named.rule),
            (Some(billing.as_str()), Some(Rule::Slug))
        );
        // "Stripe" is past the id's words: only the question has it.
        assert_eq!(find("stripe", None).rule, None);
        let search = Fixed(vec![billing.clone(), "20200101-gone-0000".into()]);
        let named = find("stripe", Some(&search));
        assert_eq!(
            (named.one(), named.rule),
            (Some(billing.as_str()), Some(Rule::Question))
        );
        assert_eq!(find("   ", Some(&search)).rule, None);
        assert_eq!(find("---", Some(&search)).rule, None);
    }
}
