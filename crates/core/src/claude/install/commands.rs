//! The commands step: anvil's slash commands as files in `.claude/commands/`, and their
//! removal. anvil knows its own files by a frontmatter key; a file of the user's with the same
//! name is left alone.

use std::path::Path;

use super::{Changes, InstallError, write_in_place};

const MARKER_KEY: &str = "anvil-managed";

/// The slash commands anvil adds, as (file name, contents). Their shell lines carry no user
/// text: the arguments arrive through the UserPromptExpansion hook (see [`crate::claude::slash`]).
pub fn commands() -> Vec<(&'static str, String)> {
    let file = |description: &str, hint: Option<&str>, shell: &str, after: &str| {
        let mut text = format!("---\n{MARKER_KEY}: true\ndescription: {description}\n");
        if let Some(hint) = hint {
            // Single-quoted YAML: the hint holds double quotes, `[` and `|`.
            text.push_str(&format!("argument-hint: '{}'\n", hint.replace('\'', "''")));
        }
        let program = shell
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        text.push_str(&format!(
            "allowed-tools: Bash({program}:*)\n---\n!`{shell}`\n"
        ));
        if !after.is_empty() {
            text.push_str(&format!("\n{after}\n"));
        }
        text
    };
    vec![
        (
            "anvil.md",
            file(
                "Start an anvil debate on a question",
                Some(
                    "\"QUESTION\" [--rounds N] [--mode analyst|philosopher|devils-advocate|stakeholders] [--interactive]",
                ),
                "anvil slash start",
                "",
            ),
        ),
        (
            "anvil-status.md",
            file(
                "Show where anvil debates stand",
                None,
                "anvil status --slash",
                "Show the status above to the user as it is, without commentary.",
            ),
        ),
        (
            "anvil-cancel.md",
            file(
                "Cancel the anvil debate this session is running",
                Some("[DEBATE[@LINE]]"),
                "anvil slash cancel",
                "Tell the user the result above in one sentence, and stop debating.",
            ),
        ),
        (
            "anvil-steer.md",
            file(
                "Queue steering for the next phase of the running anvil debate",
                Some("TEXT"),
                "anvil slash steer",
                "Acknowledge the steering above in one sentence; it reaches the debate at the next phase.",
            ),
        ),
    ]
}

/// Writes each command file that is missing or differs, unless a file of that name is not
/// anvil's.
pub(super) fn write(claude: &Path, changes: &mut Changes) -> Result<(), InstallError> {
    let commands_dir = claude.join("commands");
    for (name, text) in commands() {
        let path = commands_dir.join(name);
        match crate::fsutil::read_optional(&path).map_err(|source| InstallError::Read {
            path: path.clone(),
            source,
        })? {
            Some(existing) if existing == text => {}
            Some(existing) if !is_ours(&existing) => {
                changes
                    .notes
                    .push(format!("left {} alone: it is not anvil's", path.display()));
            }
            _ => {
                write_in_place(&path, text.as_bytes())?;
                changes
                    .lines
                    .push(format!("wrote /{}", name.trim_end_matches(".md")));
            }
        }
    }
    Ok(())
}

/// Removes each command file that is anvil's.
pub(super) fn remove(claude: &Path, changes: &mut Changes) -> Result<(), InstallError> {
    for (name, _) in commands() {
        let path = claude.join("commands").join(name);
        if let Some(text) =
            crate::fsutil::read_optional(&path).map_err(|source| InstallError::Read {
                path: path.clone(),
                source,
            })?
            && is_ours(&text)
        {
            std::fs::remove_file(&path).map_err(|source| InstallError::Write {
                path: path.clone(),
                source,
            })?;
            changes
                .lines
                .push(format!("removed /{}", name.trim_end_matches(".md")));
        }
    }
    Ok(())
}

fn is_ours(command_file: &str) -> bool {
    command_file
        .strip_prefix("---\n")
        .and_then(|rest| rest.split("\n---").next())
        .is_some_and(|front| {
            front
                .lines()
                .any(|l| l.trim() == format!("{MARKER_KEY}: true"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_its_commands_once_and_removes_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path();
        let theirs = claude.join("commands/anvil-status.md");
        std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
        std::fs::write(&theirs, "my own status command\n").unwrap();
        let mine = claude.join("commands/deploy.md");
        std::fs::write(&mine, "deploy\n").unwrap();

        let mut changes = Changes::default();
        write(claude, &mut changes).unwrap();
        assert_eq!(
            changes.lines,
            ["wrote /anvil", "wrote /anvil-cancel", "wrote /anvil-steer"]
        );
        assert_eq!(changes.notes.len(), 1, "{:?}", changes.notes);
        let mut again = Changes::default();
        write(claude, &mut again).unwrap();
        assert!(again.lines.is_empty());

        let mut removed = Changes::default();
        remove(claude, &mut removed).unwrap();
        assert_eq!(removed.lines.len(), 3);
        let left: Vec<_> = std::fs::read_dir(claude.join("commands"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(left, ["anvil-status.md", "deploy.md"]);
        assert_eq!(
            std::fs::read_to_string(&theirs).unwrap(),
            "my own status command\n"
        );
    }

    #[test]
    fn every_command_file_is_marked_as_anvils() {
        for (name, text) in commands() {
            assert!(is_ours(&text), "{name}");
        }
        assert!(!is_ours("---\ndescription: x\n---\nanvil-managed: true\n"));
    }
}
