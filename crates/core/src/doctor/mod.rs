//! `anvil doctor`: is anvil wired into Claude Code, is the record sound, where do debates stand.
//!
//! Every check reads; none writes. Each finding says what was seen, how bad it is and what to
//! do, and carries a [`Fix`] when the repair loses nothing: a stale lock or temporary file that
//! no process can still be using (older than [`STALE`]), live files that lag behind the
//! record (rebuilt from it, under the line's lock), an anvil command file of an older version.
//! [`repair`] applies those fixes; anything else is left for the user, with a hint.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

use crate::claude::install;
use crate::home::{Home, LineRef};
use crate::model::state::{State, Status};
use crate::record::store::Record;
use crate::review::history::{self, LineHistory};

/// A lock or temporary file older than this belongs to no running anvil: a hook holds a ref
/// lock for microseconds and finishes within its 60-second timeout.
pub const STALE: Duration = Duration::from_secs(60);

/// How far back a line's live state is looked for in its history.
const BEHIND_SEARCH: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// As it should be.
    Ok,
    /// Worth knowing; nothing is wrong.
    Note,
    /// Works, but something will go wrong or is being lost.
    Warn,
    /// Broken: debates cannot run, or the record is damaged.
    Fail,
}

/// What `--fix` may do about a finding; nothing of the user's is lost by any of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Fix {
    /// Delete a stale lock or temporary file.
    Remove { path: PathBuf },
    /// Rebuild a line's live files from its tip in the record.
    RollForward { line: String },
    /// Write anvil's own command file as this version writes it.
    Rewrite { path: PathBuf },
    /// Rebuild the index of recent debates from the refs (it is a cache of them).
    RebuildIndex,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// `installation`, `record` or `debates`.
    pub area: &'static str,
    /// A short name of the check, e.g. `stop-hook`.
    pub check: &'static str,
    pub level: Level,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
    /// What `--fix` did, or why it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<String>,
}

impl Finding {
    fn new(area: &'static str, check: &'static str, level: Level, message: String) -> Finding {
        Finding {
            area,
            check,
            level,
            message,
            hint: None,
            fix: None,
            fixed: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Finding {
        self.hint = Some(hint.into());
        self
    }

    fn fix(mut self, fix: Fix) -> Finding {
        self.fix = Some(fix);
        self
    }
}

/// Where the doctor looks: passed in, so tests need no real HOME or PATH.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Where the command runs (the project, or inside it).
    pub cwd: PathBuf,
    /// The user's home (`~/.claude`, `~/.claude.json`).
    pub home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`, when set: where Claude Code keeps `.claude.json` instead.
    pub claude_config_dir: Option<PathBuf>,
    /// `$PATH`.
    pub path: Option<OsString>,
    pub now: SystemTime,
}

impl Environment {
    /// This process's environment.
    pub fn current(cwd: PathBuf) -> Environment {
        Environment {
            cwd,
            home: std::env::var_os("HOME").map(PathBuf::from),
            claude_config_dir: std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from),
            path: std::env::var_os("PATH"),
            now: SystemTime::now(),
        }
    }

    /// The project: the directory holding `.anvil`, else the working directory.
    fn project(&self) -> PathBuf {
        Home::find(&self.cwd)
            .map(|h| h.project().to_owned())
            .unwrap_or_else(|| self.cwd.clone())
    }

    fn user_claude(&self) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(".claude"))
    }
}

/// Finds `name` as an executable file in the directories of `path`.
pub fn find_in(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Finds `name` on this process's `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    find_in(&std::env::var_os("PATH")?, name)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs every check.
pub fn examine(env: &Environment) -> Vec<Finding> {
    let mut out = installation(env);
    match Home::find(&env.cwd) {
        Some(home) => {
            out.extend(record(&home, env.now));
            out.extend(debates(&home));
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

// ---------------------------------------------------------------------------------------------
// Installation

fn installation(env: &Environment) -> Vec<Finding> {
    let project_claude = env.project().join(".claude");
    let user_claude = env.user_claude();
    let places: Vec<&Path> = std::iter::once(project_claude.as_path())
        .chain(user_claude.as_deref())
        .collect();
    let mut out = Vec::new();
    let mut programs: Vec<String> = Vec::new();

    for (event, sub) in install::HOOKS {
        let wired: Vec<(PathBuf, String)> = places
            .iter()
            .flat_map(|claude| install::installed_hooks(claude, event, sub))
            .collect();
        let check = match sub {
            "stop" => "stop-hook",
            "session-start" => "session-start-hook",
            _ => "prompt-expansion-hook",
        };
        if wired.is_empty() {
            let (level, why) = match sub {
                "stop" => (
                    Level::Fail,
                    "debates do not advance past their first prompt",
                ),
                "session-start" => (
                    Level::Warn,
                    "after a compaction the next prompt does not bring the session up to date",
                ),
                _ => (
                    Level::Warn,
                    "/anvil, /anvil-steer and /anvil-cancel cannot receive their arguments",
                ),
            };
            out.push(
                Finding::new(
                    "installation",
                    check,
                    level,
                    format!("no {event} hook in Claude Code's settings: {why}"),
                )
                .hint("run `anvil install` (or load the plugin that `anvil plugin` writes)"),
            );
            continue;
        }
        for (file, command) in &wired {
            let program = command.split_whitespace().next().unwrap_or_default();
            programs.push(program.to_owned());
            let shared = file == &project_claude.join("settings.json");
            let finding = if Path::new(program).is_absolute() && shared {
                Finding::new(
                    "installation",
                    check,
                    Level::Warn,
                    format!(
                        "{event} hook `{command}` in {} names this machine's path, in a file teams share",
                        file.display()
                    ),
                )
                .hint("`anvil install` rewrites it to call `anvil-hook` by name")
            } else if !command.starts_with(install::HOOK_PROGRAM)
                && !Path::new(program).ends_with(install::HOOK_PROGRAM)
            {
                Finding::new(
                    "installation",
                    check,
                    Level::Note,
                    format!(
                        "{event} hook `{command}` ({}) is the older wiring; it works",
                        file.display()
                    ),
                )
                .hint("`anvil install` switches it to the smaller `anvil-hook` binary")
            } else {
                Finding::new(
                    "installation",
                    check,
                    Level::Ok,
                    format!("{event} hook `{command}` ({})", file.display()),
                )
            };
            out.push(finding);
        }
    }

    // The programs the hooks and command files call must be found where Claude Code looks.
    programs.push("anvil".into());
    programs.sort();
    programs.dedup();
    let path = claude_path(env, &places);
    for program in programs {
        out.push(program_finding(&path, &program));
    }

    out.extend(trust(env, &project_claude));
    out.push(block_cap(&places));
    out.extend(command_files(&places));
    out
}

/// The PATH that Claude Code gives hooks and commands: a `PATH` in the settings' `env` (the
/// most local file that sets one), else the one it was started with, taken to be this one.
fn claude_path(env: &Environment, places: &[&Path]) -> (Option<OsString>, String) {
    for claude in places {
        for name in install::SETTINGS_FILES.iter().rev() {
            let file = claude.join(name);
            if let Some(path) =
                read_json(&file).and_then(|s| s["env"]["PATH"].as_str().map(OsString::from))
            {
                return (Some(path), format!("the PATH set in {}", file.display()));
            }
        }
    }
    (env.path.clone(), "PATH".to_owned())
}

fn program_finding((search, which): &(Option<OsString>, String), program: &str) -> Finding {
    let path = Path::new(program);
    if path.is_absolute() {
        return if is_executable(path) {
            Finding::new(
                "installation",
                "binaries",
                Level::Ok,
                format!("{program} exists"),
            )
        } else {
            Finding::new(
                "installation",
                "binaries",
                Level::Fail,
                format!("{program}, which a hook runs, is missing or not executable"),
            )
            .hint("run `anvil install` again with the anvil you use now")
        };
    }
    match search.as_deref().and_then(|p| find_in(p, program)) {
        Some(found) => Finding::new(
            "installation",
            "binaries",
            Level::Ok,
            format!("{program} is on {which}: {}", found.display()),
        ),
        None => Finding::new(
            "installation",
            "binaries",
            Level::Fail,
            format!(
                "{program} is not on {which}: Claude Code runs the hooks and commands with the \
                 PATH it was started with (or the one its settings set), and cannot run `{program}`"
            ),
        )
        .hint(
            "`cargo install --path PATH-TO-ANVIL` installs `anvil` and `anvil-hook` into \
             ~/.cargo/bin; make sure that directory is on the PATH of the shell (or desktop \
             session) that starts Claude Code",
        ),
    }
}

/// Claude Code ignores a project's `permissions.allow` until the user trusts the workspace
/// (the dialog at the first interactive start; `claude -p` never shows it).
fn trust(env: &Environment, project_claude: &Path) -> Option<Finding> {
    let allow: Vec<String> = install::SETTINGS_FILES
        .iter()
        .filter_map(|name| read_json(&project_claude.join(name)))
        .flat_map(|s| {
            s["permissions"]["allow"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|v| v.as_str().map(str::to_owned))
        .filter(|p| p.starts_with("Bash(anvil"))
        .collect();
    if allow.is_empty() {
        return None;
    }
    let config = env
        .claude_config_dir
        .as_ref()
        .map(|d| d.join(".claude.json"))
        .or_else(|| env.home.as_ref().map(|h| h.join(".claude.json")));
    let project = env.project();
    let project = project.canonicalize().unwrap_or(project);
    let trusted = config.as_deref().and_then(read_json).is_some_and(|config| {
        project.ancestors().any(|dir| {
            config["projects"][dir.to_string_lossy().as_ref()]["hasTrustDialogAccepted"].as_bool()
                == Some(true)
        })
    });
    Some(if trusted {
        Finding::new(
            "installation",
            "permissions",
            Level::Ok,
            "the workspace is trusted: the project's permissions for anvil apply".into(),
        )
    } else {
        Finding::new(
            "installation",
            "permissions",
            Level::Warn,
            format!(
                "Claude Code has not been told to trust {}: until it is, Claude Code ignores the \
                 project's permissions.allow ({}), so a debater's `anvil ask` waits for your \
                 approval, and `claude -p` refuses it",
                project.display(),
                allow.join(", ")
            ),
        )
        .hint(
            "start `claude` in the project once and accept the trust dialog, or install for \
             your user with `anvil install --user`; the hooks and slash commands work either way",
        )
    })
}

/// The block cap Claude Code will use: the most local settings file that sets it wins.
fn block_cap(places: &[&Path]) -> Finding {
    let mut files: Vec<PathBuf> = Vec::new();
    // Precedence, highest first: project local, project shared, user local, user.
    for claude in places {
        for name in install::SETTINGS_FILES.iter().rev() {
            files.push(claude.join(name));
        }
    }
    let found = files.iter().find_map(|file| {
        let settings = read_json(file)?;
        let value = settings["env"].get(install::BLOCK_CAP_VAR)?.clone();
        Some((file.clone(), value))
    });
    let needed: u64 = install::BLOCK_CAP.parse().expect("a number");
    match found {
        None => Finding::new(
            "installation",
            "block-cap",
            Level::Warn,
            format!(
                "{} is not set: Claude Code ends a turn after 8 Stop-hook blocks in a row, which \
                 cuts debates of more than 8 phases",
                install::BLOCK_CAP_VAR
            ),
        )
        .hint("`anvil install` sets it; a debate cut short continues with `continue` or `anvil resume`"),
        Some((file, value)) => {
            let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            match text.trim().parse::<u64>() {
                Ok(n) if n >= needed => Finding::new(
                    "installation",
                    "block-cap",
                    Level::Ok,
                    format!("{}={n} ({})", install::BLOCK_CAP_VAR, file.display()),
                ),
                _ => Finding::new(
                    "installation",
                    "block-cap",
                    Level::Warn,
                    format!(
                        "{}={text} in {} is below the {} a long interactive debate needs",
                        install::BLOCK_CAP_VAR,
                        file.display(),
                        install::BLOCK_CAP
                    ),
                )
                .hint("`anvil install` raises it (and `anvil uninstall` puts yours back)"),
            }
        }
    }
}

fn command_files(places: &[&Path]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut any = false;
    for claude in places {
        for (name, text) in install::commands() {
            let path = claude.join("commands").join(name);
            let Ok(existing) = std::fs::read_to_string(&path) else {
                continue;
            };
            any = true;
            if existing == text || !existing.contains("anvil-managed: true") {
                continue;
            }
            out.push(
                Finding::new(
                    "installation",
                    "commands",
                    Level::Warn,
                    format!(
                        "{} is an older version's: questions with backticks, quotes or `$` break it",
                        path.display()
                    ),
                )
                .hint("`anvil install` (or `anvil doctor --fix`) rewrites it")
                .fix(Fix::Rewrite { path }),
            );
        }
    }
    if !any {
        out.push(
            Finding::new(
                "installation",
                "commands",
                Level::Note,
                "no /anvil command files here or for your user (fine when anvil is loaded as a plugin)"
                    .into(),
            )
            .hint("`anvil install` writes them"),
        );
    } else if out.is_empty() {
        out.push(Finding::new(
            "installation",
            "commands",
            Level::Ok,
            "the /anvil command files are current".into(),
        ));
    }
    out
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

// ---------------------------------------------------------------------------------------------
// Record

fn record(home: &Home, now: SystemTime) -> Vec<Finding> {
    let mut out = Vec::new();
    let dir = home.record_dir();
    let age = |path: &Path| {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default()
    };

    // Leftovers of killed processes.
    let mut leftovers = Vec::new();
    walk(&dir.join("refs"), &mut |p| {
        if p.extension().is_some_and(|e| e == "lock") {
            leftovers.push((p.to_owned(), "ref lock"));
        }
    });
    for name in ["packed-refs.lock", "HEAD.lock", "config.lock", "index.lock"] {
        let p = dir.join(name);
        if p.exists() {
            leftovers.push((p, "lock"));
        }
    }
    walk(&dir.join("objects"), &mut |p| {
        if file_name_starts(p, "tmp_obj_") || file_name_starts(p, "tmp_pack_") {
            leftovers.push((p.to_owned(), "temporary object file"));
        }
    });
    walk(&home.debates_dir(), &mut |p| {
        if file_name_starts(p, ".anvil-tmp") {
            leftovers.push((p.to_owned(), "temporary live file"));
        }
    });
    walk(&crate::claude::slash::dir(home.root()), &mut |p| {
        if !file_name_starts(p, ".gitignore") {
            leftovers.push((p.to_owned(), "slash command's arguments never taken"));
        }
    });
    for (path, what) in leftovers {
        let age = age(&path);
        if age >= STALE {
            out.push(
                Finding::new(
                    "record",
                    "leftovers",
                    Level::Warn,
                    format!(
                        "stale {what} {} ({} s old), left by a process that was killed",
                        path.display(),
                        age.as_secs()
                    ),
                )
                .hint("`anvil doctor --fix` removes it; nothing is lost")
                .fix(Fix::Remove { path }),
            );
        } else {
            out.push(Finding::new(
                "record",
                "leftovers",
                Level::Note,
                format!("{what} {} is fresh: a process is using it", path.display()),
            ));
        }
    }

    if !dir.join("HEAD").is_file() {
        out.push(
            Finding::new(
                "record",
                "objects",
                Level::Fail,
                format!("{} is not a git repository", dir.display()),
            )
            .hint("`anvil init` creates the record; restore it from a backup or a remote if it was deleted"),
        );
        return out;
    }
    out.push(objects(&dir));
    out.extend(lines(home, &dir));
    out.push(recent_index(&dir));
    out
}

/// The index of recent debates (the order of `anvil log`) against the refs it caches.
fn recent_index(dir: &Path) -> Finding {
    use crate::record::recent::Health;
    let finding = |level, message: String| Finding::new("record", "recent-index", level, message);
    let health = Record::open(dir).and_then(|record| crate::record::recent::check(&record));
    let path = crate::record::recent::path(dir);
    let rebuild =
        "`anvil doctor --fix` rebuilds it from the refs (so does `anvil gc`); nothing is lost";
    match health {
        Ok(Health::Fine { debates }) => finding(
            Level::Ok,
            format!(
                "the index of recent debates agrees with the refs ({debates} debate{})",
                if debates == 1 { "" } else { "s" }
            ),
        ),
        Ok(Health::Missing) => finding(
            Level::Note,
            format!(
                "there is no index of recent debates ({}): the next `anvil log` builds it",
                path.display()
            ),
        )
        .hint(rebuild)
        .fix(Fix::RebuildIndex),
        Ok(Health::Damaged(why)) => finding(
            Level::Warn,
            format!(
                "the index of recent debates {} cannot be read ({why}); `anvil log` rebuilds it, \
                 with one pass over every ref",
                path.display()
            ),
        )
        .hint(rebuild)
        .fix(Fix::RebuildIndex),
        Ok(Health::Outdated {
            behind,
            ahead,
            unaccounted,
        }) => {
            let mut parts = Vec::new();
            if !behind.is_empty() {
                parts.push(format!(
                    "it misses that {} moved (refs written by git behind anvil's back?); \
                     `anvil log` may list {} too low",
                    names(&behind),
                    if behind.len() == 1 { "it" } else { "them" }
                ));
            }
            if !ahead.is_empty() {
                parts.push(format!(
                    "it claims {} moved later than {} did (corrected when read)",
                    names(&ahead),
                    if ahead.len() == 1 { "it" } else { "they" }
                ));
            }
            if unaccounted {
                parts.push(
                    "the refs were changed by something other than anvil since it was written \
                     (the next `anvil log` rebuilds it)"
                        .to_owned(),
                );
            }
            let level = if behind.is_empty() {
                Level::Note
            } else {
                Level::Warn
            };
            finding(
                level,
                format!(
                    "the index of recent debates is out of date: {}",
                    parts.join("; ")
                ),
            )
            .hint(rebuild)
            .fix(Fix::RebuildIndex)
        }
        Err(e) => finding(
            Level::Warn,
            format!("cannot check the index of recent debates: {e}"),
        ),
    }
}

/// `a, b and 3 more`.
fn names(debates: &[String]) -> String {
    let shown: Vec<&str> = debates.iter().take(3).map(String::as_str).collect();
    match debates.len().saturating_sub(3) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

fn file_name_starts(path: &Path, prefix: &str) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(prefix))
}

/// Calls `each` for every file under `dir` (not following symlinks).
fn walk(dir: &Path, each: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, each),
            Ok(_) => each(&path),
            Err(_) => {}
        }
    }
}

/// Reads every object reachable from `refs/anvil/*` and checks that each hashes to its id.
fn objects(dir: &Path) -> Finding {
    let failed = |message: String| {
        Finding::new("record", "objects", Level::Fail, message).hint(
            "the record is damaged: `git --git-dir .anvil/record fsck` says more; fetch the \
             lines from a remote you pushed them to (`anvil pull`) or restore .anvil/record \
             from a backup",
        )
    };
    let repo = match gix::open(dir) {
        Ok(repo) => repo,
        Err(e) => return failed(format!("cannot open the record {}: {e}", dir.display())),
    };
    let tips = match Record::open(dir).and_then(|r| r.lines()) {
        Ok(tips) => tips,
        Err(e) => return failed(format!("cannot list the record's lines: {e}")),
    };
    let mut seen: HashSet<gix::ObjectId> = HashSet::new();
    let mut todo: Vec<gix::ObjectId> = tips.iter().map(|(_, _, id)| *id).collect();
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        let object = match repo.find_object(id) {
            Ok(object) => object,
            Err(e) => return failed(format!("object {id} cannot be read: {e}")),
        };
        match gix::objs::compute_hash(repo.object_hash(), object.kind, &object.data) {
            Ok(actual) if actual == id => {}
            _ => {
                return failed(format!(
                    "object {id} is corrupt: its contents do not match its id"
                ));
            }
        }
        match object.kind {
            gix::object::Kind::Commit => {
                match gix::objs::CommitRef::from_bytes(&object.data, repo.object_hash()) {
                    Ok(commit) => {
                        todo.push(commit.tree());
                        todo.extend(commit.parents());
                    }
                    Err(e) => return failed(format!("commit {id} cannot be parsed: {e}")),
                }
            }
            gix::object::Kind::Tree => {
                match gix::objs::TreeRef::from_bytes(&object.data, repo.object_hash()) {
                    Ok(tree) => todo.extend(
                        tree.entries
                            .iter()
                            .filter(|e| !e.mode.is_commit())
                            .map(|e| e.oid.to_owned()),
                    ),
                    Err(e) => return failed(format!("tree {id} cannot be parsed: {e}")),
                }
            }
            _ => {}
        }
    }
    Finding::new(
        "record",
        "objects",
        Level::Ok,
        format!(
            "{} objects reachable from {} lines read and match their ids",
            seen.len(),
            tips.len()
        ),
    )
}

/// Live files against the record, line by line.
fn lines(home: &Home, dir: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let record = match Record::open(dir) {
        Ok(r) => r,
        Err(_) => return out, // reported by `objects`
    };
    let tips: Vec<(LineRef, gix::ObjectId)> = match record.lines() {
        Ok(t) => t
            .into_iter()
            .map(|(d, l, id)| (LineRef::new(d, l), id))
            .collect(),
        Err(_) => return out,
    };
    let live = home.live_lines().unwrap_or_default();
    let mut in_step = 0;
    for line in &live {
        let Some((_, tip)) = tips.iter().find(|(l, _)| l == line) else {
            out.push(Finding::new(
                "record",
                "live-files",
                Level::Fail,
                format!(
                    "{line} has live files ({}) but no line in the record",
                    home.line_dir(line).display()
                ),
            ).hint("its history is lost from the record; its transcript.md is all there is (keep a copy)"));
            continue;
        };
        match compare(home, &record, line, *tip) {
            Ok(None) => in_step += 1,
            Ok(Some(finding)) => out.push(finding),
            Err(e) => out.push(
                Finding::new("record", "live-files", Level::Fail, format!("{line}: {e}")).hint(
                    format!("`anvil resume {line}` rebuilds its live files from the record"),
                ),
            ),
        }
        out.extend(incoming(home, &record, line, *tip));
    }
    for (line, _) in &tips {
        if !live.contains(line) {
            out.push(
                Finding::new(
                    "record",
                    "live-files",
                    Level::Note,
                    format!(
                        "{line} is in the record only (pulled, or its live files were removed)"
                    ),
                )
                .hint(format!(
                    "`anvil resume {line}` puts an unfinished line back on disk"
                )),
            );
        }
    }
    out.push(Finding::new(
        "record",
        "live-files",
        Level::Ok,
        format!(
            "{in_step} of {} lines have live files that agree with the record",
            live.len()
        ),
    ));
    out
}

/// `None` when the live state agrees with the tip; a finding when it does not.
fn compare(
    home: &Home,
    record: &Record,
    line: &LineRef,
    tip: gix::ObjectId,
) -> Result<Option<Finding>, String> {
    let live = State::load(&home.state_path(line)).map_err(|e| e.to_string())?;
    let at_tip = history::state_at(record, tip).map_err(|e| e.to_string())?;
    // A state file names the commit it shows; one written before it did is compared by what
    // it says.
    let names = |id: gix::ObjectId| live.tip.as_deref() == Some(id.to_string().as_str());
    if (names(tip) || live.tip.is_none()) && live.progress == at_tip.progress {
        return Ok(None);
    }
    let chain = history::chain(record, tip).map_err(|e| e.to_string())?;
    let behind = chain
        .iter()
        .rev()
        .skip(1)
        .take(BEHIND_SEARCH)
        .position(|entry| match &live.tip {
            Some(_) => names(entry.commit),
            None => {
                history::state_at(record, entry.commit).is_ok_and(|s| s.progress == live.progress)
            }
        })
        .filter(|_| !names(tip));
    Ok(Some(match behind {
        Some(n) => Finding::new(
            "record",
            "live-files",
            Level::Warn,
            format!(
                "{line}: state.md is {} commit{} behind the record ({} there, {} on disk)",
                n + 1,
                if n == 0 { "" } else { "s" },
                at_tip.standing(),
                live.standing()
            ),
        )
        .hint("`anvil doctor --fix` rolls the live files forward from the record")
        .fix(Fix::RollForward {
            line: line.to_string(),
        }),
        None => Finding::new(
            "record",
            "live-files",
            Level::Fail,
            format!(
                "{line}: state.md disagrees with the record ({} there, {} on disk) and is not \
                 an earlier state of it",
                at_tip.standing(),
                live.standing()
            ),
        )
        .hint(format!(
            "the record is the source of truth: `anvil resume {line}` rebuilds the live files \
             from it (copy state.md aside first if you edited it)"
        )),
    }))
}

/// A phase text the hook saved and never recorded.
fn incoming(home: &Home, record: &Record, line: &LineRef, tip: gix::ObjectId) -> Option<Finding> {
    let path = home.incoming_path(line);
    let text = std::fs::read_to_string(&path).ok()?;
    let recorded = LineHistory::load(record, line)
        .ok()
        .filter(|h| h.tip == tip)
        .and_then(|h| {
            let last = h.entries.last()?;
            history::response(record, last).ok().flatten()
        })
        .is_some_and(|last| last.trim() == text.trim());
    Some(if recorded {
        Finding::new(
            "record",
            "incoming",
            Level::Warn,
            format!(
                "{} is left over: its text is recorded already",
                path.display()
            ),
        )
        .hint("`anvil doctor --fix` removes it")
        .fix(Fix::Remove { path })
    } else {
        Finding::new(
            "record",
            "incoming",
            Level::Warn,
            format!(
                "{} holds a phase text that was not recorded (a hook failed while recording it)",
                path.display()
            ),
        )
        .hint(format!(
            "the next stop of the session records its turn; if the session is gone, keep the \
             file and run `anvil resume {line}`"
        ))
    })
}

// ---------------------------------------------------------------------------------------------
// Debates

fn debates(home: &Home) -> Vec<Finding> {
    let mut out = Vec::new();
    for line in home.live_lines().unwrap_or_default() {
        let Ok(state) = State::load(&home.state_path(&line)) else {
            continue; // reported under the record
        };
        if state.progress.status.is_over() {
            continue;
        }
        let sessions = home.sessions_of(&line).unwrap_or_default();
        let pending = home.root().join("pending").join(line.to_string()).exists();
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

// ---------------------------------------------------------------------------------------------
// Repairs

/// Applies the fix of every finding that has one; records in `fixed` what happened.
pub fn repair(env: &Environment, findings: &mut [Finding]) {
    let home = Home::find(&env.cwd);
    for finding in findings.iter_mut() {
        let Some(fix) = finding.fix.clone() else {
            continue;
        };
        let result = match &fix {
            Fix::Remove { path } => crate::fsutil::remove_if_present(path)
                .map(|()| format!("removed {}", path.display()))
                .map_err(|e| e.to_string()),
            Fix::Rewrite { path } => rewrite_command(path),
            Fix::RollForward { line } => match (&home, LineRef::parse(line)) {
                (Some(home), Some(line)) => roll_forward(home, &line),
                _ => Err("the line is gone".into()),
            },
            Fix::RebuildIndex => match &home {
                Some(home) => Record::open(&home.record_dir())
                    .and_then(|record| crate::record::recent::rebuild(&record))
                    .map(|debates| {
                        format!(
                            "rebuilt the index of recent debates from the refs ({} debates)",
                            debates.len()
                        )
                    })
                    .map_err(|e| e.to_string()),
                None => Err("there is no .anvil here".into()),
            },
        };
        finding.fixed = Some(match result {
            Ok(done) => {
                finding.level = Level::Ok;
                done
            }
            Err(e) => format!("not fixed: {e}"),
        });
    }
}

fn rewrite_command(path: &Path) -> Result<String, String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let (_, text) = install::commands()
        .into_iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| format!("{} is not one of anvil's commands", path.display()))?;
    install::write_in_place(path, text.as_bytes()).map_err(|e| e.to_string())?;
    Ok(format!("rewrote {}", path.display()))
}

/// Brings `line`'s live files forward to its tip in the record: a transaction that decides
/// nothing, so that the one write path rolls them forward under the line's lock.
pub fn roll_forward(home: &Home, line: &LineRef) -> Result<String, String> {
    let done = crate::line::transaction::run(
        home,
        line,
        crate::line::transaction::Options::default(),
        |_| Ok(crate::line::transaction::Plan::Keep(())),
    )
    .map_err(|e| e.to_string())?;
    let state = State::load(&home.state_path(line)).map_err(|e| e.to_string())?;
    Ok(if done.notes.is_empty() {
        format!("{line} had caught up already")
    } else {
        format!("rolled {line} forward to {}", state.standing())
    })
}
