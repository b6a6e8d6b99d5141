//! Searching the index: the query read into terms, then matched.

use super::{
    CLOSE, Hit, Index, MAX_QUERY_BYTES, MAX_QUERY_WORDS, OPEN, Query, QueryError, SearchError,
};

impl Index {
    /// The best matches for `query`, most relevant first: phases with every word; when none
    /// has them all, phases with any of them (ranked, so those with more and rarer words
    /// come first). A query no search can take ([`terms`]) is refused before the index is
    /// asked anything.
    pub fn search(&self, query: &Query) -> Result<Vec<Hit>, SearchError> {
        let terms = terms(&query.text).map_err(SearchError::Query)?;
        if query.limit == 0 {
            return Ok(Vec::new());
        }
        let hits = self.run(query, &terms.join(" "))?;
        if !hits.is_empty() || terms.len() < 2 {
            return Ok(hits);
        }
        self.run(query, &terms.join(" OR "))
    }

    fn run(&self, query: &Query, matching: &str) -> Result<Vec<Hit>, SearchError> {
        let mut sql = format!(
            "SELECT debate, line, phase, round, commit_id, time,
                    snippet(phases, 0, '{OPEN}', '{CLOSE}', '…', 16)
             FROM phases WHERE phases MATCH ?1"
        );
        let mut args: Vec<rusqlite::types::Value> = vec![matching.to_owned().into()];
        let mut filter = |column: &str, op: &str, value: rusqlite::types::Value| {
            args.push(value);
            sql.push_str(&format!(" AND {column} {op} ?{}", args.len()));
        };
        if let Some(d) = &query.debate {
            filter("debate", "=", d.clone().into());
        }
        if let Some(l) = &query.line {
            filter("line", "=", l.clone().into());
        }
        if let Some(p) = &query.phase {
            filter("phase", "=", p.clone().into());
        }
        if let Some(s) = query.since {
            filter("time", ">=", s.into());
        }
        if let Some(u) = query.until {
            filter("time", "<=", u.into());
        }
        args.push(i64::try_from(query.limit).unwrap_or(i64::MAX).into());
        sql.push_str(&format!(" ORDER BY rank LIMIT ?{}", args.len()));
        let mut stmt = self.db.prepare(&sql).map_err(self.err())?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), |r| {
                Ok(Hit {
                    debate: r.get(0)?,
                    line: r.get(1)?,
                    phase: r.get(2)?,
                    round: r.get(3)?,
                    commit: r.get(4)?,
                    time: r.get(5)?,
                    snippet: r.get(6)?,
                })
            })
            .map_err(self.err())?;
        rows.collect::<Result<_, _>>().map_err(self.err())
    }
}

/// The terms of a query, as FTS5 strings (quoted, so that no character of the query is FTS5
/// syntax): each word, and each `"quoted phrase"` whole (an unclosed quote runs to the end).
/// A term without a letter or a digit is dropped (it would match nothing), a repeated one
/// kept once. One pass over the text; refused when it is longer than [`MAX_QUERY_BYTES`], holds
/// more than [`MAX_QUERY_WORDS`] words, or none.
pub fn terms(text: &str) -> Result<Vec<String>, QueryError> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(QueryError::TooLong { bytes: text.len() });
    }
    let mut terms: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut words = 0;
    let mut add = |piece: &str| {
        // Words as the tokenizer sees them: runs of letters and digits.
        let count = piece
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .count();
        // The tokenizer folds case: `X` and `x` are one term.
        if count == 0 || !seen.insert(piece.to_lowercase()) {
            return;
        }
        words += count;
        terms.push(format!("\"{piece}\""));
    };
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let (phrase, after) = quoted.split_once('"').unwrap_or((quoted, ""));
            add(phrase);
            rest = after;
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '"')
                .unwrap_or(rest.len());
            add(&rest[..end]);
            rest = rest[end..].trim_start();
        }
    }
    if words > MAX_QUERY_WORDS {
        return Err(QueryError::TooManyWords { words });
    }
    if terms.is_empty() {
        return Err(QueryError::NoWords);
    }
    Ok(terms)
}
