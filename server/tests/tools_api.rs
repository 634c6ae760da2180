//! The interface's tool server functions, over HTTP with a session cookie.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use leptos::config::LeptosOptions;
use luna_app::server::CookiePolicy;
use luna_server::{app, AppState};
use serde_json::{json, Value};
use tower::ServiceExt;

#[tokio::test]
async fn the_ui_lists_its_tools_and_calls_them_through_the_pipeline() {
    let engine = luna_engine::testkit::engine().await.unwrap();
    luna_engine::demo::seed_if_empty(&engine.accounts)
        .await
        .unwrap();
    let (token, caller) = engine
        .accounts
        .login(
            "ventas@demo.luna.mx",
            luna_engine::demo::DEMO_PASSWORD,
            luna_engine::accounts::ClientIp::LOCAL,
        )
        .await
        .unwrap();
    let router = app(AppState {
        leptos_options: LeptosOptions::builder().output_name("luna").build(),
        engine: engine.clone(),
        cookie: CookiePolicy::default(),
        proxies: Default::default(),
        guard: Default::default(),
        sockets: luna_server::sockets::Sockets::default(),
    });
    let post = |path: &str, body: Value, cookie: bool| {
        let mut req = Request::post(path)
            .header("content-type", "application/json")
            .header("accept", "application/json");
        if cookie {
            req = req.header("cookie", format!("luna_session={token}"));
        }
        req.body(Body::from(body.to_string())).unwrap()
    };
    let read = |resp: axum::response::Response| async move {
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        (
            status,
            serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null),
        )
    };

    let (status, body) = read(
        router
            .clone()
            .oneshot(post(
                "/api/call_tool",
                json!({"name": "usage", "args": {}, "idempotency_key": null}),
                true,
            ))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["results"][0]["ref"],
        json!(format!("workspace:{}", caller.workspace_id))
    );

    let (status, body) = read(
        router
            .clone()
            .oneshot(post(
                "/api/call_tool",
                json!({"name": "usage", "args": {"x": 1}, "idempotency_key": null}),
                true,
            ))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["code"], json!("INVALID_ARGUMENT"));

    let (status, _) = read(
        router
            .clone()
            .oneshot(post(
                "/api/call_tool",
                json!({"name": "usage", "args": {}, "idempotency_key": null}),
                false,
            ))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let req = Request::post("/api/tools")
        .header("cookie", format!("luna_session={token}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::empty())
        .unwrap();
    let (status, body) = read(router.clone().oneshot(req).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let labels: Vec<&str> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"Consultando tus créditos"), "{labels:?}");

    // Both calls that reached the pipeline left a telemetry row with the ui surface
    // (the one without a session was refused before it).
    let n: i64 = sqlx::query_scalar(
        "select count(*) from tool_calls where surface = 'ui' and workspace_id = $1",
    )
    .bind(&caller.workspace_id)
    .fetch_one(engine.store.pool())
    .await
    .unwrap();
    assert_eq!(n, 2);
}
