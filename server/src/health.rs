//! Liveness and readiness probes.

use axum::extract::State;
use axum::http::StatusCode;
use luna_engine::Engine;

/// The process is up.
pub async fn healthz() -> &'static str {
    "ok"
}

/// The process can serve: the database answers.
pub async fn readyz(State(engine): State<Engine>) -> (StatusCode, &'static str) {
    if engine.store.ping().await {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "database unavailable")
    }
}
