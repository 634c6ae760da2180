//! Server functions for work sessions: open one, find the latest (so a reload
//! returns to it) and read its board and chat as of the newest event. Live updates
//! come over the websocket `GET /api/sessions/{id}/events?since=<seq>`.

use leptos::prelude::*;
// Aliased: the server function `session_snapshot` generates its own `SessionSnapshot` struct.
use luna_protocol::session::{SessionInfo, SessionSnapshot as Snapshot};

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// Opens a new work session for the signed-in person and returns its id.
#[server(prefix = "/api", endpoint = "create_session", output = crate::codec::Answer)]
pub async fn create_session() -> Result<String, AppError> {
    let caller = caller()?;
    let info = engine()?.sessions.create(&caller).await.map_err(fail)?;
    Ok(info.id)
}

/// The board and chat of a session at its newest `seq`. 404 for another workspace.
#[server(prefix = "/api", endpoint = "session_snapshot", output = crate::codec::Answer)]
pub async fn session_snapshot(session_id: String) -> Result<Snapshot, AppError> {
    let caller = caller()?;
    engine()?
        .sessions
        .snapshot_at_latest(&caller, &session_id)
        .await
        .map_err(fail)
}

/// The signed-in person's most recent session in this workspace, if any.
#[server(prefix = "/api", endpoint = "latest_session", output = crate::codec::Answer)]
pub async fn latest_session() -> Result<Option<SessionInfo>, AppError> {
    let caller = caller()?;
    engine()?.sessions.latest(&caller).await.map_err(fail)
}

/// Sends the person's message to a session. `idempotency_key` is minted by the browser
/// per message: a retry returns the same turn. A message while a turn runs steers it.
#[server(prefix = "/api", endpoint = "send_message", output = crate::codec::Answer)]
pub async fn send_message(
    session_id: String,
    text: String,
    idempotency_key: String,
) -> Result<luna_protocol::session::TurnAck, AppError> {
    let caller = caller()?;
    let engine = engine()?;
    let model = engine.model.0.clone();
    luna_engine::turn::service::submit(
        &engine,
        model,
        &caller,
        &session_id,
        &text,
        &idempotency_key,
    )
    .await
    .map_err(fail)
}
