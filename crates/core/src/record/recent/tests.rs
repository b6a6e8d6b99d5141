use super::journal::HEADER;
use super::*;
use crate::record::schema::Meta;
use crate::record::store::{Base, NewCommit};
use proptest::prelude::*;
use std::fs::OpenOptions;
use std::io::Write;

fn record() -> (tempfile::TempDir, Record) {
    let dir = tempfile::tempdir().unwrap();
    let record = Record::open_or_init(&dir.path().join("record")).unwrap();
    create(record.path()).unwrap();
    (dir, record)
}

/// Stages `new`, notes it and moves its line, as the line transaction does.
fn noted(record: &Record, new: &NewCommit) -> Result<ObjectId, RecordError> {
    let staged = record.stage(new)?;
    let _note = note(
        record.path(),
        &new.meta.debate,
        &new.meta.line,
        staged.id(),
        new.time,
    )?;
    record.publish(&staged)
}

fn new_commit(record: &Record, debate: &str, line: &str, time: i64) -> NewCommit {
    NewCommit {
        author: "Advocate".into(),
        subject: format!("at {time}"),
        meta: Meta {
            debate: debate.into(),
            line: line.into(),
            phase: "advocate".into(),
            ..Meta::default()
        },
        files: vec![("state.md".into(), format!("{time}").into_bytes())],
        remove: Vec::new(),
        time,
        base: Base::Tip(record.tip(debate, line).unwrap()),
    }
}

/// Commits on `debate@line` at `time`, as the hook does (noted in the journal).
fn commit(record: &Record, debate: &str, line: &str, time: i64) -> ObjectId {
    noted(record, &new_commit(record, debate, line, time)).unwrap()
}

fn newest(record: &Record) -> Vec<(String, i64)> {
    Newest::new(record, 1)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn journal_text(record: &Record) -> String {
    std::fs::read_to_string(path(record.path())).unwrap()
}

fn append_raw(record: &Record, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .append(true)
        .open(path(record.path()))
        .unwrap();
    file.write_all(bytes).unwrap();
}

#[test]
fn the_journal_orders_debates_by_their_newest_commit_without_a_pass_over_the_refs() {
    let (_dir, record) = record();
    commit(&record, "a", "main", 100);
    commit(&record, "b", "main", 200);
    commit(&record, "c", "main", 150);
    commit(&record, "a", "cost", 300);
    commit(&record, "c", "main", 120);
    let newest_first = vec![("a".into(), 300), ("b".into(), 200), ("c".into(), 120)];
    assert_eq!(scan(&record).unwrap(), newest_first);
    let mut reader = Newest::new(&record, 1).unwrap();
    assert!(reader.answers_from_journal());
    let first = reader.next().unwrap().unwrap();
    assert_eq!(first, ("a".to_owned(), 300));
    // The journal named the first debate and one claim past it: nothing else was checked.
    assert!(reader.pending.len() <= 1, "{:?}", reader.pending);
    drop(reader);
    assert_eq!(newest(&record), newest_first);
    // `c` claimed 150 and its refs said 120: corrected in the journal as it was met.
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });
    assert!(journal_text(&record).ends_with("\n= 120 c\n"));
}

/// The first screen reads the compacted part from its end, as far as it shows: at 5,000
/// debates, parsing every line would cost `anvil log` more than the debates it draws.
#[test]
fn a_reader_of_the_newest_reads_the_compacted_part_from_its_end_only() {
    let (_dir, record) = record();
    for (i, debate) in ["d1", "d2", "d3", "d4"].into_iter().enumerate() {
        commit(&record, debate, "main", 10 * i as i64);
    }
    // Refs older than RACY: the pass notes the stamp, so readers trust it.
    let three_seconds_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3);
    File::open(record.path().join("refs/anvil"))
        .and_then(|folder| folder.set_modified(three_seconds_ago))
        .unwrap();
    rebuild(&record).unwrap();
    assert_eq!(
        Journal::read(record.path()).unwrap().covers,
        Some(Stamp::of(record.path()).refs)
    );
    // The oldest line damaged: a reader of the newest two never reaches it.
    let text = journal_text(&record);
    assert!(text.contains("\n= 0 d1\n"), "{text}");
    std::fs::write(
        path(record.path()),
        text.replace("\n= 0 d1\n", "\n= 0 d#\n"),
    )
    .unwrap();
    let mut reader = Newest::new(&record, 1).unwrap();
    assert_eq!(reader.next().unwrap().unwrap(), ("d4".to_owned(), 30));
    assert_eq!(reader.next().unwrap().unwrap(), ("d3".to_owned(), 20));
    assert!(reader.answers_from_journal());
    // Read to the end, it is found damaged, and the rest comes from the refs.
    assert!(matches!(check(&record).unwrap(), Health::Damaged(_)));
    let rest: Vec<_> = reader.map(Result::unwrap).collect();
    assert_eq!(rest, [("d2".to_owned(), 10), ("d1".to_owned(), 0)]);
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 4 });
}

#[test]
fn a_missing_or_damaged_journal_is_rebuilt_from_the_refs() {
    let (_dir, record) = record();
    for (i, debate) in ["d1", "d2", "d3"].into_iter().enumerate() {
        commit(&record, debate, "main", 10 * i as i64);
    }
    let expected = scan(&record).unwrap();
    std::fs::remove_file(path(record.path())).unwrap();
    assert_eq!(check(&record).unwrap(), Health::Missing);
    // A note with no journal leaves it missing: the next reader builds it whole.
    commit(&record, "d1", "main", 1);
    assert_eq!(check(&record).unwrap(), Health::Missing);
    let expected = {
        let mut e = expected;
        e.retain(|(d, _)| d != "d1");
        e.push(("d1".to_owned(), 1));
        e
    };
    let reader = Newest::new(&record, 1).unwrap();
    assert!(!reader.answers_from_journal());
    assert_eq!(reader.map(Result::unwrap).collect::<Vec<_>>(), expected);
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });

    for damage in [&b"garbage"[..], b"", &HEADER.as_bytes()[..20]] {
        std::fs::write(path(record.path()), damage).unwrap();
        assert!(
            matches!(check(&record).unwrap(), Health::Damaged(_)),
            "{damage:?}"
        );
        assert!(!Newest::new(&record, 1).unwrap().answers_from_journal());
        assert_eq!(newest(&record), expected);
        assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
    }
    // A damaged line among the notes.
    append_raw(&record, b"\n+ 12 d1 main not-a-commit\n");
    assert!(matches!(check(&record).unwrap(), Health::Damaged(_)));
    assert_eq!(newest(&record), expected);
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });
}

/// An index an earlier build wrote (before the journal) is said to be older, not damaged,
/// and the first reader rewrites it as a journal; a note taken meanwhile loses nothing.
#[test]
fn an_index_of_the_earlier_form_is_rewritten_by_the_first_reader() {
    let (_dir, record) = record();
    for (i, debate) in ["d1", "d2"].into_iter().enumerate() {
        commit(&record, debate, "main", 10 * i as i64);
    }
    let older = "anvil-recent 1 0000000000000040 a1b2\n= 0 d1\n= 10 d2\n";
    std::fs::write(path(record.path()), older).unwrap();
    assert_eq!(check(&record).unwrap(), Health::Older);
    commit(&record, "d1", "main", 20);
    assert_eq!(
        newest(&record),
        vec![("d1".to_owned(), 20), ("d2".to_owned(), 10)]
    );
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });
}

/// A writer that died halfway through its note (or is writing it now) leaves a last line
/// without its newline: readers leave it out, and the next note is never glued to it.
#[test]
fn a_torn_last_line_is_left_out_and_the_next_note_stands_on_its_own() {
    let (_dir, record) = record();
    commit(&record, "d1", "main", 10);
    commit(&record, "d2", "main", 20);
    let expected = scan(&record).unwrap();
    // Torn in every place of a note that claims d1 at 90.
    let torn = format!("\n+ 90 d1 main {}", "7".repeat(40));
    for cut in 1..torn.len() {
        let before = std::fs::read(path(record.path())).unwrap();
        append_raw(&record, &torn.as_bytes()[..cut]);
        assert_eq!(
            check(&record).unwrap(),
            Health::Fine { debates: 2 },
            "cut at {cut}"
        );
        let reader = Newest::new(&record, 1).unwrap();
        assert!(reader.answers_from_journal(), "cut at {cut}");
        assert_eq!(reader.map(Result::unwrap).collect::<Vec<_>>(), expected);
        std::fs::write(path(record.path()), before).unwrap();
    }

    // A dead writer's torn line, then a note: the note reads whole; the torn line, now
    // between two lines, is damage, and readers rewrite the journal from the refs.
    append_raw(&record, b"\n+ 30 d1 ma");
    commit(&record, "d2", "main", 40);
    let text = journal_text(&record);
    assert!(text.contains("\n+ 30 d1 ma\n+ 40 d2 main "), "{text:?}");
    assert!(matches!(check(&record).unwrap(), Health::Damaged(_)));
    let expected = scan(&record).unwrap();
    assert_eq!(expected[0], ("d2".to_owned(), 40));
    assert_eq!(newest(&record), expected);
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });
    assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
}

#[test]
fn refs_moved_behind_anvils_back_are_seen_and_the_journal_repaired() {
    let (_dir, record) = record();
    commit(&record, "old", "main", 100);
    let old_tip = commit(&record, "old", "main", 110);
    commit(&record, "mid", "main", 200);
    // A line of a debate the journal knows, moved ahead by a writer that noted nothing:
    // the reader checks the claims of the screen it shows (110 is one of them), sees the
    // refs say newer, and takes the full pass before showing anything.
    let before = journal_text(&record);
    let moved = commit(&record, "old", "main", 300);
    std::fs::write(path(record.path()), &before).unwrap();
    assert!(matches!(
        check(&record).unwrap(),
        Health::Outdated { ref behind, .. } if behind == &["old".to_owned()]
    ));
    let expected = vec![("old".to_owned(), 300), ("mid".to_owned(), 200)];
    let screen: Vec<_> = Newest::new(&record, 3)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(screen, expected);
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });

    // A new debate written by git: its folder changes the stamp of the refs, and the
    // reader does not know it.
    let before = journal_text(&record);
    commit(&record, "fetched", "main", 250);
    std::fs::write(path(record.path()), &before).unwrap();
    assert!(!Newest::new(&record, 1).unwrap().answers_from_journal());
    assert_eq!(
        newest(&record),
        vec![
            ("old".to_owned(), 300),
            ("fetched".to_owned(), 250),
            ("mid".to_owned(), 200)
        ]
    );
    assert!(Newest::new(&record, 1).unwrap().answers_from_journal());

    // A line moved back by hand (`git update-ref`): corrected where it is met.
    let ref_file = record.path().join("refs/anvil/old/main");
    assert_eq!(
        std::fs::read_to_string(&ref_file).unwrap().trim(),
        moved.to_string()
    );
    std::fs::write(&ref_file, format!("{old_tip}\n")).unwrap();
    assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
    assert_eq!(
        newest(&record),
        vec![
            ("fetched".to_owned(), 250),
            ("mid".to_owned(), 200),
            ("old".to_owned(), 110)
        ]
    );
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 3 });
}

/// Once the refs have settled, a reader that listed the debates under them notes the
/// stamp it found them at: the next one lists nothing.
#[test]
fn a_stamp_of_the_refs_spares_the_next_reader_the_listing() {
    let (_dir, record) = record();
    commit(&record, "a", "main", 10);
    let stamp = Stamp::of(record.path());
    let journal = Journal::read(record.path()).unwrap();
    assert_ne!(journal.covers.as_ref(), Some(&stamp.refs), "a new folder");
    assert!(journal.covers_refs(&record, &stamp));
    let settled = Stamp {
        refs_settled: true,
        ..stamp.clone()
    };
    assert!(journal.covers_refs(&record, &settled));
    assert_eq!(
        Journal::read(record.path()).unwrap().covers,
        Some(stamp.refs.clone())
    );
    // A debate the journal does not know, at the same stamp it covers, is not seen; at
    // any other stamp it is.
    let mut forgetful = Journal::read(record.path()).unwrap();
    forgetful.text.clear();
    forgetful.base_end = 0;
    forgetful.over.clear();
    forgetful.listed = None;
    assert!(forgetful.covers_refs(&record, &stamp));
    forgetful.covers = None;
    assert!(!forgetful.covers_refs(&record, &stamp));
}

/// While the stamp of the refs is too young to note, a reader notes the names it checked:
/// the next one compares the listing with them rather than every name with the whole
/// journal, and notes them again. A debate git made meanwhile, or a `= -` line, sends it back to the claims; once
/// the refs have settled, the stamp is noted.
#[test]
fn a_young_stamp_notes_the_names_a_reader_checked() {
    let (_dir, record) = record();
    commit(&record, "a", "main", 10);
    let young = |record: &Record| Stamp {
        refs_settled: false,
        ..Stamp::of(record.path())
    };
    let stamp = young(&record);
    assert!(
        Journal::read(record.path())
            .unwrap()
            .covers_refs(&record, &stamp)
    );
    let journal = Journal::read(record.path()).unwrap();
    assert_ne!(
        journal.covers.as_ref(),
        Some(&stamp.refs),
        "too young to note"
    );
    assert!(journal.listed.is_some());

    // The names are the ones counted: no claim is looked at; the line is noted again, a
    // write the file system times after the refs, which settles them for the next reader.
    let forget = |mut journal: Journal| {
        journal.text.clear();
        journal.base_end = 0;
        journal.over.clear();
        journal
    };
    let before = journal_text(&record);
    let counted = before.trim_end().rsplit('\n').next().unwrap().to_owned();
    assert!(counted.starts_with("? 1 "), "{before}");
    assert!(forget(Journal::read(record.path()).unwrap()).covers_refs(&record, &stamp));
    assert_eq!(journal_text(&record), format!("{before}\n{counted}\n"));

    // A debate git made: its name was not counted, and the journal does not know it.
    commit(&record, "fetched", "main", 20);
    std::fs::write(path(record.path()), &before).unwrap();
    let stamp = young(&record);
    assert!(
        !Journal::read(record.path())
            .unwrap()
            .covers_refs(&record, &stamp)
    );
    assert!(!Newest::new(&record, 1).unwrap().answers_from_journal());
    assert_eq!(
        newest(&record),
        vec![("fetched".to_owned(), 20), ("a".to_owned(), 10)]
    );

    // A debate the journal learnt is gone: the names are checked against the claims again.
    let stamp = young(&record);
    let mut rebuilt = Journal::read(record.path()).unwrap();
    assert_eq!(
        rebuilt.covers.as_ref(),
        Some(&stamp.refs),
        "the full pass noted it"
    );
    rebuilt.covers = None;
    assert!(rebuilt.covers_refs(&record, &stamp));
    assert!(Journal::read(record.path()).unwrap().listed.is_some());
    append_raw(&record, b"\n= - a\n");
    assert!(Journal::read(record.path()).unwrap().listed.is_none());
    assert!(
        Journal::read(record.path())
            .unwrap()
            .covers_refs(&record, &stamp)
    );

    // Settled: the stamp is noted, the names checked as counted.
    let settled = Stamp {
        refs_settled: true,
        ..stamp.clone()
    };
    assert!(forget(Journal::read(record.path()).unwrap()).covers_refs(&record, &settled));
    assert_eq!(
        Journal::read(record.path()).unwrap().covers,
        Some(stamp.refs)
    );
}

#[cfg(unix)]
#[test]
fn a_journal_that_cannot_take_a_note_is_removed_or_the_move_refused() {
    let (dir, record) = record();
    commit(&record, "a", "main", 10);
    // Cannot be opened (it leads nowhere), but can be removed: the commit goes ahead.
    let file = path(record.path());
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere/at-all"), &file).unwrap();
    commit(&record, "b", "main", 20);
    assert!(std::fs::symlink_metadata(&file).is_err(), "removed");
    assert_eq!(check(&record).unwrap(), Health::Missing);
    assert_eq!(
        newest(&record),
        [("b".to_owned(), 20), ("a".to_owned(), 10)]
    );
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 2 });
    // Neither written nor removed: the ref does not move, and the error names the file.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir_all(file.join("in-the-way")).unwrap();
    let tip = record.tip("a", "main").unwrap();
    let refused = noted(&record, &new_commit(&record, "a", "main", 30)).unwrap_err();
    assert!(refused.to_string().contains(FILE), "{refused}");
    assert_eq!(record.tip("a", "main").unwrap(), tip);
}

#[test]
fn a_reader_compacts_the_notes_into_one_claim_per_debate() {
    let (_dir, record) = record();
    let tip = ObjectId::null(gix::hash::Kind::Sha1);
    for i in 0..=COMPACT_AT as i64 {
        drop(note(record.path(), &format!("d{}", i % 7), "main", tip, i).unwrap());
    }
    for d in 0..7 {
        commit(&record, &format!("d{d}"), "main", 5000 + d);
    }
    let before = journal_text(&record);
    let expected = scan(&record).unwrap();
    assert_eq!(newest(&record), expected);
    let after = journal_text(&record);
    assert!(after.len() < before.len() / 10, "{after}");
    assert_eq!(Journal::read(record.path()).unwrap().notes, 0);
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 7 });
}

/// Writers noting as fast as they can while a reader compacts the journal again and
/// again, as soon as a few dozen notes pile up: every note lands in the file that is there
/// at the end, and no writer is starved (a reader that rewrote the journal whenever it could
/// kept a writer reopening it for good). (A rewrite from the refs
/// drops the notes of writers that let go without moving their ref, as these do; racing it
/// with writers that commit is the next test.)
#[test]
fn notes_appended_during_compactions_are_never_lost() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let (_dir, record) = record();
    let at = record.path().to_owned();
    let (writing, compactions) = (AtomicUsize::new(3), AtomicUsize::new(0));
    let tip = ObjectId::null(gix::hash::Kind::Sha1);
    let written: Vec<i64> = std::thread::scope(|scope| {
        let (writing, compactions) = (&writing, &compactions);
        let writers: Vec<_> = (0..3)
            .map(|w| {
                let at = at.clone();
                scope.spawn(move || {
                    // Until the journal was compacted under them a few times.
                    let mut i = 0;
                    while i < 100 || compactions.load(SeqCst) < 5 {
                        drop(note(&at, &format!("w{w}-{i}"), "main", tip, i).unwrap());
                        i += 1;
                    }
                    writing.fetch_sub(1, SeqCst);
                    i
                })
            })
            .collect();
        let at = at.clone();
        scope.spawn(move || {
            while writing.load(SeqCst) > 0 {
                if compact(&at, 64) {
                    compactions.fetch_add(1, SeqCst);
                }
            }
        });
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert!(compactions.into_inner() >= 5);
    let journal = Journal::read(&at).unwrap().claims().unwrap();
    for (w, &count) in written.iter().enumerate() {
        for i in 0..count {
            assert_eq!(journal.get(&format!("w{w}-{i}")), Some(&i), "w{w}-{i}");
        }
    }
}

#[test]
fn writers_racing_rewrites_of_the_journal_lose_no_debate() {
    let (_dir, record) = record();
    let path_of_record = record.path().to_owned();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let path = path_of_record.clone();
                scope.spawn(move || {
                    let record = Record::open(&path).unwrap();
                    for i in 0..40 {
                        commit(&record, &format!("w{w}-{}", i % 10), "main", 1000 + i);
                    }
                })
            })
            .collect();
        let path = path_of_record.clone();
        let stop = &stop;
        let rewriter = scope.spawn(move || {
            let record = Record::open(&path).unwrap();
            let mut rounds = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) || rounds < 3 {
                rebuild(&record).unwrap();
                let _ = compact(record.path(), 16);
                let _ = newest(&record);
                rounds += 1;
            }
        });
        for writer in writers {
            writer.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        rewriter.join().unwrap();
    });
    let record = Record::open(&path_of_record).unwrap();
    assert_eq!(newest(&record), scan(&record).unwrap());
    assert_eq!(check(&record).unwrap(), Health::Fine { debates: 40 });
    assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
}

#[derive(Debug, Clone)]
enum Op {
    /// A commit through anvil on debate `d{0}`, line `main` or `side`, at a time.
    Commit(u8, bool, i64),
    /// A new debate written by something other than anvil.
    Foreign(i64),
    /// A line of `d{0}` moved back one commit by hand.
    Back(u8),
    /// A note whose ref never moved (the writer died, or lost a race).
    DeadNote(u8, i64),
    /// A note cut short at that many bytes.
    Torn(usize),
    Delete,
    /// One byte of the file overwritten.
    Garble(usize),
    Compact,
    Rebuild,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..5, any::<bool>(), 0i64..40).prop_map(|(d, s, t)| Op::Commit(d, s, t)),
        1 => (0i64..40).prop_map(Op::Foreign),
        1 => (0u8..5).prop_map(Op::Back),
        1 => (0u8..5, 0i64..60).prop_map(|(d, t)| Op::DeadNote(d, t)),
        1 => (1usize..50).prop_map(Op::Torn),
        1 => Just(Op::Delete),
        1 => any::<usize>().prop_map(Op::Garble),
        1 => Just(Op::Compact),
        1 => Just(Op::Rebuild),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(24)))]

    /// Whatever anvil, git and damage did, the reader gives the order of the refs, and
    /// afterwards the journal agrees with them.
    #[test]
    fn readers_always_give_the_order_of_the_refs(ops in prop::collection::vec(op(), 1..24)) {
        let (_dir, record) = record();
        for (n, op) in ops.iter().enumerate() {
            let file = path(record.path());
            match op {
                Op::Commit(d, side, t) => {
                    commit(&record, &format!("d{d}"), if *side { "side" } else { "main" }, *t);
                }
                Op::Foreign(t) => {
                    let before = std::fs::read(&file).ok();
                    commit(&record, &format!("foreign-{n}"), "main", *t);
                    match before {
                        Some(bytes) => std::fs::write(&file, bytes).unwrap(),
                        None => crate::fsutil::remove_if_present(&file).unwrap(),
                    }
                }
                Op::Back(d) => {
                    let debate = format!("d{d}");
                    if let Some(tip) = record.tip(&debate, "main").unwrap() {
                        let mut buf = Vec::new();
                        let parent = record.find_commit(tip, &mut buf).unwrap().parents().next();
                        // Only back in time: a line moved to a newer commit behind
                        // anvil's back, in a folder that exists, is what the journal
                        // cannot see before it checks that debate (see the module's header).
                        let mut times = record.commit_times();
                        if let Some(parent) = parent
                            && times.of(parent).unwrap() <= times.of(tip).unwrap()
                        {
                            let ref_file = record.path().join(format!("refs/anvil/{debate}/main"));
                            std::fs::write(ref_file, format!("{parent}\n")).unwrap();
                        }
                    }
                }
                Op::DeadNote(d, t) => {
                    let tip = ObjectId::null(gix::hash::Kind::Sha1);
                    drop(note(record.path(), &format!("d{d}"), "main", tip, *t).unwrap());
                }
                Op::Torn(cut) => {
                    if file.exists() {
                        let torn = format!("\n+ 99 d0 main {}", "7".repeat(40));
                        append_raw(&record, &torn.as_bytes()[..(*cut).min(torn.len() - 1)]);
                    }
                }
                Op::Delete => crate::fsutil::remove_if_present(&file).unwrap(),
                Op::Garble(at) => {
                    if let Ok(mut bytes) = std::fs::read(&file) && !bytes.is_empty() {
                        let at = at % bytes.len();
                        bytes[at] = b'#';
                        std::fs::write(&file, bytes).unwrap();
                    }
                }
                Op::Compact => drop(compact(record.path(), 0)),
                Op::Rebuild => {
                    rebuild(&record).unwrap();
                }
            }
            let expected = scan(&record).unwrap();
            prop_assert_eq!(newest(&record), expected.clone(), "after {:?}", op);
            prop_assert_eq!(
                check(&record).unwrap(),
                Health::Fine { debates: expected.len() },
                "after reading, past {:?}", op
            );
        }
    }
}

/// A full pass notes the stamp it started at by the rule every reader follows: not while
/// the refs are young, where a change within the same tick could hide behind it.
#[test]
fn a_full_pass_notes_the_stamp_only_once_the_refs_have_settled() {
    let (_dir, record) = record();
    commit(&record, "a", "main", 10);
    assert!(
        !Stamp::of(record.path()).refs_settled,
        "a debate's folder made after its note"
    );
    assert_eq!(rebuild(&record).unwrap(), [("a".to_owned(), 10)]);
    assert_eq!(Journal::read(record.path()).unwrap().covers, None);
    // The next reader lists the debates and answers from the journal all the same.
    assert!(Newest::new(&record, 1).unwrap().answers_from_journal());
    assert_eq!(newest(&record), [("a".to_owned(), 10)]);
}
