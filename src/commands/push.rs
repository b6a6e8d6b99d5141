//! `anvil push` and `anvil pull`: share debates through a git remote.

use anvil_core::line::remote::{self, Moved, Synced};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::view;

/// Send this project's debates to a git remote: only `refs/anvil/*` moves, never a branch or
/// a tag. A line that diverged on the remote is sent beside it as LINE-from-YOU, never
/// forced. Uses the `git` binary for the transport.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A remote of the project's git repository, a URL, or a path (default: origin).
    remote: Option<String>,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// Bring a git remote's debates into this project: only `refs/anvil/*` moves. A line that
/// diverged is kept beside yours as LINE-from-REMOTE, so `anvil log` shows both; pulled
/// debates read, diff, report and branch like local ones, and `anvil resume` restores a line's
/// live files to continue it. Uses the `git` binary for the transport.
#[derive(Debug, clap::Args)]
pub struct PullArgs {
    /// A remote of the project's git repository, a URL, or a path (default: origin).
    remote: Option<String>,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = view::record(&home)?;
    let remote = remote::find(&home, args.remote.as_deref())?;
    let synced = remote::push(&home, &record, &remote)?;
    report("pushed to", &remote, &synced, args.json)
}

pub fn run_pull(ctx: &Ctx, args: PullArgs) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = anvil_core::line::transaction::open_record(&home)?;
    let remote = remote::find(&home, args.remote.as_deref())?;
    let synced = remote::pull(&home, &record, &remote)?;
    report("pulled from", &remote, &synced, args.json)
}

fn report(
    verb: &str,
    remote: &remote::Remote,
    synced: &Synced,
    json: bool,
) -> Result<(), CliError> {
    if json {
        let moved: Vec<serde_json::Value> = synced
            .moved
            .iter()
            .map(|m| match m {
                Moved::Created(l) => serde_json::json!({"line": l.to_string(), "how": "created"}),
                Moved::FastForwarded(l) => {
                    serde_json::json!({"line": l.to_string(), "how": "fast-forward"})
                }
                Moved::KeptBeside(l, beside) => serde_json::json!({
                    "line": l.to_string(), "how": "kept-beside", "as": beside.to_string()
                }),
            })
            .collect();
        return out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "remote": remote.url,
                "name": remote.name,
                "moved": moved,
                "unchanged": synced.unchanged,
                "skipped_live": synced.skipped_live.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
            }))
            .expect("JSON")
        ));
    }
    let mut text = String::new();
    for m in &synced.moved {
        text.push_str(&match m {
            Moved::Created(l) => format!("  new           {l}\n"),
            Moved::FastForwarded(l) => format!("  fast-forward  {l}\n"),
            Moved::KeptBeside(l, beside) => {
                format!("  diverged      {l}: the other history is kept as {beside}\n")
            }
        });
    }
    for l in &synced.skipped_live {
        text.push_str(&format!(
            "  not moved     {l}: it is being debated here (its live files are here)\n"
        ));
    }
    say(&format!(
        "anvil: {verb} {} ({}): {} line{} moved, {} unchanged",
        remote.name,
        remote.url,
        synced.moved.len(),
        if synced.moved.len() == 1 { "" } else { "s" },
        synced.unchanged
    ));
    out(&text)
}
