//! The replay-provider suite: recorded chat-completions exchanges in the shapes real
//! OpenAI-compatible servers produce (OpenAI, DeepSeek, vLLM, llama.cpp server,
//! Ollama, LiteLLM; `tests/fixtures/providers/*.json`), served in order by a local
//! HTTP server to the real gateway client. Each must drive a turn to its answer:
//! streamed and plain bodies, tool-call deltas, usage chunks or none, reasoning
//! fields, error bodies that are retried, and a server that refuses `response_format`
//! together with `tools` (the gateway then sends tools only and reads the JSON intent
//! from the text).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use luna_engine::testkit::World;
use luna_engine::turn::gateway::Route;
use luna_engine::turn::openai::{GatewayConfig, OpenAiGateway};
use luna_engine::turn::runner::run_turn;
use luna_protocol::account::{Plan, Role};
use serde_json::Value;

#[derive(Clone)]
struct Replay {
    fixture: Arc<Value>,
    next: Arc<Mutex<usize>>,
    seen: Arc<Mutex<Vec<Value>>>,
}

fn reply(spec: &Value) -> Response {
    let status = StatusCode::from_u16(spec["status"].as_u64().unwrap_or(200) as u16).unwrap();
    if let Some(chunks) = spec["sse"].as_array() {
        let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        body.push_str("data: [DONE]\n\n");
        return (status, [("content-type", "text/event-stream")], body).into_response();
    }
    (status, Json(spec["json"].clone())).into_response()
}

async fn completions(State(replay): State<Replay>, Json(body): Json<Value>) -> Response {
    replay.seen.lock().unwrap().push(body.clone());
    let refusal = &replay.fixture["refuses_response_format_with_tools"];
    if !refusal.is_null() && !body["response_format"].is_null() && body["tools"].is_array() {
        return reply(refusal);
    }
    let n = {
        let mut next = replay.next.lock().unwrap();
        *next += 1;
        *next - 1
    };
    match replay.fixture["replies"].get(n) {
        Some(spec) => reply(spec),
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the fixture has no more replies",
        )
            .into_response(),
    }
}

async fn serve(fixture: Value) -> (String, Replay) {
    let replay = Replay {
        fixture: Arc::new(fixture),
        next: Arc::default(),
        seen: Arc::default(),
    };
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(replay.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), replay)
}

fn fixtures() -> Vec<(String, Value)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/providers");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, serde_json::from_str(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// One turn against the fixture's server; returns what the gateway sent.
async fn replay_turn(name: &str, fixture: Value) -> Vec<Value> {
    let expect = fixture["expect"].clone();
    let refuses = !fixture["refuses_response_format_with_tools"].is_null();
    let (url, replay) = serve(fixture).await;
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let session = w.engine.sessions.create(&w.caller).await.unwrap().id;
    let mut config = GatewayConfig::new(url, "modelo");
    config.timeout = Duration::from_secs(5);
    config.retry_backoff = Duration::from_millis(10);
    let gateway = OpenAiGateway::new(config, w.engine.store.clone()).unwrap();
    let out = run_turn(
        &w.engine,
        &gateway,
        &w.caller,
        &session,
        "turn_replay",
        "¿Cuántos proveedores de empaque hay en Jalisco?",
    )
    .await
    .unwrap_or_else(|e| panic!("{name}: {e}"));

    assert_eq!(out.route, Route::Primary, "{name}");
    assert_eq!(
        out.intent.kind(),
        "responder",
        "{name}: {:?}",
        out.narration
    );
    assert!(!out.repaired, "{name}: the answer needed a repair");
    assert!(
        out.narration.text.starts_with("Conté ") && !out.narration.text.contains("[["),
        "{name}: {:?}",
        out.narration
    );
    let tools: Vec<&str> = out
        .transcript
        .iter()
        .map(|e| e.tool.name.as_str())
        .collect();
    let expected: Vec<&str> = expect["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(tools, expected, "{name}");
    assert_eq!(
        out.transcript[0].tool.args["filters"]["state"], "Jalisco",
        "{name}: the tool arguments arrived whole"
    );

    // Usage as measured per successful attempt; a server that omits it leaves nulls.
    let rows: Vec<(Option<i64>, Option<i64>, Option<i64>)> = sqlx::query_as(
        "select tokens_in, tokens_out, cached_tokens from model_attempts where outcome = 'ok' order by id",
    )
    .fetch_all(w.engine.store.pool())
    .await
    .unwrap();
    let usage: Vec<(Option<i64>, Option<i64>, Option<i64>)> = expect["usage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u[0].as_i64(), u[1].as_i64(), u[2].as_i64()))
        .collect();
    assert_eq!(rows, usage, "{name}");

    let seen = replay.seen.lock().unwrap().clone();
    if refuses {
        // Refused once; every later request goes without response_format.
        let refused = seen
            .iter()
            .filter(|b| !b["response_format"].is_null())
            .count();
        assert_eq!(refused, 1, "{name}: {seen:?}");
        assert!(seen.last().unwrap()["response_format"].is_null());
    }
    seen
}

#[tokio::test]
async fn every_recorded_provider_drives_a_turn_through_the_gateway() {
    let all = fixtures();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["deepseek", "litellm", "llamacpp", "ollama", "openai", "vllm"]
    );
    // Each server on its own, so a failure names every shape the gateway missed.
    let mut failed = Vec::new();
    for (name, fixture) in all {
        let task = tokio::spawn({
            let name = name.clone();
            async move { replay_turn(&name, fixture).await }
        });
        if task.await.is_err() {
            failed.push(name);
        }
    }
    assert!(failed.is_empty(), "the gateway failed on: {failed:?}");
}
