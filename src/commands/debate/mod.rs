//! Running a debate and steering it: start, run, steer, ask, cancel, resume, branch, status,
//! and the agents that can take a seat.

pub mod ask;
pub mod branch;
pub mod cancel;
pub mod resume;
pub mod run;
pub mod seats;
pub mod start;
pub mod status;
pub mod steer;
