//! The compiled turn input (CONTRACT §7.1): what the model may know, and nothing internal.

use serde::{Deserialize, Serialize};

use luna_protocol::board::Board;
use luna_protocol::chat::ChatMessage;
use luna_protocol::coverage::{Coverage, KindCoverage};
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

/// What the market data covers, as the model sees it (CONTRACT §7.1): the coverage
/// tool's one-line summary, rows and date range per kind, and the states with no data,
/// so a request outside the data is answered as such instead of searched blind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageBrief {
    pub summary: String,
    pub kinds: Vec<KindCoverage>,
    pub states_without_data: Vec<String>,
}

impl CoverageBrief {
    pub fn from_coverage(coverage: &Coverage) -> Self {
        CoverageBrief {
            summary: coverage.summary.clone(),
            kinds: coverage.kinds.clone(),
            states_without_data: coverage.states_without_data.clone(),
        }
    }
}

/// Who said a message of the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speaker {
    Persona,
    Luna,
}

/// One message of the thread as the model sees it: who and what, no ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadMessage {
    pub quien: Speaker,
    pub texto: String,
}

/// How many earlier messages a turn sees.
pub const THREAD_LEN: usize = 10;

/// The thread of a session's chat: the person's messages (steering included) and
/// Luna's narrations, the last `THREAD_LEN`, oldest first. Tool lines, cards and
/// refusals are the board's and the log's, not conversation.
pub fn thread_of(messages: &[ChatMessage]) -> Vec<ThreadMessage> {
    let mut thread: Vec<ThreadMessage> = messages
        .iter()
        .rev()
        .filter_map(|m| match m {
            ChatMessage::Person { text, .. } => Some(ThreadMessage {
                quien: Speaker::Persona,
                texto: text.clone(),
            }),
            ChatMessage::Luna { text, .. } if !text.is_empty() => Some(ThreadMessage {
                quien: Speaker::Luna,
                texto: text.clone(),
            }),
            _ => None,
        })
        .take(THREAD_LEN)
        .collect();
    thread.reverse();
    thread
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnInput {
    pub message: String,
    /// The conversation so far (the person's messages and Luna's narrations, the
    /// last `THREAD_LEN`), oldest first; the current message is not in it.
    pub thread: Vec<ThreadMessage>,
    pub facts: FactLedger,
    /// The workspace's commercial profile (CONTRACT §7.1), when an admin set one; its
    /// offer, territory, buyers and giro are also `perfil` facts of `facts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<luna_protocol::session::CommercialProfile>,
    pub board: BoardBrief,
    pub stage: Stage,
    /// What the market data covers and how fresh it is (absent in research steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageBrief>,
    /// Steering messages received while this turn ran (in a research step: the
    /// messages the run received since its last phase).
    #[serde(default)]
    pub steering: Vec<String>,
    /// Set when the step belongs to a long research run rather than a chat turn:
    /// what the step is for and what the run follows (CONTRACT §10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub research: Option<ResearchStep>,
    /// Set when this turn continues a chained request after its card was accepted:
    /// the request and the parts already done (CONTRACT §7.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanBrief>,
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

/// The plan a continuation turn works on, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanBrief {
    /// The person's request, in their words.
    pub pedido: String,
    /// The cards already accepted along the plan (their parts are done).
    pub hecho: Vec<luna_protocol::decision::DecisionKind>,
}

impl PlanBrief {
    pub fn done(&self, kind: luna_protocol::decision::DecisionKind) -> bool {
        self.hecho.contains(&kind)
    }
}
