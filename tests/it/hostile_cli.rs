//! Hostile text: what a model or a user writes never reaches a terminal raw (escape sequences
//! are shown, not obeyed, while anvil's own colours stay).

use serde_json::json;

use crate::support::anvil::{Project, Run};

const S1: &str = "33333333-2222-4333-8444-555555555555";

/// Each thing a terminal obeys: erase the screen, write the clipboard (OSC 52), a disguised
/// link (OSC 8), a one-character CSI (C1), a bare carriage return, backspaces, a bell, DEL,
/// another C0 control (vertical tab) and a right-to-left override.
const HOSTILE: &str = "clear\x1b[2J clip\x1b]52;c;SGVsbG8=\x07 link\x1b]8;;https://evil.example/\x1b\\here\x1b]8;;\x1b\\ csi\u{9b}31m over\rwrite back\x08\x08 del\x7f vt\x0b rtl\u{202e}txt";

/// How each of them must look once made visible.
const SHOWN: &[&str] = &[
    "\\x1b[2J",
    "\\x1b]52;c;SGVsbG8=\\x07",
    "\\x1b]8;;https://evil.example/\\x1b\\here",
    "\\u{9b}31m",
    "over\\x0dwrite",
    "back\\x08\\x08",
    "del\\x7f",
    "vt\\x0b",
    "rtl\\u{202e}txt",
];

/// Panics unless `text` holds nothing a terminal would obey other than anvil's own colours
/// (`ESC [ digits ; m`) and CRLF line ends.
fn assert_harmless(what: &str, text: &str) {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\x1b' {
            let mut j = i + 1;
            assert_eq!(
                chars.get(j),
                Some(&'['),
                "{what}: a raw ESC at {i}:\n{text:?}"
            );
            j += 1;
            while chars
                .get(j)
                .is_some_and(|c| c.is_ascii_digit() || *c == ';')
            {
                j += 1;
            }
            assert_eq!(
                chars.get(j),
                Some(&'m'),
                "{what}: an escape sequence that is not a colour at {i}:\n{text:?}"
            );
            i = j + 1;
            continue;
        }
        let crlf = c == '\r' && chars.get(i + 1) == Some(&'\n');
        let obeyed = (c.is_ascii_control() && c != '\n' && c != '\t' && !crlf)
            || ('\u{80}'..='\u{9f}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c);
        assert!(!obeyed, "{what}: raw {c:?} at {i}:\n{text:?}");
        i += 1;
    }
}

fn assert_shown(what: &str, text: &str) {
    for shown in SHOWN {
        assert!(
            text.contains(shown),
            "{what}: {shown} is not shown:\n{text}"
        );
    }
}

/// A project with a finished two-round debate on a hostile question, every phase hostile,
/// and hostile steering delivered with round 2's critic.
struct Hostile {
    project: Project,
}

impl Hostile {
    fn new() -> Hostile {
        let project = Project::new();
        let question = format!("Should we {HOSTILE}?");
        project.start(&[&question, "--rounds", "2", "--session", S1]);
        let h = Hostile { project };
        for (i, role) in ["advocate", "critic", "advocate", "critic", "synthesis"]
            .iter()
            .enumerate()
        {
            if i == 3 {
                h.anvil(&["steer", &format!("steer {HOSTILE}")], false).ok();
            }
            h.hook(&format!(
                "{role} {i} says {HOSTILE}\nsecond line {HOSTILE} {i}"
            ));
        }
        h
    }

    fn hook(&self, text: &str) -> Run {
        let run = self.project.hook(&json!({
            "session_id": S1,
            "cwd": self.project.path(),
            "stop_hook_active": true,
            "last_assistant_message": text,
        }));
        run.ok()
    }

    /// `anvil ARGS`, with colours forced on or off.
    fn anvil(&self, args: &[&str], colour: bool) -> Run {
        let mut cmd = self.project.command(args);
        cmd.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
        if colour {
            cmd.env("CLICOLOR_FORCE", "1");
        } else {
            cmd.env("NO_COLOR", "1");
        }
        let out = cmd.output().expect("run anvil");
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

#[test]
fn hostile_text_is_shown_not_obeyed_by_every_command_that_prints_it() {
    let h = Hostile::new();
    let commands: &[&[&str]] = &[
        &["log"],
        &["show", "round-1"],
        &["show", "round-2/critic"],
        &["show", "synthesis"],
        &["show", "round-2/critic", "--prompt"],
        &["show", "round-2", "--state"],
        &["replay", "--delay", "0"],
        &["replay", "--delay", "0", "--prompts"],
        &["diff", "round-1", "round-2"],
        &["diff", "round-1", "round-2", "--word"],
        &["diff", "round-1", "round-2", "--stat"],
        &["report"],
        &["status", "--all"],
    ];
    for args in commands {
        for colour in [false, true] {
            let what = format!("anvil {} (colour {colour})", args.join(" "));
            let run = h.anvil(args, colour).ok();
            assert_harmless(&what, &run.stdout);
            assert_harmless(&what, &run.stderr);
            if args.contains(&"--prompt") {
                // The prompt carries the steering, whose whitespace `anvil steer` evened out.
                assert!(
                    run.stdout.contains("\\x1b]52;c;"),
                    "{what}:\n{}",
                    run.stdout
                );
            } else if !args.contains(&"--stat") {
                assert_shown(&what, &run.stdout);
            }
            // anvil's own colours stay where it paints (status and report paint nothing).
            let paints = !matches!(args[0], "status" | "report")
                && !args.contains(&"--state")
                && !args.contains(&"--stat");
            assert_eq!(
                colour && paints,
                run.stdout.contains("\x1b["),
                "{what}: colours\n{}",
                run.stdout
            );
        }
    }
}

#[test]
fn json_output_escapes_what_a_terminal_obeys_and_keeps_the_value() {
    let h = Hostile::new();
    for args in [
        &["log", "--json"][..],
        &["show", "round-1", "--json"],
        &["diff", "round-1", "round-2", "--json"],
        &["status", "--all", "--json"],
    ] {
        let run = h.anvil(args, true).ok();
        assert_harmless(&args.join(" "), &run.stdout);
        let value: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
        // The value a script reads keeps the text whole.
        assert!(
            value.to_string().contains("csi\u{9b}31m"),
            "{}",
            args.join(" ")
        );
    }
    let show = h.anvil(&["show", "round-1", "--json"], false).ok();
    let value: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    let response = value["response"].as_str().unwrap();
    assert!(response.contains(HOSTILE), "{response:?}");
}
