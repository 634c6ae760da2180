//! The trust holes, tried as an attacker would over the real router: forged cross-site
//! posts and websocket upgrades, oversized and endless bodies, an idempotency key
//! reused to get a second search for free, messages fired at once at a session in
//! auto mode, a file pattern built to backtrack, a suggested edit built to make the diff
//! explode. Each test asserts the safe outcome.

use luna_engine::billing::Ledger;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::helpers::{handshake_status, spawn_app, TestApp};

const EVIL: &str = "https://evil.example";

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn post_tool(app: &TestApp, token: &str, origin: Option<&str>, body: Value) -> (u16, Value) {
    let mut req = client()
        .post(format!("http://{}/api/call_tool", app.addr))
        .header("cookie", format!("luna_session={token}"))
        .header("accept", "application/json")
        .json(&body);
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    let resp = req.send().await.expect("the server answers");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_forged_cross_site_post_is_refused_and_the_own_origin_passes() {
    let app = spawn_app().await;
    let (token, _) = app.login("ventas@demo.luna.mx").await;
    let usage = json!({"name": "usage", "args": {}, "idempotency_key": null});

    let (status, body) = post_tool(&app, &token, Some(EVIL), usage.clone()).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], json!("FORBIDDEN"));

    // A browser's fetch metadata alone is enough to refuse it.
    let resp = client()
        .post(format!("http://{}/api/logout", app.addr))
        .header("cookie", format!("luna_session={token}"))
        .header("sec-fetch-site", "cross-site")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 403);
    // The forged logout did nothing: the session still resolves.
    assert!(app
        .engine
        .accounts
        .session_caller(&token)
        .await
        .unwrap()
        .is_some());

    let own = format!("http://{}", app.addr);
    let (status, body) = post_tool(&app, &token, Some(&own), usage).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["results"].is_array(), "{body}");
}

#[tokio::test]
async fn a_websocket_from_another_origin_is_refused() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let app = spawn_app().await;
    let (token, caller) = app.login("ventas@demo.luna.mx").await;
    let session = app.engine.sessions.create(&caller).await.unwrap();
    let url = format!(
        "ws://{}/api/sessions/{}/events?since=0",
        app.addr, session.id
    );
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("cookie", format!("luna_session={token}").parse().unwrap());
    request
        .headers_mut()
        .insert("origin", EVIL.parse().unwrap());
    let refused = tokio_tungstenite::connect_async(request).await.unwrap_err();
    assert_eq!(handshake_status(refused), 403);
    // The same socket from the app's own page opens.
    assert!(app.connect(Some(&token), &session.id, 0).await.is_ok());
}

#[tokio::test]
async fn an_oversized_body_is_a_typed_413_before_anything_reads_it() {
    let app = spawn_app().await;
    let big = "a".repeat(30 * 1024 * 1024);
    let resp = client()
        .post(format!("http://{}/api/login", app.addr))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("email=x%40y.mx&password={big}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 413);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], json!("PAYLOAD_TOO_LARGE"), "{body}");

    // Without a declared length (chunked), the body is cut at the limit all the same.
    let mut tcp = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let head = format!(
        "POST /api/login HTTP/1.1\r\nhost: {}\r\ncontent-type: application/x-www-form-urlencoded\r\ntransfer-encoding: chunked\r\n\r\n",
        app.addr
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "b".repeat(64 * 1024));
    for _ in 0..32 {
        if tcp.write_all(chunk.as_bytes()).await.is_err() {
            break; // the server answered and closed: that is the point
        }
    }
    let mut answer = vec![0u8; 64];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), tcp.read(&mut answer))
        .await
        .expect("an answer")
        .unwrap_or(0);
    let status_line = String::from_utf8_lossy(&answer[..n]).to_string();
    assert!(status_line.starts_with("HTTP/1.1 413"), "{status_line}");
}

#[tokio::test]
async fn a_reused_idempotency_key_never_buys_a_second_search() {
    let app = spawn_app().await;
    let (token, caller) = app.login("ventas@demo.luna.mx").await;
    let search = |query: &str| {
        json!({"name": "market_search",
               "args": {"kind": "suppliers", "query": query},
               "idempotency_key": "mi-llave-1"})
    };
    let (status, first) = post_tool(&app, &token, None, search("empaque")).await;
    assert_eq!(status, 200);
    assert!(first["results"].is_array(), "{first}");
    let used = || async {
        app.engine
            .billing
            .balance(&caller, Ledger::Intelligence)
            .await
            .unwrap()
            .used
    };
    assert_eq!(used().await, 1);

    let (_, other) = post_tool(&app, &token, None, search("acero")).await;
    assert_eq!(
        other["error"]["code"],
        json!("IDEMPOTENCY_CONFLICT"),
        "{other}"
    );
    assert_eq!(used().await, 1, "the conflicting search ran for free");

    let (_, again) = post_tool(&app, &token, None, search("empaque")).await;
    assert_eq!(
        again["ref"], first["ref"],
        "a replay, not a fresh execution"
    );
    assert_eq!(used().await, 1);
}

#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let app = spawn_app().await;
    let resp = client()
        .get(format!("http://{}/healthz", app.addr))
        .send()
        .await
        .unwrap();
    let h = resp.headers();
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(csp.contains("default-src 'self'"), "{csp}");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["referrer-policy"], "same-origin");
    let script_src = |csp: &str| {
        csp.split(';')
            .map(str::trim)
            .find(|d| d.starts_with("script-src"))
            .unwrap_or_else(|| panic!("no script-src in {csp}"))
            .to_owned()
    };
    assert!(!script_src(csp).contains("unsafe-inline"), "{csp}");

    // A page allows inline scripts only with its own nonce, and leptos' carry it.
    let page = client()
        .get(format!("http://{}/login", app.addr))
        .send()
        .await
        .unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap_or_else(|| panic!("no nonce in {csp}"))
        .to_owned();
    assert!(!script_src(&csp).contains("unsafe-inline"), "{csp}");
    let html = page.text().await.unwrap();
    assert!(html.contains("<script"), "the page has scripts");
    for script in html.split("<script").skip(1) {
        let tag = script.split('>').next().unwrap_or("");
        assert!(
            tag.contains(" src=") || tag.contains(&format!("nonce=\"{nonce}\"")),
            "an inline script without the page's nonce: <script{tag}>"
        );
    }
}

/// Every page, in every rendering mode, goes out with a policy whose nonce is the one
/// its inline scripts carry, under concurrent load: a page whose header lost its nonce
/// (it happened once to `/conocimiento` in CI) cannot hydrate.
#[tokio::test]
async fn every_page_carries_the_nonce_its_scripts_carry() {
    let app = spawn_app().await;
    let (token, _) = app.login("duena@demo.luna.mx").await;
    let pages = [
        "/",
        "/conocimiento",
        "/ajustes",
        "/herramientas",
        "/login",
        "/no-existe",
    ];
    let fetch = |path: &'static str| {
        let (addr, token) = (app.addr, token.clone());
        async move {
            let page = client()
                .get(format!("http://{addr}{path}"))
                .header("cookie", format!("luna_session={token}"))
                .send()
                .await
                .unwrap();
            let csp = page.headers()["content-security-policy"]
                .to_str()
                .unwrap()
                .to_owned();
            (path, csp, page.text().await.unwrap())
        }
    };
    for _ in 0..10 {
        let answers = futures_util::future::join_all(pages.iter().map(|p| fetch(p))).await;
        for (path, csp, html) in answers {
            let nonce = csp
                .split("'nonce-")
                .nth(1)
                .and_then(|rest| rest.split('\'').next())
                .unwrap_or_else(|| panic!("{path}: no nonce in {csp}"));
            let inline: Vec<&str> = html
                .split("<script")
                .skip(1)
                .map(|s| s.split('>').next().unwrap_or(""))
                .filter(|tag| !tag.contains(" src="))
                .collect();
            assert!(!inline.is_empty(), "{path}: the page has inline scripts");
            for tag in inline {
                assert!(
                    tag.contains(&format!("nonce=\"{nonce}\"")),
                    "{path}: <script{tag}> without the header's nonce {nonce}"
                );
            }
        }
    }
}

/// Three requests for contacts fired at once at a session in *Automático con
/// presupuesto* with room for one reveal: one turn runs at a time (the others steer it
/// or wait their turn), and the session never spends past its caps.
#[tokio::test]
async fn concurrent_messages_in_auto_mode_never_pass_the_budget() {
    use crate::scene::{pending_card, resolve_over_socket, server_fn, turn_over_socket};
    use luna_protocol::session::{ModeRequest, SessionMode, TurnAck};
    // Only a save: a request that also asked for contacts would go on by itself once
    // the card is accepted (a chained request) and the messages below would steer it.
    const SAVE: &str =
        "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos.";

    let app = spawn_app().await;
    app.engine.market.ensure_demo().await.unwrap();
    luna_engine::crm::demo::seed(&app.engine.store)
        .await
        .unwrap();
    let (token, caller) = app.login("ventas@demo.luna.mx").await;
    let (_, body) = server_fn(&app, &token, "create_session", &[]).await;
    let session: String = serde_json::from_str(&body).unwrap();
    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();
    let first = turn_over_socket(&app, &token, &mut socket, &session, SAVE, "a-1").await;
    let save = pending_card(&first).clone();
    resolve_over_socket(
        &app,
        &token,
        &mut socket,
        &session,
        &save,
        "resolve_decision",
        &[("resolution", "accept")],
    )
    .await;
    let contacts_cap = 10;
    luna_engine::decisions::auto::set_mode(
        &app.engine,
        &caller,
        &session,
        &ModeRequest {
            mode: SessionMode::Automatico,
            credit_cap: Some(1_000),
            contact_cap: Some(contacts_cap),
            classes: None,
        },
    )
    .await
    .unwrap();

    let send = |key: &'static str| {
        let (app, token, session) = (&app, token.clone(), session.clone());
        async move {
            let form = [
                ("session_id", session.as_str()),
                ("text", "consígueme el correo de los 10 mejores"),
                ("idempotency_key", key),
            ];
            let (code, body) = server_fn(app, &token, "send_message", &form).await;
            assert_eq!(code, 200, "{body}");
            serde_json::from_str::<TurnAck>(&body).unwrap()
        }
    };
    let (a, b, c) = tokio::join!(send("c-1"), send("c-2"), send("c-3"));

    // Wait until the session is idle again.
    let running = || async {
        sqlx::query_scalar::<_, i64>(
            "select count(*) from turns where session_id = $1 and status = 'running'",
        )
        .bind(&session)
        .fetch_one(app.engine.store.pool())
        .await
        .unwrap()
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(90);
    while running().await > 0 {
        assert!(tokio::time::Instant::now() < deadline, "the turns finished");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Every ack names a turn of this session; the messages that did not start one
    // steered the turn that was running.
    let started = [&a, &b, &c].iter().filter(|t| !t.steering).count() as i64;
    let turns: i64 = sqlx::query_scalar("select count(*) from turns where session_id = $1")
        .bind(&session)
        .fetch_one(app.engine.store.pool())
        .await
        .unwrap();
    assert_eq!(turns, 1 + started, "{a:?} {b:?} {c:?}");
    let counter = luna_engine::decisions::auto::counter(&app.engine, &caller, &session)
        .await
        .unwrap()
        .expect("auto mode is on");
    assert!(
        counter.contacts_spent <= contacts_cap,
        "spent {} contacts with a cap of {contacts_cap}",
        counter.contacts_spent
    );
    let revealed: i64 = sqlx::query_scalar(
        "select count(*) from decisions where session_id = $1 and kind = 'revelar_contactos' and status = 'accepted'",
    )
    .bind(&session)
    .fetch_one(app.engine.store.pool())
    .await
    .unwrap();
    assert!(
        revealed <= 1,
        "{revealed} reveals ran in auto mode with room for one"
    );
}

async fn call_ui(app: &TestApp, token: &str, name: &str, args: Value) -> (u16, Value) {
    let own = format!("http://{}", app.addr);
    post_tool(
        app,
        token,
        Some(&own),
        json!({"name": name, "args": args, "idempotency_key": null}),
    )
    .await
}

/// A stored file pattern built to make a backtracking matcher explode answers at
/// once over HTTP, and an overlong one is refused with a typed error.
#[tokio::test]
async fn a_pathological_file_pattern_answers_at_once_over_http() {
    let app = spawn_app().await;
    let (token, _) = app.login("ventas@demo.luna.mx").await;
    let pattern = "a*a*a*a*a*a*a*a*a*a*a*a*b";
    let (status, body) = call_ui(
        &app,
        &token,
        "context_create",
        json!({"title": "Rutas raras", "area": "ventas", "body": "Patrones.", "patterns": [pattern]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let file = "a".repeat(64);
    let answered = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        call_ui(&app, &token, "context_retrieve", json!({"files": [file]})),
    )
    .await
    .expect("matching a pattern must not stall the server");
    assert_eq!(answered.0, 200, "{}", answered.1);
    let long = format!("gobierno/{}", "x".repeat(300));
    let (status, body) = call_ui(
        &app,
        &token,
        "context_create",
        json!({"title": "Larga", "area": "ventas", "body": "y", "patterns": [long]}),
    )
    .await;
    // Tool errors travel as the call's typed result.
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["error"]["code"], json!("INVALID_ARGUMENT"), "{body}");
}

/// A suggested edit sized to make a quadratic diff allocate gigabytes is refused with
/// a typed error (over the body cap) or a 413 (over the route's limit), at once.
#[tokio::test]
async fn a_huge_suggested_edit_is_refused_at_once() {
    let app = spawn_app().await;
    let (token, _) = app.login("ventas@demo.luna.mx").await;
    // Under the route's 256 KB but over the topic body cap.
    let patch = "línea distinta\n".repeat(12_000);
    let (status, body) = call_ui(
        &app,
        &token,
        "context_suggest_edit",
        json!({"topic": "topic:icp-fabricantes-de-empaque", "summary": "Todo", "patch": patch}),
    )
    .await;
    // Tool errors travel as the call's typed result.
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["error"]["code"], json!("INVALID_ARGUMENT"), "{body}");
    // Over the route's limit: refused before anything reads it.
    let patch = "x".repeat(400 * 1024);
    let (status, body) = call_ui(
        &app,
        &token,
        "context_suggest_edit",
        json!({"topic": "topic:icp-fabricantes-de-empaque", "summary": "Todo", "patch": patch}),
    )
    .await;
    assert_eq!(status, 413, "{body}");
}
