//! A debate's conclusion as an architecture decision record in the code repository, in the
//! shape of MADR 4.0: YAML front matter (`status`, `date`, `decision-makers`), then the
//! context and problem statement, the considered options, the decision outcome with its
//! consequences, and what the debate left open, with links back to the record.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where decision records go when neither `--dir` nor `.adr-dir` says otherwise.
pub const DEFAULT_DIR: &str = "docs/decisions";

/// The directory decision records of `project` go to: the one its `.adr-dir` names (the file
/// adr-tools writes), else [`DEFAULT_DIR`]; relative to the project.
pub fn directory(project: &Path) -> PathBuf {
    std::fs::read_to_string(project.join(".adr-dir"))
        .ok()
        .map(|text| text.trim().to_owned())
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_DIR), PathBuf::from)
}

/// The number the next record in `dir` takes: one more than the highest `NNNN-….md` there
/// (the first is 0001).
pub fn next_number(dir: &Path) -> std::io::Result<u32> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(1),
        Err(e) => return Err(e),
    };
    let mut highest = 0;
    for entry in entries {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = number_of(&name) {
            highest = highest.max(n);
        }
    }
    Ok(highest + 1)
}

/// The number of a record's file name `NNNN-title.md`.
pub fn number_of(file_name: &str) -> Option<u32> {
    let (digits, rest) = file_name.split_at_checked(4)?;
    (digits.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with('-') && rest.ends_with(".md"))
        .then(|| digits.parse().ok())
        .flatten()
}

/// `NNNN-a-title-in-words.md` for `title`.
pub fn file_name(number: u32, title: &str) -> String {
    let mut slug = String::new();
    for word in title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if slug.len() + word.len() > 60 {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word.to_lowercase());
    }
    if slug.is_empty() {
        slug.push_str("decision");
    }
    format!("{number:04}-{slug}.md")
}

/// One position argued in the debate.
#[derive(Debug, Clone)]
pub struct Position {
    /// Who argued it: `Advocate`, `Critic`, a stakeholder's or persona's name.
    pub by: String,
    /// Its final text in the debate.
    pub text: String,
}

/// Everything a decision record is written from.
#[derive(Debug, Clone)]
pub struct Decision {
    pub number: u32,
    pub question: String,
    /// The person's own position, if they gave one.
    pub position: Option<String>,
    /// What the debate was about besides the question (`--context` paths, a diff, …).
    pub material: Vec<String>,
    pub positions: Vec<Position>,
    pub synthesis: String,
    /// `YYYY-MM-DD` of the synthesis.
    pub date: String,
    pub decision_makers: Vec<String>,
    /// `DEBATE@LINE`.
    pub line: String,
    /// The synthesis commit, in full.
    pub commit: String,
    /// The record this one supersedes: (its number, its file name).
    pub supersedes: Option<(u32, String)>,
}

#[derive(Serialize)]
struct FrontMatter<'a> {
    status: &'a str,
    date: &'a str,
    #[serde(rename = "decision-makers")]
    decision_makers: &'a [String],
}

/// The record as markdown with YAML front matter.
pub fn render(d: &Decision) -> String {
    let front = serde_saphyr::to_string(&FrontMatter {
        status: "proposed",
        date: &d.date,
        decision_makers: &d.decision_makers,
    })
    .expect("the front matter always serialises");
    let title = crate::model::state::first_line(&d.question);
    let mut out = format!("---\n{}---\n\n# {}\n\n", front, one_line(title));
    if let Some((number, file)) = &d.supersedes {
        out.push_str(&format!("Supersedes [ADR-{number:04}]({file}).\n\n"));
    }
    out.push_str("## Context and Problem Statement\n\n");
    out.push_str(d.question.trim());
    out.push_str("\n\n");
    if let Some(p) = &d.position {
        out.push_str(&format!("The position put to the debate: {}\n\n", p.trim()));
    }
    if !d.material.is_empty() {
        out.push_str("The debate was given: ");
        out.push_str(&d.material.join(", "));
        out.push_str(".\n\n");
    }
    out.push_str(&format!(
        "This decision was argued in a structured debate recorded by anvil ({}); the \
         sections below are drawn from it.\n\n",
        d.line
    ));
    out.push_str("## Considered Options\n\n");
    for p in &d.positions {
        out.push_str(&format!("* {}: {}\n", p.by, gist(&p.text)));
    }
    out.push_str("\n## Decision Outcome\n\n");
    out.push_str(&demote(d.synthesis.trim(), 2));
    out.push_str("\n\n### Consequences\n\n");
    match section(&d.synthesis, &["consequence"]) {
        Some(text) => out.push_str(&text),
        None => out.push_str(
            "* The synthesis above names none on their own; its conditions and risks stand for them.",
        ),
    }
    out.push_str("\n\n## Pros and Cons of the Options\n\n");
    for p in &d.positions {
        out.push_str(&format!("### {}\n\n{}\n\n", p.by, demote(p.text.trim(), 3)));
    }
    out.push_str("## More Information\n\n### Dissent left open\n\n");
    match section(
        &d.synthesis,
        &[
            "open question",
            "dissent",
            "uncertain",
            "unresolved",
            "risk",
        ],
    ) {
        Some(text) => out.push_str(&text),
        None => out.push_str("* The synthesis left no question open by name."),
    }
    out.push_str(&format!(
        "\n\n### The debate\n\n* Recorded as `{}`, synthesis commit `{}`.\n* Read it with \
         `anvil show {}` (the whole line: `anvil log {}`).\n",
        d.line, d.commit, d.commit, d.line
    ));
    out
}

/// The front matter of a record says it is superseded by record `number` (`file`).
pub fn mark_superseded(text: &str, number: u32, file: &str) -> Option<String> {
    let body = text.strip_prefix("---\n")?;
    let end = body.find("\n---")?;
    let front = &body[..end];
    let status = format!("status: superseded by ADR-{number:04} ({file})");
    let mut replaced = false;
    let lines: Vec<String> = front
        .lines()
        .map(|l| {
            if l.starts_with("status:") {
                replaced = true;
                status.clone()
            } else {
                l.to_owned()
            }
        })
        .collect();
    let mut front = lines.join("\n");
    if !replaced {
        front = format!("{status}\n{front}");
    }
    Some(format!("---\n{front}{}", &body[end..]))
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first sentence of `text` (its first paragraph that is not a heading), at most 200
/// characters.
fn gist(text: &str) -> String {
    let para = text
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with('#'))
        .unwrap_or("");
    let flat = one_line(&para.replace("**", ""));
    let sentence = match flat.find(". ") {
        Some(at) => &flat[..=at],
        None => flat.as_str(),
    };
    if sentence.chars().count() > 200 {
        let cut: String = sentence.chars().take(199).collect();
        format!("{cut}…")
    } else {
        sentence.to_owned()
    }
}

/// Headings of `text` pushed down by `by` levels (at most to `######`), outside code blocks,
/// so that a phase's own headings sit under the record's.
fn demote(text: &str, by: usize) -> String {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
        }
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        if !fenced && level > 0 && trimmed[level..].starts_with(' ') {
            let new = (level + by).min(6);
            out.push(format!("{}{}", "#".repeat(new), &trimmed[level..]));
        } else {
            out.push(line.to_owned());
        }
    }
    out.join("\n")
}

/// The body of the first section of `text` whose heading (a `#` line, or a line that is all
/// bold) names one of `words`, up to the next heading of its level or above.
fn section(text: &str, words: &[&str]) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let heading = |line: &str| -> Option<(usize, String)> {
        let t = line.trim();
        let level = t.chars().take_while(|c| *c == '#').count();
        if level > 0 {
            return Some((level, t[level..].trim().to_lowercase()));
        }
        let inner = t.strip_prefix("**")?;
        let (name, rest) = inner.split_once("**")?;
        // `**Open questions**` alone, or `**Open questions**:` leading its own text.
        (rest.trim().is_empty() || rest.starts_with(':')).then(|| (7, name.to_lowercase()))
    };
    let start = lines
        .iter()
        .position(|l| heading(l).is_some_and(|(_, name)| words.iter().any(|w| name.contains(w))))?;
    let (level, _) = heading(lines[start])?;
    let mut body = Vec::new();
    // A bold heading's own line may carry text after the colon.
    if level == 7
        && let Some((_, rest)) = lines[start]
            .trim()
            .trim_start_matches("**")
            .split_once("**")
    {
        let rest = rest.trim_start_matches(':').trim();
        if !rest.is_empty() {
            body.push(rest.to_owned());
        }
    }
    for line in &lines[start + 1..] {
        if let Some((l, _)) = heading(line)
            && l <= level
        {
            break;
        }
        body.push((*line).to_owned());
    }
    let body = body.join("\n").trim().to_owned();
    (!body.is_empty()).then(|| demote(&body, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision() -> Decision {
        Decision {
            number: 3,
            question: "Should billing move to DynamoDB?".into(),
            position: None,
            material: vec!["src/billing/".into()],
            positions: vec![
                Position {
                    by: "Advocate".into(),
                    text: "## For\n\nDynamoDB scales writes. It needs no cluster.".into(),
                },
                Position {
                    by: "Critic".into(),
                    text: "Ledgers need transactions.".into(),
                },
            ],
            synthesis: "# Verdict\n\nKeep Postgres.\n\n## Consequences\n\n- Replicas to run\n\n\
                        ## Open questions\n\n- Write volume in 2027?\n"
                .into(),
            date: "2026-11-25".into(),
            decision_makers: vec!["Ada: \"the\" lead".into()],
            line: "d@main".into(),
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            supersedes: Some((1, "0001-billing.md".into())),
        }
    }

    #[test]
    fn the_record_has_madr_front_matter_sections_and_links_back() {
        let text = render(&decision());
        let front = text
            .strip_prefix("---\n")
            .and_then(|t| t.split_once("\n---\n"))
            .unwrap()
            .0;
        #[derive(serde::Deserialize)]
        struct Front {
            status: String,
            date: String,
            #[serde(rename = "decision-makers")]
            makers: Vec<String>,
        }
        let parsed: Front = serde_saphyr::from_str(front).unwrap();
        assert_eq!(parsed.status, "proposed");
        assert_eq!(parsed.date, "2026-11-25");
        assert_eq!(parsed.makers, ["Ada: \"the\" lead"]);
        for heading in [
            "\n# Should billing move to DynamoDB?\n",
            "\n## Context and Problem Statement\n",
            "\n## Considered Options\n",
            "* Advocate: DynamoDB scales writes.\n",
            "\n## Decision Outcome\n",
            "\n### Verdict\n",
            "\n### Consequences\n\n- Replicas to run\n",
            "\n### Dissent left open\n\n- Write volume in 2027?\n",
            "Supersedes [ADR-0001](0001-billing.md).",
            "`anvil show 0123456789abcdef0123456789abcdef01234567`",
            "Recorded as `d@main`",
        ] {
            assert!(text.contains(heading), "{heading:?} in:\n{text}");
        }
    }

    #[test]
    fn numbers_follow_the_files_there_and_names_are_slugs() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(next_number(&dir.path().join("missing")).unwrap(), 1);
        for name in [
            "0001-a.md",
            "0007-b.md",
            "template.md",
            "12-c.md",
            "0009-x.txt",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        assert_eq!(next_number(dir.path()).unwrap(), 8);
        assert_eq!(
            file_name(8, "Should we adopt <GraphQL>?"),
            "0008-should-we-adopt-graphql.md"
        );
        assert_eq!(file_name(1, "???"), "0001-decision.md");
    }

    #[test]
    fn superseding_rewrites_only_the_status() {
        let old = "---\nstatus: proposed\ndate: 2026-01-01\n---\n\n# Old\n";
        assert_eq!(
            mark_superseded(old, 4, "0004-new.md").unwrap(),
            "---\nstatus: superseded by ADR-0004 (0004-new.md)\ndate: 2026-01-01\n---\n\n# Old\n"
        );
        assert!(mark_superseded("# no front matter\n", 4, "x.md").is_none());
    }
}
