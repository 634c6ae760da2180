//! The turn contract: what a model is handed and what it may answer, independent of
//! who plays it and of the loop that runs it — the compiled input (`input`), the
//! `ModelGateway` trait and its steps (`gateway`), the typed answer, cards and fact
//! ledger (`intent`), how narration is anchored and checked (`narration`), how a tool's
//! result is read and shown (`results`) and the
//! step-by-step record of a turn (`trajectory`). The lowest part of the agent layer:
//! the director, research runs, decision cards and the turn loop all build on it, and it
//! imports none of them.

pub mod gateway;
pub mod input;
pub mod intent;
pub mod narration;
pub mod results;
pub mod trajectory;
