//! Luna's domain core. Everything that decides what Luna may do lives here, free of
//! any web framework: the `app` crate and the `server` binary adapt it.
//!
//! Modules are named for what they hold; see ARCHITECTURE.md for the code map.

pub mod accounts;
pub mod catalog;
pub mod clock;
pub mod demo;
pub mod director;
pub mod error;
pub mod ids;
pub mod market;
pub mod session;
pub mod store;
pub mod turn;

pub use error::{EngineError, EngineResult};
pub use store::Store;

/// The engine's services, cheap to clone, shared by every request.
#[derive(Clone, Debug)]
pub struct Engine {
    pub store: Store,
    pub accounts: accounts::Accounts,
    pub sessions: session::Sessions,
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
            store,
        }
    }
}
