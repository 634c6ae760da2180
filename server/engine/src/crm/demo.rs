//! The demo CRM: the Founder demo workspace gets a "Prospección" pipeline, and the
//! Empresas directory is seeded (after the market data, so links resolve).

use crate::accounts::demo::DEMO_WORKSPACES;
use crate::base::error::EngineResult;
use crate::base::store::Store;

use super::collections::{self, NewCollection};
use super::directory;
use super::model::{FieldDef, FieldType};

pub const DEMO_COLLECTION: &str = "Prospección";
pub const DEMO_STAGES: &[&str] = &[
    "Nuevo",
    "Contactado",
    "En conversación",
    "Propuesta",
    "Ganado",
    "Perdido",
];

/// The "Prospección" pipeline definition.
pub fn prospeccion() -> NewCollection {
    NewCollection {
        name: DEMO_COLLECTION.into(),
        stages: DEMO_STAGES.iter().map(|s| (*s).to_owned()).collect(),
        primary_field: "empresa".into(),
        fields: vec![
            FieldDef::new("empresa", "Empresa", FieldType::Text, false),
            FieldDef::new("rfc", "RFC", FieldType::Text, true),
            FieldDef::new("estado", "Estado", FieldType::Text, false),
            FieldDef::new("ciudad", "Ciudad", FieldType::Text, false),
            FieldDef::new("giro", "Giro", FieldType::Text, false),
            FieldDef::new("dominio", "Dominio", FieldType::Text, false),
            FieldDef::new("fuente", "Fuente", FieldType::Text, true),
            FieldDef::new(
                "monto_estimado",
                "Monto estimado (MXN)",
                FieldType::Number,
                false,
            ),
            FieldDef::new("fecha_cierre", "Fecha de cierre", FieldType::Date, false),
            FieldDef::new("siguiente_paso", "Siguiente paso", FieldType::Text, false),
        ],
    }
}

/// Creates "Prospección" in a workspace unless a collection of that name exists.
/// Returns true if it created it.
pub async fn seed_workspace(store: &Store, workspace_id: &str) -> EngineResult<bool> {
    let exists: i64 = sqlx::query_scalar(
        "select count(*) from crm_collections where workspace_id = $1 and name = $2",
    )
    .bind(workspace_id)
    .bind(DEMO_COLLECTION)
    .fetch_one(store.pool())
    .await?;
    if exists > 0 {
        return Ok(false);
    }
    collections::create(store, workspace_id, prospeccion()).await?;
    Ok(true)
}

/// Seeds the demo CRM: "Prospección" in the demo Founder workspace and the Empresas
/// directory. Idempotent; call it at start after the demo accounts and market data.
pub async fn seed(store: &Store) -> EngineResult<bool> {
    let mut created = false;
    for (name, plan) in DEMO_WORKSPACES {
        if *plan != luna_protocol::account::Plan::Founder {
            continue;
        }
        let ids: Vec<String> =
            sqlx::query_scalar("select id from workspaces where name = $1 and plan = $2")
                .bind(*name)
                .bind(plan.as_str())
                .fetch_all(store.pool())
                .await?;
        for id in ids {
            created |= seed_workspace(store, &id).await?;
        }
    }
    directory::ensure_demo(store).await?;
    Ok(created)
}
