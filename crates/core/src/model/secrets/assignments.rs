//! The family parsed by code rather than a pattern: a value assigned to a credential's name
//! (`clientSecret: …`, `DB_PASSWORD=…`, `--token=…`), told from a name that only looks like one
//! (`PRIMARY_KEY: customer_id_column`) and from a value that is no credential
//! (`password: Optional[str]`, a placeholder, an identifier). The name may be a label, as
//! markdown writes one (`**API key:** …`, `| DB_PASSWORD | … |`), or an XML element
//! (`<password>…</password>`).

use super::Found;

/// Words of which a credential's name holds one (the keywords of [`assignments`]): `pass`
/// stands for `password`, `passwd`, `passphrase` and `DB_PASS`, `pw` for `pwd` and `db_pw`.
pub(super) const NAME_WORDS: &[&str] = &[
    "pass",
    "pw",
    "secret",
    "token",
    "credential",
    "key",
    "_auth",
];

/// The words that make a name a credential's when they end it (`DB_PASSWORD`, `clientSecret`,
/// `_authToken`, `csrftoken`).
const SECRET_ENDINGS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "credential",
    "credentials",
];

/// The words before `key` that make it a credential's name (`API_KEY`, `secretKey`,
/// `AccountKey`, `aws_secret_access_key`, `private_key`), where other keys are not
/// (`PRIMARY_KEY`, `PARTITION_KEY`, `sort_key`, `cache_key`, `public_key`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "signing",
    "encryption",
    "master",
    "client",
    "account",
    "app",
    "application",
    "service",
    "shared",
    "subscription",
    "session",
    "webhook",
    "hmac",
    "jwt",
    "license",
    "admin",
    "consumer",
    "storage",
    "deploy",
    "cipher",
];

/// Words before `token` that make it something other than a credential (pagination).
const NOT_CREDENTIAL_TOKENS: &[&str] = &["page", "next", "continuation", "cursor", "sync"];

/// Words before `pass` that make it something other than a password (a compiler's or a
/// renderer's pass, a ticket).
const NOT_CREDENTIAL_PASSES: &[&str] = &[
    "render", "shadow", "first", "second", "third", "final", "multi", "single", "one", "two", "by",
    "sur", "com", "over", "under", "boarding", "bus", "day", "season", "hall", "free",
];

pub(super) fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Every value assigned to a credential's name in `text`: `NAME=value`, `NAME: value`,
/// `"NAME": "value"`, `NAME := "value"`, `NAME => 'value'`, `--name=value`. Only the value is
/// found; the name stays, so a reader knows what was there.
pub(super) fn assignments(text: &str, lower: &str, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    let mut seen: Vec<usize> = Vec::new();
    for word in NAME_WORDS {
        for (at, _) in lower.match_indices(word) {
            let start = bytes[..at]
                .iter()
                .rposition(|&b| !name_byte(b))
                .map_or(0, |i| i + 1);
            if seen.contains(&start) {
                continue;
            }
            seen.push(start);
            let mut end = bytes[at..]
                .iter()
                .position(|&b| !name_byte(b))
                .map_or(bytes.len(), |n| at + n);
            while end > start && matches!(bytes[end - 1], b'.' | b'-') {
                end -= 1;
            }
            let name = &text[start..end];
            let start = if secret_name(name) {
                start
            } else {
                match label_start(text, start, name) {
                    Some(label) => label,
                    None => continue,
                }
            };
            if inside_placeholder(text, start) {
                continue;
            }
            let found = match element_value(text, start, end) {
                Some(found) => found,
                None => assigned_value(text, start, end),
            };
            if let Some(range) = found {
                out.push(Found {
                    kind: "secret value",
                    range,
                });
            }
        }
    }
}

/// Where the label begins when `name` (at `start`) is the last word of a label of two that
/// names a credential, as prose and markdown write one: `API key`, `Secret Access Key`.
fn label_start(text: &str, start: usize, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if start < 2 || bytes[start - 1] != b' ' {
        return None;
    }
    let from = bytes[..start - 1]
        .iter()
        .rposition(|&b| !name_byte(b))
        .map_or(0, |i| i + 1);
    (from < start - 1 && secret_name(&format!("{}_{name}", &text[from..start - 1]))).then_some(from)
}

/// The text of an XML element named for a credential (`<password>…</password>`, Maven's
/// `settings.xml`, `<apiKey>…</apiKey>`), when the name at `start..end` opens one and the text
/// looks like a credential.
fn element_value(text: &str, start: usize, end: usize) -> Option<Option<std::ops::Range<usize>>> {
    let bytes = text.as_bytes();
    if start == 0 || bytes[start - 1] != b'<' || bytes.get(end) != Some(&b'>') {
        return None;
    }
    let from = end + 1;
    let len = bytes[from..]
        .iter()
        .position(|&b| b == b'<' || b == b'\n')?;
    let value = &text[from..from + len];
    Some(credential_value(value, true).then_some(from..from + len))
}

/// Is the name at `start` a word of a `[redacted: KIND]` that anvil wrote (`GitHub token`)?
fn inside_placeholder(text: &str, start: usize) -> bool {
    text[..start].rfind("[redacted: ").is_some_and(|open| {
        let after = open + "[redacted: ".len();
        !text[after..start].contains(']')
    })
}

/// `name` split into its lower-case words: at `_`, `-`, `.`, and where camelCase turns
/// (`clientSecret`, `APIKey`, `_authToken`).
fn name_words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        let turn = c.is_ascii_uppercase()
            && i > 0
            && (chars[i - 1].is_ascii_lowercase()
                || chars[i - 1].is_ascii_digit()
                || (chars[i - 1].is_ascii_uppercase()
                    && chars.get(i + 1).is_some_and(char::is_ascii_lowercase)));
        if turn && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        word.push(c.to_ascii_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Is `name` the name of a credential? Its last word decides (`password_hash`, `token_type`
/// and `secret_name` are not).
pub(super) fn secret_name(name: &str) -> bool {
    if name == "_auth" {
        // npm's `_auth`: base64 of `user:password`.
        return true;
    }
    let words = name_words(name);
    let Some(last) = words.last() else {
        return false;
    };
    let before = words.len().checked_sub(2).map(|i| words[i].as_str());
    if matches!(name, "PWD" | "OLDPWD" | "pwd" | "oldpwd") {
        // The shell's working directory.
        return false;
    }
    if matches!(last.as_str(), "pass" | "pw") {
        // `DB_PASS`, `smtpPass`, `db_pw`; not a compiler's `render_pass`.
        return !before.is_some_and(|q| NOT_CREDENTIAL_PASSES.contains(&q));
    }
    if let Some(ending) = SECRET_ENDINGS.iter().find(|e| last.ends_with(**e)) {
        let prefix = &last[..last.len() - ending.len()];
        let qualifier = if prefix.is_empty() {
            before
        } else {
            Some(prefix)
        };
        return !(*ending == "token"
            && qualifier.is_some_and(|q| NOT_CREDENTIAL_TOKENS.contains(&q)));
    }
    if last == "key" {
        return before.is_some_and(|q| KEY_QUALIFIERS.contains(&q));
    }
    if let Some(prefix) = last.strip_suffix("key") {
        // One word, lower case: `apikey`, `secretkey`, `accesskey`.
        return KEY_QUALIFIERS.contains(&prefix);
    }
    false
}

/// The value assigned to the name at `start..end`, if it looks like a credential: after `=`,
/// `:`, `:=` or `=>` (quotes, brackets and markdown's emphasis around the name allowed), or in
/// the next cell of a markdown table; quoted or bare.
pub(super) fn assigned_value(
    text: &str,
    start: usize,
    end: usize,
) -> Option<std::ops::Range<usize>> {
    let name = &text[start..end];
    let bytes = text.as_bytes();
    let cell = in_table_cell(bytes, start);
    let mut i = end;
    let mut spaces = 0;
    while i < bytes.len()
        && matches!(
            bytes[i],
            b'"' | b'\'' | b']' | b'`' | b'*' | b'\\' | b' ' | b'\t'
        )
    {
        spaces += usize::from(bytes[i] == b' ');
        i += 1;
    }
    let rest = &bytes[i..];
    // `=` or `:`, but not `==` (a comparison) nor `::` (a path).
    let single = |c: u8| rest.first() == Some(&c) && rest.get(1) != Some(&c);
    let sep = if rest.starts_with(b":=") || rest.starts_with(b"=>") {
        2
    } else if single(b'=') || single(b':') || (cell && rest.first() == Some(&b'|')) {
        1
    } else if name.starts_with("--") && spaces == 1 && i == end + 1 {
        // `--password hunter2`: a command line's option and its value.
        0
    } else {
        return None;
    };
    i += sep;
    // Spaces, and the end of a bold label (`**Password:** value`).
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'*') {
        i += 1;
    }
    // A JSON text inside a JSON string quotes with `\"`, and closes with it.
    let escaped = bytes.get(i) == Some(&b'\\') && matches!(bytes.get(i + 1), Some(b'"' | b'\''));
    if escaped {
        i += 1;
    }
    let quote = bytes
        .get(i)
        .copied()
        .filter(|b| matches!(b, b'"' | b'\'' | b'`'));
    let (start, len) = match quote {
        Some(q) => {
            let from = i + 1;
            let mut j = from;
            loop {
                match bytes.get(j) {
                    None | Some(b'\n') | Some(b'\r') => return None,
                    Some(&b) if b == q && escaped && bytes[j - 1] == b'\\' => break,
                    Some(&b) if b == q && !escaped && bytes[j - 1] != b'\\' => break,
                    Some(_) => j += 1,
                }
            }
            let stop = if escaped { j - 1 } else { j };
            (from, stop.max(from) - from)
        }
        None => {
            let len = bytes[i..]
                .iter()
                .position(|&b| {
                    b.is_ascii_whitespace()
                        || matches!(
                            b,
                            b',' | b';'
                                | b')'
                                | b'}'
                                | b']'
                                | b'>'
                                | b'"'
                                | b'\''
                                | b'`'
                                | b'&'
                                | b'<'
                                | b'\\'
                        )
                        || (cell && b == b'|')
                })
                .unwrap_or(bytes.len() - i);
            (i, len)
        }
    };
    let value = &text[start..start + len];
    credential_value(value, quote.is_some()).then_some(start..start + len)
}

/// Is the name at `start` in a cell of a markdown table (`| NAME | value |`)?
fn in_table_cell(bytes: &[u8], start: usize) -> bool {
    bytes[..start]
        .iter()
        .rev()
        .find(|b| !matches!(b, b' ' | b'\t' | b'*' | b'`'))
        == Some(&b'|')
}

/// Does a value assigned to a credential's name look like one? Not a placeholder, not code (a
/// call, a type, a variable or a field: `generate_csrf_token()`, `Optional[str]`,
/// `customer_id_column`, `os.environ`), not a sentence; at least 8 characters that mix letters
/// and digits, or hold symbols.
fn credential_value(value: &str, quoted: bool) -> bool {
    if value.chars().count() < 8 || placeholder(value) {
        return false;
    }
    if value.chars().any(char::is_whitespace) {
        return false;
    }
    if value.contains('(') || value.contains('[') || value.contains("::") || value.contains("->") {
        return false;
    }
    let identifier = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    let path = value.split('.').count() > 1 && value.split('.').all(identifier);
    if !quoted && path {
        // `settings.SECRET_KEY`, `process.env.TOKEN`, `self.password`.
        return false;
    }
    let has_digit = value.bytes().any(|b| b.is_ascii_digit());
    let has_letter = value.bytes().any(|b| b.is_ascii_alphabetic());
    let has_symbol = value
        .bytes()
        .any(|b| b.is_ascii_punctuation() && !matches!(b, b'_' | b'-' | b'.'));
    if (has_digit && has_letter) || has_symbol {
        return true;
    }
    if !quoted || !has_letter {
        // A bare word is a variable or a type (`tenant_id`, `String`); digits alone, a number.
        return false;
    }
    // A quoted word: a password of letters only when it is long, or random in its cases;
    // otherwise a label (`"Password"`, `"Passwort"`).
    let upper = value.bytes().filter(u8::is_ascii_uppercase).count();
    let lower = value.bytes().filter(u8::is_ascii_lowercase).count();
    value.len() >= 24
        || (value.len() >= 12 && upper >= 2 && lower >= 2 && !identifier_like_words(value))
}

/// `camelCaseWords` or `snake_case_words`: an identifier made of words, not random letters.
fn identifier_like_words(value: &str) -> bool {
    let words = name_words(value);
    words.len() >= 2 && words.iter().all(|w| w.len() >= 3)
}

/// Text that stands for a credential without being one: a template (`${API_KEY}`, `{{ token }}`,
/// `<your-token>`, `%s`), a mask (`********`, `xxxxxxxx`), or words that say so.
pub(super) fn placeholder(value: &str) -> bool {
    if value.starts_with(['$', '<', '{', '%', '[', '@', '&', '*', '('])
        || value.contains("${")
        || value.contains("{{")
        || value.contains('<')
    {
        return true;
    }
    if value
        .bytes()
        .all(|b| matches!(b, b'*' | b'x' | b'X' | b'.' | b'#' | b'-' | b'_' | b'0'))
    {
        return true;
    }
    let lower = value.to_ascii_lowercase();
    [
        "example",
        "placeholder",
        "your_",
        "your-",
        "yourpass",
        "yoursecret",
        "yourtoken",
        "changeme",
        "change_me",
        "redacted",
        "dummy",
        "xxxx",
        "****",
        "replace_me",
        "replaceme",
        "insert_",
        "_here",
        "-here",
    ]
    .iter()
    .any(|word| lower.contains(word))
}
