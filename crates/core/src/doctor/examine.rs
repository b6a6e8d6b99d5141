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
            // A config that does not read stops every debate here: said first, with why.
            if let Err(e) = crate::model::config::Config::load(&home) {
                out.push(
                    Finding::new("record", "config", Level::Fail, e.to_string())
                        .hint("docs/options.md lists every key of .anvil/config.toml"),
                );
            }
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

    /// A committed config can say anything: doctor names what is wrong with it, and the rest
    /// of its checks run (the seats' timeout it would have added to no longer overflows).
    #[test]
    fn a_config_that_does_not_read_is_a_failure_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let anvil = dir.path().join(".anvil");
        std::fs::create_dir(&anvil).unwrap();
        std::fs::write(
            anvil.join("config.toml"),
            "[seats]\ntimeout = 18446744073709551615\n",
        )
        .unwrap();
        let env = Environment::for_test(dir.path().to_owned(), Some(dir.path().join("user")));
        let findings = examine(&env);
        let config = findings
            .iter()
            .find(|f| f.check == "config")
            .expect("a finding about the config");
        assert_eq!(config.level, Level::Fail);
        assert!(
            config.message.contains("from 1 to 86400"),
            "{}",
            config.message
        );
    }
}
