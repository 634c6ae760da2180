//! The tools layer: **the** place to add a tool. One file per family; each file
//! declares its tools' definitions (schema, stage, level, cost, surfaces) and handlers,
//! and registers them in [`catalog`]. Tools call the domains' services and run through
//! the registry's pipeline (`crate::registry`); nothing below this layer imports it.

pub mod account;
pub mod board;
pub mod company;
pub mod crm;
pub mod handles;
pub mod knowledge;
pub mod market;
pub mod people;
pub mod port;
pub mod research;
pub mod sequences;

pub use port::{AgentPort, ResearchProposal};

use crate::registry::Registry;

/// Every family's `register`, in catalog order. A new family adds one line here.
pub fn catalog() -> Registry {
    let mut reg = Registry::new();
    market::register(&mut reg);
    crm::register(&mut reg);
    company::register(&mut reg);
    knowledge::register(&mut reg);
    people::register(&mut reg);
    account::register(&mut reg);
    board::register(&mut reg);
    sequences::register(&mut reg);
    research::register(&mut reg);
    reg
}
