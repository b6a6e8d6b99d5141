//! Shared helpers for the integration tests.
#![allow(dead_code)]

pub mod agents;
pub mod anvil;
pub mod claude;
pub mod fake_agent;
pub mod fake_qwen;
pub mod gemini;
pub mod model_server;
pub mod npm_registry;
pub mod openai;
pub mod processes;
pub mod serve;
pub mod snap;
pub mod tmux;
