//! The debate as data: its setup and progress, the pure state machine that moves it, the
//! markers read from a debater's text, and the prompts it is given.

pub mod config;
pub mod machine;
pub mod markers;
pub mod options;
pub mod positions;
pub mod prompt;
pub mod provenance;
pub mod seats;
pub mod secrets;
pub mod spend;
pub mod state;
pub mod transcript;
pub mod vote;
