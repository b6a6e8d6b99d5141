//! Signals a person notices in Claude Code's terminal while a debate runs: the window title and
//! the progress bar say where it stands, and a desktop notification says when it waits for the
//! person (an interactive pause, a debater's question) or ends. They travel in the Stop hook's
//! `terminalSequence`, which Claude Code writes to its own terminal after checking it: only
//! title (OSC 0/1/2), notification (OSC 9, 99, 777) and progress (OSC 9;4) sequences and BEL
//! pass, so a terminal never receives anything else from anvil.
//!
//! On by default; `[notify] terminal = false` in `.anvil/config.toml` (or
//! `ANVIL_TERMINAL_SIGNALS=0` in the hook's environment) turns them off.

use crate::claude::protocol::HookOutput;
use crate::home::{Home, LineRef};
use crate::model::state::{Role, State, Status};

/// `answer`, with the signals for where `line` stands now; `config` is the hook run's.
pub(crate) fn add(
    home: &Home,
    line: &LineRef,
    answer: HookOutput,
    config: &crate::model::config::Lazy,
) -> HookOutput {
    if answer == HookOutput::Silent || !enabled(config) {
        return answer;
    }
    let Ok(state) = State::load(&home.state_path(line)) else {
        return answer;
    };
    HookOutput::Signalled {
        answer: Box::new(answer),
        sequence: sequence(&state),
    }
}

fn enabled(config: &crate::model::config::Lazy) -> bool {
    if std::env::var("ANVIL_TERMINAL_SIGNALS").is_ok_and(|v| v == "0") {
        return false;
    }
    config.get().and_then(|c| c.notify).and_then(|n| n.terminal) != Some(false)
}

/// The sequences for a line that stands at `state`.
pub(crate) fn sequence(state: &State) -> String {
    let p = &state.progress;
    let name = format!("{}@{}", state.debate, state.line);
    let question = crate::model::state::first_line(&state.setup.question);
    let mut out = osc(
        0,
        &format!("anvil · {} · {}", short(&state.debate), state.standing()),
    );
    match (p.status, p.phase) {
        (Status::Done, _) => {
            out.push_str(&osc(9, "4;0"));
            out.push_str(&notification(&format!("{name} is done: {question}")));
        }
        (Status::Cancelled, _) => out.push_str(&osc(9, "4;0")),
        (Status::WaitingForInput, _) => {
            out.push_str(&osc(9, &format!("4;4;{}", percent(state))));
            let asked = state.question.as_ref().map_or("", |q| q.text.as_str());
            out.push_str(&notification(&format!(
                "a debater of {name} asks you: {asked}"
            )));
        }
        (Status::Active, Role::InteractivePause) => {
            out.push_str(&osc(9, &format!("4;4;{}", percent(state))));
            out.push_str(&notification(&format!(
                "{name} pauses after round {} for your steering",
                p.round
            )));
        }
        (Status::Active, _) => out.push_str(&osc(9, &format!("4;1;{}", percent(state)))),
    }
    out
}

/// How far the debate is, from 0 to 99: by round, the synthesis last.
fn percent(state: &State) -> u32 {
    let rounds = state.setup.rounds.max(1);
    if state.progress.phase == Role::Synthesizer {
        return 95;
    }
    (state.progress.round.saturating_sub(1) * 100 / rounds).min(94)
}

/// The debate's id without its date: what fits in a title.
fn short(debate: &str) -> &str {
    debate.split_once('-').map_or(debate, |(_, rest)| rest)
}

/// A desktop notification (OSC 9): its body must not begin with a digit (that would be another
/// OSC 9 form), so it always begins with `anvil: `.
fn notification(text: &str) -> String {
    osc(9, &format!("anvil: {text}"))
}

/// `ESC ] ps ; payload BEL`, the payload on one line with every character a terminal would
/// obey shown instead ([`crate::term::one_line`]: a debater's question is free text), and cut
/// to 200 characters.
fn osc(ps: u32, payload: &str) -> String {
    let clean: String = crate::term::one_line(payload).chars().take(200).collect();
    format!("\u{1b}]{ps};{clean}\u{7}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::line_with_debate;

    /// What Claude Code accepts (its allowlist, as 2.1.197 applies it): OSC 0/1/2/9/99/777
    /// ended by BEL, an OSC 9 body that begins with a digit only in the `9;4` form, 4 KiB at
    /// most.
    fn accepted(seq: &str) -> bool {
        if seq.len() > 4096 {
            return false;
        }
        let mut rest = seq;
        while !rest.is_empty() {
            let Some(body) = rest.strip_prefix("\u{1b}]") else {
                return false;
            };
            let Some(end) = body.find('\u{7}') else {
                return false;
            };
            let (ps, payload) = body[..end].split_once(';').unwrap_or((&body[..end], ""));
            if !["0", "1", "2", "9", "99", "777"].contains(&ps) || payload.contains('\u{1b}') {
                return false;
            }
            if ps == "9"
                && payload.starts_with(|c: char| c.is_ascii_digit())
                && !payload.starts_with("4;")
            {
                return false;
            }
            rest = &body[end + 1..];
        }
        true
    }

    #[test]
    fn each_moment_of_a_debate_has_signals_claude_code_lets_through() {
        let (_dir, home, line) = line_with_debate();
        let mut state = State::load(&home.state_path(&line)).unwrap();
        let running = sequence(&state);
        assert!(accepted(&running), "{running:?}");
        assert!(running.contains("\u{1b}]9;4;1;0\u{7}"), "{running:?}");
        assert!(running.starts_with("\u{1b}]0;anvil · "), "{running:?}");

        state.progress.status = Status::WaitingForInput;
        state.question = Some(crate::model::state::Question {
            text: "9 engineers?\u{1b}]52;c;evil\u{7}\nor more".into(),
            answer: None,
        });
        let asked = sequence(&state);
        assert!(
            accepted(&asked),
            "control characters in a question are neutralised: {asked:?}"
        );
        assert!(asked.contains("asks you: 9 engineers?"), "{asked:?}");

        state.progress.status = Status::Done;
        let done = sequence(&state);
        assert!(accepted(&done), "{done:?}");
        assert!(
            done.contains("\u{1b}]9;4;0\u{7}") && done.contains("is done"),
            "{done:?}"
        );
    }
}
