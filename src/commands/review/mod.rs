//! Reading the record: log, show, diff, replay, report, decision records and search.

pub mod adr;
pub mod diff;
pub mod log;
pub mod replay;
pub mod report;
pub mod search;
pub mod show;
