//! Fault injection for the tests that prove the record's guarantees: the hook must leave a
//! state from which the next delivery records every phase exactly once, wherever it dies.
//!
//! Every place that writes something the record or the live files depend on calls [`point`].
//! In a debug build (what `cargo test` runs), `ANVIL_FAULT_AT=N` makes the N-th point reached
//! by the process fail: with `ANVIL_FAULT=abort` (the default) the process aborts on the spot,
//! as a `kill -9` would leave it; with `ANVIL_FAULT=full` the write fails as on a full disk.
//! Either way it first says which point it was on stderr. Release builds have no fault points.

/// A write is about to happen at `name`.
#[cfg(debug_assertions)]
pub fn point(name: &str) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static REACHED: AtomicU32 = AtomicU32::new(0);
    let Some(at) = std::env::var("ANVIL_FAULT_AT")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
    else {
        return Ok(());
    };
    let n = REACHED.fetch_add(1, Ordering::SeqCst) + 1;
    if n != at {
        return Ok(());
    }
    let full = std::env::var("ANVIL_FAULT").is_ok_and(|k| k == "full");
    eprintln!("anvil: fault injected at point {n} ({name})");
    if full {
        return Err(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "no space left on device (injected)",
        ));
    }
    std::process::abort()
}

/// A write is about to happen at `name` (no fault points in release builds).
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn point(_name: &str) -> std::io::Result<()> {
    Ok(())
}
