//! Level-1 proposals (CONTRACT §8): `crm_save_companies` and `crm_bulk_update` write
//! nothing when Luna calls them; they store what would happen and return a
//! `proposal_id`. The decision card executes it (`execute_save`, `execute_bulk`) in one
//! transaction; executing a proposal twice returns the first outcome and creates
//! nothing new.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::base::store::Conn;

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::{Scope, Store};
use crate::base::surface::Surface;

use super::collections;
use super::directory::{self, Company};
use super::errors::invalid;
use super::model::{internal, record_id, Actor, Collection};
use super::records;
use super::undo;

mod bulk;

pub use bulk::{execute_bulk, preview_bulk, BulkChange, BulkExecution, BulkPreview, BulkRejected};

/// Most companies in one save, most changes in one bulk update.
pub const MAX_SAVE: usize = 500;
pub const MAX_BULK_UPDATE: usize = 1000;

/// The stored kind of a `crm_save_companies` proposal.
pub const SAVE_KIND: &str = "save_companies";
/// The stored kind of a `crm_bulk_update` proposal.
pub const BULK_KIND: &str = "bulk_update";

/// Qué hacer con una empresa que ya tiene registro en la colección.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConflictPolicy {
    /// Deja el registro existente como está.
    #[default]
    Skip,
    /// Actualiza los datos de empresa del registro existente (nombre, RFC, estado, giro…).
    Refresh,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SaveItem {
    pub company_ref: String,
    pub entity_id: String,
    pub name: String,
    pub fields: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavePayload {
    policy: ConflictPolicy,
    items: Vec<SaveItem>,
    /// The stage new records start in; the collection's first when absent.
    #[serde(default)]
    stage: Option<String>,
}

/// The preview a decision card shows.
#[derive(Debug, Clone, Serialize)]
pub struct SavePreview {
    pub proposal_id: String,
    pub collection_name: String,
    pub to_create: Vec<SaveItem>,
    /// (company ref, name, existing record id)
    pub already_there: Vec<(String, String, String)>,
    pub not_found: Vec<String>,
    pub policy: ConflictPolicy,
    /// The stage the new records start in.
    pub stage: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedRecord {
    pub record_id: String,
    pub title: String,
    pub entity_id: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SaveExecution {
    pub proposal_id: String,
    #[serde(default)]
    pub collection_id: String,
    #[serde(default)]
    pub collection_name: String,
    pub created: Vec<SavedRecord>,
    pub already_there: Vec<SavedRecord>,
    pub refreshed: Vec<SavedRecord>,
    /// True when this proposal had been executed before: nothing new was written.
    #[serde(default)]
    pub already_executed: bool,
}

/// The company's values for a collection's fields (only keys the collection has).
pub fn company_fields(c: &Collection, co: &Company) -> Map<String, Value> {
    let mut m = Map::new();
    let mut put = |key: &str, v: Option<&str>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            if c.field(key).is_some() {
                m.insert(key.to_owned(), Value::String(v.to_owned()));
            }
        }
    };
    put(&c.primary_field, Some(&co.name));
    put("rfc", co.rfc.as_deref());
    put("estado", co.state.as_deref());
    put("ciudad", co.city.as_deref());
    put("giro", co.sector.as_deref());
    put("dominio", co.domain.as_deref());
    put("empleados", co.employees.as_deref());
    put(
        "fuente",
        Some(if co.supplier_id.is_some() {
            "Proveedores"
        } else {
            "Empresas"
        }),
    );
    m
}

fn surface_of(s: &str) -> Surface {
    match s {
        "luna" => Surface::Luna,
        "mcp" => Surface::Mcp,
        _ => Surface::Ui,
    }
}

async fn store_proposal(
    store: &Store,
    actor: &Actor,
    kind: &str,
    collection_id: &str,
    payload: &impl Serialize,
) -> EngineResult<String> {
    let id = new_id("prop");
    sqlx::query(
        "insert into crm_proposals (id, workspace_id, kind, collection_id, payload, created_by, surface, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&id)
    .bind(&actor.workspace_id)
    .bind(kind)
    .bind(collection_id)
    .bind(serde_json::to_string(payload).map_err(internal)?)
    .bind(&actor.user_id)
    .bind(actor.surface.as_str())
    .bind(now_ms())
    .execute(store.pool())
    .await?;
    Ok(id)
}

#[derive(sqlx::FromRow)]
struct Loaded {
    collection_id: String,
    payload: String,
    surface: String,
    result: Option<String>,
}

async fn load_proposal(
    conn: &mut Conn,
    workspace_id: &str,
    kind: &str,
    id: &str,
) -> EngineResult<Loaded> {
    sqlx::query_as::<_, Loaded>(
        "select collection_id, payload, surface, result from crm_proposals where id = $1 and workspace_id = $2 and kind = $3",
    )
    .bind(id)
    .bind(workspace_id)
    .bind(kind)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| EngineError::not_found("esa propuesta"))
}

/// Whether `id` is a stored proposal of `kind` in the workspace (a card looks its
/// proposal up before it is offered).
pub async fn is_stored(
    store: &Store,
    workspace_id: &str,
    kind: &str,
    id: &str,
) -> EngineResult<bool> {
    let found: Option<String> = sqlx::query_scalar(
        "select id from crm_proposals where id = $1 and workspace_id = $2 and kind = $3",
    )
    .bind(id)
    .bind(workspace_id)
    .bind(kind)
    .fetch_optional(store.pool())
    .await?;
    Ok(found.is_some())
}

async fn mark_executed(conn: &mut Conn, id: &str, result: &impl Serialize) -> EngineResult<()> {
    sqlx::query("update crm_proposals set executed_at = $1, result = $2 where id = $3")
        .bind(now_ms())
        .bind(serde_json::to_string(result).map_err(internal)?)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

// ------------------------------------------------------------ save companies

/// Builds the preview of saving `refs` into a collection (new records in `stage`, the
/// collection's first by default) and stores it.
pub async fn preview_save(
    store: &Store,
    actor: &Actor,
    collection_id: &str,
    refs: &[String],
    policy: ConflictPolicy,
    stage: Option<&str>,
) -> EngineResult<SavePreview> {
    if refs.is_empty() || refs.len() > MAX_SAVE {
        return Err(invalid(
            format!("Se pueden guardar de 1 a {MAX_SAVE} empresas por propuesta."),
            "Pasa las refs company:… de las empresas (o la selección).",
        ));
    }
    let collection = collections::get_in(store, &actor.workspace_id, collection_id).await?;
    collection.ensure_writable()?;
    let stage = stage.map(|s| collection.check_stage(s)).transpose()?;
    let mut conn = store.pool().acquire().await?;
    let mut preview = SavePreview {
        proposal_id: String::new(),
        collection_name: collection.name.clone(),
        to_create: Vec::new(),
        already_there: Vec::new(),
        not_found: Vec::new(),
        policy,
        stage: stage
            .clone()
            .unwrap_or_else(|| collection.stages[0].clone()),
    };
    let mut seen = std::collections::HashSet::new();
    for r in refs {
        let Some(co) = directory::get(store, r).await? else {
            preview.not_found.push(r.clone());
            continue;
        };
        let entity = co.entity_id();
        if !seen.insert(entity.clone()) {
            continue;
        }
        match records::find_by_entity(&mut conn, &collection.id, &entity).await? {
            Some(existing) => preview
                .already_there
                .push((co.ref_(), co.name.clone(), existing.id)),
            None => preview.to_create.push(SaveItem {
                company_ref: co.ref_(),
                entity_id: entity,
                name: co.name.clone(),
                fields: company_fields(&collection, &co),
            }),
        }
    }
    drop(conn);
    // Existing ones are kept in the payload too: `refresh` updates them on execution.
    let mut items = preview.to_create.clone();
    for (company_ref, _, _) in &preview.already_there {
        if let Some(co) = directory::get(store, company_ref).await? {
            items.push(SaveItem {
                company_ref: co.ref_(),
                entity_id: co.entity_id(),
                name: co.name.clone(),
                fields: company_fields(&collection, &co),
            });
        }
    }
    preview.proposal_id = store_proposal(
        store,
        actor,
        SAVE_KIND,
        &collection.id,
        &SavePayload {
            policy,
            items,
            stage,
        },
    )
    .await?;
    Ok(preview)
}

pub async fn execute_save(
    store: &Store,
    caller: &Caller,
    proposal_id: &str,
) -> EngineResult<SaveExecution> {
    let mut tx = store
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    let p = load_proposal(&mut tx, &caller.workspace_id, SAVE_KIND, proposal_id).await?;
    if let Some(done) = p.result {
        let mut out: SaveExecution = serde_json::from_str(&done).map_err(internal)?;
        out.already_executed = true;
        return Ok(out);
    }
    let collection = collections::get(&mut tx, &caller.workspace_id, &p.collection_id).await?;
    collection.ensure_writable()?;
    let payload: SavePayload = serde_json::from_str(&p.payload).map_err(internal)?;
    // The stage chosen at preview time must still exist when the person confirms.
    let new_stage = match &payload.stage {
        Some(s) => collection.check_stage(s)?,
        None => collection.stages[0].clone(),
    };
    let actor = Actor::new(caller, surface_of(&p.surface));
    let mut out = SaveExecution {
        proposal_id: proposal_id.to_owned(),
        collection_id: collection.id.clone(),
        collection_name: collection.name.clone(),
        ..SaveExecution::default()
    };
    for item in payload.items {
        match records::find_by_entity(&mut tx, &collection.id, &item.entity_id).await? {
            Some(existing) if payload.policy == ConflictPolicy::Refresh => {
                let next = records::apply(
                    &mut tx,
                    &actor,
                    &collection,
                    &existing,
                    None,
                    &item.fields,
                    "save",
                )
                .await?;
                let r = next.unwrap_or(existing);
                out.refreshed.push(SavedRecord {
                    record_id: r.id,
                    title: r.title,
                    entity_id: r.entity_id,
                });
            }
            Some(existing) => out.already_there.push(SavedRecord {
                record_id: existing.id,
                title: existing.title,
                entity_id: existing.entity_id,
            }),
            None => {
                let stage = new_stage.clone();
                let r = records::insert(
                    &mut tx,
                    &actor,
                    &collection,
                    Some(item.entity_id),
                    stage,
                    item.fields,
                    "save",
                )
                .await?;
                out.created.push(SavedRecord {
                    record_id: r.id,
                    title: r.title,
                    entity_id: r.entity_id,
                });
            }
        }
    }
    mark_executed(&mut tx, proposal_id, &out).await?;
    tx.commit().await?;
    Ok(out)
}
