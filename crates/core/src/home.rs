//! `.anvil/`, anvil's home in a project: where things live, which session drives which line,
//! and the queue of steering waiting for the next stop.
//!
//! Everything here is plain files so that the Stop hook can answer "is there anything for this
//! session?" with a couple of `stat` calls, and so that people can look inside. [`Home`] names
//! every path under `.anvil/`; no other module joins a name onto its root or a line's folder.
//!
//! | path under `.anvil/` | what it holds | written by |
//! |---|---|---|
//! | `config.toml` | the project's defaults ([`Home::config_path`]) | the person |
//! | `prompts/PATH` | overrides of the built-in prompts ([`Home::prompts_dir`]) | the person, `anvil prompts eject` |
//! | `.gitignore` | keeps the local state below out of the project's own git | `anvil init` |
//! | `record/` | the bare git repository of every debate ([`Home::record_dir`]); what is inside is git's layout (and `record/`'s own index of recent debates) | `record/` |
//! | `search.sqlite` | the full-text index, a cache of the record ([`Home::search_index`]) | the command line |
//! | `reports/DEBATE[-LINE].md` | final reports, unless an output is given ([`Home::report_path`]) | `review/report` |
//! | `debates/DEBATE/context.md` | the material the debate is about ([`Home::context_path`]) | `line/start` |
//! | `debates/DEBATE/LINE/` | one line's live files ([`Home::line_dir`]) | `line/` |
//! | `  state.md`, `transcript.md` | the line's state and its transcript | the line's transactions |
//! | `  incoming.md` | a phase's text until it is recorded ([`Home::incoming_path`]) | the Stop hook |
//! | `  steering/NNN.md` | steering queued for the next phase ([`Home::steering_dir`]) | `anvil steer`, the web room |
//! | `  .lock`, `ref-intent` | the line's lock, the commit its ref is about to name | the line's transactions |
//! | `  asking` | held locked while `anvil ask` waits ([`Home::asking_path`]) | `anvil ask` |
//! | `  headless.json`, `headless.lock` | the line's `anvil run`, and its lock | `anvil run` |
//! | `  seat.lock` | held while a seat's agent plays the line's phase ([`Home::seat_lock_path`]) | `seat` |
//! | `sessions/SESSION` | the line a Claude Code session drives | binding, claiming |
//! | `pending/DEBATE@LINE` | a line waiting for a session to claim it | start, branch, resume |
//! | `streaks/SESSION` | Stop-hook continuations in a row ([`Home::streak_path`]) | the Stop hook |
//! | `inbox/SESSION/` | a session's registration and messages ([`Home::inbox`]) | SessionStart, the web room |
//! | `slash/SESSION.COMMAND` | a slash command's arguments in transit ([`Home::slash_path`]) | UserPromptExpansion |
//! | `active/DEBATE@LINE` | the index of lines that can still move ([`Home::active_dir`]) | `line/active` |
//! | `runs/DEBATE@LINE-SECONDS.log` | output of runs started from the web room ([`Home::runs_dir`]) | `anvil serve` |

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::fsutil::{self, remove_if_present};

pub const DIR: &str = ".anvil";

/// One line of one debate: `DEBATE@LINE`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineRef {
    pub debate: String,
    pub line: String,
}

impl LineRef {
    pub fn new(debate: impl Into<String>, line: impl Into<String>) -> LineRef {
        LineRef {
            debate: debate.into(),
            line: line.into(),
        }
    }

    /// The line, when both names are ones a ref may hold.
    pub fn valid(debate: &str, line: &str) -> Option<LineRef> {
        use crate::record::store::valid_name;
        (valid_name(debate) && valid_name(line)).then(|| LineRef::new(debate, line))
    }

    /// Parses `DEBATE@LINE` or `DEBATE` (the main line).
    pub fn parse(text: &str) -> Option<LineRef> {
        let text = text.trim();
        let (debate, line) = text.split_once('@').unwrap_or((text, "main"));
        LineRef::valid(debate, line)
    }
}

impl fmt::Display for LineRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.debate, self.line)
    }
}

#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

const GITIGNORE: &str = "# anvil's record and live files stay out of the project's own history.\n# Share debates with `git --git-dir .anvil/record push`; commit reports/ if you like.\nrecord/\ndebates/\nsessions/\nstreaks/\npending/\ninbox/\nactive/\nruns/\nsearch.sqlite*\n";

impl Home {
    /// Finds `.anvil` in `start` or the nearest ancestor that has one.
    pub fn find(start: &Path) -> Option<Home> {
        start
            .ancestors()
            .map(|dir| dir.join(DIR))
            .find(|candidate| candidate.is_dir())
            .map(|root| Home { root })
    }

    /// Creates (or completes) `.anvil` in `project`; existing files are left as they are.
    pub fn init(project: &Path) -> io::Result<Home> {
        let root = project.join(DIR);
        std::fs::create_dir_all(&root)?;
        let gitignore = root.join(".gitignore");
        if !gitignore.exists() {
            fsutil::write_atomic(&gitignore, GITIGNORE.as_bytes())?;
        }
        Ok(Home { root })
    }
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The home whose root (`.anvil`) is `root`, known already (a path kept from an earlier
    /// [`Home::find`]).
    pub(crate) fn at(root: &Path) -> Home {
        Home {
            root: root.to_owned(),
        }
    }

    /// The project the home belongs to.
    pub fn project(&self) -> &Path {
        self.root.parent().unwrap_or(Path::new("."))
    }

    /// The home whose record is `record` (`.anvil/record`), if it is one.
    pub fn of_record(record: &Path) -> Option<Home> {
        record
            .parent()
            .and_then(Home::find)
            .filter(|home| home.record_dir() == record)
    }

    /// The project's defaults (`config.toml`).
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    pub fn record_dir(&self) -> PathBuf {
        self.root.join("record")
    }

    /// The full-text index of every recorded phase: a cache of the record the command line
    /// keeps (never pushed, never written by the hook).
    pub fn search_index(&self) -> PathBuf {
        self.root.join("search.sqlite")
    }

    pub fn prompts_dir(&self) -> PathBuf {
        self.root.join("prompts")
    }

    /// Where the report of `line` goes when no output is given.
    pub(crate) fn report_path(&self, line: &LineRef) -> PathBuf {
        let name = if line.line == "main" {
            format!("{}.md", line.debate)
        } else {
            format!("{}-{}.md", line.debate, line.line)
        };
        self.root.join("reports").join(name)
    }

    pub fn debates_dir(&self) -> PathBuf {
        self.root.join("debates")
    }

    /// The folder of `debate`: its lines, and what they share.
    pub fn debate_dir(&self, debate: &str) -> PathBuf {
        self.debates_dir().join(debate)
    }

    /// The material of `debate` that later prompts point to, shared by all its lines.
    pub(crate) fn context_path(&self, debate: &str) -> PathBuf {
        self.debate_dir(debate).join("context.md")
    }

    pub fn line_dir(&self, line: &LineRef) -> PathBuf {
        self.debate_dir(&line.debate).join(&line.line)
    }

    pub fn state_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("state.md")
    }

    pub fn transcript_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("transcript.md")
    }

    /// The phase text being recorded: written before anything else happens to it, removed
    /// once the phase is recorded, so it is there only when recording failed.
    pub(crate) fn incoming_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("incoming.md")
    }

    /// The queue of steering for the line's next phase, one numbered file each.
    pub fn steering_dir(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("steering")
    }

    /// The file whose `flock` is the line's lock ([`Home::lock_line`]).
    pub(crate) fn line_lock_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join(".lock")
    }

    /// The commit a transaction is about to point the line's ref at (see `line::transaction`).
    pub(crate) fn ref_intent_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("ref-intent")
    }

    /// The file an `anvil ask` holds locked while it waits for the answer.
    pub(crate) fn asking_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("asking")
    }

    /// The line's last `anvil run`, and the lock a living run holds.
    pub fn headless_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("headless.json")
    }

    pub(crate) fn headless_lock_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("headless.lock")
    }

    /// The lock a process holds while a seat's agent plays the line's phase.
    pub(crate) fn seat_lock_path(&self, line: &LineRef) -> PathBuf {
        self.line_dir(line).join("seat.lock")
    }

    /// One file per Claude Code session that drives a line, naming the line.
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    fn session_path(&self, session: &str) -> Option<PathBuf> {
        valid_session(session).then(|| self.sessions_dir().join(session))
    }

    fn pending_dir(&self) -> PathBuf {
        self.root.join("pending")
    }

    /// The file that offers `line` to the next session that stops.
    pub(crate) fn pending_path(&self, line: &LineRef) -> PathBuf {
        self.pending_dir().join(line.to_string())
    }

    /// How many Stop-hook continuations in a row `session` has had.
    pub(crate) fn streak_path(&self, session: &str) -> Option<PathBuf> {
        valid_session(session).then(|| self.root.join("streaks").join(session))
    }

    /// The inboxes of every session that started here, one folder each.
    pub fn inboxes_dir(&self) -> PathBuf {
        self.root.join("inbox")
    }

    /// The inbox of `session`, when it is a session id.
    pub fn inbox(&self, session: &str) -> Option<Inbox> {
        valid_session(session).then(|| Inbox {
            dir: self.inboxes_dir().join(session),
        })
    }

    /// Arguments of slash commands on their way from the hook to `anvil slash`.
    pub fn slash_dir(&self) -> PathBuf {
        self.root.join("slash")
    }

    /// Where the hook leaves the arguments of `session`'s slash command `command`.
    pub(crate) fn slash_path(&self, session: &str, command: &str) -> Option<PathBuf> {
        valid_session(session).then(|| self.slash_dir().join(format!("{session}.{command}")))
    }

    /// The index of lines that can still move (see `line::active`).
    pub(crate) fn active_dir(&self) -> PathBuf {
        self.root.join("active")
    }

    /// The logs of runs started from the web room.
    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// The line `session` drives, if any.
    pub fn bound_line(&self, session: &str) -> io::Result<Option<LineRef>> {
        let Some(path) = self.session_path(session) else {
            return Ok(None);
        };
        let text = fsutil::read_optional(&path).map_err(|e| named(&path, e))?;
        Ok(text.and_then(|text| LineRef::parse(&text)))
    }

    pub fn bind(&self, session: &str, line: &LineRef) -> io::Result<()> {
        let path = self.session_path(session).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad session id {session:?}"),
            )
        })?;
        fsutil::write_atomic(&path, format!("{line}\n").as_bytes())
    }

    pub(crate) fn unbind(&self, session: &str) -> io::Result<()> {
        if let Some(path) = self.session_path(session) {
            remove_if_present(&path)?;
        }
        Ok(())
    }

    /// Sessions bound to `line` (normally one).
    pub(crate) fn sessions_of(&self, line: &LineRef) -> io::Result<Vec<String>> {
        // A file that cannot be read names no line (`anvil doctor` reports it).
        let mut out = Vec::new();
        for (name, path) in fsutil::visible_entries(&self.sessions_dir())? {
            let text = fsutil::read_optional(&path).ok().flatten();
            if text.and_then(|t| LineRef::parse(&t)).as_ref() == Some(line) {
                out.push(name);
            }
        }
        Ok(out)
    }

    /// Offers `line` to the next Claude session that stops here.
    pub(crate) fn add_pending(&self, line: &LineRef) -> io::Result<()> {
        fsutil::write_atomic(&self.pending_path(line), format!("{line}\n").as_bytes())
    }

    pub(crate) fn remove_pending(&self, line: &LineRef) -> io::Result<()> {
        remove_if_present(&self.pending_path(line))
    }
    /// Claims the oldest pending line for `session`. The claim is a rename of the pending file
    /// onto the session's binding, so when two sessions stop at once exactly one wins.
    pub(crate) fn claim_pending(
        &self,
        session: &str,
        eligible: impl Fn(&LineRef, std::time::SystemTime) -> bool,
    ) -> io::Result<Option<LineRef>> {
        let Some(binding) = self.session_path(session) else {
            return Ok(None);
        };
        let dir = self.pending_dir();
        let mut names: Vec<String> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| !n.starts_with('.'))
                .collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if names.is_empty() {
            return Ok(None);
        }
        names.sort();
        if let Some(parent) = binding.parent() {
            std::fs::create_dir_all(parent)?;
        }
        for name in names {
            // Offered only to a session that may take it (see `claude::hooks`): the time the
            // line began waiting is its file's.
            let Some(line) = LineRef::parse(&name) else {
                continue;
            };
            let since = match std::fs::metadata(dir.join(&name)).and_then(|m| m.modified()) {
                Ok(since) => since,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if !eligible(&line, since) {
                continue;
            }
            match std::fs::rename(dir.join(&name), &binding) {
                Ok(()) => return Ok(LineRef::parse(&name)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue, // lost the race
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// Writes queue file number `number` for `line`. Only under the line's lock.
    pub(crate) fn write_queued(&self, line: &LineRef, number: u64, text: &str) -> io::Result<()> {
        let name = format!("{number:020}.md");
        fsutil::write_atomic(&self.steering_dir(line).join(name), text.as_bytes())
    }

    /// The queued steering, oldest first: every file in the queue, numbered.
    pub fn queued_steering(&self, line: &LineRef) -> io::Result<Vec<Queued>> {
        let dir = self.steering_dir(line);
        let mut items: Vec<Queued> = read_dir_texts(&dir)?
            .into_iter()
            .filter_map(|(name, text)| {
                // `NNN.md`, or `NANOS-PID.md` as older builds named them.
                let digits = name.split(['.', '-']).next()?;
                let number = digits.parse().ok()?;
                Some(Queued {
                    number,
                    path: dir.join(name),
                    text,
                })
            })
            .collect();
        items.sort_by(|a, b| (a.number, &a.path).cmp(&(b.number, &b.path)));
        Ok(items)
    }
}

/// One Claude Code session's inbox: `inbox/SESSION/`, its registration and its messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbox {
    dir: PathBuf,
}

impl Inbox {
    /// The session's registration at SessionStart.
    pub fn registration(&self) -> PathBuf {
        self.dir.join("session.json")
    }

    /// Messages waiting for the session's next stop, one file each.
    pub fn queued_dir(&self) -> PathBuf {
        self.dir.join("queued")
    }

    /// Messages the hook has handed over.
    pub fn delivered_dir(&self) -> PathBuf {
        self.dir.join("delivered")
    }
}

/// One steering file waiting in a line's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    /// Its place in the queue; the line's state remembers the last one taken.
    pub number: u64,
    pub path: PathBuf,
    pub text: String,
}

/// Exclusive use of one line by one process. Claude Code runs the hooks of every settings file,
/// so two anvil hooks can see the same stop at the same moment; the lock makes the second wait
/// and then find the turn already recorded. It is an advisory `flock` on the line's `.lock`
/// file, released when dropped or when the process ends, however it ends; the file stays in
/// place, so taking the lock creates no file after the first time.
pub(crate) struct LineLock {
    _file: std::fs::File,
}

impl Home {
    /// Takes the line's lock, waiting up to `patience` for another holder.
    pub(crate) fn lock_line(
        &self,
        line: &LineRef,
        patience: std::time::Duration,
    ) -> io::Result<LineLock> {
        let path = self.line_lock_path(line);
        match fsutil::hold(&path, patience)? {
            Some(file) => Ok(LineLock { _file: file }),
            None => Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("{} is held by another anvil process", path.display()),
            )),
        }
    }
}

/// `(file name, contents)` of the visible files in `dir`; an absent directory is empty.
fn read_dir_texts(dir: &Path) -> io::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (name, path) in fsutil::visible_entries(dir)? {
        if let Some(text) = fsutil::read_optional(&path).map_err(|e| named(&path, e))? {
            out.push((name, text));
        }
    }
    Ok(out)
}

/// `e`, with the file it concerns in its message (an `io::Error` names none).
pub(crate) fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Session ids become file names: accept only what Claude Code issues (UUID-like).
pub fn valid_session(session: &str) -> bool {
    !session.is_empty()
        && session.len() <= 128
        && session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The lines that have live files.
impl Home {
    /// All lines with live files, sorted by debate id (oldest first).
    pub fn live_lines(&self) -> std::io::Result<Vec<LineRef>> {
        self.live_lines_with_prefix("")
    }

    /// The lines with live files whose debate id starts with `prefix`, sorted by debate id: one
    /// listing of the debates folder, then only the matching debates are opened.
    pub fn live_lines_with_prefix(&self, prefix: &str) -> std::io::Result<Vec<LineRef>> {
        let mut out = Vec::new();
        let debates = match std::fs::read_dir(self.debates_dir()) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for debate in debates {
            let debate = debate?;
            let Ok(debate_name) = debate.file_name().into_string() else {
                continue;
            };
            if !debate_name.starts_with(prefix) {
                continue;
            }
            for line in std::fs::read_dir(debate.path())? {
                let line = line?;
                if let Ok(line_name) = line.file_name().into_string()
                    && self
                        .state_path(&LineRef::new(&debate_name, &line_name))
                        .is_file()
                {
                    out.push(LineRef::new(&debate_name, line_name));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_session_claims_a_pending_line() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let line = LineRef::new("20261122-q-0000", "main");
        home.add_pending(&line).unwrap();
        assert_eq!(home.claim_pending("s0", |_, _| false).unwrap(), None);
        assert_eq!(
            home.claim_pending("s1", |_, _| true).unwrap(),
            Some(line.clone())
        );
        assert_eq!(home.claim_pending("s2", |_, _| true).unwrap(), None);
        assert_eq!(home.bound_line("s1").unwrap(), Some(line));
        assert_eq!(home.bound_line("s2").unwrap(), None);
    }

    #[test]
    fn a_line_lock_waits_for_its_holder_and_is_free_once_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let line = LineRef::new("20261122-q-0000", "main");
        std::fs::create_dir_all(home.line_dir(&line)).unwrap();
        // A lock file left behind (by a killed process, or an older anvil) holds nothing.
        let lock_file = home.line_dir(&line).join(".lock");
        std::fs::write(&lock_file, "4294967").unwrap();
        let held = home
            .lock_line(&line, std::time::Duration::from_secs(1))
            .unwrap();
        let err = home
            .lock_line(&line, std::time::Duration::from_millis(30))
            .err()
            .expect("the second taker waits and gives up");
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(err.to_string().contains("held by another anvil process"));
        drop(held);
        drop(
            home.lock_line(&line, std::time::Duration::from_millis(30))
                .unwrap(),
        );
        // The file stays: taking the lock again creates nothing.
        assert!(lock_file.is_file());
    }

    #[test]
    fn the_gitignore_keeps_every_folder_of_local_state_out() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        let ignored = std::fs::read_to_string(home.root().join(".gitignore")).unwrap();
        let line = LineRef::new("d", "main");
        let session = "s-1";
        for path in [
            home.record_dir(),
            home.debates_dir(),
            home.sessions_dir(),
            home.streak_path(session).unwrap(),
            home.pending_path(&line),
            home.inboxes_dir(),
            home.active_dir(),
            home.runs_dir(),
            home.search_index(),
        ] {
            let top = path
                .strip_prefix(home.root())
                .unwrap()
                .iter()
                .next()
                .unwrap();
            let top = top.to_str().unwrap();
            assert!(
                ignored
                    .lines()
                    .any(|l| l == format!("{top}/") || l == format!("{top}*")),
                "{top} is not in .anvil/.gitignore"
            );
        }
        // The slash commands' arguments keep themselves out.
        crate::claude::slash::leave(&home, session, crate::claude::slash::Command::Start, "x")
            .unwrap();
        assert!(home.slash_dir().join(".gitignore").is_file());
    }

    #[test]
    fn hostile_session_ids_are_never_paths() {
        assert!(!valid_session("../../etc/passwd"));
        assert!(!valid_session(""));
        let dir = tempfile::tempdir().unwrap();
        let home = Home::init(dir.path()).unwrap();
        assert_eq!(home.streak_path("../x"), None);
        assert_eq!(home.inbox("../x"), None);
        assert_eq!(home.slash_path("../x", "anvil"), None);
        assert!(valid_session("3f2a9c1e-0b6d-4c1e-9a57-0d9f3b2c1a00"));
    }

    #[test]
    fn line_refs_parse() {
        assert_eq!(
            LineRef::parse("d-1@cost"),
            Some(LineRef::new("d-1", "cost"))
        );
        assert_eq!(LineRef::parse("d-1\n"), Some(LineRef::new("d-1", "main")));
        assert_eq!(LineRef::parse("../x"), None);
    }
}
