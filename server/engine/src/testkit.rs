//! Helpers for tests in this crate and in the server: a fresh engine on a temporary
//! database and a caller in a new workspace. Not used by production code.

use luna_protocol::account::{Plan, Role};

use crate::accounts::Caller;
use crate::base::error::EngineResult;
use crate::base::store::Store;
use crate::Engine;

pub async fn engine() -> EngineResult<Engine> {
    Ok(Engine::from_store(Store::open_temp().await?))
}

/// Creates a workspace with one member and returns that member as a caller.
pub async fn caller(engine: &Engine, plan: Plan, role: Role) -> EngineResult<Caller> {
    let ws_name = "Empaques del Bajío";
    let ws = engine.accounts.create_workspace(ws_name, plan).await?;
    let email = format!("{}@example.mx", uuid::Uuid::new_v4().simple());
    let user = engine
        .accounts
        .create_user(&email, "Ana Prueba", "secreto-123")
        .await?;
    engine.accounts.add_member(&ws, &user, role).await?;
    Ok(Caller {
        user_id: user,
        email,
        display_name: "Ana Prueba".into(),
        workspace_id: ws,
        workspace_name: ws_name.into(),
        role,
        plan,
        api_key: None,
    })
}

/// An API key grant with these scopes and no budget, for policy tests that do not
/// need a stored key (use `Accounts::create_api_key` when the key must exist).
pub fn grant(scopes: &[luna_protocol::account::ApiScope]) -> crate::accounts::ApiKeyGrant {
    crate::accounts::ApiKeyGrant {
        id: "key_prueba".into(),
        scopes: scopes.to_vec(),
        credit_budget: None,
    }
}

/// A Proveedor in Jalisco whose id is its RFC, for tests that need people or records.
pub async fn insert_supplier(engine: &Engine, rfc: &str, name: &str) -> EngineResult<()> {
    sqlx::query(
        "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, source, created_at)
         values ($1, $2, 1, $3, 14, 'test', 0)",
    )
    .bind(rfc)
    .bind(rfc)
    .bind(name)
    .execute(engine.store.pool())
    .await?;
    Ok(())
}
