//! The chat projection (CONTRACT §13): the person's messages, Luna's narration with its
//! anchors, tool lines (with "deshacer" when a write can be undone), decision card
//! references and refusals. There is no chat table: this is a fold of the log.

use crate::json::FromJson;
use serde::{Deserialize, Deserializer, Serialize};

use crate::board::RunStatus;
use crate::decision::{DecisionKind, DecisionOutcome, DecisionResult};
use crate::event::{Anchor, RefusalCode, SteeringOutcome};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, FromJson)]
pub struct Chat {
    #[serde(default)]
    pub messages: Vec<ChatMessage>,
}

/// `Deserialize` goes through `FromJson` (`crate::json::deserialize`), as `SessionEvent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, FromJson)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChatMessage {
    Person {
        turn_id: String,
        text: String,
        steering: bool,
        /// For a steering message: whether the running turn took it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steering_outcome: Option<SteeringOutcome>,
    },
    Luna {
        turn_id: String,
        text: String,
        #[serde(default)]
        anchors: Vec<Anchor>,
    },
    Tool(ToolLine),
    /// A reference to a decision card; the card itself lives in `board.pending`
    /// while it waits.
    Decision {
        decision_id: String,
        decision_kind: DecisionKind,
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<DecisionOutcome>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<DecisionResult>,
    },
    Refused {
        turn_id: String,
        code: RefusalCode,
        message: String,
    },
    /// A link to a research run; the run card itself lives in `board.runs`.
    Run {
        run_id: String,
        title: String,
        status: RunStatus,
    },
}

impl<'de> Deserialize<'de> for ChatMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::json::deserialize(deserializer)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Running,
    Done,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ToolLine {
    pub turn_id: String,
    pub call_ref: String,
    pub label: String,
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default)]
    pub refs: Vec<String>,
    #[serde(default)]
    pub reads_counted: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo_token: Option<String>,
    /// Set once the write was undone: what the undo restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone: Option<String>,
}

/// A piece of narration ready to render: plain text or a link to a ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    Text(&'a str),
    Link { label: &'a str, reference: &'a str },
}

/// Splits narration into text and links. Anchors that are out of order, overlap,
/// or do not match the text are rendered as plain text, never trusted blindly.
pub fn segments<'a>(text: &'a str, anchors: &'a [Anchor]) -> Vec<Segment<'a>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    for a in anchors {
        let (start, end) = (a.start as usize, a.end as usize);
        let fits = start >= pos && text.get(start..end) == Some(a.label.as_str());
        if !fits {
            continue;
        }
        if start > pos {
            out.push(Segment::Text(&text[pos..start]));
        }
        out.push(Segment::Link {
            label: &text[start..end],
            reference: &a.reference,
        });
        pos = end;
    }
    if pos < text.len() {
        out.push(Segment::Text(&text[pos..]));
    }
    out
}
