//! Who played what, and what it cost, in a debate that mixes agents: the host Claude Code of
//! `anvil run` and Claude Code, Codex and Qwen Code seats, each the real CLI against the
//! scripted server. `anvil log` names the agent of every phase the host did not play, and
//! `log --stats` (and `--json`) sums tokens per agent and per model into totals that the
//! model server's own count of what it reported confirms.

use serde_json::Value;

use crate::e2e_seats::{debater, run_anvil as anvil};
use crate::support::agents::AgentsHome;
use crate::support::anvil::Project;
use crate::support::model_server::{ModelServer, Usage};
use crate::support::snap::Filters;

/// `[input, output, cache read, cache write]` of a `--json` cost item.
fn tokens(item: &Value) -> [u64; 4] {
    let t = &item["tokens"];
    ["input", "output", "cache_read", "cache_write"].map(|k| t[k].as_u64().unwrap())
}

fn sum<'a>(usages: impl Iterator<Item = &'a Usage>) -> [u64; 4] {
    usages.fold([0; 4], |mut sum, u| {
        for (s, n) in sum.iter_mut().zip(u.tokens) {
            *s += n;
        }
        sum
    })
}

#[test]
fn a_debate_of_claude_codex_and_qwen_seats_sums_to_what_the_server_reported() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    // Three voices and a synthesis: Finance a Claude Code seat, Platform Codex, Support the
    // host (`claude -p`, on its default model), the synthesis Qwen Code.
    anvil(
        &project,
        &home,
        &[
            "run",
            "Should we move billing to Stripe?",
            "--stakeholders",
            "Finance,Platform,Support",
            "--seat",
            "Finance=claude:claude-seat-model",
            "--seat",
            "Platform=codex:codex-seat-model",
            "--seat",
            "synthesizer=qwen:qwen-seat-model",
        ],
    )
    .ok();
    let debate = project.only_debate();

    // `anvil log` names the agent of each phase a seat played, and only those.
    let log = anvil(&project, &home, &["log", "--no-pager"]).ok();
    insta::assert_snapshot!(
        "log_names_the_seats",
        Filters::of(&project).redact(&log.stdout)
    );
    let stats = anvil(
        &project,
        &home,
        &["log", "--stats", "--no-pager", "billing"],
    )
    .ok();
    insta::assert_snapshot!(
        "log_stats_per_agent_and_model",
        Filters::of(&project).without_usage().redact(&stats.stdout)
    );

    // The sums, per agent, per model and in all, are the server's count of what it reported
    // to each (the host's turns are Claude's on the host's model).
    let reported = server.usage_reported();
    let host_model = reported
        .iter()
        .find(|u| u.agent == "claude" && u.model != "claude-seat-model")
        .map(|u| u.model.clone())
        .expect("the host's turns");
    let json: Value = serde_json::from_str(
        &anvil(&project, &home, &["log", "--json", &debate])
            .ok()
            .stdout,
    )
    .unwrap();
    let cost = &json["debates"][0]["cost"];
    let item = |list: &str, key: &str, name: &str| -> Value {
        cost[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i[key] == name)
            .unwrap_or_else(|| panic!("no {key} {name} in {cost:#}"))
            .clone()
    };
    for (agent, served_as, model) in [
        ("claude", "claude", "claude-seat-model"),
        ("claude (host)", "claude", host_model.as_str()),
        ("codex", "codex", "codex-seat-model"),
        ("qwen", "qwen", "qwen-seat-model"),
    ] {
        let served = sum(reported
            .iter()
            .filter(|u| u.agent == served_as && u.model == model));
        assert_eq!(tokens(&item("by_agent", "agent", agent)), served, "{agent}");
        assert_eq!(tokens(&item("by_model", "model", model)), served, "{model}");
        assert_eq!(item("by_agent", "agent", agent)["phases"], 1, "{agent}");
    }
    assert_eq!(cost["by_agent"].as_array().unwrap().len(), 4, "{cost:#}");
    assert_eq!(cost["by_model"].as_array().unwrap().len(), 4, "{cost:#}");
    assert_eq!(tokens(cost), sum(reported.iter()), "{cost:#}");
    assert_eq!(cost["phases"], 4);
    // Of the phases, only the Claude Code seat's reports a price (the host's turns are priced
    // with its runs, below); Codex and Qwen report none.
    assert_eq!(cost["priced_phases"], 1, "{cost:#}");
    assert_eq!(
        cost["cost_usd"],
        item("by_agent", "agent", "claude")["cost_usd"],
        "{cost:#}"
    );
    assert!(cost["cost_usd"].as_f64().unwrap() > 0.0, "{cost:#}");
    // The one line is the whole debate.
    assert_eq!(json["debates"][0]["lines"][0]["cost"], *cost);
    // The host's headless runs, as Claude Code priced them: its own turns, once.
    let runs = &json["debates"][0]["run_cost"];
    assert_eq!(
        tokens(runs),
        sum(reported
            .iter()
            .filter(|u| u.agent == "claude" && u.model == host_model)),
        "{runs:#}"
    );
}
