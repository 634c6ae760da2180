//! Sequences over HTTP, as the browser and an integration call them: marking that a
//! recipient replied (authenticated, idempotent, typed errors; the same engine call as
//! the CLI) and editing a draft's step from the board (typed Spanish refusals).

use crate::helpers;

use axum::http::StatusCode;
use luna_engine::sequences::{dispatch, Step};
use luna_engine::testkit;
use luna_protocol::account::{Plan, Role};
use serde_json::Value;
use tower::ServiceExt;

async fn post(
    app: &axum::Router,
    path: &str,
    body: &str,
    cookie: Option<&str>,
) -> (StatusCode, Value) {
    let res = app
        .clone()
        .oneshot(helpers::form(path, body, cookie))
        .await
        .unwrap();
    let status = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Whether an error answer names `text` (its code or its Spanish message).
fn says(v: &Value, text: &str) -> bool {
    v.to_string().contains(text)
}

fn enc(s: &str) -> String {
    s.replace('%', "%25")
        .replace('@', "%40")
        .replace('+', "%2B")
        .replace(' ', "+")
        .replace('&', "%26")
}

fn steps() -> [Step; 2] {
    [
        Step {
            delay_days: 0,
            subject: "Hola {{nombre}}".into(),
            body: "¿Platicamos?".into(),
        },
        Step {
            delay_days: 3,
            subject: "Seguimiento".into(),
            body: "Sigo aquí.".into(),
        },
    ]
}

/// A member of a fresh workspace, signed in: the router, the engine, the cookie and
/// the caller.
async fn signed_in() -> (
    axum::Router,
    luna_engine::Engine,
    String,
    luna_engine::accounts::Caller,
) {
    let (app, engine) = helpers::router().await;
    let caller = testkit::caller(&engine, Plan::Founder, Role::Admin)
        .await
        .unwrap();
    // Any hour is inside the window, so that the first step goes out when the test runs.
    let always = luna_engine::sequences::window::Window::always();
    luna_engine::sequences::window::set(&engine, &caller, &always)
        .await
        .unwrap();
    let (token, _) = engine
        .accounts
        .login(
            &caller.email,
            "secreto-123",
            luna_engine::accounts::ClientIp::LOCAL,
        )
        .await
        .unwrap();
    (app, engine, format!("luna_session={token}"), caller)
}

#[tokio::test]
async fn marking_a_reply_over_http_stops_the_recipient_once_and_bad_input_is_typed() {
    let (app, engine, cookie, caller) = signed_in().await;
    let (s, emails) = testkit::authorized_sequence(
        &engine,
        &caller,
        &["EBA010101AB1", "CJA050505XY2"],
        &steps(),
    )
    .await;
    let path = "/api/mark_sequence_replied";
    let body = |email: &str| format!("sequence_id={}&email={}", s.id, enc(email));

    // Without a session: 401, nothing marked.
    let (status, _) = post(&app, path, &body(&emails[0]), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // The first step already went out; the reply cancels the second.
    dispatch::run_once(&engine, "w1", luna_engine::clock::now_ms())
        .await
        .unwrap();
    let (status, v) = post(&app, path, &body(&emails[0].to_uppercase()), Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["new"], Value::Bool(true));
    assert_eq!(v["cancelled"], 1);
    // Idempotent: a second mark changes nothing.
    let (status, v) = post(&app, path, &body(&emails[0]), Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["new"], Value::Bool(false));
    assert_eq!(v["cancelled"], 0);

    // The dispatcher never sends them the rest; the other recipient still gets it.
    let later = luna_engine::clock::now_ms() + 10 * 86_400_000;
    dispatch::run_once(&engine, "w1", later).await.unwrap();
    let to: Vec<(String, String)> =
        sqlx::query_as("select email, status from sequence_sends where step = 1 order by email")
            .fetch_all(engine.store.pool())
            .await
            .unwrap();
    for (email, status) in &to {
        let want = if *email == emails[0] {
            "cancelled"
        } else {
            "sent"
        };
        assert_eq!(status, want, "{email}: {to:?}");
    }

    // Typed errors, in Spanish.
    let (status, v) = post(&app, path, &body("nadie@otra.mx"), Some(&cookie)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
    assert!(
        says(&v, "NOT_FOUND") && says(&v, "Ese correo no recibe esta secuencia"),
        "{v}"
    );
    let (status, v) = post(&app, path, &body("no-es-correo"), Some(&cookie)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(says(&v, "INVALID_ARGUMENT"), "{v}");
    let (status, v) = post(
        &app,
        path,
        &format!("sequence_id=seq_nada&email={}", enc(&emails[1])),
        Some(&cookie),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
}

#[tokio::test]
async fn a_step_edited_from_the_board_voids_the_authorization_and_bad_days_are_refused() {
    let (app, engine, cookie, caller) = signed_in().await;
    let (s, _) = testkit::authorized_sequence(
        &engine,
        &caller,
        &["EBA010101AB1", "CJA050505XY2"],
        &steps(),
    )
    .await;
    let path = "/api/edit_sequence_step";
    let edit = |version: i64, days: &str, subject: &str| {
        format!(
            "sequence_id={}&version={version}&index=1&delay_days={days}&subject={}&body={}",
            s.id,
            enc(subject),
            enc("Otro cuerpo")
        )
    };
    let (status, v) = post(&app, path, &edit(s.version, "-1", "Nuevo"), Some(&cookie)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(says(&v, "no pueden ser negativos"), "{v}");
    let (status, v) = post(&app, path, &edit(s.version, "4", "  "), Some(&cookie)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(says(&v, "El asunto del paso 2"), "{v}");

    let (status, v) = post(
        &app,
        path,
        &edit(s.version, "4", "Nuevo asunto"),
        Some(&cookie),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["voided"], Value::Bool(true));
    assert_eq!(v["version"], s.version + 1);
    let pending: i64 =
        sqlx::query_scalar("select count(*) from sequence_sends where status = 'pending'")
            .fetch_one(engine.store.pool())
            .await
            .unwrap();
    assert_eq!(pending, 0, "nothing goes out until authorized again");
    // The board's old version cannot overwrite the new one.
    let (status, v) = post(&app, path, &edit(s.version, "5", "Viejo"), Some(&cookie)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
}
