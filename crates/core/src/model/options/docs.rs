//! docs/options.md, checked against the definitions: its table of options and its example
//! config file are rendered from [`super::defs`], so the page cannot drift from the code.
//! `ANVIL_WRITE_DOCS=1 cargo test -p anvil-debate-core options::docs` rewrites them.

use super::defs::ALL;
use super::{Takes, Value};

/// The table of every option with a flag: how it is typed, its config key, what it does, an
/// example.
fn table() -> String {
    let mut out =
        String::from("| option | config key | what it does | example |\n|---|---|---|---|\n");
    for def in ALL {
        let Some(flag) = &def.flag else { continue };
        let shown = |v: &str| {
            if def.doc.shows.is_empty() {
                v.to_owned()
            } else {
                def.doc.shows.to_owned()
            }
        };
        let usage = match flag.takes {
            Takes::Switch => format!("`--{}`", flag.long),
            Takes::One(Value { name, .. }) => format!("`--{} {}`", flag.long, shown(name)),
            Takes::OneOrNone(Value { name, .. }) => {
                format!("`--{} [{}]`", flag.long, shown(name))
            }
            Takes::Each(Value { name, .. }) => {
                format!("`--{} {}` (repeat)", flag.long, shown(name))
            }
            Takes::Two { names, .. } => format!("`--{} {}`", flag.long, shown(&names.join(" "))),
        };
        let mut usage = match flag.short {
            Some(short) => format!("`-{short}`, {usage}"),
            None => usage,
        };
        if let Some(negation) = &flag.negation {
            usage.push_str(&format!(", `--{}`", negation.long));
        }
        let key = def
            .key
            .as_ref()
            .map(|k| format!("`{}`", k.name))
            .unwrap_or_default();
        out.push_str(&format!(
            "| {usage} | {key} | {} | `{}` |\n",
            def.doc.what, def.doc.example
        ));
    }
    out
}

/// An example `.anvil/config.toml` with every key of a debate option.
fn config_example() -> String {
    let mut out = String::from("```toml\n");
    for def in ALL {
        let Some(key) = &def.key else { continue };
        let line = format!("{} = {}", key.name, key.example);
        if key.note.is_empty() {
            out.push_str(&line);
        } else {
            out.push_str(&format!("{line:<27} # {}", key.note));
        }
        out.push('\n');
    }
    out.push_str("```\n");
    out
}

/// `page` (the file at `path`) with the text between `<!-- BEGIN name: generated from SOURCE
/// -->` and `<!-- END name -->` replaced by each `(name, text)` of `parts`, `source` being the
/// file the text is made from.
fn replace(page: &str, path: &str, source: &str, parts: &[(&str, String)]) -> String {
    let mut page = page.to_owned();
    for (name, text) in parts {
        let begin = format!("<!-- BEGIN {name}: generated from {source} -->\n");
        let end = format!("<!-- END {name} -->");
        let start = page
            .find(&begin)
            .unwrap_or_else(|| panic!("{path} has no {begin:?}"))
            + begin.len();
        let stop = page[start..]
            .find(&end)
            .unwrap_or_else(|| panic!("{path} has no {end:?}"))
            + start;
        page = format!("{}{text}{}", &page[..start], &page[stop..]);
    }
    page
}

/// Checks that the page `docs/NAME` holds `parts` ([`replace`]) made from `source`; with
/// `ANVIL_WRITE_DOCS` set, writes them into it instead. `test` is the test's path, for the
/// message.
pub(crate) fn check_page(name: &str, source: &str, parts: &[(&str, String)], test: &str) {
    let path = format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("docs/{name}: {e}"));
    let expected = replace(&page, &format!("docs/{name}"), source, parts);
    if std::env::var_os("ANVIL_WRITE_DOCS").is_some() {
        std::fs::write(&path, &expected).unwrap_or_else(|e| panic!("write docs/{name}: {e}"));
        return;
    }
    assert!(
        page == expected,
        "docs/{name} differs from {source}; `ANVIL_WRITE_DOCS=1 cargo test -p \
         anvil-debate-core {test}` rewrites it. Expected:\n{expected}"
    );
}

#[test]
fn docs_options_md_shows_every_option_as_defined() {
    check_page(
        "options.md",
        "crates/core/src/model/options/defs.rs",
        &[("options", table()), ("config", config_example())],
        "options::docs",
    );
}

#[test]
fn the_table_has_a_row_per_flag_and_the_example_a_line_per_key() {
    let table = table();
    for def in ALL {
        if let Some(flag) = &def.flag {
            assert!(
                table.contains(&format!("`--{}", flag.long)),
                "--{}",
                flag.long
            );
        }
        if let Some(key) = &def.key {
            assert!(
                config_example().contains(&format!("\n{} = ", key.name)),
                "{}",
                key.name
            );
        }
    }
    assert!(
        table.contains("| `-o`, `--output PATH` | `output` |"),
        "{table}"
    );
    assert!(
        table.contains("| `--interactive`, `--no-interactive` | `interactive` |"),
        "{table}"
    );
}

/// The guide to starting a debate names every flag in its section on options.
#[test]
fn the_steering_guide_names_every_flag() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/steering.md"
    ))
    .expect("docs/steering.md");
    let section = guide
        .split("\n## Options of `anvil start`")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/steering.md has its options section");
    for def in ALL {
        let Some(flag) = &def.flag else { continue };
        let names = std::iter::once(flag.long).chain(flag.negation.as_ref().map(|n| n.long));
        for long in names {
            assert!(
                section.contains(&format!("`--{long}`")),
                "docs/steering.md's options section does not name --{long}"
            );
        }
    }
}
