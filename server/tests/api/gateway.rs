//! The OpenAI-compatible gateway against a stub provider (an axum server on port 0
//! that speaks the chat-completions wire format): request shape, the gate order,
//! bounded retries, the spend cap and that the key never reaches the logs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use luna_engine::accounts::Caller;
use luna_engine::testkit::World;
use luna_engine::turn::gateway::Route;
use luna_engine::turn::openai::pin::{self, Pin};
use luna_engine::turn::openai::{ApiKey, GatewayConfig, OpenAiGateway, Profile};
use luna_engine::turn::runner::{run_turn, TurnOutcome};
use luna_engine::Engine;
use luna_protocol::account::{Plan, Role};
use luna_protocol::event::{RefusalCode, SessionEvent};
use luna_protocol::session::Stage;
use luna_protocol::stream::StreamMessage;
use serde_json::{json, Value};

const KEY: &str = "sk-stub-0123456789-secreto";
const PRIMARY: &str = "primario-barato";
const FALLBACK: &str = "respaldo-caro";
const MESSAGE: &str = "¿Cuántos proveedores de empaque hay en Jalisco?";

/// What the stub answers: status, body and how long it waits first. With `sse`, the
/// body is an array of chunks sent as server-sent events, one write per event
/// (`[DONE]` last unless `cut`).
struct Reply {
    status: u16,
    body: Value,
    delay: Duration,
    sse: Option<Sse>,
}

#[derive(Clone, Copy)]
enum Sse {
    Complete,
    Cut,
}

type Script = dyn Fn(&str, usize) -> Reply + Send + Sync;

/// One request the stub received.
#[derive(Clone, Debug)]
struct Seen {
    authorization: Option<String>,
    body: Value,
}

#[derive(Clone)]
struct Stub {
    seen: Arc<Mutex<Vec<Seen>>>,
    script: Arc<Script>,
}

async fn completions(
    State(stub): State<Stub>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let nth = {
        let mut seen = stub.seen.lock().unwrap();
        seen.push(Seen {
            authorization: headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            body,
        });
        seen.iter().filter(|s| s.body["model"] == model).count()
    };
    let reply = (stub.script)(&model, nth);
    tokio::time::sleep(reply.delay).await;
    if let Some(sse) = reply.sse {
        let mut events: Vec<String> = reply
            .body
            .as_array()
            .unwrap()
            .iter()
            .map(|chunk| format!("data: {chunk}\n\n"))
            .collect();
        if matches!(sse, Sse::Complete) {
            events.push("data: [DONE]\n\n".to_owned());
        }
        let body = axum::body::Body::from_stream(futures_util::stream::iter(
            events
                .into_iter()
                .map(|e| Ok::<_, std::convert::Infallible>(e.into_bytes())),
        ));
        return (
            StatusCode::OK,
            [("content-type", "text/event-stream")],
            body,
        )
            .into_response();
    }
    (
        StatusCode::from_u16(reply.status).unwrap(),
        Json(reply.body),
    )
        .into_response()
}

/// Starts the stub; `script(model, n)` answers the n-th request (1-based) for `model`.
async fn stub(script: impl Fn(&str, usize) -> Reply + Send + Sync + 'static) -> (String, Stub) {
    let stub = Stub {
        seen: Arc::default(),
        script: Arc::new(script),
    };
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(stub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), stub)
}

impl Stub {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn models(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| s.body["model"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

fn ok(message: Value) -> Reply {
    Reply {
        status: 200,
        body: json!({
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 100,
                      "prompt_tokens_details": {"cached_tokens": 640}}
        }),
        delay: Duration::ZERO,
        sse: None,
    }
}

/// A streamed answer: `deltas` become one chunk each, then the usage chunk.
fn streamed(deltas: &[Value], finish: &str, sse: Sse) -> Reply {
    let mut chunks: Vec<Value> = deltas
        .iter()
        .map(|d| {
            json!({"object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": d, "finish_reason": null}]})
        })
        .collect();
    if matches!(sse, Sse::Complete) {
        chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
        chunks.push(
            json!({"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 40,
                                                    "prompt_cache_hit_tokens": 512}}),
        );
    }
    Reply {
        status: 200,
        body: Value::Array(chunks),
        delay: Duration::ZERO,
        sse: Some(sse),
    }
}

fn tool_call(name: &str, args: Value) -> Reply {
    ok(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_stub_1", "type": "function",
         "function": {"name": name, "arguments": args.to_string()}}
    ]}))
}

fn final_answer(narration: &str) -> Reply {
    let content = json!({"intent": {"tipo": "responder"}, "narracion": narration}).to_string();
    ok(json!({"role": "assistant", "content": content}))
}

fn prose() -> Reply {
    ok(json!({"role": "assistant", "content": "Claro, con gusto te ayudo con eso."}))
}

fn status(code: u16) -> Reply {
    Reply {
        status: code,
        body: json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}),
        delay: Duration::ZERO,
        sse: None,
    }
}

fn config(base_url: &str, fallback: bool) -> GatewayConfig {
    let mut c = GatewayConfig::new(base_url, PRIMARY);
    c.api_key = Some(ApiKey::new(KEY));
    c.fallback = fallback.then(|| Profile {
        model: FALLBACK.to_owned(),
        price: None,
    });
    c.timeout = Duration::from_millis(300);
    c.retry_backoff = Duration::from_millis(10);
    c
}

async fn setup() -> (World, String) {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let session = w.engine.sessions.create(&w.caller).await.unwrap().id;
    (w, session)
}

async fn turn(
    engine: &Engine,
    gateway: &OpenAiGateway,
    caller: &Caller,
    session: &str,
) -> TurnOutcome {
    run_turn(engine, gateway, caller, session, "turn_gw", MESSAGE)
        .await
        .expect("the turn ends without an engine error")
}

async fn attempts(engine: &Engine) -> Vec<(String, Option<String>, String)> {
    sqlx::query_as("select route, reason, outcome from model_attempts order by id")
        .fetch_all(engine.store.pool())
        .await
        .unwrap()
}

async fn refusal(engine: &Engine, caller: &Caller, session: &str) -> Option<RefusalCode> {
    let events = engine
        .sessions
        .events_since(caller, session, 0)
        .await
        .unwrap();
    events.iter().find_map(|e| match &e.event {
        SessionEvent::TurnRefused(r) => {
            assert_eq!(r.http_status, r.code.http_status());
            Some(r.code)
        }
        _ => None,
    })
}

#[tokio::test]
async fn the_primary_receives_the_projected_tools_and_ends_the_turn() {
    let (url, stub) = stub(|_, n| match n {
        1 => tool_call(
            "market_count",
            json!({"kind": "suppliers", "filters": {"state": "Jalisco"}}),
        ),
        _ => final_answer("Conté [[evidence:c1.shown]] resultados."),
    })
    .await;
    let (w, session) = setup().await;
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;

    assert_eq!(out.route, Route::Primary);
    assert_eq!(out.intent.kind(), "responder", "{:?}", out.narration);
    assert_eq!(out.transcript[0].tool.name, "market_count");
    let seen = stub.seen();
    assert_eq!(stub.models(), [PRIMARY, PRIMARY]);
    let projected: Vec<&str> = w
        .engine
        .registry
        .for_stage(Stage::Buscando)
        .iter()
        .map(|d| d.name)
        .collect();
    assert!(projected.len() <= 12);
    for s in &seen {
        assert_eq!(
            s.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(s.body["response_format"]["type"], "json_object");
        let sent: Vec<&str> = s.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(sent, projected);
        let body = s.body.to_string();
        assert!(
            !body.contains(&w.caller.workspace_id),
            "no internal ids reach the provider"
        );
        assert!(!body.contains("turn_gw"));
    }
    // The same cache key for the whole workspace, and the tool result sent back.
    assert_eq!(
        seen[0].body["prompt_cache_key"],
        seen[1].body["prompt_cache_key"]
    );
    let messages = seen[1].body["messages"].as_array().unwrap();
    let tool_msg = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool_msg["tool_call_id"], "c1");
    assert_eq!(messages[0]["role"], "system");

    // Usage per attempt, measured.
    let rows: Vec<(String, i64, i64, i64)> = sqlx::query_as(
        "select route, tokens_in, tokens_out, cached_tokens from model_attempts order by id",
    )
    .fetch_all(w.engine.store.pool())
    .await
    .unwrap();
    assert_eq!(rows, vec![("primary".into(), 1000, 100, 640); 2]);
}

#[tokio::test]
async fn an_invalid_answer_gets_one_repair_then_escalates_with_reason_capability() {
    let (url, stub) = stub(|model, _| match model {
        PRIMARY => prose(),
        _ => final_answer("No tengo cifras que mostrar todavía."),
    })
    .await;
    let (w, session) = setup().await;
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;

    assert_eq!(stub.models(), [PRIMARY, PRIMARY, FALLBACK]);
    assert_eq!(out.route, Route::Fallback);
    assert_eq!(out.intent.kind(), "responder");
    let seen = stub.seen();
    // The repair shows the model its own answer and what was wrong.
    let repair = seen[1].body["messages"].as_array().unwrap();
    let n = repair.len();
    assert_eq!(repair[n - 2]["role"], "assistant");
    assert!(repair[n - 1]["content"]
        .as_str()
        .unwrap()
        .contains("no es válida"));
    assert_eq!(seen[2].body["response_format"]["type"], "json_schema");
    assert_eq!(
        attempts(&w.engine).await,
        [
            ("primary".into(), None, "invalid".into()),
            ("primary".into(), None, "invalid".into()),
            ("fallback".into(), Some("capability".into()), "ok".into()),
        ]
    );
    assert_eq!(refusal(&w.engine, &w.caller, &session).await, None);

    // Eval 7 counts the route this real configuration took: the escalation is typed,
    // and a set of this turn alone is under the primary share.
    let t = luna_engine::turn::trajectory::load(w.engine.store.pool(), &session, "turn_gw")
        .await
        .unwrap()
        .unwrap();
    let report = luna_engine::evals::bench::evaluate(&[&t]);
    let seven = report.iter().find(|e| e.number == 7).unwrap();
    assert_eq!(seven.status, luna_engine::evals::bench::Status::Fail);
    assert!(
        seven
            .failures
            .iter()
            .any(|f| f.contains("0 of 1 model turns")),
        "{seven:?}"
    );
}

#[tokio::test]
async fn provider_errors_are_retried_once_then_escalate_with_reason_technical() {
    let (url, stub) = stub(|model, _| match model {
        PRIMARY => status(503),
        _ => final_answer("Listo."),
    })
    .await;
    let (w, session) = setup().await;
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;

    assert_eq!(stub.models(), [PRIMARY, PRIMARY, FALLBACK]);
    assert_eq!(out.route, Route::Fallback);
    let rows = attempts(&w.engine).await;
    assert_eq!(
        rows[2],
        ("fallback".into(), Some("technical".into()), "ok".into())
    );
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let (url, stub) = stub(|model, _| match model {
        PRIMARY => status(400),
        _ => final_answer("Listo."),
    })
    .await;
    let (w, session) = setup().await;
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    turn(&w.engine, &gateway, &w.caller, &session).await;
    assert_eq!(stub.models(), [PRIMARY, FALLBACK]);
}

#[tokio::test]
async fn when_both_routes_fail_the_turn_is_refused_with_a_typed_code() {
    // The primary hangs past the timeout; the fallback answers 500.
    let (url, stub) = stub(|model, _| match model {
        PRIMARY => Reply {
            delay: Duration::from_secs(2),
            ..final_answer("tarde")
        },
        _ => status(500),
    })
    .await;
    let (w, session) = setup().await;
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;

    assert_eq!(
        stub.models(),
        [PRIMARY, PRIMARY, FALLBACK, FALLBACK],
        "bounded retries"
    );
    assert_eq!(out.intent.kind(), "limite");
    assert_eq!(
        refusal(&w.engine, &w.caller, &session).await,
        Some(RefusalCode::NoCapableModel)
    );
    let outcomes: Vec<String> = attempts(&w.engine).await.into_iter().map(|r| r.2).collect();
    assert_eq!(outcomes, ["timeout", "timeout", "error", "error"]);
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert_eq!(view.active_turn, None, "the refused turn is closed");
}

#[tokio::test]
async fn without_a_fallback_a_failing_primary_is_refused() {
    let (url, stub) = stub(|_, _| prose()).await;
    let (w, session) = setup().await;
    let gateway = OpenAiGateway::new(config(&url, false), w.engine.store.clone()).unwrap();
    turn(&w.engine, &gateway, &w.caller, &session).await;
    assert_eq!(stub.models(), [PRIMARY, PRIMARY]);
    assert_eq!(
        refusal(&w.engine, &w.caller, &session).await,
        Some(RefusalCode::NoCapableModel)
    );
}

#[tokio::test]
async fn a_workspace_at_its_spend_cap_stays_on_the_primary_and_cannot_escalate() {
    let (url, stub) = stub(|model, n| match (model, n) {
        (PRIMARY, 1) => final_answer("Listo."),
        (PRIMARY, _) => prose(),
        _ => final_answer("El respaldo no debe contestar."),
    })
    .await;
    let (w, session) = setup().await;
    let mut c = config(&url, true);
    c.monthly_spend_cap_micro_usd = Some(5_000_000);
    // $5.00 already spent this month by this workspace.
    sqlx::query(
        "insert into model_attempts (workspace_id, route, model, outcome, cost_micro_usd, duration_ms, created_at)
         values ($1, 'fallback', 'x', 'ok', 5000000, 1, $2)",
    )
    .bind(&w.caller.workspace_id)
    .bind(luna_engine::clock::now_ms())
    .execute(w.engine.store.pool())
    .await
    .unwrap();
    let gateway = OpenAiGateway::new(c, w.engine.store.clone()).unwrap();

    // At the cap the primary still serves…
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;
    assert_eq!(
        (out.route, out.intent.kind()),
        (Route::Primary, "responder")
    );
    // …but a turn that would need the fallback is refused with `cap` (429).
    let second = w.engine.sessions.create(&w.caller).await.unwrap().id;
    turn(&w.engine, &gateway, &w.caller, &second).await;
    assert!(
        !stub.models().contains(&FALLBACK.to_owned()),
        "{:?}",
        stub.models()
    );
    assert_eq!(
        refusal(&w.engine, &w.caller, &second).await,
        Some(RefusalCode::Cap)
    );

    // Another workspace, under the cap, escalates normally.
    let other = w
        .other_workspace(Plan::Founder, Role::Member)
        .await
        .unwrap();
    let third = w.engine.sessions.create(&other).await.unwrap().id;
    let out = turn(&w.engine, &gateway, &other, &third).await;
    assert_eq!(out.route, Route::Fallback);
}

/// A `tracing` writer that keeps everything in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every log line of this test binary, from a global subscriber (a scoped one misses
/// events whose callsites other test threads registered first).
fn captured_logs() -> Captured {
    static LOGS: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other global subscriber in this test binary");
        captured
    })
    .clone()
}

#[tokio::test]
async fn the_api_key_never_reaches_the_logs_even_when_the_provider_echoes_it() {
    let captured = captured_logs();
    let (url, stub) = stub(|_, _| status(401)).await;
    let (w, session) = setup().await;
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;
    assert_eq!(stub.models(), [PRIMARY, FALLBACK]);
    assert_eq!(out.intent.kind(), "limite");

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("model attempt failed"),
        "the failure is logged: {logs}"
    );
    assert!(
        !logs.contains(KEY) && !logs.contains("Incorrect API key"),
        "{logs}"
    );
    let events = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap();
    let log = serde_json::to_string(&events).unwrap();
    assert!(!log.contains(KEY) && !log.contains(PRIMARY) && !log.contains(FALLBACK));
}

#[tokio::test]
async fn a_streamed_answer_with_tool_call_deltas_drives_the_turn_and_its_reasoning_is_never_stored()
{
    let secret_thought = "razonamiento interno: primero cuento el universo";
    let (url, stub) = stub(move |_, n| match n {
        1 => streamed(
            &[
                json!({"role": "assistant", "reasoning_content": "razonamiento interno: "}),
                json!({"reasoning_content": "primero cuento el universo"}),
                json!({"tool_calls": [{"index": 0, "id": "call_s1", "type": "function",
                        "function": {"name": "market_count", "arguments": ""}}]}),
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"kind\":\"suppliers\","}}]}),
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"filters\":{\"state\":\"Jal"}}]}),
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "isco\"}}"}}]}),
            ],
            "tool_calls",
            Sse::Complete,
        ),
        _ => {
            let content =
                json!({"intent": {"tipo": "responder"}, "narracion": "Conté [[evidence:c1.shown]] resultados."})
                    .to_string();
            let (a, b) = content.split_at(content.len() / 2);
            streamed(
                &[json!({"content": a}), json!({"content": b})],
                "stop",
                Sse::Complete,
            )
        }
    })
    .await;
    let (w, session) = setup().await;
    // Someone watches the session while the turn runs.
    let mut thoughts = w.engine.sessions.hub().subscribe_live(&session);
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;

    // The fragments became one call with whole arguments, and the turn ended.
    assert_eq!(out.transcript[0].tool.name, "market_count");
    assert_eq!(out.transcript[0].tool.args["filters"]["state"], "Jalisco");
    assert_eq!(out.intent.kind(), "responder", "{:?}", out.narration);
    assert_eq!(out.route, Route::Primary);
    for s in stub.seen() {
        assert_eq!(s.body["stream"], true);
        assert_eq!(s.body["stream_options"]["include_usage"], true);
    }
    // Usage came from the last chunk.
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "select tokens_in, tokens_out, cached_tokens from model_attempts order by id",
    )
    .fetch_all(w.engine.store.pool())
    .await
    .unwrap();
    assert_eq!(rows, vec![(900, 40, 512); 2]);

    // The reasoning reached the live watcher…
    let mut live = String::new();
    while let Ok(frame) = thoughts.try_recv() {
        if let StreamMessage::Thinking(t) = frame {
            assert_eq!(t.turn_id, "turn_gw");
            live.push_str(&t.text);
        }
    }
    assert_eq!(live, secret_thought);
    // …and nothing of it is in the session log or the model attempts.
    let log = serde_json::to_string(
        &w.engine
            .sessions
            .events_since(&w.caller, &session, 0)
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(!log.contains("razonamiento interno"), "{log}");
    assert!(log.contains("turn.finished"));
}

/// Live narration: while the model writes its final answer, watchers see the
/// narration grow sentence by sentence, each one already resolved (labels for the
/// markers, never a raw `[[…]]`) and checked (a sentence with a bare figure is held
/// back); the repaired answer streams the same way, and the log keeps only the judged
/// narration, which the last frame matches.
#[tokio::test]
async fn the_narration_streams_to_watchers_checked_sentence_by_sentence() {
    let written = |narration: &str| {
        let content = json!({"intent": {"tipo": "responder"}, "narracion": narration}).to_string();
        // Small pieces, cut anywhere (inside markers too), as providers send them.
        let pieces: Vec<Value> = content
            .chars()
            .collect::<Vec<_>>()
            .chunks(5)
            .map(|c| json!({"content": c.iter().collect::<String>()}))
            .collect();
        streamed(&pieces, "stop", Sse::Complete)
    };
    let (url, _stub) = stub(move |_, n| match n {
        1 => tool_call(
            "market_count",
            json!({"kind": "suppliers", "filters": {"state": "Jalisco"}}),
        ),
        // A bare figure in the second sentence: rejected, then repaired.
        2 => written(
            "Conté [[evidence:c1.shown]] resultados. Son 40 en total. Te propongo guardarlos.",
        ),
        _ => written("Conté [[evidence:c1.shown]] resultados. Te propongo guardarlos."),
    })
    .await;
    let (w, session) = setup().await;
    let mut watching = w.engine.sessions.hub().subscribe_live(&session);
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;
    assert!(out.repaired, "the first answer had a bare figure");

    let mut frames = Vec::new();
    while let Ok(frame) = watching.try_recv() {
        if let StreamMessage::Narrating(n) = frame {
            assert_eq!(n.turn_id, "turn_gw");
            frames.push(n);
        }
    }
    let texts: Vec<&str> = frames.iter().map(|f| f.text.as_str()).collect();
    assert!(
        texts.len() >= 3,
        "several frames as the text grew: {texts:?}"
    );
    for f in &frames {
        assert!(
            !f.text.contains("[[") && !f.text.contains("40"),
            "{texts:?}"
        );
        for a in &f.anchors {
            assert_eq!(&f.text[a.start as usize..a.end as usize], a.label);
        }
    }
    // The first answer showed only its first sentence; the sentence with the bare
    // figure and everything after it never reached the screen.
    let first = texts[0];
    assert!(
        first.starts_with("Conté ") && first.ends_with(" resultados."),
        "{texts:?}"
    );
    assert!(
        texts.iter().filter(|t| **t == first).count() >= 2,
        "{texts:?}"
    );
    // The repaired answer's frames end with the judged narration the log keeps.
    assert_eq!(texts.last().copied(), Some(out.narration.text.as_str()));
    assert!(out.narration.text.ends_with("Te propongo guardarlos."));
    let stored = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap();
    let narrations: Vec<_> = stored
        .iter()
        .filter_map(|e| match &e.event {
            SessionEvent::NarrationDelta(d) => Some(d.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        narrations,
        vec![out.narration.text.clone()],
        "the log keeps one narration"
    );
}

#[tokio::test]
async fn a_cut_stream_is_a_provider_failure_and_is_retried() {
    let (url, stub) = stub(|_, n| match n {
        1 => streamed(
            &[json!({"content": "{\"intent\": {\"tipo\": \"respon"})],
            "stop",
            Sse::Cut,
        ),
        _ => final_answer("Listo."),
    })
    .await;
    let (w, session) = setup().await;
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    let out = turn(&w.engine, &gateway, &w.caller, &session).await;
    assert_eq!(stub.models(), [PRIMARY, PRIMARY]);
    assert_eq!(out.intent.kind(), "responder");
    assert_eq!(
        attempts(&w.engine).await,
        [
            ("primary".into(), None, "error".into()),
            ("primary".into(), None, "ok".into()),
        ]
    );
}

#[tokio::test]
async fn without_streaming_the_request_asks_for_one_json_body() {
    let (url, stub) = stub(|_, _| final_answer("Listo.")).await;
    let (w, session) = setup().await;
    let mut c = config(&url, true);
    c.stream = false;
    let gateway = OpenAiGateway::new(c, w.engine.store.clone()).unwrap();
    turn(&w.engine, &gateway, &w.caller, &session).await;
    let body = &stub.seen()[0].body;
    assert!(body.get("stream").is_none() && body.get("stream_options").is_none());
}

#[tokio::test]
async fn a_workspace_pinned_to_the_primary_never_escalates() {
    let (url, stub) = stub(|model, _| match model {
        PRIMARY => prose(),
        _ => final_answer("El respaldo no debe contestar."),
    })
    .await;
    let (w, session) = setup().await;
    pin::set(&w.engine.store, &w.caller.workspace_id, Pin::Primary)
        .await
        .unwrap();
    let gateway = OpenAiGateway::new(config(&url, true), w.engine.store.clone()).unwrap();
    turn(&w.engine, &gateway, &w.caller, &session).await;
    assert_eq!(stub.models(), [PRIMARY, PRIMARY]);
    assert_eq!(
        refusal(&w.engine, &w.caller, &session).await,
        Some(RefusalCode::NoCapableModel)
    );
}

#[tokio::test]
async fn a_workspace_pinned_to_the_fallback_goes_there_first_but_not_past_its_cap() {
    let (url, stub) = stub(|_, _| final_answer("Listo.")).await;
    let (w, session) = setup().await;
    pin::set(&w.engine.store, &w.caller.workspace_id, Pin::Fallback)
        .await
        .unwrap();
    let mut c = config(&url, true);
    c.monthly_spend_cap_micro_usd = Some(5_000_000);
    let gateway = OpenAiGateway::new(c, w.engine.store.clone()).unwrap();

    let out = turn(&w.engine, &gateway, &w.caller, &session).await;
    assert_eq!(out.route, Route::Fallback);
    assert_eq!(stub.models(), [FALLBACK]);
    assert_eq!(
        stub.seen()[0].body["response_format"]["type"],
        "json_schema"
    );
    assert_eq!(
        attempts(&w.engine).await,
        [("fallback".into(), Some("pin".into()), "ok".into())]
    );

    // At the cap, the pin cannot take the workspace out of the primary.
    sqlx::query(
        "insert into model_attempts (workspace_id, route, model, outcome, cost_micro_usd, duration_ms, created_at)
         values ($1, 'fallback', 'x', 'ok', 5000000, 1, $2)",
    )
    .bind(&w.caller.workspace_id)
    .bind(luna_engine::clock::now_ms())
    .execute(w.engine.store.pool())
    .await
    .unwrap();
    let second = w.engine.sessions.create(&w.caller).await.unwrap().id;
    let out = turn(&w.engine, &gateway, &w.caller, &second).await;
    assert_eq!(out.route, Route::Primary);
    assert_eq!(stub.models(), [FALLBACK, PRIMARY]);
}
