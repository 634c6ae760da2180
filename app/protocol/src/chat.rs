//! The chat projection (SPEC §13): the person's messages, Luna's narration with its
//! anchors, tool lines (with "deshacer" when a write can be undone), decision card
//! references and refusals. There is no chat table: this is a fold of the log.

use serde::{Deserialize, Deserializer, Serialize};

use crate::board::RunStatus;
use crate::decision::{DecisionKind, DecisionOutcome, DecisionResult};
use crate::event::{Anchor, RefusalCode};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Chat {
    #[serde(default)]
    pub messages: Vec<ChatMessage>,
}

/// `Deserialize` is written by hand (`crate::json`): same JSON, smaller browser wasm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChatMessage {
    Person {
        turn_id: String,
        text: String,
        steering: bool,
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
        let (kind, rest) = crate::json::untag(deserializer, "kind")?;
        wire::read(&kind, rest).map_err(serde::de::Error::custom)
    }
}

/// The struct variants of `ChatMessage` as plain structs, with the same fields and
/// defaults, for the hand-written `Deserialize` above.
mod wire {
    use serde::Deserialize;
    use serde_json::Value;

    use super::{ChatMessage, ToolLine};
    use crate::board::RunStatus;
    use crate::decision::{DecisionKind, DecisionOutcome, DecisionResult};
    use crate::event::{Anchor, RefusalCode};

    #[derive(Deserialize)]
    struct Person {
        turn_id: String,
        text: String,
        steering: bool,
    }

    #[derive(Deserialize)]
    struct Luna {
        turn_id: String,
        text: String,
        #[serde(default)]
        anchors: Vec<Anchor>,
    }

    #[derive(Deserialize)]
    struct Decision {
        decision_id: String,
        decision_kind: DecisionKind,
        title: String,
        #[serde(default)]
        outcome: Option<DecisionOutcome>,
        #[serde(default)]
        result: Option<DecisionResult>,
    }

    #[derive(Deserialize)]
    struct Refused {
        turn_id: String,
        code: RefusalCode,
        message: String,
    }

    #[derive(Deserialize)]
    struct Run {
        run_id: String,
        title: String,
        status: RunStatus,
    }

    pub(super) fn read(kind: &str, rest: Value) -> Result<ChatMessage, serde_json::Error> {
        use serde::de::Error as _;
        Ok(match kind {
            "person" => {
                let Person {
                    turn_id,
                    text,
                    steering,
                } = crate::json::read(rest)?;
                ChatMessage::Person {
                    turn_id,
                    text,
                    steering,
                }
            }
            "luna" => {
                let Luna {
                    turn_id,
                    text,
                    anchors,
                } = crate::json::read(rest)?;
                ChatMessage::Luna {
                    turn_id,
                    text,
                    anchors,
                }
            }
            "tool" => ChatMessage::Tool(crate::json::read::<ToolLine>(rest)?),
            "decision" => {
                let Decision {
                    decision_id,
                    decision_kind,
                    title,
                    outcome,
                    result,
                } = crate::json::read(rest)?;
                ChatMessage::Decision {
                    decision_id,
                    decision_kind,
                    title,
                    outcome,
                    result,
                }
            }
            "refused" => {
                let Refused {
                    turn_id,
                    code,
                    message,
                } = crate::json::read(rest)?;
                ChatMessage::Refused {
                    turn_id,
                    code,
                    message,
                }
            }
            "run" => {
                let Run {
                    run_id,
                    title,
                    status,
                } = crate::json::read(rest)?;
                ChatMessage::Run {
                    run_id,
                    title,
                    status,
                }
            }
            other => {
                return Err(serde_json::Error::unknown_variant(
                    other,
                    &["person", "luna", "tool", "decision", "refused", "run"],
                ))
            }
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Running,
    Done,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
