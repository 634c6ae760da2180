//! The base layer: what every other layer stands on and which imports nothing above
//! it — the typed errors, ids, the clock, the store (pool, transactions, dialect
//! helpers), password hashing and the Mexican catalogues (states, SCIAN, RFC, text
//! folding).

pub mod bounds;
pub mod catalog;
pub mod clock;
pub mod error;
pub mod ids;
pub mod password;
pub mod store;
pub mod stored;
pub mod surface;
