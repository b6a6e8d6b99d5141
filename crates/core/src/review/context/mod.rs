//! The material a debate is about: code (`--context`, `--diff`) and earlier results
//! (`--follow-up`, `--versus`), gathered once by `anvil start`, never by the Stop hook.
//!
//! It is kept twice: file by file under `context/` in the debate's first commit, so a replay
//! or a branch sees exactly what the debaters saw, and as one bundle (`context.md` in the
//! debate's folder) that full prompts carry and later prompts point to. The bundle is bounded:
//! what does not fit is cut or left out, and its index says so.

mod diff;

use std::path::{Component, Path, PathBuf};

use crate::home::Home;
use crate::model::state::Inputs;
use diff::{pull_request_diff, uncommitted_diff};

/// The most material a debate carries, in bytes (about 30k tokens).
pub const MAX_BYTES: usize = 128 * 1024;
/// A file cut to fit keeps at least this much; below it the file is left out instead.
const MIN_PIECE: usize = 2 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--{option} {name}: {message}")]
    Source {
        option: &'static str,
        name: String,
        message: String,
    },
    /// The record could not be read for an earlier debate named by `--follow-up`/`--versus`.
    #[error("--{option} {name}: {source}")]
    Record {
        option: &'static str,
        name: String,
        #[source]
        source: crate::record::store::RecordError,
    },
    /// The earlier debate's line could not be read back from the record.
    #[error("--{option} {name}: {source}")]
    History {
        option: &'static str,
        name: String,
        #[source]
        source: crate::review::history::HistoryError,
    },
    /// What went wrong making the diff: gix's error, or anvil's own words.
    #[error("--diff: {0}")]
    Diff(Box<dyn std::error::Error + Send + Sync>),
    /// What went wrong fetching the pull request: git's or gix's error, or anvil's own words.
    #[error("--pr: {0}")]
    PullRequest(Box<dyn std::error::Error + Send + Sync>),
    #[error("--context {path}: {message}")]
    Walk { path: String, message: String },
}

impl ContextError {
    fn diff(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ContextError {
        ContextError::Diff(e.into())
    }

    fn pr(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ContextError {
        ContextError::PullRequest(e.into())
    }
}

/// The debate's material, ready to record and to show.
#[derive(Debug, Clone, Default)]
pub struct Material {
    /// Files for the first commit, by path in its tree (all under `context/`).
    pub files: Vec<(String, Vec<u8>)>,
    /// The bundle that prompts carry.
    pub bundle: String,
    /// What was cleaned of credentials on the way in (each piece as it was read).
    pub intake: crate::model::secrets::Intake,
}

/// Where the bundle of `debate` lives: next to its lines, shared by all of them.
pub(crate) fn bundle_path(home: &Home, debate: &str) -> PathBuf {
    home.context_path(debate)
}

/// One piece of material before the budget is applied.
struct Piece {
    /// Path under `context/` in the record.
    record_path: String,
    /// Heading in the bundle.
    title: String,
    /// Fence language hint.
    lang: String,
    text: String,
}

/// The earlier results that `--follow-up` and `--versus` name, read by
/// [`crate::review::earlier::read`]: each as (what was named, its text).
#[derive(Debug, Clone, Default)]
pub struct Earlier {
    pub follow_up: Option<(String, String)>,
    pub versus: Vec<(String, String)>,
    /// The recalled conclusions (`inputs.recalled`), as one markdown text.
    pub recalled: Option<String>,
}

/// Gathers everything `inputs` names, with the `earlier` results it names already read.
/// Relative paths are found from `cwd`; file names in the record are relative to the project
/// when the file is inside it.
pub fn gather(
    home: &Home,
    cwd: &Path,
    inputs: &Inputs,
    earlier: Earlier,
    budget: usize,
) -> Result<Material, ContextError> {
    if inputs.is_empty() {
        return Ok(Material::default());
    }
    let mut pieces = Vec::new();
    let mut skipped = Vec::new();
    if let Some((source, text)) = earlier.follow_up {
        pieces.push(Piece {
            record_path: "follow-up.md".into(),
            title: format!("Previous report ({source})"),
            lang: "markdown".into(),
            text,
        });
    }
    if let Some(text) = earlier.recalled {
        pieces.push(Piece {
            record_path: "recalled.md".into(),
            title: "Earlier conclusions of this project, recalled for this question".into(),
            lang: "markdown".into(),
            text,
        });
    }
    for (label, (source, text)) in ["a", "b"].iter().zip(earlier.versus) {
        pieces.push(Piece {
            record_path: format!("versus-{label}.md"),
            title: format!("Result {} ({source})", label.to_uppercase()),
            lang: "markdown".into(),
            text,
        });
    }
    if inputs.diff {
        let patch = uncommitted_diff(home.project())?;
        pieces.push(Piece {
            record_path: "diff.patch".into(),
            title: "Uncommitted changes (git diff against HEAD)".into(),
            lang: "diff".into(),
            text: if patch.is_empty() {
                "(no uncommitted changes)\n".into()
            } else {
                patch
            },
        });
    }
    if let Some(n) = inputs.pr {
        let pr = pull_request_diff(home.project(), n)?;
        pieces.push(Piece {
            record_path: format!("pr-{n}.patch"),
            title: format!(
                "Pull request #{n} ({} {} at {}, against {} from their merge base {})",
                pr.remote,
                pr.reference,
                &pr.head.to_string()[..12],
                pr.base_branch,
                &pr.merge_base.to_string()[..12]
            ),
            lang: "diff".into(),
            text: if pr.patch.is_empty() {
                "(the pull request changes nothing)\n".into()
            } else {
                pr.patch
            },
        });
    }
    let mut seen = std::collections::HashSet::new();
    for given in &inputs.context {
        for path in walk(cwd, given)? {
            if !seen.insert(path.canonicalize().unwrap_or_else(|_| path.clone())) {
                continue;
            }
            let bytes = std::fs::read(&path).map_err(|source| ContextError::Read {
                path: path.clone(),
                source,
            })?;
            let name = display_name(home.project(), cwd, &path);
            match text_of(bytes) {
                Some(text) => pieces.push(Piece {
                    record_path: format!("files/{name}"),
                    lang: lang_of(&name),
                    title: name,
                    text,
                }),
                None => skipped.push(format!("{name} (binary)")),
            }
        }
    }
    // Each piece enters anvil here: cleaned before the budget cuts it (a private key cut in
    // half is still one) and before it is recorded, bundled or shown.
    let mut intake = crate::model::secrets::Intake::new(home.root());
    for piece in &mut pieces {
        let place = match piece.record_path.strip_prefix("files/") {
            Some(name) => format!("--context {name}"),
            None => piece.title.clone(),
        };
        intake.clean_in_place(&place, &mut piece.text);
    }
    let mut material = assemble(pieces, skipped, budget);
    material.intake = intake;
    Ok(material)
}

/// Applies the budget in order (earlier results first, then the diff, then files), and writes
/// the index that says what was cut.
fn assemble(pieces: Vec<Piece>, mut skipped: Vec<String>, budget: usize) -> Material {
    let mut left = budget;
    let mut included = Vec::new();
    let mut cut = Vec::new();
    for mut piece in pieces {
        let size = piece.text.len();
        if size <= left {
            left -= size;
        } else if left >= MIN_PIECE {
            let keep = floor_line(&piece.text, left);
            piece.text.truncate(keep);
            piece.text.push_str(&format!(
                "\n[… cut by anvil: {keep} of {size} bytes kept]\n"
            ));
            cut.push(format!("{} (cut to {keep} of {size} bytes)", piece.title));
            left = 0;
        } else {
            skipped.push(format!(
                "{} ({size} bytes, over the size limit)",
                piece.title
            ));
            continue;
        }
        included.push(piece);
    }
    let mut index = String::from("# Material given to the debaters\n\n");
    for p in &included {
        index.push_str(&format!("- {} — `context/{}`\n", p.title, p.record_path));
    }
    if !cut.is_empty() || !skipped.is_empty() {
        index.push_str(&format!(
            "\nThe material is limited to {budget} bytes; anvil cut or left out:\n"
        ));
        for c in cut.iter().chain(&skipped) {
            index.push_str(&format!("- {c}\n"));
        }
    }
    let mut bundle = index.clone();
    let mut files = vec![("context/README.md".to_owned(), index.into_bytes())];
    for p in included {
        let fence = fence_for(&p.text);
        bundle.push_str(&format!(
            "\n## {}\n\n{fence}{}\n{}{}{fence}\n",
            p.title,
            p.lang,
            p.text,
            if p.text.ends_with('\n') { "" } else { "\n" }
        ));
        files.push((format!("context/{}", p.record_path), p.text.into_bytes()));
    }
    Material {
        files,
        bundle,
        intake: Default::default(),
    }
}

/// The largest prefix of `text` of at most `max` bytes that ends at a line break (or a char
/// boundary, for a text without one).
fn floor_line(text: &str, max: usize) -> usize {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(i) if i > 0 => i + 1,
        _ => end,
    }
}

/// A backtick fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn lang_of(name: &str) -> String {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_owned()
}

/// Text, or `None` for a binary file (a NUL byte, or not UTF-8).
fn text_of(bytes: Vec<u8>) -> Option<String> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// The files of one `--context` argument, sorted: a file as it is (even if ignored, since it
/// was named), a directory walked with `.gitignore`, `.ignore` and hidden files respected.
fn walk(cwd: &Path, given: &str) -> Result<Vec<PathBuf>, ContextError> {
    let root = cwd.join(given);
    if root.is_file() {
        return Ok(vec![root]);
    }
    if !root.is_dir() {
        return Err(ContextError::Walk {
            path: given.to_owned(),
            message: "no such file or directory".into(),
        });
    }
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(&root)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".anvil" && e.file_name() != ".git")
        .build();
    for entry in walker {
        let entry = entry.map_err(|e| ContextError::Walk {
            path: given.to_owned(),
            message: e.to_string(),
        })?;
        if entry.file_type().is_some_and(|t| t.is_file()) {
            out.push(entry.into_path());
        }
    }
    out.sort();
    Ok(out)
}

/// `src/lib.rs` for a file in the project; otherwise its path with only normal components.
fn display_name(project: &Path, cwd: &Path, path: &Path) -> String {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
    let path = canonical(path);
    let rel = path
        .strip_prefix(canonical(project))
        .or_else(|_| path.strip_prefix(canonical(cwd)))
        .unwrap_or(&path);
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(name: &str, text: &str) -> Piece {
        Piece {
            record_path: format!("files/{name}"),
            title: name.into(),
            lang: String::new(),
            text: text.into(),
        }
    }

    #[test]
    fn budget_cuts_at_a_line_and_says_what_was_cut() {
        let big = "line of text\n".repeat(400); // 5200 bytes
        let m = assemble(
            vec![
                piece("a.rs", "fn a() {}\n"),
                piece("b.rs", &big),
                piece("c.rs", "c\n"),
            ],
            vec!["logo.png (binary)".into()],
            4096,
        );
        let paths: Vec<&str> = m.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "context/README.md",
                "context/files/a.rs",
                "context/files/b.rs"
            ]
        );
        let b = String::from_utf8(m.files[2].1.clone()).unwrap();
        assert!(b.contains("[… cut by anvil"), "{b}");
        assert!(b.lines().rev().nth(1).unwrap().is_empty() || b.contains("line of text\n\n["));
        assert!(m.bundle.contains("b.rs (cut to"), "{}", m.bundle);
        assert!(
            m.bundle.contains("c.rs (2 bytes, over the size limit)"),
            "{}",
            m.bundle
        );
        assert!(m.bundle.contains("logo.png (binary)"), "{}", m.bundle);
    }

    #[test]
    fn fences_outgrow_backticks_in_the_text() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```rust\n``` b"), "````");
    }

    #[test]
    fn binary_files_are_not_text() {
        assert!(text_of(b"a\0b".to_vec()).is_none());
        assert!(text_of(vec![0xff, 0xfe]).is_none());
        assert_eq!(text_of(b"ok".to_vec()).as_deref(), Some("ok"));
    }
}
