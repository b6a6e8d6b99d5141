//! Fixtures shared by the unit tests of several modules.

use crate::home::{Home, LineRef};

/// A fresh home holding one started debate (question "Q?", session `s-1`) and its line. The
/// directory is removed when the returned guard is dropped.
pub(crate) fn line_with_debate() -> (tempfile::TempDir, Home, LineRef) {
    Debate::new().start()
}

/// A debate for a test, said the way a person starts one:
/// `Debate::new().rounds(3).session(S).phases(&["ADVOCATE one", "CRITIC one"]).start()`.
/// Unset, it is a 3-round analyst debate on "Q?", bound to session `s-1`, with no phase
/// recorded.
pub(crate) struct Debate {
    options: crate::model::options::Options,
    session: String,
    phases: Vec<String>,
}

impl Debate {
    pub(crate) fn new() -> Debate {
        Debate {
            options: crate::model::options::Options {
                question: "Q?".into(),
                ..Default::default()
            },
            session: "s-1".into(),
            phases: Vec::new(),
        }
    }

    pub(crate) fn question(mut self, question: &str) -> Debate {
        self.options.question = question.into();
        self
    }

    pub(crate) fn rounds(mut self, rounds: u32) -> Debate {
        self.options.rounds = Some(rounds);
        self
    }

    /// The Claude Code session the debate is bound to.
    pub(crate) fn session(mut self, session: &str) -> Debate {
        self.session = session.into();
        self
    }

    /// Texts recorded one after the other as the phases that come out, as the Stop hook would.
    pub(crate) fn phases(mut self, texts: &[&str]) -> Debate {
        self.phases.extend(texts.iter().map(|t| (*t).to_owned()));
        self
    }

    /// A fresh home with the debate started and its phases recorded; the directory is removed
    /// when the returned guard is dropped.
    pub(crate) fn start(self) -> (tempfile::TempDir, Home, LineRef) {
        let dir = tempfile::tempdir().unwrap();
        let (home, line) = self.start_at(dir.path());
        (dir, home, line)
    }

    /// The debate started in a project at `root` (made if missing), for a test that lays out
    /// more than the project around it.
    pub(crate) fn start_at(self, root: &std::path::Path) -> (Home, LineRef) {
        let home = Home::init(root).unwrap();
        let setup = self.options.into_setup().unwrap();
        let line = crate::line::start::start(&home, setup, Some(&self.session))
            .unwrap()
            .line;
        for text in &self.phases {
            crate::line::stop::record_turn(&home, &line, &self.session, text).unwrap();
        }
        (home, line)
    }
}

/// Cases per property: `PROPTEST_CASES` for a long run, else `default` (thousands in CI).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}
