//! Fixtures shared by the unit tests of several modules.

use crate::home::{Home, LineRef};

/// A fresh home holding one started debate (question "Q?", session `s-1`) and its line. The
/// directory is removed when the returned guard is dropped.
pub(crate) fn line_with_debate() -> (tempfile::TempDir, Home, LineRef) {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::init(dir.path()).unwrap();
    let setup = crate::model::options::Options {
        question: "Q?".into(),
        ..Default::default()
    }
    .into_setup()
    .unwrap();
    let started = crate::line::start::start(&home, setup, Some("s-1")).unwrap();
    (dir, home, started.line)
}

/// Cases per property: `PROPTEST_CASES` for a long run, else `default` (thousands in CI).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}
