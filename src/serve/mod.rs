//! `anvil serve`: the debate room in a browser — start a debate, read, compare, watch live,
//! steer, answer, branch, and send feedback to any Claude session of the project.
//!
//! The server lives in the `anvil` binary only (axum on tokio); the library it calls is the
//! same one the commands use, so a change made on the page is recorded exactly as the
//! command would record it. See docs/serve.md for the API and the security model.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tokio::sync::broadcast;

use anvil_core::home::Home;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::output::out;
use crate::output::say;

mod api;
mod data;
mod error;
mod guard;
mod pages;
mod render;
mod runs;
mod start;
mod watch;

/// Open the debate room in a browser: read and compare debates, watch them live, steer, answer
/// a debater's question, branch, and send feedback to any Claude Code session of the project.
///
/// Prints the URL (with its access token) as the first line on stdout, then serves until
/// interrupted. Only this machine can connect unless --host says otherwise.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Port to listen on [default: a free one].
    #[arg(long)]
    port: Option<u16>,

    /// Address to listen on [default: 127.0.0.1]. Anything but a loopback address lets other
    /// machines reach the page (they still need the token).
    #[arg(long)]
    host: Option<String>,

    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
}

/// Largest request body accepted (steering, answers, feedback are short texts).
const BODY_LIMIT: usize = 64 * 1024;

/// What every handler shares.
pub struct App {
    home: Home,
    token: String,
    hosts: guard::Hosts,
    events: broadcast::Sender<watch::Change>,
    templates: minijinja::Environment<'static>,
    /// Held while a headless run is checked and started, so two requests start one run.
    launching: std::sync::Mutex<()>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CliError> {
    let home = ctx.home()?;
    let ip: IpAddr = match &args.host {
        None => IpAddr::V4(Ipv4Addr::LOCALHOST),
        Some(h) => h.parse().map_err(|_| {
            CliError::new(format!("--host {h}: not an IP address"))
                .hint("e.g. --host 0.0.0.0 (every interface) or --host 192.168.1.20")
                .usage()
        })?,
    };
    if !ip.is_loopback() {
        say(&format!(
            "anvil: WARNING: listening on {ip}: other machines can reach this page (with the \
             token). Model text and your project's debates are shown there."
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(serve(home, ip, args))
}

async fn serve(home: Home, ip: IpAddr, args: Args) -> Result<(), CliError> {
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, args.port.unwrap_or(0)))
        .await
        .map_err(|e| CliError::new(format!("cannot listen on {ip}: {e}")))?;
    let port = listener.local_addr()?.port();
    let token = new_token()?;
    let shown_host = match ip {
        IpAddr::V4(v4) if v4.is_unspecified() || v4.is_loopback() => "127.0.0.1".to_owned(),
        IpAddr::V6(v6) if v6.is_unspecified() || v6.is_loopback() => "[::1]".to_owned(),
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    };
    let url = format!("http://{shown_host}:{port}/?token={token}");
    out(&format!("{url}\n"))?;
    say(&format!(
        "anvil: serving {} at http://{shown_host}:{port}/ (Ctrl+C to stop)",
        home.project().display()
    ));

    let (events, _) = broadcast::channel(256);
    watch::spawn(home.clone(), events.clone());
    start::warm();
    let app = Arc::new(App {
        home,
        token,
        hosts: guard::Hosts {
            port,
            exposed: args.host.clone().filter(|_| !ip.is_loopback()),
        },
        events,
        templates: pages::templates(),
        launching: std::sync::Mutex::new(()),
    });
    if args.open {
        open_browser(&url);
    }
    axum::serve(listener, router(app))
        .await
        .map_err(|e| CliError::new(format!("the server stopped: {e}")))
}

fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .route("/debates", get(api::debates).post(api::start))
        .route("/search", get(api::search))
        .route("/debates/{debate}", get(api::debate))
        .route("/debates/{debate}/lines/{line}/steer", post(api::steer))
        .route("/debates/{debate}/lines/{line}/answer", post(api::answer))
        .route("/debates/{debate}/lines/{line}/cancel", post(api::cancel))
        .route("/debates/{debate}/lines/{line}/run", post(api::run))
        .route("/debates/{debate}/branch", post(api::branch))
        .route("/sessions", get(api::sessions))
        .route("/sessions/{session}/feedback", post(api::feedback))
        .route("/events", get(api::events))
        .fallback(api::unknown);
    Router::new()
        .route("/", get(pages::index))
        .route("/sessions", get(pages::sessions))
        .route("/search", get(pages::search))
        .route("/new", get(pages::new_debate))
        .route("/debates/{debate}", get(pages::debate))
        .route("/debates/{debate}/compare", get(pages::compare))
        .route(
            "/debates/{debate}/lines/{line}/prompts/{step}",
            get(pages::prompt),
        )
        .route("/debates/{debate}/lines/{line}/{file}", get(pages::report))
        .route("/assets/app.js", get(pages::script))
        .route("/assets/style.css", get(pages::style))
        .nest("/api", api)
        .fallback(pages::not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            guard::guard,
        ))
        .with_state(app)
}

/// 32 random bytes, hex.
fn new_token() -> Result<String, CliError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| CliError::new(format!("no randomness for the access token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        say(&format!(
            "anvil: could not open a browser ({opener}: {e}); open the URL above yourself"
        ));
    }
}
