//! Luna's domain core. Everything that decides what Luna may do lives here, free of
//! any web framework: the `app` crate and the `server` binary adapt it.
//!
//! Modules are named for what they hold; see ARCHITECTURE.md for the code map.

pub mod account_tools;
pub mod accounts;
pub mod billing;
pub mod catalog;
pub mod clock;
pub mod demo;
pub mod director;
pub mod error;
pub mod ids;
pub mod knowledge;
pub mod market;
pub mod people;
pub mod registry;
pub mod session;
pub mod store;
pub mod testkit;
pub mod turn;

pub use error::{EngineError, EngineResult};
pub use store::Store;

use std::sync::Arc;

/// The engine's services, cheap to clone, shared by every request.
#[derive(Clone, Debug)]
pub struct Engine {
    pub store: Store,
    pub accounts: accounts::Accounts,
    pub sessions: session::Sessions,
    pub billing: billing::Billing,
    /// Personas: the people directory, quotes and reveals.
    pub people: people::People,
    /// Cerebro: the team's knowledge.
    pub knowledge: knowledge::Knowledge,
    /// The tool catalog, built once from every family's `register`.
    pub registry: Arc<registry::Registry>,
}

impl Engine {
    /// Opens the database at `database_url`, applies migrations and wires the services.
    pub async fn open(database_url: &str) -> EngineResult<Engine> {
        let store = Store::open(database_url).await?;
        Ok(Engine::from_store(store))
    }

    pub fn from_store(store: Store) -> Engine {
        Engine {
            accounts: accounts::Accounts::new(store.clone()),
            sessions: session::Sessions::new(store.clone()),
            billing: billing::Billing::new(store.clone()),
            people: people::People::embedded(store.clone(), billing::Billing::new(store.clone())),
            knowledge: knowledge::Knowledge::new(store.clone()),
            registry: Arc::new(registry::catalog()),
            store,
        }
    }

    /// Runs one tool call through the registry's pipeline (every surface uses this).
    pub async fn call_tool(
        &self,
        caller: &accounts::Caller,
        request: registry::ToolRequest,
    ) -> registry::ToolResponse {
        registry::pipeline::call(self, caller, request).await
    }
}
