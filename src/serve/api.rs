//! The JSON API under `/api/` (documented in docs/serve.md). The page's scripts use it, and so
//! can any script that has the token. Every change goes through the same library functions as
//! the commands (`anvil start`, `steer`, `answer`, `cancel`, `branch`, `run --line`), so the
//! record cannot tell them apart.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use anvil_core::home::LineRef;

use super::error::ApiError;
use super::{App, data};

/// Runs blocking work (files, the record) off the async threads.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(ApiError::internal)?
}

/// A JSON body: too large is 413, anything unparseable 400, both as JSON errors.
fn body<T: DeserializeOwned>(bytes: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let bytes = bytes.map_err(|e| ApiError::new(e.status(), e.body_text()))?;
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &bytes
    };
    serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Text {
    #[serde(default)]
    text: String,
}

fn non_empty(text: &str, what: &str) -> Result<String, ApiError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ApiError::bad_request(format!("{what} needs some text")));
    }
    Ok(text.to_owned())
}

#[derive(Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    pub q: String,
}

pub async fn debates(
    State(app): State<Arc<App>>,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    let list = blocking(move || data::debates(&app.home, &query.q)).await?;
    Ok(Json(list).into_response())
}

pub async fn search(
    State(app): State<Arc<App>>,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    let hits = blocking(move || data::search(&app.home, &query.q)).await?;
    Ok(Json(hits).into_response())
}

pub async fn debate(
    State(app): State<Arc<App>>,
    Path(debate): Path<String>,
) -> Result<Response, ApiError> {
    let view = blocking(move || data::debate(&app.home, &debate)).await?;
    Ok(Json(view).into_response())
}

/// A change to one line: parses the body, then (off the async threads) finds the line, 404 if it
/// has no live state, and answers `status` with what `act` returns.
async fn on_line<B: DeserializeOwned + Send + 'static>(
    app: Arc<App>,
    debate: String,
    line: String,
    bytes: Result<Bytes, BytesRejection>,
    status: StatusCode,
    act: impl FnOnce(&App, &LineRef, B) -> Result<Value, ApiError> + Send + 'static,
) -> Result<Response, ApiError> {
    let req: B = body(bytes)?;
    let response = blocking(move || {
        let line = data::line_ref(&app.home, &debate, &line)?;
        act(&app, &line, req)
    })
    .await?;
    Ok((status, Json(response)).into_response())
}

/// A reply's message, followed by what the person must know about their text (what was
/// redacted from it).
fn with_note(message: &str, note: Option<String>) -> String {
    match note {
        Some(note) => format!("{message}. Note: {note}"),
        None => message.to_owned(),
    }
}

pub async fn steer(
    State(app): State<Arc<App>>,
    Path((debate, line)): Path<(String, String)>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    on_line(
        app,
        debate,
        line,
        bytes,
        StatusCode::ACCEPTED,
        |app, line, Text { text }| {
            let text = non_empty(&text, "steering")?;
            let steered = anvil_core::line::control::steer(&app.home, line, &text)
                .map_err(ApiError::from_debate)?;
            Ok(json!({
                "line": line.to_string(),
                "text": steered.text,
                "state": "queued",
                "message": with_note("queued — delivered when Claude next stops", steered.note),
            }))
        },
    )
    .await
}

pub async fn answer(
    State(app): State<Arc<App>>,
    Path((debate, line)): Path<(String, String)>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    on_line(
        app,
        debate,
        line,
        bytes,
        StatusCode::OK,
        |app, line, Text { text }| {
            let text = non_empty(&text, "an answer")?;
            let answered = anvil_core::line::ask::answer(&app.home, line, &text)
                .map_err(ApiError::from_debate)?;
            Ok(json!({
                "line": line.to_string(),
                "answer": answered.text,
                "delivered_now": answered.now,
                "message": with_note(
                    if answered.now {
                        "answered; the debater goes on with it now"
                    } else {
                        "answered; it reaches the debate with the next phase"
                    },
                    answered.note,
                ),
            }))
        },
    )
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelBody {
    #[serde(default)]
    reason: String,
}

pub async fn cancel(
    State(app): State<Arc<App>>,
    Path((debate, line)): Path<(String, String)>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    on_line(
        app,
        debate,
        line,
        bytes,
        StatusCode::OK,
        |app, line, CancelBody { reason }| {
            let state = anvil_core::line::control::cancel(&app.home, line, reason.trim())
                .map_err(ApiError::from_debate)?;
            Ok(json!({
                "line": line.to_string(),
                "status": state.progress.status.name(),
                "round": state.progress.round,
            }))
        },
    )
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// Runs the line headless (`anvil run --line`), as a child process that outlives the request.
pub async fn run(
    State(app): State<Arc<App>>,
    Path((debate, line)): Path<(String, String)>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    on_line(
        app,
        debate,
        line,
        bytes,
        StatusCode::ACCEPTED,
        |app, line, Nothing {}| {
            let run = super::runs::launch(app, line)?;
            Ok(json!({
                "line": line.to_string(),
                "state": "running",
                "pid": run.pid,
                "log": run.log,
                "message": "running headless — its phases appear here as they are recorded",
            }))
        },
    )
    .await
}

/// Starts a debate (the page's "New debate") and runs it headless: 201 with where to follow it.
pub async fn start(
    State(app): State<Arc<App>>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: super::start::NewDebate = body(bytes)?;
    let response = blocking(move || super::start::start(&app, req)).await?;
    Ok((StatusCode::CREATED, Json(response)).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BranchBody {
    from: String,
    steer: String,
    #[serde(default)]
    name: Option<String>,
}

pub async fn branch(
    State(app): State<Arc<App>>,
    Path(debate): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: BranchBody = body(bytes)?;
    let response = blocking(move || {
        let home = &app.home;
        let not_found = || ApiError::not_found(format!("no debate '{debate}'"));
        let record = data::named_record(home, &[&debate], not_found)?;
        if anvil_core::review::history::lines_of(&record, &debate)
            .map_err(ApiError::internal)?
            .is_empty()
        {
            return Err(not_found());
        }
        let steer = non_empty(&req.steer, "a branch")?;
        let name = req.name.as_deref().map(str::trim).filter(|n| !n.is_empty());
        if let Some(name) = name
            && !anvil_core::record::store::valid_name(name)
        {
            return Err(ApiError::bad_request(format!(
                "'{name}' cannot name a line (letters, digits, '-', '_' and '.')"
            )));
        }
        let from = data::moment(&record, &debate, req.from.trim())?;
        let restored = anvil_core::line::restore::branch(
            home,
            &record,
            anvil_core::line::restore::Branch {
                from: &from,
                steer: &steer,
                name,
                session: None,
            },
        )
        .map_err(ApiError::from_debate)?;
        Ok(json!({
            "debate": restored.line.debate,
            "line": restored.line.line,
            "commit": restored.commit.to_string(),
            "from": from.canonical(),
            "steering": restored.state.progress.steering.first().map_or(steer.as_str(), String::as_str),
            "note": restored.note,
            "continue": format!("claude \"$(anvil resume {})\"", restored.line),
        }))
    })
    .await?;
    Ok((StatusCode::CREATED, Json(response)).into_response())
}

pub async fn sessions(State(app): State<Arc<App>>) -> Result<Response, ApiError> {
    let list = blocking(move || sessions_json(&app)).await?;
    Ok(Json(list).into_response())
}

pub fn sessions_json(app: &App) -> Result<Vec<Value>, ApiError> {
    let home = &app.home;
    let mut out = Vec::new();
    for r in anvil_core::claude::feedback::sessions(home).map_err(ApiError::internal)? {
        let messages =
            anvil_core::claude::feedback::messages(home, &r.session).map_err(ApiError::internal)?;
        out.push(json!({
            "session": r.session,
            "started": r.started,
            "source": r.source,
            "first_prompt": r.transcript_path.as_deref().and_then(anvil_core::claude::feedback::first_prompt),
            "debate": home.bound_line(&r.session).ok().flatten().map(|l| l.to_string()),
            "messages": messages,
        }));
    }
    Ok(out)
}

pub async fn feedback(
    State(app): State<Arc<App>>,
    Path(session): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let Text { text } = body(bytes)?;
    let response = blocking(move || {
        let known = anvil_core::home::valid_session(&session)
            && anvil_core::claude::feedback::session(&app.home, &session)
                .map_err(ApiError::internal)?
                .is_some();
        if !known {
            return Err(ApiError::not_found(format!("no session '{session}'")));
        }
        let text = non_empty(&text, "feedback")?;
        let nanos = anvil_core::clock::now().as_nanosecond().unsigned_abs();
        let (id, note) = anvil_core::claude::feedback::queue(&app.home, &session, &text, nanos)
            .map_err(ApiError::internal)?;
        Ok(json!({
            "session": session,
            "id": id,
            "state": "queued",
            "message": with_note("queued — delivered when Claude next stops", note),
        }))
    })
    .await?;
    Ok((StatusCode::ACCEPTED, Json(response)).into_response())
}

/// Server-sent events: `hello` once connected, then one `change` per change.
pub async fn events(
    State(app): State<Arc<App>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = app.events.subscribe();
    let hello =
        futures_util::stream::once(async { Ok(Event::default().event("hello").data("{}")) });
    let changes = futures_util::stream::unfold(rx, |mut rx| async move {
        let change = match rx.recv().await {
            Ok(change) => serde_json::to_string(&change).unwrap_or_default(),
            // Too slow to keep up: tell the client to look at everything again.
            Err(RecvError::Lagged(_)) => "{\"kind\":\"all\"}".to_owned(),
            Err(RecvError::Closed) => return None,
        };
        Some((Ok(Event::default().event("change").data(change)), rx))
    });
    use futures_util::StreamExt;
    Sse::new(hello.chain(changes)).keep_alive(KeepAlive::default())
}

/// Any other `/api/` path.
pub async fn unknown() -> ApiError {
    ApiError::not_found("no such API route (see docs/serve.md)")
}
