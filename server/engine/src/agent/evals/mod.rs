//! The blocking evals (SPEC §14, seed 004 §9) and the brief bench (issue 11).
//!
//! - `checks`: the eight evals as code over [`crate::agent::turn::trajectory::Trajectory`];
//! - `bench`: Spanish briefs (`server/engine/evals/briefs.json`) run end to end through
//!   the local director on the generated demo workspace, each with its expected
//!   properties, plus the per-eval verdicts and the report (`target/evals/`).
//!
//! The harness is tested against deliberately bad trajectories (one per eval) and
//! adversarial scripted models in `tests`.

pub mod bench;
pub mod checks;

pub use checks::Eval;

#[cfg(test)]
mod tests;
