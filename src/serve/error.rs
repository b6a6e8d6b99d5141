//! Errors of the web room: JSON `{"error": …}` with a status that says what kind of failure it
//! is, for the API and for the page's scripts alike.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, message)
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }

    pub fn internal(e: impl std::fmt::Display) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }

    /// A library error: a refusal by its kind (nothing there: 404; empty or unusable input:
    /// 400; the line's state does not allow it: 409), with its hint; anything else (files,
    /// the record) is the server's failure.
    pub fn from_debate(e: anvil_core::error::DebateError) -> ApiError {
        use anvil_core::error::{DebateError, Kind};
        match e {
            DebateError::Refused(refusal) => {
                let status = match refusal.kind() {
                    Kind::NotFound => StatusCode::NOT_FOUND,
                    Kind::BadInput => StatusCode::BAD_REQUEST,
                    Kind::Conflict => StatusCode::CONFLICT,
                };
                let message = match refusal.hint() {
                    Some(hint) => format!("{refusal} ({hint})"),
                    None => refusal.to_string(),
                };
                ApiError::new(status, message)
            }
            other => ApiError::internal(anvil_core::error::chain(&other)),
        }
    }
}

impl ApiError {
    /// An error of the command line's functions (the room starts a debate through
    /// `anvil start`'s): bad input (its usage code) is 400 with the whole text (causes and
    /// hint on the same line), anything else the server's failure.
    pub fn from_cli(e: crate::error::CliError) -> ApiError {
        let text = e.to_text();
        let said = text
            .trim()
            .trim_start_matches("error: ")
            .lines()
            .collect::<Vec<_>>()
            .join("; ");
        if e.code == 2 {
            ApiError::bad_request(said)
        } else {
            ApiError::internal(said)
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        (self.status, axum::Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anvil_core::error::{DebateError, Refusal};
    use anvil_core::home::LineRef;

    #[test]
    fn each_kind_of_refusal_has_its_status_and_a_failure_is_the_servers() {
        let line = LineRef::new("20261122-q-3f2a", "cost");
        let status = |e: DebateError| ApiError::from_debate(e).status;
        assert_eq!(
            status(Refusal::NoLine(line.clone()).into()),
            StatusCode::NOT_FOUND
        );
        assert_eq!(status(Refusal::EmptyAnswer.into()), StatusCode::BAD_REQUEST);
        assert_eq!(
            status(Refusal::NameTaken(line.clone()).into()),
            StatusCode::CONFLICT
        );
        let io = DebateError::Io {
            what: "cannot write",
            path: "/x".into(),
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
        };
        assert_eq!(status(io), StatusCode::INTERNAL_SERVER_ERROR);
        let hinted = ApiError::from_debate(Refusal::SteerTooLate { line, round: 1 }.into());
        assert!(
            hinted.message.contains("anvil branch --from cost:round-1"),
            "{}",
            hinted.message
        );
    }
}
