//! Seated headless debates (`anvil run --seat ROLE=AGENT[:MODEL]`) with the real agent CLIs —
//! Claude Code, Codex, Copilot, Qwen Code — each against the scripted server through its own
//! API: who played what is recorded, no seat sees another's instructions, a failing seat
//! stops the run without losing or doubling anything, independent openings are drafted blind
//! and at once, a budget ends a debate in its synthesis, and positions are recorded per seat
//! whatever agent plays it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::agents::AgentsHome;
use crate::support::anvil::{Commit, Project, Run, phase_text, position_tags, turn_tag};
use crate::support::model_server::{Agent, Api, ModelServer, Reply, Turn};
use crate::support::snap::Filters;

/// The advocate's and the critic's own instructions (roles/advocate.md, roles/critic.md).
const ADVOCATE_RULES: &str = "Make the strongest honest case FOR the proposal";
const CRITIC_RULES: &str = "Make the strongest honest case AGAINST the proposal";

/// Plays the phase whose tag the request carries (any API, any agent); anything else (an
/// agent's own side work) gets a plain answer.
pub(crate) fn debater(turn: &Turn) -> Reply {
    match turn_tag(turn) {
        Some(tag) => Reply::text(phase_text(&tag)),
        None => Reply::text("ok"),
    }
}

/// `anvil ARGS` in `project`, with only the environment `home` gives the agents.
pub(crate) fn run_anvil(project: &Project, home: &AgentsHome, args: &[&str]) -> Run {
    Run::from_output(
        project
            .command(args)
            .env_clear()
            .envs(home.env())
            .output()
            .expect("run anvil"),
    )
}

/// `anvil run "Should we adopt GraphQL?" OPTIONS` (`--rounds`, `--seat`, …), which must
/// succeed: the run, and the one debate it recorded.
pub(crate) fn run_debate(project: &Project, home: &AgentsHome, options: &[&str]) -> (Run, String) {
    let args = [&["run", "Should we adopt GraphQL?"][..], options].concat();
    let run = run_anvil(project, home, &args).ok();
    (run, project.only_debate())
}

/// (phase, round, who played it: the agent, or `host`) of each phase of the line.
pub(crate) fn phases(commits: &[Commit]) -> Vec<(String, String, String)> {
    commits
        .iter()
        .filter(|c| {
            [
                "advocate",
                "critic",
                "synthesizer",
                "stakeholder",
                "persona",
            ]
            .contains(&c.phase())
        })
        .map(|c| {
            (
                c.phase().to_owned(),
                c.round().to_owned(),
                c.trailer("Anvil-Agent").unwrap_or("host").to_owned(),
            )
        })
        .collect()
}

/// What [`phases`] returns, written as `(phase, round, agent)` rows.
pub(crate) fn want(rows: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    rows.iter()
        .map(|(p, r, a)| ((*p).to_owned(), (*r).to_owned(), (*a).to_owned()))
        .collect()
}

fn texts(turns: &[Turn]) -> Vec<String> {
    turns.iter().map(Turn::all_text).collect()
}

#[test]
fn claude_codex_and_copilot_seats_reach_a_synthesis_each_at_its_own_api() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let (run, debate) = run_debate(
        &project,
        &home,
        &[
            "--rounds",
            "2",
            "--seat",
            "advocate=claude:claude-seat-model",
            "--seat",
            "critic=codex:codex-seat-model",
            "--seat",
            "synthesizer=copilot:copilot-seat-model",
            "--quiet",
        ],
    );
    // The progress (--quiet) says who plays each phase.
    insta::assert_snapshot!(
        "run_with_three_seats",
        Filters::of(&project).without_usage().redact(&run.stderr)
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "claude"),
            ("critic", "1", "codex"),
            ("advocate", "2", "claude"),
            ("critic", "2", "codex"),
            ("synthesizer", "2", "copilot"),
        ]),
        "{}",
        run.describe()
    );
    // The record names every seat: agent, version, model, tokens, duration.
    for (commit, version, model) in commits
        .iter()
        .filter(|c| c.trailer("Anvil-Agent").is_some())
        .map(|c| {
            let (v, m) = match c.trailer("Anvil-Agent").unwrap() {
                "claude" => ("2.1.197", "claude-seat-model"),
                "codex" => ("0.169.0", "codex-seat-model"),
                _ => ("1.0.102", "copilot-seat-model"),
            };
            (c, v, m)
        })
    {
        assert_eq!(commit.trailer("Anvil-Agent-Version"), Some(version));
        assert_eq!(commit.trailer("Anvil-Model"), Some(model));
        for key in [
            "Anvil-Tokens-Input",
            "Anvil-Tokens-Output",
            "Anvil-Duration-Ms",
        ] {
            let n: u64 = commit.trailer(key).unwrap_or("0").parse().unwrap();
            assert!(n > 0, "{key} of {}", commit.subject);
        }
        assert!(commit.trailer("Anvil-Agent-Session").is_some());
    }
    // Claude's own price is recorded where it reports one.
    assert!(
        commits[1].trailer("Anvil-Cost-Usd").is_some(),
        "{:?}",
        commits[1]
    );

    // Each role's requests went to its agent's API with its model; the host never played.
    let claude = server.turns_of(Agent::Claude);
    let codex = server.turns_of(Agent::Codex);
    let copilot = server.turns_of(Agent::Copilot);
    assert!(
        claude.len() >= 2
            && claude
                .iter()
                .all(|t| t.model == "claude-seat-model" && t.api == Api::Messages)
    );
    assert!(
        codex.len() >= 2
            && codex
                .iter()
                .all(|t| t.model == "codex-seat-model" && t.api == Api::Responses)
    );
    assert!(
        !copilot.is_empty()
            && copilot
                .iter()
                .all(|t| t.model == "copilot-seat-model" && t.api == Api::ChatCompletions)
    );
    // Each seat kept its session for its second turn.
    let sessions = |turns: &[Turn]| {
        let mut s: Vec<Option<String>> = turns.iter().map(|t| t.session_id.clone()).collect();
        s.dedup();
        s
    };
    assert_eq!(sessions(&claude).len(), 1, "one Claude session");
    assert_eq!(sessions(&codex).len(), 1, "one Codex thread");

    // No seat sees the other's instructions, yet each sees the other's recorded argument.
    let line = format!("{debate}@main");
    for text in texts(&codex) {
        assert!(
            !text.contains(ADVOCATE_RULES),
            "the critic saw the advocate's rules"
        );
        assert!(text.contains(&format!("ADVOCATE r1 of {line}")));
    }
    for text in texts(&claude) {
        assert!(
            !text.contains(CRITIC_RULES),
            "the advocate saw the critic's rules"
        );
    }
    assert!(
        texts(&claude)
            .last()
            .unwrap()
            .contains(&format!("CRITIC r1 of {line}"))
    );
    let synthesis = texts(&copilot).pop().unwrap();
    for said in ["ADVOCATE r2", "CRITIC r2"] {
        assert!(synthesis.contains(&format!("{said} of {line}")), "{said}");
    }
    assert!(!synthesis.contains(ADVOCATE_RULES) && !synthesis.contains(CRITIC_RULES));
    project.assert_fsck_clean();

    // `anvil log --stats` and `show` say who played what.
    let stats = run_anvil(&project, &home, &["log", "--stats", "--no-pager"]).ok();
    insta::assert_snapshot!(
        "log_stats_with_seats",
        Filters::of(&project).without_usage().redact(&stats.stdout)
    );
}

#[test]
fn a_qwen_seat_plays_the_critic_and_the_host_reads_it() {
    // The critic quotes a credential: another agent's text is cleaned where it enters anvil.
    let token = format!("ghp_{}", "q7W2e9R4t1Y6u3I8o5P0a2S7d4F9g6H1j8K3");
    let leaked = token.clone();
    let server = ModelServer::start(move |turn: &Turn| match turn_tag(turn) {
        Some(tag) if tag.role.eq_ignore_ascii_case("critic") => Reply::text(format!(
            "{} The deploy key {leaked} is in the wiki.",
            phase_text(&tag)
        )),
        _ => debater(turn),
    });
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let (run, debate) = run_debate(
        &project,
        &home,
        &["--rounds", "1", "--seat", "critic=qwen:qwen-seat-model"],
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "qwen"),
            ("synthesizer", "1", "host")
        ]),
        "{}",
        run.describe()
    );
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    assert_eq!(critic.trailer("Anvil-Agent-Version"), Some("0.24.4"));
    assert_eq!(critic.trailer("Anvil-Model"), Some("qwen-seat-model"));
    let qwen = server.turns_of(Agent::Qwen);
    assert_eq!(
        qwen.len(),
        1,
        "one critic turn; Qwen's memory requests are its own"
    );
    // (Qwen Code puts a space before an `@`, its sign for a file to include.)
    assert!(
        qwen[0]
            .all_text()
            .contains(&format!("ADVOCATE r1 of {debate}")),
        "{}",
        qwen[0].latest_user_text
    );
    assert!(!qwen[0].all_text().contains(ADVOCATE_RULES));
    let recorded = project.git(&["log", "-p", "--all"]);
    assert!(
        recorded.contains("[redacted: GitHub token]") && !recorded.contains(&token),
        "the seat's credential is recorded redacted"
    );
    let transcript = project.transcript_md(&debate);
    assert!(!transcript.contains(&token));
    // Who played what is shown where people read: the transcript (and so the report) and the
    // web room.
    assert!(
        transcript.contains("## Round 1 · Critic\n\n_Played by qwen 0.24.4 (qwen-seat-model)._\n"),
        "{transcript}"
    );
    let served = crate::support::serve::Served::start(&project);
    let view = served.get(&format!("/api/debates/{debate}")).json();
    let phases = view["lines"][0]["phases"]
        .as_array()
        .expect("phases")
        .clone();
    let played: Vec<(&str, Option<&str>)> = phases
        .iter()
        .filter(|p| !p["role"].is_null())
        .map(|p| (p["phase"].as_str().unwrap(), p["played_by"].as_str()))
        .collect();
    assert_eq!(
        played,
        [
            ("advocate", None),
            ("critic", Some("qwen 0.24.4 (qwen-seat-model)")),
            ("synthesizer", None)
        ],
        "{view}"
    );
    assert!(run.stderr.contains("redacted"), "{}", run.describe());
    // The host (claude) got the critic's text in its synthesis prompt.
    let host = server.turns_of(Agent::Claude);
    let synthesis = host
        .iter()
        .find(|t| t.prompt().contains("· Synthesizer]"))
        .expect("the host wrote the synthesis");
    assert!(
        synthesis
            .prompt()
            .contains(&format!("CRITIC r1 of {debate}"))
    );
}

#[test]
fn a_failing_seat_stops_the_run_by_name_and_the_line_goes_on_with_the_host() {
    let failing = Arc::new(AtomicBool::new(true));
    let server = {
        let failing = Arc::clone(&failing);
        ModelServer::start(move |turn| {
            if turn.agent == Agent::Codex && failing.load(Ordering::SeqCst) {
                return Reply::error(400, "scripted outage of the critic's provider");
            }
            debater(turn)
        })
    };
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let args = [
        "run",
        "Should we adopt GraphQL?",
        "--rounds",
        "1",
        "--seat",
        "critic=codex:codex-seat-model",
    ];
    let failed = run_anvil(&project, &home, &args);
    assert_eq!(failed.code, Some(1), "{}", failed.describe());
    // Which seat failed, and its last words.
    insta::assert_snapshot!(
        "run_stopped_by_a_failing_seat",
        Filters::of(&project).redact(&failed.stderr)
    );
    let debate = project.only_debate();
    let recorded = || phases(&project.commits(&debate));
    assert_eq!(recorded(), want(&[("advocate", "1", "host")]));
    let state = project.state_md(&debate);
    assert!(state.contains("status: active"), "{state}");

    // Retried while the seat still fails: stopped again, nothing recorded twice.
    let again = run_anvil(&project, &home, &["run", "--line", &debate]);
    assert_eq!(again.code, Some(1), "{}", again.describe());
    assert_eq!(recorded(), want(&[("advocate", "1", "host")]));

    // The host takes the seat over, and the record says so.
    let done = run_anvil(
        &project,
        &home,
        &["run", "--line", &debate, "--fallback", "host"],
    )
    .ok();
    insta::assert_snapshot!(
        "run_with_the_host_falling_back",
        Filters::of(&project).without_usage().redact(&done.stderr)
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "host"),
            ("synthesizer", "1", "host")
        ])
    );
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    let why = critic
        .trailer("Anvil-Seat-Fallback")
        .expect("the fallback is recorded");
    assert!(why.contains("codex:codex-seat-model failed"), "{why}");
    project.assert_fsck_clean();
}

#[test]
fn independent_openings_are_drafted_blind_and_at_once() {
    // Round 1's openings meet at the server: drafted at once, they are answered together,
    // however slowly each agent starts.
    let meeting = Arc::new(crate::e2e_council::Meeting::default());
    let met = Arc::clone(&meeting);
    let server = ModelServer::start(move |turn| {
        if turn_tag(turn).is_some_and(|tag| tag.round == Some(1))
            && turn.tool_results().is_empty()
            && turn.agent != Agent::Claude
        {
            met.meet("openings", 2);
        }
        debater(turn)
    });
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let (run, debate) = run_debate(
        &project,
        &home,
        &[
            "--rounds",
            "1",
            "--independent",
            "--seat",
            "advocate=codex:codex-seat-model",
            "--seat",
            "critic=copilot:copilot-seat-model",
        ],
    );
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[
            ("advocate", "1", "codex"),
            ("critic", "1", "copilot"),
            ("synthesizer", "1", "host")
        ]),
        "{}",
        run.describe()
    );
    let advocate = server.turns_of(Agent::Codex).remove(0);
    let critic = server.turns_of(Agent::Copilot).remove(0);
    let (a_end, c_end) = (
        server.answered_at(advocate.seq).unwrap(),
        server.answered_at(critic.seq).unwrap(),
    );
    assert!(
        advocate.received < c_end && critic.received < a_end,
        "the openings' requests did not overlap in time: advocate {:?}..{:?}, critic {:?}..{:?}\n{}",
        advocate.received,
        a_end,
        critic.received,
        c_end,
        run.describe()
    );
    assert!(!advocate.all_text().contains("CRITIC r1"));
    assert!(!critic.all_text().contains("ADVOCATE r1"));
    // The critic's recorded prompt is the blind one it had.
    let files = project.tree_files(&debate);
    let prompt_file = files
        .iter()
        .find(|f| f.ends_with("-critic.prompt.md"))
        .unwrap();
    let prompt = String::from_utf8(project.git_show_bytes(&debate, prompt_file)).unwrap();
    assert!(!prompt.contains("ADVOCATE r1"), "{prompt}");
}

#[test]
fn a_token_budget_ends_the_debate_in_its_synthesis_and_says_why() {
    let server = ModelServer::start(debater);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let (run, debate) = run_debate(
        &project,
        &home,
        &[
            "--rounds",
            "3",
            "--seat",
            "advocate=codex:codex-seat-model",
            "--budget-tokens",
            "1",
        ],
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[("advocate", "1", "codex"), ("synthesizer", "1", "host")]),
        "{}",
        run.describe()
    );
    let advocate = commits.iter().find(|c| c.phase() == "advocate").unwrap();
    let why = advocate
        .trailer("Anvil-Budget")
        .expect("the budget is named");
    assert!(why.contains("of 1 tokens spent"), "{why}");
    assert_eq!(advocate.trailer("Anvil-Next"), Some("synthesizer"));
    assert!(project.state_md(&debate).contains("ended_early: true"));
}
/// Each seat's (stance, confidence) by round: the critic, played by Codex, moves in round 2.
fn seat_position(role: &str, round: u32) -> (&'static str, &'static str) {
    match (role.to_ascii_lowercase().as_str(), round) {
        ("advocate", 1) => ("for", "0.8"),
        ("advocate", _) => ("for", "0.7"),
        ("critic", 1) => ("against", "0.7"),
        _ => ("mixed", "0.6"),
    }
}

#[test]
fn positions_are_recorded_per_seat_whatever_agent_plays_it() {
    let server = ModelServer::start(|turn: &Turn| match turn_tag(turn) {
        Some(tag) if !tag.is_synthesis() && !tag.is_pause() => {
            let round = tag.round.unwrap_or_default();
            let (stance, confidence) = seat_position(&tag.role, round);
            let open: &[&str] = if tag.role.eq_ignore_ascii_case("critic") {
                &["The schema registry has no owner"]
            } else {
                &[]
            };
            Reply::text(format!(
                "{}\n\n{}",
                phase_text(&tag),
                position_tags(stance, confidence, &format!("{} stands", tag.key()), open)
            ))
        }
        _ => debater(turn),
    });
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let (run, debate) = run_debate(
        &project,
        &home,
        &["--rounds", "2", "--seat", "critic=codex:codex-seat-model"],
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "host"),
            ("critic", "1", "codex"),
            ("advocate", "2", "host"),
            ("critic", "2", "codex"),
            ("synthesizer", "2", "host")
        ]),
        "{}",
        run.describe()
    );
    // Every debating phase carries its own seat's position, the Codex critic's as much as
    // the host advocate's.
    for c in commits
        .iter()
        .filter(|c| matches!(c.phase(), "advocate" | "critic"))
    {
        let (stance, confidence) = seat_position(c.phase(), c.round().parse().unwrap());
        assert_eq!(c.trailer("Anvil-Stance"), Some(stance), "{c:#?}");
        assert_eq!(c.trailer("Anvil-Confidence"), Some(confidence), "{c:#?}");
        let claim = format!("{} r{} stands", c.phase().to_uppercase(), c.round());
        assert_eq!(c.trailer("Anvil-Claim"), Some(claim.as_str()), "{c:#?}");
        let open = if c.phase() == "critic" {
            vec!["The schema registry has no owner"]
        } else {
            vec![]
        };
        assert_eq!(c.trailers_named("Anvil-Open"), open, "{c:#?}");
    }
    // Codex was asked for its position like any debater.
    let codex = server.turns_of(Agent::Codex);
    assert_eq!(codex.len(), 2, "one critic turn a round");
    for text in texts(&codex) {
        assert!(text.contains("<anvil-position stance="), "{text}");
    }
    // The host's synthesis prompt lists both seats' movement, flags the critic's change of
    // stance, and hands on the critic's open point.
    let host = server.turns_of(Agent::Claude);
    let synthesis = host
        .iter()
        .map(|t| t.prompt())
        .find(|t| t.contains("· Synthesizer]"))
        .expect("the host wrote the synthesis");
    for said in [
        "advocate: for 0.8 → for 0.7",
        "critic: against 0.7 → mixed 0.6 (changed stance in round 2)",
        "For each seat that changed stance, say whether the move was earned",
        "O1 (critic): The schema registry has no owner",
    ] {
        assert!(synthesis.contains(said), "{said}:\n{synthesis}");
    }
    // Read back typed, per seat, with the agent that played it (newest first, as log shows).
    let log = run_anvil(&project, &home, &["log", "--json", &debate]).ok();
    let json = log.json().unwrap();
    let seen: Vec<(String, String, String)> = json["debates"][0]["commits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["positions"]["position"].is_null())
        .map(|c| {
            (
                c["phase"].as_str().unwrap_or_default().to_owned(),
                c["positions"]["position"]["stance"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                c["provenance"]["agent"]
                    .as_str()
                    .unwrap_or("host")
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("critic", "mixed", "codex"),
            ("advocate", "for", "host"),
            ("critic", "against", "codex"),
            ("advocate", "for", "host"),
        ]
        .map(|(p, s, a)| (p.to_owned(), s.to_owned(), a.to_owned())),
        "{json:#}"
    );
    project.assert_fsck_clean();
}
