//! `anvil gc`: pack the record as `git gc` does.

use std::path::PathBuf;

use anvil_core::home::Home;
use anvil_core::model::config::Config;
use anvil_core::record::git::Git;
use anvil_core::record::maintenance::{self, Footprint, When};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;

/// Pack the record, so that it stays small and fast to read.
///
/// Objects go into a pack with deltas, refs into packed-refs, and a commit-graph is written.
/// Safe while debates run: nothing a line needs is removed. Uses the `git` binary (never
/// needed by the Stop hook); without it the record stays loose, which costs disk space and
/// nothing else. Commands that write the record, and the Stop hook after a synthesis, run it
/// in the background when it is due (`[gc]` in .anvil/config.toml; `auto = 0` turns that
/// off).
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil gc              pack now
  anvil gc --auto       only when the record needs it")]
pub struct Args {
    /// Only when the record needs it, as `git gc --auto`.
    ///
    /// The record needs it when it holds many loose objects, packs or loose refs. Says nothing
    /// when it does not, or when another maintenance runs.
    #[arg(long)]
    auto: bool,

    /// The record to maintain (default: this project's).
    #[arg(long, hide = true)]
    record: Option<PathBuf>,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// Brings the search index of the project whose record is `record` up to date, when it has
/// one (nobody who never searched pays for an index).
fn catch_up_index(record: &std::path::Path) {
    // Only a project's own record (`.anvil/record`), not one named from elsewhere.
    let Some(home) = Home::of_record(record) else {
        return;
    };
    if home.search_index().is_file()
        && let Ok(opened) = anvil_core::record::store::Record::open(&home.record_dir())
    {
        let _ = crate::memory::index::Index::update(&home, &opened);
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let (record, home) = match args.record {
        Some(path) => (path, None),
        None => {
            let home = ctx.home()?;
            (home.record_dir(), Some(home))
        }
    };
    // Logs of runs started from `anvil serve`, long finished: they are not part of the record.
    let logs = home.map_or(0, |home| {
        anvil_core::line::headless::prune_logs(&home, anvil_core::line::headless::LOG_KEPT)
    });
    if logs > 0 && !args.auto && !args.json {
        say(&format!(
            "anvil: removed {logs} log{} of runs started from `anvil serve` that nothing wrote \
             to for 30 days (.anvil/runs/)",
            if logs == 1 { "" } else { "s" }
        ));
    }
    if !record.join("HEAD").is_file() {
        return Err(CliError::new("no debates recorded yet; nothing to pack"));
    }
    let when = if args.auto {
        // The record is `.anvil/record`: the project's config is beside it.
        let config = match Home::of_record(&record) {
            Some(home) => Config::load(&home)?,
            None => Config::default(),
        };
        When::IfDue(config.gc_limits())
    } else {
        When::Always
    };
    let Some(git) = Git::find() else {
        if args.auto {
            // Nothing packed without git (started by hand, it stays as quiet), but the index
            // is still brought up to date.
            catch_up_index(&record);
            return Ok(());
        }
        return Err(CliError::new(
            "cannot pack the record: packing uses the `git` binary, and there is none on the PATH",
        )
        .hint(
            "the record stays loose, which costs disk space and nothing else; install git (or \
             name one with ANVIL_GIT) and run `anvil gc` again",
        ));
    };
    let outcome = maintenance::gc(&record, when, &git).map_err(|e| match e {
        maintenance::MaintenanceError::Busy(_) => CliError::from_display(e)
            .hint("wait for it to finish; a maintenance that was killed holds no lock"),
        other => CliError::from_display(other),
    })?;
    // The search index, where someone searches, is brought up to date too, after the packing
    // (a cache: if that fails, the next search does it).
    catch_up_index(&record);
    let Some(outcome) = outcome else {
        if args.json {
            return out(&format!(
                "{{\n  \"packed\": false,\n  \"run_logs_removed\": {logs}\n}}\n"
            ));
        }
        return Ok(());
    };
    let (b, a) = (outcome.before, outcome.after);
    if args.auto && !args.json {
        // Run in the background, or by hand as `git gc --auto` is: it did its job quietly.
        return Ok(());
    }
    if args.json {
        let side = |f: Footprint| {
            serde_json::json!({
                "loose_objects": f.loose_objects,
                "packs": f.packs,
                "bytes": f.bytes,
            })
        };
        return out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "packed": true,
                "before": side(b),
                "after": side(a),
                "run_logs_removed": logs,
            }))
            .expect("JSON")
        ));
    }
    let sizes = format!(
        "{} loose objects in {} packs, {} -> {} loose objects in {} packs, {}",
        b.loose_objects,
        b.packs,
        human(b.bytes),
        a.loose_objects,
        a.packs,
        human(a.bytes)
    );
    say(&format!("anvil: record packed: {sizes}"));
    Ok(())
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}
