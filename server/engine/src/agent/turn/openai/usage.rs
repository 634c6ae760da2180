//! Usage per model attempt (CONTRACT §7.5) and the workspace's model spend this month,
//! which the spend-cap gate reads. Unmeasured tokens and cost stay NULL.

use chrono::{Datelike, TimeZone, Utc};

use crate::base::clock::now_ms;
use crate::base::error::EngineResult;
use crate::base::store::Store;

/// What one attempt did, as stored in `model_attempts`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub workspace_id: String,
    pub turn_id: Option<String>,
    pub route: &'static str,
    pub reason: Option<&'static str>,
    pub model: String,
    pub outcome: &'static str,
    pub http_status: Option<u16>,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    pub cached_tokens: Option<i64>,
    pub cost_micro_usd: Option<i64>,
    pub duration_ms: i64,
}

pub async fn record(store: &Store, a: &Attempt) -> EngineResult<()> {
    sqlx::query(
        "insert into model_attempts (workspace_id, turn_id, route, reason, model, outcome,
             http_status, tokens_in, tokens_out, cached_tokens, cost_micro_usd, duration_ms, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(&a.workspace_id)
    .bind(&a.turn_id)
    .bind(a.route)
    .bind(a.reason)
    .bind(&a.model)
    .bind(a.outcome)
    .bind(a.http_status.map(i64::from))
    .bind(a.tokens_in)
    .bind(a.tokens_out)
    .bind(a.cached_tokens)
    .bind(a.cost_micro_usd)
    .bind(a.duration_ms)
    .bind(now_ms())
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Start of the current calendar month (UTC), in unix milliseconds.
fn month_start_ms() -> i64 {
    let now = Utc::now();
    Utc.with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0)
        .single()
        .map(|t| t.timestamp_millis())
        .unwrap_or(0)
}

/// The workspace's measured model spend this calendar month, in millionths of a dollar.
pub async fn month_spend(store: &Store, workspace_id: &str) -> EngineResult<i64> {
    let spent: i64 = sqlx::query_scalar(
        "select cast(coalesce(sum(cost_micro_usd), 0) as bigint) from model_attempts
         where workspace_id = $1 and created_at >= $2",
    )
    .bind(workspace_id)
    .bind(month_start_ms())
    .fetch_one(store.pool())
    .await?;
    Ok(spent)
}
