//! Resolves the session cookie to a `Caller` for every request and guards pages:
//! a visitor without a session is sent to /login; API routes answer 401 themselves.
//! The token a caller was resolved from rides along as a `SessionToken`, so a
//! long-lived connection (the events websocket) can check it again later.

use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use luna_app::server::{cookie_value, SESSION_COOKIE};
use luna_engine::Engine;

/// Paths anyone may load without a session. The web app files of `public/` are among
/// them: browsers fetch the manifest and its icons without cookies, so a redirect to
/// /login there would make the manifest invalid and the app not installable.
fn is_public(path: &str) -> bool {
    path == "/login"
        || path.starts_with("/api/")
        || path.starts_with("/pkg/")
        || path.starts_with("/icons/")
        || path.starts_with("/mcp")
        || path.starts_with(luna_engine::sequences::unsubscribe::PATH)
        || matches!(
            path,
            "/healthz"
                | "/readyz"
                | "/favicon.ico"
                | "/favicon.svg"
                | "/apple-touch-icon.png"
                | "/manifest.webmanifest"
                | "/robots.txt"
        )
}

/// The session cookie token a request's `Caller` was resolved from. Its `Debug`
/// never shows the secret.
#[derive(Clone)]
pub struct SessionToken(String);

impl SessionToken {
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionToken(…)")
    }
}

pub async fn resolve_caller(
    State(engine): State<Engine>,
    mut req: Request,
    next: Next,
) -> Response {
    let token = req
        .headers()
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| cookie_value(v, SESSION_COOKIE));
    let caller = match &token {
        Some(t) => match engine.accounts.session_caller(t).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "session lookup failed");
                None
            }
        },
        None => None,
    };

    let path = req.uri().path().to_owned();
    let is_page = matches!(*req.method(), Method::GET | Method::HEAD) && !is_public(&path);
    match (&caller, is_page, path.as_str()) {
        (None, true, _) => return Redirect::to("/login").into_response(),
        (Some(_), _, "/login") if req.method() == Method::GET => {
            return Redirect::to("/").into_response()
        }
        _ => {}
    }
    if let Some(c) = caller {
        tracing::Span::current().record("workspace", c.workspace_id.as_str());
        req.extensions_mut().insert(c);
        if let Some(t) = token {
            req.extensions_mut().insert(SessionToken(t));
        }
    }
    next.run(req).await
}
