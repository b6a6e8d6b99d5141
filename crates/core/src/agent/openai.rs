//! OpenAI's own API as a seat (`--seat critic=openai:gpt-5.4`): an endpoint anvil plays
//! itself (see [`super::endpoint`]), at `https://api.openai.com/v1`, the key in
//! `$OPENAI_API_KEY`. `[agents.openai]` in the config moves it (an Azure or company gateway
//! that speaks the same API); its key is then the gateway's own variable.

use super::About;
use super::endpoint::Endpoint;

pub(super) static OPENAI: Endpoint = Endpoint::preset(
    &About {
        name: "openai",
        title: "OpenAI API (Chat Completions)",
        allowed: super::endpoint::ALLOWED,
        env: &[],
        env_more: super::endpoint::ENV_MORE,
    },
    "https://api.openai.com/v1",
    Some("OPENAI_API_KEY"),
    "a key from platform.openai.com, in $OPENAI_API_KEY",
);
