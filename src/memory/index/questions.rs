//! Debates named by words of their question (`anvil log billing`): the index's rows of the
//! debates' `start` commits, whose text is the question (see
//! [`anvil_core::review::names`]).

use super::{Index, SearchError};

/// Rows a question search reads at most: more debates than any list of candidates shows.
const MAX_ROWS: usize = 1000;

impl Index {
    /// The debates whose question holds every one of `words` (matched by their stems, as a
    /// search matches them), in the order of the index's ranking.
    pub fn debates_asking(&self, words: &[String]) -> Result<Vec<String>, SearchError> {
        let query: Vec<String> = words
            .iter()
            .filter(|w| !w.is_empty() && w.chars().all(char::is_alphanumeric))
            .map(|w| format!("\"{w}\""))
            .collect();
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .db
            .prepare(
                "SELECT debate, text FROM phases WHERE phases MATCH ?1 AND phase = 'start'
                 ORDER BY rank LIMIT ?2",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map(rusqlite::params![query.join(" "), MAX_ROWS as i64], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(self.err())?;
        let mut out: Vec<String> = Vec::new();
        for row in rows {
            let (debate, text) = row.map_err(self.err())?;
            if asks(&text, words) && !out.contains(&debate) {
                out.push(debate);
            }
        }
        Ok(out)
    }
}

/// Does the text of a `start` row (`start: QUESTION`, then `Next: ROLE`) match `words` by its
/// question, rather than by the words anvil wrote around it? A word found only in those
/// (`start`, `next`, the role) does not count; one the index matched by its stem
/// ("migrating" for "migration") does.
fn asks(text: &str, words: &[String]) -> bool {
    let text = text.to_lowercase();
    let body = text.strip_prefix("start: ").unwrap_or(&text);
    let (question, around) = match body.split_once("\nnext: ") {
        Some((question, next)) => (question, format!("start next {next}")),
        None => (body, "start".to_owned()),
    };
    words.iter().all(|word| {
        let word = word.to_lowercase();
        question.contains(&word) || !anvil_core::review::names::words(&around).contains(&word)
    })
}

#[cfg(test)]
mod tests {
    use super::asks;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn only_the_question_is_asked() {
        let row = "start: Should we move billing to Stripe?\nNext: advocate";
        assert!(asks(row, &words(&["billing"])));
        assert!(asks(row, &words(&["Stripe", "billing"])));
        // Matched by the index through a stem the question holds in another form.
        assert!(asks(row, &words(&["bills"])));
        // Only in what anvil wrote around the question.
        assert!(!asks(row, &words(&["advocate"])));
        assert!(!asks(row, &words(&["start"])));
        assert!(!asks(row, &words(&["billing", "next"])));
        assert!(asks(
            "start: When should we start the migration?\nNext: advocate",
            &words(&["start"])
        ));
    }
}
