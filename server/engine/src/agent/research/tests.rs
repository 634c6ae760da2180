//! Research runs end to end on the demo data, with phases driven by hand
//! (`Research::set_manual`) so a test can stop after any phase: the card, the phases
//! in the session log, restart and resume, cancel, steering, limits, the director.

use std::sync::Arc;

use luna_protocol::account::{Plan, Role};
use luna_protocol::board::{PhaseStatus, RunStatus};
use luna_protocol::decision::DecisionKind;
use luna_protocol::error::ErrorCode;
use luna_protocol::event::{Anchor, RunProgress, SessionEvent};
use serde_json::{json, Value};

use crate::accounts::Caller;
use crate::agent::contract::intent::DecisionDraft;
use crate::agent::decisions::{self, Resolution};
use crate::agent::director::planner::LocalDirector;
use crate::registry::{Surface, ToolRequest};
use crate::Engine;

use super::PHASES;
use crate::testkit::World;

pub(super) const BRIEF: &str =
    "investiga el mercado de insumos médicos en Nuevo León y dime quién domina";

pub(super) async fn setup(plan: Plan) -> (World, String) {
    let w = World::new(plan, Role::Member).await.unwrap();
    assert!(w.engine.market.ensure_demo().await.unwrap());
    w.engine.research.set_manual(true);
    let session = w.engine.sessions.create(&w.caller).await.unwrap().id;
    (w, session)
}

pub(super) async fn research_start(
    engine: &Engine,
    caller: &Caller,
    session: &str,
) -> Result<luna_protocol::tool::Envelope, luna_protocol::error::ErrorBody> {
    let mut req = ToolRequest::new("research_start", json!({"brief": BRIEF}), Surface::Luna);
    req.session_id = Some(session.to_owned());
    engine.call_tool(caller, req).await.outcome
}

/// `research_start` as Luna, then the `investigar` card offered in the session.
pub(super) async fn offer(engine: &Engine, caller: &Caller, session: &str) -> (String, String) {
    let env = research_start(engine, caller, session).await.unwrap();
    let pid = env.results[0].fields["proposal_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let draft = DecisionDraft::Investigar {
        proposal_id: pid.clone(),
    };
    let prepared = decisions::prepare(engine, caller, &draft, Some(&env))
        .await
        .unwrap();
    assert_eq!(prepared.card.kind, DecisionKind::Investigar);
    let offered = decisions::offer(engine, caller, session, None, prepared)
        .await
        .unwrap();
    (pid, offered.card.id)
}

/// Accepts the card and returns the run id it started.
pub(super) async fn accept(
    engine: &Engine,
    caller: &Caller,
    session: &str,
    decision: &str,
) -> String {
    let r = decisions::resolve(engine, caller, session, decision, Resolution::Accept, None)
        .await
        .unwrap();
    let refs = r.result.unwrap().refs;
    refs[0].trim_start_matches("run:").to_owned()
}

pub(super) async fn started(plan: Plan) -> (World, String, String) {
    let (w, session) = setup(plan).await;
    let (_, decision) = offer(&w.engine, &w.caller, &session).await;
    let run = accept(&w.engine, &w.caller, &session, &decision).await;
    (w, session, run)
}

pub(super) async fn progress(engine: &Engine, caller: &Caller, session: &str) -> Vec<RunProgress> {
    engine
        .sessions
        .events_since(caller, session, 0)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            SessionEvent::RunProgress(p) => Some(p),
            _ => None,
        })
        .collect()
}

/// The keys of the phases in the order their "done" events arrived.
fn done_order(events: &[RunProgress]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for e in events {
        for p in e.phases.iter().filter(|p| p.status == PhaseStatus::Done) {
            if !seen.contains(&p.key) {
                seen.push(p.key.clone());
            }
        }
    }
    seen
}

/// Every ASCII digit of `text` lies inside an anchor.
pub(super) fn assert_anchored(text: &str, anchors: &[Anchor]) {
    for (i, c) in text.char_indices() {
        if c.is_ascii_digit() {
            assert!(
                anchors
                    .iter()
                    .any(|a| (a.start as usize) <= i && i < a.end as usize),
                "unanchored figure at {i} in {text:?}"
            );
        }
    }
}

async fn tool_calls(engine: &Engine, caller: &Caller, tool: &str) -> i64 {
    sqlx::query_scalar("select count(*) from tool_calls where workspace_id = $1 and tool = $2")
        .bind(&caller.workspace_id)
        .bind(tool)
        .fetch_one(engine.store.pool())
        .await
        .unwrap()
}

async fn charged(engine: &Engine, caller: &Caller) -> usize {
    engine.billing.receipts(caller, 1_000).await.unwrap().len()
}

#[tokio::test]
async fn the_phases_arrive_in_order_with_what_each_found_and_an_anchored_result() {
    let (w, session, run) = started(Plan::Founder).await;
    super::drive(&w.engine, &run, None).await.unwrap();

    let events = progress(&w.engine, &w.caller, &session).await;
    // The start, then a "running" and a "done" event per phase.
    assert_eq!(events.len(), 1 + 2 * PHASES.len());
    assert!(events[0]
        .phases
        .iter()
        .all(|p| p.status == PhaseStatus::Pending));
    for (k, (key, _)) in PHASES.iter().enumerate() {
        let running = &events[1 + 2 * k];
        assert_eq!(running.phases[k].status, PhaseStatus::Running, "{key}");
        assert_eq!(running.phase, PHASES[k].1);
        let done = &events[2 + 2 * k];
        assert_eq!(done.phases[k].status, PhaseStatus::Done, "{key}");
        // What it found, never a bare counter.
        assert!(!done.phases[k].found.is_empty(), "{key} found nothing");
        assert_anchored(&done.phases[k].found, &done.phases[k].anchors);
    }
    let keys: Vec<&str> = PHASES.iter().map(|p| p.0).collect();
    assert_eq!(done_order(&events), keys);
    // The search phases report real objects.
    assert!(events[4].phases[1]
        .anchors
        .iter()
        .any(|a| a.reference.starts_with("company:")));

    let last = events.last().unwrap();
    assert_eq!(last.status, RunStatus::Finished);
    let summary = last.summary.clone().unwrap();
    assert!(summary.starts_with("Por monto, domina "), "{summary}");
    assert!(!summary.contains("[["));
    assert_anchored(&summary, &last.anchors);
    assert!(last.refs.iter().any(|r| r.starts_with("company:")));

    // The board and the chat fold the same events: a finished run card and a link.
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert_eq!(view.board.runs.len(), 1);
    assert_eq!(view.board.runs[0].status, RunStatus::Finished);
    assert_eq!(view.board.runs[0].phases.len(), PHASES.len());
    assert!(view.chat.messages.iter().any(|m| matches!(
        m,
        luna_protocol::chat::ChatMessage::Run { run_id, status: RunStatus::Finished, .. } if *run_id == run
    )));

    // research_status reads the same.
    let env = w
        .call("research_status", json!({"run_id": run}), Surface::Luna)
        .await
        .unwrap();
    assert_eq!(env.results[0].fields["status"], json!("finished"));
    assert_eq!(env.results[0].fields["summary"], json!(summary));
}

#[tokio::test]
async fn a_restart_resumes_at_the_last_checkpoint_without_repeating_finished_phases() {
    let (w, session, run) = started(Plan::Founder).await;
    super::drive(&w.engine, &run, Some(2)).await.unwrap();
    let searches = tool_calls(&w.engine, &w.caller, "market_search").await;
    let counts = tool_calls(&w.engine, &w.caller, "market_count").await;
    let receipts = charged(&w.engine, &w.caller).await;
    assert_eq!((searches, counts), (1, 1));
    assert!(receipts >= 2);
    let before = super::get(&w.engine, &w.caller, &run).await.unwrap();
    assert_eq!(before.next_phase, 2);

    // The process dies after phase 2; a new engine starts on the same database.
    let store = w.engine.store.clone();
    drop(w.engine);
    let w = World {
        engine: Engine::from_store(store),
        caller: w.caller,
    };
    let handles = super::resume_all(&w.engine, super::Takeover::All)
        .await
        .unwrap();
    assert_eq!(handles.len(), 1);
    for h in handles {
        h.await.unwrap();
    }

    let after = super::get(&w.engine, &w.caller, &run).await.unwrap();
    assert_eq!(after.status, super::RunState::Finished);
    assert_eq!(after.checkpoints.len(), PHASES.len());
    assert_eq!(after.resumes, 1);
    // The finished phases are the stored ones, and their calls did not run again.
    assert_eq!(after.checkpoints[..2], before.checkpoints[..]);
    assert_eq!(
        tool_calls(&w.engine, &w.caller, "market_search").await,
        searches
    );
    assert_eq!(
        tool_calls(&w.engine, &w.caller, "market_count").await,
        counts
    );
    let receipts_after: Vec<_> = w.engine.billing.receipts(&w.caller, 1_000).await.unwrap();
    let search_charges = receipts_after
        .iter()
        .filter(|r| r.action == "market_search" || r.action == "market_count")
        .count();
    assert_eq!(search_charges, 2);
    // Phase "proveedores" was reported done exactly once.
    let events = progress(&w.engine, &w.caller, &session).await;
    let proveedores_done = events
        .iter()
        .filter(|e| {
            e.phases[1].status == PhaseStatus::Done && e.phases[2].status != PhaseStatus::Done
        })
        .filter(|e| e.phases[2].status != PhaseStatus::Running)
        .count();
    assert_eq!(proveedores_done, 1);
    assert_eq!(
        done_order(&events),
        PHASES.iter().map(|p| p.0).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn an_interrupted_run_is_failed_and_reported_after_too_many_restarts() {
    let (w, session, run) = started(Plan::Founder).await;
    sqlx::query("update research_runs set resumes = $1 where id = $2")
        .bind(super::MAX_RESUMES)
        .bind(&run)
        .execute(w.engine.store.pool())
        .await
        .unwrap();
    let handles = super::resume_all(&w.engine, super::Takeover::All)
        .await
        .unwrap();
    assert!(handles.is_empty());
    let r = super::get(&w.engine, &w.caller, &run).await.unwrap();
    assert_eq!(r.status, super::RunState::Failed);
    let last = progress(&w.engine, &w.caller, &session)
        .await
        .pop()
        .unwrap();
    assert_eq!(last.status, RunStatus::Failed);
    assert!(last.summary.unwrap().contains("se interrumpió"));
}

#[tokio::test]
async fn cancel_stops_the_run_and_keeps_what_finished_phases_found() {
    let (w, session, run) = started(Plan::Founder).await;
    super::drive(&w.engine, &run, Some(2)).await.unwrap();
    let r = super::cancel(&w.engine, &w.caller, &run).await.unwrap();
    assert_eq!(r.status, super::RunState::Cancelled);
    let searches = tool_calls(&w.engine, &w.caller, "market_aggregate").await;
    // The driver finds it cancelled and does nothing more.
    super::drive(&w.engine, &run, None).await.unwrap();
    assert_eq!(
        tool_calls(&w.engine, &w.caller, "market_aggregate").await,
        searches
    );
    let after = super::get(&w.engine, &w.caller, &run).await.unwrap();
    assert_eq!(after.checkpoints.len(), 2);
    let last = progress(&w.engine, &w.caller, &session)
        .await
        .pop()
        .unwrap();
    assert_eq!(last.status, RunStatus::Cancelled);
    assert_eq!(last.phases[1].status, PhaseStatus::Done);
    assert!(last.phases[2..]
        .iter()
        .all(|p| p.status == PhaseStatus::Skipped));
    // Cancelling again changes nothing; another workspace cannot see it.
    assert_eq!(
        super::cancel(&w.engine, &w.caller, &run)
            .await
            .unwrap()
            .status,
        super::RunState::Cancelled
    );
    let other = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    let e = super::cancel(&w.engine, &other, &run).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn a_message_during_the_run_steers_its_next_phase() {
    let (w, session, run) = started(Plan::Founder).await;
    super::drive(&w.engine, &run, Some(2)).await.unwrap();
    let ack = crate::agent::turn::service::submit(
        &w.engine,
        Arc::new(LocalDirector),
        &w.caller,
        &session,
        "mejor enfócate en Jalisco",
        "steer-1",
    )
    .await
    .unwrap();
    assert!(ack.steering);
    assert_eq!(ack.turn_id, run);
    super::drive(&w.engine, &run, Some(1)).await.unwrap();
    let r = super::get(&w.engine, &w.caller, &run).await.unwrap();
    let phase = &r.checkpoints[2];
    assert_eq!(phase.key, "adjudicaciones");
    assert_eq!(phase.steering, vec!["mejor enfócate en Jalisco".to_owned()]);
    assert_eq!(
        phase.calls[0].args.pointer("/filters/state"),
        Some(&json!("Jalisco"))
    );
    assert!(
        phase.found.contains("Ajusté el criterio"),
        "{}",
        phase.found
    );
    // The earlier phase searched Nuevo León, as the brief said.
    assert_eq!(
        r.checkpoints[1].calls[0].args.pointer("/filters/state"),
        Some(&json!("Nuevo León"))
    );
    // The steering message is in the chat, marked as steering; no turn started.
    let turns: i64 = sqlx::query_scalar("select count(*) from turns")
        .fetch_one(w.engine.store.pool())
        .await
        .unwrap();
    assert_eq!(turns, 0);
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert!(view.chat.messages.iter().any(|m| matches!(
        m,
        luna_protocol::chat::ChatMessage::Person { steering: true, text, .. } if text == "mejor enfócate en Jalisco"
    )));
}

#[tokio::test]
async fn explorer_and_the_concurrency_limit_are_refused_with_typed_errors() {
    let (w, session) = setup(Plan::Explorer).await;
    let e = research_start(&w.engine, &w.caller, &session)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PlanLimit);
    let e = super::propose(&w.engine, &w.caller, Some(&session), BRIEF, &[])
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::PlanLimit);

    // Founder: one run at a time. Two proposals; the second acceptance is refused.
    let (w, session) = setup(Plan::Founder).await;
    let (_, first) = offer(&w.engine, &w.caller, &session).await;
    let (_, second) = offer(&w.engine, &w.caller, &session).await;
    accept(&w.engine, &w.caller, &session, &first).await;
    let e = decisions::resolve(
        &w.engine,
        &w.caller,
        &session,
        &second,
        Resolution::Accept,
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::PlanLimit);
    // And a new preview is refused too while the first runs.
    let e = research_start(&w.engine, &w.caller, &session)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PlanLimit);
    // The inference cap comes from the plan.
    let run: i64 = sqlx::query_scalar(
        "select inference_cap from research_runs where status = 'running' and workspace_id = $1",
    )
    .bind(&w.caller.workspace_id)
    .fetch_one(w.engine.store.pool())
    .await
    .unwrap();
    assert_eq!(run, 4);
}

#[tokio::test]
async fn accepting_the_card_twice_starts_exactly_one_run() {
    let (w, session) = setup(Plan::Commercial).await;
    let (pid, decision) = offer(&w.engine, &w.caller, &session).await;
    let run = accept(&w.engine, &w.caller, &session, &decision).await;
    let again = decisions::resolve(
        &w.engine,
        &w.caller,
        &session,
        &decision,
        Resolution::Accept,
        None,
    )
    .await
    .unwrap();
    assert!(again.already);
    // Even the domain call replayed (a crash between execution and the log) starts nothing.
    let replay = super::start(&w.engine, &w.caller, &pid).await.unwrap();
    assert!(replay.already);
    assert_eq!(replay.run_id, run);
    let running: i64 = sqlx::query_scalar(
        "select count(*) from research_runs where workspace_id = $1 and status = 'running'",
    )
    .bind(&w.caller.workspace_id)
    .fetch_one(w.engine.store.pool())
    .await
    .unwrap();
    assert_eq!(running, 1);
    assert_eq!(progress(&w.engine, &w.caller, &session).await.len(), 1);
}

#[tokio::test]
async fn the_local_director_turns_an_investiga_request_into_the_investigar_card() {
    let (w, session) = setup(Plan::Founder).await;
    let out = crate::agent::turn::runner::run_turn(
        &w.engine,
        &LocalDirector,
        &w.caller,
        &session,
        "turn_1",
        BRIEF,
    )
    .await
    .unwrap();
    assert!(out
        .transcript
        .iter()
        .any(|e| e.tool.name == "research_start"));
    assert!(matches!(
        out.intent,
        crate::agent::contract::intent::TurnIntent::ProponerDecision {
            decision: DecisionDraft::Investigar { .. }
        }
    ));
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert_eq!(view.board.pending.len(), 1);
    assert_eq!(view.board.pending[0].kind, DecisionKind::Investigar);
    // Nothing runs before the person accepts.
    let runs: i64 =
        sqlx::query_scalar("select count(*) from research_runs where status != 'propuesta'")
            .fetch_one(w.engine.store.pool())
            .await
            .unwrap();
    assert_eq!(runs, 0);
    let card = &view.board.pending[0];
    assert!(card.preview.len() > PHASES.len());
    let _: Value = serde_json::to_value(card).unwrap();
}

#[tokio::test]
async fn steering_past_the_inference_cap_is_reported_and_not_applied() {
    let (w, session, run) = started(Plan::Founder).await;
    super::drive(&w.engine, &run, Some(1)).await.unwrap();
    // Framing spent the run's only model step.
    sqlx::query("update research_runs set inference_cap = 1 where id = $1")
        .bind(&run)
        .execute(w.engine.store.pool())
        .await
        .unwrap();
    assert!(
        super::steer(&w.engine, &w.caller, &session, "mejor enfócate en Jalisco")
            .await
            .unwrap()
            .is_some()
    );
    super::drive(&w.engine, &run, Some(1)).await.unwrap();
    let r = super::get(&w.engine, &w.caller, &run).await.unwrap();
    assert_eq!(r.inference_used, 1);
    let phase = &r.checkpoints[1];
    assert!(
        phase.found.contains("tope de inferencia"),
        "{}",
        phase.found
    );
    assert_eq!(
        phase.calls[0].args.pointer("/filters/state"),
        Some(&json!("Nuevo León"))
    );
}

/// Two app instances on one database: while instance A holds a run's lease, B neither
/// takes it over nor runs a phase of it; once A's lease expired (A died), B takes it
/// over and finishes it, without repeating A's finished phases.
#[tokio::test]
async fn a_run_is_driven_by_one_instance_and_taken_over_only_when_its_lease_expired() {
    let (World { engine: a, caller }, _session, run) = started(Plan::Founder).await;
    super::drive(&a, &run, Some(1)).await.unwrap();
    let b = Engine::from_store(
        crate::base::store::Store::open(a.store.url())
            .await
            .unwrap(),
    );
    b.research.set_manual(true);

    assert!(super::resume_all(&b, super::Takeover::Expired)
        .await
        .unwrap()
        .is_empty());
    super::drive(&b, &run, Some(1)).await.unwrap();
    let held = super::get(&b, &caller, &run).await.unwrap();
    assert_eq!(held.next_phase, 1, "B ran a phase of a run A drives");

    // A dies: its lease runs out.
    sqlx::query("update research_runs set lease_until = 0 where id = $1")
        .bind(&run)
        .execute(b.store.pool())
        .await
        .unwrap();
    let handles = super::resume_all(&b, super::Takeover::Expired)
        .await
        .unwrap();
    assert_eq!(handles.len(), 1);
    for h in handles {
        h.await.unwrap();
    }
    let done = super::get(&b, &caller, &run).await.unwrap();
    assert_eq!(done.status, super::RunState::Finished);
    assert_eq!(done.checkpoints.len(), PHASES.len());
    assert_eq!(
        tool_calls(&b, &caller, "market_count").await,
        1,
        "phase 1 ran once"
    );
    // A, still alive in a test, can no longer drive it.
    super::drive(&a, &run, None).await.unwrap();
}
