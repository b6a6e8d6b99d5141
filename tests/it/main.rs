//! One integration-test binary: every suite is a module, so the crate links once.
mod e2e_ask;
mod e2e_branch;
mod e2e_cap;
mod e2e_core;
mod e2e_options;
mod e2e_plugin;
mod e2e_run;
mod e2e_serve;
mod history_cli;
mod hook_cli;
mod install_cli;
mod model_server_selftest;
mod options_cli;
mod serve_api;
mod serve_browser;
mod support;
