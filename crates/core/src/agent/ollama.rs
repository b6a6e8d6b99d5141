//! A local model in Ollama as a seat (`--seat critic=ollama:llama3.1`): its OpenAI-compatible
//! API at `http://127.0.0.1:11434/v1` (the port `ollama serve` listens on), no key, played by
//! anvil itself (see [`super::endpoint`]). Nothing leaves the machine.

use super::About;
use super::endpoint::Endpoint;

pub(super) static OLLAMA: Endpoint = Endpoint::preset(
    &About {
        name: "ollama",
        title: "Ollama (local)",
        allowed: super::endpoint::ALLOWED,
        env: &[],
        env_more: super::endpoint::ENV_MORE,
    },
    "http://127.0.0.1:11434/v1",
    None,
    "start it with `ollama serve`, and pull the model with `ollama pull MODEL`",
);
