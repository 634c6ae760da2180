//! The websocket stream of a session (`GET /api/sessions/{id}/events?since=seq`):
//! the server sends an optional snapshot, then events in `seq` order with no gaps.
//! `Replica` is the client side: it keeps the view and the last seq, ignores
//! duplicates and reports a gap (the client then reconnects with `since`).

use crate::json::FromJson;
use serde::{Deserialize, Deserializer, Serialize};

use crate::event::{NarrationDelta, SessionEvent};
use crate::view::{apply, SessionView};

/// One websocket text frame, as JSON:
/// `{"type":"event","seq":n,"event":{…}}` or `{"type":"snapshot","seq":n,"view":{…}}`.
/// `Deserialize` goes through `FromJson` (`crate::json::deserialize`), as `SessionEvent`.
#[derive(Debug, Clone, PartialEq, Serialize, FromJson)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamMessage {
    Event {
        seq: u64,
        event: SessionEvent,
    },
    Snapshot {
        seq: u64,
        view: SessionView,
    },
    /// Live reasoning of a streaming model: shown while the turn runs, never stored,
    /// never replayed, never part of the view. It has no `seq`.
    Thinking(Thinking),
    /// The running turn's narration as far as the model has written it: the whole text
    /// so far (not a piece), made only of complete sentences that already resolve
    /// against the turn's data (labels substituted, no raw `[[…]]`, no bare figure).
    /// Shown while the turn runs; the stored `narration.delta` replaces it. No `seq`.
    Narrating(NarrationDelta),
}

impl<'de> Deserialize<'de> for StreamMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::json::deserialize(deserializer)
    }
}

/// A piece of a model's reasoning, as it streams (`{"type":"thinking",…}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct Thinking {
    pub turn_id: String,
    pub text: String,
}

impl StreamMessage {
    /// The log position the message brings the client to (`None` for live frames).
    pub fn seq(&self) -> Option<u64> {
        match self {
            StreamMessage::Event { seq, .. } | StreamMessage::Snapshot { seq, .. } => Some(*seq),
            StreamMessage::Thinking(_) | StreamMessage::Narrating(_) => None,
        }
    }
}

/// The stream skipped events: the client must reconnect with `since = expected - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamGap {
    pub expected: u64,
    pub got: u64,
}

/// A client's copy of a session: the view as of `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, FromJson)]
pub struct Replica {
    pub seq: u64,
    pub view: SessionView,
}

impl Replica {
    pub fn new(seq: u64, view: SessionView) -> Self {
        Replica { seq, view }
    }

    /// Takes one message. Returns `Ok(true)` when the view changed, `Ok(false)` for a
    /// duplicate or stale message, `Err` when an event arrives past a gap.
    pub fn receive(&mut self, message: &StreamMessage) -> Result<bool, StreamGap> {
        match message {
            StreamMessage::Snapshot { seq, view } => {
                if *seq < self.seq {
                    return Ok(false);
                }
                self.seq = *seq;
                self.view = view.clone();
                Ok(true)
            }
            StreamMessage::Event { seq, event } => {
                if *seq <= self.seq {
                    return Ok(false);
                }
                if *seq != self.seq + 1 {
                    return Err(StreamGap {
                        expected: self.seq + 1,
                        got: *seq,
                    });
                }
                apply(&mut self.view, event);
                self.seq = *seq;
                Ok(true)
            }
            StreamMessage::Thinking(_) | StreamMessage::Narrating(_) => Ok(false),
        }
    }
}
