//! Earlier conclusions related to a new question.

use rusqlite::{OptionalExtension, params};

use super::{Index, SearchError};

/// An earlier conclusion related to a question: the newest synthesis of a debate whose
/// question or synthesis holds enough of the question's significant words.
#[derive(Debug, Clone)]
pub struct Related {
    pub debate: String,
    pub line: String,
    pub commit: String,
    pub time: i64,
    /// How many of the question's significant words it holds, of how many.
    pub matched: usize,
    pub of: usize,
}

/// Words too common to relate two questions.
const STOP_WORDS: &[&str] = &[
    "about", "after", "all", "also", "and", "any", "are", "because", "been", "before", "being",
    "best", "better", "between", "both", "but", "can", "could", "did", "does", "doing", "done",
    "each", "for", "from", "get", "had", "has", "have", "how", "into", "its", "just", "keep",
    "more", "most", "much", "need", "not", "now", "our", "ours", "over", "same", "should", "some",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "too", "use", "using", "very", "was", "way", "were", "what", "when", "where", "which", "while",
    "who", "why", "will", "with", "would", "yes", "you", "your",
];

/// The words of `text` that can relate it to another question: three letters or more, not a
/// common word, each once.
fn significant_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        if word.chars().count() >= 3 && !STOP_WORDS.contains(&word.as_str()) && !out.contains(&word)
        {
            out.push(word);
        }
    }
    out
}

impl Index {
    /// Earlier conclusions related to `question`, best first, at most `limit`: debates whose
    /// question (their `start`) or synthesis holds at least half of the question's significant
    /// words, and never fewer than two of them (all of them when it has one or two). Debates
    /// without a synthesis are left out, and so are those `skip` names.
    pub fn related(
        &self,
        question: &str,
        limit: usize,
        skip: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<Related>, SearchError> {
        let words = significant_words(question);
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let need = if words.len() <= 2 {
            words.len()
        } else {
            words.len().div_ceil(2).max(2)
        };
        let any = words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR ");
        // Candidates: questions and syntheses holding any of the words, best first.
        let mut stmt = self
            .db
            .prepare(
                "SELECT rowid, debate FROM phases WHERE phases MATCH ?1
                 AND phase IN ('start', 'synthesizer') ORDER BY rank LIMIT 400",
            )
            .map_err(self.err())?;
        let candidates: Vec<(i64, String)> = stmt
            .query_map([&any], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.err())?
            .collect::<Result<_, _>>()
            .map_err(self.err())?;
        let mut holds = self
            .db
            .prepare("SELECT 1 FROM phases WHERE phases MATCH ?1 AND rowid = ?2")
            .map_err(self.err())?;
        // For each debate, in the order of its best candidate: which words it holds.
        let mut debates: Vec<(String, Vec<bool>)> = Vec::new();
        for (rowid, debate) in candidates {
            if skip(&debate) {
                continue;
            }
            let at = match debates.iter().position(|(d, _)| *d == debate) {
                Some(at) => at,
                None => {
                    debates.push((debate, vec![false; words.len()]));
                    debates.len() - 1
                }
            };
            for (n, word) in words.iter().enumerate() {
                if debates[at].1[n] {
                    continue;
                }
                let found = holds
                    .exists(params![format!("\"{word}\""), rowid])
                    .map_err(self.err())?;
                debates[at].1[n] = found;
            }
        }
        let mut related = Vec::new();
        let mut newest = self
            .db
            .prepare(
                "SELECT line, commit_id, time FROM phases WHERE debate = ?1
                 AND phase = 'synthesizer' ORDER BY time DESC LIMIT 1",
            )
            .map_err(self.err())?;
        let mut ranked: Vec<(usize, usize, String)> = debates
            .into_iter()
            .enumerate()
            .map(|(order, (d, held))| (held.iter().filter(|h| **h).count(), order, d))
            .filter(|(matched, _, _)| *matched >= need)
            .collect();
        // More words first; among equals, the better-ranked candidate.
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (matched, _, debate) in ranked {
            let found = newest
                .query_row([&debate], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })
                .optional()
                .map_err(self.err())?;
            if let Some((line, commit, time)) = found {
                related.push(Related {
                    debate,
                    line,
                    commit,
                    time,
                    matched,
                    of: words.len(),
                });
            }
            if related.len() == limit {
                break;
            }
        }
        Ok(related)
    }
}
