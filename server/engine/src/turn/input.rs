//! The compiled turn input (SPEC §7.1): what the model may know, and nothing internal.

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
    /// Steering messages received while this turn ran.
    #[serde(default)]
    pub steering: Vec<String>,
}
