//! The one reducer: `apply(view, &event)` folds a session's events into its board and
//! chat. The server uses it to build snapshots, the browser to apply live events, so
//! both always agree. It is pure and deterministic: no clock, no randomness, no I/O,
//! and it never panics on a malformed event (it counts it in `rejected` instead).

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

use crate::board::{Board, RunCard};
use crate::chat::{Chat, ChatMessage, ToolLine, ToolStatus};
use crate::event::{Anchor, SessionEvent, StoredEvent};
use crate::patch::apply_patch;
use crate::session::Stage;

/// Everything the screen shows about a session, as of some `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, FromJson)]
pub struct SessionView {
    /// The stage of the latest accepted turn; `None` before the first turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
    /// The turn that is running, if any. A message sent meanwhile is steering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_turn: Option<String>,
    #[serde(default)]
    pub board: Board,
    #[serde(default)]
    pub chat: Chat,
    /// Events that could not be applied to the state they met (e.g. a board patch
    /// whose path does not exist). They change nothing else.
    #[serde(default)]
    pub rejected: u32,
}

/// Why an event did not apply to the current view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyError {
    Invalid(&'static str),
    Patch(String),
    UnknownDecision,
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApplyError::Invalid(why) => write!(f, "invalid event: {why}"),
            ApplyError::Patch(why) => write!(f, "board patch: {why}"),
            ApplyError::UnknownDecision => f.write_str("decision.resolved for an unknown decision"),
        }
    }
}

impl std::error::Error for ApplyError {}

/// Applies one event. An event that cannot apply leaves the view unchanged except for
/// `rejected += 1`, so replaying the same log always gives the same view.
pub fn apply(view: &mut SessionView, event: &SessionEvent) {
    if try_apply(view, event).is_err() {
        view.rejected += 1;
    }
}

/// Folds a sequence of stored events onto `view`.
pub fn fold<'a>(view: &mut SessionView, events: impl IntoIterator<Item = &'a StoredEvent>) {
    for e in events {
        apply(view, &e.event);
    }
}

/// Applies one event or reports why it cannot apply; on error the view is untouched.
pub fn try_apply(view: &mut SessionView, event: &SessionEvent) -> Result<(), ApplyError> {
    event.validate().map_err(|e| ApplyError::Invalid(e.0))?;
    match event {
        SessionEvent::UserMessage(m) => view.chat.messages.push(ChatMessage::Person {
            turn_id: m.turn_id.clone(),
            text: m.text.clone(),
            steering: m.steering,
            steering_outcome: None,
        }),
        SessionEvent::TurnAccepted(t) => {
            view.active_turn = Some(t.turn_id.clone());
            view.stage = Some(t.stage);
        }
        SessionEvent::NarrationDelta(d) => append_narration(&mut view.chat, d),
        SessionEvent::ToolStarted(t) => {
            let line = ToolLine {
                turn_id: t.turn_id.clone(),
                call_ref: t.call_ref.clone(),
                label: t.label.clone(),
                status: ToolStatus::Running,
                summary: None,
                refs: Vec::new(),
                reads_counted: 0,
                undo_token: None,
                undone: None,
            };
            // A call started again (a research phase re-run after a restart) keeps
            // its one line.
            match find_tool_line(&mut view.chat, &t.turn_id, &t.call_ref) {
                Some(existing) => *existing = line,
                None => view.chat.messages.push(ChatMessage::Tool(line)),
            }
        }
        SessionEvent::ToolFinished(t) => {
            let line = ToolLine {
                turn_id: t.turn_id.clone(),
                call_ref: t.call_ref.clone(),
                label: t.label.clone(),
                status: if t.ok {
                    ToolStatus::Done
                } else {
                    ToolStatus::Failed
                },
                summary: Some(t.summary.clone()),
                refs: t.refs.clone(),
                reads_counted: t.reads_counted,
                undo_token: t.undo_token.clone(),
                undone: None,
            };
            match find_tool_line(&mut view.chat, &t.turn_id, &t.call_ref) {
                Some(existing) => *existing = line,
                None => view.chat.messages.push(ChatMessage::Tool(line)),
            }
        }
        SessionEvent::BoardPatched(p) => {
            let mut doc =
                serde_json::to_value(&view.board).map_err(|e| ApplyError::Patch(e.to_string()))?;
            apply_patch(&mut doc, &p.patch).map_err(|e| ApplyError::Patch(e.to_string()))?;
            view.board = crate::json::read(doc).map_err(|e| ApplyError::Patch(e.to_string()))?;
        }
        SessionEvent::DecisionProposed(d) => {
            let card = &d.card;
            match view.board.pending.iter_mut().find(|c| c.id == card.id) {
                Some(existing) => *existing = card.clone(),
                None => view.board.pending.push(card.clone()),
            }
            let already = view.chat.messages.iter().any(
                |m| matches!(m, ChatMessage::Decision { decision_id, .. } if *decision_id == card.id),
            );
            if !already {
                view.chat.messages.push(ChatMessage::Decision {
                    decision_id: card.id.clone(),
                    decision_kind: card.kind,
                    title: card.title.clone(),
                    outcome: None,
                    result: None,
                });
            }
        }
        SessionEvent::DecisionResolved(r) => {
            let line = view.chat.messages.iter_mut().rev().find_map(|m| match m {
                ChatMessage::Decision {
                    decision_id,
                    outcome,
                    result,
                    ..
                } if *decision_id == r.decision_id => Some((outcome, result)),
                _ => None,
            });
            let Some((outcome, result)) = line else {
                return Err(ApplyError::UnknownDecision);
            };
            *outcome = Some(r.outcome);
            *result = r.result.clone();
            view.board.pending.retain(|c| c.id != r.decision_id);
        }
        SessionEvent::RunProgress(p) => {
            let card = RunCard {
                run_id: p.run_id.clone(),
                title: p.title.clone(),
                phase: p.phase.clone(),
                status: p.status,
                summary: p.summary.clone(),
                refs: p.refs.clone(),
                phases: p.phases.clone(),
                anchors: p.anchors.clone(),
            };
            match view.board.runs.iter_mut().find(|r| r.run_id == p.run_id) {
                Some(existing) => *existing = card,
                None => view.board.runs.push(card),
            }
            // The chat links to the run once; the link follows its status.
            let link = view.chat.messages.iter_mut().find_map(|m| match m {
                ChatMessage::Run { run_id, status, .. } if *run_id == p.run_id => Some(status),
                _ => None,
            });
            match link {
                Some(status) => *status = p.status,
                None => view.chat.messages.push(ChatMessage::Run {
                    run_id: p.run_id.clone(),
                    title: p.title.clone(),
                    status: p.status,
                }),
            }
        }
        SessionEvent::TurnFinished(t) => end_turn(view, &t.turn_id),
        SessionEvent::UndoApplied(u) => {
            for m in view.chat.messages.iter_mut() {
                if let ChatMessage::Tool(line) = m {
                    if line.undo_token.as_deref() == Some(u.undo_token.as_str()) {
                        line.undone = Some(u.summary.clone());
                    }
                }
            }
        }
        SessionEvent::SteeringResolved(r) => {
            let message = view.chat.messages.iter_mut().find_map(|m| match m {
                ChatMessage::Person {
                    turn_id,
                    text,
                    steering: true,
                    steering_outcome,
                } if *turn_id == r.turn_id && *text == r.text && steering_outcome.is_none() => {
                    Some(steering_outcome)
                }
                _ => None,
            });
            let Some(outcome) = message else {
                return Err(ApplyError::Invalid(
                    "steering.resolved for a message that is not pending steering",
                ));
            };
            *outcome = Some(r.outcome);
        }
        SessionEvent::TurnRefused(r) => {
            end_turn(view, &r.turn_id);
            view.chat.messages.push(ChatMessage::Refused {
                turn_id: r.turn_id.clone(),
                code: r.code,
                message: r.code.message().to_owned(),
            });
        }
    }
    Ok(())
}

fn end_turn(view: &mut SessionView, turn_id: &str) {
    if view.active_turn.as_deref() == Some(turn_id) {
        view.active_turn = None;
    }
}

/// The line `tool.started` opened for this call. Call refs are local to their turn or
/// research run (`c1`, `p1c1`), so the owner is matched too.
fn find_tool_line<'a>(
    chat: &'a mut Chat,
    turn_id: &str,
    call_ref: &str,
) -> Option<&'a mut ToolLine> {
    chat.messages.iter_mut().rev().find_map(|m| match m {
        ChatMessage::Tool(line) if line.call_ref == call_ref && line.turn_id == turn_id => {
            Some(line)
        }
        _ => None,
    })
}

/// Consecutive deltas of one turn grow one Luna message; anything in between (a tool
/// line, a decision) starts a new one.
fn append_narration(chat: &mut Chat, d: &crate::event::NarrationDelta) {
    if let Some(ChatMessage::Luna {
        turn_id,
        text,
        anchors,
    }) = chat.messages.last_mut()
    {
        if *turn_id == d.turn_id {
            let shift = text.len() as u32;
            text.push_str(&d.text);
            anchors.extend(d.anchors.iter().map(|a| Anchor {
                start: a.start + shift,
                end: a.end + shift,
                ..a.clone()
            }));
            return;
        }
    }
    chat.messages.push(ChatMessage::Luna {
        turn_id: d.turn_id.clone(),
        text: d.text.clone(),
        anchors: d.anchors.clone(),
    });
}
