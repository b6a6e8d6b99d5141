//! OpenRouter as a seat (`--seat critic=openrouter:meta-llama/llama-3.3-70b-instruct`): its
//! whole catalogue behind one OpenAI-compatible API, played by anvil itself (see
//! [`super::endpoint`]) at `https://openrouter.ai/api/v1`, the key in `$OPENROUTER_API_KEY`.
//! OpenRouter reports each request's price in its usage (`usage.cost`, in dollars), which the
//! record keeps as the phase's cost.

use super::About;
use super::endpoint::Endpoint;

pub(super) static OPENROUTER: Endpoint = Endpoint::preset(
    &About {
        name: "openrouter",
        title: "OpenRouter",
        allowed: super::endpoint::ALLOWED,
        env: &[],
        env_more: super::endpoint::ENV_MORE,
    },
    "https://openrouter.ai/api/v1",
    Some("OPENROUTER_API_KEY"),
    "a key from openrouter.ai/keys, in $OPENROUTER_API_KEY",
);
