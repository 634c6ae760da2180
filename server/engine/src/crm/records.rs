//! Record writes: add, update, bulk and follow-up activities. Every write runs in one
//! `BEGIN IMMEDIATE` transaction, appends its history row (who, which surface, what
//! changed) and records an undo token that restores the state before it exactly.

use serde::Serialize;
use serde_json::{json, Map, Value};
use sqlx::Row;

use crate::base::store::Conn;

use luna_protocol::error::ErrorCode;

use crate::base::catalog::text::fold;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::{Scope, Store};

use super::collections;
use super::errors::{invalid, record_not_found, version_conflict};
use super::model::{
    internal, record_id, Actor, Collection, Record, RecordState, PEOPLE_FIELD, RECORD_COLS,
};
use super::undo;

/// Most changes in one level-0 `bulk` (larger batches go through `crm_bulk_update`).
pub const MAX_BULK: usize = 100;

#[derive(Debug, Clone)]
pub struct NewRecord {
    pub collection_id: String,
    pub entity_id: Option<String>,
    pub stage: Option<String>,
    pub fields: Map<String, Value>,
}

#[derive(Debug, Clone)]
pub struct Patch {
    pub record_id: String,
    /// The version the caller read (optimistic concurrency).
    pub version: i64,
    pub stage: Option<String>,
    pub fields: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WriteOutcome {
    pub record: Record,
    pub dropped_fields: Vec<String>,
    /// `None` when nothing changed (every field was locked or equal).
    pub undo_token: Option<String>,
    pub created: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct BulkOutcome {
    pub records: Vec<Record>,
    /// Per record id, the locked fields that were dropped.
    pub dropped_fields: Vec<(String, Vec<String>)>,
    pub undo_token: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Activity {
    pub id: String,
    pub record_id: String,
    pub due_at: String,
    pub reason: String,
    pub status: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct HistoryEntry {
    pub version: i64,
    pub action: String,
    pub actor_id: String,
    pub actor_name: Option<String>,
    pub surface: String,
    pub changes: Value,
    pub at: i64,
}

// ------------------------------------------------------------ building blocks

/// A live record of the workspace; another workspace's (or an undone add) is NOT_FOUND.
pub(crate) async fn load(conn: &mut Conn, workspace_id: &str, id: &str) -> EngineResult<Record> {
    let row = sqlx::query(&format!(
        "select {RECORD_COLS} from crm_records where id = $1 and workspace_id = $2 and deleted_at is null"
    ))
    .bind(record_id(id))
    .bind(workspace_id)
    .fetch_optional(&mut *conn)
    .await?;
    match row {
        Some(r) => Record::from_row(&r),
        None => Err(record_not_found()),
    }
}

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

/// Any record of the workspace, live or not (undo needs the deleted ones).
pub(crate) async fn load_any(
    conn: &mut Conn,
    workspace_id: &str,
    id: &str,
) -> EngineResult<Option<Record>> {
    let row = sqlx::query(&format!(
        "select {RECORD_COLS} from crm_records where id = $1 and workspace_id = $2"
    ))
    .bind(id)
    .bind(workspace_id)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|r| Record::from_row(&r)).transpose()
}

pub(crate) async fn find_by_entity(
    conn: &mut Conn,
    collection_id: &str,
    entity_id: &str,
) -> EngineResult<Option<Record>> {
    let row = sqlx::query(&format!(
        "select {RECORD_COLS} from crm_records where collection_id = $1 and entity_id = $2 and deleted_at is null"
    ))
    .bind(collection_id)
    .bind(entity_id)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|r| Record::from_row(&r)).transpose()
}

pub(crate) async fn history_row(
    conn: &mut Conn,
    actor: &Actor,
    record_id: &str,
    version: i64,
    action: &str,
    changes: &Value,
) -> EngineResult<()> {
    sqlx::query(
        "insert into crm_history (workspace_id, record_id, version, action, actor_id, surface, changes, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&actor.workspace_id)
    .bind(record_id)
    .bind(version)
    .bind(action)
    .bind(&actor.user_id)
    .bind(actor.surface.as_str())
    .bind(changes.to_string())
    .bind(now_ms())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

fn title_of(collection: &Collection, fields: &Map<String, Value>) -> Option<String> {
    fields
        .get(&collection.primary_field)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Inserts a record (fields already validated) with its history row.
pub(crate) async fn insert(
    conn: &mut Conn,
    actor: &Actor,
    collection: &Collection,
    entity_id: Option<String>,
    stage: String,
    fields: Map<String, Value>,
    action: &str,
) -> EngineResult<Record> {
    let Some(title) = title_of(collection, &fields) else {
        return Err(invalid(
            format!(
                "Falta el campo principal «{}» del registro.",
                collection.primary_field
            ),
            "Incluye en fields el nombre que identifica al registro.",
        ));
    };
    let id = new_id("rec");
    let now = now_ms();
    let res = sqlx::query(
        "insert into crm_records (id, workspace_id, collection_id, entity_id, title, title_folded, stage, fields, version, created_by, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10, $11)",
    )
    .bind(&id)
    .bind(&actor.workspace_id)
    .bind(&collection.id)
    .bind(&entity_id)
    .bind(&title)
    .bind(fold(&title))
    .bind(&stage)
    .bind(Value::Object(fields.clone()).to_string())
    .bind(&actor.user_id)
    .bind(now)
    .bind(now)
    .execute(&mut *conn)
    .await;
    if let Err(e) = res {
        if is_unique_violation(&e) {
            return Err(EngineError::typed(
                ErrorCode::Conflict,
                "Esa empresa ya tiene un registro en esta colección.",
                "Actualiza el registro existente (busca su entity_id con collection_query).",
            ));
        }
        return Err(e.into());
    }
    let mut changes = Map::new();
    changes.insert("stage".into(), json!({"from": null, "to": stage}));
    for (k, v) in &fields {
        changes.insert(format!("fields.{k}"), json!({"from": null, "to": v}));
    }
    history_row(conn, actor, &id, 1, action, &Value::Object(changes)).await?;
    Ok(Record {
        id,
        workspace_id: actor.workspace_id.clone(),
        collection_id: collection.id.clone(),
        entity_id,
        title,
        stage,
        fields,
        version: 1,
        deleted_at: None,
        created_at: now,
        updated_at: now,
    })
}

pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// Applies a validated change; returns `None` when nothing actually changes.
pub(crate) async fn apply(
    conn: &mut Conn,
    actor: &Actor,
    collection: &Collection,
    record: &Record,
    stage: Option<String>,
    fields: &Map<String, Value>,
    action: &str,
) -> EngineResult<Option<Record>> {
    let mut next = record.clone();
    let mut changes = Map::new();
    if let Some(s) = stage {
        if s != record.stage {
            changes.insert("stage".into(), json!({"from": record.stage, "to": s}));
            next.stage = s;
        }
    }
    for (k, v) in fields {
        let before = record.fields.get(k).cloned().unwrap_or(Value::Null);
        if &before != v {
            changes.insert(format!("fields.{k}"), json!({"from": before, "to": v}));
            if v.is_null() {
                next.fields.remove(k);
            } else {
                next.fields.insert(k.clone(), v.clone());
            }
        }
    }
    if changes.is_empty() {
        return Ok(None);
    }
    let Some(title) = title_of(collection, &next.fields) else {
        return Err(invalid(
            format!(
                "El campo principal «{}» no puede quedar vacío.",
                collection.primary_field
            ),
            "Deja un nombre para el registro.",
        ));
    };
    next.title = title;
    next.version = record.version + 1;
    next.updated_at = now_ms();
    write_state(conn, &next).await?;
    let action = if action == "update" && changes.len() == 1 && changes.contains_key("stage") {
        "stage"
    } else {
        action
    };
    history_row(
        conn,
        actor,
        &next.id,
        next.version,
        action,
        &Value::Object(changes),
    )
    .await?;
    Ok(Some(next))
}

/// Writes a record's content, version and deletion mark, guarded by its old version.
pub(crate) async fn write_state(conn: &mut Conn, r: &Record) -> EngineResult<()> {
    let done = sqlx::query(
        "update crm_records set entity_id = $1, title = $2, title_folded = $3, stage = $4, fields = $5, version = $6, deleted_at = $7, updated_at = $8
         where id = $9 and version = $10",
    )
    .bind(&r.entity_id)
    .bind(&r.title)
    .bind(fold(&r.title))
    .bind(&r.stage)
    .bind(Value::Object(r.fields.clone()).to_string())
    .bind(r.version)
    .bind(r.deleted_at)
    .bind(r.updated_at)
    .bind(&r.id)
    .bind(r.version - 1)
    .execute(&mut *conn)
    .await;
    match done {
        Ok(d) if d.rows_affected() == 1 => Ok(()),
        Ok(_) => Err(version_conflict(r.version - 1, r.version)),
        Err(e) if is_unique_violation(&e) => Err(EngineError::typed(
            ErrorCode::Conflict,
            "Ya existe otro registro de esa empresa en la colección.",
            "Revisa los registros de la colección antes de restaurar este.",
        )),
        Err(e) => Err(e.into()),
    }
}

fn snapshot(r: &Record) -> RecordState {
    r.state()
}

// ------------------------------------------------------------ operations

/// Adds a record. `allow_locked` is for system writes (company_save); tool writes to
/// locked fields are dropped and reported.
pub async fn add(
    store: &Store,
    actor: &Actor,
    new: NewRecord,
    allow_locked: bool,
) -> EngineResult<WriteOutcome> {
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let collection = collections::get(&mut tx, &actor.workspace_id, &new.collection_id).await?;
    collection.ensure_writable()?;
    let (fields, dropped) = collection.check_fields(&new.fields, allow_locked)?;
    let stage = match new.stage.as_deref() {
        Some(s) => collection.check_stage(s)?,
        None => collection.stages[0].clone(),
    };
    let entity_id = new
        .entity_id
        .map(|e| e.trim().to_owned())
        .filter(|e| !e.is_empty());
    let record = insert(&mut tx, actor, &collection, entity_id, stage, fields, "add").await?;
    let token = undo::new_token();
    undo::record_step(
        &mut tx,
        &token,
        0,
        &actor.workspace_id,
        "record",
        &record.id,
        Some(record.version),
        None,
    )
    .await?;
    tx.commit().await?;
    Ok(WriteOutcome {
        record,
        dropped_fields: dropped,
        undo_token: Some(token),
        created: true,
    })
}

/// Updates one record at the version the caller read.
pub async fn update(store: &Store, actor: &Actor, patch: Patch) -> EngineResult<WriteOutcome> {
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let record = load(&mut tx, &actor.workspace_id, &patch.record_id).await?;
    let collection = collections::get(&mut tx, &actor.workspace_id, &record.collection_id).await?;
    collection.ensure_writable()?;
    if record.version != patch.version {
        return Err(version_conflict(patch.version, record.version));
    }
    let stage = patch
        .stage
        .as_deref()
        .map(|s| collection.check_stage(s))
        .transpose()?;
    let (fields, dropped) = collection.check_fields(&patch.fields, false)?;
    let before = snapshot(&record);
    let Some(next) = apply(
        &mut tx,
        actor,
        &collection,
        &record,
        stage,
        &fields,
        "update",
    )
    .await?
    else {
        tx.commit().await?;
        return Ok(WriteOutcome {
            record,
            dropped_fields: dropped,
            undo_token: None,
            created: false,
        });
    };
    let token = undo::new_token();
    undo::record_step(
        &mut tx,
        &token,
        0,
        &actor.workspace_id,
        "record",
        &next.id,
        Some(next.version),
        Some(&before),
    )
    .await?;
    tx.commit().await?;
    Ok(WriteOutcome {
        record: next,
        dropped_fields: dropped,
        undo_token: Some(token),
        created: false,
    })
}

/// Updates up to `MAX_BULK` records of one collection, all or nothing, with one undo
/// token for the whole batch.
pub async fn bulk(
    store: &Store,
    actor: &Actor,
    collection_id: &str,
    patches: Vec<Patch>,
) -> EngineResult<BulkOutcome> {
    if patches.is_empty() || patches.len() > MAX_BULK {
        return Err(invalid(
            format!("bulk acepta de 1 a {MAX_BULK} cambios."),
            "Para lotes más grandes usa crm_bulk_update, que muestra una vista previa.",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    if !patches
        .iter()
        .all(|p| seen.insert(record_id(&p.record_id).to_owned()))
    {
        return Err(invalid(
            "Un registro aparece dos veces en el mismo lote.",
            "Junta los cambios de cada registro en uno solo.",
        ));
    }
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let collection = collections::get(&mut tx, &actor.workspace_id, collection_id).await?;
    collection.ensure_writable()?;
    let token = undo::new_token();
    let mut out = BulkOutcome {
        records: Vec::new(),
        dropped_fields: Vec::new(),
        undo_token: None,
    };
    let mut seq = 0;
    for p in patches {
        let record = load(&mut tx, &actor.workspace_id, &p.record_id).await?;
        if record.collection_id != collection.id {
            return Err(record_not_found());
        }
        if record.version != p.version {
            return Err(version_conflict(p.version, record.version));
        }
        let stage = p
            .stage
            .as_deref()
            .map(|s| collection.check_stage(s))
            .transpose()?;
        let (fields, dropped) = collection.check_fields(&p.fields, false)?;
        if !dropped.is_empty() {
            out.dropped_fields.push((record.id.clone(), dropped));
        }
        let before = snapshot(&record);
        match apply(
            &mut tx,
            actor,
            &collection,
            &record,
            stage,
            &fields,
            "update",
        )
        .await?
        {
            Some(next) => {
                undo::record_step(
                    &mut tx,
                    &token,
                    seq,
                    &actor.workspace_id,
                    "record",
                    &next.id,
                    Some(next.version),
                    Some(&before),
                )
                .await?;
                seq += 1;
                out.records.push(next);
            }
            None => out.records.push(record),
        }
    }
    if seq > 0 {
        out.undo_token = Some(token);
    }
    tx.commit().await?;
    Ok(out)
}

/// Schedules a follow-up (due date and reason) on a record.
pub async fn schedule_activity(
    store: &Store,
    actor: &Actor,
    record_ref: &str,
    due_at: &str,
    reason: &str,
) -> EngineResult<(Activity, String)> {
    let due = due_at.trim();
    let valid_due = chrono::NaiveDate::parse_from_str(due, "%Y-%m-%d").is_ok()
        || chrono::DateTime::parse_from_rfc3339(due).is_ok();
    if !valid_due {
        return Err(invalid(
            "La fecha del seguimiento no es válida.",
            "Usa AAAA-MM-DD o fecha y hora ISO 8601, por ejemplo 2026-10-05.",
        ));
    }
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(invalid(
            "Falta el motivo del seguimiento.",
            "Di en una frase para qué es el seguimiento.",
        ));
    }
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let record = load(&mut tx, &actor.workspace_id, record_ref).await?;
    let collection = collections::get(&mut tx, &actor.workspace_id, &record.collection_id).await?;
    collection.ensure_writable()?;
    let id = new_id("act");
    sqlx::query(
        "insert into crm_activities (id, workspace_id, record_id, due_at, reason, status, created_by, surface, created_at)
         values ($1, $2, $3, $4, $5, 'open', $6, $7, $8)",
    )
    .bind(&id)
    .bind(&actor.workspace_id)
    .bind(&record.id)
    .bind(due)
    .bind(reason)
    .bind(&actor.user_id)
    .bind(actor.surface.as_str())
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    history_row(
        &mut tx,
        actor,
        &record.id,
        record.version,
        "activity",
        &json!({"activity": {"from": null, "to": {"due_at": due, "reason": reason}}}),
    )
    .await?;
    let token = undo::new_token();
    undo::record_step(
        &mut tx,
        &token,
        0,
        &actor.workspace_id,
        "activity",
        &id,
        None,
        None,
    )
    .await?;
    tx.commit().await?;
    Ok((
        Activity {
            id,
            record_id: record.id,
            due_at: due.to_owned(),
            reason: reason.to_owned(),
            status: "open".into(),
        },
        token,
    ))
}

/// Files a person onto a record (`people_file`): appends `person` (which carries its
/// `ref`) to the record's [`PEOPLE_FIELD`] list, with its history row and undo token.
/// A person already on the record is a no-op (`undo_token: None`).
pub async fn file_person(
    store: &Store,
    actor: &Actor,
    record_ref: &str,
    person: Map<String, Value>,
) -> EngineResult<WriteOutcome> {
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let record = load(&mut tx, &actor.workspace_id, record_ref).await?;
    let collection = collections::get(&mut tx, &actor.workspace_id, &record.collection_id).await?;
    collection.ensure_writable()?;
    let mut people = match record.fields.get(PEOPLE_FIELD) {
        Some(Value::Array(list)) => list.clone(),
        _ => Vec::new(),
    };
    if people.iter().any(|p| p.get("ref") == person.get("ref")) {
        tx.commit().await?;
        return Ok(WriteOutcome {
            record,
            dropped_fields: Vec::new(),
            undo_token: None,
            created: false,
        });
    }
    people.push(Value::Object(person));
    let mut change = Map::new();
    change.insert(PEOPLE_FIELD.to_owned(), Value::Array(people));
    let before = snapshot(&record);
    let Some(next) = apply(
        &mut tx,
        actor,
        &collection,
        &record,
        None,
        &change,
        "persona",
    )
    .await?
    else {
        return Err(EngineError::Internal(
            "filing a person changed nothing".into(),
        ));
    };
    let token = undo::new_token();
    undo::record_step(
        &mut tx,
        &token,
        0,
        &actor.workspace_id,
        "record",
        &next.id,
        Some(next.version),
        Some(&before),
    )
    .await?;
    tx.commit().await?;
    Ok(WriteOutcome {
        record: next,
        dropped_fields: Vec::new(),
        undo_token: Some(token),
        created: false,
    })
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
    let rows = sqlx::query(
        "select h.version, h.action, h.actor_id, u.display_name, h.surface, h.changes, h.created_at
         from crm_history h left join users u on u.id = h.actor_id
         where h.record_id = $1 and h.workspace_id = $2 order by h.id desc limit $3",
    )
    .bind(&record.id)
    .bind(workspace_id)
    .bind(i64::from(limit))
    .fetch_all(&mut *conn)
    .await?;
    let mut entries = Vec::new();
    for r in rows {
        let changes: String = r.try_get("changes")?;
        entries.push(HistoryEntry {
            version: r.try_get("version")?,
            action: r.try_get("action")?,
            actor_id: r.try_get("actor_id")?,
            actor_name: r.try_get("display_name")?,
            surface: r.try_get("surface")?,
            changes: serde_json::from_str(&changes).map_err(internal)?,
            at: r.try_get("created_at")?,
        });
    }
    let acts = sqlx::query(
        "select id, record_id, due_at, reason, status from crm_activities
         where record_id = $1 and workspace_id = $2 and status = 'open' order by due_at limit 20",
    )
    .bind(&record.id)
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut activities = Vec::new();
    for a in acts {
        activities.push(Activity {
            id: a.try_get("id")?,
            record_id: a.try_get("record_id")?,
            due_at: a.try_get("due_at")?,
            reason: a.try_get("reason")?,
            status: a.try_get("status")?,
        });
    }
    Ok((record, entries, activities))
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
    let marks = vec!["?"; entity_ids.len()].join(", ");
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
    rows.iter()
        .map(|r| Ok((Record::from_row(r)?, r.try_get("collection_name")?)))
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
    .bind(super::model::collection_id(collection_id))
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
