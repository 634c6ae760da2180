//! `/mcp` in process: the full router answered with `tower::ServiceExt::oneshot`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use leptos::config::LeptosOptions;
use luna_app::server::CookiePolicy;
use luna_engine::testkit::World;
use luna_engine::Engine;
use luna_protocol::account::{Plan, Role};
use luna_server::{app, AppState};
use serde_json::{json, Value};
use tower::ServiceExt;

async fn setup() -> (Router, Engine, String) {
    setup_with(&luna_protocol::account::ApiScope::ALL).await
}

/// The router and a key carrying `scopes` (all of them: the whole public catalog).
async fn setup_with(scopes: &[luna_protocol::account::ApiScope]) -> (Router, Engine, String) {
    let w = World::new(Plan::Founder, Role::Owner).await.unwrap();
    let key = w
        .engine
        .accounts
        .create_api_key(
            &w.caller,
            &luna_engine::accounts::KeySpec::read_only("pruebas").with_scopes(scopes),
        )
        .await
        .unwrap();
    let state = AppState {
        leptos_options: LeptosOptions::builder().output_name("luna").build(),
        engine: w.engine.clone(),
        cookie: CookiePolicy::default(),
        proxies: Default::default(),
        guard: Default::default(),
        sockets: luna_server::sockets::Sockets::default(),
    };
    (app(state), w.engine, key.secret)
}

async fn rpc(app: &Router, key: Option<&str>, body: Value) -> (StatusCode, Value) {
    let mut req = Request::post("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("host", "localhost:3000");
    if let Some(k) = key {
        req = req.header("authorization", format!("Bearer {k}"));
    }
    let resp = app
        .clone()
        .oneshot(req.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 22)
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&bytes).to_string();
    // JSON responses; tolerate an SSE frame just in case.
    let json_text = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .unwrap_or(text.trim())
        .to_owned();
    (
        status,
        serde_json::from_str(&json_text).unwrap_or(Value::String(text)),
    )
}

/// CONTRACT §5 "The catalog": the tools public over MCP, alphabetically.
const PUBLIC_CATALOG: [&str; 25] = [
    "collection_query",
    "company_save",
    "company_search",
    "context_create",
    "context_delete",
    "context_get",
    "context_retrieve",
    "context_update",
    "crm_record",
    "market_aggregate",
    "market_capabilities",
    "market_compare",
    "market_count",
    "market_get",
    "market_history",
    "market_screen",
    "market_search",
    "people_acquired",
    "people_file",
    "people_quote",
    "people_reveal",
    "people_search",
    "people_status",
    "usage",
    "workspaces",
];

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}})
}

#[tokio::test]
async fn tools_list_is_the_public_catalog_with_derived_annotations() {
    let (app, engine, key) = setup().await;
    let (status, body) = rpc(&app, Some(&key), init()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = rpc(
        &app,
        Some(&key),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let tools = body["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = engine
        .registry
        .list(luna_engine::registry::Surface::Mcp)
        .iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, expected);
    // CONTRACT §5: the 25 public tools, no more and no fewer.
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted, PUBLIC_CATALOG,
        "tools/list is the CONTRACT §5 catalog"
    );
    let usage = &tools[0];
    assert_eq!(usage["inputSchema"]["additionalProperties"], json!(false));
    assert_eq!(usage["annotations"]["readOnlyHint"], json!(true));
    assert_eq!(usage["annotations"]["destructiveHint"], json!(false));
    let size = serde_json::to_string(&body["result"]).unwrap().len();
    println!("tools/list: {} tools, {size} bytes", tools.len());
    assert!(size < 80 * 1024, "tools/list is {size} bytes");
}

/// An agent sees what its key may call: a read-only key lists no tool that writes,
/// reveals or deletes, and one scope adds exactly the tools that need it.
#[tokio::test]
async fn tools_list_shows_only_what_the_key_may_call() {
    use luna_protocol::account::ApiScope;
    let listed = |app: Router, key: String| async move {
        let (status, body) = rpc(
            &app,
            Some(&key),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let mut names: Vec<String> = body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort_unstable();
        names
    };
    let (app, _, key) = setup_with(&[]).await;
    let read_only = listed(app, key).await;
    for writer in [
        "people_reveal",
        "context_delete",
        "context_create",
        "crm_record",
        "company_save",
    ] {
        assert!(
            !read_only.iter().any(|n| n == writer),
            "a read-only key lists {writer}: {read_only:?}"
        );
    }
    for reader in ["market_search", "usage", "people_quote", "context_get"] {
        assert!(read_only.iter().any(|n| n == reader), "{reader} missing");
    }
    let (app, _, key) = setup_with(&[ApiScope::ContactsReveal]).await;
    let reveal = listed(app, key).await;
    let added: Vec<&String> = reveal.iter().filter(|n| !read_only.contains(n)).collect();
    assert_eq!(
        added,
        ["people_reveal"],
        "the reveal scope adds only its tool"
    );
}

#[tokio::test]
async fn tools_call_returns_structured_content_and_errors_as_data() {
    let (app, _engine, key) = setup().await;
    let call = |name: &str, args: Value| json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": args}});
    let (_, body) = rpc(&app, Some(&key), call("usage", json!({}))).await;
    let result = &body["result"];
    assert_eq!(result["isError"], json!(false), "{body}");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
    assert_eq!(
        result["structuredContent"]["results"][0]["plan"],
        json!("founder")
    );

    let (_, body) = rpc(&app, Some(&key), call("usage", json!({"limit": 5}))).await;
    assert_eq!(body["result"]["isError"], json!(true));
    assert_eq!(
        body["result"]["structuredContent"]["error"]["code"],
        json!("INVALID_ARGUMENT")
    );
}

#[tokio::test]
async fn a_missing_bad_or_revoked_key_is_401_and_a_foreign_origin_is_403() {
    let (app, engine, key) = setup().await;
    assert_eq!(rpc(&app, None, init()).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(
        rpc(&app, Some("luna_nope"), init()).await.0,
        StatusCode::UNAUTHORIZED
    );
    let caller = engine.accounts.api_key_caller(&key).await.unwrap().unwrap();
    let id = caller.api_key_id().unwrap().to_owned();
    engine.accounts.revoke_api_key(&caller, &id).await.unwrap();
    let (status, body) = rpc(&app, Some(&key), init()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], json!("UNAUTHORIZED"));

    let req = Request::post("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("origin", "https://evil.example")
        .header("host", "luna.mx")
        .body(Body::from(init().to_string()))
        .unwrap();
    assert_eq!(
        app.clone().oneshot(req).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    // Reads too: a rebinding page may not even open the event stream.
    let req = Request::get("/mcp")
        .header("accept", "text/event-stream")
        .header("authorization", format!("Bearer {key}"))
        .header("origin", "http://localhost:5173")
        .header("host", "127.0.0.1:3000")
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        app.clone().oneshot(req).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn an_idempotency_key_in_meta_is_bound_to_its_request() {
    let (app, engine, key) = setup().await;
    let search = |query: &str| {
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "market_search",
            "arguments": {"kind": "suppliers", "query": query},
            "_meta": {"luna/idempotency_key": "agente-7"}}})
    };
    let (_, first) = rpc(&app, Some(&key), search("empaque")).await;
    assert_eq!(first["result"]["isError"], json!(false), "{first}");
    let (_, other) = rpc(&app, Some(&key), search("acero")).await;
    assert_eq!(other["result"]["isError"], json!(true), "{other}");
    assert_eq!(
        other["result"]["structuredContent"]["error"]["code"],
        json!("IDEMPOTENCY_CONFLICT")
    );
    let (_, again) = rpc(&app, Some(&key), search("empaque")).await;
    assert_eq!(
        again["result"]["structuredContent"]["ref"], first["result"]["structuredContent"]["ref"],
        "the same request is replayed, not run again"
    );
    let charged: i64 = sqlx::query_scalar("select count(*) from receipts")
        .fetch_one(engine.store.pool())
        .await
        .unwrap();
    assert_eq!(charged, 1);
}

/// An outside agent under prompt injection holds a default key: it reads, but the
/// pipeline refuses a delete and a reveal with FORBIDDEN naming the missing scope; the
/// key's last use is recorded; once expired it is a 401.
#[tokio::test]
async fn a_default_key_is_read_only_over_mcp_and_an_expired_one_is_401() {
    let (app, engine, key) = setup_with(&[]).await;
    let call = |name: &str, args: Value| json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": name, "arguments": args}});
    let (_, body) = rpc(&app, Some(&key), call("usage", json!({}))).await;
    assert_eq!(body["result"]["isError"], json!(false), "{body}");
    for (tool, args, scope) in [
        (
            "context_delete",
            json!({"topic": "topic:icp"}),
            "knowledge:delete",
        ),
        (
            "people_reveal",
            json!({"quote_id": "quo_x", "confirm": true, "max_credits": 2, "idempotency_key": "k"}),
            "contacts:reveal",
        ),
    ] {
        let (_, body) = rpc(&app, Some(&key), call(tool, args)).await;
        let error = &body["result"]["structuredContent"]["error"];
        assert_eq!(body["result"]["isError"], json!(true), "{body}");
        assert_eq!(error["code"], json!("FORBIDDEN"), "{body}");
        assert!(error["message"].as_str().unwrap().contains(scope), "{body}");
    }
    let used: Option<i64> = sqlx::query_scalar("select last_used_at from api_keys")
        .fetch_one(engine.store.pool())
        .await
        .unwrap();
    assert!(used.is_some(), "last use recorded");

    sqlx::query("update api_keys set expires_at = 1")
        .execute(engine.store.pool())
        .await
        .unwrap();
    let (status, body) = rpc(&app, Some(&key), init()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], json!("UNAUTHORIZED"));
}
