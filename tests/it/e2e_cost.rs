//! Provenance and cost per phase, end to end: the real Claude Code CLI against the scripted
//! model server; the model and token figures the server reported for each phase are the ones
//! recorded in that phase's commit, and shown by `anvil show`, `anvil log --stats` and
//! `anvil report`.

use serde_json::Value;

use crate::both_clients;
use crate::support::anvil::{Commit, Project, phase_text, turn_tag};
use crate::support::claude::{Claude, Client, new_session_id};
use crate::support::model_server::{ModelServer, Reply, Turn};

fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("hello there"),
    }
}

/// The phase `commit` records the model and the token figures of the answer the server sent.
fn assert_recorded_as_served(commit: &Commit, message: &Value) {
    let usage = &message["usage"];
    let number = |key: &str| usage[key].as_u64().unwrap().to_string();
    for (key, value) in [
        ("Anvil-Model", message["model"].as_str().unwrap().to_owned()),
        ("Anvil-Tokens-Input", number("input_tokens")),
        ("Anvil-Tokens-Output", number("output_tokens")),
        ("Anvil-Tokens-Cache-Read", number("cache_read_input_tokens")),
        (
            "Anvil-Tokens-Cache-Write",
            number("cache_creation_input_tokens"),
        ),
    ] {
        assert_eq!(
            commit.trailer(key),
            Some(value.as_str()),
            "{key} of {}: {}",
            commit.subject,
            commit.message
        );
    }
}

both_clients!(each_phase_records_the_model_and_tokens_the_server_reported);
fn each_phase_records_the_model_and_tokens_the_server_reported(client: Client) {
    let project = Project::installed();
    let started = project.start(&["Should we track what debates cost?", "--rounds", "1"]);
    let server = ModelServer::start(debater);
    let out = Claude::new(&server, project.path(), &started.prompt)
        .client(client)
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
        assert_recorded_as_served(commit, message);
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
        total_output += message["usage"]["output_tokens"].as_u64().unwrap();
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

/// A `claude` that runs the real one and keeps a copy of each run's JSON result (the `result`
/// event of its `stream-json` output) in `log`, so that the test sees what Claude Code reported
/// to `anvil run`.
fn teeing_claude(
    client: Client,
    dir: &std::path::Path,
    log: &std::path::Path,
) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("claude");
    let script = format!(
        "#!/bin/sh\nout=$('{}' \"$@\")\nrc=$?\nprintf '%s\\n' \"$out\" | grep '\"type\":\"result\"' >> '{}'\nprintf '%s' \"$out\"\nexit $rc\n",
        client.bin().display(),
        log.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

both_clients!(anvil_run_records_each_phase_and_what_its_runs_cost_as_reported);
/// The second run resumes the first one's session: 2.1.197 reports each run's own price and
/// models, 2.1.332 the session's so far (with each run's own `usage`); both are recorded once.
fn anvil_run_records_each_phase_and_what_its_runs_cost_as_reported(client: Client) {
    use std::io::Write;
    let project = Project::new();
    let server = ModelServer::start(debater);
    let home = crate::support::claude::ClaudeHome::new();
    let wrapper_dir = tempfile::tempdir().unwrap();
    let results = wrapper_dir.path().join("results.jsonl");
    let wrapper = teeing_claude(client, wrapper_dir.path(), &results);
    let mut child = project
        .command(&[
            "run",
            "Should we price our debates?",
            "--rounds",
            "2",
            "--interactive",
        ])
        .envs(crate::support::claude::headless_env(&server, &home))
        .env("ANVIL_CLAUDE_BIN", &wrapper)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Enter at the pause after round 1: go on (a second `claude -p` run).
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report = std::path::PathBuf::from(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or_default(),
    );
    let debate = report.file_stem().unwrap().to_string_lossy().into_owned();

    // Each phase Claude answered has the model and tokens the server sent for it.
    let sent = server.sent();
    let commits = project.commits(&debate);
    let answered: Vec<_> = commits
        .iter()
        .filter(|c| ["advocate", "critic", "synthesizer"].contains(&c.phase()))
        .collect();
    assert_eq!(answered.len(), 5, "{commits:#?}");
    assert_eq!(sent.len(), 5, "one answer per phase: {sent:#?}");
    for (commit, message) in answered.iter().zip(&sent) {
        assert_recorded_as_served(commit, message);
    }

    // The runs' totals, on the commit recorded after them: what Claude Code reported, which
    // is what the server sent, summed.
    let reported: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "result")
        .collect();
    assert_eq!(reported.len(), 2, "two claude runs: {reported:#?}");
    let run = commits.last().unwrap();
    assert_eq!(run.phase(), "run", "{commits:#?}");
    let sum_reported = |f: &dyn Fn(&Value) -> u64| reported.iter().map(f).sum::<u64>();
    let sum_sent = |key: &str| {
        sent.iter()
            .map(|m| m["usage"][key].as_u64().unwrap())
            .sum::<u64>()
    };
    for (trailer, key) in [
        ("Anvil-Run-Tokens-Input", "input_tokens"),
        ("Anvil-Run-Tokens-Output", "output_tokens"),
        ("Anvil-Run-Tokens-Cache-Read", "cache_read_input_tokens"),
        (
            "Anvil-Run-Tokens-Cache-Write",
            "cache_creation_input_tokens",
        ),
    ] {
        let recorded: u64 = run.trailer(trailer).unwrap().parse().unwrap();
        assert_eq!(
            recorded,
            sum_reported(&|r| r["usage"][key].as_u64().unwrap()),
            "{trailer}"
        );
        assert_eq!(recorded, sum_sent(key), "{trailer} against the server");
    }
    assert_eq!(run.trailer("Anvil-Run-Count"), Some("2"));
    let turns = sum_reported(&|r| r["num_turns"].as_u64().unwrap());
    assert_eq!(
        run.trailer("Anvil-Run-Turns"),
        Some(turns.to_string().as_str())
    );
    let duration = sum_reported(&|r| r["duration_ms"].as_u64().unwrap());
    assert_eq!(
        run.trailer("Anvil-Run-Duration-Ms"),
        Some(duration.to_string().as_str())
    );
    // The price: each run's own (2.1.197), or the session's so far, which the last run
    // reports (2.1.332).
    let price = |r: &Value| (r["total_cost_usd"].as_f64().unwrap() * 1e9).round() as u64;
    let nanos: u64 = match client {
        Client::Oldest => reported.iter().map(price).sum(),
        Client::Newest => price(reported.last().unwrap()),
    };
    let cost = anvil_core::record::usage::Usd { nanos };
    assert_eq!(
        run.trailer("Anvil-Run-Cost-Usd"),
        Some(cost.decimal().as_str())
    );
    // Each model's share counted once: together, the server's count, and the price.
    let models: Vec<anvil_core::record::usage::ModelUsage> = run
        .trailers_named("Anvil-Run-Model")
        .iter()
        .map(|m| anvil_core::record::usage::ModelUsage::decode(m).unwrap())
        .collect();
    assert!(
        models
            .iter()
            .any(|m| m.model.starts_with(sent[0]["model"].as_str().unwrap())),
        "{models:?}"
    );
    let shares = |f: &dyn Fn(&anvil_core::record::usage::ModelUsage) -> u64| {
        models.iter().map(f).sum::<u64>()
    };
    assert_eq!(shares(&|m| m.input_tokens), sum_sent("input_tokens"));
    assert_eq!(shares(&|m| m.output_tokens), sum_sent("output_tokens"));
    assert_eq!(shares(&|m| m.cost.nanos), nanos, "{models:?}");

    // Shown by `show`, `log --stats`, `log --json` and the report.
    let show: Value = serde_json::from_str(
        &project
            .anvil(&["show", "--json", &format!("{debate}@main")])
            .ok()
            .stdout,
    )
    .unwrap();
    assert_eq!(show["run"]["cost_usd_exact"], cost.decimal());
    assert_eq!(show["run"]["tokens"]["output"], sum_sent("output_tokens"));
    let log: Value =
        serde_json::from_str(&project.anvil(&["log", "--json", &debate]).ok().stdout).unwrap();
    assert_eq!(
        log["debates"][0]["run_cost"]["cost_usd_exact"],
        cost.decimal()
    );
    assert_eq!(log["debates"][0]["lines"][0]["run_cost"]["turns"], turns);
    let stats = project.anvil(&["log", "--stats", &debate]).ok().stdout;
    let summary = format!("{} · 2 runs, {turns} turns", cost.human());
    assert!(stats.contains(&format!("runs total: {summary}")), "{stats}");
    let report = project.anvil(&["report", &debate]).ok().stdout;
    assert!(
        report.contains(&format!("runs total: {summary}")),
        "{report}"
    );
    assert!(stderr.contains(&summary), "{stderr}");
}
