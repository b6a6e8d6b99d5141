//! Links the hook binary `anvil-hook` for a fast start.
//!
//! Claude Code starts `anvil-hook stop` at the end of every turn of every session, so its
//! start-up is paid constantly; in a session without a debate it is nearly all the hook costs.
//! On Linux with glibc, `.cargo/config.toml` links every anvil binary statically: no dynamic
//! loader, no libc, libm and libgcc_s to map and bind at each start. Measured side by side
//! (release builds, 400 interleaved runs each, an idle stop, against `true`):
//!
//! | `anvil-hook` linked as | time / `true` |
//! |---|---|
//! | dynamic, PIE (cargo's default) | 1.66x |
//! | dynamic, not PIE | 1.58x |
//! | static PIE (what we ship) | 1.20x |
//! | static, not PIE | 0.97x |
//!
//! A static PIE relocates itself at start (about 0.3 ms here); a position-dependent one is
//! spared that but puts its code at a fixed address. That is "a few tenths of a millisecond",
//! so the hook keeps full address randomisation.
//!
//! Where static linking is not in effect (another libc, or the flag removed), the hook is
//! linked without PIE: there the loader's relocations of a dynamic PIE cost more.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let crt_static = features.split(',').any(|f| f == "crt-static");
    if os == "linux" && env == "gnu" && !crt_static {
        println!("cargo:rustc-link-arg-bin=anvil-hook=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
