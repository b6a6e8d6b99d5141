//! The shape of a debate's lines as a graph, newest first, drawn the way `git log --graph`
//! draws it: one column per line that is still open, `*` for a commit, `|/` where a line
//! joins the one it was branched from.
//!
//! Every anvil commit has one parent, so a debate is a tree, and drawing it needs no merges.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use crate::review::history::{Entry, LineHistory};

/// One row of the drawing: a commit, or a connector row that joins columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The graph part, e.g. `| * ` or `|/`.
    pub graph: String,
    /// The commit on this row; `None` for a connector row.
    pub commit: Option<ObjectId>,
}

/// A line's own part of the tree: the commits it wrote itself, and where it branched off.
#[derive(Debug, Clone)]
pub struct Segment {
    pub line: String,
    /// Newest first.
    pub commits: Vec<ObjectId>,
    /// The commit the segment's oldest commit sits on; `None` for the line that owns the root.
    pub fork: Option<ObjectId>,
}

/// Splits `lines` (main first) into segments: each line owns the commits no earlier line has.
pub fn segments(lines: &[LineHistory]) -> Vec<Segment> {
    let mut owned: HashSet<ObjectId> = HashSet::new();
    let mut out = Vec::new();
    for history in lines {
        let mut commits = Vec::new();
        let mut fork = None;
        for entry in history.entries.iter().rev() {
            if owned.contains(&entry.commit) {
                fork = Some(entry.commit);
                break;
            }
            commits.push(entry.commit);
        }
        owned.extend(commits.iter().copied());
        out.push(Segment {
            line: history.line.line.clone(),
            commits,
            fork,
        });
    }
    out
}

/// Draws the tree of `lines`, newest line first, in the order `git log --graph` uses: each
/// line's commits together, down to where it meets a line that is still to be drawn.
pub fn draw(lines: &[LineHistory]) -> Vec<Row> {
    let parents: HashMap<ObjectId, Option<ObjectId>> = lines
        .iter()
        .flat_map(|h| h.entries.iter().map(|e| (e.commit, e.parent)))
        .collect();
    let mut children: HashMap<ObjectId, usize> = HashMap::new();
    for parent in parents.values().flatten() {
        *children.entry(*parent).or_default() += 1;
    }
    let mut tips: Vec<(i64, usize)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, h)| h.entries.last().map(|e| (e.time, i)))
        .collect();
    tips.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut order = Vec::new();
    let mut emitted: HashSet<ObjectId> = HashSet::new();
    let mut seen_children: HashMap<ObjectId, usize> = HashMap::new();
    for (_, i) in tips {
        let mut next = lines[i].entries.last().map(|e| e.commit);
        while let Some(commit) = next {
            let waiting = children.get(&commit).copied().unwrap_or(0)
                > seen_children.get(&commit).copied().unwrap_or(0);
            if emitted.contains(&commit) || waiting {
                break;
            }
            emitted.insert(commit);
            order.push(commit);
            next = parents.get(&commit).copied().flatten();
            if let Some(parent) = next {
                *seen_children.entry(parent).or_default() += 1;
            }
        }
    }

    let mut rows = Vec::new();
    let mut columns: Vec<ObjectId> = Vec::new();
    for commit in order {
        let i = match columns.iter().position(|c| *c == commit) {
            Some(i) => i,
            None => {
                columns.push(commit);
                columns.len() - 1
            }
        };
        // Lines that branched off here join their parent column first, rightmost first.
        while let Some(k) = columns
            .iter()
            .rposition(|c| *c == commit)
            .filter(|k| *k > i)
        {
            let mut graph = String::new();
            for j in 0..columns.len() {
                if j < k {
                    graph.push_str(if j + 1 == k { "|" } else { "| " });
                } else if j == k {
                    graph.push('/');
                } else {
                    graph.push_str(" /");
                }
            }
            rows.push(Row {
                graph,
                commit: None,
            });
            columns.remove(k);
        }
        let graph: String = (0..columns.len())
            .map(|j| if j == i { "* " } else { "| " })
            .collect();
        rows.push(Row {
            graph,
            commit: Some(commit),
        });
        match parents.get(&commit).copied().flatten() {
            Some(parent) => columns[i] = parent,
            None => {
                columns.remove(i);
            }
        }
    }
    rows
}

/// Every entry of `lines`, by commit.
pub fn entries(lines: &[LineHistory]) -> HashMap<ObjectId, &Entry> {
    lines
        .iter()
        .flat_map(|h| h.entries.iter().map(|e| (e.commit, e)))
        .collect()
}
