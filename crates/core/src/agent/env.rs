//! What a seat's process is given of anvil's environment: what any program needs to run
//! (`PATH`, `HOME`, the locale, the temporary folder, proxies and certificates), what its own
//! agent reads ([`Agent::env`], said in the agent's file), and what the config passes on top
//! (`[seats] env`). Nothing else: not another provider's API key, and never a variable of the
//! host session (Claude Code's `CLAUDECODE`, `CLAUDE_PROJECT_DIR`, `CLAUDE_CODE_SESSION_ID`,
//! …, `AI_AGENT`) or of anvil itself (`ANVIL_*`, but the `ANVIL_SEAT` it sets), which would
//! make the seat's agent take itself for part of the host's session or of anvil's.
//!
//! A name ending in `*` stands for every variable it begins (`ANTHROPIC_*`).
//!
//! One of anvil's own passes: the variable an endpoint's key is read from
//! ([`super::endpoint::Endpoint::key_env`], often `ANVIL_<NAME>_API_KEY`), to the seat of that
//! endpoint alone. Its process is `anvil endpoint-turn`, anvil itself, which sends the key to
//! that endpoint and nowhere else; the variable was checked, when the seat was named, to be
//! the endpoint's own or its provider's at its provider's host. An agent CLI's file or the
//! config cannot pass one of anvil's variables this way.

use std::ffi::OsString;

use super::Agent;

/// What every program needs, whichever agent it is.
pub const BASE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "NO_COLOR",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_*",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "NODE_OPTIONS",
];

/// The host session's variables and anvil's own: never given to a seat, whatever an agent's
/// file or the config says.
pub const NEVER: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_ENV_FILE",
    "CLAUDE_PLUGIN_ROOT",
    "CLAUDE_PLUGIN_DATA",
    "AI_AGENT",
    "GEMINI_SESSION_ID",
    "GEMINI_PROJECT_DIR",
    "ANVIL_*",
];

/// Does `name` match `pattern` (a name, or a prefix ending in `*`)?
pub fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Checks a name or pattern of `[seats] env`: letters, digits and `_`, maybe ending in `*`.
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    let name = pattern.strip_suffix('*').unwrap_or(pattern);
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{pattern}` is not the name of an environment variable (letters, digits and `_`, \
             or a prefix ending in `*`)"
        ))
    }
}

/// The variables of `vars` (this process's environment) that a seat of `agent` playing
/// `model` is given, with `pass` (the config's `[seats] env`) on top.
pub fn for_seat(
    agent: &dyn Agent,
    model: Option<&str>,
    pass: &[String],
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let own = agent.env(model);
    let key = agent.endpoint().and_then(|e| e.key_env());
    let wanted = |name: &str| {
        key == Some(name)
            || !NEVER.iter().any(|p| matches(p, name))
                && (BASE.iter().any(|p| matches(p, name))
                    || own.iter().any(|p| matches(p, name))
                    || pass.iter().any(|p| matches(p, name)))
    };
    vars.filter(|(name, _)| name.to_str().is_some_and(wanted))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seat_gets_what_its_agent_reads_and_never_the_hosts_variables() {
        let codex = super::super::find("codex").unwrap();
        let vars = [
            ("PATH", "/bin"),
            ("LC_ALL", "C"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("CLAUDECODE", "1"),
            ("CLAUDE_PROJECT_DIR", "/p"),
            ("AI_AGENT", "claude-code_2-1-332_harness"),
            ("ANVIL_SEAT_TIMEOUT", "30"),
            ("ANVIL_PASSED", "no"),
            ("MY_GATEWAY_TOKEN", "passed"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let given = for_seat(
            codex,
            None,
            &["MY_GATEWAY_*".to_owned(), "ANVIL_PASSED".to_owned()],
            vars.into_iter(),
        );
        let names: Vec<&str> = given.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(
            names,
            ["PATH", "LC_ALL", "OPENAI_API_KEY", "MY_GATEWAY_TOKEN"]
        );
    }

    #[test]
    fn an_endpoint_seat_gets_its_own_key_and_no_other() {
        let mut defs = super::super::endpoint::Defs::new();
        defs.insert(
            "mygw".to_owned(),
            super::super::endpoint::Def {
                base_url: Some("https://gw.example/v1".to_owned()),
                api_key_env: Some("ANVIL_MYGW_API_KEY".to_owned()),
                model: None,
            },
        );
        let mygw = super::super::endpoint::resolve("mygw", &defs)
            .unwrap()
            .unwrap();
        let vars = [
            ("PATH", "/bin"),
            ("ANVIL_MYGW_API_KEY", "sk-gw"),
            ("ANVIL_OTHER_API_KEY", "sk-other"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("CLAUDECODE", "1"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let names = |agent: &dyn Agent| {
            for_seat(agent, None, &[], vars.clone().into_iter())
                .into_iter()
                .map(|(k, _)| k.into_string().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(mygw), ["PATH", "ANVIL_MYGW_API_KEY"]);
        // An agent CLI is never given an endpoint's key.
        let codex = super::super::find("codex").unwrap();
        assert_eq!(names(codex), ["PATH", "OPENAI_API_KEY"]);
    }

    #[test]
    fn only_names_of_variables_are_passed() {
        assert!(check_pattern("AWS_*").is_ok());
        assert!(check_pattern("MY_TOKEN").is_ok());
        for bad in ["", "*", "A B", "1X", "X=1", "$X"] {
            assert!(check_pattern(bad).is_err(), "{bad}");
        }
    }
}
