//! `anvil gc`: pack the record as `git gc` does.

use std::path::PathBuf;

use anvil::maintenance;

use super::{CliError, Ctx, out, say};

/// Pack the record: objects into a pack with deltas, refs into packed-refs, and a
/// commit-graph, so that it stays small and fast to read as debates accumulate. Safe while
/// debates run: nothing a line needs is removed. Uses the `git` binary (never needed by the
/// Stop hook). Commands that write the record run it in the background when it is due.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only when the record needs it (many loose objects or packs), as `git gc --auto`.
    #[arg(long)]
    auto: bool,

    /// The record to maintain (default: this project's).
    #[arg(long, hide = true)]
    record: Option<PathBuf>,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let record = match args.record {
        Some(path) => path,
        None => ctx.home()?.record_dir(),
    };
    if !record.join("HEAD").is_file() {
        return Err(CliError::new("no debates recorded yet; nothing to pack"));
    }
    let outcome = maintenance::gc(&record, args.auto).map_err(|e| match e {
        maintenance::MaintenanceError::NoGit => CliError::new(e.to_string())
            .hint("the Stop hook never needs git; only packing the record does"),
        other => CliError::from_display(other),
    })?;
    let Some(outcome) = outcome else {
        if !args.auto {
            say("anvil: nothing to do");
        }
        return Ok(());
    };
    if args.json {
        let side = |f: maintenance::Footprint| {
            serde_json::json!({
                "loose_objects": f.loose_objects,
                "packs": f.packs,
                "bytes": f.bytes,
            })
        };
        return out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "before": side(outcome.before),
                "after": side(outcome.after),
            }))
            .expect("JSON")
        ));
    }
    let (b, a) = (outcome.before, outcome.after);
    say(&format!(
        "anvil: record packed: {} loose objects in {} packs, {} -> {} loose objects in {} packs, {}",
        b.loose_objects,
        b.packs,
        human(b.bytes),
        a.loose_objects,
        a.packs,
        human(a.bytes)
    ));
    Ok(())
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}
