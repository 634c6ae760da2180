//! The compiled turn input (CONTRACT §7.1): what the model may know, and nothing internal.

use serde::{Deserialize, Serialize};

use luna_protocol::board::Board;
use luna_protocol::session::Stage;

use super::intent::FactLedger;

/// A selection item as the model sees it: its ref, name and why it is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardItem {
    #[serde(rename = "ref")]
    pub reference: String,
    pub label: String,
    pub why: String,
    /// Marked as a priority ("los 10 mejores").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub priority: bool,
}

/// The board, projected for the model (no decision ids, quote ids or keys).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardBrief {
    pub selection: Vec<BoardItem>,
    pub saved_collection: Option<String>,
    pub pending_decisions: Vec<String>,
}

impl BoardBrief {
    pub fn from_board(board: &Board) -> Self {
        BoardBrief {
            selection: board
                .selection
                .iter()
                .map(|s| BoardItem {
                    reference: s.reference.clone(),
                    label: s.label.clone(),
                    why: s.why.clone(),
                    priority: s.priority.is_some(),
                })
                .collect(),
            saved_collection: board.saved.as_ref().map(|s| s.name.clone()),
            pending_decisions: board.pending.iter().map(|c| c.title.clone()).collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnInput {
    pub message: String,
    /// Luna's last narrations in this session, oldest first.
    pub thread: Vec<String>,
    pub facts: FactLedger,
    pub board: BoardBrief,
    pub stage: Stage,
    /// Steering messages received while this turn ran (in a research step: the
    /// messages the run received since its last phase).
    #[serde(default)]
    pub steering: Vec<String>,
    /// Set when the step belongs to a long research run rather than a chat turn:
    /// what the step is for and what the run follows (CONTRACT §10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub research: Option<ResearchStep>,
}

/// What a research run asks of the model in one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResearchTask {
    /// Turn the brief into the search the phases make: one `market_search` call
    /// whose filters (giro, state, buyer) answer the brief.
    Encuadre,
    /// The same, from the current filters and the person's steering messages.
    Ajuste,
    /// Write the result over the run's tool results, every figure a `[[kind:id]]`.
    Informe,
}

/// A research step as the model sees it (no run ids, keys or internal state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResearchStep {
    pub task: ResearchTask,
    /// The person's brief, in their words.
    pub brief: String,
    /// The criterion the run follows now, in words.
    pub criterion: String,
    /// The filters the run searches with now (`giro`, `state`, `buyer`).
    pub filters: serde_json::Value,
    /// What this step must answer, in Spanish.
    pub instructions: String,
}
