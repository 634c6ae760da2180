//! Record reads: the live records of a collection (audiences and the board), the
//! records of a company across collections, and one record's timeline.

use super::*;

/// Live records of a collection, optionally of one stage, oldest first (audiences).
pub async fn list(
    store: &Store,
    workspace_id: &str,
    collection_id: &str,
    stage: Option<&str>,
) -> EngineResult<Vec<Record>> {
    // Records saved together (one millisecond) keep the order they were saved in.
    let made = store.backend().insertion_order();
    let rows = sqlx::query(&format!(
        "select {RECORD_COLS} from crm_records
          where workspace_id = $1 and collection_id = $2 and deleted_at is null
            and ($3 is null or stage = $4)
          order by created_at, {made}"
    ))
    .bind(workspace_id)
    .bind(collection_id.trim_start_matches("collection:"))
    .bind(stage)
    .bind(stage)
    .fetch_all(store.pool())
    .await?;
    rows.iter().map(Record::from_row).collect()
}

/// The record's timeline, newest first, and its open follow-ups.
pub async fn history(
    store: &Store,
    workspace_id: &str,
    record_ref: &str,
    limit: u32,
) -> EngineResult<(Record, Vec<HistoryEntry>, Vec<Activity>)> {
    let mut conn = store.pool().acquire().await?;
    let record = load(&mut conn, workspace_id, record_ref).await?;
    let rows: Vec<StoredHistory> = sqlx::query_as(
        "select h.version, h.action, h.actor_id, u.display_name, h.surface, h.changes, h.created_at
         from crm_history h left join users u on u.id = h.actor_id
         where h.record_id = $1 and h.workspace_id = $2 order by h.id desc limit $3",
    )
    .bind(&record.id)
    .bind(workspace_id)
    .bind(i64::from(limit))
    .fetch_all(&mut *conn)
    .await?;
    let entries = rows
        .into_iter()
        .map(|r| {
            Ok(HistoryEntry {
                changes: crate::base::stored::json("crm_history.changes", &r.changes)?,
                version: r.version,
                action: r.action,
                actor_id: r.actor_id,
                actor_name: r.display_name,
                surface: r.surface,
                at: r.created_at,
            })
        })
        .collect::<EngineResult<Vec<_>>>()?;
    let activities: Vec<Activity> = sqlx::query_as(
        "select id, record_id, due_at, reason, status from crm_activities
         where record_id = $1 and workspace_id = $2 and status = 'open' order by due_at limit 20",
    )
    .bind(&record.id)
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok((record, entries, activities))
}

/// `crm_history` joined with its actor's name, as stored.
#[derive(sqlx::FromRow)]
struct StoredHistory {
    version: i64,
    action: String,
    actor_id: String,
    display_name: Option<String>,
    surface: String,
    changes: String,
    created_at: i64,
}

/// Live records of the workspace that carry one of `entity_ids`, with the name of
/// their collection, most recently changed first (the drawer's CRM history).
pub async fn by_entity(
    store: &Store,
    workspace_id: &str,
    entity_ids: &[String],
) -> EngineResult<Vec<(Record, String)>> {
    if entity_ids.is_empty() {
        return Ok(Vec::new());
    }
    let marks = crate::base::store::marks(entity_ids.len());
    let cols = RECORD_COLS
        .split(", ")
        .map(|c| format!("r.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "select {cols}, c.name as collection_name from crm_records r
         join crm_collections c on c.id = r.collection_id
         where r.workspace_id = ? and r.deleted_at is null and r.entity_id in ({marks})
         order by r.updated_at desc limit 10"
    );
    let sql = crate::base::store::numbered(&sql);
    let mut q = sqlx::query(&sql).bind(workspace_id);
    for e in entity_ids {
        q = q.bind(e);
    }
    let rows = q.fetch_all(store.pool()).await?;
    #[derive(sqlx::FromRow)]
    struct InCollection {
        collection_name: String,
    }
    rows.iter()
        .map(|r| {
            let named = <InCollection as sqlx::FromRow<_>>::from_row(r)?;
            Ok((Record::from_row(r)?, named.collection_name))
        })
        .collect()
}

/// Live records of a collection of the workspace, in the order they were added, up
/// to `limit`; the flag says whether more exist (the saved collection on the board).
pub async fn in_collection(
    store: &Store,
    workspace_id: &str,
    collection_id: &str,
    limit: u32,
) -> EngineResult<(Vec<Record>, bool)> {
    let made = store.backend().insertion_order();
    let rows = sqlx::query(&format!(
        "select {RECORD_COLS} from crm_records
         where workspace_id = $1 and collection_id = $2 and deleted_at is null
         order by created_at, {made} limit $3"
    ))
    .bind(workspace_id)
    .bind(crate::crm::model::collection_id(collection_id))
    .bind(i64::from(limit) + 1)
    .fetch_all(store.pool())
    .await?;
    let more = rows.len() > limit as usize;
    let records = rows
        .iter()
        .take(limit as usize)
        .map(Record::from_row)
        .collect::<EngineResult<Vec<_>>>()?;
    Ok((records, more))
}
