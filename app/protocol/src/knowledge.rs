//! The knowledge review page (CONTRACT §11, §13): what an owner or admin sees before
//! merging a note or a suggested edit into Knowledge, and what a resolution returns.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

/// A note (a new topic born "en revisión") or a suggested edit to a Knowledge topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum ReviewKind {
    Note,
    Edit,
}

impl ReviewKind {
    /// Spanish label shown on the item.
    pub fn label(self) -> &'static str {
        match self {
            ReviewKind::Note => "Nota nueva",
            ReviewKind::Edit => "Edición sugerida",
        }
    }
}

/// One pending item of the review queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ReviewItem {
    /// The proposal id, passed back to merge or reject.
    pub id: String,
    pub kind: ReviewKind,
    pub title: String,
    pub area: String,
    pub summary: String,
    /// `topic:<slug>` of the note's topic or of the edited topic.
    pub topic_ref: Option<String>,
    /// Note: its content. Edit: the proposed body (`None`: a question, no new text).
    pub body: Option<String>,
    /// Edit: unified diff against the topic as it was when proposed.
    pub diff: Option<String>,
    /// Who proposed it (display name).
    pub proposed_by: String,
    /// "hoy", "ayer", "hace 3 días".
    pub proposed_ago: String,
}

/// A Knowledge topic as the page lists it (recently updated first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct TopicSummary {
    /// `topic:<slug>`.
    pub topic_ref: String,
    pub title: String,
    pub area: String,
    /// Freshness badge, e.g. "al día · actualizado hoy".
    pub badge: String,
}

/// Everything the review page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ReviewBoard {
    /// Oldest first.
    pub pending: Vec<ReviewItem>,
    /// Knowledge topics, most recently updated first.
    pub recent: Vec<TopicSummary>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum ReviewOutcome {
    Merged,
    Rejected,
}

/// What merging or rejecting returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct Resolution {
    pub id: String,
    pub title: String,
    pub outcome: ReviewOutcome,
    /// The topic now in Knowledge (merged) or the edited topic.
    pub topic_ref: Option<String>,
}

impl Resolution {
    /// The confirmation shown to the reviewer.
    pub fn message(&self) -> String {
        match self.outcome {
            ReviewOutcome::Merged => format!("«{}» ya es parte de Knowledge.", self.title),
            ReviewOutcome::Rejected => format!("Rechazaste «{}».", self.title),
        }
    }
}
