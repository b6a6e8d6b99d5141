//! Links the `anvil` binary as a position-dependent executable on Linux with glibc.
//!
//! Claude Code starts `anvil hook stop` at the end of every turn of every session, so the
//! binary's start-up is paid constantly. A position-independent executable of this size carries
//! about 30,000 relative relocations that the dynamic loader applies, page by page, before
//! `main` runs; linked without PIE they are resolved at link time. `cargo bench --bench hook`
//! measured the start-up at about two thirds of the PIE build's. The cost: the executable's
//! own code is not placed at a random address (its libraries, stack and heap still are).

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
