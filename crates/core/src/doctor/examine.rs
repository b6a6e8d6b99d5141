//! Every check run in turn.

use super::environment::Environment;
use super::finding::{Finding, Level};
use crate::home::Home;

/// Runs every check.
pub fn examine(env: &Environment) -> Vec<Finding> {
    let mut out = super::installation::check(env);
    out.extend(super::hosts::check(env));
    match Home::find(&env.cwd) {
        Some(home) => {
            out.extend(super::record::check(&home, env.now));
            out.extend(super::debates::check(&home));
        }
        None => out.push(
            Finding::new(
                "record",
                "home",
                Level::Note,
                "no .anvil here or in any parent directory: nothing recorded yet".into(),
            )
            .hint("`anvil init` creates it"),
        ),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_anvil_is_a_note_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::for_test(dir.path().to_owned(), Some(dir.path().join("user")));
        let findings = examine(&env);
        let home = findings
            .iter()
            .find(|f| f.area == "record" && f.check == "home")
            .expect("a finding about the home");
        assert_eq!(home.level, Level::Note);
        assert!(findings.iter().all(|f| f.area != "debates"));
    }
}
