//! One integration-test binary: every suite is a module, so the crate links once.
mod support;
