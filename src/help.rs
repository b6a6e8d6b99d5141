//! What the command line says before it runs anything: `anvil --help`, with a quick start and
//! the commands in four groups, and the parse errors, where every mistyped command or option
//! gets a suggestion.
//!
//! clap lists subcommands in one block and suggests by Jaro similarity, which misses short
//! words with two letters swapped (`anvil lgo`); so the groups are drawn here from the
//! commands' own `about` (one table, [`GROUPS`], which a test holds against the commands), and
//! a mistype clap found nothing for is given the nearest name by edit distance (`strsim`, the
//! library clap itself uses for its suggestions).

use std::ffi::OsString;
use std::fmt::Write as _;

use clap::builder::StyledStr;
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Three lines that start someone off, above everything else.
const QUICK_START: &str = concat!(
    "  anvil init && anvil install            once per project; then /anvil in Claude Code\n",
    "  anvil run \"Should we adopt GraphQL?\"   a whole debate from the terminal\n",
    "  anvil log · anvil show · anvil report  what the debates found",
);

/// The commands of `anvil --help`, in groups: every visible command in exactly one.
pub const GROUPS: [(&str, &[&str]); 4] = [
    (
        "Debate",
        &[
            "start", "run", "status", "steer", "ask", "answer", "branch", "resume", "cancel",
        ],
    ),
    (
        "Review",
        &[
            "log", "show", "diff", "report", "adr", "search", "replay", "serve",
        ],
    ),
    (
        "Project",
        &[
            "init",
            "install",
            "uninstall",
            "plugin",
            "doctor",
            "push",
            "pull",
            "gc",
            "prompts",
            "completions",
        ],
    ),
    ("Agents", &["seats", "mcp", "hook"]),
];

/// `command` (the whole command line) with its help laid out: the quick start, then the usage,
/// then the commands in their groups, then the options.
pub fn laid_out(command: clap::Command) -> clap::Command {
    let header = command.get_styles().get_header();
    let mut before = StyledStr::new();
    let _ = write!(before, "{header}Quick start:{header:#}\n{QUICK_START}");
    let mut groups = StyledStr::new();
    let width = GROUPS
        .iter()
        .flat_map(|(_, names)| names.iter())
        .map(|n| n.len())
        .max()
        .unwrap_or(0);
    for (i, (title, names)) in GROUPS.iter().enumerate() {
        if i > 0 {
            groups.push_str("\n");
        }
        let _ = writeln!(groups, "{header}{title}:{header:#}");
        for name in *names {
            let about = command
                .find_subcommand(name)
                .and_then(|c| c.get_about())
                .map(ToString::to_string)
                .unwrap_or_default();
            let literal = command.get_styles().get_literal();
            let _ = writeln!(groups, "  {literal}{name:<width$}{literal:#}  {about}");
        }
    }
    // clap puts a blank line after the text before the usage, and one before the text after.
    let template = format!(
        "{{about-with-newline}}\n{{before-help}}{{usage-heading}} {{usage}}{{after-help}}\n\n\
         {header}Options:{header:#}\n{{options}}\n\n\
         `anvil COMMAND -h` for its options, `anvil COMMAND --help` for more, with examples."
    );
    command
        .before_help(before)
        .after_help(groups)
        .help_template(template)
}

/// A parse error, with a suggestion added where clap found none: the nearest command or
/// option to what was typed (`args`, the program's arguments after its name).
pub fn with_suggestion(
    mut error: clap::Error,
    command: &clap::Command,
    args: &[OsString],
) -> clap::Error {
    let (kind, typed, wanted) = match error.kind() {
        ErrorKind::InvalidSubcommand => (
            ContextKind::SuggestedSubcommand,
            ContextKind::InvalidSubcommand,
            Wanted::Command,
        ),
        ErrorKind::UnknownArgument => (
            ContextKind::SuggestedArg,
            ContextKind::InvalidArg,
            Wanted::Option,
        ),
        _ => return error,
    };
    if error.get(kind).is_some() {
        return error;
    }
    let Some(ContextValue::String(typed)) = error.get(typed).cloned() else {
        return error;
    };
    let at = reached(command, args, &typed);
    let suggestion = match wanted {
        Wanted::Command => nearest(&typed, &command_names(at)),
        Wanted::Option => typed
            .strip_prefix("--")
            .map(|t| t.split('=').next().unwrap_or(t))
            .and_then(|t| nearest(t, &long_names(at)))
            .map(|name| format!("--{name}")),
    };
    if let Some(suggestion) = suggestion {
        error.insert(kind, ContextValue::Strings(vec![suggestion]));
    }
    error
}

enum Wanted {
    Command,
    Option,
}

/// The subcommand `args` reached before `typed`, the word that went wrong: the command whose
/// commands or options were meant.
fn reached<'c>(root: &'c clap::Command, args: &[OsString], typed: &str) -> &'c clap::Command {
    let mut at = root;
    for arg in args {
        let Some(arg) = arg.to_str() else { break };
        if arg == typed {
            break;
        }
        match at
            .get_subcommands()
            .find(|c| c.get_name() == arg || c.get_all_aliases().any(|a| a == arg))
        {
            Some(sub) => at = sub,
            None if arg.starts_with('-') => continue,
            None => break,
        }
    }
    at
}

fn command_names(command: &clap::Command) -> Vec<String> {
    command
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_visible_aliases()))
        .map(str::to_owned)
        .collect()
}

fn long_names(command: &clap::Command) -> Vec<String> {
    command
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .flat_map(|a| a.get_long_and_visible_aliases().unwrap_or_default())
        .map(str::to_owned)
        .collect()
}

/// The name nearest to `typed`, if one is near enough to be meant: a swap of two letters, a
/// letter missing, extra or wrong (two of them in a name of more than four letters), or the
/// start of only that name.
fn nearest(typed: &str, names: &[String]) -> Option<String> {
    let typed = typed.to_lowercase();
    let allowed = if typed.chars().count() > 4 { 2 } else { 1 };
    let by_distance = names
        .iter()
        .map(|n| (strsim::osa_distance(&typed, n), n))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.clone());
    by_distance.or_else(|| {
        let starting: Vec<&String> = names
            .iter()
            .filter(|n| typed.len() >= 2 && n.starts_with(&typed))
            .collect();
        match starting.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn a_mistype_is_near_the_name_it_meant() {
        let commands = names(&["log", "show", "start", "status", "steer", "seats", "serve"]);
        assert_eq!(nearest("lgo", &commands).as_deref(), Some("log"));
        assert_eq!(nearest("sohw", &commands).as_deref(), Some("show"));
        assert_eq!(nearest("strat", &commands).as_deref(), Some("start"));
        assert_eq!(nearest("stat", &commands).as_deref(), Some("start"));
        assert_eq!(nearest("LOG", &commands).as_deref(), Some("log"));
        // The start of one name only.
        assert_eq!(nearest("stee", &commands).as_deref(), Some("steer"));
        assert_eq!(nearest("xyzzy", &commands), None);
        assert_eq!(nearest("s", &commands), None);
    }
}
