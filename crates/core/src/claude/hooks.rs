//! `anvil hook stop`: Claude Code's Stop hook.
//!
//! It runs at the end of every turn of every Claude session where anvil is installed, so the
//! path for "nothing to do here" is a JSON parse and a few `stat` calls. When this session
//! drives a line, the stop goes through named steps ([`drive`]): locate the line, take the
//! turn's text, clean it of credentials, save it to disk, read its provenance, record it (one
//! transaction of [`crate::line::stop`]), play the seats that are due, look after the record
//! at a debate's end. Whatever goes wrong, the hook answers with valid JSON that lets Claude
//! stop and says how to resume: a broken hook must never wedge a session.
//!
//! The project's config is read at most once per run ([`config::Lazy`]), by the first step
//! that needs it, and not at all by a stop without a debate.
//!
//! The same hook serves the other agents that host a debate (Qwen Code, Gemini CLI, Codex,
//! Copilot CLI, and OpenCode through a plugin of anvil's:
//! [`crate::agent::host`]). Which one stops is told from the input and the environment at every
//! stop (a look at a few fields and variables, nothing read from disk); once a line is
//! concerned, the host's file says where the turn's text and figures are and
//! what its cap is. A host other than Claude Code is always answered with a `block`, and its
//! name and version are recorded (`Anvil-Host`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::claude::protocol::{HookInput, HookOutput};
use crate::claude::session_log::{TurnEnd, read_turn, saw_prompt, turn_provenance};
use crate::home::{Home, LineRef};
use crate::line::stop::{self, Kind, Reply};
use crate::model::config;
use crate::model::provenance::Provenance;
use crate::model::secrets::Intake;

/// Handles one Stop event. `stdin` is the raw hook input; `cwd` is the process's directory,
/// used when the input names none.
pub fn stop(stdin: &[u8], cwd: &Path) -> HookOutput {
    let began = Instant::now();
    let input: HookInput = match serde_json::from_slice(stdin) {
        Ok(input) => input,
        Err(e) => return unreadable(&e, cwd),
    };
    let Some((home, session)) = input.locate(cwd) else {
        return HookOutput::Silent;
    };
    let config = config::Lazy::new(&home);
    let var = |key: &str| std::env::var(key).ok();
    let host = crate::agent::host::detect(&input.host_stop(session), &var);
    let hook = Hook {
        home: &home,
        session,
        input: &input,
        host,
        began,
        config: &config,
    };
    // The line this stop concerns, once `drive` knows it (bound, or claimed at this stop).
    let mut line = None;
    let answer = match drive(&hook, &mut line) {
        Ok(answer) => answer,
        Err(failure) => HookOutput::Message(failure.message()),
    };
    let answer = crate::claude::feedback::deliver(&home, session, answer);
    let continues = matches!(answer, HookOutput::Block { .. });
    // A session without a debate that Claude stops as usual costs nothing more here.
    let streak = if continues || line.is_some() {
        streak(&home, session, &input, continues)
    } else {
        0
    };
    // Another host reads a `block` only.
    let version = line.as_ref().filter(|_| host.is_none()).and_then(|_| {
        crate::claude::client::detect(session, input.transcript_path.as_deref()).effective_version()
    });
    let cap = match host {
        Some(host) => host.block_cap(home.project(), &var),
        None => Some(block_cap()),
    };
    let answer = match answer {
        // Past Claude Code's cap on continuations in a row the turn ends anyway; a `block`
        // then stays in the conversation, so that the person's `continue` finds the prompt
        // (an `additionalContext` the cap cut would be gone).
        block @ HookOutput::Block { .. } if cap.is_some_and(|cap| streak > cap) => block,
        block @ HookOutput::Block { .. } => block.for_client(version),
        other => other,
    };
    match line {
        Some(line) if version >= Some(crate::claude::protocol::CONTEXT_SINCE) => {
            crate::claude::signals::add(&home, &line, answer, &config)
        }
        _ => answer,
    }
}

/// The answer to hook input that is not JSON Claude Code would send: without a session id
/// nothing can be recorded, so the hook speaks only where anvil lives.
fn unreadable(e: &serde_json::Error, cwd: &Path) -> HookOutput {
    match Home::find(cwd) {
        Some(_) => HookOutput::Message(format!(
            "anvil: the Stop hook could not read its input ({e}); no phase was recorded. \
             Run `anvil status` to see where the debate stands."
        )),
        None => HookOutput::Silent,
    }
}

/// How many continuations in a row this one is (1 for the first after a person's turn), kept
/// in `.anvil/streaks/SESSION`; the file goes when the hook lets Claude stop.
fn streak(home: &Home, session: &str, input: &HookInput, continues: bool) -> u32 {
    let Some(path) = home.streak_path(session) else {
        return u32::from(continues);
    };
    if !continues {
        let _ = crate::fsutil::remove_if_present(&path);
        return 0;
    }
    let before = match input.stop_hook_active.as_bool() {
        Some(true) => std::fs::read_to_string(&path)
            .ok()
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or(0),
        _ => 0,
    };
    let now = before.saturating_add(1);
    let _ = std::fs::create_dir_all(path.parent().unwrap_or(home.root()))
        .and_then(|()| std::fs::write(&path, now.to_string()));
    now
}

/// Claude Code's cap on Stop-hook continuations in a row (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`,
/// 8 when unset), as the hook's environment has it.
fn block_cap() -> u32 {
    std::env::var("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(8)
}

/// May `session` take `line`, which has been waiting for a session since `since`? Only a
/// session that asked for it: one whose transcript shows the line's prompt (started with it,
/// `claude "$(anvil start …)"`), or one that started in the project after the line began
/// waiting (its SessionStart registration is younger). A session that was already at work when
/// the line began waiting is never handed it: that would take over someone's session.
fn may_claim(
    home: &Home,
    session: &str,
    input: &HookInput,
    host: Option<&dyn crate::agent::host::Host>,
    line: &LineRef,
    since: std::time::SystemTime,
) -> bool {
    let started = crate::claude::feedback::registered_at(home, session);
    if started.is_some_and(|started| started >= since) {
        return true;
    }
    shows_prompt(input, &tags(line, host), false)
}

/// Does what the session's turn was given show one of `tags`: the prompt the input hands over
/// (OpenCode's plugin: the prompt and the turn's tool results; Gemini CLI: the person's
/// prompt), or the transcript? The transcript may lag behind the turn that just ended: it is
/// looked at until it holds the prompt or an answer (`saw_prompt`; `has_text`: the turn's text
/// came from it, and it is there).
fn shows_prompt(input: &HookInput, tags: &[String], has_text: bool) -> bool {
    let given = input.prompt.as_deref().unwrap_or_default();
    if tags.iter().any(|tag| given.contains(tag.as_str())) {
        return true;
    }
    input
        .transcript_path
        .as_deref()
        .is_some_and(|path| saw_prompt(path, tags, has_text))
}

/// The forms of `line`'s tag a session's transcript shows when it saw the line's prompt.
/// Qwen Code reads `@main` of a prompt given on its command line as a file to inline and,
/// finding none, keeps it with a space before the `@`: another host's transcript is searched
/// for that form too.
fn tags(line: &LineRef, host: Option<&dyn crate::agent::host::Host>) -> Vec<String> {
    let tag = crate::model::prompt::tag(&line.debate, &line.line);
    match host {
        Some(_) => vec![tag.replacen('@', " @", 1), tag],
        None => vec![tag],
    }
}

/// Handles SessionStart: after a compaction or `/clear` the session no longer holds the debate
/// in its context, so the next phase's prompt must bring it up to date in full.
pub fn session_start(stdin: &[u8], cwd: &Path) -> HookOutput {
    let Ok(input) = serde_json::from_slice::<HookInput>(stdin) else {
        return HookOutput::Silent;
    };
    let Some((home, session)) = input.locate(cwd) else {
        return HookOutput::Silent;
    };
    crate::claude::feedback::register_start(&home, session, &input);
    if !matches!(input.source.as_deref(), Some("compact" | "clear")) {
        return HookOutput::Silent;
    }
    match crate::line::control::forget_session(&home, session) {
        Ok(()) => HookOutput::Silent,
        Err(e) => HookOutput::Message(format!("anvil: {}", crate::error::chain(&e))),
    }
}

/// One run of the Stop hook, as its steps see it.
struct Hook<'a> {
    home: &'a Home,
    session: &'a str,
    input: &'a HookInput,
    /// The agent hosting the session, when it is not Claude Code.
    host: Option<&'static dyn crate::agent::host::Host>,
    /// When the hook started: a seat's turn gets what is left of the hook's time.
    began: Instant,
    /// The project's config, read by the first step that needs it.
    config: &'a config::Lazy,
}

/// Why a stop could not be handled, and what the person is told.
struct Failure {
    line: Option<LineRef>,
    saved: Option<PathBuf>,
    error: String,
    /// What was redacted from the text that is saved.
    note: Option<String>,
}

impl Failure {
    /// A failure on `line` (once known), with the phase text saved at `saved`.
    fn new(
        line: Option<&LineRef>,
        saved: Option<PathBuf>,
        error: impl std::fmt::Display,
    ) -> Failure {
        Failure {
            line: line.cloned(),
            saved,
            error: error.to_string(),
            note: None,
        }
    }

    fn message(&self) -> String {
        let mut m = format!("anvil: {}", self.error);
        if let Some(path) = &self.saved {
            m.push_str(&format!(
                ". This phase's text is saved in {}",
                path.display()
            ));
        }
        match &self.line {
            Some(line) if self.saved.is_some() => m.push_str(&format!(
                ". The next stop of this session records it (say `continue`); if the session is \
                 gone, `anvil resume {line}` continues the debate; `anvil status {line}` shows \
                 where it stands."
            )),
            Some(line) => m.push_str(&format!(
                ". The debate has not moved: once the cause is fixed, the next stop of this \
                 session continues it (if the session is gone, `anvil resume {line}`); \
                 `anvil status {line}` shows where it stands."
            )),
            None => m.push('.'),
        }
        if let Some(note) = &self.note {
            m.push_str(&format!("\nanvil: note: {note}"));
        }
        m
    }
}

/// Handles the stop for the session's line, step by step; `concerned` is set to that line as
/// soon as it is known (the caller adds what depends on it: the client's form, the terminal's
/// signals).
fn drive(hook: &Hook<'_>, concerned: &mut Option<LineRef>) -> Result<HookOutput, Failure> {
    let (line, claimed) = match locate_line(hook)? {
        Located::Line { line, claimed } => (line, claimed),
        Located::Answered(answer) => return Ok(answer),
    };
    *concerned = Some(line.clone());
    let taken = take_text(hook);
    // The turn's text enters anvil here, and is cleaned of credentials here: what is saved
    // below, recorded and shown afterwards never holds one.
    let mut intake = Intake::with_config(hook.config);
    let turn = clean(taken, &mut intake);
    let kept = kept_text(hook.home, &line, turn.text.as_deref(), &mut intake);
    let saved = save(hook.home, &line, turn.text.as_deref(), kept.is_some())?;
    let seen = (!claimed || saw_its_prompt(hook, &line, &turn)) && !cut_by_cap(hook);
    let provenance = provenance(hook, &line, &turn).map(|mut p| {
        // The model and version Claude Code wrote are outside text too.
        p.clean(&mut intake);
        p
    });
    let this_stop = stop::Stop {
        text: turn.text.as_deref(),
        kept: kept.as_deref(),
        claimed,
        seen,
        provenance: provenance.as_ref(),
        ..stop::Stop::of(hook.session)
    };
    let reply = record(hook, &line, this_stop, saved, &mut intake)?;
    let reply = play_seats(hook, &line, reply)?;
    look_after_record(hook, &reply);
    Ok(answer(reply))
}

/// Where [`locate_line`] found this session.
enum Located {
    /// Driving `line`, which it claimed at this stop when `claimed`.
    Line { line: LineRef, claimed: bool },
    /// Driving no line: this is the hook's answer.
    Answered(HookOutput),
}

/// The line this session drives: the one it is bound to, or one waiting for a session that it
/// may claim ([`may_claim`]).
fn locate_line(hook: &Hook<'_>) -> Result<Located, Failure> {
    let Hook { home, session, .. } = *hook;
    let bound = home.bound_line(session).map_err(|e| {
        Failure::new(
            None,
            None,
            format!(
                "cannot read this session's binding ({e}); `anvil doctor --fix` removes the file"
            ),
        )
    })?;
    Ok(match bound {
        // A binding to a line with no live files here (its debate removed by hand, a session
        // file copied from elsewhere) is dropped, never acted on: nothing is created for it.
        Some(line) if !home.line_dir(&line).is_dir() => {
            home.unbind(session)
                .map_err(|e| Failure::new(None, None, e))?;
            Located::Answered(HookOutput::Message(format!(
                "anvil: this session was bound to {line}, which has no live files here; the \
                 binding is dropped (`anvil status` lists the debates)"
            )))
        }
        Some(line) => Located::Line {
            line,
            claimed: false,
        },
        None => match home
            .claim_pending(session, |line, since| {
                may_claim(home, session, hook.input, hook.host, line, since)
            })
            .map_err(|e| Failure::new(None, None, e))?
        {
            Some(line) => Located::Line {
                line,
                claimed: true,
            },
            None => Located::Answered(HookOutput::Silent),
        },
    })
}

/// The turn's text as the hook input or the transcript has it, before it is cleaned.
#[derive(Default)]
struct Taken {
    text: Option<String>,
    /// The end of the transcript, when the text came from it.
    end: Option<TurnEnd>,
}

/// The turn's text: the hook input's `last_assistant_message`, else the last assistant text
/// at the transcript's end. The text and the turn's provenance come from one read of that
/// end: when the input hands the text over, the transcript is read later only for the
/// provenance; when the text comes from the transcript, the same read holds the turn. Another
/// host hands its text over in its own way.
fn take_text(hook: &Hook<'_>) -> Taken {
    let input = hook.input;
    if let Some(host) = hook.host {
        return Taken {
            text: host
                .text(&input.host_stop(hook.session))
                .or_else(|| input.last_assistant_message.clone())
                .filter(|t| !t.trim().is_empty()),
            end: None,
        };
    }
    if let Some(text) = input
        .last_assistant_message
        .as_ref()
        .filter(|t| !t.trim().is_empty())
    {
        return Taken {
            text: Some(text.clone()),
            end: None,
        };
    }
    let from_end = || {
        let mut end = read_turn(input.transcript_path.as_deref()?, true)?;
        Some(Taken {
            text: Some(end.text.take()?),
            end: Some(end),
        })
    };
    from_end().unwrap_or_default()
}

/// The turn that just ended, as the hook takes it in.
struct Turn {
    /// Its text, cleaned of credentials (`None`: a turn without text).
    text: Option<String>,
    /// The text as Claude Code has it, when cleaning changed it: the turn's provenance is read
    /// against it.
    raw: Option<String>,
    /// The end of the transcript, when the text came from it (it holds the provenance too).
    end: Option<TurnEnd>,
}

/// The redaction step: the turn's text cleaned of credentials by `intake`, which says what it
/// replaced (the note goes with the reply, or with the failure).
fn clean(taken: Taken, intake: &mut Intake) -> Turn {
    let (text, raw) = match taken.text {
        Some(raw) => match intake.clean("this phase", &raw) {
            std::borrow::Cow::Owned(clean) => (Some(clean), Some(raw)),
            std::borrow::Cow::Borrowed(_) => (Some(raw), None),
        },
        None => (None, None),
    };
    Turn {
        text,
        raw,
        end: taken.end,
    }
}

/// The text an earlier stop saved and could not record, cleaned as this turn's is, unless it
/// is this turn's own: it answered the prompt that is out, so it goes first.
fn kept_text(
    home: &Home,
    line: &LineRef,
    text: Option<&str>,
    intake: &mut Intake,
) -> Option<String> {
    std::fs::read(home.incoming_path(line))
        .ok()
        .map(|bytes| {
            let kept = String::from_utf8_lossy(&bytes);
            intake
                .clean("the phase text saved earlier", &kept)
                .into_owned()
        })
        .filter(|k| !k.trim().is_empty() && Some(k.as_str()) != text)
}

/// The phase text on disk before anything else happens to it, unless the file holds a `kept`
/// text of an earlier stop, which stays there; where the text is safe, if anywhere.
fn save(
    home: &Home,
    line: &LineRef,
    text: Option<&str>,
    kept: bool,
) -> Result<Option<PathBuf>, Failure> {
    let incoming = home.incoming_path(line);
    match (text, kept) {
        (_, true) => Ok(Some(incoming)),
        (Some(text), false) => {
            // Whole or not at all: the next stop records a kept text in place of its own, so
            // a copy cut short by a full disk or a kill must never be left here.
            crate::fsutil::write_atomic(&incoming, text.as_bytes()).map_err(|e| {
                Failure::new(
                    Some(line),
                    None,
                    format!(
                        "cannot save this phase's text to {}: {e}; {}. Nothing was recorded; the \
                         text is still in Claude Code's transcript",
                        incoming.display(),
                        crate::fsutil::advice(e.kind())
                    ),
                )
            })?;
            Ok(Some(incoming))
        }
        (None, false) => Ok(None),
    }
}

/// Did the host's cap drop the prompt this session was last handed? Past Claude Code's cap the
/// `block` stays in the conversation, so the person's `continue` finds it; past Qwen Code's it
/// is gone, and the turn that answers `continue` never saw the phase that is out. The streak
/// left above the cap says so: that turn is not recorded, and the prompt is handed out again
/// (a new streak begins).
fn cut_by_cap(hook: &Hook<'_>) -> bool {
    let Some(host) = hook.host else {
        return false;
    };
    if hook.input.stop_hook_active.as_bool() == Some(true) {
        return false;
    }
    let var = |key: &str| std::env::var(key).ok();
    let Some(cap) = host.block_cap(hook.home.project(), &var) else {
        return false;
    };
    hook.home
        .streak_path(hook.session)
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|n| n.trim().parse::<u32>().ok())
        .is_some_and(|streak| streak > cap)
}

/// Has the session that claims `line` at this stop seen the line's prompt? Its transcript says.
fn saw_its_prompt(hook: &Hook<'_>, line: &LineRef, turn: &Turn) -> bool {
    shows_prompt(hook.input, &tags(line, hook.host), turn.end.is_some())
}

/// What the turn cost (model, tokens, duration), from the end of the transcript, read against
/// the text as Claude Code has it; only when there is a text to record. A transcript that
/// lacks the turn is waited for only when the client may write it after the hook starts, and
/// then the turn the line recorded last is not taken for this one (see
/// `claude/session_log.rs`). Another host's own records say it in their own way, and name the
/// host.
fn provenance(hook: &Hook<'_>, line: &LineRef, turn: &Turn) -> Option<Provenance> {
    let input = hook.input;
    let spoken = turn.raw.as_ref().or(turn.text.as_ref())?;
    if let Some(host) = hook.host {
        let var = |key: &str| std::env::var(key).ok();
        let found = host.turn(&input.host_stop(hook.session), &var);
        return Some(Provenance {
            host: Some(found.host(host.agent())),
            model: found.model,
            input_tokens: found.tokens.input,
            output_tokens: found.tokens.output,
            cache_read_tokens: found.tokens.cache_read,
            cache_write_tokens: found.tokens.cache_write,
            ..Provenance::default()
        });
    }
    match (&turn.end, input.transcript_path.as_deref()) {
        (Some(end), _) => crate::model::provenance::from_turn(&end.entries, Some(spoken)),
        (None, Some(path)) => turn_provenance(path, spoken, || {
            let writes_first = crate::claude::client::detect(hook.session, Some(path)).version
                >= Some(crate::claude::session_log::WRITES_TURN_FIRST);
            (!writes_first).then(|| {
                crate::model::state::State::load(&hook.home.state_path(line))
                    .ok()
                    .and_then(|state| state.last_turn)
            })
        }),
        (None, None) => None,
    }
}

/// The one transaction of this stop: under the line's lock, from where the record says the
/// line stands; a second hook for the same stop waits, then sees a repeat. The reply carries
/// what `intake` redacted; once the stop is answered, the safety copy at `saved` has done its
/// job (it stays after a failure).
fn record(
    hook: &Hook<'_>,
    line: &LineRef,
    this_stop: stop::Stop<'_>,
    saved: Option<PathBuf>,
    intake: &mut Intake,
) -> Result<Reply, Failure> {
    let reply = stop::stop(hook.home, line, this_stop).map_err(|e| Failure {
        note: intake.note(),
        ..Failure::new(Some(line), saved.clone(), crate::error::chain(&e))
    })?;
    let reply = match intake.note() {
        Some(note) => reply.with_notes(&[note]),
        None => reply,
    };
    if let Some(path) = &saved {
        let _ = crate::fsutil::remove_if_present(path);
    }
    Ok(reply)
}

/// A seat's phase is due: played here, before the host's next turn, unless an `anvil run`
/// drives the line now (it plays the seats itself).
fn play_seats(hook: &Hook<'_>, line: &LineRef, reply: Reply) -> Result<Reply, Failure> {
    if !reply.is_seat() || crate::line::headless::running(hook.home, line) {
        return Ok(reply);
    }
    let clock = stop_clock(hook.home, hook.began);
    crate::seat::hook::play(hook.home, line, hook.session, &clock, reply, hook.config)
        .map_err(|e| Failure::new(Some(line), None, crate::error::chain(&e)))
}

/// The clock of the Stop hook that began at `began` in `home`'s project: how long Claude Code
/// lets it run, read from its settings entry.
#[cold]
fn stop_clock(home: &Home, began: Instant) -> crate::seat::hook::HookClock {
    let (seconds, set_in) = crate::claude::install::stop_timeout(home.project());
    crate::seat::hook::HookClock {
        began,
        timeout: std::time::Duration::from_secs(seconds),
        set_in,
        installed: std::time::Duration::from_secs(crate::claude::install::STOP_TIMEOUT),
    }
}

/// A debate has just ended: the one stop where the record's maintenance is looked at (a few
/// directory listings; when it is due, or a search index is there to catch up, a detached
/// `anvil gc --auto` that nobody waits for). Ordinary phases and sessions without a debate
/// never pay for it; nor does a project whose config cannot be read.
fn look_after_record(hook: &Hook<'_>, reply: &Reply) {
    if reply.kind == Kind::Finish
        && let Some(config) = hook.config.get()
    {
        crate::record::maintenance::start_after_debate(
            &hook.home.record_dir(),
            &hook.home.search_index(),
            &config.gc_limits(),
        );
    }
}

/// The reply as the hook protocol says it.
fn answer(reply: Reply) -> HookOutput {
    match reply.kind {
        Kind::Block { prompt } => HookOutput::Block {
            reason: prompt,
            notice: reply.notice,
        },
        Kind::Finish | Kind::Pause | Kind::Seat | Kind::Message => {
            HookOutput::Message(reply.notice)
        }
        Kind::Silent => HookOutput::Silent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SESSION: &str = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";

    /// A project whose debate is bound to [`SESSION`], one per property (made once: a
    /// record per case would cost more than the properties), used by one case at a time.
    fn project_with_debate(
        cell: &'static std::sync::OnceLock<std::sync::Mutex<(tempfile::TempDir, Home, LineRef)>>,
    ) -> std::sync::MutexGuard<'static, (tempfile::TempDir, Home, LineRef)> {
        cell.get_or_init(|| {
            let debate = crate::testkit::Debate::new().rounds(10).session(SESSION);
            std::sync::Mutex::new(debate.start())
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
    }

    type Fixture = std::sync::OnceLock<std::sync::Mutex<(tempfile::TempDir, Home, LineRef)>>;
    static BYTES: Fixture = std::sync::OnceLock::new();
    static FIELDS: Fixture = std::sync::OnceLock::new();

    /// Whatever the hook answers is one JSON object that Claude Code can read.
    fn assert_protocol(answer: &HookOutput) {
        if let Some(json) = answer.to_json() {
            let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
            assert!(value.is_object(), "{json}");
            assert!(!json.contains('\n'), "one line: {json}");
        }
    }

    /// Any JSON value, a few levels deep, for the fields of the hook input.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            ".{0,40}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                    .prop_map(|m| { serde_json::Value::Object(m.into_iter().collect()) }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(2048)))]

        /// Bytes that are not Claude Code's hook input never panic the hook and never change
        /// the debate: at most a message, as one JSON line.
        #[test]
        fn any_bytes_as_hook_input_are_answered_without_a_panic(
            bytes in prop::collection::vec(any::<u8>(), 0..512),
        ) {
            let fixture = project_with_debate(&BYTES);
            let (dir, home, line) = &*fixture;
            let before = crate::fsutil::read_optional(&home.state_path(line)).unwrap();
            let answer = stop(&bytes, dir.path());
            assert_protocol(&answer);
            let after = crate::fsutil::read_optional(&home.state_path(line)).unwrap();
            prop_assert_eq!(before, after);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(1024)))]

        /// Hook input of the right shape with fields of any type or content: never a panic,
        /// always a protocol answer; a field of the wrong type is an unreadable input, and a
        /// turn of this session's debate is recorded (the step moves by one) or answered as
        /// before; once the debate is over the hook is silent for it.
        #[test]
        fn any_fields_in_hook_input_are_answered_without_a_panic(
            session in prop_oneof![Just(SESSION.to_owned()), ".{0,20}"],
            message in prop_oneof![
                any_json(),
                ".{0,200}".prop_map(serde_json::Value::from),
            ],
            transcript in prop_oneof![
                Just(serde_json::Value::Null),
                Just(serde_json::Value::from("/dev/null")),
                any_json(),
            ],
            active in prop_oneof![any::<bool>().prop_map(serde_json::Value::from), any_json()],
        ) {
            let fixture = project_with_debate(&FIELDS);
            let (dir, home, line) = &*fixture;
            let step = |home: &Home| {
                crate::model::state::State::load(&home.state_path(line)).unwrap().progress.step
            };
            let before = step(home);
            let input = serde_json::json!({
                "session_id": session,
                "cwd": dir.path(),
                "last_assistant_message": message,
                "transcript_path": transcript,
                "stop_hook_active": active,
                "hook_event_name": "Stop",
            });
            let answer = stop(input.to_string().as_bytes(), dir.path());
            assert_protocol(&answer);
            prop_assert!(step(home) <= before + 1, "one stop records at most one phase");
        }
    }
}
