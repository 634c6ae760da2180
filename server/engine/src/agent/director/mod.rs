//! The local director: a deterministic, network-free stand-in for the model. It reads a
//! Spanish commercial request with a documented grammar (`grammar`) and plans tool calls.

pub mod acts;
mod bounds;
pub mod criteria;
mod edits;
mod gazetteer;
pub mod grammar;
pub mod intent;
pub mod kinds;
mod knowing;
pub mod lexicon;
pub mod memory;
pub mod moves;
mod notes;
pub mod places;
pub mod planner;
mod restate;
mod saves;
mod trim;
pub mod vocab;
pub mod words;
pub mod writeup;

#[cfg(test)]
mod tests;
