//! Where the debates that are not over stand, and who drives them.

use super::finding::{Finding, Level};
use crate::home::Home;
use crate::model::state::{State, Status};

/// The running debates' findings.
pub(super) fn check(home: &Home) -> Vec<Finding> {
    let mut out = Vec::new();
    for line in home.live_lines().unwrap_or_default() {
        let Ok(state) = State::load(&home.state_path(&line)) else {
            continue; // reported under the record
        };
        if state.progress.status.is_over() {
            continue;
        }
        let sessions = home.sessions_of(&line).unwrap_or_default();
        let pending = home.pending_path(&line).exists();
        let finding = match (state.progress.status, sessions.as_slice(), pending) {
            (Status::WaitingForInput, _, _) => Finding::new(
                "debates",
                "active",
                Level::Note,
                format!(
                    "{line}: {}, waiting for your answer to: {}",
                    state.standing(),
                    state.question.as_ref().map_or("", |q| q.text.as_str())
                ),
            )
            .hint("`anvil answer \"…\"`"),
            (_, [], true) => Finding::new(
                "debates",
                "active",
                Level::Note,
                format!(
                    "{line}: {}; the next Claude Code session that stops here takes it",
                    state.standing()
                ),
            ),
            (_, [], false) => Finding::new(
                "debates",
                "active",
                Level::Warn,
                format!("{line}: {}; no session drives it", state.standing()),
            )
            .hint(format!("`anvil resume {line}` hands it to a session")),
            (_, sessions, _) => Finding::new(
                "debates",
                "active",
                Level::Ok,
                format!(
                    "{line}: {}; driven by session {}",
                    state.standing(),
                    sessions.join(", ")
                ),
            ),
        };
        out.push(finding);
    }
    if out.is_empty() {
        out.push(Finding::new(
            "debates",
            "active",
            Level::Ok,
            "no active debates".into(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::line_with_debate;

    #[test]
    fn a_debate_driven_by_a_session_is_fine_and_an_orphan_is_a_warning() {
        let (_dir, home, line) = line_with_debate();
        let found = check(&home);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].level, Level::Ok);
        assert!(
            found[0].message.contains("driven by session s-1"),
            "{}",
            found[0].message
        );

        for session in home.sessions_of(&line).unwrap() {
            std::fs::remove_file(home.sessions_dir().join(session)).unwrap();
        }
        let found = check(&home);
        assert_eq!(found[0].level, Level::Warn);
        assert!(
            found[0].message.contains("no session drives it"),
            "{}",
            found[0].message
        );
        assert!(
            found[0]
                .hint
                .as_deref()
                .unwrap()
                .contains(&format!("anvil resume {line}"))
        );
    }

    #[test]
    fn a_debate_waiting_for_an_answer_names_the_question() {
        let (_dir, home, line) = line_with_debate();
        let path = home.state_path(&line);
        let mut state = State::load(&path).unwrap();
        state.progress.status = Status::WaitingForInput;
        state.question = Some(crate::model::state::Question {
            text: "Which budget?".into(),
            answer: None,
        });
        std::fs::write(&path, state.to_markdown()).unwrap();
        let found = check(&home);
        assert_eq!(found[0].level, Level::Note);
        assert!(
            found[0].message.contains("Which budget?"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn no_debates_is_one_fine_finding() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let found = check(&home);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].message, "no active debates");
    }
}
