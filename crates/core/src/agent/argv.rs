//! The values anvil puts on an agent's command line (a model's name, a session's id) are
//! anvil's, not the repository's: a committed `.anvil/config.toml` or a record names them, and
//! an agent CLI reads any argument that starts with `-` as an option of its own (Qwen Code
//! takes `-m --openai-base-url=URL` as a base URL, and sends the person's key there). So a value
//! is refused unless it is plainly a value, and each agent's file passes it glued to its flag
//! (`--model=VALUE`) where the agent reads that form, or after `--`.

/// The characters of a model's name across the agents' catalogues (`gpt-5.4`,
/// `claude-sonnet-4-5@20250929`, `openrouter/meta-llama/llama-3.1-8b:free`, `sonnet[1m]`).
fn model_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._:/@+-[]".contains(c)
}

/// The longest model name taken.
const MODEL_MAX: usize = 200;

/// A model's name that no agent can read as an option or as two arguments.
pub fn check_model(model: &str) -> Result<(), String> {
    if model.is_empty() || model.len() > MODEL_MAX {
        return Err(format!(
            "a model's name has 1 to {MODEL_MAX} characters, not {}",
            model.len()
        ));
    }
    if model.starts_with('-') {
        return Err(format!(
            "the model `{}` starts with `-`, which the agent would read as an option of its own",
            visible(model)
        ));
    }
    if let Some(c) = model.chars().find(|&c| !model_char(c)) {
        return Err(format!(
            "the model `{}` holds {c:?}; a model's name is letters, digits and . _ : / @ + - [ ]",
            visible(model)
        ));
    }
    Ok(())
}

/// A session id that anvil made or an agent reported: a UUID (`0199…-…`), as Claude Code,
/// Codex, Copilot, Qwen Code and Gemini CLI name their sessions.
pub fn check_uuid(id: &str) -> Result<(), String> {
    let groups: Vec<&str> = id.split('-').collect();
    let shape = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()));
    if shape {
        Ok(())
    } else {
        Err(format!("the session `{}` is not a UUID", visible(id)))
    }
}

/// `text` cut short and with control characters shown as escapes, for an error message.
fn visible(text: &str) -> String {
    let cut: String = text.chars().take(80).collect();
    let shown = cut.escape_debug().to_string();
    if text.chars().count() > 80 {
        format!("{shown}…")
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_a_plain_value_never_an_option() {
        for good in [
            "gpt-5.4",
            "opus",
            "sonnet[1m]",
            "claude-sonnet-4-5@20250929",
            "openrouter/meta-llama/llama-3.1-8b:free",
            "qwen3-coder-plus",
        ] {
            assert_eq!(check_model(good), Ok(()), "{good}");
        }
        let e = check_model("--openai-base-url=http://elsewhere/v1").unwrap_err();
        assert!(e.contains("starts with `-`"), "{e}");
        for bad in [
            "",
            "-m",
            "a b",
            "x\ny",
            "a=b",
            "$(x)",
            "a;b",
            &"m".repeat(201),
        ] {
            assert!(check_model(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_session_is_a_uuid() {
        assert!(check_uuid("0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b").is_ok());
        for bad in [
            "",
            "--resume",
            "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5",
            "0199a1b2c3d47e5f8a9b0c1d2e3f4a5b",
            "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g",
        ] {
            assert!(check_uuid(bad).is_err(), "{bad}");
        }
    }
}
