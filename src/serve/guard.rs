//! Who may talk to the web room, checked before any handler runs.
//!
//! The server shows untrusted model text on a machine that holds the user's code, so every
//! request must: name a host we serve (a DNS-rebinding page names its own), carry the token
//! (header, or the cookie that opening the page with `?token=` set), and, when it changes
//! anything, come from our own origin — a cross-site form can send the cookie but not the
//! `Authorization` header, and its `Origin` gives it away. Every answer carries a strict
//! Content-Security-Policy: no inline script, nothing from elsewhere.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::App;
use super::error::ApiError;

pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                       connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The hosts a request may name.
#[derive(Debug, Clone)]
pub struct Hosts {
    pub port: u16,
    /// `--host` when it was given: then any IP literal is accepted too (a rebinding attack
    /// needs a name), as is the name given.
    pub exposed: Option<String>,
}

impl Hosts {
    /// Is `host` (a `Host` header, or an origin's host and port) one of ours?
    pub fn allows(&self, host: &str) -> bool {
        let Some((name, port)) = split_port(host) else {
            return false;
        };
        if port != self.port {
            return false;
        }
        let name = name.trim_start_matches('[').trim_end_matches(']');
        if matches!(name, "127.0.0.1" | "localhost" | "::1") {
            return true;
        }
        match &self.exposed {
            Some(given) => {
                name.eq_ignore_ascii_case(given.trim_start_matches('[').trim_end_matches(']'))
                    || name.parse::<std::net::IpAddr>().is_ok()
            }
            None => false,
        }
    }
}

fn split_port(host: &str) -> Option<(&str, u16)> {
    let (name, port) = host.rsplit_once(':')?;
    if name.is_empty() || name.contains(['/', '@', ' ']) {
        return None;
    }
    Some((name, port.parse().ok()?))
}

pub fn cookie_name(port: u16) -> String {
    format!("anvil_token_{port}")
}

fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The middleware.
pub async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let mut response = match check(&app, &req) {
        Ok(None) => next.run(req).await,
        Ok(Some(early)) => early,
        Err(e) => e.into_response(),
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// `Ok(None)`: go on to the handler; `Ok(Some(r))`: answer `r` instead (the redirect that
/// trades `?token=` for the cookie).
fn check(app: &App, req: &Request) -> Result<Option<Response>, ApiError> {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !app.hosts.allows(host) {
        return Err(ApiError::forbidden(format!(
            "this server does not answer for host '{host}'"
        )));
    }

    let from_header = bearer(headers);
    let from_cookie = cookie(headers, &cookie_name(app.hosts.port));
    if let Some(given) = from_header {
        if !same(given, &app.token) {
            return Err(ApiError::unauthorized("wrong token"));
        }
    } else if let Some(given) = from_cookie.filter(|c| same(c, &app.token)) {
        let _ = given;
    } else {
        // Opening the page with ?token= sets the cookie, then shows the page without it.
        let query: HashMap<String, String> = Query::try_from_uri(req.uri())
            .map(|Query(q)| q)
            .unwrap_or_default();
        return match query.get("token") {
            Some(given) if same(given, &app.token) && req.method() == Method::GET => {
                Ok(Some(trade_token_for_cookie(app, req, &query)))
            }
            Some(given) if same(given, &app.token) => Err(ApiError::unauthorized(
                "the token in the URL only opens the page; a request that changes something \
                 sends it as `Authorization: Bearer TOKEN` (or comes from the page, with its cookie)",
            )),
            Some(_) => Err(ApiError::unauthorized("wrong token")),
            None => Err(ApiError::unauthorized(
                "a token is required: open the URL that `anvil serve` printed, or send \
                 `Authorization: Bearer TOKEN`",
            )),
        };
    }

    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        // A state change: its origin, when the browser names one, must be ours; with the
        // cookie alone (no header) the browser must name it.
        let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
        let fetch_site = headers.get("sec-fetch-site").and_then(|o| o.to_str().ok());
        if let Some(origin) = origin {
            let ours = origin
                .strip_prefix("http://")
                .is_some_and(|h| app.hosts.allows(h));
            if !ours {
                return Err(ApiError::forbidden(format!(
                    "cross-origin request from '{origin}' refused"
                )));
            }
        } else if from_header.is_none() && fetch_site != Some("same-origin") {
            return Err(ApiError::forbidden(
                "a state change needs the token in the Authorization header or a same-origin request",
            ));
        }
        if matches!(fetch_site, Some("cross-site" | "same-site")) {
            return Err(ApiError::forbidden("cross-site request refused"));
        }
    }
    Ok(None)
}

fn trade_token_for_cookie(app: &App, req: &Request, query: &HashMap<String, String>) -> Response {
    let rest: Vec<(&String, &String)> = query.iter().filter(|(k, _)| *k != "token").collect();
    let mut location = req.uri().path().to_owned();
    if !rest.is_empty() {
        let encoded = serde_urlencoded_pairs(&rest);
        location.push('?');
        location.push_str(&encoded);
    }
    let cookie = format!(
        "{}={}; Path=/; HttpOnly; SameSite=Strict",
        cookie_name(app.hosts.port),
        app.token
    );
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&location) {
        headers.insert(header::LOCATION, v);
    }
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, v);
    }
    response
}

/// `k=v&…`, percent-encoded.
fn serde_urlencoded_pairs(pairs: &[(&String, &String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

pub fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_hosts_are_answered() {
        let local = Hosts {
            port: 8080,
            exposed: None,
        };
        assert!(local.allows("127.0.0.1:8080"));
        assert!(local.allows("localhost:8080"));
        assert!(local.allows("[::1]:8080"));
        assert!(!local.allows("127.0.0.1:8081"));
        assert!(!local.allows("evil.example:8080"));
        assert!(!local.allows("127.0.0.1"));
        assert!(!local.allows(""));
        let exposed = Hosts {
            port: 8080,
            exposed: Some("devbox".into()),
        };
        assert!(exposed.allows("devbox:8080"));
        assert!(exposed.allows("192.168.1.20:8080"));
        assert!(!exposed.allows("rebind.example:8080"));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
    }
}
