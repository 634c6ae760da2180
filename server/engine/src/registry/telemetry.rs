//! The persisted tool-call row `agent_tool_used {tool, ok, duration_ms, surface}`.
//! Writing it never fails the call; a lost row is logged at error level, never
//! dropped silently (seed 000 §0).

use crate::base::clock::now_ms;
use crate::base::store::Store;

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

pub async fn record(store: &Store, event: &ToolUsed<'_>) {
    let res = sqlx::query(
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
    .execute(store.pool())
    .await;
    if let Err(e) = res {
        tracing::error!(
            error = %e,
            tool = event.tool,
            ok = event.ok,
            duration_ms = event.duration_ms,
            surface = event.surface,
            "agent_tool_used row could not be written"
        );
    }
}
