//! A local model in LM Studio as a seat (`--seat critic=lmstudio:qwen2.5-7b-instruct`): the
//! OpenAI-compatible API of its local server at `http://127.0.0.1:1234/v1` (LM Studio's
//! default port), no key, played by anvil itself (see [`super::endpoint`]).

use super::About;
use super::endpoint::Endpoint;

pub(super) static LMSTUDIO: Endpoint = Endpoint::preset(
    &About {
        name: "lmstudio",
        title: "LM Studio (local)",
        allowed: super::endpoint::ALLOWED,
        env: &[],
        env_more: super::endpoint::ENV_MORE,
    },
    "http://127.0.0.1:1234/v1",
    None,
    "start its server (`lms server start`, or the Developer tab) and load the model",
);
