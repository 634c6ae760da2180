//! The local director: a deterministic, network-free stand-in for the model. It reads a
//! Spanish commercial request with a documented grammar (`grammar`) and plans tool calls.

pub mod grammar;
pub mod planner;
pub mod vocab;
