//! The record: a bare git repository under `.anvil/record`, one commit per phase transition.

pub mod git;
pub mod maintenance;
pub mod recent;
pub(crate) mod ref_lock;
pub mod schema;
pub mod stamp;
pub mod stance;
pub mod store;
pub mod usage;
