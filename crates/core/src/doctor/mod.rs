//! `anvil doctor`: is anvil wired into Claude Code, is the record sound, where do debates stand.
//!
//! Every check reads; none writes. Each finding says what was seen, how bad it is and what to
//! do, and carries a [`Fix`] when the repair loses nothing: a ref lock a killed anvil left
//! (told apart from other programs' locks by who made it, never by age; those are never
//! removed), a temporary file no process can still be using (older than a minute), live files
//! that lag behind the record (rebuilt from it, under the line's lock), an anvil command file
//! of an older version.
//! [`repair`] applies those fixes; anything else is left for the user, with a hint.

mod client;
mod debates;
mod distribution;
mod environment;
mod examine;
mod finding;
mod hook_timeout;
mod hosts;
mod installation;
mod record;
mod repair;
mod seats;

pub use environment::{Environment, find_on_path};
pub use examine::examine;
pub use finding::{Finding, Fix, Level};
pub use repair::repair;
pub use seats::seats;
