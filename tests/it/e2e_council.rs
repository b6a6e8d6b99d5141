//! Every seat drafting (`--all-draft`), presets (`--protocol`) and the council they make, with
//! the real agent CLIs against the scripted server: a round's drafts are requested at once
//! (their requests overlap in time), none holds another draft of its round and each holds the
//! rounds before; triage answers and ballots go out at once too; `anvil run --vote` with three
//! seats and `--protocol council` in a Claude Code session reach their synthesis with the
//! ballots recorded.

use std::time::Duration;

use crate::e2e_seats::{debater, phases, run_debate, want};
use crate::support::agents::{API_KEY, AgentsHome, node_bin_dir};
use crate::support::anvil::{Commit, Project, turn_tag};
use crate::support::claude::{Claude, ClaudeHome, new_session_id};
use crate::support::model_server::{Agent, ModelServer, Reply, Turn};

/// The longest a request waits at a [`Meeting`] for the others of its group.
const WAIT: Duration = Duration::from_secs(90);

/// Holds each request of a group at the scripted server until all of its group have arrived
/// (or [`WAIT`] has passed): requests sent at once all meet and are answered together, so
/// they overlap however slowly each agent starts on a busy machine; a request sent only after
/// another was answered waits in vain, and the overlap check sees it.
#[derive(Default)]
pub(crate) struct Meeting {
    arrived: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    all_here: std::sync::Condvar,
}

impl Meeting {
    /// Notes one arrival in `group` and waits for `size` of them.
    pub(crate) fn meet(&self, group: &str, size: usize) {
        let mut arrived = self.arrived.lock().unwrap();
        *arrived.entry(group.to_owned()).or_default() += 1;
        self.all_here.notify_all();
        let _held = self
            .all_here
            .wait_timeout_while(arrived, WAIT, |a| a.get(group).copied().unwrap_or(0) < size)
            .unwrap();
    }
}

/// The agent's first request for the debating phase of `round` whose tag names `role`.
fn draft_of(server: &ModelServer, agent: Agent, role: &str, round: u32) -> Turn {
    server
        .turns_of(agent)
        .into_iter()
        .find(|t| {
            turn_tag(t)
                .is_some_and(|tag| tag.round == Some(round) && tag.role.eq_ignore_ascii_case(role))
        })
        .unwrap_or_else(|| panic!("{agent:?} drafted the {role} of round {round}"))
}

/// Whether two requests were being answered at the same time.
fn overlap(server: &ModelServer, a: &Turn, b: &Turn) -> bool {
    let (a_end, b_end) = (
        server.answered_at(a.seq).expect("answered"),
        server.answered_at(b.seq).expect("answered"),
    );
    a.received < b_end && b.received < a_end
}

/// A debater whose two drafts of a round meet at the server ([`Meeting`]).
fn meeting_debater(meeting: &std::sync::Arc<Meeting>) -> impl Fn(&Turn) -> Reply + use<> {
    let meeting = std::sync::Arc::clone(meeting);
    move |turn: &Turn| {
        if let Some(round) = turn_tag(turn).and_then(|tag| tag.round)
            && turn.tool_results().is_empty()
            && turn.agent != Agent::Claude
        {
            meeting.meet(&format!("round {round}"), 2);
        }
        debater(turn)
    }
}

#[test]
fn every_seat_drafts_every_round_blind_and_at_once_with_codex_and_qwen() {
    let meeting = std::sync::Arc::new(Meeting::default());
    let server = ModelServer::start(meeting_debater(&meeting));
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let (run, debate) = run_debate(
        &project,
        &home,
        &[
            "--rounds",
            "2",
            "--all-draft",
            "--seat",
            "advocate=codex:codex-seat-model",
            "--seat",
            "critic=qwen:qwen-seat-model",
        ],
    );
    assert_eq!(
        phases(&project.commits(&debate)),
        want(&[
            ("advocate", "1", "codex"),
            ("critic", "1", "qwen"),
            ("advocate", "2", "codex"),
            ("critic", "2", "qwen"),
            ("synthesizer", "2", "host"),
        ]),
        "{}",
        run.describe()
    );
    for round in 1..=2 {
        let advocate = draft_of(&server, Agent::Codex, "advocate", round);
        let critic = draft_of(&server, Agent::Qwen, "critic", round);
        assert!(
            overlap(&server, &advocate, &critic),
            "round {round}'s drafts did not overlap in time: advocate {:?}..{:?}, critic {:?}..{:?}\n{}",
            advocate.received,
            server.answered_at(advocate.seq),
            critic.received,
            server.answered_at(critic.seq),
            run.describe()
        );
        // Blind within the round…
        assert!(!advocate.all_text().contains(&format!("CRITIC r{round}")));
        assert!(!critic.all_text().contains(&format!("ADVOCATE r{round}")));
        // …and each holds every round before.
        for earlier in 1..round {
            for text in [&advocate, &critic].map(Turn::all_text) {
                for role in ["ADVOCATE", "CRITIC"] {
                    assert!(
                        text.contains(&format!("{role} r{earlier} of {debate}")),
                        "round {round} lacks {role} r{earlier}: {text}"
                    );
                }
            }
        }
    }
    // The record holds each draft with the blind prompt it really had.
    let files = project.tree_files(&debate);
    let prompt = files
        .iter()
        .find(|f| f.ends_with("-critic.prompt.md") && f.contains("004"))
        .unwrap_or_else(|| panic!("round 2's critic prompt is recorded: {files:?}"));
    let prompt = String::from_utf8(project.git_show_bytes(&debate, prompt)).unwrap();
    assert!(!prompt.contains("ADVOCATE r2"), "{prompt}");
    assert!(prompt.contains("ADVOCATE r1"), "{prompt}");
    project.assert_fsck_clean();
}

/// The three voices of the default stakeholder rotation.
const VOICES: [&str; 3] = ["Engineering Team", "Product/UX", "Business/Management"];

/// A seat that states a position in its draft and ranks the others, in label order, on its
/// ballot; its triage answer disagrees by voice, so the debate opens.
fn council_seat(turn: &Turn) -> Reply {
    let prompt = turn.prompt();
    // The prompt's own tag says it is a ballot (a synthesis may quote the word).
    let ballot = prompt.find("[anvil ").is_some_and(|at| {
        prompt[at..]
            .find(']')
            .is_some_and(|end| prompt[at..at + end].ends_with(" · ballot"))
    });
    if ballot {
        let labels: Vec<&str> = ["A", "B", "C"]
            .into_iter()
            .filter(|l| prompt.contains(&format!("<statement label=\"{l}\">")))
            .collect();
        return Reply::text(format!(
            "A ranking.\n\n<anvil-rank order=\"{}\">each: a reason.</anvil-rank>",
            labels.join(",")
        ));
    }
    // The host's first turn (`/anvil …`, whose output names the debate) opens it, nothing more.
    let opening = turn.agent == Agent::Claude && turn.stop_hook_feedback().is_none();
    let Some(tag) = turn_tag(turn).filter(|_| !opening) else {
        return Reply::text("ok");
    };
    let against = tag.role.eq_ignore_ascii_case("critic")
        || matches!(tag.voice.as_deref(), Some("Product/UX" | "critic"));
    let stance = if against { "against" } else { "for" };
    Reply::text(format!(
        "{} of {}: a considered argument.\n\n<anvil-position stance=\"{stance}\" confidence=\"0.9\">a claim</anvil-position>",
        tag.key(),
        tag.line
    ))
}

/// The ballots of a line, in order.
fn ballots(commits: &[Commit]) -> Vec<&Commit> {
    commits.iter().filter(|c| c.phase() == "voter").collect()
}

#[test]
fn a_headless_vote_of_three_seats_reaches_its_synthesis_with_the_ballots_recorded() {
    let server = ModelServer::start(council_seat);
    let home = AgentsHome::new(&server);
    let project = Project::new();
    let (run, debate) = run_debate(
        &project,
        &home,
        &[
            "--stakeholders",
            "--vote",
            "--seat",
            "Engineering Team=codex:codex-seat-model",
            "--seat",
            "Product/UX=qwen:qwen-seat-model",
        ],
    );
    let commits = project.commits(&debate);
    let cast = ballots(&commits);
    let voters: Vec<_> = cast
        .iter()
        .map(|c| c.trailer("Anvil-Voice").unwrap())
        .collect();
    assert_eq!(voters, VOICES, "{}", run.describe());
    // Every ballot ranked the two others it was shown.
    for ballot in &cast {
        let counted = ballot.trailer("Anvil-Ballot").unwrap();
        assert!(counted.starts_with("ranked%09"), "{counted}");
        assert_eq!(ballot.trailers_named("Anvil-Ballot-Shown").len(), 2);
    }
    assert_eq!(cast[0].trailer("Anvil-Agent"), Some("codex"));
    assert_eq!(cast[1].trailer("Anvil-Agent"), Some("qwen"));
    assert_eq!(cast[2].trailer("Anvil-Agent"), Some("claude"));
    assert_eq!(cast[2].trailer("Anvil-Vote-Cast"), Some("3/3"));
    assert_eq!(cast[2].trailers_named("Anvil-Vote").len(), 3);
    assert!(project.state_md(&debate).contains("status: done"));
    assert!(commits.iter().any(|c| c.phase() == "synthesizer"));
    project.assert_fsck_clean();
}

#[test]
fn a_council_in_a_claude_code_session_reaches_its_synthesis_with_codex_and_qwen() {
    let server = ModelServer::start(council_seat);
    let agents = AgentsHome::new(&server);
    let project = Project::installed();
    // The session's HOME is Claude Code's; Qwen Code reads its settings from it too.
    let claude_home = ClaudeHome::new();
    std::fs::create_dir_all(claude_home.path().join(".qwen")).unwrap();
    std::fs::copy(
        agents.path().join(".qwen/settings.json"),
        claude_home.path().join(".qwen/settings.json"),
    )
    .unwrap();
    let out = Claude::new(
        &server,
        project.path(),
        "/anvil \"Should we adopt GraphQL?\" --protocol council --rounds 1 \
         --seat advocate=codex:codex-seat-model --seat critic=qwen:qwen-seat-model",
    )
    .home(&claude_home)
    .path_prepend(node_bin_dir())
    .env(
        "CODEX_HOME",
        agents.path().join(".codex").display().to_string(),
    )
    .env("SCRIPTED_API_KEY", API_KEY)
    .env("OPENAI_BASE_URL", format!("{}/v1", server.base_url()))
    .env("OPENAI_API_KEY", API_KEY)
    .timeout(Duration::from_secs(300))
    .session_id(new_session_id())
    .run();
    assert!(out.success(), "{}", out.describe());
    let debate = project.only_debate();
    let commits = project.commits(&debate);
    assert!(
        project.state_md(&debate).contains("status: done"),
        "the council reached its synthesis: {}\n{:?}\n{}\n{}",
        out.describe(),
        commits.iter().map(Commit::phase).collect::<Vec<_>>(),
        project.state_md(&debate),
        out.transcript()
            .and_then(|t| std::fs::read_to_string(t).ok())
            .unwrap_or_default()
    );
    let played: Vec<(&str, Option<&str>)> = commits
        .iter()
        .filter(|c| c.phase() != "start" && c.phase() != "run")
        .map(|c| (c.phase(), c.trailer("Anvil-Agent")))
        .collect();
    assert_eq!(
        played,
        [
            ("triage", Some("codex")),
            ("triage", Some("qwen")),
            ("advocate", Some("codex")),
            ("critic", Some("qwen")),
            ("voter", Some("codex")),
            ("voter", Some("qwen")),
            ("synthesizer", None),
        ],
        "{}",
        out.describe()
    );
    // The record: what ran, what triage decided, the ballots and the result.
    assert!(
        project
            .transcript_md(&debate)
            .contains("Protocol: council (--triage --all-draft --vote)."),
        "{}",
        project.transcript_md(&debate)
    );
    let triage = commits.iter().rfind(|c| c.phase() == "triage").unwrap();
    let decided = triage.trailer("Anvil-Triage").expect("triage's decision");
    assert!(decided.contains("debate"), "{decided}");
    let cast = ballots(&commits);
    for ballot in &cast {
        assert_eq!(
            ballot
                .trailer("Anvil-Ballot")
                .map(|b| b.starts_with("ranked")),
            Some(true)
        );
    }
    assert_eq!(cast[1].trailer("Anvil-Vote-Cast"), Some("2/2"));
    assert_eq!(cast[1].trailers_named("Anvil-Vote").len(), 2);
    // The seats' drafts of round 1 and their triage answers were requested at once.
    let advocate = draft_of(&server, Agent::Codex, "advocate", 1);
    let critic = draft_of(&server, Agent::Qwen, "critic", 1);
    assert!(!advocate.all_text().contains("CRITIC r1"));
    assert!(!critic.all_text().contains("ADVOCATE r1"));
    project.assert_fsck_clean();
}

/// A seat that agrees, firmly, in every phase.
fn agreeing_seat(turn: &Turn) -> Reply {
    let Some(tag) = turn_tag(turn) else {
        return Reply::text("ok");
    };
    Reply::text(format!(
        "{} of {}: a considered argument, with evidence and numbers.\n\n<anvil-position stance=\"for\" confidence=\"0.9\">adopt it</anvil-position>",
        tag.key(),
        tag.line
    ))
}

/// The tokens the scripted server reported for every turn: input (cached included) and output.
fn tokens_reported(server: &ModelServer) -> u64 {
    server
        .usage_reported()
        .iter()
        .map(|u| u.tokens[0] + u.tokens[1])
        .sum()
}

#[test]
fn triage_asks_every_seat_at_once_and_a_settled_question_costs_under_40_percent_of_the_debate() {
    let seats = [
        "--rounds",
        "3",
        "--seat",
        "advocate=codex:codex-seat-model",
        "--seat",
        "critic=qwen:qwen-seat-model",
        "--seat",
        "synthesizer=codex:codex-seat-model",
    ];
    // The same scripted question, triaged…
    // (the two triage answers meet at the server: asked at once, they are answered together)
    let meeting = std::sync::Arc::new(Meeting::default());
    let met = std::sync::Arc::clone(&meeting);
    let triaged = ModelServer::start(move |turn| {
        if turn_tag(turn).is_some_and(|tag| tag.role.eq_ignore_ascii_case("triage"))
            && turn.tool_results().is_empty()
        {
            met.meet("triage", 2);
        }
        agreeing_seat(turn)
    });
    let home = AgentsHome::new(&triaged);
    let project = Project::new();
    let (run, debate) = run_debate(&project, &home, &[&seats[..], &["--triage"]].concat());
    let commits = project.commits(&debate);
    assert_eq!(
        phases_of(&commits),
        ["triage", "triage", "synthesizer"],
        "{}",
        run.describe()
    );
    let decided = commits[2].trailer("Anvil-Triage").unwrap();
    assert!(
        decided.starts_with("settled at triage: 2 of 2 for"),
        "{decided}"
    );
    // …asked every seat at once,
    let answer = |agent| {
        triaged
            .turns_of(agent)
            .into_iter()
            .find(|t| turn_tag(t).is_some_and(|tag| tag.role.eq_ignore_ascii_case("triage")))
            .unwrap()
    };
    let (codex, qwen) = (answer(Agent::Codex), answer(Agent::Qwen));
    assert!(
        overlap(&triaged, &codex, &qwen),
        "the triage answers were not asked at once\n{}",
        run.describe()
    );
    // …and debated in full, with the same seats.
    let full = ModelServer::start(agreeing_seat);
    let home = AgentsHome::new(&full);
    let project = Project::new();
    let (run, debate) = run_debate(&project, &home, &seats);
    assert_eq!(
        phases_of(&project.commits(&debate)).len(),
        7,
        "{}",
        run.describe()
    );
    let (settled, debated) = (tokens_reported(&triaged), tokens_reported(&full));
    let ratio = settled as f64 / debated as f64;
    eprintln!("tokens: triage that settles {settled}, the full debate {debated}: {ratio:.3}");
    assert!(
        ratio <= 0.40,
        "triage that settles spent {settled} tokens, the full debate {debated} ({ratio:.3})"
    );
}

/// The debating phases and the synthesis of a line.
fn phases_of(commits: &[Commit]) -> Vec<&str> {
    commits
        .iter()
        .map(Commit::phase)
        .filter(|p| !["start", "run"].contains(p))
        .collect()
}

#[test]
fn a_round_drafted_blind_reads_as_one_moment_in_show_and_diffs_voice_by_voice() {
    let project = Project::new();
    let session = new_session_id();
    let started = project.start(&[
        "Should we build a platform team?",
        "--stakeholders",
        "--all-draft",
        "--rounds",
        "2",
        "--session",
        &session,
    ]);
    let stop = |text: String| {
        project
            .hook(&serde_json::json!({
                "session_id": session,
                "cwd": project.path(),
                "hook_event_name": "Stop",
                "last_assistant_message": text,
            }))
            .ok()
    };
    for round in 1..=2 {
        for voice in VOICES {
            stop(format!("{voice} in round {round}: its draft."));
        }
    }
    stop("The synthesis.".to_owned());
    let debate = &started.debate;
    assert!(project.state_md(debate).contains("status: done"));
    // Every voice in every round, each draft marked as such in the record and the transcript.
    let commits = project.commits(debate);
    let drafts: Vec<(&str, &str)> = commits
        .iter()
        .filter(|c| c.trailer("Anvil-Drafted") == Some("yes"))
        .map(|c| (c.round(), c.trailer("Anvil-Voice").unwrap()))
        .collect();
    assert_eq!(drafts.len(), 6, "{drafts:?}");
    assert!(
        project
            .transcript_md(debate)
            .contains("## Round 2 · Stakeholder · Product/UX\n\nProduct/UX in round 2: its draft.\n\n_Drafted blind, at the same time as the round's other voices"),
        "{}",
        project.transcript_md(debate)
    );
    // `diff` between the rounds pairs each voice with itself.
    let diff = project
        .anvil(&[
            "diff",
            &format!("{debate}@main:round-1"),
            &format!("{debate}@main:round-2"),
        ])
        .ok()
        .stdout;
    for voice in VOICES {
        assert!(
            diff.contains(&format!("a/main/round-1/stakeholder ({voice})"))
                && diff.contains(&format!("b/main/round-2/stakeholder ({voice})")),
            "{diff}"
        );
        assert!(
            diff.contains(&format!("-{voice} in round 1: its draft.")),
            "{diff}"
        );
        assert!(
            diff.contains(&format!("+{voice} in round 2: its draft.")),
            "{diff}"
        );
    }
}

#[test]
fn a_draft_whose_seat_fails_is_played_blind_by_the_host_with_fallback() {
    // Qwen's provider is down: the critic's draft fails, the advocate's is recorded, and the
    // host (claude) drafts the critic's phase with --fallback host, still blind.
    let server = ModelServer::start(|turn| {
        if turn.agent == Agent::Qwen {
            return Reply::error(400, "scripted outage of the critic's provider");
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
            "--all-draft",
            "--fallback",
            "host",
            "--seat",
            "advocate=codex:codex-seat-model",
            "--seat",
            "critic=qwen:qwen-seat-model",
        ],
    );
    let commits = project.commits(&debate);
    assert_eq!(
        phases(&commits),
        want(&[
            ("advocate", "1", "codex"),
            ("critic", "1", "host"),
            ("synthesizer", "1", "host"),
        ]),
        "{}",
        run.describe()
    );
    let critic = commits.iter().find(|c| c.phase() == "critic").unwrap();
    assert!(
        critic
            .trailer("Anvil-Seat-Fallback")
            .is_some_and(|why| why.contains("qwen:qwen-seat-model failed")),
        "{critic:?}"
    );
    // The host's draft was blind to the advocate's, recorded before it.
    let host = server
        .turns_of(Agent::Claude)
        .into_iter()
        .find(|t| turn_tag(t).is_some_and(|tag| tag.role.eq_ignore_ascii_case("critic")))
        .expect("the host drafted the critic's phase");
    assert!(!host.prompt().contains("ADVOCATE r1"), "{}", host.prompt());
}
