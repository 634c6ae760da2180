//! The HTTP guard every request passes before a route sees it:
//! - **Origin**: a state-changing request (any method but GET/HEAD/OPTIONS), the
//!   websocket upgrade and every MCP request are refused when the browser says they come from another site
//!   (`Sec-Fetch-Site: cross-site|same-site`, or an `Origin` that is not this
//!   server's). Clients that are not browsers send neither header and pass: they
//!   authenticate with a bearer key, not with the cookie a forged form would ride on.
//!   `/baja/{token}` (RFC 8058 one-click unsubscribe) is exempt: see [`guard`].
//! - **Body limit and read time**: the body is read here, bounded per route
//!   ([`body_limit`]) and in time ([`BODY_READ`]); over the limit is a typed 413, too
//!   slow a typed 408, before any handler allocates for it.
//! - **Time limit** on server functions ([`API_TIMEOUT`]).
//! - **Security headers** on every answer (CSP, `nosniff`, referrer policy, no framing);
//!   a page's CSP carries the script nonce its shell rendered with, handed over in a
//!   request extension (`luna_app::server::PageNonce`).

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use luna_protocol::error::{ErrorBody, ErrorCode, ErrorEnvelope};

/// Longest time a client may take to send a request body.
pub const BODY_READ: Duration = Duration::from_secs(20);
/// Longest time a server function may take to answer (turns run in the background).
pub const API_TIMEOUT: Duration = Duration::from_secs(60);

/// Bodies of pages and anything not listed below (a login form is a few hundred bytes).
pub const SMALL_BODY: usize = 16 * 1024;
/// Server functions: the largest is a knowledge note or a suggested edit.
pub const API_BODY: usize = 256 * 1024;
/// MCP JSON-RPC messages from outside agents.
pub const MCP_BODY: usize = 1024 * 1024;

/// What the guard needs to know about this deployment.
#[derive(Clone, Debug, Default)]
pub struct Guard {
    /// `LUNA_PUBLIC_URL`'s origin (`https://luna.example.mx`), when configured: then
    /// only it is this server's origin; otherwise the request's own `Host` is.
    pub public_origin: Option<String>,
}

fn is_mcp(path: &str) -> bool {
    path == "/mcp" || path.starts_with("/mcp/")
}

fn is_unsubscribe(path: &str) -> bool {
    path.starts_with(luna_engine::sequences::unsubscribe::PATH)
}

/// The largest body a path accepts.
pub fn body_limit(path: &str) -> usize {
    if is_mcp(path) {
        MCP_BODY
    } else if path.starts_with("/api/") {
        API_BODY
    } else {
        SMALL_BODY
    }
}

/// A typed error answer (`{error:{code,message,hint}}`) with its HTTP status.
pub(crate) fn typed(status: StatusCode, code: ErrorCode, message: &str, hint: &str) -> Response {
    let body = ErrorEnvelope {
        error: ErrorBody::new(code, message, hint),
    };
    (status, axum::Json(body)).into_response()
}

fn forbidden_origin() -> Response {
    typed(
        StatusCode::FORBIDDEN,
        ErrorCode::Forbidden,
        "La solicitud viene de otro sitio y no se aceptó.",
        "Usa Luna desde su propia dirección; las integraciones usan una llave de API.",
    )
}

/// Whether the browser says this request was made by another site.
fn cross_site(headers: &HeaderMap, guard: &Guard) -> bool {
    let fetch_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if matches!(fetch_site, "cross-site" | "same-site") {
        return true;
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return false;
    };
    let Ok(origin) = origin.to_str() else {
        return true;
    };
    if origin == "null" {
        return true;
    }
    match &guard.public_origin {
        Some(own) => !origin.eq_ignore_ascii_case(own.trim_end_matches('/')),
        None => {
            let host = headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let origin_host = origin.split_once("://").map(|(_, rest)| rest).unwrap_or("");
            host.is_empty() || !origin_host.eq_ignore_ascii_case(host)
        }
    }
}

fn is_upgrade(req: &Request) -> bool {
    req.headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

pub async fn guard(State(guard): State<Guard>, req: Request, next: Next) -> Response {
    let changes_state = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let upgrade = is_upgrade(&req);
    let path = req.uri().path().to_owned();
    // MCP checks every request, reads included (DNS rebinding, MCP transport spec).
    // The unsubscribe page is exempt on purpose: RFC 8058 one-click POSTs come from mail
    // providers (some from a webmail tab, so cross-site), and its only credential is the
    // HMAC-signed token in the path — no cookie rides on it, so a forged cross-site
    // request can do nothing but unsubscribe the holder of a valid link.
    let exempt = is_unsubscribe(&path);
    if !exempt && (changes_state || upgrade || is_mcp(&path)) && cross_site(req.headers(), &guard) {
        return with_headers(forbidden_origin());
    }
    let limit = body_limit(&path);
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return with_headers(too_large(limit));
    }
    let (parts, body) = req.into_parts();
    let req = if declared == Some(0) || (!changes_state && declared.is_none()) {
        Request::from_parts(parts, body)
    } else {
        match tokio::time::timeout(BODY_READ, axum::body::to_bytes(body, limit)).await {
            Err(_) => {
                return with_headers(typed(
                    StatusCode::REQUEST_TIMEOUT,
                    ErrorCode::InvalidArgument,
                    "La solicitud tardó demasiado en llegar.",
                    "Revisa tu conexión e intenta de nuevo.",
                ))
            }
            Ok(Err(e)) if over_limit(&e) => return with_headers(too_large(limit)),
            Ok(Err(_)) => {
                return with_headers(typed(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::InvalidArgument,
                    "La solicitud llegó incompleta.",
                    "Intenta de nuevo.",
                ))
            }
            Ok(Ok(bytes)) => Request::from_parts(parts, Body::from(bytes)),
        }
    };
    // A page's shell leaves its script nonce here; its policy is set below with it.
    let page_nonce = luna_app::server::PageNonce::default();
    let mut req = req;
    req.extensions_mut().insert(page_nonce.clone());
    let mut response = if path.starts_with("/api/") && !upgrade {
        match tokio::time::timeout(API_TIMEOUT, next.run(req)).await {
            Ok(r) => r,
            Err(_) => typed(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::Internal,
                "La operación tardó demasiado y se detuvo.",
                "Intenta de nuevo en un momento.",
            ),
        }
    } else {
        next.run(req).await
    };
    if let Some(nonce) = page_nonce.0.get() {
        if let Ok(value) =
            HeaderValue::from_str(&luna_app::server::content_security_policy(Some(nonce)))
        {
            response
                .headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, value);
        }
    }
    with_headers(response)
}

fn too_large(limit: usize) -> Response {
    typed(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::PayloadTooLarge,
        &format!(
            "La solicitud es demasiado grande (el máximo aquí es {} KB).",
            limit / 1024
        ),
        "Envía menos texto o divídelo en partes.",
    )
}

fn over_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// The policy of answers that are not pages (pages set theirs with a nonce).
static CSP: std::sync::LazyLock<HeaderValue> = std::sync::LazyLock::new(|| {
    HeaderValue::from_str(&luna_app::server::content_security_policy(None))
        .unwrap_or(HeaderValue::from_static("default-src 'self'"))
});

fn with_headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    let set = |h: &mut HeaderMap, name: &'static str, value: &'static str| {
        h.entry(name).or_insert(HeaderValue::from_static(value));
    };
    h.entry("content-security-policy")
        .or_insert_with(|| CSP.clone());
    set(h, "x-content-type-options", "nosniff");
    set(h, "referrer-policy", "same-origin");
    set(h, "x-frame-options", "DENY");
    set(h, "cross-origin-opener-policy", "same-origin");
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn an_origin_is_this_server_only_when_it_names_its_host() {
        let g = Guard::default();
        let own = headers(&[
            ("host", "127.0.0.1:3000"),
            ("origin", "http://127.0.0.1:3000"),
        ]);
        assert!(!cross_site(&own, &g));
        let evil = headers(&[
            ("host", "127.0.0.1:3000"),
            ("origin", "https://evil.example"),
        ]);
        assert!(cross_site(&evil, &g));
        let null = headers(&[("host", "127.0.0.1:3000"), ("origin", "null")]);
        assert!(cross_site(&null, &g));
        let fetch = headers(&[("host", "a"), ("sec-fetch-site", "cross-site")]);
        assert!(cross_site(&fetch, &g));
        // Not a browser: no Origin, no Sec-Fetch-Site.
        assert!(!cross_site(&headers(&[("host", "a")]), &g));
    }

    #[test]
    fn a_public_url_is_the_only_origin_accepted() {
        let g = Guard {
            public_origin: Some("https://luna.example.mx".into()),
        };
        let ok = headers(&[
            ("host", "10.0.0.5:3000"),
            ("origin", "https://luna.example.mx"),
        ]);
        assert!(!cross_site(&ok, &g));
        let host_spoof = headers(&[("host", "evil.example"), ("origin", "https://evil.example")]);
        assert!(cross_site(&host_spoof, &g));
    }

    #[test]
    fn limits_are_small_for_forms_and_larger_only_where_needed() {
        assert_eq!(body_limit("/login"), SMALL_BODY);
        assert_eq!(body_limit("/api/login"), API_BODY);
        assert_eq!(body_limit("/mcp"), MCP_BODY);
    }
}
