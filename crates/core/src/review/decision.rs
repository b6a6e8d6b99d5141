//! A debate's conclusion as an architecture decision record in the code repository, in the
//! shape of MADR 4.0: YAML front matter (`status`, `date`, `decision-makers`), then the
//! context and problem statement, the considered options, the decision outcome with its
//! consequences, and what the debate left open, with links back to the record.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::model::markers::readable;
use crate::model::transcript::nest;

/// Where decision records go when neither `--dir` nor `.adr-dir` says otherwise.
pub const DEFAULT_DIR: &str = "docs/decisions";

/// Why a directory of decision records was refused.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error("cannot read .adr-dir: {0}")]
    Read(#[source] std::io::Error),
    #[error(".adr-dir must name one directory on one line; it holds {0} lines")]
    Lines(usize),
    #[error("{from} names a directory whose name holds a control character: {shown}")]
    OddName { from: &'static str, shown: String },
    #[error(
        "{from} names {shown}, which is outside the project: the project's own files only \
         choose a directory inside it"
    )]
    Outside { from: &'static str, shown: String },
}

/// Where a directory of decision records came from: the project's files (`.adr-dir`, or the
/// default), which a cloned repository controls and which must stay inside the project, or the
/// person's own `--dir`, which may point anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirSource {
    AdrDir,
    Default,
    Option,
}

impl DirSource {
    fn label(self) -> &'static str {
        match self {
            DirSource::AdrDir => ".adr-dir",
            DirSource::Default => DEFAULT_DIR,
            DirSource::Option => "--dir",
        }
    }
}

/// The directory of decision records, as given (relative to the project, or absolute for an
/// explicit `--dir`), and whether it lies outside the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordDir {
    pub path: PathBuf,
    pub outside: bool,
}

/// The directory decision records of `project` go to: `explicit` (`--dir`) when given, else
/// the one its `.adr-dir` names (the file adr-tools writes), else [`DEFAULT_DIR`].
///
/// `.adr-dir` is part of the repository, so whoever wrote the repository chose it: it must
/// name one relative path on one line that stays inside the project, also when the folders on
/// the way are symbolic links. `--dir` is the person's own choice and may leave the project
/// ([`RecordDir::outside`] says so). No directory name may hold a control character (a line
/// break in `.adr-dir` would otherwise become part of a folder's name).
pub fn directory(project: &Path, explicit: Option<&Path>) -> Result<RecordDir, DirError> {
    let (path, from) = match explicit {
        Some(dir) => (dir.to_owned(), DirSource::Option),
        None => match std::fs::read_to_string(project.join(".adr-dir")) {
            Ok(text) => {
                let text = text.trim();
                let lines = text.lines().count();
                if lines > 1 {
                    return Err(DirError::Lines(lines));
                }
                if text.is_empty() {
                    (PathBuf::from(DEFAULT_DIR), DirSource::Default)
                } else {
                    (PathBuf::from(text), DirSource::AdrDir)
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (PathBuf::from(DEFAULT_DIR), DirSource::Default)
            }
            Err(e) => return Err(DirError::Read(e)),
        },
    };
    let shown = || format!("{:?}", path.to_string_lossy());
    if path.to_string_lossy().chars().any(char::is_control) {
        return Err(DirError::OddName {
            from: from.label(),
            shown: shown(),
        });
    }
    let outside = !inside(project, &path);
    if outside && from != DirSource::Option {
        return Err(DirError::Outside {
            from: from.label(),
            shown: shown(),
        });
    }
    Ok(RecordDir { path, outside })
}

/// Does `path` (relative to `project`, or absolute) lie inside `project`? Lexically first (no
/// `..`), then through the links on the way: the deepest part of it that exists must resolve
/// to a place under the project.
pub fn inside(project: &Path, path: &Path) -> bool {
    use std::path::Component;
    if path.components().any(|c| matches!(c, Component::ParentDir)) {
        return false;
    }
    let Ok(root) = project.canonicalize() else {
        return false;
    };
    let mut existing = project.join(path);
    loop {
        match existing.canonicalize() {
            Ok(real) => return real.starts_with(&root),
            // A link that leads nowhere: where it would lead is not known to be inside.
            Err(_) if existing.symlink_metadata().is_ok() => return false,
            Err(_) => {
                if !existing.pop() {
                    return false;
                }
            }
        }
    }
}

/// The number the next record in `dir` takes: one more than the highest `NNNN-….md` there
/// (the first is 0001).
pub fn next_number(dir: &Path) -> std::io::Result<u32> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(1),
        Err(e) => return Err(e),
    };
    let mut highest = 0u32;
    for entry in entries {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = number_of(&name) {
            highest = highest.max(n);
        }
    }
    highest.checked_add(1).ok_or_else(|| {
        std::io::Error::other(format!(
            "{} holds a record numbered {highest}, the last number there is",
            dir.display()
        ))
    })
}

/// The number of a record's file name `NNNN-title.md`: four digits or more (`10000-….md`
/// follows `9999-….md`).
pub fn number_of(file_name: &str) -> Option<u32> {
    let digits = file_name.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &file_name[digits..];
    (digits >= 4 && rest.starts_with('-') && rest.ends_with(".md"))
        .then(|| file_name[..digits].parse().ok())
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
    /// The points still open at the end, as the synthesis commit recorded them.
    pub dissent: Vec<crate::model::positions::OpenPoint>,
    /// The consensus score the synthesis commit recorded.
    pub consensus: Option<crate::model::positions::Share>,
    /// The blind vote before the synthesis (`--vote`), in words: each ballot, then the result.
    pub vote: Vec<String>,
}

#[derive(Serialize)]
struct FrontMatter<'a> {
    status: &'a str,
    date: &'a str,
    #[serde(rename = "decision-makers")]
    decision_makers: &'a [String],
}

/// The record as markdown with YAML front matter. The debaters' texts read as people read them
/// (tags as words, see [`crate::model::markers::readable`]), their headings under the record's.
pub fn render(d: &Decision) -> String {
    let synthesis = readable(&d.synthesis);
    let positions: Vec<Position> = d
        .positions
        .iter()
        .map(|p| Position {
            by: p.by.clone(),
            text: readable(&p.text).into_owned(),
        })
        .collect();
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
    for p in &positions {
        out.push_str(&format!("* {}: {}\n", p.by, gist(&p.text)));
    }
    out.push_str("\n## Decision Outcome\n\n");
    if let Some(c) = d.consensus {
        out.push_str(&format!(
            "Consensus score of the debaters' final positions: {c} (computed by anvil from \
             their stances and confidences, not stated by a model).\n\n"
        ));
    }
    if !d.vote.is_empty() {
        out.push_str(
            "Before the synthesis the debaters ranked each other's final statements blind \
             (names removed, their own left out):\n\n",
        );
        for line in &d.vote {
            out.push_str(&format!("* {}\n", one_line(line)));
        }
        out.push('\n');
    }
    out.push_str(&nest(synthesis.trim(), 2));
    out.push_str("\n\n### Consequences\n\n");
    match section(&synthesis, &["consequence"]) {
        Some(text) => out.push_str(&text),
        None => out.push_str(
            "* The synthesis above names none on their own; its conditions and risks stand for them.",
        ),
    }
    out.push_str("\n\n## Pros and Cons of the Options\n\n");
    for p in &positions {
        out.push_str(&format!("### {}\n\n{}\n\n", p.by, nest(p.text.trim(), 3)));
    }
    out.push_str("## More Information\n\n### Dissent left open\n\n");
    if !d.dissent.is_empty() {
        out.push_str("Points a debater raised that were never answered or conceded, as the debate's record holds them:\n\n");
        for (i, p) in d.dissent.iter().enumerate() {
            out.push_str(&format!(
                "* {} ({}): {}\n",
                crate::model::positions::OpenPoint::label(i),
                one_line(&p.seat),
                one_line(&p.text)
            ));
        }
        out.pop();
    } else {
        match section(
            &synthesis,
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
    (!body.is_empty()).then(|| nest(&body, 3).into_owned())
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
            dissent: Vec::new(),
            consensus: None,
            vote: Vec::new(),
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

    /// Past 9999 the numbers go on with five digits, and the files sort as numbers.
    #[test]
    fn numbering_goes_on_past_9999() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("9999-last-of-four.md"), "").unwrap();
        assert_eq!(next_number(dir.path()).unwrap(), 10000);
        let name = file_name(10000, "Five digits");
        assert_eq!(name, "10000-five-digits.md");
        std::fs::write(dir.path().join(&name), "").unwrap();
        assert_eq!(number_of(&name), Some(10000));
        assert_eq!(next_number(dir.path()).unwrap(), 10001);
        for not_a_record in [
            "123-x.md",
            "99999999999-x.md",
            "0001x.md",
            "0001-x.txt",
            "-0001-x.md",
        ] {
            assert_eq!(number_of(not_a_record), None, "{not_a_record}");
        }
        std::fs::write(dir.path().join(format!("{}-max.md", u32::MAX)), "").unwrap();
        let full = next_number(dir.path()).unwrap_err();
        assert!(full.to_string().contains("the last number"), "{full}");
    }

    /// `.adr-dir` (the repository's choice) stays inside the project, links included; `--dir`
    /// (the person's) may leave it and says so; nobody names a folder with a control character.
    #[test]
    fn the_record_directory_is_confined_to_the_project_unless_given_explicitly() {
        let project = tempfile::tempdir().unwrap();
        let p = project.path();
        let adr_dir = |text: &str| {
            std::fs::write(p.join(".adr-dir"), text).unwrap();
            directory(p, None)
        };
        assert_eq!(
            directory(p, None).unwrap(),
            RecordDir {
                path: DEFAULT_DIR.into(),
                outside: false
            }
        );
        assert_eq!(adr_dir("doc/arch\n").unwrap().path, Path::new("doc/arch"));
        assert_eq!(adr_dir("\n").unwrap().path, Path::new(DEFAULT_DIR));
        for escape in ["/tmp/evil", "../../evil", "doc/../../evil"] {
            let err = adr_dir(escape).unwrap_err();
            assert!(
                matches!(
                    err,
                    DirError::Outside {
                        from: ".adr-dir",
                        ..
                    }
                ),
                "{escape}: {err}"
            );
        }
        let err = adr_dir("doc/arch\n/tmp/evil\n").unwrap_err();
        assert!(matches!(err, DirError::Lines(2)), "{err}");
        let err = adr_dir("doc/a\u{1b}]0;x\u{7}b").unwrap_err();
        assert!(matches!(err, DirError::OddName { .. }), "{err}");
        assert_eq!(
            adr_dir(&p.join("doc/arch").to_string_lossy()).unwrap(),
            RecordDir {
                path: p.join("doc/arch"),
                outside: false
            },
            "an absolute path inside the project is inside"
        );
        let elsewhere = tempfile::tempdir().unwrap();
        // A link committed in the repository leads outside: refused, also for the default.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(elsewhere.path(), p.join("docs")).unwrap();
            std::fs::remove_file(p.join(".adr-dir")).unwrap();
            let err = directory(p, None).unwrap_err();
            assert!(
                matches!(
                    err,
                    DirError::Outside {
                        from: DEFAULT_DIR,
                        ..
                    }
                ),
                "{err}"
            );
            assert!(matches!(adr_dir("docs/adr"), Err(DirError::Outside { .. })));
            std::os::unix::fs::symlink(p.join("nowhere"), p.join("dangling")).unwrap();
            assert!(matches!(
                adr_dir("dangling/adr"),
                Err(DirError::Outside { .. })
            ));
            std::fs::remove_file(p.join(".adr-dir")).unwrap();
        }
        // --dir: anywhere, said; never a control character.
        let out = directory(p, Some(elsewhere.path())).unwrap();
        assert!(out.outside);
        assert!(directory(p, Some(Path::new("../x"))).unwrap().outside);
        assert!(!directory(p, Some(Path::new("records"))).unwrap().outside);
        assert!(matches!(
            directory(p, Some(Path::new("a\nb"))),
            Err(DirError::OddName { from: "--dir", .. })
        ));
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
