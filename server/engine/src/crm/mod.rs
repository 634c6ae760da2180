//! The CRM (CONTRACT §5 "CRM invariants", seed 004 §4.4) and the Empresas directory.
//!
//! - [`model`]: collections (pipelines with ordered stages, a primary field, typed
//!   fields some of which are `locked`) and records (`entity_id` at the top level,
//!   stage, version).
//! - [`records`]: every write (add, update, bulk, activities) with its history row
//!   and its undo token; [`undo`] restores the previous state exactly.
//! - [`query`]: `collection_query` (paged query with sealed cursors, exact aggregate).
//! - [`proposals`]: the level-1 previews (`crm_save_companies`, `crm_bulk_update`)
//!   and their idempotent execution.
//! - [`directory`]: the Empresas directory (not Proveedores), linked to market
//!   suppliers by RFC or name, and `company_save`'s claim tokens.
//! - [`tools`] and [`company_tools`]: the registry families.
//! - [`demo`]: the demo workspace's "Prospección" pipeline.

pub mod collections;
pub mod demo;
pub mod directory;
pub mod errors;
pub mod model;
pub mod proposals;
pub mod query;
pub mod records;
pub mod undo;

#[cfg(test)]
mod record_bounds_tests;
#[cfg(test)]
mod save_stage_tests;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use tokio::sync::OnceCell;

use crate::accounts::Caller;
use crate::base::error::EngineResult;
use crate::base::store::Store;
use crate::base::surface::Surface;

pub use model::{Actor, Collection, CollectionStatus, FieldDef, FieldType, Record};
pub use proposals::{BulkExecution, SaveExecution};
pub use undo::UndoOutcome;

/// Resolves the refs of the caller's current board selection (wired by the session
/// layer; without it `source: "selection"` asks for explicit refs).
pub trait SelectionSource: Send + Sync {
    fn selection<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = EngineResult<Vec<String>>> + Send + 'a>>;
}

/// The CRM service. Cheap to clone.
#[derive(Clone)]
pub struct Crm {
    store: Store,
    cursor_secret: Arc<OnceCell<Vec<u8>>>,
    selection: Option<Arc<dyn SelectionSource>>,
}

impl std::fmt::Debug for Crm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crm").finish_non_exhaustive()
    }
}

impl Crm {
    pub fn new(store: Store) -> Crm {
        Crm {
            store,
            cursor_secret: Arc::new(OnceCell::new()),
            selection: None,
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Plugs in the board selection for `crm_save_companies{source:"selection"}`.
    pub fn set_selection_source(&mut self, source: Arc<dyn SelectionSource>) {
        self.selection = Some(source);
    }

    pub(crate) async fn selection_refs(
        &self,
        caller: &Caller,
    ) -> EngineResult<Option<Vec<String>>> {
        match &self.selection {
            Some(s) => Ok(Some(s.selection(caller).await?)),
            None => Ok(None),
        }
    }

    /// The key that seals `collection_query` cursors, created once per database.
    pub(crate) async fn cursor_secret(&self) -> EngineResult<&[u8]> {
        let store = self.store.clone();
        let secret = self
            .cursor_secret
            .get_or_try_init(|| async move {
                let fresh = crate::base::ids::random_token(32);
                sqlx::query(
                    "insert into crm_settings (key, value) values ('cursor_secret', $1) on conflict do nothing",
                )
                .bind(&fresh)
                .execute(store.pool())
                .await?;
                let value: String = sqlx::query_scalar(
                    "select value from crm_settings where key = 'cursor_secret'",
                )
                .fetch_one(store.pool())
                .await?;
                Ok::<_, crate::base::error::EngineError>(value.into_bytes())
            })
            .await?;
        Ok(secret.as_slice())
    }

    /// Undoes a level-0 write ("deshacer"): restores the state before it exactly, or
    /// fails with `VERSION_CONFLICT` if a record changed since.
    pub async fn undo(
        &self,
        caller: &Caller,
        surface: Surface,
        undo_token: &str,
    ) -> EngineResult<UndoOutcome> {
        undo::undo(&self.store, &Actor::new(caller, surface), undo_token).await
    }

    /// Executes a `crm_save_companies` proposal (the decision card's tap). Idempotent:
    /// a second execution creates nothing and reports `already_executed`.
    pub async fn execute_save_proposal(
        &self,
        caller: &Caller,
        proposal_id: &str,
    ) -> EngineResult<SaveExecution> {
        proposals::execute_save(&self.store, caller, proposal_id).await
    }

    /// Executes a `crm_bulk_update` proposal. Idempotent like `execute_save_proposal`.
    pub async fn execute_bulk_proposal(
        &self,
        caller: &Caller,
        proposal_id: &str,
    ) -> EngineResult<BulkExecution> {
        proposals::execute_bulk(&self.store, caller, proposal_id).await
    }
}
