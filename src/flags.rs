//! The debate options as clap arguments. Each definition of
//! [`anvil_core::model::options::defs`] becomes its flag and its `--no-` form, with the words,
//! the value's name and type, and the completion it says; parsing hands each value back to the
//! definition. Nothing here names an option: `--help`, the completions and the parsing of
//! `anvil start` and `anvil run` come from the definitions alone.

use std::ffi::OsString;
use std::path::PathBuf;

use anvil_core::model::options::{Flag, Given, Options, Takes, Ty, defs};
use clap::builder::ValueParser;
use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};

/// The question and the options of a debate, shared by `anvil start` and `anvil run`.
#[derive(Debug, Clone)]
pub struct DebateArgs {
    /// As given: the question joined, every option the command line set.
    pub options: Options,
}

/// The group of every argument here but those `anvil run --line` takes too
/// ([`Flag::with_line`]): `--line` conflicts with all of them.
const GROUP: &str = "DebateArgs";
const QUESTION: &str = "question";

impl clap::Args for DebateArgs {
    fn group_id() -> Option<clap::Id> {
        Some(GROUP.into())
    }

    fn augment_args(command: Command) -> Command {
        let mut ids = vec![QUESTION];
        let mut command = command.arg(
            Arg::new(QUESTION)
                .value_name("QUESTION")
                .num_args(1..)
                .value_parser(clap::value_parser!(String))
                .action(ArgAction::Append)
                .help(
                    "The question to stress-test, e.g. \"Should we rewrite billing in Rust?\". \
                     May be left out with --versus, which then asks which result is stronger \
                     and why",
                ),
        );
        for flag in flags() {
            command = command.arg(arg(flag));
            if !flag.with_line {
                ids.push(flag.long);
            }
            if let Some(negation) = &flag.negation {
                command = command.arg(with_help(
                    Arg::new(negation.long)
                        .long(negation.long)
                        .action(ArgAction::SetTrue)
                        .overrides_with(flag.long),
                    negation.help,
                    None,
                ));
                ids.push(negation.long);
            }
        }
        command.group(ArgGroup::new(GROUP).multiple(true).args(ids))
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

impl clap::FromArgMatches for DebateArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut options = Options {
            question: matches
                .get_many::<String>(QUESTION)
                .into_iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            ..Options::default()
        };
        for flag in flags() {
            let given = match flag.takes {
                Takes::Switch if matches.get_flag(flag.long) => Some(Given::On),
                Takes::Switch => flag
                    .negation
                    .as_ref()
                    .filter(|negation| matches.get_flag(negation.long))
                    .map(|_| Given::Off),
                _ => matches
                    .get_raw(flag.long)
                    .map(|values| Given::Values(values.map(OsString::from).collect())),
            };
            if let Some(given) = given {
                (flag.given)(&mut options, given).map_err(|e| {
                    clap::Error::raw(
                        clap::error::ErrorKind::ValueValidation,
                        format!("--{}: {e}\n", flag.long),
                    )
                })?;
            }
        }
        Ok(DebateArgs { options })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// Every definition with a flag, in the order of `--help`.
fn flags() -> impl Iterator<Item = &'static Flag> {
    defs::ALL.into_iter().filter_map(|def| def.flag.as_ref())
}

/// The clap argument of one flag.
fn arg(flag: &'static Flag) -> Arg {
    let arg = with_help(
        Arg::new(flag.long).long(flag.long),
        &flag.words(),
        flag.example,
    );
    let arg = match flag.short {
        Some(c) => arg.short(c),
        None => arg,
    };
    let arg = match flag.takes {
        Takes::Switch => arg.action(ArgAction::SetTrue),
        Takes::One(value) => arg
            .value_name(value.name)
            .value_parser(parser(value.ty))
            .action(ArgAction::Set),
        Takes::OneOrNone(value) => arg
            .value_name(value.name)
            .num_args(0..=1)
            .default_missing_value("")
            .value_parser(parser(value.ty))
            .action(ArgAction::Set),
        Takes::Each(value) => arg
            .value_name(value.name)
            .value_parser(parser(value.ty))
            .action(ArgAction::Append),
        Takes::Two { names, ty } => arg
            .value_names(names)
            .num_args(2)
            .value_parser(parser(ty))
            .action(ArgAction::Append),
    };
    match &flag.negation {
        Some(negation) => arg.overrides_with(negation.long),
        None => arg,
    }
}

/// How clap checks (and completes) a value of type `ty`.
fn parser(ty: Ty) -> ValueParser {
    match ty {
        Ty::Text => clap::value_parser!(String),
        Ty::Path => clap::value_parser!(PathBuf),
        Ty::U8 => clap::value_parser!(u8).into(),
        Ty::U32 => clap::value_parser!(u32).into(),
        Ty::U64 => clap::value_parser!(u64).into(),
        Ty::F64 => clap::value_parser!(f64).into(),
        Ty::Checked(check) => ValueParser::new(move |s: &str| check(s).map(|()| s.to_owned())),
    }
}

fn with_help(arg: Arg, words: &str, example: Option<&'static str>) -> Arg {
    match help(words, example) {
        (short, Some(long)) => arg.help(short).long_help(long),
        (short, None) => arg.help(short),
    }
}

/// `-h`'s line (the first paragraph, without its full stop, as clap's derive makes it) and
/// `--help`'s words (every paragraph, and the example), when there is more than one paragraph.
fn help(words: &str, example: Option<&'static str>) -> (String, Option<String>) {
    let first = words.split("\n\n").next().unwrap_or(words);
    let short = match first.strip_suffix('.') {
        Some(cut) if !first.ends_with("..") => cut.to_owned(),
        _ => first.to_owned(),
    };
    let long = match example {
        Some(example) => Some(format!("{words}\n\nExample: {example}")),
        None if words.contains("\n\n") => Some(words.to_owned()),
        None => None,
    };
    (short, long)
}

/// The keys of `.anvil/config.toml` that set debate options, for `--help`.
pub fn config_keys() -> String {
    anvil_core::model::options::config_keys()
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_is_the_first_paragraph_and_the_long_help_everything() {
        assert_eq!(help("One line.", None), ("One line".to_owned(), None));
        assert_eq!(
            help("One line.", Some("--x 2")),
            (
                "One line".to_owned(),
                Some("One line.\n\nExample: --x 2".to_owned())
            )
        );
        assert_eq!(help("Wait...", None).0, "Wait...");
    }

    #[test]
    fn every_type_parses_its_values() {
        let command = |ty| {
            Command::new("t").arg(
                Arg::new("v")
                    .long("v")
                    .value_parser(parser(ty))
                    .action(ArgAction::Set),
            )
        };
        for (ty, good, bad) in [
            (Ty::Text, Some("x"), None),
            (Ty::Path, Some("a/b"), None),
            (Ty::U8, Some("255"), Some("256")),
            (Ty::U32, Some("7"), Some("x")),
            (Ty::U64, Some("18446744073709551615"), Some("-1")),
            (Ty::F64, Some("0.25"), Some("cheap")),
            (
                Ty::Checked(|s| (s == "yes").then_some(()).ok_or(format!("no {s}"))),
                Some("yes"),
                Some("y"),
            ),
        ] {
            for (value, ok) in [(good, true), (bad, false)] {
                if let Some(value) = value {
                    let parsed = command(ty).try_get_matches_from(["t", "--v", value]);
                    assert_eq!(parsed.is_ok(), ok, "{ty:?} {value}");
                }
            }
        }
    }
}
