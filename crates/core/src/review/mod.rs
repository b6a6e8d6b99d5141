//! Reading the record back: a line's history, the names of debates and revisions,
//! comparisons, reports, and the material a debate is about.

pub mod compare;
pub mod context;
pub mod decision;
pub mod earlier;
pub mod graph;
pub mod history;
pub mod names;
pub mod positions;
pub mod report;
pub mod revision;
