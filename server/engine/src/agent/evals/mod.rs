//! The blocking evals (CONTRACT §14, seed 004 §9) and the brief bench (issue 11).
//!
//! - `checks`: the eight evals as code over [`crate::agent::contract::trajectory::Trajectory`];
//! - `bench`: Spanish briefs (`server/engine/evals/briefs.json`) run end to end through
//!   the local director on the generated demo workspace, each with its expected
//!   properties, plus the per-eval verdicts and the report (`target/evals/`);
//! - `expect`: one turn judged against its brief's expectations;
//! - `meaning`: issue 22's checks on meaning (expected call arguments, the board
//!   before and after a turn) and the schema walk that keeps expectations honest;
//! - `report`: the Markdown reports and the per-file, per-kind scores;
//! - `undo`: eval 8 measured on state: «deshacer» on a copy of the database restores
//!   the CRM each turn wrote.
//!
//! The harness is tested against deliberately bad trajectories (one per eval) and
//! adversarial scripted models in `tests`.

pub mod bench;
pub mod checks;
pub mod expect;
pub mod meaning;
pub mod report;
pub mod undo;

pub use checks::Eval;

#[cfg(test)]
mod meaning_tests;
#[cfg(test)]
mod tests;
