//! HTTP surface: health, page guard, server-function auth and session cookies.

use crate::helpers;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use luna_engine::demo::DEMO_PASSWORD;
use tower::ServiceExt;

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
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
    let res = app
        .oneshot(helpers::form("/api/whoami", "", None))
        .await
        .unwrap();
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
        .oneshot(helpers::form("/api/login", &body, None))
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
        .oneshot(helpers::form("/api/whoami", "", Some(&pair)))
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
        .oneshot(helpers::form("/api/login", &body, Some(&pair)))
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
        .oneshot(helpers::form("/api/login", &body, None))
        .await
        .unwrap();
    let pair = session_cookie(&res)
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let res = app
        .oneshot(helpers::form("/api/settings", "", Some(&pair)))
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

/// The repository's `public/`, which cargo-leptos copies into the site root.
fn public_dir() -> String {
    format!("{}/../public", env!("CARGO_MANIFEST_DIR"))
}

async fn body_bytes(res: axum::response::Response) -> Vec<u8> {
    axum::body::to_bytes(res.into_body(), 1 << 22)
        .await
        .unwrap()
        .to_vec()
}

/// A PNG's width and height, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[1..4], b"PNG", "not a PNG");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[tokio::test]
async fn the_web_app_files_load_without_a_session() {
    // Browsers fetch the manifest and its icons without cookies: a redirect to /login
    // would leave the app without icons and not installable.
    let (app, _) = helpers::router_serving(&public_dir()).await;
    for (path, mime) in [
        ("/favicon.ico", "image/x-icon"),
        ("/favicon.svg", "image/svg+xml"),
        ("/apple-touch-icon.png", "image/png"),
        ("/robots.txt", "text/plain"),
        ("/manifest.webmanifest", "application/manifest+json"),
    ] {
        let res = app.clone().oneshot(get(path)).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        let got = res.headers()[header::CONTENT_TYPE].to_str().unwrap();
        assert!(got.starts_with(mime), "{path}: {got}");
    }

    let res = app
        .clone()
        .oneshot(get("/manifest.webmanifest"))
        .await
        .unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(&body_bytes(res).await).unwrap();
    assert_eq!(manifest["name"], "Luna");
    assert_eq!(manifest["start_url"], "/");
    assert_eq!(manifest["display"], "standalone");
    let icons = manifest["icons"].as_array().unwrap();
    let mut have = Vec::new();
    for icon in icons.iter().filter(|i| i["type"] == "image/png") {
        let src = icon["src"].as_str().unwrap();
        let res = app.clone().oneshot(get(src)).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{src}");
        let (w, h) = png_size(&body_bytes(res).await);
        assert_eq!(icon["sizes"], format!("{w}x{h}"), "{src} is {w}x{h}");
        have.push((w, icon["purpose"].as_str().unwrap_or("any").to_owned()));
    }
    for want in [(192, "any"), (512, "any"), (512, "maskable")] {
        assert!(
            have.iter().any(|(w, p)| *w == want.0 && p == want.1),
            "no {want:?} icon in {have:?}"
        );
    }
}

#[tokio::test]
async fn pages_link_the_icons_the_manifest_and_both_theme_colours() {
    let (app, _) = helpers::router_serving(&public_dir()).await;
    let res = app.oneshot(get("/login")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let csp = res.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("manifest-src 'self'"), "{csp}");
    let html = String::from_utf8(body_bytes(res).await).unwrap();
    for needle in [
        r#"rel="manifest" href="/manifest.webmanifest""#,
        r#"rel="icon" href="/favicon.svg""#,
        r#"rel="apple-touch-icon" href="/apple-touch-icon.png""#,
        r#"media="(prefers-color-scheme: light)""#,
        r#"media="(prefers-color-scheme: dark)""#,
    ] {
        assert!(html.contains(needle), "no {needle} in the page head");
    }
}
