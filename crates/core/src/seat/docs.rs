//! docs/seats.md, checked against the agents: its tables of the agent CLIs and the endpoint
//! presets that can take a seat and
//! its lists of the variables every seat gets and none does are rendered from
//! [`crate::agent`], so a new agent's file reaches the page and the page cannot drift from the
//! code. `ANVIL_WRITE_DOCS=1 cargo test -p anvil-debate-core seat::docs` rewrites it.

use crate::agent::AGENTS;
use crate::model::options::docs::check_page;

/// One row per agent CLI: its name, product, binary, what it may do in a seat and the environment
/// variables it is given beside those of every seat.
fn agents_table() -> String {
    let mut out = String::from(
        "| agent | product | binary | in a seat | its variables |\n|---|---|---|---|---|\n",
    );
    for agent in AGENTS.iter().filter(|a| a.endpoint().is_none()) {
        let about = agent.about();
        let mut env: Vec<String> = about.env.iter().map(|v| format!("`{v}`")).collect();
        if !about.env_more.is_empty() {
            env.push(about.env_more.to_owned());
        }
        out.push_str(&format!(
            "| `{}` | {} | `{}` on `PATH`, or `${}` | {} | {} |\n",
            agent.name(),
            agent.title(),
            agent.name(),
            agent.bin_var(),
            agent.allowed(),
            env.join(", ")
        ));
    }
    out
}

/// One row per endpoint preset: its name, what it is, where its turns go and its key.
fn endpoints_table() -> String {
    let mut out =
        String::from("| agent | endpoint | base URL | key | to start |\n|---|---|---|---|---|\n");
    for agent in AGENTS {
        let Some(endpoint) = agent.endpoint() else {
            continue;
        };
        out.push_str(&format!(
            "| `{}` | {} | `{}` | {} | {} |\n",
            agent.name(),
            agent.title(),
            endpoint.base_url(),
            endpoint
                .key_env()
                .map_or("none".to_owned(), |var| format!("`${var}`")),
            endpoint.hint()
        ));
    }
    out
}

/// `names` as a line of the page.
fn names(names: &[&str]) -> String {
    let list: Vec<String> = names.iter().map(|v| format!("`{v}`")).collect();
    format!("{}\n", list.join(", "))
}

#[test]
fn docs_seats_md_lists_every_agent() {
    check_page(
        "seats.md",
        "crates/core/src/agent/",
        &[
            ("agents", agents_table()),
            ("endpoints", endpoints_table()),
            ("every-seat", names(crate::agent::env::BASE)),
            ("no-seat", names(crate::agent::env::NEVER)),
        ],
        "seat::docs",
    );
}

/// The README names every agent in its section on seats, as `anvil seats` lists them: each
/// agent CLI by its title, each endpoint preset by the name a seat gives it (`ollama:MODEL`).
#[test]
fn the_readme_names_every_agent() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let section = readme
        .split("## Seats")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README.md has its section on seats");
    for agent in AGENTS {
        let name = match agent.endpoint() {
            Some(_) => format!("{}:", agent.name()),
            None => agent.title().to_owned(),
        };
        assert!(
            section.contains(&name),
            "README.md's section on seats does not name {name}"
        );
    }
}
