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

/// Posts a login from `client` (as the trusted proxy in front reports it); the status.
async fn login_from(app: &helpers::TestApp, client: &str, password: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("http://{}/api/login", app.addr))
        .header("x-forwarded-for", client)
        .form(&[("email", "duena@demo.luna.mx"), ("password", password)])
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_throttled_address_does_not_lock_the_owner_out_from_another() {
    let localhost = "127.0.0.1".parse().unwrap();
    let app =
        helpers::spawn_app_behind(luna_server::client_ip::TrustedProxies::new(vec![localhost]))
            .await;
    let attacker = "203.0.113.5";
    for _ in 0..luna_engine::accounts::MAX_FAILURES {
        assert_eq!(login_from(&app, attacker, "adivina").await, 401);
    }
    assert_eq!(login_from(&app, attacker, DEMO_PASSWORD).await, 429);
    assert_eq!(login_from(&app, "198.51.100.7", DEMO_PASSWORD).await, 200);
}

#[tokio::test]
async fn without_a_trusted_proxy_the_forwarded_header_changes_nothing() {
    let app = helpers::spawn_app().await;
    for _ in 0..luna_engine::accounts::MAX_FAILURES {
        assert_eq!(login_from(&app, "203.0.113.5", "adivina").await, 401);
    }
    // The same peer claiming another address is still the throttled peer.
    assert_eq!(login_from(&app, "198.51.100.7", DEMO_PASSWORD).await, 429);
}
