//! docs/seats.md, checked against the agents: its table of the agents that can take a seat is
//! rendered from [`crate::agent::AGENTS`], so a new agent's file reaches the page and the page
//! cannot drift from the code. `ANVIL_WRITE_DOCS=1 cargo test -p anvil-debate-core
//! seat::docs` rewrites it.

use crate::agent::AGENTS;
use crate::model::options::docs::check_page;

/// One row per agent CLI: its name, product, binary and what it may do in a seat.
fn agents_table() -> String {
    let mut out = String::from("| agent | product | binary | in a seat |\n|---|---|---|---|\n");
    for agent in AGENTS.iter().filter(|a| a.endpoint().is_none()) {
        out.push_str(&format!(
            "| `{}` | {} | `{}` on `PATH`, or `${}` | {} |\n",
            agent.name(),
            agent.title(),
            agent.name(),
            agent.bin_var(),
            agent.allowed()
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

#[test]
fn docs_seats_md_lists_every_agent() {
    check_page(
        "seats.md",
        "crates/core/src/agent/",
        &[("agents", agents_table()), ("endpoints", endpoints_table())],
        "seat::docs",
    );
}
