//! The project around the record: init, install, doctor, maintenance, sharing through a git
//! remote, prompts and shell completions.

pub mod completions;
pub mod doctor;
pub mod gc;
pub mod init;
pub mod install;
pub mod prompts;
pub mod push;
