//! docs/seats.md, checked against the agents: its table of the agents that can take a seat is
//! rendered from [`crate::agent::AGENTS`], so a new agent's file reaches the page and the page
//! cannot drift from the code. `ANVIL_WRITE_DOCS=1 cargo test -p anvil-debate-core
//! seat::docs` rewrites it.

use crate::agent::AGENTS;
use crate::model::options::docs::check_page;

/// One row per agent: its name, product, binary and what it may do in a seat.
fn agents_table() -> String {
    let mut out = String::from("| agent | product | binary | in a seat |\n|---|---|---|---|\n");
    for agent in AGENTS {
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

#[test]
fn docs_seats_md_lists_every_agent() {
    check_page(
        "seats.md",
        "crates/core/src/agent/",
        &[("agents", agents_table())],
        "seat::docs",
    );
}
