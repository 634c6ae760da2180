//! Long research runs (CONTRACT §10, seed 004 §4.8).
//!
//! `research_start` (level 1) only previews: it frames the brief, stores a proposal
//! and returns its `proposal_id`; the `investigar` card starts the run when a person
//! accepts it ([`start`], guarded so a second acceptance starts nothing). A run then
//! executes real phases in the background ([`drive`]): framing, Proveedores,
//! Adjudicaciones, marcas de riesgo, segments and the write-up. Every tool call goes
//! through `registry::pipeline::call` as Luna, keyed by run, phase and call so a retried
//! call never charges twice. Each phase ends with one transaction that stores its
//! checkpoint (the envelopes it read, what it found) and appends its `run.progress`
//! event, only while the run is still `running`; a start-up resumes every unfinished
//! run at its next phase ([`resume_all`]), so finished phases are never repeated.
//!
//! The model plays its part through the same `ModelGateway` turns use (`model`): it
//! frames the brief into the search the phases make (validated against the catalogues,
//! `frame`) and writes the result. Every gateway call spends one step of the run's
//! inference cap (plans: `billing::plans`); with the cap used up the run frames with the
//! grammar and writes with the code template (`writeup`), and the result says so. Each
//! phase's tool calls appear in the chat as tool lines, like a turn's (`phases`).
//!
//! What a phase found and the final result are written with `[[kind:id]]` markers and
//! resolved like narration (`turn::narration`) against the envelopes the run read: no
//! figure reaches the person without its anchor. A person can cancel a run ([`cancel`])
//! and steer it ([`steer`]): a message sent while it runs is stored and picked up at
//! the next phase, which re-frames the criterion. A proposal expires
//! ([`PROPOSAL_TTL_MS`]) like a quote; accepting it later is `DECISION_EXPIRED`. Plans
//! cap how many runs a workspace has at once and how many model steps one run spends.

mod driver;
mod frame;
mod lifecycle;
pub mod model;
mod phases;
mod run;

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;

pub use frame::Frame;
pub use model::ModelStepNote;

/// The real phases of a run, in order: (key, Spanish label); defined with the tools
/// that show them.
pub use crate::tools::port::RESEARCH_PHASES as PHASES;

/// Start-ups that may pick an interrupted run up again before it is failed.
pub const MAX_RESUMES: i64 = 3;
/// Longest brief, in characters.
pub const MAX_BRIEF_CHARS: usize = 2_000;
/// Most refs a brief may start from.
pub const MAX_REFS: usize = 20;
/// Proveedores a run names and screens.
const TOP: usize = 5;
/// A proposal (and its `investigar` card) expires after 30 minutes: the plan it shows
/// was framed from the market as it was then.
pub const PROPOSAL_TTL_MS: i64 = 30 * 60 * 1000;

/// How long a run's lease lasts without renewal; it is renewed before every phase.
pub const LEASE_MS: i64 = 5 * 60 * 1000;

pub use driver::*;
pub use lifecycle::*;
pub use run::*;
