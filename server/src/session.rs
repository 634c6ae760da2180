//! Resolves the session cookie to a `Caller` for every request and guards pages:
//! a visitor without a session is sent to /login; API routes answer 401 themselves.

use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use luna_app::server::{cookie_value, SESSION_COOKIE};
use luna_engine::Engine;

/// Paths anyone may load without a session.
fn is_public(path: &str) -> bool {
    path == "/login"
        || path.starts_with("/api/")
        || path.starts_with("/pkg/")
        || path.starts_with("/mcp")
        || matches!(
            path,
            "/healthz" | "/readyz" | "/favicon.ico" | "/robots.txt"
        )
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
    let caller = match token {
        Some(t) => match engine.accounts.session_caller(&t).await {
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
    }
    next.run(req).await
}
