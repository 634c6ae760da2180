//! HTTP surface: health, page guard, server-function auth and session cookies.

use crate::helpers;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use luna_engine::demo::DEMO_PASSWORD;
use tower::ServiceExt;

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

fn form(path: &str, body: &str, cookie: Option<&str>) -> Request<Body> {
    let mut req =
        Request::post(path).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(c) = cookie {
        req = req.header(header::COOKIE, c);
    }
    req.body(Body::from(body.to_owned())).unwrap()
}

fn session_cookie(res: &axum::response::Response) -> Option<String> {
    res.headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("luna_session="))
        .map(str::to_owned)
}

#[tokio::test]
async fn health_and_readiness_answer() {
    let (app, _) = helpers::router().await;
    let res = app.clone().oneshot(get("/healthz")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let res = app.oneshot(get("/readyz")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
}

#[tokio::test]
async fn pages_redirect_to_login_without_a_session() {
    let (app, _) = helpers::router().await;
    for path in ["/", "/ajustes", "/conocimiento"] {
        let res = app.clone().oneshot(get(path)).await.unwrap();
        assert_eq!(res.status(), StatusCode::SEE_OTHER, "{path}");
        assert_eq!(res.headers()[header::LOCATION], "/login");
    }
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let (app, _) = helpers::router().await;
    let res = app.oneshot(get("/healthz")).await.unwrap();
    assert!(res.headers().contains_key("x-request-id"));
}

#[tokio::test]
async fn a_server_function_without_a_session_answers_401_with_a_typed_error() {
    let (app, _) = helpers::router().await;
    let res = app.oneshot(form("/api/whoami", "", None)).await.unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let body = axum::body::to_bytes(res.into_body(), 1 << 20)
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("UNAUTHORIZED"), "{text}");
}

#[tokio::test]
async fn login_sets_an_http_only_cookie_that_opens_the_app_and_rotates() {
    let (app, _) = helpers::router().await;
    let body = format!("email=ventas%40demo.luna.mx&password={DEMO_PASSWORD}");
    let res = app
        .clone()
        .oneshot(form("/api/login", &body, None))
        .await
        .unwrap();
    let first = session_cookie(&res).expect("cookie set");
    assert!(
        first.contains("HttpOnly") && first.contains("SameSite=Lax"),
        "{first}"
    );
    let pair = first.split(';').next().unwrap().to_owned();

    let res = app
        .clone()
        .oneshot(form("/api/whoami", "", Some(&pair)))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let me: serde_json::Value = serde_json::from_slice(
        &axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(me["email"], "ventas@demo.luna.mx");
    assert_eq!(me["role"], "member");

    let res = app
        .clone()
        .oneshot(form("/api/login", &body, Some(&pair)))
        .await
        .unwrap();
    let second = session_cookie(&res).unwrap();
    assert_ne!(first, second, "a new login mints a new session token");
}

#[tokio::test]
async fn a_member_gets_403_from_the_settings_function() {
    let (app, _) = helpers::router().await;
    let body = format!("email=ventas%40demo.luna.mx&password={DEMO_PASSWORD}");
    let res = app
        .clone()
        .oneshot(form("/api/login", &body, None))
        .await
        .unwrap();
    let pair = session_cookie(&res)
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let res = app
        .oneshot(form("/api/settings", "", Some(&pair)))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
}
