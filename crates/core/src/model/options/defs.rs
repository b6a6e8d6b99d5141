//! Every option of `anvil start` and `anvil run`, one definition each, in the order of
//! `--help`. A definition is the only place an option's flag, its `--no-` form, its config key,
//! its words and its example are written; see [`super::OptionDef`] for what each part does.
//!
//! To add an option: a `const` here, its name in [`ALL`], its field in [`Options`] (and in
//! `Setup` when it shapes the debate), and its validator in `Options::into_setup` when it can
//! be wrong. `ANVIL_WRITE_DOCS=1 cargo test -p anvil-debate-core options::docs` then rewrites the
//! generated parts of docs/options.md.

use serde::Deserialize;

use super::protocol::protocol;
use super::{Doc, Flag, Heading, Key, Negation, OptionDef, Takes, Ty, Value};
use crate::model::state::Mode;

/// Every option, in the order of `--help` (and of docs/options.md).
pub const ALL: [&OptionDef; 29] = [
    &MODE,
    &ROUNDS,
    &POSITION,
    &STAKEHOLDERS,
    &PERSONA,
    &INTERACTIVE,
    &FRAMEWORK,
    &FOCUS,
    &CONTEXT,
    &DIFF,
    &PR,
    &FOLLOW_UP,
    &VERSUS,
    &RESEARCH,
    &CONVERGE,
    &PROTOCOL,
    &TRIAGE,
    &TRIAGE_THRESHOLD,
    &ALL_DRAFT,
    &VOTE,
    &AUTONOMY,
    &RECALL,
    &SEAT,
    &INDEPENDENT,
    &BUDGET_TOKENS,
    &BUDGET_USD,
    &FALLBACK,
    &OUTPUT,
    &OUTPUT_DIR,
];

pub const MODE: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "mode",
        takes: Takes::One(Value {
            name: "MODE",
            ty: Ty::Checked(|s| Mode::parse(s).map(drop)),
        }),
        help: "Tone and rules of the debate [default: analyst].\n\n\
               analyst, philosopher, devils-advocate (attacks your --position) or stakeholders.",
        example: Some("--mode devils-advocate --position \"We should keep the monolith\""),
        given: |o, v| {
            o.mode = Some(Mode::parse(&v.text()?)?);
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "mode",
        example: "\"analyst\"",
        note: "analyst | philosopher | devils-advocate | stakeholders",
        read: |o, v| {
            o.mode = Some(Mode::deserialize(v)?);
            Ok(())
        },
        // A rotation given on the command line outranks a configured mode.
        fill: |o, d| {
            (o.stakeholders.is_none() || d.mode == Some(Mode::Stakeholders))
                && fill(&mut o.mode, &d.mode)
        },
    }),
    doc: Doc {
        shows: "analyst\\|philosopher\\|devils-advocate\\|stakeholders",
        what: "tone and rules of the debate (default `analyst`); `devils-advocate` attacks your \
               `--position`",
        example: "anvil start \"Keep the monolith?\" --mode devils-advocate --position \"The \
                  monolith is fine\"",
    },
};

pub const ROUNDS: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "rounds",
        takes: Takes::One(Value {
            name: "ROUNDS",
            ty: Ty::U32,
        }),
        help: "Advocate/critic rounds, 1 to 10 [default: 3].\n\n\
               In a stakeholder or persona rotation, rounds = voices.",
        example: Some("--rounds 2"),
        given: |o, v| {
            o.rounds = Some(v.number()?);
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "rounds",
        example: "2",
        read: |o, v| {
            o.rounds = Some(u32::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.rounds, &d.rounds),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "N",
        what: "advocate/critic rounds, 1–10 (default 3); in a rotation, rounds = voices",
        example: "anvil start \"Adopt GraphQL?\" --rounds 2",
    },
};

pub const POSITION: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "position",
        takes: Takes::One(Value {
            name: "POSITION",
            ty: Ty::Text,
        }),
        help: "Your own stance.\n\n\
               Required by --mode devils-advocate, which attacks it; the others weigh it.",
        example: Some("--position \"Postgres is enough for our queue\""),
        given: |o, v| {
            o.position = Some(v.text()?);
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "position",
        example: "\"…\"",
        read: |o, v| {
            o.position = Some(String::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.position, &d.position),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "TEXT",
        what: "your own stance; required by `devils-advocate`",
        example: "anvil start \"Queue in Postgres?\" --position \"Postgres is enough\"",
    },
};

pub const STAKEHOLDERS: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "stakeholders",
        takes: Takes::OneOrNone(Value {
            name: "STAKEHOLDERS",
            ty: Ty::Text,
        }),
        help: "A rotation of stakeholders; implies --mode stakeholders.\n\n\
               Their names apart by commas. Without a value: \"Engineering Team,Product/UX,\
               Business/Management\".",
        example: Some("--stakeholders \"Ops,Legal,Finance\""),
        given: |o, v| {
            o.stakeholders = Some(v.text()?);
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "stakeholders",
        example: "[\"Ops\", \"Legal\"]",
        note: "",
        read: |o, v| {
            o.stakeholders = Some(Vec::<String>::deserialize(v)?.join(","));
            Ok(())
        },
        // Configured voices make the rotation the default, unless the command line chose
        // another rotation or mode.
        fill: |o, d| {
            o.personas.is_empty()
                && o.mode.is_none_or(|m| m == Mode::Stakeholders)
                && fill(&mut o.stakeholders, &d.stakeholders)
        },
    }),
    doc: Doc {
        shows: "\"A,B,C\"",
        what: "stakeholder rotation (default voices: Engineering Team, Product/UX, \
               Business/Management); implies `--mode stakeholders`",
        example: "anvil start \"Build a platform team?\" --stakeholders \"Ops,Legal,Finance\"",
    },
};

pub const PERSONA: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "persona",
        takes: Takes::Each(Value {
            name: "NAME",
            ty: Ty::Text,
        }),
        help: "A persona of a rotation (repeat, at least twice).\n\n\
               A preset (security-engineer, startup-cfo, junior-developer, end-user) or free \
               text.",
        example: Some("--persona startup-cfo --persona \"a burned-out SRE\""),
        given: |o, v| {
            o.personas = v.texts()?;
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "personas",
        example: "[\"startup-cfo\", \"end-user\"]",
        read: |o, v| {
            o.personas = Vec::deserialize(v)?;
            Ok(())
        },
        // Configured personas make the rotation the default, unless stakeholders speak.
        fill: |o, d| o.stakeholders.is_none() && fill_list(&mut o.personas, &d.personas),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "NAME",
        what: "persona rotation, at least two; presets `security-engineer`, `startup-cfo`, \
               `junior-developer`, `end-user`, or free text",
        example: "anvil start \"Buy or build?\" --persona startup-cfo --persona \"a burned-out SRE\"",
    },
};

pub const INTERACTIVE: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "interactive",
        takes: Takes::Switch,
        help: "Pause after every round so you can steer the next one.",
        example: Some("--interactive"),
        negation: Some(Negation {
            long: "no-interactive",
            help: "No pauses, even when .anvil/config.toml asks for them.",
        }),
        given: |o, v| {
            o.interactive = Some(v.is_on());
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "interactive",
        example: "true",
        read: |o, v| {
            o.interactive = Some(bool::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.interactive, &d.interactive),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "",
        what: "pause after every round so you can steer the next one",
        example: "anvil start \"Adopt GraphQL?\" --interactive",
    },
};

pub const FRAMEWORK: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "framework",
        takes: Takes::One(Value {
            name: "NAME",
            ty: Ty::Text,
        }),
        help: "Synthesis shape: adr, pre-mortem, red-team, rfc or risks.",
        example: Some("--framework adr"),
        given: |o, v| {
            o.framework = Some(v.text()?);
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "framework",
        example: "\"adr\"",
        read: |o, v| {
            o.framework = Some(String::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.framework, &d.framework),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "adr\\|pre-mortem\\|red-team\\|rfc\\|risks",
        what: "the decision format of the synthesis",
        example: "anvil start \"Rewrite billing in Rust?\" --framework adr",
    },
};

pub const FOCUS: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "focus",
        takes: Takes::One(Value {
            name: "LENS",
            ty: Ty::Text,
        }),
        help: "One lens for every phase: a preset or free text.\n\n\
               The presets: security, performance, developer-experience, operational-cost, \
               maintainability.",
        example: Some("--focus security, or --focus \"GDPR compliance\""),
        given: |o, v| {
            o.focus = Some(v.text()?);
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "focus",
        example: "\"security\"",
        read: |o, v| {
            o.focus = Some(String::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.focus, &d.focus),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "LENS",
        what: "one lens for every phase; presets `security`, `performance`, \
               `developer-experience`, `operational-cost`, `maintainability`, or free text",
        example: "anvil start \"Move sessions to Redis?\" --focus security",
    },
};

pub const CONTEXT: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "context",
        takes: Takes::Each(Value {
            name: "PATH",
            ty: Ty::Text,
        }),
        help: "Code the debate is about: a file or a directory (repeatable).\n\n\
               Directories respect .gitignore; binary files are skipped; the total is capped at \
               128 KiB, and what was cut is listed.",
        example: Some("--context src/ --context Cargo.toml"),
        given: |o, v| {
            o.context = v.texts()?;
            Ok(())
        },
        heading: Heading::Material,
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "context",
        example: "[\"src/\"]",
        note: "relative to the project root",
        read: |o, v| {
            o.context = Vec::deserialize(v)?;
            Ok(())
        },
        fill: |o, d| fill_list(&mut o.context, &d.context),
    }),
    doc: Doc {
        shows: "PATH",
        what: "files or directories the debate is about; `.gitignore` respected, binary files \
               skipped, 128 KiB in all (what was cut is listed)",
        example: "anvil start \"Is this design sound?\" --context src/ --context Cargo.toml",
    },
};

pub const DIFF: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "diff",
        takes: Takes::Switch,
        help: "Add the project's uncommitted changes as a diff.\n\n\
               Staged, unstaged and untracked, against HEAD.",
        example: Some("--diff \"Is this change safe to ship?\""),
        negation: Some(Negation {
            long: "no-diff",
            help: "No diff, even when .anvil/config.toml asks for one.",
        }),
        given: |o, v| {
            o.diff = Some(v.is_on());
            Ok(())
        },
        heading: Heading::Material,
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "diff",
        example: "false",
        read: |o, v| {
            o.diff = Some(bool::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.diff, &d.diff),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "",
        what: "your uncommitted changes (staged, unstaged, untracked) as a diff against `HEAD`",
        example: "anvil start \"Safe to ship?\" --diff --framework red-team",
    },
};

pub const PR: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "pr",
        takes: Takes::One(Value {
            name: "N",
            ty: Ty::U32,
        }),
        help: "Add a pull request's changes.\n\n\
               Fetched from the project's `origin` (or `upstream`, where a fork's pull requests \
               live) as the forge publishes them (refs/pull/N/head, or \
               refs/merge-requests/N/head), diffed against the merge base with the default \
               branch.",
        example: Some("--pr 42 \"Should we merge this?\""),
        given: |o, v| {
            o.pr = Some(v.number()?);
            Ok(())
        },
        heading: Heading::Material,
        ..Flag::BASE
    }),
    key: None,
    doc: Doc {
        shows: "N",
        what: "a pull request's changes, fetched from `origin` (or `upstream`) and diffed against \
               the merge base with the default branch",
        example: "anvil start \"Should we merge this?\" --pr 42",
    },
};

pub const FOLLOW_UP: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "follow-up",
        takes: Takes::One(Value {
            name: "FILE|DEBATE",
            ty: Ty::Text,
        }),
        help: "Build on an earlier report or debate.\n\n\
               A report file, or a recorded debate as NAME[@LINE] (its id, its number in `anvil \
               log`, a prefix or words of its id): its synthesis.",
        example: Some("--follow-up .anvil/reports/20261122-graphql-3f2a.md"),
        given: |o, v| {
            o.follow_up = Some(v.text()?);
            Ok(())
        },
        heading: Heading::Material,
        ..Flag::BASE
    }),
    key: None,
    doc: Doc {
        shows: "FILE\\|DEBATE[@LINE]",
        what: "build on an earlier report, or on a recorded debate's synthesis",
        example: "anvil start \"What now?\" --follow-up 20261122-graphql-3f2a",
    },
};

pub const VERSUS: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "versus",
        takes: Takes::Two {
            names: ["A", "B"],
            ty: Ty::Text,
        },
        help: "Pit two earlier results against each other.\n\n\
               Files, or recorded debates as NAME[@LINE]. Without a question, the debate asks \
               which is stronger and why.",
        example: Some("--versus plan-a.md plan-b.md"),
        given: |o, v| {
            o.versus = v.texts()?;
            Ok(())
        },
        heading: Heading::Material,
        ..Flag::BASE
    }),
    key: None,
    doc: Doc {
        shows: "A B",
        what: "pit two results (files or recorded debates) against each other; without a \
               question, asks which is stronger and why",
        example: "anvil start --versus plan-a.md plan-b.md",
    },
};

pub const RESEARCH: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "research",
        takes: Takes::Switch,
        help: "Ask the debaters to ground claims in web research.\n\n\
               The synthesis lists its sources.",
        example: Some("--research"),
        negation: Some(Negation {
            long: "no-research",
            help: "No web research, even when .anvil/config.toml asks for it.",
        }),
        given: |o, v| {
            o.research = Some(v.is_on());
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "research",
        example: "true",
        read: |o, v| {
            o.research = Some(bool::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.research, &d.research),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "",
        what: "debaters ground claims in web research; the synthesis lists its sources",
        example: "anvil start \"Is SQLite enough at 10k rps?\" --research",
    },
};

pub const CONVERGE: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "converge",
        takes: Takes::Switch,
        help: "Go to the synthesis as soon as positions stop moving.\n\n\
               They stop moving when every debater kept its stance and its confidence moved by at \
               most 0.1 since the round before. \
               Never over steering, an interactive pause or an open question. Without it, the \
               record still notes when the debate would have stopped (`anvil log --stats` sums \
               what that would have saved).",
        example: Some("--converge"),
        negation: Some(Negation {
            long: "no-converge",
            help: "Run every round, even when .anvil/config.toml sets `converge = true`.",
        }),
        given: |o, v| {
            o.converge = Some(v.is_on());
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "converge",
        example: "true",
        read: |o, v| {
            o.converge = Some(bool::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.converge, &d.converge),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "",
        what: "go to the synthesis once positions stop moving (every debater kept its stance, \
               confidence within 0.1); never over steering, a pause or an open question",
        example: "anvil start \"Adopt GraphQL?\" --rounds 5 --converge",
    },
};

pub const TRIAGE: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "triage",
        takes: Takes::Switch,
        help: "First ask every seat for a brief, blind answer; debate only if they differ.\n\n\
               Each debating seat answers the question alone: its position, its confidence and \
               what would change its mind. When all take the same stance, each at least as \
               sure as --triage-threshold, the debate goes straight to its synthesis; else \
               the answers open the debate. Without it, the record still notes what triage \
               would have decided (`anvil log --stats` sums what it would have saved).",
        example: Some("--triage"),
        negation: Some(Negation {
            long: "no-triage",
            help: "No triage, even when .anvil/config.toml sets `triage = true`.",
        }),
        given: |o, v| {
            o.triage = Some(v.is_on());
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "triage",
        example: "true",
        read: |o, v| {
            o.triage = Some(bool::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.triage, &d.triage),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "",
        what: "every seat answers first, blind and brief; agreement at or above the threshold \
               goes straight to the synthesis, else the answers open the debate",
        example: "anvil start \"Adopt GraphQL?\" --triage",
    },
};

pub const TRIAGE_THRESHOLD: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "triage-threshold",
        takes: Takes::One(Value {
            name: "0-1",
            ty: Ty::Text,
        }),
        help: "How sure every seat must be for triage to settle the question [default: 0.8].\n\n\
               A confidence from 0 to 1 (or a percentage). Also the threshold of what the \
               record notes triage would have decided.",
        example: Some("--triage-threshold 0.9"),
        given: |o, v| {
            o.triage_threshold = Some(v.text()?);
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "triage_threshold",
        example: "0.9",
        read: |o, v| {
            o.triage_threshold = Some(f64::deserialize(v)?.to_string());
            Ok(())
        },
        fill: |o, d| fill(&mut o.triage_threshold, &d.triage_threshold),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "0-1",
        what: "how sure every seat must be for triage to settle the question (default 0.8)",
        example: "anvil start \"Adopt GraphQL?\" --triage --triage-threshold 0.9",
    },
};

pub const PROTOCOL: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "protocol",
        takes: Takes::One(Value {
            name: "PROTOCOL",
            ty: Ty::Checked(|s| protocol(s).map(drop)),
        }),
        help: "A protocol by name: a preset of the options below.\n\n\
               {protocols}\n\n\
               A flag given beside it wins (`--protocol council --no-vote`); the debate's setup \
               records the protocol and what ran.",
        example: Some("--protocol council --stakeholders"),
        given: |o, v| {
            o.protocol = Some(protocol(&v.text()?)?.name.to_owned());
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "protocol",
        example: "\"council\"",
        note: "council | debate | vote",
        read: |o, v| {
            let name = String::deserialize(v)?;
            protocol(&name).map_err(serde::de::Error::custom)?;
            o.protocol = Some(name);
            Ok(())
        },
        fill: |o, d| fill(&mut o.protocol, &d.protocol),
    }),
    doc: Doc {
        shows: "council\\|debate\\|vote",
        what: "a preset of the options that shape the debate: `council` = `--triage --all-draft \
               --vote`, `debate` = turn-taking (`--no-triage --no-all-draft --no-vote`), `vote` \
               = one blind round and a vote (`--rounds 1 --all-draft --vote --no-triage`); a \
               flag beside it wins",
        example: "anvil run \"Adopt GraphQL?\" --protocol council --seat critic=codex",
    },
};

pub const ALL_DRAFT: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "all-draft",
        takes: Takes::Switch,
        help: "Every seat drafts in every round, blind within the round and at once.\n\n\
               Each debating seat (both of the pair, every voice of a rotation) speaks in every \
               round and sees all earlier rounds, never another's draft of the same round; the \
               seats of a round are played in parallel. In a rotation, --rounds then counts \
               rounds of every voice (default 3). --independent is its round-1-only case.",
        example: Some("--stakeholders --all-draft --rounds 2"),
        negation: Some(Negation {
            long: "no-all-draft",
            help: "Seats take turns, even when .anvil/config.toml sets `all_draft = true`.",
        }),
        given: |o, v| {
            o.all_draft = Some(v.is_on());
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "all_draft",
        example: "true",
        read: |o, v| {
            o.all_draft = Some(bool::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.all_draft, &d.all_draft),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "",
        what: "every seat drafts in every round, blind within the round and in parallel, seeing \
               all earlier rounds (the \"all agents drafting\" protocol; `--independent` is \
               its round-1 case)",
        example: "anvil run \"Adopt GraphQL?\" --stakeholders --all-draft --rounds 2",
    },
};

pub const VOTE: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "vote",
        takes: Takes::Switch,
        help: "End the debate with a blind vote before the synthesis.\n\n\
               Each debating seat ranks the others' final phases, shown without names as A, B, \
               C… in an order shuffled per voter; its own is never among them. anvil counts the \
               ballots (Borda, ties broken by confidence) and the synthesizer says where it \
               follows the result and where not.",
        example: Some("--stakeholders --vote"),
        negation: Some(Negation {
            long: "no-vote",
            help: "No vote, even when .anvil/config.toml sets `vote = true`.",
        }),
        given: |o, v| {
            o.vote = Some(v.is_on());
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "vote",
        example: "true",
        read: |o, v| {
            o.vote = Some(bool::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.vote, &d.vote),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "",
        what: "a blind vote before the synthesis: each debating seat ranks the others' final \
               phases, unnamed (Borda count, ties broken by confidence, no self-votes)",
        example: "anvil start \"Adopt GraphQL?\" --stakeholders --vote",
    },
};

pub const AUTONOMY: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "autonomy",
        takes: Takes::One(Value {
            name: "0-5",
            ty: Ty::U8,
        }),
        help: "How readily debaters ask you questions, 0 to 5 [default: 0].\n\n\
               With `anvil ask`: 0 never … 5 whenever anything is ambiguous.",
        example: Some("--autonomy 2"),
        given: |o, v| {
            o.autonomy = Some(v.number()?);
            Ok(())
        },
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "autonomy",
        example: "2",
        read: |o, v| {
            o.autonomy = Some(u8::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.autonomy, &d.autonomy),
        ..Key::BASE
    }),
    doc: Doc {
        shows: "0..5",
        what: "how readily debaters ask you with `anvil ask` (0 never … 5 whenever anything is \
               ambiguous)",
        example: "anvil start \"Migrate to k8s?\" --autonomy 2",
    },
};

pub const OUTPUT: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "output",
        short: Some('o'),
        takes: Takes::One(Value {
            name: "OUTPUT",
            ty: Ty::Path,
        }),
        help: "Where the final report goes (.md, or a self-contained .html).",
        example: Some("--output docs/decisions/graphql.html"),
        given: |o, v| {
            o.output = Some(v.path()?);
            Ok(())
        },
        heading: Heading::Report,
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "output",
        example: "\"docs/decision.md\"",
        note: "one fixed report path",
        read: |o, v| {
            o.output = Some(std::path::PathBuf::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.output, &d.output),
    }),
    doc: Doc {
        shows: "PATH",
        what: "where the final report goes (`.md`, or a self-contained `.html`)",
        example: "anvil start \"Adopt GraphQL?\" -o docs/decisions/graphql.html",
    },
};

pub const OUTPUT_DIR: OptionDef = OptionDef {
    flag: None,
    key: Some(Key {
        name: "output_dir",
        example: "\"docs/debates\"",
        note: "or: reports go to <output_dir>/<debate>.md",
        read: |o, v| {
            o.output_dir = Some(std::path::PathBuf::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.output_dir, &d.output_dir),
    }),
    doc: Doc::NONE,
};

pub const RECALL: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "no-recall",
        takes: Takes::Switch,
        help: "Do not give the debaters earlier conclusions of this project.\n\n\
               By default they are given the conclusions of earlier debates related to the \
               question. `recall = false` in .anvil/config.toml turns recall off for every \
               debate.",
        example: None,
        given: |o, _| {
            o.recall = Some(false);
            Ok(())
        },
        heading: Heading::Material,
        ..Flag::BASE
    }),
    key: Some(Key {
        name: "recall",
        example: "true",
        note: "give new debates the earlier conclusions related to the question",
        read: |o, v| {
            o.recall = Some(bool::deserialize(v)?);
            Ok(())
        },
        fill: |o, d| fill(&mut o.recall, &d.recall),
    }),
    doc: Doc {
        shows: "",
        what: "do not give the debaters the earlier conclusions of this project related to the \
               question ([recall](#recall-earlier-conclusions))",
        example: "anvil start \"Adopt GraphQL?\" --no-recall",
    },
};

// The seat options. Their defaults live in the config's `[seats]` table, beside the roles
// (`critic = "codex"`), which `Options::with_config` reads: so they have no key of their own.

pub const SEAT: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "seat",
        takes: Takes::Each(Value {
            name: "ROLE=AGENT[:MODEL]",
            ty: Ty::Text,
        }),
        help: "Let another agent play a role (repeatable).\n\n\
               It plays in a session of its own, read-only. ROLE is advocate, critic, \
               synthesizer, stakeholder, persona, or a voice of the rotation; AGENT is {agents}, \
               run as you configured it, or an endpoint named in [agents.NAME] of \
               .anvil/config.toml; MODEL is passed to it (an endpoint needs one). \
               A role without a seat is played by the session that \
               drives the debate. Defaults: [seats] in .anvil/config.toml. See `anvil seats`.",
        example: Some("--seat critic=codex --seat synthesizer=ollama:llama3.1"),
        given: |o, v| {
            o.seats = v.texts()?;
            Ok(())
        },
        heading: Heading::Seats,
        ..Flag::BASE
    }),
    key: None,
    doc: Doc {
        shows: "ROLE=AGENT[:MODEL]",
        what: "another agent plays a role, in a session of its own, read-only; defaults in \
               the `[seats]` table",
        example: "anvil run \"Adopt GraphQL?\" --seat critic=codex --seat \
                  synthesizer=copilot:gpt-5.4",
    },
};

pub const INDEPENDENT: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "independent",
        takes: Takes::Switch,
        help: "Draft round 1's openings blind and in parallel.\n\n\
               No seat sees another's opening until round 2.",
        example: Some("--seat critic=codex --independent"),
        given: |o, v| {
            o.independent = Some(v.is_on());
            Ok(())
        },
        heading: Heading::Seats,
        ..Flag::BASE
    }),
    key: None,
    doc: Doc {
        shows: "",
        what: "round 1's openings are drafted blind and in parallel (`[seats] independent`)",
        example: "anvil run \"Adopt GraphQL?\" --seat critic=codex --independent",
    },
};

pub const BUDGET_TOKENS: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "budget-tokens",
        takes: Takes::One(Value {
            name: "N",
            ty: Ty::U64,
        }),
        help: "Tokens the debate may spend, all seats and the host.\n\n\
               Input and output. When the next phase would go past it, the debate goes to its \
               synthesis, and the record says why.",
        example: Some("--budget-tokens 200000"),
        given: |o, v| {
            o.budget_tokens = Some(v.number()?);
            Ok(())
        },
        heading: Heading::Seats,
        ..Flag::BASE
    }),
    key: None,
    doc: Doc {
        shows: "N",
        what: "when the next phase would go past it, the debate goes to its synthesis, and the \
               record says why (`[seats] budget_tokens`)",
        example: "anvil run \"Adopt GraphQL?\" --budget-tokens 200000",
    },
};

pub const BUDGET_USD: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "budget-usd",
        takes: Takes::One(Value {
            name: "X",
            ty: Ty::Text,
        }),
        help: "Dollars the debate may spend, where an agent reports a price.\n\n\
               Counted where an agent reports a price (Claude Code); like --budget-tokens \
               otherwise.",
        example: Some("--budget-usd 0.50"),
        given: |o, v| {
            o.budget_usd = Some(v.text()?);
            Ok(())
        },
        heading: Heading::Seats,
        ..Flag::BASE
    }),
    key: None,
    doc: Doc {
        shows: "X",
        what: "like `--budget-tokens`, in dollars where an agent reports a price \
               (`[seats] budget_usd`)",
        example: "anvil run \"Adopt GraphQL?\" --budget-usd 0.50",
    },
};

pub const FALLBACK: OptionDef = OptionDef {
    flag: Some(Flag {
        long: "fallback",
        takes: Takes::One(Value {
            name: "host",
            ty: Ty::Checked(|s| fallback(s).map(drop)),
        }),
        help: "Who plays a seat whose agent fails: `host`.\n\n\
               The agent fails when it is missing, errs, times out or does not reply; `host` is \
               the session that drives the debate, recorded as such. Without it a failed seat records nothing: the debate waits at that phase, you \
               are told which seat failed and why, and the next stop (or `anvil run --line`) \
               tries the seat again.",
        example: Some("--seat critic=codex --fallback host"),
        given: |o, v| {
            o.fallback = Some(fallback(&v.text()?)?);
            Ok(())
        },
        with_line: true,
        heading: Heading::Seats,
        ..Flag::BASE
    }),
    key: None,
    doc: Doc {
        shows: "host",
        what: "the host plays a seat whose agent failed, recorded as such; without it the \
               debate waits at that phase (`[seats] fallback`)",
        example: "anvil run \"Adopt GraphQL?\" --seat critic=codex --fallback host",
    },
};

/// The fallback `--fallback` names: `host` is the only one.
fn fallback(text: &str) -> Result<crate::model::seats::Fallback, String> {
    match text {
        "host" => Ok(crate::model::seats::Fallback::Host),
        other => Err(format!("`{other}`: the only fallback is `host`")),
    }
}

/// Takes the config's value when the command line gave none; says whether it did.
fn fill<T: Clone>(given: &mut Option<T>, default: &Option<T>) -> bool {
    if given.is_some() || default.is_none() {
        return false;
    }
    given.clone_from(default);
    true
}

/// The config's list when the command line gave none.
fn fill_list(given: &mut Vec<String>, default: &[String]) -> bool {
    if !given.is_empty() || default.is_empty() {
        return false;
    }
    *given = default.to_vec();
    true
}

impl Flag {
    /// What a flag has unless it says otherwise: no short name, no `--no-` form, no example.
    pub const BASE: Flag = Flag {
        long: "",
        short: None,
        takes: Takes::Switch,
        help: "",
        example: None,
        negation: None,
        given: |_, _| Ok(()),
        with_line: false,
        heading: Heading::Debate,
    };
}

impl Key {
    /// What a key has unless it says otherwise: no note in the docs.
    pub const BASE: Key = Key {
        name: "",
        example: "",
        note: "",
        read: |_, _| Ok(()),
        fill: |_, _| false,
    };
}

impl Doc {
    /// No row in the docs' table (a key of the config file only).
    pub const NONE: Doc = Doc {
        shows: "",
        what: "",
        example: "",
    };
}

/// The option whose config key is `name`.
pub fn by_key(name: &str) -> Option<&'static OptionDef> {
    ALL.into_iter()
        .find(|def| def.key.as_ref().is_some_and(|k| k.name == name))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::ffi::OsString;

    use super::*;
    use crate::model::options::{Given, Options};

    /// A value each type accepts, as the command line would hand it over.
    fn sample(ty: Ty) -> &'static str {
        match ty {
            Ty::Text | Ty::Path => "src/",
            Ty::U8 | Ty::U32 | Ty::U64 => "2",
            Ty::F64 => "0.5",
            // A mode, the one fallback or a protocol: whichever the check takes.
            Ty::Checked(check) => ["philosopher", "host", "council"]
                .into_iter()
                .find(|v| check(v).is_ok())
                .expect("a sample the check accepts"),
        }
    }

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut flags = BTreeSet::new();
        let mut keys = BTreeSet::new();
        for def in ALL {
            if let Some(flag) = &def.flag {
                assert!(flags.insert(flag.long), "--{} twice", flag.long);
                assert!(
                    flag.long
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c == '-'),
                    "--{}",
                    flag.long
                );
                assert!(flag.help.ends_with('.'), "--{}: {}", flag.long, flag.help);
                if let Some(negation) = &flag.negation {
                    assert_eq!(negation.long, format!("no-{}", flag.long));
                    assert!(flags.insert(negation.long), "--{} twice", negation.long);
                }
                assert!(!def.doc.what.is_empty(), "--{} has no docs", flag.long);
            }
            if let Some(key) = &def.key {
                assert!(keys.insert(key.name), "key {} twice", key.name);
                assert!(
                    key.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{}",
                    key.name
                );
            }
            assert!(def.flag.is_some() || def.key.is_some());
        }
    }

    #[test]
    fn every_flag_stores_what_it_is_given() {
        for def in ALL {
            let Some(flag) = &def.flag else { continue };
            let given = match flag.takes {
                Takes::Switch => Given::On,
                Takes::One(v) | Takes::OneOrNone(v) | Takes::Each(v) => {
                    Given::Values(vec![OsString::from(sample(v.ty))])
                }
                Takes::Two { ty, .. } => Given::Values(vec![sample(ty).into(), "b".into()]),
            };
            let mut options = Options::default();
            (flag.given)(&mut options, given).unwrap_or_else(|e| panic!("--{}: {e}", flag.long));
            assert_ne!(
                options,
                Options::default(),
                "--{} stored nothing",
                flag.long
            );
            if flag.negation.is_some() {
                let mut off = Options::default();
                (flag.given)(&mut off, Given::Off).unwrap();
                assert_ne!(off, options, "--no-{} is --{}", flag.long, flag.long);
            }
        }
    }

    #[test]
    fn every_key_reads_its_example_and_fills_an_empty_command_line() {
        for def in ALL {
            let Some(key) = &def.key else { continue };
            let text = format!("{} = {}\n", key.name, key.example);
            let config = crate::model::config::Config::parse(&text, "config.toml".as_ref())
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_ne!(config.defaults, Options::default(), "{text} read nothing");
            let mut options = Options::default();
            assert!((key.fill)(&mut options, &config.defaults), "{text}");
            assert_ne!(options, Options::default(), "{text} filled nothing");
        }
    }

    #[test]
    fn a_bad_mode_names_the_modes() {
        let Some(Flag {
            takes:
                Takes::One(Value {
                    ty: Ty::Checked(check),
                    ..
                }),
            ..
        }) = &MODE.flag
        else {
            panic!("--mode is checked");
        };
        assert_eq!(
            check("loud").unwrap_err(),
            "unknown mode 'loud'; choose one of: analyst, philosopher, devils-advocate, stakeholders"
        );
        assert!(check("devils-advocate").is_ok());
    }
}
