use super::*;

#[test]
fn a_seats_reply_is_recorded_up_to_the_bound_with_the_cut_said() {
    assert_eq!(bounded("short"), "short");
    let line = "é".repeat(99) + "\n";
    let long = line.repeat(MAX_REPLY / line.len() + 50);
    let cut = bounded(&long);
    assert!(cut.len() <= MAX_REPLY + 120, "{}", cut.len());
    let (kept, said) = cut.rsplit_once("\n[… cut by anvil: ").unwrap();
    assert!(kept.ends_with('\n') && long.starts_with(kept));
    assert_eq!(
        said,
        format!(
            "the seat's reply was {} bytes; the first {} are kept]\n",
            long.len(),
            kept.len()
        )
    );
}
