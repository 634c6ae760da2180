//! Multi-turn tests of the session memory: what was said or inferred in one turn is
//! known in the next ones (the question governor refuses to ask it again), and a
//! refinement changes only the field it names — on the scripted model and on the
//! local director.

use luna_protocol::account::{Plan, Role};
use serde_json::{json, Value};

use super::runner::{run_turn, TurnOutcome};
use crate::agent::contract::gateway::{ModelStep, ScriptedModel, ToolCall};
use crate::agent::contract::intent::{FactField, FactStatus, Pregunta, TurnIntent, TurnOutput};
use crate::agent::director::planner::LocalDirector;
use crate::testkit::World;

async fn setup() -> (World, String) {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    w.engine.market.ensure_demo().await.unwrap();
    let session = w.engine.sessions.create(&w.caller).await.unwrap();
    (w, session.id)
}

fn answer(text: &str) -> ModelStep {
    ModelStep::Final(TurnOutput {
        intent: TurnIntent::Responder {},
        narracion: text.into(),
    })
}

fn ask_state() -> ModelStep {
    ModelStep::Final(TurnOutput {
        intent: TurnIntent::Encuadre {
            criterio: "empaque".into(),
            pregunta: Some(Pregunta {
                texto: "¿En qué estado?".into(),
                campo: FactField::Estado,
                opciones: None,
            }),
        },
        narracion: "¿En qué estado buscas?".into(),
    })
}

/// The arguments of the turn's first `market_search`.
fn search_args(out: &TurnOutcome) -> Value {
    out.transcript
        .iter()
        .find(|e| e.tool.name == "market_search")
        .map(|e| e.tool.args.clone())
        .unwrap_or_else(|| panic!("no search in {:?}", out.transcript))
}

#[tokio::test]
async fn a_state_said_in_turn_one_is_not_asked_in_turn_three() {
    let (w, session) = setup().await;
    let turn = |id: &'static str, message: &'static str, model: ScriptedModel| {
        let (w, session) = (&w, &session);
        async move {
            run_turn(&w.engine, &model, &w.caller, session, id, message)
                .await
                .unwrap()
        }
    };
    turn(
        "t1",
        "fabricantes de empaque en Jalisco",
        ScriptedModel::new([answer("Entendido.")]),
    )
    .await;
    turn("t2", "gracias", ScriptedModel::new([answer("De nada.")])).await;
    let third = turn(
        "t3",
        "¿cuáles le venden al IMSS?",
        ScriptedModel::new([ask_state(), ask_state()]),
    )
    .await;
    assert!(
        third.repaired && third.intent == TurnIntent::Responder {},
        "a state said two turns ago must not be asked again: {:?}",
        third.intent
    );
    let facts = &third.trajectory.facts;
    assert_eq!(
        facts.status(FactField::Estado),
        &FactStatus::Dicho {
            valor: "Jalisco".into(),
            turno: 1
        }
    );
    assert_eq!(
        facts.status(FactField::Comprador),
        &FactStatus::Dicho {
            valor: "IMSS".into(),
            turno: 3
        }
    );
}

#[tokio::test]
async fn what_the_model_searched_for_is_remembered_as_inferred() {
    let (w, session) = setup().await;
    // Nobody said a state; the model searched Jalisco for «lo de siempre».
    let model = ScriptedModel::new([
        ModelStep::Tools(vec![ToolCall {
            name: "market_search".into(),
            args: json!({"kind": "suppliers", "filters": {"giro": "empaque", "state": "Jalisco"}, "limit": 5}),
        }]),
        answer("Busqué empaque en Jalisco."),
    ]);
    run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "t1",
        "lo de siempre",
    )
    .await
    .unwrap();
    let model = ScriptedModel::new([ask_state(), ask_state()]);
    let second = run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "t2",
        "¿y cuántos son?",
    )
    .await
    .unwrap();
    assert!(second.repaired, "the inferred state is known");
    assert_eq!(
        second.trajectory.facts.status(FactField::Estado),
        &FactStatus::Inferido {
            valor: "Jalisco".into(),
            turno: 1
        }
    );
}

#[tokio::test]
async fn on_the_local_director_a_refinement_changes_only_the_named_field() {
    let (w, session) = setup().await;
    let first = run_turn(
        &w.engine,
        &LocalDirector,
        &w.caller,
        &session,
        "t1",
        "30 fabricantes de empaque en Jalisco que ya le vendieron a gobierno",
    )
    .await
    .unwrap();
    let f = &search_args(&first)["filters"];
    assert_eq!(
        (f["giro"].as_str(), f["state"].as_str()),
        (Some("empaque"), Some("Jalisco"))
    );

    let second = run_turn(
        &w.engine,
        &LocalDirector,
        &w.caller,
        &session,
        "t2",
        "ahora en Nuevo León",
    )
    .await
    .unwrap();
    let args = search_args(&second);
    assert_eq!(args["filters"]["state"], "Nuevo León", "{args}");
    assert_eq!(args["filters"]["giro"], "empaque", "{args}");
    assert_eq!(args["filters"]["has_awards"], true, "{args}");
    assert_eq!(args["limit"], 30, "{args}");
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert!(!view.board.selection.is_empty());

    // Turn 3 names only a quantity: nothing is asked, the rest is kept.
    let third = run_turn(
        &w.engine,
        &LocalDirector,
        &w.caller,
        &session,
        "t3",
        "mejor que sean 12",
    )
    .await
    .unwrap();
    assert!(
        !matches!(
            third.intent,
            TurnIntent::Encuadre {
                pregunta: Some(_),
                ..
            }
        ),
        "{:?}",
        third.intent
    );
    let args = search_args(&third);
    assert_eq!(args["filters"]["state"], "Nuevo León", "{args}");
    assert_eq!(args["filters"]["giro"], "empaque", "{args}");
    assert_eq!(args["limit"], 12, "{args}");
    let facts = &third.trajectory.facts;
    assert_eq!(
        facts.status(FactField::Giro),
        &FactStatus::Dicho {
            valor: "empaque y envases".into(),
            turno: 1
        }
    );
    // Small talk afterwards changes nothing on the board.
    let before = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view
        .board
        .selection;
    run_turn(
        &w.engine,
        &LocalDirector,
        &w.caller,
        &session,
        "t4",
        "gracias",
    )
    .await
    .unwrap();
    let after = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view
        .board
        .selection;
    assert_eq!(before, after);
}

/// The workspace's commercial profile frames every turn: the model receives it, its
/// territory is a `perfil` fact, so a question about the state is refused, and what
/// the person says in the message wins over the profile.
#[tokio::test]
async fn the_commercial_profile_is_known_and_never_asked() {
    let (
        World {
            engine,
            caller: member,
        },
        session,
    ) = setup().await;
    let admin = crate::accounts::Caller {
        role: Role::Admin,
        ..member.clone()
    };
    let profile = luna_protocol::session::CommercialProfile {
        oferta: "Empaque corrugado".into(),
        estados: vec!["Jalisco".into()],
        ..Default::default()
    };
    // A member may not change it; an admin may.
    assert!(
        crate::accounts::profile::set(&engine.store, &member, &profile)
            .await
            .is_err()
    );
    crate::accounts::profile::set(&engine.store, &admin, &profile)
        .await
        .unwrap();

    let model = ScriptedModel::new([ask_state(), ask_state()]);
    let out = run_turn(
        &engine,
        &model,
        &member,
        &session,
        "t1",
        "busco fabricantes de empaque",
    )
    .await
    .unwrap();
    assert!(
        out.repaired && out.intent == TurnIntent::Responder {},
        "the territory is in the profile: {:?}",
        out.intent
    );
    assert_eq!(
        out.trajectory.facts.status(FactField::Estado),
        &FactStatus::Perfil {
            valor: "Jalisco".into()
        }
    );
    let seen = model.seen();
    let given = seen[0]
        .turn
        .profile
        .as_ref()
        .expect("the model gets the profile");
    assert_eq!(given.oferta, "Empaque corrugado");

    // Said in the message, the state is the person's, not the profile's.
    let out = run_turn(
        &engine,
        &ScriptedModel::new([answer("Va.")]),
        &member,
        &session,
        "t2",
        "ahora en Nuevo León",
    )
    .await
    .unwrap();
    assert_eq!(
        out.trajectory.facts.status(FactField::Estado),
        &FactStatus::Dicho {
            valor: "Nuevo León".into(),
            turno: 2
        }
    );
}

/// The model sees what the market data covers — rows and dates per kind, the states
/// with no data, the coverage tool's summary — and a finished import shows in the next
/// turn's input, not a minute later.
#[tokio::test]
async fn the_turn_input_carries_the_coverage_and_an_import_refreshes_it() {
    let (w, session) = setup().await;
    let model = ScriptedModel::new([answer("Listo.")]);
    run_turn(
        &w.engine,
        &model,
        &w.caller,
        &session,
        "c1",
        "¿qué datos tienes?",
    )
    .await
    .unwrap();
    let seen = model.seen();
    let coverage = seen[0]
        .turn
        .coverage
        .clone()
        .expect("a chat turn carries the coverage");
    let full = w.engine.market.coverage().await.unwrap();
    assert_eq!(coverage.summary, full.summary);
    let suppliers = coverage
        .kinds
        .iter()
        .find(|k| k.kind == "suppliers")
        .expect("suppliers are a covered kind");
    assert!(suppliers.rows > 0, "{coverage:?}");
    assert_eq!(coverage.states_without_data, full.states_without_data);
    // Nothing internal: no import paths or source keys in what the model reads.
    let shown = serde_json::to_string(&seen[0].turn).unwrap();
    assert!(
        !shown.contains("source_path") && !shown.contains("sha256"),
        "{shown}"
    );

    // A new import is seen by the next turn.
    crate::market::import::log_import(&w.engine.store, "prueba", "Prueba", "generator", 0, 0)
        .await
        .unwrap();
    let before = w.engine.market.coverage_recent().await.unwrap();
    assert!(before.summary.contains("Prueba"), "{}", before.summary);
}
