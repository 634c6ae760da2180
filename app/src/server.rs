//! Server-side glue for server functions: the engine and the caller from context,
//! and the mapping of engine errors to `AppError` plus the HTTP status.

use axum::http::{request::Parts, StatusCode};
use leptos::prelude::*;
use leptos_axum::ResponseOptions;
use luna_engine::accounts::Caller;
use luna_engine::{Engine, EngineError};

use crate::error::AppError;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "luna_session";

/// Sets the HTTP status of the current response (no-op outside a request).
pub fn set_status(code: u16) {
    if let (Some(options), Ok(status)) =
        (use_context::<ResponseOptions>(), StatusCode::from_u16(code))
    {
        options.set_status(status);
    }
}

/// The content security policy. Scripts come only from this origin or carry the page's
/// nonce (leptos puts it on its hydration and resource scripts); wasm compiles only
/// from this origin; nothing frames the app. Styles allow `style=` attributes. The web
/// app manifest and its icons come from this origin (`public/`).
pub fn content_security_policy(nonce: Option<&str>) -> String {
    let inline = nonce.map(|n| format!(" 'nonce-{n}'")).unwrap_or_default();
    format!(
        "default-src 'self'; script-src 'self'{inline} 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
         manifest-src 'self'; \
         object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// Where the shell leaves the page's script nonce for the server's guard, which sets
/// the page's policy with it on the response (`luna-server`'s `guard`). It travels as
/// a request extension, which leptos clones into the `Parts` it provides, so the header
/// is set by the same code that sends the response, whatever the page's rendering
/// mode: a page once went out with the policy of non-pages (no nonce) when the
/// header was left to leptos' response options, and never hydrated.
#[derive(Clone, Debug, Default)]
pub struct PageNonce(pub std::sync::Arc<std::sync::OnceLock<String>>);

/// Hands this response's nonce to the guard (called by the shell).
pub fn set_page_csp() {
    let Some(nonce) = leptos::nonce::use_nonce() else {
        return;
    };
    if let Some(slot) =
        use_context::<Parts>().and_then(|p| p.extensions.get::<PageNonce>().cloned())
    {
        let _ = slot.0.set(nonce.to_string());
    }
}

/// Maps an engine error to the server function error and sets the HTTP status.
pub fn fail(err: EngineError) -> AppError {
    let body = err.body();
    set_status(body.code.http_status());
    AppError::Api(body)
}

pub fn engine() -> Result<Engine, AppError> {
    use_context::<Engine>()
        .ok_or_else(|| fail(EngineError::Internal("engine missing from context".into())))
}

/// The signed-in caller, resolved by the server's session middleware. Fails with 401.
pub fn caller() -> Result<Caller, AppError> {
    match use_context::<Parts>().and_then(|parts| parts.extensions.get::<Caller>().cloned()) {
        Some(caller) => Ok(caller),
        None => {
            set_status(401);
            Err(AppError::unauthorized())
        }
    }
}

/// The request's client address, as the server's `client_ip` middleware resolved it
/// (`ClientIp::UNKNOWN` without one).
pub fn client_ip() -> luna_engine::accounts::ClientIp {
    use_context::<Parts>()
        .and_then(|parts| parts.extensions.get().copied())
        .unwrap_or(luna_engine::accounts::ClientIp::UNKNOWN)
}

/// The raw session token from the request's cookie, if any.
pub fn session_token() -> Option<String> {
    let parts = use_context::<Parts>()?;
    cookie_value(
        parts
            .headers
            .get(axum::http::header::COOKIE)?
            .to_str()
            .ok()?,
        SESSION_COOKIE,
    )
}

/// Finds `name` in a `Cookie:` header value.
pub fn cookie_value(header: &str, name: &str) -> Option<String> {
    header.split(';').find_map(|pair| {
        let (k, v) = pair.trim().split_once('=')?;
        (k == name).then(|| v.to_owned())
    })
}

/// How the session cookie is written; provided as context by the server binary.
#[derive(Clone, Copy, Debug, Default)]
pub struct CookiePolicy {
    /// Add `Secure` (serve over HTTPS).
    pub secure: bool,
}

/// The `Set-Cookie` value for a session token (or an expired one to clear it).
pub fn session_cookie(token: Option<&str>, policy: CookiePolicy) -> String {
    let secure = if policy.secure { "; Secure" } else { "" };
    match token {
        Some(t) => format!(
            "{SESSION_COOKIE}={t}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            luna_engine::accounts::SESSION_TTL_MS / 1000
        ),
        None => format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}"),
    }
}
