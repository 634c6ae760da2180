//! Steering a running chat turn: the message reaches the model's next step, changes
//! what it does, and the chat says so; a message after the last step is reported as
//! late; a message after the turn closed starts a turn of its own.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use luna_protocol::account::{Plan, Role};
use luna_protocol::chat::ChatMessage;
use luna_protocol::event::{SessionEvent, SteeringOutcome};
use serde_json::json;

use super::service::submit;
use crate::agent::contract::gateway::{
    ModelGateway, ModelInput, ModelStep, Route, ScriptedModel, StepFuture, ToolCall,
};
use crate::agent::contract::intent::{FactField, FactStatus, TurnIntent, TurnOutput};
use crate::testkit::World;

async fn setup() -> (World, String) {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let session = w.engine.sessions.create(&w.caller).await.unwrap();
    (w, session.id)
}

fn count(state: &str) -> ModelStep {
    ModelStep::Tools(vec![ToolCall {
        name: "market_count".into(),
        args: json!({"kind": "suppliers", "filters": {"giro": "empaque", "state": state}}),
    }])
}

fn fin() -> ModelStep {
    ModelStep::Final(TurnOutput {
        intent: TurnIntent::Responder {},
        narracion: "Listo.".into(),
    })
}

/// A scripted model that plans like a real one: each count is for the state the
/// person asked for last (the newest steering message naming one, else the message).
/// At step `steer_at` the person sends `steering` while the turn runs.
struct Steered {
    engine: crate::Engine,
    caller: crate::accounts::Caller,
    session: String,
    steer_at: usize,
    steering: &'static str,
    script: Vec<fn(&ModelInput) -> ModelStep>,
    n: AtomicUsize,
    seen: Mutex<Vec<ModelInput>>,
}

impl ModelGateway for Steered {
    fn route(&self) -> Route {
        Route::Scripted
    }
    fn step<'a>(&'a self, input: &'a ModelInput) -> StepFuture<'a> {
        Box::pin(async move {
            let n = self.n.fetch_add(1, Ordering::SeqCst) + 1;
            if let Ok(mut seen) = self.seen.lock() {
                seen.push(input.clone());
            }
            if n == self.steer_at {
                let idle: Arc<dyn ModelGateway> = Arc::new(ScriptedModel::new([]));
                let ack = submit(
                    &self.engine,
                    idle,
                    &self.caller,
                    &self.session,
                    self.steering,
                    "k-steer",
                )
                .await
                .expect("the steering message is accepted");
                assert!(ack.steering, "{ack:?}");
            }
            Ok(self.script.get(n - 1).map_or_else(fin, |f| f(input)))
        })
    }
}

fn state_asked(input: &ModelInput) -> ModelStep {
    let steered = input
        .turn
        .steering
        .iter()
        .rev()
        .any(|s| s.contains("Nuevo León"));
    count(if steered { "Nuevo León" } else { "Jalisco" })
}

async fn wait_finished(
    engine: &crate::Engine,
    caller: &crate::accounts::Caller,
    session: &str,
    turns: usize,
) -> Vec<luna_protocol::event::StoredEvent> {
    for _ in 0..300 {
        let events = engine
            .sessions
            .events_since(caller, session, 0)
            .await
            .unwrap();
        let finished = events
            .iter()
            .filter(|e| matches!(e.event, SessionEvent::TurnFinished(_)))
            .count();
        if finished >= turns {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the turn did not finish");
}

fn steering_line(
    view: &luna_protocol::view::SessionView,
) -> Option<(String, Option<SteeringOutcome>)> {
    view.chat.messages.iter().find_map(|m| match m {
        ChatMessage::Person {
            text,
            steering: true,
            steering_outcome,
            ..
        } => Some((text.clone(), *steering_outcome)),
        _ => None,
    })
}

#[tokio::test]
async fn steering_mid_turn_changes_the_next_tool_call_and_the_chat_shows_it_applied() {
    let (w, session) = setup().await;
    let model = Arc::new(Steered {
        engine: w.engine.clone(),
        caller: w.caller.clone(),
        session: session.clone(),
        steer_at: 1,
        steering: "mejor en Nuevo León",
        script: vec![state_asked, state_asked],
        n: AtomicUsize::new(0),
        seen: Mutex::new(Vec::new()),
    });
    let ack = submit(
        &w.engine,
        model.clone(),
        &w.caller,
        &session,
        "¿cuántos fabricantes de empaque hay en Jalisco?",
        "k-1",
    )
    .await
    .unwrap();
    assert!(!ack.steering);
    let events = wait_finished(&w.engine, &w.caller, &session, 1).await;

    let seen = model.seen.lock().unwrap().clone();
    let states: Vec<String> = seen
        .iter()
        .skip(1)
        .flat_map(|i| i.transcript.iter())
        .map(|e| {
            e.tool
                .args
                .pointer("/filters/state")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert!(seen.len() >= 3, "{} steps", seen.len());
    let last = &seen[2];
    let asked: Vec<&str> = last
        .transcript
        .iter()
        .map(|e| {
            e.tool
                .args
                .pointer("/filters/state")
                .and_then(|v| v.as_str())
                .unwrap_or("")
        })
        .collect();
    assert_eq!(
        asked,
        ["Jalisco", "Nuevo León"],
        "the second count follows the steering ({states:?})"
    );
    assert_eq!(seen[0].turn.steering, Vec::<String>::new());
    assert_eq!(seen[1].turn.steering, ["mejor en Nuevo León"]);
    // The ledger follows the person too: the state is now the one they said.
    assert!(
        matches!(seen[1].turn.facts.status(FactField::Estado), FactStatus::Dicho { valor, .. } if valor == "Nuevo León"),
        "{:?}",
        seen[1].turn.facts
    );

    // The log says it was applied, before the turn's end, and the chat shows it.
    let resolved: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.event {
            SessionEvent::SteeringResolved(r) => Some((r.text.clone(), r.outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(
        resolved,
        [("mejor en Nuevo León".to_owned(), SteeringOutcome::Applied)]
    );
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert_eq!(view.rejected, 0);
    assert_eq!(
        steering_line(&view),
        Some((
            "mejor en Nuevo León".to_owned(),
            Some(SteeringOutcome::Applied)
        ))
    );
}

#[tokio::test]
async fn steering_after_the_last_step_is_shown_as_late_not_lost() {
    let (w, session) = setup().await;
    // The person writes while the model is writing its final answer: no step is left
    // to read it.
    let model = Arc::new(Steered {
        engine: w.engine.clone(),
        caller: w.caller.clone(),
        session: session.clone(),
        steer_at: 2,
        steering: "y también en Sonora",
        script: vec![state_asked],
        n: AtomicUsize::new(0),
        seen: Mutex::new(Vec::new()),
    });
    submit(
        &w.engine,
        model.clone(),
        &w.caller,
        &session,
        "¿cuántos fabricantes de empaque hay en Jalisco?",
        "k-1",
    )
    .await
    .unwrap();
    let events = wait_finished(&w.engine, &w.caller, &session, 1).await;
    let kinds: Vec<&str> = events.iter().map(|e| e.event.kind()).collect();
    let late = kinds.iter().position(|k| *k == "steering.resolved");
    let finished = kinds.iter().position(|k| *k == "turn.finished");
    assert!(late.is_some() && late < finished, "{kinds:?}");
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert_eq!(
        steering_line(&view),
        Some((
            "y también en Sonora".to_owned(),
            Some(SteeringOutcome::TurnEnded)
        ))
    );
    assert_eq!(view.rejected, 0);
}

/// The log still shows the turn running (its `turn.finished` not yet read) but its row
/// closed: the message is not logged as steering of a turn that will never read it; it
/// starts the next turn.
#[tokio::test]
async fn a_message_for_a_turn_that_just_closed_starts_its_own_turn() {
    let (w, session) = setup().await;
    w.engine
        .sessions
        .append_all(
            &session,
            &[
                SessionEvent::UserMessage(luna_protocol::event::UserMessage {
                    turn_id: "turn_a".into(),
                    text: "hola".into(),
                    steering: false,
                }),
                SessionEvent::TurnAccepted(luna_protocol::event::TurnAccepted {
                    turn_id: "turn_a".into(),
                    stage: luna_protocol::session::Stage::SinCriterio,
                }),
            ],
        )
        .await
        .unwrap();
    sqlx::query(
        "insert into turns (id, session_id, workspace_id, idempotency_key, message, status, created_at, heartbeat_at)
         values ('turn_a', $1, $2, 'k-a', 'hola', 'finished', $3, $3)",
    )
    .bind(&session)
    .bind(&w.caller.workspace_id)
    .bind(crate::base::clock::now_ms())
    .execute(w.engine.store.pool())
    .await
    .unwrap();
    let model: Arc<dyn ModelGateway> = Arc::new(ScriptedModel::new([fin()]));
    let ack = submit(
        &w.engine,
        model,
        &w.caller,
        &session,
        "busco empaque",
        "k-b",
    )
    .await
    .unwrap();
    assert!(!ack.steering, "{ack:?}");
    assert_ne!(ack.turn_id, "turn_a");
}
