use super::*;

fn q() -> Options {
    Options {
        question: "Should we?".into(),
        ..Options::default()
    }
}

#[test]
fn defaults_are_a_three_round_analyst_debate() {
    let s = q().into_setup().unwrap();
    assert_eq!(
        (s.mode, s.rounds, s.rotation),
        (Mode::Analyst, 3, Rotation::Pair)
    );
}

#[test]
fn stakeholders_default_voices_and_rounds() {
    let s = Options {
        stakeholders: Some(String::new()),
        ..q()
    }
    .into_setup()
    .unwrap();
    assert_eq!(s.voices, DEFAULT_STAKEHOLDERS);
    assert_eq!((s.mode, s.rounds), (Mode::Stakeholders, 3));
    let s = Options {
        mode: Some(Mode::Stakeholders),
        ..q()
    }
    .into_setup()
    .unwrap();
    assert_eq!(s.voices.len(), 3);
    let s = Options {
        stakeholders: Some("Ops, Legal".into()),
        ..q()
    }
    .into_setup()
    .unwrap();
    assert_eq!(
        (s.voices.clone(), s.rounds),
        (vec!["Ops".to_owned(), "Legal".to_owned()], 2)
    );
}

#[test]
fn invalid_combinations_say_what_to_do() {
    let cases: Vec<(Options, &str)> = vec![
        (
            Options {
                question: "  ".into(),
                ..q()
            },
            "question is empty",
        ),
        (
            Options {
                mode: Some(Mode::DevilsAdvocate),
                ..q()
            },
            "--position",
        ),
        (
            Options {
                personas: vec!["cfo".into()],
                ..q()
            },
            "at least two",
        ),
        (
            Options {
                stakeholders: Some("A,B".into()),
                mode: Some(Mode::Philosopher),
                ..q()
            },
            "implies --mode stakeholders",
        ),
        (
            Options {
                rounds: Some(0),
                ..q()
            },
            "out of range",
        ),
        (
            Options {
                rounds: Some(11),
                ..q()
            },
            "1 to 10",
        ),
        (
            Options {
                stakeholders: Some("A,B".into()),
                rounds: Some(3),
                ..q()
            },
            "rounds = voices",
        ),
        (
            Options {
                stakeholders: Some("A".into()),
                personas: vec!["x".into(), "y".into()],
                ..q()
            },
            "use one of them",
        ),
        (
            Options {
                autonomy: Some(6),
                ..q()
            },
            "0 to 5",
        ),
    ];
    for (options, expected) in cases {
        let err = options.clone().into_setup().unwrap_err().to_string();
        assert!(err.contains(expected), "{options:?}: {err}");
    }
}

fn config(text: &str) -> crate::model::config::Config {
    crate::model::config::Config::parse(text, std::path::Path::new(".anvil/config.toml")).unwrap()
}

#[test]
fn a_protocol_fills_what_no_flag_gave_and_outranks_the_config_only_from_the_command_line() {
    let council = |o: Options| o.into_setup().unwrap();
    let s = council(Options {
        protocol: Some("council".into()),
        ..q()
    });
    assert!(s.triage && s.all_draft && s.vote);
    assert_eq!(
        super::protocol::words(&s).as_deref(),
        Some("council (--triage --all-draft --vote)")
    );
    // A flag beside it wins, and the words say so.
    let s = council(Options {
        protocol: Some("council".into()),
        vote: Some(false),
        ..q()
    });
    assert!(s.triage && s.all_draft && !s.vote);
    assert_eq!(
        super::protocol::words(&s).as_deref(),
        Some("council (--triage --all-draft --vote), with --no-vote given")
    );
    // Named on the command line, it outranks the config's keys…
    let s = council(
        Options {
            protocol: Some("debate".into()),
            ..q()
        }
        .with_config(&config("vote = true\ntriage = true\n")),
    );
    assert!(!s.vote && !s.triage && !s.all_draft);
    // …named in the config, the config's own keys win over it.
    let s = council(q().with_config(&config("protocol = \"council\"\nvote = false\n")));
    assert!(s.triage && s.all_draft && !s.vote);
    assert_eq!(s.protocol.as_deref(), Some("council"));
    // One blind round and a vote, a rotation included.
    let s = council(Options {
        protocol: Some("vote".into()),
        stakeholders: Some(String::new()),
        ..q()
    });
    assert_eq!(
        (s.rounds, s.all_draft, s.vote, s.triage),
        (1, true, true, false)
    );
    let err = Options {
        protocol: Some("chat".into()),
        ..q()
    }
    .into_setup()
    .unwrap_err();
    assert!(
        err.message
            .starts_with("--protocol: unknown protocol 'chat'"),
        "{err}"
    );
}

#[test]
fn a_message_names_a_value_from_the_config_by_its_key() {
    let err = q()
        .with_config(&config("rounds = 40\n"))
        .into_setup()
        .unwrap_err();
    assert!(
        err.message
            .starts_with("`rounds` in .anvil/config.toml 40 is out of range"),
        "{err}"
    );
    let err = Options {
        rounds: Some(40),
        ..q()
    }
    .with_config(&config("rounds = 2\n"))
    .into_setup()
    .unwrap_err();
    assert!(err.message.starts_with("--rounds 40"), "{err}");
}

#[test]
fn the_command_line_wins_over_the_config_and_turns_its_switches_off() {
    let defaults = config(
        "rounds = 2\ninteractive = true\nresearch = true\nframework = \"rfc\"\nrecall = false\n",
    );
    let options = Options {
        rounds: Some(4),
        research: Some(false),
        ..q()
    }
    .with_config(&defaults);
    assert_eq!(options.rounds, Some(4));
    assert_eq!(options.interactive, Some(true));
    assert_eq!(options.research, Some(false));
    assert_eq!(options.recall, Some(false));
    assert_eq!(
        options.from_config,
        BTreeSet::from(["framework", "interactive", "recall"])
    );
    let setup = options.into_setup().unwrap();
    assert!(setup.interactive && !setup.research);
    assert_eq!(setup.framework.as_deref(), Some("rfc"));
}

#[test]
fn a_rotation_on_the_command_line_outranks_the_configured_voices_and_mode() {
    let defaults = config("mode = \"philosopher\"\nstakeholders = [\"Ops\", \"Legal\"]\n");
    let setup = Options {
        personas: vec!["end-user".into(), "startup-cfo".into()],
        ..q()
    }
    .with_config(&defaults)
    .into_setup()
    .unwrap();
    assert_eq!(
        (setup.rotation, setup.mode),
        (Rotation::Personas, Mode::Philosopher)
    );
    let setup = Options {
        stakeholders: Some("A,B".into()),
        ..q()
    }
    .with_config(&defaults)
    .into_setup()
    .unwrap();
    assert_eq!(setup.voices, ["A", "B"]);
    let setup = q()
        .with_config(&config(
            "stakeholders = [\"Ops\", \"Legal\"]\npersonas = [\"x\", \"y\"]\n",
        ))
        .into_setup()
        .unwrap();
    assert_eq!(
        (setup.rotation, setup.voices.len()),
        (Rotation::Stakeholders, 2)
    );
}
