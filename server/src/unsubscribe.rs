//! `/baja/{token}`: the unsubscribe page every sequence message links to, without a
//! login. `GET` shows a Spanish confirmation with one button and changes nothing (link
//! scanners fetch it); `POST` — that button, or a mail provider's RFC 8058 one-click
//! request (body `List-Unsubscribe=One-Click`) — suppresses the address for the
//! workspace at once, idempotently (`sequences::unsubscribe::confirm`). An unknown or
//! tampered token is a 404 page; a failure inside is a generic 500 page, never a trace.
//! The page is plain HTML from the server: no script, nothing to hydrate.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use luna_engine::sequences::unsubscribe::{self, Page};
use luna_engine::{Engine, EngineError};

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn document(title: &str, inner: &str) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"es-MX\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{title}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1f2937}}\
         button{{font:inherit;padding:.6rem 1.2rem;border-radius:.5rem;border:0;background:#1f2937;color:#fff;cursor:pointer}}</style>\
         </head><body><main>{inner}</main></body></html>"
    )
}

fn render(token: &str, p: &Page) -> String {
    let who = escape(&p.email_masked);
    let from = if p.sender_name.is_empty() {
        "este remitente".to_owned()
    } else {
        escape(&p.sender_name)
    };
    if p.done {
        document(
            "Baja confirmada",
            &format!(
                "<h1>Listo, te diste de baja</h1><p>{who} ya no recibirá correos de {from} enviados con Luna.</p>"
            ),
        )
    } else {
        document(
            "Darte de baja",
            &format!(
                "<h1>¿Darte de baja?</h1><p>{who} dejará de recibir los correos de {from} enviados con Luna.</p>\
                 <form method=\"post\" action=\"/baja/{}\"><button type=\"submit\">Confirmar la baja</button></form>",
                escape(token)
            ),
        )
    }
}

fn failure(e: EngineError) -> Response {
    let body = e.body();
    let status = StatusCode::from_u16(body.code.http_status()).unwrap_or(StatusCode::NOT_FOUND);
    if status.is_server_error() {
        tracing::error!(error = %e, "unsubscribe failed");
    }
    let html = document(
        "Enlace no válido",
        &format!(
            "<h1>No pudimos procesar tu baja</h1><p>{}</p><p>{}</p>",
            escape(&body.message),
            escape(&body.hint)
        ),
    );
    (status, Html(html)).into_response()
}

/// `GET /baja/{token}`: the confirmation page.
pub async fn page(State(engine): State<Engine>, Path(token): Path<String>) -> Response {
    match unsubscribe::page(&engine, &token).await {
        Ok(p) => Html(render(&token, &p)).into_response(),
        Err(e) => failure(e),
    }
}

/// `POST /baja/{token}`: the page's button or the one-click header.
pub async fn confirm(State(engine): State<Engine>, Path(token): Path<String>) -> Response {
    match unsubscribe::confirm(&engine, &token).await {
        Ok(p) => Html(render(&token, &p)).into_response(),
        Err(e) => failure(e),
    }
}
