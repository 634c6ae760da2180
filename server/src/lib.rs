//! Luna's server: configuration, the axum router (pages, server functions, health)
//! and start-up. The domain lives in `luna-engine`; this crate only adapts HTTP to it.

#![recursion_limit = "256"]

pub mod cli;
pub mod client_ip;
pub mod config;
pub mod events_ws;
pub mod guard;
pub mod health;
pub mod mail;
pub mod mcp;
pub mod routes;
pub mod session;
pub mod sockets;
pub mod unsubscribe;

pub use config::Config;
pub use routes::{app, AppState};
