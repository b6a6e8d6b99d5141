//! Everything that changes a line, each change one [`transaction`] under the line's lock.

pub mod active;
pub mod ask;
pub mod control;
pub mod headless;
pub mod remote;
pub mod restore;
pub mod start;
pub mod stop;
pub mod transaction;
