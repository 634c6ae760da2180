//! Record writes: add, update, bulk and follow-up activities. Every write runs in one
//! `BEGIN IMMEDIATE` transaction, appends its history row (who, which surface, what
//! changed) and records an undo token that restores the state before it exactly.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::base::store::Conn;

use luna_protocol::error::ErrorCode;

use crate::base::catalog::text::fold;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::{Scope, Store};

use super::collections;
use super::errors::{invalid, record_not_found, version_conflict};
use super::model::{record_id, Actor, Collection, Record, RecordState, PEOPLE_FIELD, RECORD_COLS};
use super::undo;

mod follow_up;
mod reads;

pub use follow_up::{file_person, schedule_activity};
pub use reads::{by_entity, history, in_collection, list};

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

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Activity {
    pub id: String,
    pub record_id: String,
    pub due_at: String,
    pub reason: String,
    pub status: String,
}

/// A history row's stage change, as every CRM write stores it under `changes.stage`
/// (`from` is `null` when the record was created). The screen's history lines decode
/// the same struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageChange {
    pub from: Option<String>,
    pub to: String,
}

impl StageChange {
    /// The change as stored: this struct, serialized.
    pub fn json(from: Option<&str>, to: &str) -> Value {
        json!(StageChange {
            from: from.map(str::to_owned),
            to: to.to_owned(),
        })
    }
}

/// The part of a history row's `changes` engine code reads: its stage change, if any.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct HistoryChanges {
    #[serde(default)]
    pub stage: Option<StageChange>,
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
    changes.insert("stage".into(), StageChange::json(None, &stage));
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
            changes.insert("stage".into(), StageChange::json(Some(&record.stage), &s));
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
