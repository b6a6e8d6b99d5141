//! The families anvil must catch, one test each, and the ordinary text it must leave alone.
//! Credentials are built at run time from their documented shapes (a prefix and an alphabet),
//! so that no literal in this file is one.

use super::*;
use proptest::prelude::*;

/// `n` characters of a repeating mix of letters and digits.
fn body(n: usize) -> String {
    "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
        .chars()
        .cycle()
        .take(n)
        .collect()
}

/// `n` lower-case hexadecimal digits.
fn hex(n: usize) -> String {
    "0123456789abcdef".chars().cycle().skip(3).take(n).collect()
}

/// The kinds found in `text`, and `text` redacted.
fn kinds_and_redacted(text: &str) -> (Vec<&'static str>, String) {
    let kinds = find(text).iter().map(|f| f.kind).collect();
    (kinds, redact(text).0.into_owned())
}

/// `text` holds one credential, `secret`, of `kind`: it is found, replaced, and what stays
/// around it (`kept`) stays.
#[track_caller]
fn caught(text: &str, secret: &str, kind: &str, kept: &[&str]) {
    let (kinds, redacted) = kinds_and_redacted(text);
    assert_eq!(kinds, [kind], "{text}");
    assert!(!redacted.contains(secret), "{secret} left in {redacted}");
    assert!(
        redacted.contains(&format!("[redacted: {kind}]")),
        "{redacted}"
    );
    for k in kept {
        assert!(redacted.contains(k), "{k} lost from {redacted}");
    }
    assert_eq!(
        find(&redacted),
        [],
        "a redacted text is found clean: {redacted}"
    );
}

#[test]
fn every_rule_compiles() {
    for (i, rule) in RULES.iter().enumerate() {
        if let Shape::Pattern { regex, .. } = &rule.shape {
            compiled(i, regex);
        }
    }
}

#[test]
fn passwords_in_urls_are_caught_and_the_rest_of_the_url_stays() {
    caught(
        "git remote add origin https://alice:Tr0ub4dor3x@git.example.com/team/repo.git",
        "Tr0ub4dor3x",
        "password in a URL",
        &["https://alice:", "@git.example.com/team/repo.git"],
    );
    let token = format!("x{}", body(36));
    caught(
        &format!("clone https://{token}@github.com/org/repo"),
        &token,
        "token in a URL",
        &["@github.com/org/repo"],
    );
}

#[test]
fn database_urls_are_caught() {
    for (url, password) in [
        (
            "postgres://app:Xk9pq2Lm77@db.internal:5432/prod",
            "Xk9pq2Lm77",
        ),
        (
            "mongodb+srv://svc:Zx81mNq0v@cluster0.mongodb.net/app?retryWrites=true",
            "Zx81mNq0v",
        ),
        ("redis://:s3cr3tRedis@cache:6379/0", "s3cr3tRedis"),
        ("mysql://root:hunter2@localhost/shop", "hunter2"),
        ("amqps://queue:p%40ss-w0rd@broker/vhost", "p%40ss-w0rd"),
    ] {
        caught(
            &format!("DATABASE_URL={url}"),
            password,
            "database password",
            &["DATABASE_URL="],
        );
    }
}

#[test]
fn stripe_keys_are_caught() {
    for prefix in ["sk_live_", "sk_test_", "rk_live_"] {
        let key = format!("{prefix}{}", body(24));
        caught(&format!("stripe.api_key = {key}"), &key, "Stripe key", &[]);
    }
    let secret = format!("whsec_{}", body(32));
    caught(
        &format!("endpoint secret {secret}."),
        &secret,
        "Stripe webhook secret",
        &["endpoint secret ", "."],
    );
}

#[test]
fn hugging_face_and_sendgrid_tokens_are_caught() {
    let hf = format!("hf_{}", "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH");
    caught(
        &format!("huggingface-cli login --token {hf}"),
        &hf,
        "Hugging Face token",
        &["huggingface-cli login"],
    );
    let sendgrid = format!("SG.{}.{}", body(22), body(43));
    caught(
        &format!("send with {sendgrid} now"),
        &sendgrid,
        "SendGrid API key",
        &["send with ", " now"],
    );
}

#[test]
fn azure_connection_strings_lose_their_keys_and_keep_their_shape() {
    let key = format!("{}+{}/{}==", body(40), body(20), body(24));
    let storage = format!(
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={key};EndpointSuffix=core.windows.net"
    );
    let (kinds, redacted) = kinds_and_redacted(&storage);
    assert_eq!(kinds, ["secret value"]);
    assert_eq!(
        redacted,
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[redacted: secret value];\
         EndpointSuffix=core.windows.net"
    );
    let bus = format!(
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}"
    );
    caught(
        &bus,
        &key,
        "secret value",
        &["SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey="],
    );
    let sig = "k2Jf9%2Bq8Lm3Zx0Vb7Nc6Qw4Er1Ty5Ui%3D";
    caught(
        &format!(
            "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig={sig}"
        ),
        sig,
        "Azure SAS signature",
        &["&sig="],
    );
}

#[test]
fn opaque_bearer_and_basic_credentials_are_caught() {
    let opaque = "8f3a9c2e7b1d4f60a5e9c3b2d1f0e7a6";
    caught(
        &format!("curl -H 'Authorization: Bearer {opaque}' https://api.example.com"),
        opaque,
        "bearer token",
        &["Authorization: Bearer ", "https://api.example.com"],
    );
    caught(
        "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l",
        "YWxhZGRpbjpvcGVuc2VzYW1l",
        "basic auth credentials",
        &["Authorization: Basic "],
    );
}

#[test]
fn camel_case_and_lower_case_credential_names_are_caught() {
    for (text, secret) in [
        (r#"{"clientSecret": "q8Xv2Lm9Zr4T"}"#, "q8Xv2Lm9Zr4T"),
        ("db_password=Pa55w0rd!", "Pa55w0rd!"),
        ("apiKey = 'a1b2c3d4e5f6'", "a1b2c3d4e5f6"),
        ("accessToken: tok-9f8e7d6c5b", "tok-9f8e7d6c5b"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
        ),
        ("  password: \"hunter2hunter2\"", "hunter2hunter2"),
        ("mysql --password=S3cure!pass db", "S3cure!pass"),
        ("client_secret := \"xY7zQ2wE9rT4\"", "xY7zQ2wE9rT4"),
        ("'api_key' => 'b9c8d7e6f5a4'", "b9c8d7e6f5a4"),
    ] {
        caught(text, secret, "secret value", &[]);
        let name_end = text.find(secret).unwrap();
        let (_, redacted) = kinds_and_redacted(text);
        assert!(
            redacted.starts_with(&text[..name_end]),
            "the name stays: {redacted}"
        );
    }
}

#[test]
fn pgp_and_pem_private_keys_are_caught_whole() {
    let pgp = format!(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF{}\n={}\n-----END PGP PRIVATE KEY BLOCK-----",
        body(60),
        body(4)
    );
    caught(
        &format!("my key:\n{pgp}\nthanks"),
        "lQOYBF",
        "private key",
        &["my key:\n", "\nthanks"],
    );
    let ssh = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt{}\n-----END OPENSSH PRIVATE KEY-----",
        body(50)
    );
    caught(&ssh, "b3BlbnNzaC1rZXkt", "private key", &[]);
    // Cut short (a context file over the budget): to the end of the text.
    caught(
        &format!("-----BEGIN RSA PRIVATE KEY-----\nMIIEow{}", body(40)),
        "MIIEow",
        "private key",
        &[],
    );
}

#[test]
fn a_service_accounts_private_key_is_caught_in_its_json_and_as_a_bare_body() {
    let der = format!("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{}", body(120));
    let account = serde_json::json!({
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": "0123456789abcdef0123456789abcdef01234567",
        "private_key": format!("-----BEGIN PRIVATE KEY-----\n{der}\n-----END PRIVATE KEY-----\n"),
        "client_email": "deploy@acme-prod.iam.gserviceaccount.com",
    });
    let text = serde_json::to_string_pretty(&account).unwrap();
    let (kinds, redacted) = kinds_and_redacted(&text);
    assert_eq!(kinds, ["private key"], "{text}");
    assert!(!redacted.contains(&der[..40]), "{redacted}");
    let back: serde_json::Value = serde_json::from_str(&redacted).expect("still JSON");
    assert_eq!(back["private_key"], "[redacted: private key]\n");
    assert_eq!(back["client_email"], account["client_email"]);
    // The body alone, quoted as part of a conversation or a config.
    let bare = format!("the key starts {der} and goes on");
    caught(
        &bare,
        &der[..40],
        "private key",
        &["the key starts ", " and goes on"],
    );
    let escaped = format!(r#""private_key": "{}\n{}\n""#, &der[..64], &der[64..]);
    let (kinds, redacted) = kinds_and_redacted(&escaped);
    assert!(!kinds.is_empty(), "{escaped}");
    assert!(!redacted.contains(&der[..40]), "{redacted}");
}

#[test]
fn slack_webhooks_and_tokens_are_caught() {
    let path = "services/T0A1B2C3D/B4E5F6G7H/abcDEF123ghiJKL456mnoPQR";
    caught(
        &format!("post to https://hooks.slack.com/{path} when done"),
        path,
        "Slack webhook",
        &["https://hooks.slack.com/", " when done"],
    );
    let token = format!("xoxb-{}", body(40));
    caught(
        &format!("SLACK_BOT={token}"),
        &token,
        "Slack token",
        &["SLACK_BOT="],
    );
}

#[test]
fn npm_auth_tokens_are_caught() {
    caught(
        "//registry.npmjs.org/:_authToken=6f1c9a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
        "6f1c9a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
        "secret value",
        &["//registry.npmjs.org/:_authToken="],
    );
    let token = format!("npm_{}", body(36));
    caught(
        &format!("//registry.npmjs.org/:_authToken={token}"),
        &token,
        "npm token",
        &["//registry.npmjs.org/:_authToken="],
    );
    caught(
        "_auth=YWxpY2U6czNjcjN0cGFzcw==",
        "YWxpY2U6czNjcjN0cGFzcw==",
        "secret value",
        &["_auth="],
    );
}

#[test]
fn prefixed_tokens_of_the_big_issuers_are_caught() {
    for (token, kind) in [
        (format!("ghp_{}", body(36)), "GitHub token"),
        (format!("github_pat_{}", body(82)), "GitHub token"),
        (format!("glpat-{}", body(20)), "GitLab token"),
        (format!("sk-ant-api03-{}", body(80)), "Anthropic API key"),
        (format!("sk-proj-{}", body(60)), "OpenAI API key"),
        (format!("sk-{}", body(48)), "API key"),
        (format!("AIza{}", body(35)), "Google API key"),
        ("AKIAIOSFODNN7EXAMPLE".to_owned(), "AWS access key"),
        (format!("GOCSPX-{}", body(28)), "Google OAuth secret"),
        (format!("dckr_pat_{}", body(27)), "Docker Hub token"),
        (format!("hvs.{}", body(90)), "Vault token"),
        (format!("ya29.{}", body(60)), "Google access token"),
        (format!("rk_live_{}", body(30)), "Stripe key"),
        (format!("dop_v1_{}", hex(64)), "DigitalOcean token"),
        (format!("shpat_{}", hex(32)), "Shopify token"),
        (format!("pypi-AgEIcHlwaS5vcmc{}", body(60)), "PyPI token"),
        (
            format!("{}.atlasv1.{}", body(14), body(70)),
            "Terraform Cloud token",
        ),
        (format!("dapi{}", hex(32)), "Databricks token"),
        (format!("ATATT3{}", body(60)), "Atlassian API token"),
        (format!("lin_api_{}", body(40)), "Linear API key"),
        (format!("sntrys_{}", body(60)), "Sentry token"),
        (format!("glsa_{}_{}", body(32), hex(8)), "Grafana token"),
        (format!("PMAK-{}-{}", hex(24), hex(34)), "Postman API key"),
        (
            format!("AGE-SECRET-KEY-1{}", body(58).to_ascii_uppercase()),
            "age secret key",
        ),
        (format!("123456789:AA{}", body(33)), "Telegram bot token"),
        (format!("abc8Q~{}", body(34)), "Azure client secret"),
    ] {
        caught(
            &format!("use {token} here"),
            &token,
            kind,
            &["use ", " here"],
        );
    }
    let webhook = format!("123456789012345678/{}", body(68));
    caught(
        &format!("post to https://discord.com/api/webhooks/{webhook}"),
        &webhook,
        "Discord webhook",
        &["https://discord.com/api/webhooks/"],
    );
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    caught(
        &format!("auth {jwt} then"),
        jwt,
        "JSON web token",
        &["auth ", " then"],
    );
}

/// None of `texts` holds a credential: each is kept as written.
#[track_caller]
fn kept(texts: &[&str]) {
    for text in texts {
        assert_eq!(find(text), [], "{text}");
        assert!(matches!(redact(text).0, Cow::Borrowed(_)), "{text}");
    }
}

#[test]
fn labels_in_markdown_are_caught_and_their_prose_kept() {
    for (text, secret, kept_around) in [
        ("**Password:** Xk9pq2Lm77", "Xk9pq2Lm77", "**Password:** "),
        (
            "**API key**: `a1b2c3d4e5f6g7`",
            "a1b2c3d4e5f6g7",
            "**API key**: `",
        ),
        (
            "- Client secret: q8Xv2Lm9Zr4T",
            "q8Xv2Lm9Zr4T",
            "- Client secret: ",
        ),
        (
            "| DB_PASSWORD | Xk9pq2Lm77 |",
            "Xk9pq2Lm77",
            "| DB_PASSWORD | ",
        ),
        (
            "| API key | `a1b2c3d4e5f6g7` | prod |",
            "a1b2c3d4e5f6g7",
            " | prod |",
        ),
        (
            "<password>Xk9pq2Lm77!</password>",
            "Xk9pq2Lm77!",
            "</password>",
        ),
        ("DB_PASS=Xk9pq2Lm77", "Xk9pq2Lm77", "DB_PASS="),
        ("smtpPass: 'Xk9pq2Lm77'", "Xk9pq2Lm77", "smtpPass: '"),
    ] {
        caught(text, secret, "secret value", &[kept_around]);
    }
    kept(&[
        "**Primary key:** `customer_id_column`",
        "| Name | Type | Notes |\n|---|---|---|\n| api_key | str | the provider's key |",
        "| password_hash | bcrypt(12) |",
        "**The key**: rotate them every 90 days",
        "A public key: ssh-ed25519 comes first",
        "<password>${DB_PASSWORD}</password>",
        "render_pass: pass_2_final",
        "if password || token_missing {",
    ]);
}

#[test]
fn a_value_named_beside_it_is_caught_and_other_pairs_kept() {
    for (text, secret) in [
        (
            "env:\n  - name: DB_PASSWORD\n    value: \"Xk9pq2Lm77\"\n",
            "Xk9pq2Lm77",
        ),
        (
            r#"[{"name": "LOG_LEVEL", "value": "debug"}, {"name": "API_KEY", "value": "a1b2c3d4e5f6g7"}]"#,
            "a1b2c3d4e5f6g7",
        ),
        (
            r#"{"key": "apiKey", "value": "a1b2c3d4e5f6g7", "type": "secret"}"#,
            "a1b2c3d4e5f6g7",
        ),
        (
            r#"<add key="StorageAccountKey" value="q8Xv2Lm9Zr4T+w=="/>"#,
            "q8Xv2Lm9Zr4T+w==",
        ),
    ] {
        caught(text, secret, "secret value", &["value"]);
    }
    kept(&[
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password\n",
        "env:\n  - name: DB_PASSWORD\n    value: ${DB_PASSWORD}\n  - name: LOG_LEVEL\n    value: debug1234\n",
        r#"{"name": "retries", "value": "a1b2c3d4e5f6g7"}"#,
        r#"<add key="PageSize" value="50"/>"#,
    ]);
}

#[test]
fn passwords_on_command_lines_are_caught_and_other_options_kept() {
    for (text, secret) in [
        (
            "curl -u alice:Tr0ub4dor3x https://api.example.com",
            "Tr0ub4dor3x",
        ),
        ("curl --user 'deploy:s3cr3t!' -X POST", "s3cr3t!"),
        ("mysql -h db -u root -pXk9pq2Lm77 shop", "Xk9pq2Lm77"),
        (
            "mysqldump -u app -p'Xk9pq2Lm77' shop > dump.sql",
            "Xk9pq2Lm77",
        ),
        ("sshpass -p 'Xk9pq2Lm77' ssh deploy@web1", "Xk9pq2Lm77"),
        ("redis-cli -h cache -a Xk9pq2Lm77 ping", "Xk9pq2Lm77"),
        (
            "docker login -u alice -p Xk9pq2Lm77 registry.example.com",
            "Xk9pq2Lm77",
        ),
    ] {
        caught(text, secret, "password on a command line", &[]);
    }
    // `--password=VALUE` and `--password VALUE` are a credential's name and its value.
    caught(
        "psql --password=Xk9pq2Lm77 -h db",
        "Xk9pq2Lm77",
        "secret value",
        &["psql --password="],
    );
    kept(&[
        "git push -u origin main",
        "git push -u origin feature:feature",
        "docker run -u 1000:1000 image",
        "curl -u $USER:$TOKEN https://api.example.com",
        "curl -u user:password https://api.example.com",
        "mysql -h db -u root -p shop",
        "mysql -u root -p$MYSQL_ROOT_PASSWORD",
        "mkdir -p build && cargo test -p anvil-debate-core",
        "sshpass -f ~/.pw ssh web1",
        "redis-cli -h cache ping",
        "docker login -u alice --password-stdin < token.txt",
    ]);
}

#[test]
fn netrc_passwords_are_caught_and_prose_about_machines_kept() {
    caught(
        "machine api.example.com login alice password Xk9pq2Lm77",
        "Xk9pq2Lm77",
        "netrc password",
        &["machine api.example.com login alice password "],
    );
    caught(
        "machine git.example.com\n  login deploy\n  password hunter2\n",
        "hunter2",
        "netrc password",
        &["login deploy\n  password "],
    );
    caught(
        "default login anonymous password Xk9pq2Lm77",
        "Xk9pq2Lm77",
        "netrc password",
        &[],
    );
    kept(&[
        "machine example.com login alice password YOUR_PASSWORD",
        "the state machine checks the login password field",
        "login with your password first",
    ]);
}

#[test]
fn a_registrys_auth_in_dockers_config_is_caught_and_other_auths_kept() {
    // base64 of `alice:Xk9pq2Lm77`.
    caught(
        r#"{"auths": {"registry.example.com": {"auth": "YWxpY2U6WGs5cHEyTG03Nw=="}}}"#,
        "YWxpY2U6WGs5cHEyTG03Nw==",
        "registry credentials",
        &[r#"{"auths": {"registry.example.com": {"auth": ""#],
    );
    kept(&[
        r#"{"auth": "oauth2", "scopes": ["read"]}"#,
        // base64 of `no-colon-here`.
        r#"{"auth": "bm8tY29sb24taGVyZQ=="}"#,
    ]);
}

#[test]
fn authorization_headers_of_every_scheme_are_caught() {
    let opaque = "8f3a9c2e7b1d4f60a5e9c3b2d1f0e7a6";
    for (header, kind) in [
        (
            format!("Authorization: token {opaque}"),
            "authorization token",
        ),
        (
            format!("Authorization: Token {opaque}"),
            "authorization token",
        ),
        (
            format!("\"Authorization\": \"Bot {opaque}\""),
            "authorization token",
        ),
        (format!("Authorization: {opaque}"), "authorization token"),
        (
            "authorization: basic YWxhZGRpbjpvcGVuc2VzYW1l".to_owned(),
            "basic auth credentials",
        ),
    ] {
        caught(
            &format!("curl -H '{header}' https://api.example.com"),
            if kind == "basic auth credentials" {
                "YWxhZGRpbjpvcGVuc2VzYW1l"
            } else {
                opaque
            },
            kind,
            &["https://api.example.com"],
        );
    }
    kept(&[
        "Authorization: token ${GITHUB_TOKEN}",
        "Authorization: Digest username=\"alice\", realm=\"api\", nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\"",
        "the Authorization: header carries the token",
        "authorization: required for every call",
    ]);
}

#[test]
fn basic_auth_written_as_code_is_caught() {
    for text in [
        r#"requests.get(url, auth=("alice", "Xk9pq2Lm77"))"#,
        r#"client = httpx.Client(auth = ('alice', 'Xk9pq2Lm77'))"#,
        r#"session.auth = HTTPBasicAuth("alice", "Xk9pq2Lm77")"#,
        r#"client.get(url).basic_auth("alice", Some("Xk9pq2Lm77"))"#,
    ] {
        caught(text, "Xk9pq2Lm77", "basic auth credentials", &["alice"]);
    }
    kept(&[
        r#"requests.get(url, auth=("user", "pass"))"#,
        r#"HTTPBasicAuth(os.environ["USER"], os.environ["PASSWORD"])"#,
        r#".basic_auth(&user, Some(&password))"#,
    ]);
}

#[test]
fn a_password_stated_in_prose_is_caught_and_prose_about_passwords_kept() {
    for (text, secret) in [
        ("the password is hunter2", "hunter2"),
        (
            "The password for the admin account was Tr0ub4dor&3.",
            "Tr0ub4dor&3",
        ),
        ("Its password is now `s3cr3t!x`, rotate it", "s3cr3t!x"),
        ("set the password to 'Xk9pq2Lm77' first", "Xk9pq2Lm77"),
        ("pw: hunt3r!", "hunt3r!"),
        ("| password | hunter2 |", "hunter2"),
    ] {
        caught(text, secret, "password", &[]);
    }
    kept(&[
        "the password reset flow sends a link that expires in 15 minutes",
        "The password is required, at least 12 characters, and is hashed with argon2id.",
        "the password is set by the admin; the password is sha256-hashed; password is case-sensitive",
        "the password was rotated on 2024-05-01 and the password is 8+ characters",
        "if password is None: raise ValueError(\"password is required\")",
        "password == expected and password != \"\"",
        "Passwords are stored hashed; a password manager is recommended.",
    ]);
}

/// What the red team tried as false positives, kept as written: commit ids, UUIDs, lockfile
/// hashes, base64 images, and prose about passwords without one.
#[test]
fn the_false_positive_probes_are_kept() {
    kept(&[
        "commit 3f2a9c1e0b7d4a5f6e7d8c9b0a1f2e3d4c5b6a7f (HEAD -> main)",
        "Anvil-Response: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
        "session 0b3c2a4e-5f60-4718-8293-a4b5c6d7e8f9 and request-id: 6f1c9a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
        r#""integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUR9nYiPcz6xDjSVYw==""#,
        "  integrity sha512-Vd3ZQxZ8mXTIGFUjmD7cs5ZIQJd3nXt5vAb9+9MSJ6UFu8zuR9dm/fWdnFh8I6zJPVCDCbsL9lMAVaGBQH6Lw==",
        "![chart](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
        "The password reset flow emails a one-time link; the password itself never leaves the vault.",
        "Passwords must be at least 12 characters; a password is never logged.",
    ]);
}

/// Ordinary code and prose that mentions keys, tokens and passwords: none of it is a
/// credential, and all of it must reach the record as written.
#[test]
fn ordinary_code_and_prose_are_kept() {
    let keep = [
        // The four a red team found mangled.
        "PRIMARY_KEY: customer_id_column",
        "PARTITION_KEY=tenant_id",
        "CSRF_TOKEN = generate_csrf_token()",
        "password: Optional[str]",
        // Code that names credentials without holding one.
        "password: Optional[str] = None",
        "api_key: str = Field(..., description=\"the provider's key\")",
        "let token = get_token(&config)?;",
        "password = os.environ[\"DB_PASSWORD\"]",
        "SECRET_KEY = env(\"SECRET_KEY\")",
        "apiKey: process.env.OPENAI_API_KEY,",
        "settings.SECRET_KEY = secret_key_from_vault",
        "fn set_password(&mut self, password: &str) {",
        "pub password: SecretString,",
        "token: String,",
        "if token == expected_token {",
        "password_hash = bcrypt(password)",
        "const TOKEN_URL = \"https://oauth2.googleapis.com/token\";",
        "max_tokens: 4096",
        "token_budget = 8000",
        "sort_key: created_at",
        "foreign_key = models.ForeignKey(User, on_delete=models.CASCADE)",
        "idempotency_key = request.headers[\"Idempotency-Key\"]",
        "cache_key = f\"user:{user_id}:profile\"",
        "secretName: db-credentials",
        "valueFrom:\n  secretKeyRef:\n    name: db\n    key: password",
        "--password-file /run/secrets/db_password",
        "\"nextPageToken\": \"CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3\"",
        "\"token_type\": \"bearer\"",
        "\"password\": \"Password\"",
        "PWD=/home/alice/project/src",
        "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        // Placeholders, templates and documentation.
        "DATABASE_URL=postgres://user:password@localhost:5432/app",
        "redis://localhost:6379/0 and postgres://db.internal/prod",
        "DB_PASSWORD=${DB_PASSWORD}",
        "export GITHUB_TOKEN=\"<your token>\"",
        "API_KEY={{ secrets.API_KEY }}",
        "SECRET_KEY=********",
        "password: changeme123",
        "Authorization: Bearer YOUR_ACCESS_TOKEN",
        "Authorization: Bearer ${TOKEN}",
        "headers = {\"Authorization\": \"Bearer \" + token}",
        // URLs and git remotes without credentials.
        "git clone https://github.com/org/repo.git",
        "ssh://git@github.com/org/repo and git@github.com:org/repo.git",
        "see https://example.com/users/@alice:matrix.org for details",
        "[Stripe keys](https://docs.stripe.com/keys) and https://hooks.slack.com/services/...",
        // Prose.
        "Should we adopt sk-learn or ghp_ tokens at all?",
        "a task-force-of-many-words-that-is-not-a-key-at-all-really",
        "sk-thisisjustaverylongwordwithoutanydigitsinsideitatall",
        "xghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 is glued to a letter",
        "AKIAshort and use sk_test keys in CI",
        "commit 3f2a9c1e0b7d and sha256:9f86d081884c7d659a2feaa0c55ad015",
        "the password matters; PASSWORD=short; API_KEY=${API_KEY}; token: <your token>",
        "The key: rotate them yearly. Bearer tokens are opaque strings to the client.",
        "The monkey: a keyboard, a turkey and the secret: we ship on Friday.",
        // anvil's own placeholder, followed by what looks like a value.
        "[redacted: GitHub token]: a1b2c3d4e5 and [redacted: secret value]",
    ];
    for text in keep {
        assert_eq!(find(text), [], "{text}");
        assert!(matches!(redact(text).0, Cow::Borrowed(_)), "{text}");
    }
}

#[test]
fn credential_names_are_told_by_their_last_word() {
    for name in [
        "password",
        "DB_PASSWORD",
        "db_password",
        "clientSecret",
        "client_secret",
        "_authToken",
        "_auth",
        "apiKey",
        "APIKey",
        "api-key",
        "X-Api-Key",
        "apikey",
        "AccountKey",
        "SharedAccessKey",
        "aws_secret_access_key",
        "private_key",
        "csrftoken",
        "GITHUB_TOKEN",
        "passphrase",
        "--password",
        "DB_PASS",
        "smtpPass",
        "db_pw",
        "PW",
    ] {
        assert!(assignments::secret_name(name), "{name}");
    }
    for name in [
        "PRIMARY_KEY",
        "PARTITION_KEY",
        "sort_key",
        "public_key",
        "key",
        "monkey",
        "password_hash",
        "token_type",
        "secret_name",
        "secretName",
        "max_tokens",
        "nextPageToken",
        "page_token",
        "PWD",
        "SharedAccessKeyName",
        "render_pass",
        "bypass",
        "compass",
        "passes",
    ] {
        assert!(!assignments::secret_name(name), "{name}");
    }
}

#[test]
fn the_intake_says_what_it_replaced_where_and_the_config_can_keep_them() {
    let dir = tempfile::tempdir().unwrap();
    let token = format!("ghp_{}", body(36));
    let mut intake = Intake::new(dir.path());
    assert_eq!(intake.clean("the question", "Rotate keys?"), "Rotate keys?");
    assert_eq!(intake.note(), None);
    let question = format!("Is {token} leaked?");
    let clean = intake.clean("the question", &question);
    assert_eq!(clean, "Is [redacted: GitHub token] leaked?");
    let mut position = Some("DB_PASSWORD=hunter2hunter2".to_owned());
    intake.clean_option("--position", &mut position);
    assert_eq!(
        position.as_deref(),
        Some("DB_PASSWORD=[redacted: secret value]")
    );
    let note = intake.note().unwrap();
    assert!(note.contains("GitHub token in the question"), "{note}");
    assert!(note.contains("secret value in --position"), "{note}");
    assert!(note.contains("replaced by [redacted: …]"), "{note}");

    std::fs::write(
        dir.path().join("config.toml"),
        "[secrets]\nredact = false\n",
    )
    .unwrap();
    let mut keeping = Intake::new(dir.path());
    let text = format!("Is {token} leaked?");
    assert_eq!(keeping.clean("steering", &text), text);
    let note = keeping.note().unwrap();
    assert!(note.contains("recorded as it is"), "{note}");
    assert!(note.contains("GitHub token in steering"), "{note}");
    // Read back from such a project's record, it stays too; from another, it is cleaned.
    let record = dir.path().join("record");
    assert_eq!(read_back(&record, text.clone()), text);
    let other = tempfile::tempdir().unwrap();
    assert_eq!(
        read_back(&other.path().join("record"), text),
        "Is [redacted: GitHub token] leaked?"
    );
}

/// What the one pass of `keywords` must say of rule `rule`: one of its keywords in the text,
/// each searched for on its own (in `text` when it holds a capital, else in `lower`), and at
/// the start of a word when the rule says so and the keyword begins with a letter or a digit.
fn mentions_one_by_one(text: &str, lower: &str, rule: &rules::Rule) -> bool {
    rule.keywords.iter().any(|k| {
        let haystack = if k.bytes().any(|b| b.is_ascii_uppercase()) {
            text
        } else {
            lower
        };
        if !rule.word_start || !k.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return haystack.contains(k);
        }
        haystack
            .match_indices(k)
            .any(|(at, _)| rules::at_word_start(text.as_bytes(), at))
    })
}

/// Texts made of the keywords themselves, in any case, glued to letters, underscores or
/// spaces, and of other text.
fn keyword_soup() -> impl Strategy<Value = String> {
    let keywords: Vec<String> = keywords::all().map(str::to_owned).collect();
    let piece = prop_oneof![
        prop::sample::select(keywords.clone()),
        prop::sample::select(keywords).prop_map(|k| k.to_ascii_uppercase()),
        "[a-zA-Z_ .:/=(-]{0,3}",
        "\\PC{0,4}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

#[test]
fn the_one_pass_wakes_a_rule_for_each_of_its_keywords() {
    for (i, rule) in rules::RULES.iter().enumerate() {
        for k in rule.keywords {
            for text in [format!("see {k} here"), format!("x{k}"), k.to_string()] {
                let lower = text.to_ascii_lowercase();
                assert_eq!(
                    keywords::seen(&text, &lower).mentions(i, rule),
                    mentions_one_by_one(&text, &lower, rule),
                    "rule {} ({:?}) on {text:?}",
                    rule.kind,
                    rule.keywords
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testkit::cases(1024)))]

    /// The one pass over a text wakes exactly the rules that searching for each keyword on its
    /// own would.
    #[test]
    fn the_one_pass_wakes_the_rules_the_keywords_searched_one_by_one_do(text in keyword_soup()) {
        let lower = text.to_ascii_lowercase();
        let seen = keywords::seen(&text, &lower);
        for (i, rule) in rules::RULES.iter().enumerate() {
            prop_assert_eq!(
                seen.mentions(i, rule),
                mentions_one_by_one(&text, &lower, rule),
                "rule {} on {:?}",
                rule.kind,
                text
            );
        }
    }

    /// Any text around a credential: no panic, ranges on char boundaries and in order, and a
    /// redacted text holds no credential any more.
    #[test]
    fn redaction_leaves_nothing_to_find(
        text in "\\PC{0,200}",
        key in prop::sample::select(vec![
            format!("ghp_{}", body(36)),
            format!("sk-ant-api03-{}", body(40)),
            "AKIAIOSFODNN7EXAMPLE".to_owned(),
            "postgres://app:Xk9pq2Lm77@db/prod".to_owned(),
            "DB_PASSWORD=hunter2hunter2".to_owned(),
            format!("Bearer {}", body(32)),
            format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----", body(64)),
        ]),
    ) {
        let text = format!("{text} {key} {text}");
        let found = find(&text);
        prop_assert!(!found.is_empty());
        for pair in found.windows(2) {
            prop_assert!(pair[0].range.end <= pair[1].range.start);
        }
        for f in &found {
            prop_assert!(text.is_char_boundary(f.range.start) && text.is_char_boundary(f.range.end));
        }
        let (redacted, kinds) = redact(&text);
        prop_assert_eq!(kinds.len(), found.len());
        prop_assert!(find(&redacted).is_empty(), "{}", redacted);
    }

    /// Any value where a password, a label's value or a command line's password stands: once
    /// redacted, nothing is left to find, and redacting again changes nothing.
    #[test]
    fn values_in_the_wordy_families_redact_once(
        value in "[!-~]{1,24}",
        template in prop::sample::select(vec![
            "the password is {}.",
            "pw: {}",
            "| password | {} |",
            "machine h login u password {}",
            "curl -u alice:{} https://x",
            "mysql -u root -p{} shop",
            "Authorization: token {}",
            "**API key:** {}",
            "- name: DB_PASSWORD\n  value: {}",
            "<password>{}</password>",
            r#"{"auth": "{}"}"#,
        ]),
    ) {
        let text = template.replace("{}", &value);
        let once = redact(&text).0.into_owned();
        prop_assert!(find(&once).is_empty(), "{} -> {}", text, once);
        prop_assert_eq!(redact(&once).0.into_owned(), once);
    }

    /// Any text at all: no panic, and redacting twice changes nothing more.
    #[test]
    fn redaction_is_stable(text in "(\\PC|[=:\"'@/ ]){0,300}") {
        let once = redact(&text).0.into_owned();
        let twice = redact(&once).0.into_owned();
        prop_assert_eq!(once, twice);
    }
}
