//! Luna's domain core. Everything that decides what Luna may do lives here, free of
//! any web framework: the `app` crate and the `server` binary adapt it.
//!
//! Modules are named for what they hold; see ARCHITECTURE.md for the code map.

pub mod accounts;
pub mod agent;
pub mod base;
pub mod billing;
pub mod crm;
pub mod demo;
pub mod knowledge;
#[cfg(test)]
mod layer_tests;
pub mod market;
pub mod people;
pub mod registry;
pub mod sequences;
pub mod session;
pub mod testkit;
pub mod tools;

// The public facade: the paths the app, the server, the benches and the binaries use.
pub use agent::{decisions, director, evals, research, screen, turn};
pub use base::{catalog, clock, error, ids, password, store};

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
    /// Market data (Proveedores, Licitaciones, Adjudicaciones, Registros, marcas de
    /// riesgo); holds the secret that seals its cursors.
    pub market: market::Market,
    /// The CRM and the Empresas directory.
    pub crm: crm::Crm,
    /// Personas: the people directory, quotes and reveals.
    pub people: people::People,
    /// Cerebro: the team's knowledge.
    pub knowledge: knowledge::Knowledge,
    /// Email sequences: where messages go (SMTP or the local outbox) and how fast.
    pub sequences: sequences::Sequences,
    /// The tool catalog, built once from every family's `register`.
    pub registry: Arc<registry::Registry>,
    /// The model that plays Luna: the local director unless one is configured.
    pub model: turn::gateway::ModelHandle,
    /// The agent's services the tools call (`tools::port`), installed here so no
    /// tool imports the agent.
    pub agent: Arc<dyn tools::AgentPort>,
    /// Long research runs driven by this process.
    pub research: research::Research,
    /// A running turn whose heartbeat (every sixth of this) is silent this long
    /// belongs to a dead process (`turn::service::close_interrupted`).
    pub turn_stale: std::time::Duration,
}

impl sequences::Deps for Engine {
    fn store(&self) -> &Store {
        &self.store
    }
    fn crm(&self) -> &crm::Crm {
        &self.crm
    }
    fn market(&self) -> &market::Market {
        &self.market
    }
    fn sessions(&self) -> &session::Sessions {
        &self.sessions
    }
    fn sequences(&self) -> &sequences::Sequences {
        &self.sequences
    }
}

impl Engine {
    /// Opens the database at `database_url`, applies migrations and wires the services.
    /// `secret` is the server secret; market cursors are sealed with a key derived
    /// from it, so they stay valid across restarts.
    pub async fn open(database_url: &str, secret: &str) -> EngineResult<Engine> {
        let store = Store::open(database_url).await?;
        // A bulk import killed midway left search indexes aside: they come back
        // before anyone searches.
        let mut conn = store.pool().acquire().await?;
        market::import::ocds::deferred::restore(&mut conn, store.backend()).await?;
        drop(conn);
        Ok(Engine::from_store_with_secret(store, secret))
    }

    /// An engine with a random cursor secret (tests, tools that never paginate).
    pub fn from_store(store: Store) -> Engine {
        use rand::RngCore;
        let mut secret = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut secret);
        Engine::with_cursor_key(store, secret.to_vec())
    }

    /// An engine whose market cursors are sealed with a key derived from `secret`.
    pub fn from_store_with_secret(store: Store, secret: &str) -> Engine {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"luna/market-cursor/v1\0");
        h.update(secret.as_bytes());
        Engine::with_cursor_key(store, h.finalize().to_vec())
    }

    fn with_cursor_key(store: Store, cursor_key: Vec<u8>) -> Engine {
        Engine {
            market: market::Market::new(store.clone(), cursor_key),
            accounts: accounts::Accounts::new(store.clone()),
            sessions: session::Sessions::new(store.clone()),
            billing: billing::Billing::new(store.clone()),
            crm: crm::Crm::new(store.clone()),
            people: people::People::embedded(store.clone(), billing::Billing::new(store.clone())),
            knowledge: knowledge::Knowledge::new(store.clone()),
            // Until the server configures one, mail goes to a throwaway outbox.
            sequences: sequences::Sequences::new(Arc::new(sequences::Outbox::new(
                std::env::temp_dir().join(format!("luna-outbox-{}", ids::random_token(8))),
            ))),
            registry: Arc::new(tools::catalog()),
            model: turn::gateway::ModelHandle(Arc::new(director::planner::LocalDirector)),
            agent: Arc::new(agent::port::Port),
            research: research::Research::new(),
            turn_stale: std::time::Duration::from_millis(turn::service::STALE_AFTER_MS as u64),
            store,
        }
    }

    /// The same engine sending mail through `mailer` (SMTP or the data directory's outbox).
    pub fn with_mailer(mut self, mailer: Arc<dyn sequences::Mailer>) -> Engine {
        self.sequences.mailer = mailer;
        self
    }

    /// The same engine whose unsubscribe links start with `public_url`.
    pub fn with_public_url(mut self, public_url: impl Into<String>) -> Engine {
        self.sequences.public_url = public_url.into();
        self
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
