//! The families of credentials anvil recognises, as data: each has a name (what the person is
//! told, and what `[redacted: KIND]` says), the keywords without which it is not looked for,
//! and its shape. The shapes are written from what the issuers document of their formats (a
//! fixed prefix and an alphabet, PEM armour, a connection string's keys), not taken from
//! another scanner's rule file.
//!
//! Most shapes are regular expressions, compiled on first use in a process and only when one of
//! their keywords is in the text (the Stop hook is a fresh process at every phase: compiling
//! every rule up front would cost about half of a phase's commit; `cargo bench --bench secrets`
//! measures both). Two families are parsed by code instead, because what decides them is not a
//! shape but a judgement a pattern cannot make cheaply: a value assigned to a credential's name
//! (`clientSecret: …`, `DB_PASSWORD=…`, but not `PRIMARY_KEY: customer_id_column` nor
//! `password: Optional[str]`), and the password part of a URL (`postgres://app:…@db/prod`, but
//! not `postgres://user:password@localhost` from a tutorial). The first is in `assignments.rs`.

use super::Found;
use super::assignments::{NAME_WORDS, assignments, placeholder};

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
    Rule {
        kind: "basic auth credentials",
        keywords: &["authorization"],
        word_start: true,
        shape: Shape::Code(basic),
    },
    Rule {
        kind: "password in a URL",
        keywords: &["://"],
        word_start: false,
        shape: Shape::Code(url_credentials),
    },
    Rule {
        kind: "secret value",
        keywords: NAME_WORDS,
        word_start: false,
        shape: Shape::Code(assignments),
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

/// `Authorization: Basic BASE64` (RFC 7617), in a header, a `curl -H`, a JSON or YAML map.
fn basic(text: &str, lower: &str, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    let skip = |i: &mut usize, what: &[u8]| {
        while *i < bytes.len() && what.contains(&bytes[*i]) {
            *i += 1;
        }
    };
    for (at, _) in lower.match_indices("authorization") {
        let mut i = at + "authorization".len();
        skip(&mut i, b"\"' \t");
        if !matches!(bytes.get(i), Some(b':' | b'=')) {
            continue;
        }
        i += 1;
        skip(&mut i, b"\"' \t");
        if !lower[i..].starts_with("basic") {
            continue;
        }
        i += "basic".len();
        let spaces = bytes[i..]
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        if spaces == 0 {
            continue;
        }
        i += spaces;
        let mut end = i + bytes[i..]
            .iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
            .count();
        end += bytes[end..].iter().take_while(|&&b| b == b'=').count();
        if end - i >= 12 && opaque_token(&text[i..end]) {
            out.push(Found {
                kind: "basic auth credentials",
                range: i..end,
            });
        }
    }
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
