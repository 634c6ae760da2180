//! Turn loop tests with a scripted model: event order, anchoring and the single
//! repair, the question governor, the step cap, stage projection and idempotency.

use std::sync::Arc;
use std::time::Duration;

use luna_protocol::account::{Plan, Role};
use luna_protocol::chat::ChatMessage;
use luna_protocol::event::{IntentKind, SessionEvent};
use serde_json::json;

use super::runner::{run_turn, MAX_STEPS};
use super::service::submit;
use crate::agent::contract::gateway::{ModelStep, ScriptedModel, ToolCall};
use crate::agent::contract::intent::{FactField, Pregunta, TurnIntent, TurnOutput};
use crate::testkit::World;

fn fin(intent: TurnIntent, narracion: &str) -> ModelStep {
    ModelStep::Final(TurnOutput {
        intent,
        narracion: narracion.into(),
    })
}

fn tools(name: &str, args: serde_json::Value) -> ModelStep {
    ModelStep::Tools(vec![ToolCall {
        name: name.into(),
        args,
    }])
}

async fn setup() -> (World, String) {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let session = w.engine.sessions.create(&w.caller).await.unwrap();
    (w, session.id)
}

fn kinds(events: &[luna_protocol::event::StoredEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.event.kind()).collect()
}

#[tokio::test]
async fn a_turn_logs_its_steps_in_order_and_resolves_anchors() {
    let (w, session) = setup().await;
    let model = ScriptedModel::new([
        tools("usage", json!({})),
        fin(
            TurnIntent::Responder {},
            "Te quedan [[evidence:c1.0.contact_credits_left]] créditos de contacto.",
        ),
    ]);
    let out = run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "turn_1",
        "¿cuántos créditos me quedan?",
    )
    .await
    .unwrap();
    assert!(!out.repaired && !out.trimmed);
    assert!(!out.narration.text.contains("[["));
    assert!(
        out.narration.text.starts_with("Te quedan 100 créditos"),
        "{}",
        out.narration.text
    );

    let events = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap();
    assert_eq!(
        kinds(&events),
        [
            "user.message",
            "turn.accepted",
            "tool.started",
            "tool.finished",
            "narration.delta",
            "turn.finished"
        ]
    );
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert!(view.active_turn.is_none());
    assert!(view
        .chat
        .messages
        .iter()
        .any(|m| matches!(m, ChatMessage::Luna { anchors, .. } if anchors.len() == 1)));
}

#[tokio::test]
async fn an_unresolved_ref_gets_one_repair_then_a_trimmed_responder() {
    let (w, session) = setup().await;
    let model = ScriptedModel::new([
        tools("usage", json!({})),
        fin(TurnIntent::Cierre { variante: crate::agent::contract::intent::CierreVariante::Completo, salidas: vec![] }, "Hay [[company:inventada]] opciones."),
        fin(
            TurnIntent::Cierre { variante: crate::agent::contract::intent::CierreVariante::Completo, salidas: vec![] },
            "Te quedan [[evidence:c1.0.contact_credits_left]] créditos. Además hay 40 empresas listas.",
        ),
    ]);
    let out = run_turn(&w.engine, &model, &w.caller, &session, "turn_1", "hola")
        .await
        .unwrap();
    assert!(out.repaired && out.trimmed);
    assert_eq!(out.intent, TurnIntent::Responder {});
    assert_eq!(out.narration.text, "Te quedan 100 créditos.");
    // The model was told what to repair, exactly once.
    let seen = model.seen();
    assert!(seen[2]
        .repair
        .as_deref()
        .unwrap_or_default()
        .contains("company:inventada"));
}

#[tokio::test]
async fn a_question_about_a_field_already_said_is_blocked() {
    let (w, session) = setup().await;
    let ask = |campo| {
        fin(
            TurnIntent::Encuadre {
                criterio: "empaque".into(),
                pregunta: Some(Pregunta {
                    texto: "¿En qué estado?".into(),
                    campo,
                    opciones: None,
                }),
            },
            "¿En qué estado buscas?",
        )
    };
    let model = ScriptedModel::new([ask(FactField::Estado), ask(FactField::Estado)]);
    let out = run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "t",
        "fabricantes de empaque en Jalisco",
    )
    .await
    .unwrap();
    assert!(out.repaired && out.trimmed);
    assert_eq!(
        out.intent,
        TurnIntent::Responder {},
        "the known-field question never reaches the person"
    );

    let model = ScriptedModel::new([ask(FactField::Ventana)]);
    let out = run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "t2",
        "fabricantes de empaque en Jalisco",
    )
    .await
    .unwrap();
    assert!(!out.repaired, "a question about a missing field passes");
}

#[tokio::test]
async fn the_loop_stops_at_the_step_cap() {
    let (w, session) = setup().await;
    let model = ScriptedModel::new((0..20).map(|_| tools("usage", json!({}))));
    let out = run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "t",
        "¿cuántos créditos?",
    )
    .await
    .unwrap();
    assert_eq!(out.steps, MAX_STEPS);
    assert_eq!(out.transcript.len(), MAX_STEPS);
    assert!(matches!(out.intent, TurnIntent::Cierre { .. }));
    // The person is told why: the step cap, not a lack of evidence.
    assert!(
        out.narration.text.contains("máximo de pasos"),
        "{}",
        out.narration.text
    );
}

#[tokio::test]
async fn a_model_that_stops_answering_ends_the_turn_with_a_plain_retry_message() {
    let (w, session) = setup().await;
    // One tool call, then the model is gone (the script runs out).
    let model = ScriptedModel::new([tools("usage", json!({}))]);
    let out = run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "t",
        "¿cuántos créditos?",
    )
    .await
    .unwrap();
    assert!(matches!(out.intent, TurnIntent::Cierre { .. }));
    assert!(
        out.narration.text.contains("Intenta de nuevo"),
        "{}",
        out.narration.text
    );
    assert!(!out.narration.text.contains("evidencia nueva"));
}

#[tokio::test]
async fn a_tool_outside_the_stage_is_not_executed() {
    let (w, session) = setup().await;
    // `workspaces` has no stage: Luna never sees it, so the call is refused as data.
    let model = ScriptedModel::new([
        tools("workspaces", json!({})),
        fin(TurnIntent::Responder {}, "Listo."),
    ]);
    let out = run_turn(&w.engine, &model, &w.caller, &session, "t", "hola")
        .await
        .unwrap();
    assert_eq!(out.transcript[0].result["error"]["code"], "UNKNOWN_TOOL");
    let events = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap();
    assert!(!kinds(&events).contains(&"tool.started"));
    // Stage projection never shows more than 12 tools.
    for stage in luna_protocol::session::Stage::ALL {
        assert!(w.engine.registry.for_stage(stage).len() <= crate::registry::MAX_VISIBLE_TOOLS);
    }
}

async fn wait_finished(
    engine: &crate::Engine,
    caller: &crate::accounts::Caller,
    session: &str,
) -> Vec<luna_protocol::event::StoredEvent> {
    for _ in 0..200 {
        let events = engine
            .sessions
            .events_since(caller, session, 0)
            .await
            .unwrap();
        if events
            .iter()
            .any(|e| matches!(e.event, SessionEvent::TurnFinished(_)))
        {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the turn did not finish");
}

#[tokio::test]
async fn the_same_idempotency_key_returns_the_same_turn() {
    let (w, session) = setup().await;
    let model: Arc<dyn crate::agent::contract::gateway::ModelGateway> = Arc::new(
        ScriptedModel::new([fin(TurnIntent::Responder {}, "Hola, ¿qué buscas?")]),
    );
    let a = submit(
        &w.engine,
        model.clone(),
        &w.caller,
        &session,
        "hola",
        "key-1",
    )
    .await
    .unwrap();
    let b = submit(
        &w.engine,
        model.clone(),
        &w.caller,
        &session,
        "hola",
        "key-1",
    )
    .await
    .unwrap();
    assert_eq!(a, b);
    let events = wait_finished(&w.engine, &w.caller, &session).await;
    let accepted = events
        .iter()
        .filter(|e| matches!(e.event, SessionEvent::TurnAccepted(_)))
        .count();
    assert_eq!(accepted, 1);
    assert!(events.iter().any(|e| matches!(&e.event, SessionEvent::TurnFinished(f) if f.intent_kind == IntentKind::Responder)));
    let bad = submit(&w.engine, model, &w.caller, &session, "  ", "key-2")
        .await
        .unwrap_err();
    assert_eq!(bad.code(), luna_protocol::error::ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn the_local_director_asks_for_a_criterion_it_was_not_given() {
    let (w, session) = setup().await;
    let director = crate::agent::director::planner::LocalDirector;
    let out = run_turn(
        &w.engine,
        &director,
        &w.caller,
        &session,
        "t",
        "hola, ¿qué puedes hacer?",
    )
    .await
    .unwrap();
    assert!(
        matches!(
            out.intent,
            TurnIntent::Encuadre {
                pregunta: Some(_),
                ..
            }
        ),
        "{:?} {:?}",
        out.intent,
        out.narration
    );
    let out = run_turn(
        &w.engine,
        &director,
        &w.caller,
        &session,
        "t2",
        "¿cuántos créditos me quedan?",
    )
    .await
    .unwrap();
    assert_eq!(out.intent, TurnIntent::Responder {});
    assert!(
        out.narration.text.contains("créditos de contacto") && !out.narration.text.contains("[[")
    );
    let out = run_turn(
        &w.engine,
        &director,
        &w.caller,
        &session,
        "t3",
        "mándalos a HubSpot",
    )
    .await
    .unwrap();
    assert!(matches!(out.intent, TurnIntent::Limite { .. }));
}

#[tokio::test]
async fn the_scene_runs_on_the_local_director_with_anchored_figures() {
    let (w, session) = setup().await;
    w.engine.market.ensure_demo().await.unwrap();
    crate::crm::demo::seed_workspace(&w.engine.store, &w.caller.workspace_id)
        .await
        .unwrap();
    let director = crate::agent::director::planner::LocalDirector;
    let message = "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos, consígueme el correo de los 10 mejores y ármame una secuencia de tres correos.";
    let out = run_turn(&w.engine, &director, &w.caller, &session, "t1", message)
        .await
        .unwrap();
    let tools: Vec<&str> = out
        .transcript
        .iter()
        .map(|e| e.tool.name.as_str())
        .collect();
    assert_eq!(&tools[..2], ["market_count", "market_search"], "{tools:?}");
    assert!(tools.contains(&"selection_update"), "{tools:?}");
    assert!(
        !out.repaired,
        "{:?} {:?}",
        out.narration,
        out.transcript
            .iter()
            .map(|e| e.tool.name.clone())
            .collect::<Vec<_>>()
    );
    assert!(!out.narration.text.contains("[["));
    assert!(
        out.narration.anchors.len() >= 3,
        "{:?} {tools:?}",
        out.narration
    );
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert_eq!(
        view.board.selection.len(),
        40,
        "{tools:?} {}",
        out.transcript
            .iter()
            .map(|e| format!(
                "{} has_more={} cursor={}",
                e.tool.name,
                e.result["has_more"],
                e.result.get("cursor").is_some()
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    assert!(view.board.selection.iter().all(|s| !s.why.is_empty()));
    assert_eq!(
        view.board
            .selection
            .iter()
            .filter(|s| s.priority.is_some())
            .count(),
        10
    );
    // Saving was asked: the turn ends proposing the save card, nothing written yet.
    assert!(
        matches!(
            &out.intent,
            TurnIntent::ProponerDecision {
                decision: crate::agent::contract::intent::DecisionDraft::GuardarEnCrm { .. }
            }
        ),
        "{:?} {}",
        out.intent,
        out.narration.text
    );
    assert_eq!(view.board.pending.len(), 1);
    let records: i64 = sqlx::query_scalar("select count(*) from crm_records")
        .fetch_one(w.engine.store.pool())
        .await
        .unwrap();
    assert_eq!(records, 0, "a level-1 preview writes nothing");
}

#[tokio::test]
async fn three_searches_without_new_evidence_end_the_loop() {
    let (w, session) = setup().await;
    w.engine.market.ensure_demo().await.unwrap();
    let search = || {
        tools(
            "market_search",
            json!({"kind": "suppliers", "filters": {"giro": "empaque", "state": "Jalisco"}, "limit": 20}),
        )
    };
    // The first search brings new companies; the same search three more times brings
    // nothing new, and the governor cuts the loop before the script's final answer.
    let model = ScriptedModel::new([
        search(),
        search(),
        search(),
        search(),
        fin(TurnIntent::Responder {}, "Nunca debería llegar aquí."),
    ]);
    let out = run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "t",
        "proveedores de empaque en Jalisco",
    )
    .await
    .unwrap();
    assert_eq!(
        out.transcript.len(),
        4,
        "cut after the third stagnant search: {:?}",
        out.transcript
            .iter()
            .map(|e| (
                e.tool.name.clone(),
                e.result.to_string().chars().take(300).collect::<String>()
            ))
            .collect::<Vec<_>>()
    );
    assert_eq!(out.steps, 4);
    assert_eq!(model.seen().len(), 4, "the model is not asked again");
    assert!(
        out.transcript[0].result["results"]
            .as_array()
            .is_some_and(|r| r.len() > 1),
        "the first search found companies"
    );
    assert!(matches!(
        out.intent,
        TurnIntent::Cierre {
            variante: crate::agent::contract::intent::CierreVariante::Parcial,
            ..
        }
    ));
    assert!(out.narration.text.contains("no encontré evidencia nueva"));
    // Each result Luna read stayed within the 4,500-character budget.
    for e in &out.transcript {
        assert!(
            e.result.to_string().chars().count() <= 4_500,
            "{}",
            e.tool.name
        );
    }
}

#[tokio::test]
async fn an_explorer_who_used_the_daily_searches_is_refused_before_any_model_step() {
    let w = World::new(Plan::Explorer, Role::Member).await.unwrap();
    let session = w.engine.sessions.create(&w.caller).await.unwrap().id;
    let now = crate::base::clock::now_ms();
    // Four of the five searches used: the turn still runs.
    for _ in 0..4 {
        w.engine.billing.admit_search(&w.caller, now).await.unwrap();
    }
    let model = ScriptedModel::new([fin(TurnIntent::Responder {}, "Listo.")]);
    let out = run_turn(&w.engine, &model, &w.caller, &session, "t1", "hola")
        .await
        .unwrap();
    assert_eq!(out.intent.kind(), "responder");
    // The fifth is gone: the next turn is refused with `cap` (429) and no model runs.
    w.engine.billing.admit_search(&w.caller, now).await.unwrap();
    let model = ScriptedModel::new([]);
    let out = run_turn(&w.engine, &model, &w.caller, &session, "t2", "busca más")
        .await
        .unwrap();
    assert_eq!(out.intent.kind(), "limite");
    assert!(model.seen().is_empty(), "no model step after the preflight");
    let events = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap();
    let refused = events.iter().find_map(|e| match &e.event {
        SessionEvent::TurnRefused(r) => Some(r.clone()),
        _ => None,
    });
    let refused = refused.expect("the turn was refused in the log");
    assert_eq!((refused.turn_id.as_str(), refused.http_status), ("t2", 429));
    // A paid plan has no daily quota.
    let (w, session) = setup().await;
    for _ in 0..10 {
        w.engine.billing.admit_search(&w.caller, now).await.unwrap();
    }
    let model = ScriptedModel::new([fin(TurnIntent::Responder {}, "Listo.")]);
    let out = run_turn(&w.engine, &model, &w.caller, &session, "t1", "hola")
        .await
        .unwrap();
    assert_eq!(out.intent.kind(), "responder");
}

/// A crash mid-turn (simulated as the state a killed process leaves: the turn row
/// 'running', the log at `turn.accepted`, a silent heartbeat). The sweeper closes it
/// once, in the log, so the next message starts a new turn instead of steering a dead
/// one; a turn whose process is alive is left alone.
#[tokio::test]
async fn a_turn_whose_process_died_is_closed_once_and_the_session_moves_on() {
    use super::service::{close_interrupted, STALE_AFTER_MS};
    use luna_protocol::event::{TurnAccepted, UserMessage};
    use luna_protocol::session::Stage;
    let (w, session) = setup().await;
    let crashed = |id: &str| {
        [
            SessionEvent::UserMessage(UserMessage {
                turn_id: id.into(),
                text: "hola".into(),
                steering: false,
            }),
            SessionEvent::TurnAccepted(TurnAccepted {
                turn_id: id.into(),
                stage: Stage::SinCriterio,
            }),
        ]
    };
    w.engine
        .sessions
        .append_all(&session, &crashed("turn_muerto"))
        .await
        .unwrap();
    let old = crate::base::clock::now_ms() - STALE_AFTER_MS - 1_000;
    // The live turn runs in another session: a session has one running turn at most.
    let other = w.engine.sessions.create(&w.caller).await.unwrap().id;
    for (id, key, beat, session) in [
        ("turn_muerto", "k-muerto", old, &session),
        ("turn_vivo", "k-vivo", crate::base::clock::now_ms(), &other),
    ] {
        sqlx::query(
            "insert into turns (id, session_id, workspace_id, idempotency_key, message, status, created_at, heartbeat_at)
             values ($1, $2, $3, $4, 'hola', 'running', $5, $5)",
        )
        .bind(id)
        .bind(session)
        .bind(&w.caller.workspace_id)
        .bind(key)
        .bind(beat)
        .execute(w.engine.store.pool())
        .await
        .unwrap();
    }
    let stuck = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap();
    assert_eq!(stuck.view.active_turn.as_deref(), Some("turn_muerto"));

    assert_eq!(
        close_interrupted(&w.engine, STALE_AFTER_MS).await.unwrap(),
        1
    );
    assert_eq!(
        close_interrupted(&w.engine, STALE_AFTER_MS).await.unwrap(),
        0,
        "closed once"
    );
    let status = |id: &'static str| {
        let engine = w.engine.clone();
        async move {
            sqlx::query_scalar::<_, String>("select status from turns where id = $1")
                .bind(id)
                .fetch_one(engine.store.pool())
                .await
                .unwrap()
        }
    };
    assert_eq!(status("turn_muerto").await, "failed");
    assert_eq!(
        status("turn_vivo").await,
        "running",
        "a live turn is left alone"
    );
    let events = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap();
    assert_eq!(kinds(&events)[2..], ["narration.delta", "turn.finished"]);
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert_eq!(view.active_turn, None);

    let model: Arc<dyn crate::agent::contract::gateway::ModelGateway> = Arc::new(
        ScriptedModel::new([fin(TurnIntent::Responder {}, "Hola de nuevo, ¿qué buscas?")]),
    );
    let ack = submit(
        &w.engine,
        model,
        &w.caller,
        &session,
        "hola otra vez",
        "k-nuevo",
    )
    .await
    .unwrap();
    assert!(!ack.steering, "the next message is a turn of its own");
}

/// Two messages sent at once to an idle session (two tabs, a double click with two
/// keys): exactly one turn runs; the other message steers it, as any message sent
/// while a turn runs does. The database holds one running turn per session.
#[tokio::test]
async fn two_messages_at_once_run_one_turn_and_the_other_steers_it() {
    /// A model that thinks a while, so the first turn is still running when the
    /// second message arrives.
    struct Slow(ScriptedModel);
    impl crate::agent::contract::gateway::ModelGateway for Slow {
        fn route(&self) -> crate::agent::contract::gateway::Route {
            self.0.route()
        }
        fn step<'a>(
            &'a self,
            input: &'a crate::agent::contract::gateway::ModelInput,
        ) -> crate::agent::contract::gateway::StepFuture<'a> {
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                self.0.step(input).await
            })
        }
    }
    let (w, session) = setup().await;
    let model: Arc<dyn crate::agent::contract::gateway::ModelGateway> =
        Arc::new(Slow(ScriptedModel::new([
            fin(TurnIntent::Responder {}, "Hola, ¿qué buscas?"),
            fin(TurnIntent::Responder {}, "Hola otra vez."),
        ])));
    let (a, b) = tokio::join!(
        submit(&w.engine, model.clone(), &w.caller, &session, "hola", "k-a"),
        submit(
            &w.engine,
            model.clone(),
            &w.caller,
            &session,
            "busco empaque",
            "k-b"
        ),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(
        [a.steering, b.steering].iter().filter(|s| !**s).count(),
        1,
        "{a:?} / {b:?}"
    );
    assert_eq!(
        a.turn_id, b.turn_id,
        "the steering message names the running turn"
    );
    let events = wait_finished(&w.engine, &w.caller, &session).await;
    let accepted = events
        .iter()
        .filter(|e| matches!(e.event, SessionEvent::TurnAccepted(_)))
        .count();
    assert_eq!(accepted, 1);
    let turns: i64 = sqlx::query_scalar("select count(*) from turns where session_id = $1")
        .bind(&session)
        .fetch_one(w.engine.store.pool())
        .await
        .unwrap();
    assert_eq!(turns, 1);
}

/// The race's window, made exact: a submit has inserted its running turn but its task
/// has not logged `turn.accepted` yet, so the log still shows an idle session. A message
/// now steers that turn instead of starting a second one; the database refuses a
/// second running turn in the session whoever writes it.
#[tokio::test]
async fn a_message_while_a_turn_starts_steers_it_and_the_database_holds_one_running_turn() {
    let (w, session) = setup().await;
    sqlx::query(
        "insert into turns (id, session_id, workspace_id, idempotency_key, message, status, created_at, heartbeat_at)
         values ('turn_a', $1, $2, 'k-a', 'hola', 'running', $3, $3)",
    )
    .bind(&session)
    .bind(&w.caller.workspace_id)
    .bind(crate::base::clock::now_ms())
    .execute(w.engine.store.pool())
    .await
    .unwrap();
    let model: Arc<dyn crate::agent::contract::gateway::ModelGateway> =
        Arc::new(ScriptedModel::new([fin(TurnIntent::Responder {}, "Hola.")]));
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
    assert!(ack.steering, "{ack:?}");
    assert_eq!(ack.turn_id, "turn_a");
    for (id, key) in [("turn_x", "k-x"), ("turn_y", "k-y")] {
        let _ = sqlx::query(
            "insert into turns (id, session_id, workspace_id, idempotency_key, message, status, created_at)
             values ($1, $2, $3, $4, 'hola', 'running', 0)",
        )
        .bind(id)
        .bind(&session)
        .bind(&w.caller.workspace_id)
        .bind(key)
        .execute(w.engine.store.pool())
        .await;
    }
    let running: i64 = sqlx::query_scalar(
        "select count(*) from turns where session_id = $1 and status = 'running'",
    )
    .bind(&session)
    .fetch_one(w.engine.store.pool())
    .await
    .unwrap();
    assert_eq!(running, 1);
}
