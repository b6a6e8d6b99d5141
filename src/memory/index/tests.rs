use super::*;

#[test]
fn a_query_is_read_as_quoted_terms_and_bounded() {
    let t = |text: &str| terms(text);
    assert_eq!(t("billing"), Ok(vec!["\"billing\"".to_owned()]));
    assert_eq!(
        t(r#"  "cache invalidation" is hard  "#),
        Ok(vec![
            "\"cache invalidation\"".to_owned(),
            "\"is\"".to_owned(),
            "\"hard\"".to_owned()
        ])
    );
    // FTS5 syntax is words: no operator, column filter or prefix survives as syntax.
    assert_eq!(
        t("a OR b NOT c* text:d ^e NEAR(f g)"),
        Ok(
            ["a", "OR", "b", "NOT", "c*", "text:d", "^e", "NEAR(f", "g)"]
                .map(|w| format!("\"{w}\""))
                .to_vec()
        )
    );
    // An unclosed quote runs to the end; repeated terms are kept once.
    assert_eq!(
        t(r#"x "y z"#),
        Ok(vec!["\"x\"".to_owned(), "\"y z\"".to_owned()])
    );
    assert_eq!(
        t("x x X y"),
        Ok(vec!["\"x\"".to_owned(), "\"y\"".to_owned()])
    );
    for nothing in ["", "   ", "\"", "\"\"", "- : * ( )", "\" \""] {
        assert_eq!(t(nothing), Err(QueryError::NoWords), "{nothing:?}");
    }
    let many = (0..65)
        .map(|n| format!("w{n}"))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(t(&many), Err(QueryError::TooManyWords { words: 65 }));
    let phrase = format!("\"{}\"", many);
    assert_eq!(t(&phrase), Err(QueryError::TooManyWords { words: 65 }));
    let long = "a".repeat(MAX_QUERY_BYTES + 1);
    assert_eq!(
        t(&long),
        Err(QueryError::TooLong {
            bytes: MAX_QUERY_BYTES + 1
        })
    );
    assert!(t(&"a".repeat(MAX_QUERY_BYTES)).is_ok());
}
