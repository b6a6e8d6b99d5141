//! A prompt kept text for the agent that reads it. Claude Code, Qwen Code and Gemini CLI read
//! parts of a prompt as commands of their own, from stdin as from an argument: an `@path`
//! inlines that file (Claude Code's when the `@` starts a word; Qwen Code's and Gemini CLI's
//! anywhere, `DEBATE@LINE` included), a leading `/` runs a slash command. A debate quotes
//! what other agents and files said, so a debater writing `@~/.aws/credentials` would have
//! the next seat read that file and send it to its provider. Each agent's file keeps its
//! prompt text through the one of these its agent needs.

use std::borrow::Cow;

/// A zero-width space: the model reads past it, an agent's parser sees a character.
const ZERO_WIDTH: char = '\u{200B}';

/// `@` escaped as `\@` everywhere, the escape Qwen Code's and Gemini CLI's parsers of `@path`
/// honour (the model reads `\@`).
pub fn escape_every_at(prompt: &str) -> Cow<'_, str> {
    if prompt.contains('@') {
        prompt.replace('@', "\\@").into()
    } else {
        prompt.into()
    }
}

/// A zero-width space before each `@` that starts a word, where Claude Code reads a mention
/// of a file (after a space, a line's start, or CJK punctuation); other `@`s stay as they are.
pub fn break_mentions(prompt: &str) -> Cow<'_, str> {
    let starts_word = |before: Option<char>| {
        before.is_none_or(|c| c.is_whitespace() || "\u{3002}\u{3001}\u{FF1F}\u{FF01}".contains(c))
    };
    let mut before = None;
    let needed = prompt.chars().any(|c| {
        let hit = c == '@' && starts_word(before);
        before = Some(c);
        hit
    });
    if !needed {
        return prompt.into();
    }
    let mut out = String::with_capacity(prompt.len() + 16);
    let mut before = None;
    for c in prompt.chars() {
        if c == '@' && starts_word(before) {
            out.push(ZERO_WIDTH);
        }
        out.push(c);
        before = Some(c);
    }
    out.into()
}

/// A zero-width space before a leading `/`, which would make the prompt a slash command.
pub fn no_command<'p>(prompt: Cow<'p, str>) -> Cow<'p, str> {
    if prompt.starts_with('/') {
        format!("{ZERO_WIDTH}{prompt}").into()
    } else {
        prompt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_at_is_escaped_for_the_parsers_that_honour_a_backslash() {
        assert_eq!(
            escape_every_at("see @a.txt and x@y, debate@main"),
            "see \\@a.txt and x\\@y, debate\\@main"
        );
        assert!(matches!(escape_every_at("no at"), Cow::Borrowed(_)));
    }

    #[test]
    fn only_an_at_that_starts_a_word_is_broken() {
        assert_eq!(
            break_mentions("@a read @~/.ssh/id_rsa\n@b, user@host d@main"),
            "\u{200B}@a read \u{200B}@~/.ssh/id_rsa\n\u{200B}@b, user@host d@main"
        );
        assert!(matches!(break_mentions("user@host"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_leading_slash_is_no_command() {
        assert_eq!(no_command("/anvil now".into()), "\u{200B}/anvil now");
        assert_eq!(no_command("[anvil x] /a".into()), "[anvil x] /a");
    }
}
