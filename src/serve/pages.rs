//! The pages: server-rendered HTML (minijinja templates), one small script for live updates and
//! forms, one stylesheet. Every page works from the keyboard; every control has a name.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use minijinja::{Environment, Value, context};
use serde::Deserialize;

use super::api::{ListQuery, blocking};
use super::error::ApiError;
use super::{App, data, render};

pub fn templates() -> Environment<'static> {
    let mut env = Environment::new();
    for (name, source) in [
        ("base.html", include_str!("templates/base.html")),
        ("index.html", include_str!("templates/index.html")),
        ("debate.html", include_str!("templates/debate.html")),
        ("compare.html", include_str!("templates/compare.html")),
        ("sessions.html", include_str!("templates/sessions.html")),
        ("prompt.html", include_str!("templates/prompt.html")),
        ("search.html", include_str!("templates/search.html")),
        ("new.html", include_str!("templates/new.html")),
    ] {
        env.add_template(name, source)
            .expect("the built-in templates parse");
    }
    env.add_filter("markdown", |text: &str| {
        Value::from_safe_string(render::markdown(text))
    });
    env.add_filter("firstline", |text: &str| {
        anvil_core::model::state::first_line(text).to_owned()
    });
    env.add_filter("when", |seconds: i64| time(seconds));
    env.add_filter("iso", |seconds: i64| {
        jiff::Timestamp::from_second(seconds)
            .map(|t| t.to_string())
            .unwrap_or_default()
    });
    env.add_filter("whenstr", |text: &str| {
        text.parse::<jiff::Timestamp>()
            .map(|t| time(t.as_second()))
            .unwrap_or_else(|_| text.to_owned())
    });
    env.add_filter("stage", |stage: &str| {
        match stage {
            "waiting" => "waiting for an answer",
            "paused" => "paused",
            "running" => "running",
            "done" => "done",
            "cancelled" => "cancelled",
            other => other,
        }
        .to_owned()
    });
    env.add_filter("debateid", |line: &str| {
        line.split('@').next().unwrap_or(line).to_owned()
    });
    env.add_filter("shortrev", |rev: &str| {
        rev.split_once('@').map_or(rev, |(_, r)| r).to_owned()
    });
    env
}

fn ser(value: &impl serde::Serialize) -> Value {
    Value::from(minijinja::value::Serde(value))
}

fn time(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// Renders `name`, timing it: the time goes out in a `Server-Timing` header (the benchmark
/// reads it).
fn page(app: &App, name: &str, ctx: Value) -> Result<Response, ApiError> {
    let began = Instant::now();
    let html = app
        .templates
        .get_template(name)
        .and_then(|t| t.render(ctx))
        .map_err(ApiError::internal)?;
    let mut response = Html(html).into_response();
    let dur = began.elapsed().as_secs_f64() * 1000.0;
    if let Ok(v) = HeaderValue::from_str(&format!("render;dur={dur:.3}")) {
        response.headers_mut().insert("server-timing", v);
    }
    Ok(response)
}

/// An error as a page (the API answers JSON; a person gets a page).
pub struct PageError(ApiError);

impl From<ApiError> for PageError {
    fn from(e: ApiError) -> Self {
        PageError(e)
    }
}

/// Errors of pages: rendered without the app's state (no token), so they show no controls.
impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = self.0.status;
        let body = format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} · anvil</title>\
             <link rel=\"stylesheet\" href=\"/assets/style.css\"></head><body><main><h1>{}</h1><p>{}</p>\
             <p><a href=\"/\">All debates</a></p></main></body></html>",
            status.as_u16(),
            status,
            render::escape(&self.0.message)
        );
        (status, Html(body)).into_response()
    }
}

pub async fn index(
    State(app): State<Arc<App>>,
    Query(query): Query<ListQuery>,
) -> Result<Response, PageError> {
    let q = query.q.clone();
    let a = app.clone();
    let debates = blocking(move || data::debates(&a.home, &query.q)).await?;
    Ok(page(
        &app,
        "index.html",
        context! { token => app.token.as_str(), page => "list", debates => ser(&debates), q },
    )?)
}

/// Every recorded phase of every debate that matches `q`.
pub async fn search(
    State(app): State<Arc<App>>,
    Query(query): Query<ListQuery>,
) -> Result<Response, PageError> {
    let q = query.q.clone();
    let a = app.clone();
    let hits = blocking(move || data::search(&a.home, &query.q)).await?;
    Ok(page(
        &app,
        "search.html",
        context! { token => app.token.as_str(), page => "search", hits => ser(&hits), q },
    )?)
}

/// The "New debate" form: the question, rounds, mode, and a seat for each role among the
/// agents ready here.
pub async fn new_debate(State(app): State<Arc<App>>) -> Result<Response, PageError> {
    let a = app.clone();
    let (agents, form) =
        blocking(move || Ok((super::start::agents(), super::start::form(&a.home)?))).await?;
    Ok(page(
        &app,
        "new.html",
        context! {
            token => app.token.as_str(), page => "new", agents => ser(&agents), form => ser(&form),
        },
    )?)
}

#[derive(Deserialize)]
pub struct LineQuery {
    #[serde(default)]
    line: Option<String>,
}

/// One entry of the lines tree, depth first.
#[derive(serde::Serialize)]
struct TreeEntry {
    name: String,
    depth: usize,
    stage: String,
    standing: String,
    from: Option<String>,
    steering: Option<String>,
}

fn tree(lines: &[data::LineView]) -> Vec<TreeEntry> {
    fn visit(
        lines: &[data::LineView],
        parent: Option<&str>,
        depth: usize,
        out: &mut Vec<TreeEntry>,
    ) {
        for l in lines {
            let p = l.branched_from.as_ref().map(|b| b.line.as_str());
            let is_root = parent.is_none()
                && (p.is_none() || !lines.iter().any(|o| Some(o.name.as_str()) == p));
            if (parent.is_some() && p == parent) || is_root {
                if out.iter().any(|e| e.name == l.name) {
                    continue;
                }
                out.push(TreeEntry {
                    name: l.name.clone(),
                    depth: depth.min(5),
                    stage: l.stage.clone(),
                    standing: l.standing.clone(),
                    from: l.branched_from.as_ref().map(|b| b.from.clone()),
                    steering: l.branched_from.as_ref().map(|b| b.steering.clone()),
                });
                visit(lines, Some(&l.name), depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    visit(lines, None, 0, &mut out);
    out
}

pub async fn debate(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(query): Query<LineQuery>,
) -> Result<Response, PageError> {
    let a = app.clone();
    let view = blocking(move || data::debate(&a.home, &id)).await?;
    let line = match &query.line {
        Some(name) => view
            .lines
            .iter()
            .find(|l| &l.name == name)
            .ok_or_else(|| ApiError::not_found(format!("no line '{name}' in {}", view.id)))?,
        None => view
            .lines
            .iter()
            .find(|l| l.name == "main")
            .unwrap_or(&view.lines[0]),
    };
    let synthesis = line
        .phases
        .iter()
        .rev()
        .find(|p| p.role.as_deref() == Some("synthesizer"));
    let tree = tree(&view.lines);
    Ok(page(
        &app,
        "debate.html",
        context! {
            token => app.token.as_str(), page => "debate", debate => ser(&view),
            line => ser(line), synthesis => ser(&synthesis), tree => ser(&tree),
        },
    )?)
}

#[derive(Deserialize)]
pub struct CompareQuery {
    #[serde(default)]
    a: Option<String>,
    #[serde(default)]
    b: Option<String>,
}

pub async fn compare(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Query(query): Query<CompareQuery>,
) -> Result<Response, PageError> {
    let a = app.clone();
    let (view, revisions, chosen, found) = blocking(move || {
        let view = data::debate(&a.home, &id)?;
        let mut revisions: Vec<String> = view
            .lines
            .iter()
            .flat_map(|l| l.revisions.iter().map(|r| r.rev.clone()))
            .collect();
        // By default: the last two rounds of the main line.
        let main = view
            .lines
            .iter()
            .find(|l| l.name == "main")
            .or(view.lines.first());
        let default_b = main.and_then(|l| l.revisions.last()).map(|r| r.rev.clone());
        let default_a = main
            .and_then(|l| l.revisions.iter().rev().nth(1))
            .map(|r| r.rev.clone());
        let given = |q: Option<String>| q.filter(|r| !r.trim().is_empty());
        let mut chosen = (given(query.a).or(default_a), given(query.b).or(default_b));
        let found = match &chosen {
            (Some(ra), Some(rb)) => Some(compared(&a, &id, ra, rb)),
            _ => None,
        };
        // The pickers show the moments compared, however the address named them
        // (`round-1`, a commit): by the names they list.
        if let Some(Ok(c)) = &found {
            chosen = (Some(c.a.clone()), Some(c.b.clone()));
        }
        for name in [&chosen.0, &chosen.1].into_iter().flatten() {
            if !revisions.contains(name) {
                revisions.push(name.clone());
            }
        }
        Ok((view, revisions, chosen, found))
    })
    .await?;
    let (pairs, charts, error) = match found {
        Some(Ok(c)) => (c.pairs, c.charts, None),
        Some(Err(e)) => (Vec::new(), serde_json::Value::Null, Some(e.message)),
        None => (Vec::new(), serde_json::Value::Null, None),
    };
    Ok(page(
        &app,
        "compare.html",
        context! {
            token => app.token.as_str(), page => "compare", debate => ser(&view), revisions,
            a => chosen.0, b => chosen.1, pairs => ser(&pairs), error, charts => ser(&charts),
        },
    )?)
}

/// Two moments of a debate side by side: their canonical names, each of their files word by
/// word, and their positions.
struct Compared {
    a: String,
    b: String,
    pairs: Vec<serde_json::Value>,
    charts: serde_json::Value,
}

fn compared(app: &App, debate: &str, a: &str, b: &str) -> Result<Compared, ApiError> {
    let record = data::record(&app.home)?.ok_or_else(|| ApiError::not_found("no record"))?;
    let ra = data::moment(&record, debate, a)?;
    let rb = data::moment(&record, debate, b)?;
    let pairs =
        anvil_core::review::compare::pairs(&record, &ra, &rb).map_err(ApiError::internal)?;
    Ok(Compared {
        a: ra.canonical(),
        b: rb.canonical(),
        charts: compare_charts(&ra, &rb),
        pairs: pairs
            .iter()
            .map(|p| {
                // Positions and open points in words, as the debate page shows them.
                let (old, new) =
                    render::word_diff(&render::plain(p.old_text()), &render::plain(p.new_text()));
                let stat = p.stat();
                serde_json::json!({
                    "name": p.name,
                    "a_label": p.a.as_ref().map(|(l, _)| l),
                    "b_label": p.b.as_ref().map(|(l, _)| l),
                    "old": old,
                    "new": new,
                    "insertions": stat.insertions,
                    "deletions": stat.deletions,
                })
            })
            .collect(),
    })
}

/// Both moments' positions side by side, and how each seat moved from one to the other;
/// `null` when neither side stated a position.
fn compare_charts(
    ra: &anvil_core::review::revision::Resolved,
    rb: &anvil_core::review::revision::Resolved,
) -> serde_json::Value {
    use anvil_core::review::positions;
    let ea = &ra.history.entries[..=ra.index];
    let eb = &rb.history.entries[..=rb.index];
    let (ca, cb) = (positions::chart(ea), positions::chart(eb));
    if ca.is_empty() && cb.is_empty() {
        return serde_json::Value::Null;
    }
    serde_json::json!({
        "a": positions::svg(&ca, &ra.canonical()),
        "b": positions::svg(&cb, &rb.canonical()),
        "a_label": ra.canonical(),
        "b_label": rb.canonical(),
        "movement": positions::movement(&ca, &cb),
    })
}

pub async fn sessions(State(app): State<Arc<App>>) -> Result<Response, PageError> {
    let a = app.clone();
    let sessions = blocking(move || super::api::sessions_json(&a)).await?;
    Ok(page(
        &app,
        "sessions.html",
        context! { token => app.token.as_str(), page => "sessions", sessions => ser(&sessions) },
    )?)
}

pub async fn prompt(
    State(app): State<Arc<App>>,
    Path((debate, line, step)): Path<(String, String, u32)>,
) -> Result<Response, PageError> {
    let a = app.clone();
    let (d, l) = (debate.clone(), line.clone());
    let text = blocking(move || data::prompt(&a.home, &d, &l, step)).await?;
    Ok(page(
        &app,
        "prompt.html",
        context! {
            token => app.token.as_str(), page => "prompt", prompt => text, step,
            line => format!("{debate}@{line}"), debate_id => debate, line_name => line,
        },
    )?)
}

pub async fn report(
    State(app): State<Arc<App>>,
    Path((debate, line, file)): Path<(String, String, String)>,
) -> Result<Response, PageError> {
    let html = match file.as_str() {
        "report.md" => false,
        "report.html" => true,
        _ => return Err(ApiError::not_found("reports are report.md or report.html").into()),
    };
    let a = app.clone();
    let (d, l) = (debate.clone(), line.clone());
    let (title, markdown) = blocking(move || data::report(&a.home, &d, &l)).await?;
    let (body, kind, ext) = if html {
        (
            anvil_core::review::report::html(&title, &markdown),
            "text/html; charset=utf-8",
            "html",
        )
    } else {
        (markdown, "text/markdown; charset=utf-8", "md")
    };
    let name = if line == "main" {
        format!("{debate}.{ext}")
    } else {
        format!("{debate}-{line}.{ext}")
    };
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

pub async fn script() -> Response {
    asset(
        include_str!("assets/app.js"),
        "text/javascript; charset=utf-8",
    )
}

pub async fn style() -> Response {
    asset(include_str!("assets/style.css"), "text/css; charset=utf-8")
}

fn asset(body: &'static str, kind: &'static str) -> Response {
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    response
}

pub async fn not_found() -> PageError {
    PageError(ApiError::not_found("no such page"))
}
