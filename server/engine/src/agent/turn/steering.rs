//! Steering a chat turn (CONTRACT §7): a message sent while a turn runs is logged as
//! steering (`user.message {steering: true}`, see `service`). The loop reads the new
//! ones before each model step ([`Inbox::take`]), hands them to the model in
//! `TurnInput.steering` so it plans the rest of the turn with them, and logs
//! `steering.resolved {applied}`; one that arrives after the turn's last step is
//! logged `turn_ended` when the turn closes ([`late`]), so the chat always says what
//! became of it. Research runs take steering at their next phase instead
//! (`agent::research::steer`).

use luna_protocol::chat::ChatMessage;
use luna_protocol::event::{SessionEvent, SteeringOutcome, SteeringResolved, StoredEvent};
use luna_protocol::view::SessionView;

use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Conn;
use crate::Engine;

/// The steering messages of one turn that the loop has not read yet.
#[derive(Debug, Clone)]
pub struct Inbox {
    turn_id: String,
    /// The log position read up to.
    cursor: u64,
    /// Messages already in the view the turn started from (one may steer a turn
    /// between its row and its `turn.accepted`).
    waiting: Vec<String>,
}

impl Inbox {
    /// Opens the inbox of `turn_id` on the view (as of `seq`) the turn starts from.
    pub fn open(turn_id: &str, seq: u64, view: &SessionView) -> Self {
        let waiting = view
            .chat
            .messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::Person {
                    turn_id: t,
                    text,
                    steering: true,
                    steering_outcome: None,
                } if t == turn_id => Some(text.clone()),
                _ => None,
            })
            .collect();
        Inbox {
            turn_id: turn_id.to_owned(),
            cursor: seq,
            waiting,
        }
    }

    /// The inbox of a turn whose loop is not at hand (a turn that failed): every
    /// steering message of the turn is checked when it closes.
    pub fn unread(turn_id: &str) -> Self {
        Inbox {
            turn_id: turn_id.to_owned(),
            cursor: 0,
            waiting: Vec::new(),
        }
    }

    /// The turn's steering messages nobody read: logged `turn_ended` by the
    /// transaction that closes the turn (in `conn`), so none slips between this read
    /// and the close; a message after the close starts a turn of its own.
    pub(crate) async fn late(
        &self,
        conn: &mut Conn,
        session_id: &str,
    ) -> EngineResult<Vec<SessionEvent>> {
        let mut texts = self.waiting.clone();
        texts.extend(late(conn, session_id, &self.turn_id, self.cursor).await?);
        Ok(texts
            .iter()
            .map(|t| resolved(&self.turn_id, t, SteeringOutcome::TurnEnded))
            .collect())
    }

    /// The steering messages that arrived since the last call, oldest first, each
    /// logged as applied: the caller hands them to the model's next step.
    pub async fn take(
        &mut self,
        engine: &Engine,
        caller: &Caller,
        session_id: &str,
    ) -> EngineResult<Vec<String>> {
        let events = engine
            .sessions
            .events_since(caller, session_id, self.cursor)
            .await?;
        self.see(&events);
        self.apply(engine, session_id).await
    }

    /// Notes the turn's steering messages among `events`, the log read past the
    /// cursor (the turn loop reads the log once per step and hands it here).
    pub fn see(&mut self, events: &[StoredEvent]) {
        if let Some(last) = events.last() {
            self.cursor = last.seq;
        }
        self.waiting.extend(steering_of(&self.turn_id, events));
    }

    /// The steering messages seen and not yet applied, oldest first, each logged as
    /// applied: the caller hands them to the model's next step.
    pub async fn apply(&mut self, engine: &Engine, session_id: &str) -> EngineResult<Vec<String>> {
        let new = std::mem::take(&mut self.waiting);
        if !new.is_empty() {
            let resolved: Vec<SessionEvent> = new
                .iter()
                .map(|text| resolved(&self.turn_id, text, SteeringOutcome::Applied))
                .collect();
            engine.sessions.append_all(session_id, &resolved).await?;
        }
        Ok(new)
    }
}

/// `steering.resolved` for `text` of `turn_id`.
pub fn resolved(turn_id: &str, text: &str, outcome: SteeringOutcome) -> SessionEvent {
    SessionEvent::SteeringResolved(SteeringResolved {
        turn_id: turn_id.to_owned(),
        text: text.to_owned(),
        outcome,
    })
}

/// The steering messages of `turn_id` among `events`, in order.
fn steering_of(turn_id: &str, events: &[StoredEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            SessionEvent::UserMessage(m) if m.steering && m.turn_id == turn_id => {
                Some(m.text.clone())
            }
            _ => None,
        })
        .collect()
}

/// The steering messages of `turn_id` logged after `after` that no `steering.resolved`
/// answered.
async fn late(
    conn: &mut Conn,
    session_id: &str,
    turn_id: &str,
    after: u64,
) -> EngineResult<Vec<String>> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "select seq, payload from session_events
          where session_id = $1 and seq > $2 and kind in ('user.message', 'steering.resolved')
          order by seq",
    )
    .bind(session_id)
    .bind(after.min(i64::MAX as u64) as i64)
    .fetch_all(conn)
    .await?;
    let mut pending: Vec<String> = Vec::new();
    for (seq, payload) in rows {
        let event: SessionEvent = serde_json::from_str(&payload)
            .map_err(|e| EngineError::Internal(format!("stored event {session_id}#{seq}: {e}")))?;
        match event {
            SessionEvent::UserMessage(m) if m.steering && m.turn_id == turn_id => {
                pending.push(m.text)
            }
            SessionEvent::SteeringResolved(r) if r.turn_id == turn_id => {
                if let Some(i) = pending.iter().position(|t| *t == r.text) {
                    pending.remove(i);
                }
            }
            _ => {}
        }
    }
    Ok(pending)
}
