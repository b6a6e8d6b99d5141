//! The slash commands' arguments, passed from Claude Code to anvil without a shell.
//!
//! A question is free text: backticks, quotes, `$`, `!`, newlines. Claude Code substitutes a
//! command's arguments into its `!` shell lines, where a backtick ends the line and `$…` is
//! refused, so anvil's command files never put the arguments there. Instead Claude Code's
//! UserPromptExpansion hook (`anvil-hook prompt-expansion`, which Claude Code runs before the
//! command's `!` lines, with the arguments verbatim in its JSON input) leaves them in
//! `.anvil/slash/SESSION.COMMAND`, and the command's only shell line, `anvil slash COMMAND`,
//! takes them from there. Nothing the user typed is ever parsed by a shell.
//!
//! The words of `/anvil "QUESTION" --rounds 2` are split here, leniently: a quote groups words
//! only where it opens a word and closes one, so `Isn't it?` needs no quoting, and a question
//! given without quotes is kept exactly as typed, newlines included.

use std::borrow::Cow;
use std::io;
use std::path::Path;

use crate::claude::protocol::{HookInput, HookOutput};
use crate::home::Home;

/// The slash commands whose arguments go through the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `/anvil "QUESTION" [options]`.
    Start,
    /// `/anvil-steer TEXT`.
    Steer,
    /// `/anvil-cancel [DEBATE[@LINE]]`.
    Cancel,
}

impl Command {
    pub const ALL: [Command; 3] = [Command::Start, Command::Steer, Command::Cancel];

    /// The command's name in Claude Code (its file name without `.md`).
    pub fn slash_name(self) -> &'static str {
        match self {
            Command::Start => "anvil",
            Command::Steer => "anvil-steer",
            Command::Cancel => "anvil-cancel",
        }
    }

    /// The word of `anvil slash WORD`, and of the anvil subcommand it runs.
    pub fn word(self) -> &'static str {
        match self {
            Command::Start => "start",
            Command::Steer => "steer",
            Command::Cancel => "cancel",
        }
    }

    pub fn from_word(word: &str) -> Option<Command> {
        Command::ALL.into_iter().find(|c| c.word() == word)
    }

    /// The command Claude Code names `name`: `anvil-steer`, or `anvil:anvil-steer` when anvil
    /// is loaded as a plugin.
    pub(crate) fn from_slash_name(name: &str) -> Option<Command> {
        let name = name.strip_prefix('/').unwrap_or(name);
        let name = name.strip_prefix("anvil:").unwrap_or(name);
        Command::ALL.into_iter().find(|c| c.slash_name() == name)
    }
}

/// Claude Code's UserPromptExpansion hook: for anvil's own commands, leaves the arguments where
/// the command's `anvil slash` line takes them. Says nothing for every other command.
///
/// `/anvil` in a project that has never seen anvil (a plugin installed, nothing else done)
/// creates `.anvil/` in the session's directory first, as `anvil init` would, and says so. The
/// other commands act on a debate, so without a home `anvil slash` says there is none.
pub(crate) fn prompt_expansion(stdin: &[u8], cwd: &Path) -> HookOutput {
    let Ok(input) = serde_json::from_slice::<HookInput>(stdin) else {
        return HookOutput::Silent;
    };
    let Some(command) = input
        .command_name
        .as_deref()
        .and_then(Command::from_slash_name)
    else {
        return HookOutput::Silent;
    };
    let Some(session) = input.session() else {
        return HookOutput::Silent;
    };
    let dir = input.cwd.as_deref().unwrap_or(cwd);
    let (home, created) = match Home::find(dir) {
        Some(home) => (home, false),
        None if command == Command::Start => match Home::init(dir) {
            Ok(home) => (home, true),
            Err(e) => {
                return HookOutput::Message(format!(
                    "anvil: cannot create .anvil in {} for the first debate here ({e})",
                    dir.display()
                ));
            }
        },
        None => return HookOutput::Silent,
    };
    let args = input.command_args.as_deref().unwrap_or_default();
    match leave(&home, session, command, args) {
        Ok(()) if created => HookOutput::Message(format!(
            "anvil: created {} for this project's first debate: the record of every debate \
             (a git repository) and the live files; its .gitignore keeps them out of your \
             project's history",
            home.root().display()
        )),
        Ok(()) => HookOutput::Silent,
        Err(e) => HookOutput::Message(format!(
            "anvil: cannot pass the arguments of /{} on ({e}); run `anvil doctor`",
            command.slash_name()
        )),
    }
}

/// Leaves `args` for `anvil slash COMMAND` of `session`, in `.anvil/slash/` (which keeps itself
/// out of the project's git).
pub fn leave(home: &Home, session: &str, command: Command, args: &str) -> io::Result<()> {
    let Some(path) = home.slash_path(session, command.slash_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{session}' is not a Claude Code session id"),
        ));
    };
    let ignore = home.slash_dir().join(".gitignore");
    if !ignore.exists() {
        crate::fsutil::write_atomic(&ignore, b"# arguments of slash commands in transit\n*\n")?;
    }
    crate::fsutil::write_atomic(&path, args.as_bytes())
}

/// Takes (reads and removes) what the hook left for `session`'s `command`.
pub fn take(home: &Home, session: &str, command: Command) -> io::Result<Option<String>> {
    let Some(path) = home.slash_path(session, command.slash_name()) else {
        return Ok(None);
    };
    let text = crate::fsutil::read_optional(&path)?;
    if text.is_some() {
        crate::fsutil::remove_if_present(&path)?;
    }
    Ok(text)
}

/// One word of a command's arguments: its text without grouping quotes, and where it stood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word<'a> {
    pub text: Cow<'a, str>,
    /// Byte range in the arguments, quotes included.
    pub span: std::ops::Range<usize>,
    /// Whether the whole word was quoted.
    pub quoted: bool,
}

fn is_quote(c: char) -> bool {
    c == '"' || c == '\''
}

/// Where the quote `q` opened before `from` closes: the first `q` followed by whitespace or the
/// end of `text` that no backslash escapes (`\"`, as a shell user writes a quote inside one).
fn closing(text: &str, from: usize, q: char) -> Option<usize> {
    let rest = &text[from..];
    rest.char_indices()
        .filter(|&(_, c)| c == q)
        .map(|(i, _)| from + i)
        .find(|&i| {
            let backslashes = text[from..i]
                .bytes()
                .rev()
                .take_while(|&b| b == b'\\')
                .count();
            backslashes % 2 == 0
                && text[i + q.len_utf8()..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
}

/// Splits arguments into words at whitespace. A quote that opens a word (or follows `=` in
/// `--name="…"`) groups everything up to the same quote where it ends a word; any other quote
/// is an ordinary character. Nothing is expanded or unescaped.
pub fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i..].chars().next().expect("in bounds");
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        if is_quote(c)
            && let Some(end) = closing(text, start + 1, c)
        {
            out.push(Word {
                text: Cow::Borrowed(&text[start + 1..end]),
                span: start..end + 1,
                quoted: true,
            });
            i = end + 1;
            continue;
        }
        let end = text[start..]
            .find(char::is_whitespace)
            .map_or(text.len(), |n| start + n);
        let word = &text[start..end];
        // `--name="several words"`: the quoted value may hold whitespace.
        if word.starts_with("--")
            && let Some(eq) = word.find('=')
            && let Some(q) = word[eq + 1..].chars().next().filter(|&q| is_quote(q))
            && let Some(close) = closing(text, start + eq + 2, q)
        {
            out.push(Word {
                text: Cow::Owned(format!(
                    "{}{}",
                    &text[start..start + eq + 1],
                    &text[start + eq + 2..close]
                )),
                span: start..close + 1,
                quoted: false,
            });
            i = close + 1;
            continue;
        }
        out.push(Word {
            text: Cow::Borrowed(word),
            span: start..end,
            quoted: false,
        });
        i = end;
    }
    out
}

/// The inside of a quoted word as a shell user means it: `\"` in double quotes (`\'` in
/// single ones) is the quote itself and `\\` one backslash; any other backslash stays.
fn unescape(inside: &str, quote: char) -> Cow<'_, str> {
    if !inside.contains('\\') {
        return Cow::Borrowed(inside);
    }
    let mut out = String::with_capacity(inside.len());
    let mut chars = inside.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&next)) if next == quote || next == '\\' => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The text of a quoted word at `span` of `args` (quotes included), unescaped.
fn quoted_text<'a>(args: &'a str, span: &std::ops::Range<usize>) -> Cow<'a, str> {
    let quote = args[span.start..].chars().next().unwrap_or('"');
    unescape(&args[span.start + 1..span.end - 1], quote)
}

/// The text of arguments that are all one thing (steering, a line name): without the quotes
/// (and their escapes) when they are one quoted word, else exactly as typed.
pub fn whole(args: &str) -> Cow<'_, str> {
    let trimmed = args.trim();
    match words(trimmed).as_slice() {
        [one] if one.quoted && one.span == (0..trimmed.len()) => quoted_text(trimmed, &one.span),
        _ => Cow::Borrowed(trimmed),
    }
}

/// The question and the option words of `/anvil ARGS`. The question is everything before the
/// first option (`is_option` says which `--words` are options of `anvil start`): the text of
/// one quoted word, or the words exactly as typed, spacing and newlines included.
pub(crate) fn split_start(
    args: &str,
    is_option: impl Fn(&str) -> bool,
) -> (Option<Cow<'_, str>>, Vec<String>) {
    let words = words(args);
    let first_option = words
        .iter()
        .position(|w| !w.quoted && is_option(&w.text))
        .unwrap_or(words.len());
    let (question, options) = words.split_at(first_option);
    let question = match question {
        [] => None,
        [one] if one.quoted => Some(quoted_text(args, &one.span)),
        [first, .., last] => Some(Cow::Borrowed(&args[first.span.start..last.span.end])),
        [one] => Some(Cow::Borrowed(&args[one.span.clone()])),
    };
    let options = options
        .iter()
        .map(|w| w.text.clone().into_owned())
        .collect();
    (question, options)
}

/// The `anvil` command line (after the program name) that carries out `command` with `args`.
/// `is_start_option` tells the long options of `anvil start`.
pub fn argv(command: Command, args: &str, is_start_option: impl Fn(&str) -> bool) -> Vec<String> {
    let mut argv = vec![command.word().to_owned(), "--slash".to_owned()];
    let rest = match command {
        Command::Start => {
            let (question, options) = split_start(args, is_start_option);
            argv.extend(options);
            question
        }
        Command::Steer | Command::Cancel => Some(whole(args)).filter(|t| !t.is_empty()),
    };
    if let Some(rest) = rest {
        argv.push("--".to_owned());
        argv.push(rest.into_owned());
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_option(word: &str) -> bool {
        let name = word.split('=').next().unwrap_or(word);
        ["--rounds", "--interactive", "--position", "--mode", "-o"].contains(&name)
    }

    fn start(args: &str) -> Vec<String> {
        argv(Command::Start, args, is_option)
    }

    #[test]
    fn questions_reach_anvil_start_as_typed() {
        let table: &[(&str, &[&str])] = &[
            (
                "\"Should we split the monolith?\" --rounds 5 --interactive",
                &[
                    "--rounds",
                    "5",
                    "--interactive",
                    "--",
                    "Should we split the monolith?",
                ],
            ),
            (
                "Should we replace `serde_yaml`?",
                &["--", "Should we replace `serde_yaml`?"],
            ),
            (
                "Isn't $HOME   \"odd\"!\nsecond line ünï 🦀 --rounds 1",
                &[
                    "--rounds",
                    "1",
                    "--",
                    "Isn't $HOME   \"odd\"!\nsecond line ünï 🦀",
                ],
            ),
            (
                "'it's \"fine\"' --position=\"We keep it\"",
                &["--position=We keep it", "--", "it's \"fine\""],
            ),
            ("--rounds 2 \"Q\"", &["--rounds", "2", "Q"]),
            (
                "Should we pass --force to git?",
                &["--", "Should we pass --force to git?"],
            ),
            ("", &[]),
            ("\"unclosed question", &["--", "\"unclosed question"]),
            (
                "\"Should we replace \\\"saphyr\\\"?\" --rounds 1",
                &["--rounds", "1", "--", "Should we replace \"saphyr\"?"],
            ),
            (
                "\"say \\\"hi\\\" now, C:\\\\tmp and \\d\"",
                &["--", "say \"hi\" now, C:\\tmp and \\d"],
            ),
        ];
        for (args, expected) in table {
            let mut want = vec!["start".to_owned(), "--slash".to_owned()];
            want.extend(expected.iter().map(|s| s.to_string()));
            assert_eq!(start(args), want, "{args:?}");
        }
    }

    #[test]
    fn steering_and_line_names_are_one_argument() {
        assert_eq!(
            argv(
                Command::Steer,
                "  focus on `cost` & $risk\nplease ",
                is_option
            ),
            ["steer", "--slash", "--", "focus on `cost` & $risk\nplease"]
        );
        assert_eq!(
            argv(Command::Steer, "\"--rounds is fine\"", is_option),
            ["steer", "--slash", "--", "--rounds is fine"]
        );
        assert_eq!(argv(Command::Cancel, "", is_option), ["cancel", "--slash"]);
        assert_eq!(
            argv(Command::Cancel, "2026-x@main", is_option),
            ["cancel", "--slash", "--", "2026-x@main"]
        );
    }

    #[test]
    fn plugin_names_are_recognised() {
        assert_eq!(Command::from_slash_name("anvil"), Some(Command::Start));
        assert_eq!(
            Command::from_slash_name("anvil:anvil-steer"),
            Some(Command::Steer)
        );
        assert_eq!(Command::from_slash_name("anvil-status"), None);
        assert_eq!(Command::from_slash_name("deploy"), None);
    }

    /// A project that has never seen anvil: `/anvil` creates `.anvil/` there and says so; the
    /// commands that act on a debate create nothing.
    #[test]
    fn the_first_slash_start_in_a_project_creates_its_home() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path();
        let session = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";
        let input = |name: &str| {
            serde_json::json!({
                "session_id": session, "cwd": project,
                "hook_event_name": "UserPromptExpansion",
                "command_name": name, "command_args": "Adopt GraphQL?",
            })
            .to_string()
        };
        for name in ["anvil:anvil-steer", "anvil-cancel"] {
            let answer = prompt_expansion(input(name).as_bytes(), project);
            assert_eq!(answer, HookOutput::Silent);
            assert!(!project.join(".anvil").exists(), "{name} created .anvil");
        }
        let answer = prompt_expansion(input("anvil:anvil").as_bytes(), project);
        let HookOutput::Message(message) = answer else {
            panic!("no message: {answer:?}");
        };
        assert!(message.contains("created"), "{message}");
        assert!(message.contains(".anvil"), "{message}");
        let home = Home::find(project).expect("created");
        assert!(home.root().join(".gitignore").is_file());
        assert_eq!(
            take(&home, session, Command::Start).unwrap().as_deref(),
            Some("Adopt GraphQL?")
        );
        // The second time it is there: nothing to say.
        let answer = prompt_expansion(input("anvil:anvil").as_bytes(), project);
        assert_eq!(answer, HookOutput::Silent);
    }

    #[test]
    fn the_hook_leaves_the_arguments_for_one_take() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path();
        let home = Home::init(project).unwrap();
        let session = "0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9";
        let input = serde_json::json!({
            "session_id": session,
            "cwd": project,
            "hook_event_name": "UserPromptExpansion",
            "command_name": "anvil",
            "command_args": "Replace `serde_yaml`? $x !y",
        });
        let answer = prompt_expansion(input.to_string().as_bytes(), project);
        assert_eq!(answer, HookOutput::Silent);
        assert_eq!(
            take(&home, session, Command::Start).unwrap().as_deref(),
            Some("Replace `serde_yaml`? $x !y")
        );
        assert_eq!(take(&home, session, Command::Start).unwrap(), None);
        // Kept out of the project's git.
        assert!(home.slash_dir().join(".gitignore").is_file());

        // Other commands, and sessions ids that are not ids, leave nothing.
        for (name, session) in [("deploy", session), ("anvil", "../../etc")] {
            let input = serde_json::json!({
                "session_id": session, "cwd": project,
                "command_name": name, "command_args": "x",
            });
            assert_eq!(
                prompt_expansion(input.to_string().as_bytes(), project),
                HookOutput::Silent
            );
        }
        let left: Vec<_> = std::fs::read_dir(home.slash_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [std::ffi::OsString::from(".gitignore")]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testkit::cases(2048)))]
        #[test]
        fn one_quoted_question_is_kept_verbatim(q in "[^\"\\\\]*[^\"\\s\\\\]") {
            let args = format!("\"{q}\" --rounds 2");
            let (question, options) = split_start(&args, is_option);
            proptest::prop_assert_eq!(question.as_deref(), Some(q.as_str()));
            proptest::prop_assert_eq!(options, vec!["--rounds".to_owned(), "2".to_owned()]);
        }

        /// Any question, quoted and escaped as a shell user writes it, arrives as meant.
        #[test]
        fn a_question_escaped_as_in_a_shell_arrives_unescaped(q in "\\PC*[^\\s]") {
            let escaped = q.replace('\\', "\\\\").replace('"', "\\\"");
            let args = format!("\"{escaped}\" --rounds 2");
            let (question, options) = split_start(&args, is_option);
            proptest::prop_assert_eq!(question.as_deref(), Some(q.as_str()));
            proptest::prop_assert_eq!(options, vec!["--rounds".to_owned(), "2".to_owned()]);
        }

        #[test]
        fn splitting_never_panics_and_words_lie_in_the_text(text in "\\PC*") {
            for w in words(&text) {
                proptest::prop_assert!(w.span.end <= text.len());
                proptest::prop_assert!(text.is_char_boundary(w.span.start));
            }
            let _ = argv(Command::Start, &text, is_option);
        }
    }
}
