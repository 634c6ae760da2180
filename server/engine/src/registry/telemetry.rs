//! The persisted tool-call row `agent_tool_used {tool, ok, duration_ms, surface}`.
//! Written on its own it never fails the call (a lost row is logged at error level,
//! never dropped silently, seed 000 §0); a turn step writes it in its transaction.

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{Conn, Statement, Store};

#[derive(Debug, Clone)]
pub struct ToolUsed<'a> {
    pub workspace_id: &'a str,
    pub user_id: &'a str,
    pub tool: &'a str,
    pub ok: bool,
    pub duration_ms: u64,
    pub surface: &'a str,
    pub error_code: Option<&'a str>,
}

/// Writes the row on its own; a failure is logged, never the call's.
pub async fn record(store: &Store, event: &ToolUsed<'_>) {
    let mut conn = match store.pool().acquire().await {
        Ok(c) => c,
        Err(e) => return lost(&e.into(), event),
    };
    if let Err(e) = record_in(&mut conn, event).await {
        lost(&e, event);
    }
}

/// Writes the row on `conn`, inside the transaction that records the call (a turn
/// step's): it commits with the step or not at all.
pub async fn record_in(conn: &mut Conn, event: &ToolUsed<'_>) -> EngineResult<()> {
    statement(event).run(conn).await?;
    Ok(())
}

/// The row's insert, for a [`crate::base::store::WriteBatch`] that sends it with the
/// rest of a turn step.
pub fn statement(event: &ToolUsed<'_>) -> Statement {
    Statement::new(
        "insert into tool_calls (event, workspace_id, user_id, tool, ok, duration_ms, surface, error_code, created_at)
         values ('agent_tool_used', $1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(event.workspace_id)
    .bind(event.user_id)
    .bind(event.tool)
    .bind(i64::from(event.ok))
    .bind(i64::try_from(event.duration_ms).unwrap_or(i64::MAX))
    .bind(event.surface)
    .bind(event.error_code)
    .bind(now_ms())
}

fn lost(e: &EngineError, event: &ToolUsed<'_>) {
    tracing::error!(
            error = %e,
            tool = event.tool,
            ok = event.ok,
            duration_ms = event.duration_ms,
            surface = event.surface,
        "agent_tool_used row could not be written"
    );
}
