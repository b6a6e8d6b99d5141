//! Provenance and cost per phase, end to end: the real Claude Code CLI against the scripted
//! model server; the model and token figures the server reported for each phase are the ones
//! recorded in that phase's commit, and shown by `anvil show`, `anvil log --stats` and
//! `anvil report`.

use serde_json::Value;

use crate::support::anvil::{Project, phase_text, turn_tag};
use crate::support::claude::{Claude, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello there"),
    }
}

#[test]
fn each_phase_records_the_model_and_tokens_the_server_reported() {
    let project = Project::installed();
    let started = project.start(&["Should we track what debates cost?", "--rounds", "1"]);
    let server = ModelServer::start(debater);
    let out = Claude::new(&server, project.path(), &started.prompt)
        .session_id(new_session_id())
        .run();
    out.assert_success();

    // One answer per phase: advocate, critic, synthesis.
    let sent = server.sent();
    let commits = project.commits(&started.debate);
    let phases: Vec<_> = commits.iter().skip(1).collect();
    assert_eq!(phases.len(), 3, "{commits:#?}");
    assert_eq!(sent.len(), phases.len(), "one answer per phase: {sent:#?}");
    let mut total_output = 0;
    for (commit, message) in phases.iter().zip(&sent) {
        let usage = &message["usage"];
        let number = |key: &str| usage[key].as_u64().unwrap().to_string();
        let expect = [
            ("Anvil-Model", message["model"].as_str().unwrap().to_owned()),
            ("Anvil-Tokens-Input", number("input_tokens")),
            ("Anvil-Tokens-Output", number("output_tokens")),
            ("Anvil-Tokens-Cache-Read", number("cache_read_input_tokens")),
            (
                "Anvil-Tokens-Cache-Write",
                number("cache_creation_input_tokens"),
            ),
        ];
        for (key, value) in expect {
            assert_eq!(
                commit.trailer(key),
                Some(value.as_str()),
                "{key} of {}: {}",
                commit.subject,
                commit.message
            );
        }
        assert!(
            commit.trailer("Anvil-Duration-Ms").is_some(),
            "{}",
            commit.message
        );
        assert!(
            commit.trailer("Anvil-Claude-Version").is_some(),
            "{}",
            commit.message
        );
        total_output += usage["output_tokens"].as_u64().unwrap();
    }

    // `anvil show --json` has them per phase, `log --json` per line and per debate.
    let show: Value = serde_json::from_str(
        &project
            .anvil(&[
                "show",
                "--json",
                &format!("{}:round-1/critic", started.line),
            ])
            .ok()
            .stdout,
    )
    .unwrap();
    assert_eq!(
        show["provenance"]["tokens"]["output"],
        sent[1]["usage"]["output_tokens"]
    );
    assert_eq!(show["provenance"]["model"], sent[1]["model"]);
    let log: Value = serde_json::from_str(
        &project
            .anvil(&["log", "--json", &started.debate])
            .ok()
            .stdout,
    )
    .unwrap();
    let debate = &log["debates"][0];
    assert_eq!(debate["cost"]["tokens"]["output"], total_output);
    assert_eq!(debate["lines"][0]["cost"]["tokens"]["output"], total_output);
    let stats = project
        .anvil(&["log", "--stats", &started.debate])
        .ok()
        .stdout;
    assert!(
        stats.contains("debate total:") && stats.contains(&format!("{total_output} out")),
        "{stats}"
    );
    let report = project.anvil(&["report", &started.debate]).ok().stdout;
    assert!(report.contains("## Cost") && report.contains(&format!("{total_output} out")));
}
