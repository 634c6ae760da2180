//! Idempotency keys bound to their exact request. A key a caller sends with a tool
//! call (UI, MCP, Luna's research phases) is claimed in `tool_requests` before the
//! tool runs, with the fingerprint of the request: the tool, its canonical arguments
//! and the caller (user and API key). Then:
//! - the same key with another request is `IDEMPOTENCY_CONFLICT` and nothing runs;
//! - the same request again returns the stored outcome, never a fresh execution, so
//!   a reused key can neither return new data for free nor charge twice;
//! - a call that fails releases its claim, so a retry with the key may run;
//! - a claim whose call never finished (a crash) is taken over after [`STALE_MS`];
//!   the charges it made are keyed too, so a takeover never charges twice.

use luna_protocol::error::ErrorCode;
use luna_protocol::tool::Envelope;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;

use super::ctx::ExecMode;

/// Longest key a caller may send.
pub const MAX_KEY_CHARS: usize = 200;

/// A claim older than this with no stored outcome belongs to a call that died.
pub const STALE_MS: i64 = 10 * 60 * 1000;

/// What a finished call stores for replays.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stored {
    pub envelope: Envelope,
    pub preview: bool,
    /// The idempotency keys of the receipts the call's charges wrote.
    pub receipt_keys: Vec<String>,
}

impl Stored {
    pub fn mode(&self) -> ExecMode {
        if self.preview {
            ExecMode::PreviewOnly
        } else {
            ExecMode::Execute
        }
    }
}

/// The outcome of claiming a key.
#[derive(Debug)]
pub enum Claim {
    /// The key is this call's: run the tool, then [`complete`] or [`release`].
    Fresh,
    /// The same request already ran: return this.
    Replay(Box<Stored>),
}

/// The key as sent, trimmed and bounded.
pub fn checked_key(key: &str) -> EngineResult<&str> {
    let key = key.trim();
    if key.is_empty() || key.chars().count() > MAX_KEY_CHARS {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            format!("La llave de idempotencia debe tener entre 1 y {MAX_KEY_CHARS} caracteres."),
            "Usa una llave única por operación y repítela solo al reintentar la misma.",
        ));
    }
    Ok(key)
}

/// SHA-256 of the tool, its canonical arguments (object keys sorted at every depth)
/// and the caller.
pub fn fingerprint(tool: &str, args: &Value, caller: &Caller) -> String {
    let request = serde_json::json!({
        "tool": tool,
        "args": canonical(args),
        "user": caller.user_id,
        "api_key": caller.api_key_id(),
    });
    hex::encode(Sha256::digest(canonical(&request).to_string().as_bytes()))
}

/// `value` with every object's keys in sorted order, whatever the JSON map keeps.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn conflict() -> EngineError {
    EngineError::typed(
        ErrorCode::IdempotencyConflict,
        "Esa llave de idempotencia ya se usó con otra solicitud.",
        "Una llave vale para una sola operación: usa una llave nueva para otra búsqueda u otros argumentos.",
    )
}

fn in_flight() -> EngineError {
    EngineError::typed(
        ErrorCode::Conflict,
        "Una solicitud con esa llave todavía está en curso.",
        "Espera un momento y reintenta con la misma llave: recibirás su resultado.",
    )
}

/// Claims `key` for the request `print`, or says why not.
pub async fn claim(
    store: &Store,
    workspace_id: &str,
    key: &str,
    print: &str,
    tool: &str,
    now: i64,
) -> EngineResult<Claim> {
    let inserted = sqlx::query(
        "insert into tool_requests (workspace_id, idempotency_key, fingerprint, tool, response, created_at)
         values ($1, $2, $3, $4, null, $5)
         on conflict (workspace_id, idempotency_key) do nothing",
    )
    .bind(workspace_id)
    .bind(key)
    .bind(print)
    .bind(tool)
    .bind(now)
    .execute(store.pool())
    .await?
    .rows_affected();
    if inserted == 1 {
        return Ok(Claim::Fresh);
    }
    let row: Option<(String, Option<String>, i64)> = sqlx::query_as(
        "select fingerprint, response, created_at from tool_requests
          where workspace_id = $1 and idempotency_key = $2",
    )
    .bind(workspace_id)
    .bind(key)
    .fetch_optional(store.pool())
    .await?;
    let Some((stored_print, response, created_at)) = row else {
        // Released between the insert and the read: the caller may retry at once.
        return Err(in_flight());
    };
    if stored_print != print {
        return Err(conflict());
    }
    if let Some(response) = response {
        let stored: Stored = serde_json::from_str(&response).map_err(EngineError::internal)?;
        return Ok(Claim::Replay(Box::new(stored)));
    }
    if now - created_at < STALE_MS {
        return Err(in_flight());
    }
    // Take over a claim whose call died; only one taker wins the guarded update.
    let taken = sqlx::query(
        "update tool_requests set created_at = $3
          where workspace_id = $1 and idempotency_key = $2 and response is null and created_at = $4",
    )
    .bind(workspace_id)
    .bind(key)
    .bind(now)
    .bind(created_at)
    .execute(store.pool())
    .await?
    .rows_affected();
    if taken == 1 {
        Ok(Claim::Fresh)
    } else {
        Err(in_flight())
    }
}

/// Stores the finished call's outcome under its key.
pub async fn complete(
    store: &Store,
    workspace_id: &str,
    key: &str,
    stored: &Stored,
) -> EngineResult<()> {
    let response = serde_json::to_string(stored).map_err(EngineError::internal)?;
    sqlx::query(
        "update tool_requests set response = $3 where workspace_id = $1 and idempotency_key = $2",
    )
    .bind(workspace_id)
    .bind(key)
    .bind(response)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Frees the key of a call that failed, so that a retry may run.
pub async fn release(store: &Store, workspace_id: &str, key: &str) {
    let done = sqlx::query(
        "delete from tool_requests
          where workspace_id = $1 and idempotency_key = $2 and response is null",
    )
    .bind(workspace_id)
    .bind(key)
    .execute(store.pool())
    .await;
    if let Err(e) = done {
        // The claim then goes stale and is taken over after STALE_MS.
        tracing::warn!(error = %e, "could not release an idempotency claim");
    }
}
