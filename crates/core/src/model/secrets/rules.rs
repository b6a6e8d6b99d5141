//! The families of credentials anvil recognises, as data: each has a name (what the person is
//! told, and what `[redacted: KIND]` says), the keywords without which it is not looked for,
//! and its shape. The shapes are written from what the issuers document of their formats (a
//! fixed prefix and an alphabet, PEM armour, a connection string's keys), not taken from
//! another scanner's rule file.
//!
//! Most shapes are regular expressions, compiled on first use in a process and only when one of
//! their keywords is in the text (the Stop hook is a fresh process at every phase: compiling
//! every rule up front would cost about half of a phase's commit; `cargo bench --bench secrets`
//! measures both). The families whose keywords are common words of prose about security
//! (`password`, `key`, `token`, `Authorization`, `value`) are parsed by code instead, because
//! what decides them is not a shape but a judgement a pattern cannot make cheaply, and such
//! prose must not wake the regular expression engine: a value assigned to a credential's name
//! (`clientSecret: …`, `DB_PASSWORD=…`, but not `PRIMARY_KEY: customer_id_column` nor
//! `password: Optional[str]`; in `assignments.rs`), the password part of a URL
//! (`postgres://app:…@db/prod`, but not `postgres://user:password@localhost` from a tutorial),
//! an `Authorization` header's credentials, a password stated in words (`the password is …`,
//! but not `the password is required`), and a `.netrc`'s.
//!
//! Each family is one row of [`RULES`], and has its test in `tests.rs`: what it catches, and
//! the ordinary text beside it that it keeps.

use super::Found;
use super::assignments::{
    NAME_WORDS, assigned_value, assignments, name_byte, placeholder, secret_name,
};

/// How a family is recognised once one of its keywords is in the text.
pub(super) enum Shape {
    /// A regular expression (`regex-lite` syntax): the credential is its first capture group when it has
    /// one, else the whole match; `accept`, when given, must say yes to that text.
    Pattern {
        regex: &'static str,
        accept: Option<fn(&str) -> bool>,
    },
    /// Code that finds the family's credentials in the text (the text, its ASCII lower case).
    Code(fn(&str, &str, &mut Vec<Found>)),
}

/// One family.
pub(super) struct Rule {
    pub kind: &'static str,
    /// The rule is looked at only when one of these is in the text: matched case-sensitively
    /// when it holds a capital letter, else in the text's lower case.
    pub keywords: &'static [&'static str],
    /// A keyword that begins with a letter or a digit counts only at the start of a word
    /// (`sk-` in `sk-proj-…`, not in `risk-based`).
    pub word_start: bool,
    pub shape: Shape,
}

const fn pattern(
    kind: &'static str,
    keywords: &'static [&'static str],
    regex: &'static str,
) -> Rule {
    Rule {
        kind,
        keywords,
        word_start: true,
        shape: Shape::Pattern {
            regex,
            accept: None,
        },
    }
}

const fn checked(
    kind: &'static str,
    keywords: &'static [&'static str],
    regex: &'static str,
    accept: fn(&str) -> bool,
) -> Rule {
    Rule {
        kind,
        keywords,
        word_start: true,
        shape: Shape::Pattern {
            regex,
            accept: Some(accept),
        },
    }
}

/// Every family, the most specific first: where two find the same text, the earlier names it.
pub(super) const RULES: &[Rule] = &[
    // PEM armour (RFC 7468) around any private key, OpenSSH's and OpenPGP's (RFC 4880) too: the
    // whole block, to its END line, or to the end of a text that cuts it. Inside a JSON string
    // (a service account's `private_key`) the line breaks are `\n` escapes; the block ends at
    // its END marker all the same.
    pattern(
        "private key",
        &["-----BEGIN"],
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\z)",
    ),
    // The base64 body of a DER private key without its armour (a service account's
    // `private_key` quoted in part): PKCS#8 and PKCS#1 RSA keys open with a SEQUENCE and the
    // INTEGER version 0, which base64 writes as `MII…IBA`.
    pattern(
        "private key",
        &["MII"],
        r"\bMII[A-Za-z0-9+/]{3}IBA[AD](?:[A-Za-z0-9+/=]|\\n|\r?\n){60,}",
    ),
    // JSON Web Tokens: three base64url parts, the first two JSON objects (`{"` is `eyJ`).
    pattern(
        "JSON web token",
        &["eyJ"],
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}",
    ),
    pattern(
        "Anthropic API key",
        &["sk-ant-"],
        r"\bsk-ant-[A-Za-z0-9_-]{32,}",
    ),
    pattern(
        "OpenAI API key",
        &["sk-proj-", "sk-svcacct-", "sk-admin-"],
        r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}",
    ),
    checked("API key", &["sk-"], r"\bsk-[A-Za-z0-9_-]{32,}", mixed),
    pattern(
        "GitHub token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})",
    ),
    pattern(
        "GitLab token",
        &[
            "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glimt-", "glsoat-",
        ],
        r"\bgl(?:pat|dt|rt|ptt|cbt|ft|imt|soat)-[A-Za-z0-9_-]{20,}",
    ),
    checked(
        "Slack token",
        &["xox", "xapp-"],
        r"\b(?:xox[abposre]|xoxe\.xox[bp]|xapp)-[A-Za-z0-9-]{10,}",
        mixed,
    ),
    // Incoming webhooks and workflow triggers: the URL is the credential; the host stays.
    pattern(
        "Slack webhook",
        &["hooks.slack.com"],
        r"hooks\.slack\.com/((?:services|workflows|triggers)/[A-Za-z0-9_/-]{16,})",
    ),
    pattern(
        "Discord webhook",
        &["/api/webhooks/"],
        r"discord(?:app)?\.com/api/webhooks/([0-9]{6,}/[A-Za-z0-9_-]{30,})",
    ),
    pattern("npm token", &["npm_"], r"\bnpm_[A-Za-z0-9]{30,}"),
    pattern("Google API key", &["AIza"], r"\bAIza[A-Za-z0-9_-]{35}"),
    pattern(
        "Google OAuth secret",
        &["GOCSPX-"],
        r"\bGOCSPX-[A-Za-z0-9_-]{24,}",
    ),
    pattern(
        "Google access token",
        &["ya29."],
        r"\bya29\.[A-Za-z0-9_-]{30,}",
    ),
    pattern(
        "AWS access key",
        &["AKIA", "ASIA", "ABIA", "ACCA"],
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    ),
    // Stripe: secret and restricted keys, live or test, and webhook signing secrets.
    // (Publishable keys, `pk_…`, are public by design.)
    pattern(
        "Stripe key",
        &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    pattern(
        "Stripe webhook secret",
        &["whsec_"],
        r"\bwhsec_[A-Za-z0-9+/=]{24,}",
    ),
    checked(
        "Hugging Face token",
        &["hf_", "api_org_"],
        r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}\b",
        two_cases,
    ),
    pattern(
        "SendGrid API key",
        &["SG."],
        r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}",
    ),
    pattern(
        "DigitalOcean token",
        &["do_v1_", "dop_v1_", "dor_v1_"],
        r"\bdo[opr]_v1_[a-f0-9]{64}",
    ),
    pattern(
        "Shopify token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    ),
    pattern(
        "PyPI token",
        &["pypi-AgEI"],
        r"\bpypi-AgEI[A-Za-z0-9_-]{50,}",
    ),
    pattern(
        "Vault token",
        &["hvs.", "hvb."],
        r"\bhv[sb]\.[A-Za-z0-9_-]{24,}",
    ),
    pattern(
        "Terraform Cloud token",
        &[".atlasv1."],
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
    ),
    pattern("Databricks token", &["dapi"], r"\bdapi[a-f0-9]{32}\b"),
    pattern(
        "Atlassian API token",
        &["ATATT3"],
        r"\bATATT3[A-Za-z0-9_=-]{50,}",
    ),
    pattern(
        "Linear API key",
        &["lin_api_"],
        r"\blin_api_[A-Za-z0-9]{32,}",
    ),
    pattern(
        "Sentry token",
        &["sntrys_", "sntryu_"],
        r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,}",
    ),
    pattern(
        "Grafana token",
        &["glsa_", "glc_"],
        r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})",
    ),
    pattern(
        "Postman API key",
        &["PMAK-"],
        r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}",
    ),
    pattern(
        "Docker Hub token",
        &["dckr_pat_"],
        r"\bdckr_pat_[A-Za-z0-9_-]{24,}",
    ),
    pattern(
        "age secret key",
        &["AGE-SECRET-KEY-1"],
        r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}",
    ),
    pattern(
        "Telegram bot token",
        &[":AA"],
        r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b",
    ),
    // Microsoft Entra ID (Azure AD) client secrets carry `Q~` after three characters and a
    // digit: the keyword stands inside the secret.
    Rule {
        kind: "Azure client secret",
        keywords: &["Q~"],
        word_start: false,
        shape: Shape::Pattern {
            regex: r"(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})",
            accept: None,
        },
    },
    // A shared access signature's `sig=` (storage, Service Bus), in a URL or a connection
    // string. The rest of a connection string (`AccountKey=`, `SharedAccessKey=`,
    // `Password=`) is a credential's name, below.
    pattern(
        "Azure SAS signature",
        &["sig="],
        r"[?&;]sig=([A-Za-z0-9%+/=]{20,})",
    ),
    // Passwords handed to a program on its command line, where each program takes one:
    // `curl -u USER:PASSWORD` (`--user`, and every tool that copied it),
    checked(
        "password on a command line",
        &[" -u", "\t-u", "--user"],
        r#"(?:^|[\s'"])(?:-u|--user)(?:[ \t]+|=)?['"]?[^\s:'"@/$]+:([^\s'"]+)"#,
        command_password,
    ),
    // `mysql -pPASSWORD`: the value glued to `-p` (alone, `-p` asks for it), for the clients
    // of MySQL and MariaDB,
    checked(
        "password on a command line",
        &["mysql", "mariadb"],
        r#"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mariadb|mariadb-dump|mariadb-admin)\b[^\n|;&]*?[ \t]-p['"]?([^\s'";&|]+)"#,
        given_password,
    ),
    // `sshpass -p PASSWORD`,
    checked(
        "password on a command line",
        &["sshpass"],
        r#"\bsshpass\b[^\n|;&]*?[ \t]-p[ \t]*['"]?([^\s'";&|]+)"#,
        given_password,
    ),
    // `redis-cli -a PASSWORD` (or `--pass`),
    checked(
        "password on a command line",
        &["redis-cli"],
        r#"\bredis-cli\b[^\n|;&]*?[ \t](?:-a|--pass)[ \t]+['"]?([^\s'";&|]+)"#,
        given_password,
    ),
    // and `docker login -p PASSWORD` (podman's the same). `--password VALUE` and
    // `--password=VALUE` are a credential's name with its value, below.
    checked(
        "password on a command line",
        &["docker login", "podman login"],
        r#"\b(?:docker|podman)[ \t]+login\b[^\n|;&]*?[ \t]-p[ \t]+['"]?([^\s'";&|]+)"#,
        given_password,
    ),
    // A registry's `auth` in docker's `config.json` (podman's `auth.json`): base64 of
    // `USER:PASSWORD`, which is what decides it (an `"auth": "oauth2"` is kept).
    checked(
        "registry credentials",
        &["\"auth\""],
        r#""auth"[ \t]*:[ \t]*"([A-Za-z0-9+/]{4,}={0,2})""#,
        user_and_password_in_base64,
    ),
    // HTTP basic authentication written as code: `auth=("USER", "PASSWORD")` (Python's
    // requests and httpx), `HTTPBasicAuth("USER", "PASSWORD")`, `.basic_auth("USER",
    // Some("PASSWORD"))` (reqwest), `withBasicAuth('USER', 'PASSWORD')` (Laravel's HTTP client).
    Rule {
        kind: "basic auth credentials",
        keywords: &["auth=(", "auth = ("],
        word_start: false,
        shape: Shape::Pattern {
            regex: r#"(?i:auth)[ \t]*=[ \t]*\([ \t]*['"][^'"\n]*['"][ \t]*,[ \t]*['"]([^'"\n]+)['"]"#,
            accept: Some(given_password),
        },
    },
    Rule {
        kind: "basic auth credentials",
        keywords: &["basicauth(", "basic_auth("],
        word_start: false,
        shape: Shape::Pattern {
            regex: r#"(?i:basic_?auth)[ \t]*\([ \t]*['"][^'"\n]*['"][ \t]*,[ \t]*(?:Some\([ \t]*)?['"]([^'"\n]+)['"]"#,
            accept: Some(given_password),
        },
    },
    // The families below are common words in prose about security (a debate on API design
    // says "Bearer", "Authorization", "password" and "token" often): they are parsed by code,
    // so that such prose never wakes the regular expression engine.
    //
    // `Authorization: Bearer …`: an opaque token is recognised by where it stands.
    Rule {
        kind: "bearer token",
        keywords: &["bearer"],
        word_start: true,
        shape: Shape::Code(bearer),
    },
    // `Authorization: Basic …`, `Authorization: token …` and the other schemes.
    Rule {
        kind: "authorization credentials",
        keywords: &["authorization"],
        word_start: true,
        shape: Shape::Code(authorization),
    },
    Rule {
        kind: "password in a URL",
        keywords: &["://"],
        word_start: false,
        shape: Shape::Code(url_credentials),
    },
    // `NAME=value`, `NAME: value`, `**NAME:** value`, `| NAME | value |`, `<NAME>value</NAME>`
    // (see `assignments.rs`).
    Rule {
        kind: "secret value",
        keywords: NAME_WORDS,
        word_start: false,
        shape: Shape::Code(assignments),
    },
    // A value whose name stands beside it: `name: DB_PASSWORD` / `value: …`.
    Rule {
        kind: "secret value",
        keywords: &["value"],
        word_start: true,
        shape: Shape::Code(named_values),
    },
    // `the password is …`, `pw: …`.
    Rule {
        kind: "password",
        keywords: STATED,
        word_start: true,
        shape: Shape::Code(stated_password),
    },
    // `machine HOST login USER password …` in a `.netrc`.
    Rule {
        kind: "netrc password",
        keywords: &["password"],
        word_start: true,
        shape: Shape::Code(netrc),
    },
];

/// Letters and digits both, at least two of each: a key, not a word with a prefix that happens
/// to look like one (`sk-learn-…`).
fn mixed(token: &str) -> bool {
    let digits = token.bytes().filter(u8::is_ascii_digit).count();
    let letters = token.bytes().filter(u8::is_ascii_alphabetic).count();
    digits >= 2 && letters >= 2
}

/// Upper- and lower-case letters both (Hugging Face tokens are letters).
fn two_cases(token: &str) -> bool {
    let upper = token.bytes().filter(u8::is_ascii_uppercase).count();
    let lower = token.bytes().filter(u8::is_ascii_lowercase).count();
    upper >= 2 && lower >= 2
}

/// What follows `Bearer`/`Basic` is a credential when it mixes letters and digits (not
/// `Bearer YOUR_ACCESS_TOKEN`) and is no placeholder.
fn opaque_token(token: &str) -> bool {
    let has_digit = token.bytes().any(|b| b.is_ascii_digit());
    let has_letter = token.bytes().any(|b| b.is_ascii_alphabetic());
    has_digit && has_letter && !placeholder(token)
}

fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'+' | b'/' | b'-')
}

/// Does a word start at `at` (nothing of a word before it)?
pub(super) fn at_word_start(bytes: &[u8], at: usize) -> bool {
    at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_')
}

/// `Bearer TOKEN` (RFC 6750): the token, when it is one ([`opaque_token`], 16 characters or
/// more).
fn bearer(text: &str, lower: &str, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    for (at, _) in lower.match_indices("bearer") {
        if !at_word_start(bytes, at) {
            continue;
        }
        let mut i = at + "bearer".len();
        let spaces = bytes[i..]
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        if spaces == 0 {
            continue;
        }
        i += spaces;
        let mut end = i + bytes[i..].iter().take_while(|&&b| token_byte(b)).count();
        end += bytes[end..].iter().take_while(|&&b| b == b'=').count();
        if end - i >= 16 && opaque_token(&text[i..end]) {
            out.push(Found {
                kind: "bearer token",
                range: i..end,
            });
        }
    }
}

/// `Authorization: SCHEME CREDENTIALS` (RFC 9110), in a header, a `curl -H`, a JSON or YAML
/// map: `Basic` and its base64 (RFC 7617), the schemes services name for their tokens (`token`
/// at GitHub, `Token` in Django REST framework, `Bot` at Discord, `SSWS` at Okta, …), and a
/// token with no scheme at all. `Bearer` is the bearer family's wherever it stands; `Digest`
/// and the other challenge schemes carry parameters, not a secret of their own.
fn authorization(text: &str, lower: &str, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    let skip = |i: &mut usize, what: &[u8]| {
        while *i < bytes.len() && what.contains(&bytes[*i]) {
            *i += 1;
        }
    };
    let token_end = |i: usize| {
        let end = i + bytes[i..].iter().take_while(|&&b| token_byte(b)).count();
        end + bytes[end..].iter().take_while(|&&b| b == b'=').count()
    };
    for (at, _) in lower.match_indices("authorization") {
        let mut i = at + "authorization".len();
        skip(&mut i, b"\"' \t");
        if !matches!(bytes.get(i), Some(b':' | b'=')) {
            continue;
        }
        i += 1;
        skip(&mut i, b"\"' \t");
        let word_end = token_end(i);
        let word = &text[i..word_end];
        let mut j = word_end;
        skip(&mut j, b" \t");
        let scheme =
            j > word_end && !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphabetic());
        let found = if scheme {
            let end = token_end(j);
            let credentials = &text[j..end];
            match lower[i..word_end].as_ref() {
                "bearer" | "digest" | "negotiate" | "ntlm" | "hoba" | "mutual" => None,
                "basic" => (credentials.len() >= 12 && opaque_token(credentials))
                    .then_some(("basic auth credentials", j..end)),
                _ => (credentials.len() >= 16 && opaque_token(credentials))
                    .then_some(("authorization token", j..end)),
            }
        } else {
            (word.len() >= 20 && opaque_token(word)).then_some(("authorization token", i..word_end))
        };
        if let Some((kind, range)) = found {
            out.push(Found { kind, range });
        }
    }
}

/// Is `value` base64 of `USER:PASSWORD`, both there and printable, the password no placeholder?
fn user_and_password_in_base64(value: &str) -> bool {
    use base64::Engine as _;
    let Ok(decoded) =
        base64::engine::general_purpose::STANDARD_NO_PAD.decode(value.trim_end_matches('='))
    else {
        return false;
    };
    let Ok(decoded) = std::str::from_utf8(&decoded) else {
        return false;
    };
    !decoded.chars().any(char::is_control)
        && decoded
            .split_once(':')
            .is_some_and(|(user, password)| !user.is_empty() && given_password(password))
}

/// What a program takes where it takes a password (`mysql -pVALUE`, `sshpass -p VALUE`): any
/// value but a placeholder or a tutorial's.
fn given_password(password: &str) -> bool {
    password.len() >= 2 && !placeholder(password) && !tutorial_password(password)
}

/// A value stated as a password in words (`the password is VALUE`): [`password_shaped`], and at
/// least 6 characters.
fn password_like(value: &str) -> bool {
    value.len() >= 6 && password_shaped(value)
}

/// A value given to `-u USER:VALUE`: [`password_shaped`], and at least 4 characters.
fn command_password(value: &str) -> bool {
    value.len() >= 4 && password_shaped(value)
}

/// A value that looks like a password where the words around it do not say for sure that it is
/// one: no placeholder, no code (`Optional[str]`, `hash(pw)`), not a number, not a word
/// (`required`, `hashed`, `case-sensitive`, `sha256-hashed`): letters and digits mixed, or a
/// symbol. (A password of letters alone is out of reach: it reads as a word.)
fn password_shaped(value: &str) -> bool {
    if placeholder(value) || tutorial_password(value) {
        return false;
    }
    if value
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '(' | '[' | '{' | '<' | '>'))
    {
        return false;
    }
    let digit = value.bytes().any(|b| b.is_ascii_digit());
    let letter = value.bytes().any(|b| b.is_ascii_alphabetic());
    let symbol = value
        .bytes()
        .any(|b| b.is_ascii_punctuation() && !matches!(b, b'-' | b'_' | b'.'));
    // Words joined by hyphens, one of them a plain word: a description, not a password.
    if value.contains('-')
        && value
            .split('-')
            .any(|w| w.len() >= 4 && w.bytes().all(|b| b.is_ascii_lowercase()))
    {
        return false;
    }
    (digit && letter) || symbol
}

// ---------------------------------------------------------------------------------------------
// Credentials in URLs: `scheme://user:password@host`.

/// Schemes of databases and brokers, whose URLs carry a service's own password.
const DATABASES: &[&str] = &[
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "mongodb",
    "mongodb+srv",
    "redis",
    "rediss",
    "amqp",
    "amqps",
    "mssql",
    "sqlserver",
    "oracle",
    "clickhouse",
    "cockroachdb",
    "couchdb",
    "cassandra",
    "neo4j",
    "neo4j+s",
    "bolt",
];

/// The user part of every URL in `text`: its password (`user:PASSWORD@`), or a user part that
/// is a token by itself (`https://TOKEN@host`).
fn url_credentials(text: &str, _lower: &str, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices("://") {
        let scheme_start = bytes[..at]
            .iter()
            .rposition(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-')))
            .map_or(0, |i| i + 1);
        let scheme = &text[scheme_start..at];
        if !scheme.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let from = at + 3;
        let authority_len = bytes[from..]
            .iter()
            .position(|&b| {
                b.is_ascii_whitespace()
                    || matches!(
                        b,
                        b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'`' | b'\\'
                    )
            })
            .unwrap_or(bytes.len() - from);
        let authority = &text[from..from + authority_len];
        let Some(user_end) = authority.rfind('@') else {
            continue;
        };
        let user_part = &authority[..user_end];
        let found =
            match user_part.find(':') {
                Some(colon) => {
                    let password = &user_part[colon + 1..];
                    let start = from + colon + 1;
                    (!password.is_empty() && !tutorial_password(password)).then(|| {
                        let lower = scheme.to_ascii_lowercase();
                        let kind = if DATABASES.contains(&lower.as_str()) {
                            "database password"
                        } else {
                            "password in a URL"
                        };
                        Found {
                            kind,
                            range: start..start + password.len(),
                        }
                    })
                }
                None => (user_part.len() >= 20 && mixed(user_part) && !placeholder(user_part))
                    .then(|| Found {
                        kind: "token in a URL",
                        range: from..from + user_part.len(),
                    }),
            };
        out.extend(found);
    }
}

/// A password that documentation writes where the reader puts theirs.
fn tutorial_password(password: &str) -> bool {
    let lower = password.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "password" | "pass" | "passwd" | "pwd" | "pw" | "secret" | "p" | "..." | "pass123"
    ) || placeholder(password)
}

// ---------------------------------------------------------------------------------------------
// Credentials in words and in the files that configure other programs.

/// A value whose name stands beside it, as manifests and exports write them: `- name:
/// DB_PASSWORD` then `value: …` (Kubernetes, compose files), `{"name": "API_KEY", "value": …}`,
/// `{"key": "apiKey", "value": …}` (Postman), `<add key="ApiKey" value="…"/>` (.NET's
/// `appSettings`). The name is the nearest `name` or `key` field before `value` in the same
/// object, element or list item.
fn named_values(text: &str, lower: &str, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    for (at, _) in lower.match_indices("value") {
        let end = at + "value".len();
        if !at_word_start(bytes, at) || bytes.get(end).is_some_and(|&b| name_byte(b)) {
            continue;
        }
        let Some(name) = name_beside(text, lower, at) else {
            continue;
        };
        if !secret_name(name) {
            continue;
        }
        if let Some(range) = assigned_value(text, at, end) {
            out.push(Found {
                kind: "secret value",
                range,
            });
        }
    }
}

/// The value of the `name` (or `key`) field nearest before `at`, in the same object (`{`),
/// element (`<`) or list item (`- `), and at most a few lines up.
fn name_beside<'a>(text: &'a str, lower: &str, at: usize) -> Option<&'a str> {
    let bytes = text.as_bytes();
    let mut lo = at.saturating_sub(240);
    while !text.is_char_boundary(lo) {
        lo += 1;
    }
    let window = &lower[lo..at];
    let lo = lo
        + window
            .rfind(['{', '<'])
            .or_else(|| window.rfind("- "))
            .unwrap_or(0);
    let mut best: Option<(usize, usize)> = None;
    for field in ["name", "key"] {
        for (i, _) in lower[lo..at].match_indices(field) {
            let i = lo + i;
            let mut j = i + field.len();
            if !at_word_start(bytes, i) || bytes.get(j).is_some_and(|&b| name_byte(b)) {
                continue;
            }
            while j < at && matches!(bytes[j], b'"' | b'\'' | b' ' | b'\t') {
                j += 1;
            }
            if !matches!(bytes.get(j), Some(b':' | b'=')) {
                continue;
            }
            j += 1;
            while j < at && matches!(bytes[j], b'"' | b'\'' | b' ' | b'\t') {
                j += 1;
            }
            if best.is_none_or(|(b, _)| j > b) {
                best = Some((
                    j,
                    j + bytes[j..at].iter().take_while(|&&b| name_byte(b)).count(),
                ));
            }
        }
    }
    best.map(|(from, to)| &text[from..to])
        .filter(|n| !n.is_empty())
}

/// The words that name a password when they stand alone (`the password is …`, `pw: …`).
const STATED: &[&str] = &["password", "passwd", "passphrase", "pw"];

/// A password stated in words: `the password is hunter2`, `the password for the admin account
/// was …`, `password set to …`, `**Password:** …`, `pw: …`, a table's `| password | … |`. The
/// value is taken only when it looks like one ([`password_like`]): `the password is required`,
/// `the password reset flow` and `the password is hashed with argon2id` stay as they are.
fn stated_password(text: &str, lower: &str, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    for word in STATED {
        for (at, _) in lower.match_indices(word) {
            let end = at + word.len();
            if !at_word_start(bytes, at) || bytes.get(end).is_some_and(|&b| name_byte(b)) {
                continue;
            }
            let Some(from) = after_statement(lower, end) else {
                continue;
            };
            if let Some(range) = stated_value(text, from) {
                out.push(Found {
                    kind: "password",
                    range,
                });
            }
        }
    }
}

/// Where the value begins after `password` ends at `i`, if the words that follow state one:
/// `is`, `was`, `is now`, `is set to`, `(set) to`, `:`, `=`, `=>`, `|`, optionally after `for`
/// or `of` and a few words (`for the admin account`).
fn after_statement(lower: &str, mut i: usize) -> Option<usize> {
    let bytes = lower.as_bytes();
    let blank = |i: &mut usize| {
        while *i < bytes.len() && matches!(bytes[*i], b' ' | b'\t' | b'*' | b'_' | b'`') {
            *i += 1;
        }
    };
    let word = |i: usize| {
        let n = bytes[i..]
            .iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'@' | b'\''))
            .count();
        &lower[i..i + n]
    };
    blank(&mut i);
    if matches!(word(i), "for" | "of") {
        let mut words = 0;
        loop {
            i += word(i).len();
            blank(&mut i);
            if matches!(word(i), "is" | "was") {
                break;
            }
            words += 1;
            if words > 5 || word(i).is_empty() {
                return None;
            }
        }
    }
    let rest = &lower[i..];
    let verb = if rest.starts_with("=>") {
        2
    } else if (rest.starts_with(['=', ':']) && !rest[1..].starts_with(['=', ':']))
        || rest.starts_with('|')
    {
        1
    } else {
        let mut n = 0;
        for expected in [
            &["is", "was", "set", "to"][..],
            &["now", "set", "still", "to"],
            &["to"],
        ] {
            let w = word(i + n);
            if !expected.contains(&w) {
                break;
            }
            n += w.len();
            while i + n < bytes.len() && matches!(bytes[i + n], b' ' | b'\t') {
                n += 1;
            }
        }
        // `set` needs its `to`: `the password is set by the admin` states none.
        if n == 0 || lower[i..i + n].trim_end().ends_with("set") {
            return None;
        }
        n
    };
    i += verb;
    if bytes.get(i) == Some(&b':') {
        i += 1;
    }
    blank(&mut i);
    Some(i)
}

/// The value stated at `from`: quoted, or a word up to the next space, without the sentence's
/// punctuation after it; `None` unless it looks like a password.
fn stated_value(text: &str, from: usize) -> Option<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let (start, len) = match bytes.get(from) {
        Some(&q @ (b'"' | b'\'')) => {
            let n = bytes[from + 1..]
                .iter()
                .position(|&b| b == q || b == b'\n')?;
            (from + 1, n)
        }
        Some(_) => {
            let n = bytes[from..]
                .iter()
                .take_while(|&&b| {
                    !b.is_ascii_whitespace() && !matches!(b, b'|' | b'`' | b'"' | b'\'')
                })
                .count();
            let word =
                text[from..from + n].trim_end_matches(['.', ',', ';', ':', '?', ')', '*', '_']);
            (from, word.len())
        }
        None => return None,
    };
    let value = &text[start..start + len];
    password_like(value).then_some(start..start + len)
}

/// `.netrc` (and `_netrc`): `machine HOST login USER password PASSWORD`, the tokens parted by
/// any white space, line ends included; `default` in place of `machine HOST` too.
fn netrc(text: &str, lower: &str, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    for (at, _) in lower.match_indices("password") {
        let end = at + "password".len();
        if !at_word_start(bytes, at)
            || !bytes.get(end).is_some_and(u8::is_ascii_whitespace)
            || !netrc_entry_before(&lower[..at])
        {
            continue;
        }
        let start = end
            + bytes[end..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
        let len = bytes[start..]
            .iter()
            .take_while(|b| !b.is_ascii_whitespace())
            .count();
        if given_password(&text[start..start + len]) {
            out.push(Found {
                kind: "netrc password",
                range: start..start + len,
            });
        }
    }
}

/// Are the tokens before a `password` those of a netrc entry: `login X`, `account X` or
/// `port X` back to `machine HOST` or `default`?
fn netrc_entry_before(before: &str) -> bool {
    let mut tokens = before.split_ascii_whitespace().rev();
    for _ in 0..4 {
        match tokens.next() {
            Some("default") => return true,
            Some(_) => {}
            None => return false,
        }
        match tokens.next() {
            Some("machine") => return true,
            Some("login" | "account" | "port") => {}
            _ => return false,
        }
    }
    false
}
