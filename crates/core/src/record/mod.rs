//! The record: a bare git repository under `.anvil/record`, one commit per phase transition.

pub mod delta;
pub mod maintenance;
pub mod recent;
pub mod schema;
pub mod store;
