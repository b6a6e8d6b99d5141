//! `anvil doctor`: check the installation, the record and the active debates.

use anvil_core::doctor::{Environment, Finding, Level};

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;

/// Check the wiring into Claude Code, the record, and the active debates.
///
/// Installation: the hooks in Claude Code's settings, `anvil` and `anvil-hook` on PATH, whether
/// Claude Code honours the project's permissions (it ignores them until the workspace is
/// trusted), the block cap. Record: every object reachable from the debates' lines is read
/// and checked against its id; stale locks and temporary files; live files against the
/// record; phase texts left unrecorded. Where each active debate stands. Exits 1 when
/// something is broken.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil doctor             what is wrong, and what to do about it
  anvil doctor --fix       repair what can be repaired without losing anything")]
pub struct Args {
    /// Repair what can be repaired without losing anything.
    ///
    /// Removes stale locks and temporary files (older than a minute), rolls live files that lag
    /// behind forward from the record, rewrites anvil's own outdated command files.
    #[arg(long)]
    fix: bool,

    /// Print JSON for scripts.
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let env = Environment::current(ctx.cwd.clone());
    let mut findings = anvil_core::doctor::examine(&env);
    // Which agents could take a seat (`--seat ROLE=AGENT`): never a failure, only notes.
    findings.extend(anvil_core::doctor::seats());
    if args.fix {
        anvil_core::doctor::repair(&env, &mut findings);
    }
    let worst = findings.iter().map(|f| f.level).max().unwrap_or(Level::Ok);
    if args.json {
        let json = serde_json::json!({
            "ok": worst < Level::Fail,
            "findings": findings,
        });
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json).expect("JSON")
        ))?;
    } else {
        out(&human(&findings, args.fix))?;
    }
    if worst == Level::Fail {
        return Err(CliError::new(
            "anvil doctor found problems (marked FAIL above)",
        ));
    }
    Ok(())
}

fn human(findings: &[Finding], fixing: bool) -> String {
    let mut text = String::new();
    let mut area = "";
    for f in findings {
        if f.area != area {
            area = f.area;
            if !text.is_empty() {
                text.push('\n');
            }
            let mut title = area.to_owned();
            title[..1].make_ascii_uppercase();
            text.push_str(&format!("{title}\n"));
        }
        let label = match f.level {
            Level::Ok => "ok  ",
            Level::Note => "note",
            Level::Warn => "WARN",
            Level::Fail => "FAIL",
        };
        // Messages quote questions, paths and settings: shown, never obeyed by the terminal.
        let visible = |t: &str| crate::term::visible(t).into_owned();
        text.push_str(&format!("  {label}  {}\n", visible(&f.message)));
        if let Some(fixed) = &f.fixed {
            text.push_str(&format!("        fix: {}\n", visible(fixed)));
        } else if let Some(hint) = &f.hint {
            text.push_str(&format!("        hint: {}\n", visible(hint)));
        }
    }
    let fixable = findings
        .iter()
        .filter(|f| f.fix.is_some() && f.fixed.is_none())
        .count();
    if fixable > 0 && !fixing {
        text.push_str(&format!(
            "\n{fixable} of these can be repaired without losing anything: `anvil doctor --fix`\n"
        ));
    }
    text
}
