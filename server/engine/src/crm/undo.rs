//! Undo tokens ("deshacer"). A level-0 write records, per record it touched, the state
//! before it and the version it left. Undoing restores that state exactly (an add is
//! undone by removing the record, an activity by cancelling it) only if every record
//! still has that version; otherwise `VERSION_CONFLICT` and nothing changes. A token
//! is used once.

use luna_protocol::error::ErrorCode;
use serde::Serialize;
use serde_json::{json, Value};

use crate::base::store::Conn;

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{Scope, Store};

use super::collections;
use super::errors::undo_conflict;
use super::model::{internal, Actor, RecordState};
use super::records;

pub fn new_token() -> String {
    format!("undo_{}", crate::base::ids::random_token(18))
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn record_step(
    conn: &mut Conn,
    token: &str,
    seq: i64,
    workspace_id: &str,
    kind: &str,
    target_id: &str,
    version_after: Option<i64>,
    before: Option<&RecordState>,
) -> EngineResult<()> {
    let snapshot = before
        .map(serde_json::to_string)
        .transpose()
        .map_err(internal)?;
    sqlx::query(
        "insert into crm_undo (token, seq, workspace_id, kind, target_id, version_after, snapshot, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(token)
    .bind(seq)
    .bind(workspace_id)
    .bind(kind)
    .bind(target_id)
    .bind(version_after)
    .bind(snapshot)
    .bind(now_ms())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// What an undo restored.
#[derive(Debug, Clone, Serialize)]
pub struct UndoOutcome {
    /// Records put back to their previous state (with their new version).
    pub restored: Vec<(String, i64)>,
    /// Records removed because the undone write had created them.
    pub removed: Vec<String>,
    /// Follow-ups cancelled.
    pub cancelled_activities: Vec<String>,
}

/// One step of a token, as `crm_undo` stores it (in `seq` order).
#[derive(sqlx::FromRow)]
struct UndoStep {
    kind: String,
    target_id: String,
    version_after: Option<i64>,
    snapshot: Option<String>,
    used_at: Option<i64>,
}

pub async fn undo(store: &Store, actor: &Actor, token: &str) -> EngineResult<UndoOutcome> {
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let steps: Vec<UndoStep> = sqlx::query_as(
        "select kind, target_id, version_after, snapshot, used_at from crm_undo
         where token = $1 and workspace_id = $2 order by seq",
    )
    .bind(token)
    .bind(&actor.workspace_id)
    .fetch_all(&mut *tx)
    .await?;
    if steps.is_empty() {
        return Err(EngineError::not_found("ese cambio para deshacer"));
    }
    if steps.iter().any(|s| s.used_at.is_some()) {
        return Err(EngineError::typed(
            ErrorCode::Conflict,
            "Ese cambio ya se deshizo.",
            "No hace falta repetirlo.",
        ));
    }
    let mut out = UndoOutcome {
        restored: Vec::new(),
        removed: Vec::new(),
        cancelled_activities: Vec::new(),
    };
    let now = now_ms();
    for s in &steps {
        let target = s.target_id.clone();
        if s.kind == "activity" {
            let done = sqlx::query(
                "update crm_activities set status = 'cancelled' where id = $1 and workspace_id = $2 and status = 'open'",
            )
            .bind(&target)
            .bind(&actor.workspace_id)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 0 {
                return Err(undo_conflict());
            }
            let record_id: String =
                sqlx::query_scalar("select record_id from crm_activities where id = $1")
                    .bind(&target)
                    .fetch_one(&mut *tx)
                    .await?;
            let version: i64 = sqlx::query_scalar("select version from crm_records where id = $1")
                .bind(&record_id)
                .fetch_one(&mut *tx)
                .await?;
            records::history_row(
                &mut tx,
                actor,
                &record_id,
                version,
                "undo",
                &json!({"activity": {"to": "cancelled"}}),
            )
            .await?;
            out.cancelled_activities.push(target);
            continue;
        }
        let (version_after, snapshot) = (s.version_after, s.snapshot.clone());
        let Some(current) = records::load_any(&mut tx, &actor.workspace_id, &target).await? else {
            return Err(undo_conflict());
        };
        if Some(current.version) != version_after || current.deleted_at.is_some() {
            return Err(undo_conflict());
        }
        let collection =
            collections::get(&mut tx, &actor.workspace_id, &current.collection_id).await?;
        collection.ensure_writable()?;
        let mut next = current.clone();
        next.version = current.version + 1;
        next.updated_at = now;
        let changes: Value = match snapshot {
            None => {
                next.deleted_at = Some(now);
                json!({"record": {"from": "created", "to": "removed"}})
            }
            Some(json) => {
                let before: RecordState = serde_json::from_str(&json).map_err(internal)?;
                let diff = json!({
                    "stage": super::records::StageChange::json(Some(&current.stage), &before.stage),
                    "fields": {"from": current.fields, "to": before.fields},
                });
                next.entity_id = before.entity_id;
                next.title = before.title;
                next.stage = before.stage;
                next.fields = before.fields;
                diff
            }
        };
        records::write_state(&mut tx, &next).await?;
        records::history_row(&mut tx, actor, &next.id, next.version, "undo", &changes).await?;
        if next.deleted_at.is_some() {
            // A claim pointing at a removed record must not block a later save.
            sqlx::query("delete from crm_claims where record_id = $1")
                .bind(&next.id)
                .execute(&mut *tx)
                .await?;
            out.removed.push(next.id);
        } else {
            out.restored.push((next.id, next.version));
        }
    }
    sqlx::query("update crm_undo set used_at = $1 where token = $2 and workspace_id = $3")
        .bind(now)
        .bind(token)
        .bind(&actor.workspace_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(out)
}
