//! Collections (pipelines): creation (by people in the app or the demo seed, never by
//! a tool), workspace-scoped reads and archiving.

use crate::base::store::Conn;

use crate::base::clock::now_ms;
use crate::base::error::EngineResult;
use crate::base::ids::new_id;
use crate::base::store::Store;

use super::errors::{collection_not_found, invalid};
use super::model::{collection_id, Collection, CollectionStatus, FieldDef, PEOPLE_FIELD};

/// A new pipeline definition.
#[derive(Debug, Clone)]
pub struct NewCollection {
    pub name: String,
    pub stages: Vec<String>,
    pub primary_field: String,
    pub fields: Vec<FieldDef>,
}

pub async fn create(
    store: &Store,
    workspace_id: &str,
    new: NewCollection,
) -> EngineResult<Collection> {
    if new.stages.is_empty() {
        return Err(invalid(
            "Una colección necesita al menos una etapa.",
            "Agrega las etapas en orden.",
        ));
    }
    if !new.fields.iter().any(|f| f.key == new.primary_field) {
        return Err(invalid(
            "El campo principal debe ser uno de los campos de la colección.",
            "Elige el campo que nombra a cada registro.",
        ));
    }
    if new.fields.iter().any(|f| f.key == PEOPLE_FIELD) {
        return Err(invalid(
            format!(
                "«{PEOPLE_FIELD}» está reservado para las personas archivadas en cada registro."
            ),
            "Usa otro nombre de campo.",
        ));
    }
    let id = new_id("col");
    let now = now_ms();
    sqlx::query(
        "insert into crm_collections (id, workspace_id, name, stages, primary_field, fields, status, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, 'active', $7, $8)",
    )
    .bind(&id)
    .bind(workspace_id)
    .bind(&new.name)
    .bind(serde_json::to_string(&new.stages).map_err(super::model::internal)?)
    .bind(&new.primary_field)
    .bind(serde_json::to_string(&new.fields).map_err(super::model::internal)?)
    .bind(now)
    .bind(now)
    .execute(store.pool())
    .await?;
    Ok(Collection {
        id,
        workspace_id: workspace_id.to_owned(),
        name: new.name,
        stages: new.stages,
        primary_field: new.primary_field,
        fields: new.fields,
        status: CollectionStatus::Active,
    })
}

/// The collection if it belongs to the workspace; another workspace's is NOT_FOUND.
pub async fn get(conn: &mut Conn, workspace_id: &str, id: &str) -> EngineResult<Collection> {
    let row = sqlx::query("select * from crm_collections where id = $1 and workspace_id = $2")
        .bind(collection_id(id))
        .bind(workspace_id)
        .fetch_optional(&mut *conn)
        .await?;
    match row {
        Some(r) => Collection::from_row(&r),
        None => Err(collection_not_found()),
    }
}

pub async fn get_in(store: &Store, workspace_id: &str, id: &str) -> EngineResult<Collection> {
    let mut conn = store.pool().acquire().await?;
    get(&mut conn, workspace_id, id).await
}

/// Active collections of the workspace whose name contains `query` (folded).
pub async fn list(
    store: &Store,
    workspace_id: &str,
    query: Option<&str>,
) -> EngineResult<Vec<Collection>> {
    let rows = sqlx::query("select * from crm_collections where workspace_id = $1 and status = 'active' order by name, id")
        .bind(workspace_id)
        .fetch_all(store.pool())
        .await?;
    let needle = query
        .map(crate::base::catalog::text::fold)
        .filter(|q| !q.is_empty());
    let mut out = Vec::new();
    for r in &rows {
        let c = Collection::from_row(r)?;
        if needle
            .as_deref()
            .is_none_or(|n| crate::base::catalog::text::fold(&c.name).contains(n))
        {
            out.push(c);
        }
    }
    Ok(out)
}

/// Archives or reactivates a collection (a person's action in the app).
pub async fn set_status(
    store: &Store,
    workspace_id: &str,
    id: &str,
    status: CollectionStatus,
) -> EngineResult<()> {
    let done = sqlx::query(
        "update crm_collections set status = $1, updated_at = $2 where id = $3 and workspace_id = $4",
    )
    .bind(status.as_str())
    .bind(now_ms())
    .bind(collection_id(id))
    .bind(workspace_id)
    .execute(store.pool())
    .await?;
    if done.rows_affected() == 0 {
        return Err(collection_not_found());
    }
    Ok(())
}
