//! Luna's wire contract: the types that cross between server and browser (and MCP
//! clients). Serde only, no I/O, so it builds for wasm32 and for the server alike.
//!
//! The work session lives here too: its events (`event`), the board and chat they
//! project to (`board`, `chat`), the one reducer (`view::apply`) and the websocket
//! frames (`stream`).

// The `FromJson` derive names `::luna_protocol::json`, here as in other crates.
extern crate self as luna_protocol;

pub mod account;
pub mod board;
pub mod chat;
pub mod coverage;
pub mod crm;
pub mod decision;
pub mod error;
pub mod event;
pub mod evidence;
pub mod json;
pub mod knowledge;
pub mod patch;
pub mod session;
pub mod stream;
pub mod tool;
pub mod view;
