//! `anvil install` / `anvil uninstall`: merge anvil into Claude Code's settings, or take it out.

use std::io::IsTerminal;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::say;

/// Wire anvil into Claude Code: hooks, slash commands, MCP server.
///
/// Adds the hooks, the slash commands (/anvil, /anvil-status, /anvil-cancel, /anvil-steer),
/// the MCP server (`anvil mcp`, in the project's .mcp.json), the permissions and the block cap.
/// Writes `.claude/settings.json` and `.claude/commands/` of the project (or of your user with
/// `--user`), keeping every entry of your own. Running it again changes nothing. The hooks
/// call `anvil-hook` by name and the commands `anvil`, so no path of this machine goes into a
/// file your team shares: both must be on the PATH Claude Code starts with (`anvil doctor`
/// checks). A CLAUDE_CODE_STOP_HOOK_BLOCK_CAP of yours that is high enough stays; a lower one
/// is raised, and `anvil uninstall` puts it back.
///
/// Without --agent, the other agents that host debates and are found here (on the PATH, or
/// named by ANVIL_<AGENT>_BIN) are offered: at a terminal it asks which to wire (Enter: Claude
/// Code); otherwise it wires Claude Code and names the others, each with its command.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil install                 this project (.claude/ and .mcp.json, for your team to commit)
  anvil install --user          every project of yours (~/.claude)
  anvil install --agent qwen    this project's Qwen Code (.qwen/settings.json, /anvil)
  anvil doctor                  check what it wired")]
pub struct Args {
    /// Install into ~/.claude for every project instead of this one.
    #[arg(long)]
    user: bool,

    #[arg(long, value_name = "AGENT", help = agent_help())]
    agent: Option<String>,
}

/// Remove what `anvil install` added, leaving your own settings as they are.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil uninstall          this project
  anvil uninstall --user   your user's settings
  anvil uninstall --agent qwen   this project's Qwen Code")]
pub struct UninstallArgs {
    /// Uninstall from ~/.claude instead of this project.
    #[arg(long)]
    user: bool,

    #[arg(long, value_name = "AGENT", help = uninstall_agent_help())]
    agent: Option<String>,
}

/// `install --agent`'s help, made from the agents that host a debate.
fn agent_help() -> String {
    format!(
        "Wire another agent that hosts debates through its own hook or plugin, in this \
         project: {}. Default: Claude Code",
        anvil_core::agent::host::described()
    )
}

/// `uninstall --agent`'s help, made from the agents that host a debate.
fn uninstall_agent_help() -> String {
    format!(
        "Take anvil out of another agent's settings in this project ({})",
        host_names()
    )
}

/// The names of the agents that host a debate beside Claude Code: `codex, copilot, …`.
fn host_names() -> String {
    let names: Vec<&str> = anvil_core::agent::host::hosts()
        .map(|h| h.agent().name())
        .collect();
    names.join(", ")
}

/// The host `--agent` names, `None` for Claude Code.
fn host(
    agent: Option<&str>,
    user: bool,
) -> Result<Option<&'static dyn anvil_core::agent::host::Host>, CliError> {
    let Some(name) = agent.filter(|n| *n != "claude") else {
        return Ok(None);
    };
    let host = anvil_core::agent::host::find(name).ok_or_else(|| {
        CliError::new(format!("anvil cannot be installed into `{name}`"))
            .hint(format!(
                "the agents that host a debate: claude, {}",
                host_names()
            ))
            .usage()
    })?;
    if user {
        return Err(
            CliError::new(format!("--agent {name} installs into this project only"))
                .hint("run it without --user, in the project")
                .usage(),
        );
    }
    Ok(Some(host))
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    if let Some(host) = host(args.agent.as_deref(), args.user)? {
        return install_host(ctx, host);
    }
    if args.user || args.agent.is_some() {
        return install_claude(ctx, args.user);
    }
    // No agent named: the agents found here are offered.
    let found = found_hosts();
    let asks = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !asks || found.is_empty() {
        install_claude(ctx, false)?;
        if !found.is_empty() {
            say("anvil: other agents found here host debates too; to wire them in this project:");
            for host in &found {
                say(&format!(
                    "  {:<12} anvil install --agent {}",
                    host.agent().title(),
                    host.agent().name()
                ));
            }
        }
        return Ok(());
    }
    for host in ask_which(&found)? {
        match host {
            None => install_claude(ctx, false)?,
            Some(host) => install_host(ctx, host)?,
        }
    }
    Ok(())
}

type HostRef = &'static dyn anvil_core::agent::host::Host;

/// The agents that host debates found here: on the PATH, or where `ANVIL_<AGENT>_BIN` says
/// (as anvil finds them for seats).
fn found_hosts() -> Vec<HostRef> {
    anvil_core::agent::host::hosts()
        .filter(|host| {
            let program = host.agent().program();
            match program.components().count() > 1 {
                true => program.is_file(),
                false => anvil_core::doctor::find_on_path(&program.to_string_lossy()).is_some(),
            }
        })
        .collect()
}

/// Asks at the terminal which agents to wire, Claude Code (`None`) unless the person names
/// others; a name that hosts nothing is asked again.
fn ask_which(found: &[HostRef]) -> Result<Vec<Option<HostRef>>, CliError> {
    use std::io::BufRead;
    let names: Vec<&str> = found.iter().map(|h| h.agent().name()).collect();
    say(&format!(
        "anvil: agents found here that host debates: claude, {}",
        names.join(", ")
    ));
    loop {
        eprint!(
            "Wire which into this project? (names, separated by spaces; `all`; Enter: claude) "
        );
        let mut line = String::new();
        let read = std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| CliError::new(format!("cannot read the answer: {e}")))?;
        let words: Vec<&str> = line
            .split([' ', ','])
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        if read == 0 || words.is_empty() {
            return Ok(vec![None]);
        }
        if words == ["all"] {
            return Ok(std::iter::once(None)
                .chain(found.iter().copied().map(Some))
                .collect());
        }
        let chosen: Result<Vec<Option<HostRef>>, &str> = words
            .iter()
            .map(|w| match *w {
                "claude" => Ok(None),
                name => found
                    .iter()
                    .find(|h| h.agent().name() == name)
                    .map(|h| Some(*h))
                    .ok_or(name),
            })
            .collect();
        match chosen {
            Ok(chosen) => return Ok(chosen),
            Err(name) => say(&format!(
                "anvil: `{name}` is none of them: claude, {}",
                names.join(", ")
            )),
        }
    }
}

/// `anvil install --agent NAME`: the host wired, and how a debate starts there.
fn install_host(ctx: &Ctx, host: HostRef) -> Result<(), CliError> {
    let changes = anvil_core::claude::install::host::install(&ctx.cwd, host)?;
    report(&ctx.cwd, changes, "already installed")?;
    let title = host.agent().title();
    let wiring = host.wiring();
    let controls: Vec<String> = wiring
        .controls
        .iter()
        .map(|(file, _)| anvil_core::claude::install::host::typed(wiring, file))
        .collect();
    let how = match (wiring.command, controls.is_empty()) {
        (Some(_), true) => format!(
            "its {}anvil command, or the prompt `anvil start` prints",
            wiring.mention
        ),
        (Some(_), false) => format!(
            "its {}anvil command, or the prompt `anvil start` prints ({} beside it)",
            wiring.mention,
            controls.join(", ")
        ),
        (None, _) => "the prompt `anvil start` prints".into(),
    };
    let (caller, checks) = match wiring.hook {
        Some(_) => ("the hook", format!(", and whether {title} trusts the hook")),
        None => ("anvil's plugin", String::new()),
    };
    say(&format!(
        "anvil: start a debate in {title}: {how}; {caller} calls `anvil-hook` by name, so \
         it must be on the PATH {title} starts with (`anvil doctor` checks it{checks})"
    ));
    Ok(())
}

/// `anvil install` for Claude Code, in the project or (`user`) for every project of the
/// person's.
fn install_claude(ctx: &Ctx, user: bool) -> Result<(), CliError> {
    let dir = anvil_core::claude::install::claude_dir(&ctx.cwd, user);
    let mut changes = anvil_core::claude::install::install(&dir)?;
    if user {
        changes.notes.push(
            "the MCP server is added per project (`anvil install` there), or for you with \
             `claude mcp add --scope user anvil -- anvil mcp`"
                .into(),
        );
    } else {
        let mcp = anvil_core::claude::install::install_mcp(&ctx.cwd)?;
        changes.lines.extend(mcp.lines);
        changes.notes.extend(mcp.notes);
    }
    report(&dir, changes, "already installed")?;
    say_path_note();
    Ok(())
}

/// The settings call anvil's binaries by name: say so, and warn when they are not on PATH.
fn say_path_note() {
    say(
        "anvil: the hooks and commands call `anvil-hook` and `anvil` by name, so that no path \
         of this machine goes into settings a team shares; both must be on the PATH that \
         Claude Code starts with",
    );
    let missing: Vec<&str> = ["anvil", anvil_core::claude::install::HOOK_PROGRAM]
        .into_iter()
        .filter(|name| anvil_core::doctor::find_on_path(name).is_none())
        .collect();
    if !missing.is_empty() {
        say(&format!(
            "anvil: warning: {} not on PATH here; `npm install -g anvil-debate` (or `cargo \
             install anvil-debate`) installs both; `anvil doctor` checks the whole installation",
            missing.join(" and ")
        ));
    }
}

pub fn run_uninstall(ctx: &Ctx, args: UninstallArgs) -> Result<(), CliError> {
    if let Some(host) = host(args.agent.as_deref(), args.user)? {
        let changes = anvil_core::claude::install::host::uninstall(&ctx.cwd, host)?;
        return report(&ctx.cwd, changes, "nothing of anvil's was installed");
    }
    let dir = anvil_core::claude::install::claude_dir(&ctx.cwd, args.user);
    let mut changes = anvil_core::claude::install::uninstall(&dir)?;
    if !args.user {
        let mcp = anvil_core::claude::install::uninstall_mcp(&ctx.cwd)?;
        changes.lines.extend(mcp.lines);
    }
    report(&dir, changes, "nothing of anvil's was installed")
}

fn report(
    dir: &std::path::Path,
    changes: anvil_core::claude::install::Changes,
    nothing: &str,
) -> Result<(), CliError> {
    if changes.lines.is_empty() {
        say(&format!("anvil: {nothing} in {}", dir.display()));
    }
    for line in changes.lines {
        say(&format!("anvil: {line} ({})", dir.display()));
    }
    for note in changes.notes {
        say(&format!("anvil: note: {note} ({})", dir.display()));
    }
    Ok(())
}

/// Write anvil as a Claude Code plugin into a directory.
///
/// The plugin holds the hooks, the slash commands and the MCP server. An alternative to `anvil install`: load it with `claude --plugin-dir DIR`, or put it where
/// your plugins live. The hooks call `anvil-hook` by name: it must be on Claude Code's PATH.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "Examples:
  anvil plugin -o ~/plugins/anvil
  claude --plugin-dir ~/plugins/anvil")]
pub struct PluginArgs {
    /// The directory to write the plugin into.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "anvil-plugin")]
    out: std::path::PathBuf,
}

pub fn run_plugin(ctx: &Ctx, args: PluginArgs) -> Result<(), CliError> {
    let dir = ctx.cwd.join(&args.out);
    let written = anvil_core::claude::install::write_plugin(
        &dir,
        anvil_core::claude::install::PluginBinaries::OnPath,
    )?;
    say(&format!(
        "anvil: wrote {} files of the plugin in {}; load it with `claude --plugin-dir {}` \
         (its commands are /anvil:anvil, /anvil:anvil-steer, …)",
        written.len(),
        dir.display(),
        dir.display()
    ));
    say_path_note();
    Ok(())
}
