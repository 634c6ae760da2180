//! What a handler receives: the caller, the calling surface, the engine's services,
//! whether it may write (`Execute`) or must only preview (`PreviewOnly`), the call's
//! `ref` and its output budget.

use crate::accounts::Caller;
use crate::Engine;

use super::budget;
use super::def::Surface;

/// Decided by `policy::authorize` before the handler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecMode {
    /// Do it.
    Execute,
    /// Luna calling a level-1/2 tool: build the preview and return a `proposal_id` /
    /// `quote_id`; write nothing and charge nothing.
    PreviewOnly,
}

#[derive(Clone, Debug)]
pub struct ToolCtx {
    pub caller: Caller,
    pub surface: Surface,
    pub engine: Engine,
    pub mode: ExecMode,
    /// The tool's canonical name.
    pub tool: &'static str,
    /// `call:…`, the envelope's `ref`.
    pub call_ref: String,
    /// The caller's idempotency key, if it sent one (the server mints it for decisions).
    pub idempotency_key: Option<String>,
    /// Set when auto mode runs the call: the policy reference for receipts.
    pub auto_policy: Option<String>,
    /// The work session of a Luna call (None for MCP and UI calls outside a session).
    pub session_id: Option<String>,
    /// `min(output_budget, surface cap)` in characters.
    pub budget: usize,
}

impl ToolCtx {
    pub fn is_preview(&self) -> bool {
        self.mode == ExecMode::PreviewOnly
    }

    /// How many rows of about `row_chars` fit this call's budget (1..=max_rows). Market
    /// tools use it as the page size so a sealed page is never cut afterwards.
    pub fn page_size_hint(&self, row_chars: usize, max_rows: usize) -> usize {
        budget::page_size_hint(self.budget, row_chars, max_rows)
    }

    /// An idempotency key for a charge made inside the handler: the caller's key when
    /// present (so a retried call never charges twice), else one per call.
    pub fn charge_key(&self, suffix: &str) -> String {
        match &self.idempotency_key {
            Some(k) => format!("{k}:{suffix}"),
            None => format!("{}:{suffix}", self.call_ref),
        }
    }
}
