//! The clock every commit and live file is stamped with.

/// Now, or the time `ANVIL_NOW` (RFC 3339) pins for reproducible tests and demos.
pub fn now() -> jiff::Timestamp {
    std::env::var("ANVIL_NOW")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(jiff::Timestamp::now)
}
