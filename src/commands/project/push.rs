//! `anvil push` and `anvil pull`: share debates through a git remote.

use anvil_core::line::remote::{self, Moved, Synced};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;
use crate::view;

/// Send this project's debates to a git remote.
///
/// Only `refs/anvil/*` moves, never a branch or a tag. A line that diverged on the remote is
/// sent beside it as LINE-from-YOU, never forced. Uses the `git` binary for the transport.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil push                  to the project's origin
  anvil push ../shared.git    to a path or URL")]
pub struct Args {
    /// A remote of the project's git repository, a URL, or a path (default: origin).
    remote: Option<String>,

    /// Send commits that hold what looks like a credential.
    ///
    /// Such commits were recorded before anvil redacted credentials, or pulled; by default the
    /// push is refused.
    #[arg(long)]
    allow_secrets: bool,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// Bring a git remote's debates into this project.
///
/// Only `refs/anvil/*` moves. A line that diverged is kept beside yours as LINE-from-REMOTE, so
/// `anvil log` shows both; pulled debates read, diff, report and branch like local ones, and
/// `anvil resume` restores a line's live files to continue it. Uses the `git` binary for the
/// transport.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil pull                  from the project's origin
  anvil pull && anvil log     then see what came")]
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
    let synced = remote::push(&home, &record, &remote, !args.allow_secrets)?;
    report("pushed to", &remote, &synced, args.json, false)
}

pub fn run_pull(ctx: &Ctx, args: PullArgs) -> Result<(), CliError> {
    let home = ctx.home()?;
    let record = anvil_core::line::transaction::open_record(&home)?;
    let remote = remote::find(&home, args.remote.as_deref())?;
    let synced = remote::pull(&home, &record, &remote)?;
    report("pulled from", &remote, &synced, args.json, true)
}

fn report(
    verb: &str,
    remote: &remote::Remote,
    synced: &Synced,
    json: bool,
    pulled: bool,
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
                "remote": remote.shown,
                "name": remote.name,
                "moved": moved,
                "unchanged": synced.unchanged,
                "skipped_live": synced.skipped_live.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
                "refused": synced.refused.iter().map(|r| serde_json::json!({
                    "ref": r.name, "reason": r.reason,
                })).collect::<Vec<_>>(),
            }))
            .expect("JSON")
        ))
        .and_then(|()| refused(remote, synced, pulled));
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
    for r in &synced.refused {
        text.push_str(&format!(
            "  refused       {}: {}\n",
            crate::term::visible(&r.name),
            crate::term::visible(&r.reason)
        ));
    }
    say(&format!(
        "anvil: {verb} {} ({}): {} line{} moved, {} unchanged",
        remote.name,
        remote.shown,
        synced.moved.len(),
        if synced.moved.len() == 1 { "" } else { "s" },
        synced.unchanged
    ));
    out(&text).and_then(|()| refused(remote, synced, pulled))
}

/// A pull exits 1 when the remote held refs that are not debates (everything else went
/// through); a push only says so, since it sent what it had.
fn refused(remote: &remote::Remote, synced: &Synced, pulled: bool) -> Result<(), CliError> {
    match synced.refused.len() {
        0 => Ok(()),
        n if !pulled => {
            say(&format!(
                "anvil: note: {n} ref{} under refs/anvil/ of {} hold no debate; left alone",
                if n == 1 { "" } else { "s" },
                remote.shown
            ));
            Ok(())
        }
        n => Err(CliError::new(format!(
            "{n} ref{} of {} hold no debate anvil can read and were left alone",
            if n == 1 { "" } else { "s" },
            remote.shown
        ))
        .hint(
            "someone pushed something other than an anvil debate under refs/anvil/; \
             delete it there (`git push REMOTE :REF`) or ignore this",
        )),
    }
}
