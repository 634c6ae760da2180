//! A run's model steps through the gateway, with a `ScriptedModel` whose calls are
//! counted: the framing answer decides what the phases search (unknown values are
//! refused), the write-up is checked like a turn's narration (one repair, then cut to
//! what is anchored), the inference cap stops model calls; plus the run's tool lines in
//! the chat and the expiry of a proposal.

use std::sync::Arc;

use luna_protocol::account::Plan;
use luna_protocol::board::RunStatus;
use luna_protocol::chat::{ChatMessage, ToolStatus};
use luna_protocol::decision::DecisionOutcome;
use luna_protocol::error::ErrorCode;
use luna_protocol::event::SessionEvent;
use serde_json::{json, Value};

use crate::accounts::Caller;
use crate::agent::contract::gateway::{ModelHandle, ModelStep, ScriptedModel, ToolCall};
use crate::agent::contract::input::ResearchTask;
use crate::agent::contract::intent::{CierreVariante, TurnIntent, TurnOutput};
use crate::agent::decisions::{self, Resolution};
use crate::registry::{Surface, ToolRequest};
use crate::Engine;

use super::model::{Outcome, Purpose};
use super::tests::{accept, assert_anchored, offer, progress, setup, started, BRIEF};
use super::PHASES;
use crate::testkit::World;

fn plan(filters: Value) -> ModelStep {
    ModelStep::Tools(vec![ToolCall {
        name: "market_search".into(),
        args: json!({"kind": "suppliers", "filters": filters}),
    }])
}

fn write(narracion: &str) -> ModelStep {
    ModelStep::Final(TurnOutput {
        intent: TurnIntent::Cierre {
            variante: CierreVariante::Completo,
            salidas: vec![],
        },
        narracion: narracion.into(),
    })
}

/// Puts a scripted model in the engine and returns it, to count its calls.
fn script(engine: &mut Engine, steps: Vec<ModelStep>) -> Arc<ScriptedModel> {
    let model = Arc::new(ScriptedModel::new(steps));
    engine.model = ModelHandle(model.clone());
    model
}

fn steps_of(run: &super::Run) -> Vec<(String, Purpose, Outcome)> {
    run.model_steps()
        .map(|(phase, n)| (phase.to_owned(), n.purpose, n.outcome))
        .collect()
}

fn filters_of(run: &super::Run, phase: usize) -> Value {
    run.checkpoints[phase].calls[0].args["filters"].clone()
}

async fn status_row(engine: &Engine, caller: &Caller, run: &str) -> Value {
    let env = engine
        .call_tool(
            caller,
            ToolRequest::new("research_status", json!({"run_id": run}), Surface::Luna),
        )
        .await
        .outcome
        .unwrap();
    serde_json::to_value(&env.results[0]).unwrap()
}

#[tokio::test]
async fn the_framing_answer_decides_what_the_phases_search() {
    let (World { mut engine, caller }, _session, run) = started(Plan::Founder).await;
    // The brief asks for insumos médicos in Nuevo León; the model plans empaque in Jalisco.
    let model = script(
        &mut engine,
        vec![plan(json!({"giro": "empaque", "state": "Jalisco"}))],
    );
    super::drive(&engine, &run, Some(3)).await.unwrap();

    let seen = model.seen();
    assert_eq!(seen.len(), 1, "one model step: the framing");
    let step = seen[0].turn.research.as_ref().unwrap();
    assert_eq!(step.task, ResearchTask::Encuadre);
    assert_eq!(step.brief, BRIEF);
    assert_eq!(
        seen[0]
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        vec!["market_search"]
    );

    let r = super::get(&engine, &caller, &run).await.unwrap();
    for phase in [1, 2] {
        let f = filters_of(&r, phase);
        assert_eq!(f["state"], json!("Jalisco"), "phase {phase}");
        assert_eq!(f["giro"], json!("empaque"), "phase {phase}");
    }
    assert!(r.checkpoints[0]
        .found
        .contains("empaque y envases en Jalisco"));
    assert_eq!(r.inference_used, 1);
    assert_eq!(
        steps_of(&r),
        vec![("encuadre".into(), Purpose::Encuadre, Outcome::Aceptado)]
    );
    // research_status shows the step against the cap.
    let row = status_row(&engine, &caller, &run).await;
    assert_eq!(row["inference_used"], json!(1));
    assert_eq!(row["inference_cap"], json!(4));
    assert_eq!(row["model_steps"][0]["purpose"], json!("encuadre"));
    assert_eq!(row["model_steps"][0]["outcome"], json!("aceptado"));
}

#[tokio::test]
async fn unknown_values_in_the_framing_are_refused_and_the_brief_stays() {
    let (World { mut engine, caller }, _session, run) = started(Plan::Founder).await;
    let model = script(
        &mut engine,
        vec![plan(
            json!({"giro": "astronautas", "state": "Atlántida", "buyer": "NASA", "min_amount": 5}),
        )],
    );
    super::drive(&engine, &run, Some(2)).await.unwrap();
    assert_eq!(model.seen().len(), 1);
    let r = super::get(&engine, &caller, &run).await.unwrap();
    let f = filters_of(&r, 1);
    assert_eq!(f["state"], json!("Nuevo León"));
    assert_eq!(f["giro"], json!("insumos_medicos"));
    assert!(f.get("buyer").is_none() && f.get("min_amount").is_none());
    let note = &r.checkpoints[0].model_steps[0];
    assert_eq!(note.outcome, Outcome::Ajustado);
    assert_eq!(note.rejected, vec!["giro", "state", "buyer", "other"]);
    let found = &r.checkpoints[0].found;
    assert!(found.contains("Descarté"), "{found}");
    // The model's words never reach the person.
    assert!(!found.contains("Atlántida") && !found.contains("NASA"));

    // An answer that is not a plan falls back to the brief as the grammar reads it.
    let (World { mut engine, caller }, _session, run) = started(Plan::Founder).await;
    script(&mut engine, vec![write("Listo.")]);
    super::drive(&engine, &run, Some(2)).await.unwrap();
    let r = super::get(&engine, &caller, &run).await.unwrap();
    assert_eq!(filters_of(&r, 1)["state"], json!("Nuevo León"));
    assert_eq!(r.checkpoints[0].model_steps[0].outcome, Outcome::Invalido);
    assert_eq!(r.inference_used, 1, "the call was made, so it counts");
}

/// Runs every phase but the write-up with the local director, and returns the run.
async fn up_to_the_write_up(plan: Plan) -> (World, String, super::Run) {
    let (w, session, run) = started(plan).await;
    super::drive(&w.engine, &run, Some(PHASES.len() - 1))
        .await
        .unwrap();
    let r = super::get(&w.engine, &w.caller, &run).await.unwrap();
    (w, session, r)
}

/// The Proveedor that leads the run's Adjudicaciones, and its call handle.
fn leader(r: &super::Run) -> (String, String) {
    let c = r.checkpoints[2].calls[0].clone();
    let lead = c.envelope.unwrap().results[0].ref_.clone();
    (lead, c.call)
}

#[tokio::test]
async fn an_unanchored_figure_in_the_write_up_gets_one_repair() {
    let (World { mut engine, caller }, session, r) = up_to_the_write_up(Plan::Founder).await;
    let (lead, c) = leader(&r);
    let model = script(
        &mut engine,
        vec![
            write(&format!("Domina [[{lead}]] con 40 contratos.")),
            write(&format!(
                "Domina [[{lead}]] con [[evidence:{c}.0.awards]] Adjudicaciones."
            )),
        ],
    );
    super::drive(&engine, &r.id, None).await.unwrap();

    let seen = model.seen();
    assert_eq!(seen.len(), 2);
    let step = seen[0].turn.research.as_ref().unwrap();
    assert_eq!(step.task, ResearchTask::Informe);
    assert!(seen[0].tools.is_empty());
    // The model writes over what the run read, under the run's call handles.
    assert!(seen[0].transcript.iter().any(|e| e.call == c));
    assert!(seen[0].repair.is_none());
    assert!(seen[1]
        .repair
        .as_deref()
        .unwrap()
        .contains("UnanchoredFigure"));

    let done = super::get(&engine, &caller, &r.id).await.unwrap();
    assert_eq!(done.status, super::RunState::Finished);
    let result = done.result.clone().unwrap();
    assert!(!result.text.contains("40 contratos"), "{}", result.text);
    assert!(result.text.starts_with("Domina "), "{}", result.text);
    assert_anchored(&result.text, &result.anchors);
    assert!(result.refs.contains(&lead));
    assert_eq!(done.inference_used, 3);
    assert_eq!(
        steps_of(&done)[1..],
        [
            ("informe".into(), Purpose::Informe, Outcome::Rechazado),
            ("informe".into(), Purpose::Reparacion, Outcome::Aceptado),
        ]
    );
    // The card shows the same anchored result.
    let last = progress(&engine, &caller, &session).await.pop().unwrap();
    assert_eq!(last.status, RunStatus::Finished);
    assert_eq!(last.summary.as_deref(), Some(result.text.as_str()));
}

#[tokio::test]
async fn a_write_up_that_stays_unanchored_is_cut_and_its_figure_never_shown() {
    let (World { mut engine, caller }, _session, r) = up_to_the_write_up(Plan::Founder).await;
    let (lead, _) = leader(&r);
    let model = script(
        &mut engine,
        vec![
            write(&format!("Domina [[{lead}]]. Son 40 en total.")),
            write(&format!(
                "Domina [[{lead}]]. Vendió 99 veces a [[company:NOPE]]."
            )),
        ],
    );
    super::drive(&engine, &r.id, None).await.unwrap();
    assert_eq!(model.seen().len(), 2);
    let done = super::get(&engine, &caller, &r.id).await.unwrap();
    let result = done.result.unwrap();
    assert!(result.text.starts_with("Domina "), "{}", result.text);
    assert!(
        !result.text.contains("99") && !result.text.contains("40") && !result.text.contains("NOPE")
    );
    assert_anchored(&result.text, &result.anchors);
    assert_eq!(
        done.checkpoints[5].model_steps[1].outcome,
        Outcome::Recortado
    );
}

#[tokio::test]
async fn the_inference_cap_stops_model_calls_and_the_result_says_so() {
    // Cap 2: framing and one write-up; its unanchored sentence cannot be repaired.
    let (World { mut engine, caller }, session, run) = started(Plan::Founder).await;
    sqlx::query("update research_runs set inference_cap = $1 where id = $2")
        .bind(2_i64)
        .bind(&run)
        .execute(engine.store.pool())
        .await
        .unwrap();
    let model = script(
        &mut engine,
        vec![
            plan(json!({"state": "Nuevo León"})),
            write("Hay [[evidence:p1c1.0.total]] Proveedores. Domina [[company:NOPE]] con 40 contratos."),
            write("This repair must never be asked for."),
        ],
    );
    super::drive(&engine, &run, None).await.unwrap();
    assert_eq!(model.seen().len(), 2, "no call past the cap");
    let done = super::get(&engine, &caller, &run).await.unwrap();
    assert_eq!(done.inference_used, 2);
    let result = done.result.clone().unwrap();
    assert!(result.text.starts_with("Hay "), "{}", result.text);
    assert!(!result.text.contains("NOPE") && !result.text.contains("40 contratos"));
    assert!(
        result
            .text
            .ends_with("ya no tenía pasos del modelo para corregirlas."),
        "{}",
        result.text
    );
    assert_anchored(&result.text, &result.anchors);
    assert_eq!(
        steps_of(&done),
        vec![
            ("encuadre".into(), Purpose::Encuadre, Outcome::Aceptado),
            ("informe".into(), Purpose::Informe, Outcome::Recortado),
        ]
    );

    // Cap 1: framing spends it; neither steering nor the write-up call the model, the
    // code writes the result and says so.
    let (World { mut engine, caller }, _s, run) = started(Plan::Founder).await;
    sqlx::query("update research_runs set inference_cap = $1 where id = $2")
        .bind(1_i64)
        .bind(&run)
        .execute(engine.store.pool())
        .await
        .unwrap();
    let model = script(
        &mut engine,
        vec![plan(json!({"state": "Nuevo León"})), write("Never asked.")],
    );
    super::drive(&engine, &run, Some(1)).await.unwrap();
    super::steer(&engine, &caller, &_s, "mejor enfócate en Jalisco")
        .await
        .unwrap()
        .unwrap();
    super::drive(&engine, &run, None).await.unwrap();
    assert_eq!(model.seen().len(), 1);
    let done = super::get(&engine, &caller, &run).await.unwrap();
    assert_eq!(done.inference_used, 1);
    let result = done.result.clone().unwrap();
    assert!(
        result.text.starts_with("Por monto, domina "),
        "{}",
        result.text
    );
    assert!(
        result
            .text
            .ends_with("ya usó todos los pasos del modelo que permite tu plan."),
        "{}",
        result.text
    );
    assert_anchored(&result.text, &result.anchors);
    let tope: Vec<_> = steps_of(&done)
        .into_iter()
        .filter(|s| s.2 == Outcome::Tope)
        .map(|s| s.1)
        .collect();
    assert_eq!(tope, vec![Purpose::Ajuste, Purpose::Informe]);
    let row = status_row(&engine, &caller, &run).await;
    assert_eq!(row["model_steps"].as_array().unwrap().len(), 3);
    let _ = session;
}

#[tokio::test]
async fn each_phase_shows_its_tool_calls_as_tool_lines_in_the_chat() {
    let (w, session, run) = started(Plan::Founder).await;
    super::drive(&w.engine, &run, None).await.unwrap();
    let r = super::get(&w.engine, &w.caller, &run).await.unwrap();
    let calls: Vec<&super::StoredCall> = r.calls().collect();

    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    let lines: Vec<_> = view
        .chat
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool(line) if line.turn_id == run => Some(line),
            _ => None,
        })
        .collect();
    assert_eq!(lines.len(), calls.len());
    assert!(lines.iter().all(|l| l.status == ToolStatus::Done));
    let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        vec![
            "Contando proveedores en Nuevo León",
            "Buscando proveedores en Nuevo León",
            "Sumando Adjudicaciones",
            "Revisando marcas de riesgo",
            "Comparando segmentos",
        ]
    );
    // Same handles as the run's evidence markers; the search line lists what it found.
    assert_eq!(lines[1].call_ref, calls[1].call);
    assert!(lines[1].refs.iter().all(|r| r.starts_with("company:")));
    assert!(!lines[1].refs.is_empty());
    // Each line comes after its phase's "running" progress and before its "done".
    let events = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap();
    let started_at = events
        .iter()
        .position(|e| matches!(&e.event, SessionEvent::ToolStarted(t) if t.call_ref == "p1c1"))
        .unwrap();
    let phase_done = events
        .iter()
        .position(|e| matches!(&e.event, SessionEvent::RunProgress(p) if p.phases[1].status == luna_protocol::board::PhaseStatus::Done))
        .unwrap();
    assert!(started_at < phase_done);
}

#[tokio::test]
async fn a_cancelled_run_shows_no_more_tool_lines() {
    let (w, session, run) = started(Plan::Founder).await;
    super::drive(&w.engine, &run, Some(2)).await.unwrap();
    super::cancel(&w.engine, &w.caller, &run).await.unwrap();
    let before = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap()
        .len();
    super::drive(&w.engine, &run, None).await.unwrap();
    assert_eq!(
        w.engine
            .sessions
            .events_since(&w.caller, &session, 0)
            .await
            .unwrap()
            .len(),
        before
    );
}

async fn running_runs(engine: &Engine, caller: &Caller) -> i64 {
    sqlx::query_scalar(
        "select count(*) from research_runs where workspace_id = $1 and status != 'propuesta'",
    )
    .bind(&caller.workspace_id)
    .fetch_one(engine.store.pool())
    .await
    .unwrap()
}

async fn age_proposal(engine: &Engine, pid: &str) {
    sqlx::query("update research_runs set created_at = created_at - $1 where proposal_id = $2")
        .bind(super::PROPOSAL_TTL_MS + 1)
        .bind(pid)
        .execute(engine.store.pool())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_expired_proposal_cannot_be_accepted_and_starts_nothing() {
    let (w, session) = setup(Plan::Founder).await;
    // The preview and the card carry the expiry.
    let env = super::tests::research_start(&w.engine, &w.caller, &session)
        .await
        .unwrap();
    let secs = env.results[0].fields["expires_in_seconds"]
        .as_i64()
        .unwrap();
    assert!((1_790..=1_800).contains(&secs), "{secs}");

    let (pid, decision) = offer(&w.engine, &w.caller, &session).await;
    let card = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view
        .board
        .pending
        .into_iter()
        .find(|c| c.id == decision)
        .unwrap();
    assert!(card.expires_at.is_some());

    // The card's own expiry.
    age_proposal(&w.engine, &pid).await;
    sqlx::query("update decisions set expires_at = 1 where id = $1")
        .bind(&decision)
        .execute(w.engine.store.pool())
        .await
        .unwrap();
    let e = decisions::resolve(
        &w.engine,
        &w.caller,
        &session,
        &decision,
        Resolution::Accept,
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::DecisionExpired);
    assert_eq!(running_runs(&w.engine, &w.caller).await, 0);
    let resolved: Vec<_> = w
        .engine
        .sessions
        .events_since(&w.caller, &session, 0)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            SessionEvent::DecisionResolved(r) => Some(r.outcome),
            _ => None,
        })
        .collect();
    assert_eq!(resolved, vec![DecisionOutcome::Expired]);
    // The domain call itself refuses an expired proposal too.
    let e = super::start(&w.engine, &w.caller, &pid).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::DecisionExpired);
    assert_eq!(running_runs(&w.engine, &w.caller).await, 0);

    // A proposal that expired under a card still shown as valid: the start refuses,
    // the card expires with it, nothing runs.
    let (pid, decision) = offer(&w.engine, &w.caller, &session).await;
    age_proposal(&w.engine, &pid).await;
    let e = decisions::resolve(
        &w.engine,
        &w.caller,
        &session,
        &decision,
        Resolution::Accept,
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::DecisionExpired);
    assert_eq!(running_runs(&w.engine, &w.caller).await, 0);
    assert!(w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view
        .board
        .pending
        .is_empty());
    // And no card is prepared from an expired proposal.
    let draft = crate::agent::contract::intent::DecisionDraft::Investigar { proposal_id: pid };
    let e = decisions::prepare(&w.engine, &w.caller, &draft, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::DecisionExpired);

    // A fresh one still starts.
    let (_, decision) = offer(&w.engine, &w.caller, &session).await;
    accept(&w.engine, &w.caller, &session, &decision).await;
    assert_eq!(running_runs(&w.engine, &w.caller).await, 1);
}

#[tokio::test]
async fn the_local_director_understands_the_spanish_investigation_request() {
    let (w, session) = setup(Plan::Founder).await;
    let msg = "investiga a los fabricantes de empaque en Jalisco que le venden a gobierno";
    let out = crate::agent::turn::runner::run_turn(
        &w.engine,
        &crate::agent::director::planner::LocalDirector,
        &w.caller,
        &session,
        "turn_1",
        msg,
    )
    .await
    .unwrap();
    assert!(matches!(
        out.intent,
        TurnIntent::ProponerDecision {
            decision: crate::agent::contract::intent::DecisionDraft::Investigar { .. }
        }
    ));
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    let card = &view.board.pending[0];
    let decision = card.id.clone();
    assert!(card.preview[0]
        .label
        .contains("empaque y envases en Jalisco"));
    let run = accept(&w.engine, &w.caller, &session, &decision).await;
    super::drive(&w.engine, &run, None).await.unwrap();
    let r = super::get(&w.engine, &w.caller, &run).await.unwrap();
    assert_eq!(r.status, super::RunState::Finished);
    assert_eq!(filters_of(&r, 1)["giro"], json!("empaque"));
    assert_eq!(filters_of(&r, 1)["state"], json!("Jalisco"));
    let result = r.result.clone().unwrap();
    assert!(
        result.text.starts_with("Por monto, domina "),
        "{}",
        result.text
    );
    assert_anchored(&result.text, &result.anchors);
    // The director played the model for the framing and the write-up.
    assert_eq!(
        steps_of_ids(&r),
        vec![
            (Purpose::Encuadre, Outcome::Aceptado),
            (Purpose::Informe, Outcome::Aceptado)
        ]
    );
}

fn steps_of_ids(r: &super::Run) -> Vec<(Purpose, Outcome)> {
    r.model_steps()
        .map(|(_, n)| (n.purpose, n.outcome))
        .collect()
}
