//! The board (CONTRACT §13): the selection as argued cards, the saved CRM collection,
//! pending decisions, research runs and sequence drafts. The board is a projection
//! of the session log; tools change it through `board.patched` (RFC 6902 against the
//! JSON form of this type), decisions and runs through their own events.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

use crate::decision::DecisionCard;
use crate::event::Anchor;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, FromJson)]
pub struct Board {
    #[serde(default)]
    pub selection: Vec<SelectionItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<SavedCollection>,
    #[serde(default)]
    pub pending: Vec<DecisionCard>,
    #[serde(default)]
    pub runs: Vec<RunCard>,
    #[serde(default)]
    pub sequences: Vec<SequenceCard>,
    /// The auto-mode budget and what it has spent, while auto mode is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto: Option<AutoCounter>,
}

impl Board {
    /// JSON Pointer of the selection list, for building patches.
    pub const SELECTION: &'static str = "/selection";
    pub const SAVED: &'static str = "/saved";
    pub const SEQUENCES: &'static str = "/sequences";
    pub const AUTO: &'static str = "/auto";
}

/// "Automático con presupuesto" as the person set it for this session, and the
/// visible counter ("llevas 40 de 100"). Spending is recorded by the server only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct AutoCounter {
    pub credit_cap: u32,
    pub credits_spent: u32,
    pub contact_cap: u32,
    pub contacts_spent: u32,
    /// The decision classes that run without a card.
    pub classes: Vec<crate::decision::DecisionKind>,
    /// Who set the policy (display name) and when (Unix ms), for receipts.
    pub set_by: String,
    pub set_at: i64,
}

/// A company in the selection, with the reason Luna chose it (an item without `why`
/// never enters: `selection_update` rejects it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct SelectionItem {
    #[serde(rename = "ref")]
    pub reference: String,
    pub label: String,
    pub why: String,
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
}

/// A piece of evidence behind a selection item (an award, a permit, a risk mark…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct Evidence {
    #[serde(rename = "ref")]
    pub reference: String,
    pub label: String,
}

/// The CRM collection the selection was saved into, summarised for the board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct SavedCollection {
    pub collection_id: String,
    pub name: String,
    pub total: u32,
    #[serde(default)]
    pub stages: Vec<StageCount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct StageCount {
    pub stage: String,
    pub count: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Finished,
    Failed,
    /// A person cancelled it (the board's "Cancelar").
    Cancelled,
}

impl RunStatus {
    /// Spanish label for the run card.
    pub fn label(self) -> &'static str {
        match self {
            RunStatus::Running => "En curso",
            RunStatus::Finished => "Terminada",
            RunStatus::Failed => "No se pudo terminar",
            RunStatus::Cancelled => "Cancelada",
        }
    }

    pub fn is_done(self) -> bool {
        !matches!(self, RunStatus::Running)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum PhaseStatus {
    Pending,
    Running,
    Done,
    /// Not reached: the run was cancelled or failed first.
    Skipped,
}

/// One real phase of a research run and what it found, anchored like narration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct RunPhase {
    pub key: String,
    /// Spanish name of the phase ("Buscando Proveedores").
    pub label: String,
    pub status: PhaseStatus,
    /// What the phase found, resolved text (no raw `[[ ]]`); empty until done.
    #[serde(default)]
    pub found: String,
    #[serde(default)]
    pub anchors: Vec<Anchor>,
}

/// A long research run (CONTRACT §10) as the board shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct RunCard {
    pub run_id: String,
    pub title: String,
    /// The current real phase, in Spanish ("Leyendo adjudicaciones de 2024").
    pub phase: String,
    pub status: RunStatus,
    /// The result once finished: resolved text whose figures are all anchors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default)]
    pub refs: Vec<String>,
    /// The real phases, in order, with what each found so far.
    #[serde(default)]
    pub phases: Vec<RunPhase>,
    /// Anchors of `summary`.
    #[serde(default)]
    pub anchors: Vec<Anchor>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum SequenceStatus {
    Borrador,
    Autorizada,
    Activa,
}

/// A sequence draft or campaign (CONTRACT §9).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct SequenceCard {
    pub sequence_id: String,
    pub name: String,
    pub steps: u32,
    pub recipients: u32,
    pub status: SequenceStatus,
    /// Per recipient: who, and how many steps went out (once authorized).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<RecipientProgress>,
    /// The version the board shows; an edit from the board names it, and a stale one is
    /// refused instead of overwriting a newer edit.
    #[serde(default)]
    pub version: i64,
    /// The steps as written (with their `{{variables}}`), editable on the board while
    /// the sequence has not ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drafts: Vec<StepDraft>,
    /// Why the sequence needs the person (es-MX), e.g. that an edit voided its
    /// authorization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// A step of a sequence as written: what the board edits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct StepDraft {
    /// Days after activation (0 = the same day).
    pub delay_days: u32,
    pub subject: String,
    pub body: String,
}

/// One recipient of an active sequence on the board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct RecipientProgress {
    pub email: String,
    pub sent: u32,
    pub pending: u32,
    /// Why the remaining steps will not go out (es-MX: «se dio de baja», «su correo
    /// rebotó», «respondió»), when they were cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// When the recipient's next step goes out (Unix ms), inside the workspace's
    /// sending window in the recipient's time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_send_at: Option<i64>,
    /// The same instant in the recipient's local time, in words (es-MX):
    /// «lun 7 dic, 09:00 (hora del Pacífico)».
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_send: Option<String>,
}
