//! Luna's wire contract: the types that cross between server and browser (and MCP
//! clients). Serde only, no I/O, so it builds for wasm32 and for the server alike.

pub mod account;
pub mod error;
pub mod tool;
