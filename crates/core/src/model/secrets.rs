//! Credentials that must not reach a record meant to be pushed: API keys, access tokens and
//! private key blocks, recognised by the shapes their issuers give them (a fixed prefix and a
//! length, or PEM armour). A phase, a steering text, an answer or a context file is recorded
//! with each one replaced by `[redacted: KIND]`; `anvil push` refuses to send a commit that
//! still holds one (recorded before this existed, or pulled).
//!
//! A scan of a few prefixes, not a regex engine: the Stop hook runs it on every phase, and
//! compiling patterns would cost it more than the scan.

use std::borrow::Cow;

/// Token shapes: `(prefix, the fewest characters the whole token has, what it is)`. A token is
/// a run of `[A-Za-z0-9_-]` that starts at a word boundary.
const TOKENS: &[(&str, usize, &str)] = &[
    ("sk-ant-", 40, "Anthropic API key"),
    ("sk-proj-", 40, "OpenAI API key"),
    ("sk-", 40, "API key"),
    ("ghp_", 40, "GitHub token"),
    ("gho_", 40, "GitHub token"),
    ("ghu_", 40, "GitHub token"),
    ("ghs_", 40, "GitHub token"),
    ("ghr_", 40, "GitHub token"),
    ("github_pat_", 40, "GitHub token"),
    ("glpat-", 26, "GitLab token"),
    ("xoxb-", 24, "Slack token"),
    ("xoxp-", 24, "Slack token"),
    ("xoxa-", 24, "Slack token"),
    ("xoxr-", 24, "Slack token"),
    ("npm_", 40, "npm token"),
    ("AIza", 39, "Google API key"),
];

/// One credential found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: &'static str,
    /// Byte range in the text.
    pub range: std::ops::Range<usize>,
}

fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Every credential in `text`, in order, not overlapping.
pub fn find(text: &str) -> Vec<Found> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'-'
            && text[i..].starts_with("-----BEGIN ")
            && let Some(found) = private_key(text, i)
        {
            i = found.range.end;
            out.push(found);
            continue;
        }
        if !token_char(bytes[i]) || (i > 0 && token_char(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let end = bytes[i..]
            .iter()
            .position(|&b| !token_char(b))
            .map_or(bytes.len(), |n| i + n);
        let token = &text[i..end];
        if let Some(kind) = token_kind(token) {
            out.push(Found {
                kind,
                range: i..end,
            });
            i = end;
            continue;
        }
        if let Some(found) = jwt(text, i, end) {
            i = found.range.end;
            out.push(found);
            continue;
        }
        if let Some(found) = assigned(text, token, end) {
            i = found.range.end;
            out.push(found);
            continue;
        }
        i = end;
    }
    out
}

/// What `token` (a whole run of token characters) is, if it looks like a credential.
fn token_kind(token: &str) -> Option<&'static str> {
    for &(prefix, least, kind) in TOKENS {
        if token.starts_with(prefix) && token.len() >= least {
            // A real key mixes letters and digits; `sk-` followed by a long word is prose.
            let rest = &token[prefix.len()..];
            let digits = rest.bytes().filter(u8::is_ascii_digit).count();
            let letters = rest.bytes().filter(u8::is_ascii_alphabetic).count();
            if digits >= 2 && letters >= 2 {
                return Some(kind);
            }
        }
    }
    // AWS access key ids: AKIA or ASIA and 16 upper-case letters or digits.
    let aws = token.len() == 20
        && (token.starts_with("AKIA") || token.starts_with("ASIA"))
        && token[4..]
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    aws.then_some("AWS access key")
}

/// A JSON Web Token starting at `start` (its first part ends at `end`): three base64url parts
/// joined by dots, the first two JSON objects (`eyJ`).
fn jwt(text: &str, start: usize, end: usize) -> Option<Found> {
    let bytes = text.as_bytes();
    if !text[start..end].starts_with("eyJ") || end - start < 10 {
        return None;
    }
    let mut at = end;
    for part in 0..2 {
        if bytes.get(at) != Some(&b'.') {
            return None;
        }
        let from = at + 1;
        let to = bytes[from..]
            .iter()
            .position(|&b| !token_char(b))
            .map_or(bytes.len(), |n| from + n);
        let least = if part == 0 { 10 } else { 16 };
        if to - from < least || (part == 0 && !text[from..].starts_with("eyJ")) {
            return None;
        }
        at = to;
    }
    Some(Found {
        kind: "JSON web token",
        range: start..at,
    })
}

/// Names whose value is a secret when they are assigned one (`API_KEY=…`, `password: …`).
fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["_KEY", "_TOKEN", "_SECRET", "PASSWORD", "PASSWD", "_PWD"]
        .iter()
        .any(|suffix| upper.ends_with(suffix))
        || matches!(upper.as_str(), "SECRET" | "TOKEN" | "APIKEY" | "API_KEY")
}

/// The value assigned to a secret's name (`token` ends at `end`): after `=` or `:` (spaces and
/// one quote allowed), 8 or more characters up to whitespace or the closing quote. Only the value
/// is redacted; the name stays, so a reader knows what was there.
fn assigned(text: &str, token: &str, end: usize) -> Option<Found> {
    if !secret_name(token) {
        return None;
    }
    let rest = &text[end..];
    let after_sep = rest.trim_start_matches([' ', '\t', '"', '\'']);
    let sep = after_sep
        .chars()
        .next()
        .filter(|c| *c == '=' || *c == ':')?;
    let value_part = &after_sep[sep.len_utf8()..];
    let value_trimmed = value_part.trim_start_matches([' ', '\t']);
    let quote = value_trimmed
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'');
    let value = match quote {
        Some(_) => &value_trimmed[1..],
        None => value_trimmed,
    };
    let len = value
        .char_indices()
        .find(|&(_, c)| {
            c.is_whitespace()
                || Some(c) == quote
                || (quote.is_none() && matches!(c, ',' | ';' | ')' | '}' | ']'))
        })
        .map_or(value.len(), |(n, _)| n);
    let value_start = text.len() - value.len();
    let secret = &value[..len];
    // Placeholders are not secrets: `PASSWORD=changeme` is, `API_KEY=${API_KEY}` or `<token>`
    // are not.
    if secret.chars().count() < 8
        || secret.starts_with(['$', '<', '{', '%', '['])
        || secret
            .chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
    {
        return None;
    }
    Some(Found {
        kind: "secret value",
        range: value_start..value_start + len,
    })
}

/// A PEM private key block opening at `start`: to the end of its `-----END … PRIVATE KEY-----`
/// line, or of the text when it is cut.
fn private_key(text: &str, start: usize) -> Option<Found> {
    let header_end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    let header = &text[start..header_end];
    if !header.contains("PRIVATE KEY-----") {
        return None;
    }
    let end = match text[header_end..].find("-----END ") {
        Some(n) => {
            let at = header_end + n;
            text[at..].find('\n').map_or(text.len(), |m| at + m)
        }
        None => text.len(),
    };
    Some(Found {
        kind: "private key",
        range: start..end,
    })
}

/// `text` with every credential replaced by `[redacted: KIND]`, and what was replaced.
pub fn redact(text: &str) -> (Cow<'_, str>, Vec<&'static str>) {
    let found = find(text);
    if found.is_empty() {
        return (Cow::Borrowed(text), Vec::new());
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in &found {
        out.push_str(&text[at..f.range.start]);
        out.push_str(&format!("[redacted: {}]", f.kind));
        at = f.range.end;
    }
    out.push_str(&text[at..]);
    (Cow::Owned(out), found.iter().map(|f| f.kind).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const GITHUB: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    const ANTHROPIC: &str = "sk-ant-api03-Xy7Qz9Lm2Np4Rs6Tu8Vw0Ab1Cd3Ef5Gh7Ij9Kl";

    #[test]
    fn credentials_are_found_by_their_shape() {
        let text = format!(
            "use {GITHUB} and {ANTHROPIC}; aws AKIAIOSFODNN7EXAMPLE.\n\
             -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter"
        );
        let kinds: Vec<&str> = find(&text).iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                "GitHub token",
                "Anthropic API key",
                "AWS access key",
                "private key"
            ]
        );
        let (redacted, _) = redact(&text);
        for secret in [
            GITHUB,
            ANTHROPIC,
            "AKIAIOSFODNN7EXAMPLE",
            "b3BlbnNzaC1rZXktdjEAAAA",
        ] {
            assert!(!redacted.contains(secret), "{redacted}");
        }
        assert!(redacted.contains("[redacted: GitHub token]"));
        assert!(
            redacted.ends_with("[redacted: private key]\nafter"),
            "{redacted}"
        );
    }

    #[test]
    fn web_tokens_and_values_of_secret_names_are_found() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        let text = format!(
            "auth {jwt} then\nAPI_KEY=abcd1234efgh and \"db_password\": \"hunter2hunter2\", GITHUB_TOKEN: 'tok-9f8e7d6c'"
        );
        let found = find(&text);
        let kinds: Vec<&str> = found.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                "JSON web token",
                "secret value",
                "secret value",
                "secret value"
            ]
        );
        let (redacted, _) = redact(&text);
        assert!(
            redacted.contains("API_KEY=[redacted: secret value] and"),
            "the name stays: {redacted}"
        );
        assert!(
            redacted.contains("\"db_password\": \"[redacted: secret value]\""),
            "{redacted}"
        );
        for secret in [jwt, "abcd1234efgh", "hunter2hunter2", "tok-9f8e7d6c"] {
            assert!(!redacted.contains(secret), "{redacted}");
        }
        assert_eq!(
            find(&redacted),
            [],
            "a redacted text is found clean: {redacted}"
        );
    }

    #[test]
    fn prose_and_near_misses_are_left_alone() {
        for text in [
            "Should we adopt sk-learn or ghp_ tokens at all?",
            "a task-force-of-many-words-that-is-not-a-key-at-all-really",
            "sk-thisisjustaverylongwordwithoutanydigitsinsideitatall",
            "xghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 is glued to a letter",
            "AKIAshort and -----BEGIN PUBLIC KEY-----",
            "commit 3f2a9c1e0b7d and sha256:9f86d081884c7d659a2feaa0c55ad015",
            "the password matters; PASSWORD=short; API_KEY=${API_KEY}; token: <your token>",
            "SECRET_KEY=******** and eyJ alone",
        ] {
            assert_eq!(find(text), [], "{text}");
            assert!(matches!(redact(text).0, Cow::Borrowed(_)));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(1024)))]

        /// Any text: no panic, ranges on char boundaries and in order, and a redacted text
        /// holds no credential any more.
        #[test]
        fn redaction_leaves_nothing_to_find(text in "\\PC{0,200}", key in prop::sample::select(vec![GITHUB, ANTHROPIC, "AKIAIOSFODNN7EXAMPLE"])) {
            let text = format!("{text} {key} {text}");
            let found = find(&text);
            prop_assert!(!found.is_empty());
            for f in &found {
                prop_assert!(text.is_char_boundary(f.range.start) && text.is_char_boundary(f.range.end));
            }
            let (redacted, kinds) = redact(&text);
            prop_assert_eq!(kinds.len(), found.len());
            prop_assert!(find(&redacted).is_empty(), "{}", redacted);
        }
    }
}
