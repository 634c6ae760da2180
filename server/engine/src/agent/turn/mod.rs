//! Luna's turn loop, on top of the turn contract (`crate::agent::contract`: input,
//! gateway, intent, narration, trajectory — re-exported here for the crate's users):
//! the OpenAI-compatible gateway with routing (`openai`), the session's memory and
//! stage (`memory`), chained requests (`plan`), the loop that runs a turn against the
//! registry and the session log (`runner`), the API that starts turns (`service`) and
//! steering a running turn (`steering`).

pub use crate::agent::contract::{gateway, input, intent, narration, trajectory};
pub mod memory;
pub mod openai;
pub mod plan;
pub mod runner;
pub mod service;
pub mod steering;

#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod steering_tests;
#[cfg(test)]
mod tests;
