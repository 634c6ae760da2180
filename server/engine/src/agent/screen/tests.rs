use luna_protocol::account::{Plan, Role};
use serde_json::{json, Map};

use super::*;
use crate::crm::model::Actor;
use crate::crm::records::NewRecord;
use crate::testkit::World;

fn award(buyer: &str, amount: Option<f64>, currency: &str, date: Option<&str>) -> AwardRow {
    AwardRow {
        r#ref: "record:award:1".into(),
        ref_label: "Adjudicación".into(),
        id: 1,
        ocid: None,
        supplier_ref: "company:X".into(),
        supplier_id: "X".into(),
        supplier_name: "X".into(),
        buyer: buyer.into(),
        buyer_name: None,
        title: "Cajas".into(),
        amount,
        currency: currency.into(),
        date: date.map(str::to_owned),
        procedure: None,
        procedure_label: None,
        state: None,
        scian: None,
        source: "demo".into(),
        evidence: vec![],
    }
}

#[test]
fn awards_sum_by_year_oldest_first_in_mxn_only() {
    let awards = [
        award("IMSS", Some(100.0), "MXN", Some("2024-03-01")),
        award("IMSS", Some(50.0), "MXN", Some("2024-09-01")),
        award("ISSSTE", Some(10.0), "USD", Some("2023-01-01")),
        award("ISSSTE", Some(7.0), "MXN", None),
    ];
    let years = by_year(&awards);
    assert_eq!(years.len(), 2);
    assert_eq!(
        (years[0].label.as_str(), years[0].amount_mxn, years[0].count),
        ("2023", 0.0, 1)
    );
    assert_eq!(
        (years[1].label.as_str(), years[1].amount_mxn, years[1].count),
        ("2024", 150.0, 2)
    );
}

#[test]
fn awards_sum_by_buyer_largest_first_with_the_tail_as_otros() {
    let awards: Vec<AwardRow> = (0..9)
        .map(|i| {
            award(
                &format!("B{i}"),
                Some(f64::from(i + 1)),
                "MXN",
                Some("2025-01-01"),
            )
        })
        .collect();
    let buyers = by_buyer(&awards, 3);
    let labels: Vec<&str> = buyers.iter().map(|b| b.label.as_str()).collect();
    assert_eq!(labels, ["B8", "B7", "B6", "Otros"]);
    assert_eq!(buyers[3].amount_mxn, 21.0);
    assert_eq!(buyers[3].count, 6);
}

#[test]
fn history_rows_and_undo_receipts_read_in_spanish() {
    assert_eq!(
        what(
            "stage",
            &json!({"stage": {"from": "Nuevo", "to": "Contactado"}})
        )
        .unwrap(),
        "Pasó de «Nuevo» a «Contactado»"
    );
    assert_eq!(
        what("update", &json!({"fields.a": {}, "fields.b": {}})).unwrap(),
        "Actualizó 2 datos"
    );
    assert_eq!(
        undo_summary(1, 0, 0),
        "Deshecho: 1 registro quedó como estaba."
    );
    assert_eq!(
        undo_summary(0, 2, 1),
        "Deshecho: 2 registros salieron del CRM, 1 seguimiento cancelado."
    );
}

async fn setup() -> (World, String) {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    w.engine.market.ensure_demo().await.unwrap();
    crate::crm::demo::seed_workspace(&w.engine.store, &w.caller.workspace_id)
        .await
        .unwrap();
    let supplier: String = sqlx::query_scalar(
        "select supplier_id from mk_awards where currency = 'MXN' group by supplier_id
         having count(*) >= 3 order by supplier_id limit 1",
    )
    .fetch_one(w.engine.store.pool())
    .await
    .unwrap();
    (w, supplier)
}

async fn demo_collection(engine: &Engine, caller: &Caller) -> String {
    sqlx::query_scalar("select id from crm_collections where workspace_id = $1 and name = $2")
        .bind(&caller.workspace_id)
        .bind(crate::crm::demo::DEMO_COLLECTION)
        .fetch_one(engine.store.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn the_drawer_file_has_the_awards_with_their_chart_and_the_crm_history_once_saved() {
    let (w, supplier) = setup().await;
    let company = format!("company:{supplier}");
    let file = company_file(&w.engine, &w.caller, &company).await.unwrap();
    assert_eq!(file.reference, company);
    assert!(file.awards.len() >= 3, "{file:?}");
    let listed: f64 = file.awards.iter().filter_map(|a| a.amount_mxn).sum();
    let charted: f64 = file.by_year.iter().map(|b| b.amount_mxn).sum();
    assert!((listed - charted).abs() < 0.01);
    assert!(file.crm.is_empty());

    // Saved and moved: the drawer shows the record's timeline, newest first.
    let collection = demo_collection(&w.engine, &w.caller).await;
    let mut fields = Map::new();
    fields.insert("empresa".into(), json!(file.name));
    let added = records::add(
        &w.engine.store,
        &Actor::new(&w.caller, Surface::Ui),
        NewRecord {
            collection_id: collection.clone(),
            entity_id: Some(supplier.clone()),
            stage: None,
            fields,
        },
        false,
    )
    .await
    .unwrap();
    let moved = move_record(
        &w.engine,
        &w.caller,
        None,
        &added.record.ref_(),
        1,
        "Contactado",
    )
    .await
    .unwrap();
    assert_eq!((moved.stage.as_str(), moved.version), ("Contactado", 2));
    let file = company_file(&w.engine, &w.caller, &company).await.unwrap();
    assert_eq!(file.crm.len(), 1);
    assert_eq!(file.crm[0].stage, "Contactado");
    assert_eq!(
        file.crm[0].entries[0].what,
        "Pasó de «Nuevo» a «Contactado»"
    );

    // Another workspace sees the market data but not this CRM history.
    let other = w
        .other_workspace(Plan::Founder, Role::Member)
        .await
        .unwrap();
    assert!(company_file(&w.engine, &other, &company)
        .await
        .unwrap()
        .crm
        .is_empty());
}

#[tokio::test]
async fn a_board_move_persists_and_undo_puts_it_back_or_refuses_plainly() {
    let (w, supplier) = setup().await;
    let collection = demo_collection(&w.engine, &w.caller).await;
    let mut fields = Map::new();
    fields.insert("empresa".into(), json!("Cajas del Norte"));
    records::add(
        &w.engine.store,
        &Actor::new(&w.caller, Surface::Ui),
        NewRecord {
            collection_id: collection.clone(),
            entity_id: Some(supplier),
            stage: None,
            fields,
        },
        false,
    )
    .await
    .unwrap();
    let board = collection_board(&w.engine, &w.caller, &collection)
        .await
        .unwrap();
    assert_eq!(board.stages[0], "Nuevo");
    assert_eq!(board.in_stage("Nuevo").count(), 1);
    let card = &board.records[0];
    assert!(board.columns.iter().all(|c| c.key != "empresa"));

    let moved = move_record(
        &w.engine,
        &w.caller,
        None,
        &card.record_ref,
        card.version,
        "Propuesta",
    )
    .await
    .unwrap();
    let board = collection_board(&w.engine, &w.caller, &collection)
        .await
        .unwrap();
    assert_eq!(board.in_stage("Propuesta").count(), 1);

    // A stale version is a conflict, not a silent overwrite.
    let stale = move_record(
        &w.engine,
        &w.caller,
        None,
        &card.record_ref,
        card.version,
        "Ganado",
    )
    .await;
    assert!(matches!(stale, Err(EngineError::Typed(b)) if b.code == ErrorCode::VersionConflict));

    let token = moved.undo_token.unwrap();
    let receipt = undo(&w.engine, &w.caller, None, &token).await.unwrap();
    assert_eq!(receipt.restored, 1);
    let board = collection_board(&w.engine, &w.caller, &collection)
        .await
        .unwrap();
    assert_eq!(board.in_stage("Nuevo").count(), 1);
    assert!(undo(&w.engine, &w.caller, None, &token).await.is_err());

    // Undoing a move that was followed by another change is VERSION_CONFLICT in Spanish.
    let card = &board.records[0];
    let first = move_record(
        &w.engine,
        &w.caller,
        None,
        &card.record_ref,
        card.version,
        "Contactado",
    )
    .await
    .unwrap();
    move_record(
        &w.engine,
        &w.caller,
        None,
        &card.record_ref,
        first.version,
        "Ganado",
    )
    .await
    .unwrap();
    let err = undo(&w.engine, &w.caller, None, &first.undo_token.unwrap()).await;
    match err {
        Err(EngineError::Typed(b)) => {
            assert_eq!(b.code, ErrorCode::VersionConflict);
            assert!(b.message.contains("No se puede deshacer"));
        }
        other => panic!("{other:?}"),
    }

    // Another workspace cannot read the collection.
    let other = w
        .other_workspace(Plan::Founder, Role::Member)
        .await
        .unwrap();
    assert!(collection_board(&w.engine, &other, &collection)
        .await
        .is_err());
}

#[tokio::test]
async fn quitar_removes_one_company_from_the_session_selection() {
    let (w, _) = setup().await;
    let session = w.engine.sessions.create(&w.caller).await.unwrap().id;
    let ids: Vec<String> = sqlx::query_scalar("select id from mk_suppliers order by id limit 3")
        .fetch_all(w.engine.store.pool())
        .await
        .unwrap();
    let items: Vec<Value> = ids
        .iter()
        .map(|id| json!({"ref": format!("company:{id}"), "why": "Vende empaque a gobierno"}))
        .collect();
    call(
        &w.engine,
        &w.caller,
        "selection_update",
        json!({"op": "add", "items": items}),
        Some(&session),
    )
    .await
    .unwrap();
    let left = remove_from_selection(
        &w.engine,
        &w.caller,
        &session,
        &format!("company:{}", ids[1]),
    )
    .await
    .unwrap();
    assert_eq!(left, 2);
    let view = w
        .engine
        .sessions
        .snapshot_at_latest(&w.caller, &session)
        .await
        .unwrap()
        .view;
    assert!(view
        .board
        .selection
        .iter()
        .all(|s| s.reference != format!("company:{}", ids[1])));

    // Someone else's session is not reachable.
    let other = w
        .other_workspace(Plan::Founder, Role::Member)
        .await
        .unwrap();
    assert!(
        remove_from_selection(&w.engine, &other, &session, "company:x")
            .await
            .is_err()
    );
}

#[tokio::test]
async fn from_a_session_moves_update_the_saved_counts_and_deshacer_is_in_the_log() {
    use crate::agent::contract::gateway::{ModelStep, ScriptedModel, ToolCall};
    use crate::agent::contract::intent::{TurnIntent, TurnOutput};
    use luna_protocol::chat::ChatMessage;
    use luna_protocol::decision::Resolution;

    let (w, _) = setup().await;
    let session = w.engine.sessions.create(&w.caller).await.unwrap().id;
    let director = crate::agent::director::planner::LocalDirector;
    crate::agent::turn::runner::run_turn(
        &w.engine,
        &director,
        &w.caller,
        &session,
        "t1",
        "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos.",
    )
    .await
    .unwrap();
    let save = w
        .engine
        .sessions
        .view_of(&session)
        .await
        .unwrap()
        .board
        .pending[0]
        .id
        .clone();
    crate::agent::decisions::resolve(
        &w.engine,
        &w.caller,
        &session,
        &save,
        Resolution::Accept,
        None,
    )
    .await
    .unwrap();
    let saved = || async {
        w.engine
            .sessions
            .view_of(&session)
            .await
            .unwrap()
            .board
            .saved
            .unwrap()
    };
    let count = |s: &luna_protocol::board::SavedCollection, stage: &str| {
        s.stages
            .iter()
            .find(|c| c.stage == stage)
            .map_or(0, |c| c.count)
    };
    let before = saved().await;
    let board = collection_board(&w.engine, &w.caller, &before.collection_id)
        .await
        .unwrap();
    let (first, second) = (board.stages[0].clone(), board.stages[1].clone());
    let card = board.in_stage(&first).next().unwrap().clone();

    // The person drags a card: the board's counts follow, for every tab.
    move_record(
        &w.engine,
        &w.caller,
        Some(&session),
        &card.record_ref,
        card.version,
        &second,
    )
    .await
    .unwrap();
    let after = saved().await;
    assert_eq!(count(&after, &first), count(&before, &first) - 1);
    assert_eq!(count(&after, &second), count(&before, &second) + 1);
    assert_eq!(after.total, before.total);

    // Luna moves it on: a tool line with "deshacer".
    let model = ScriptedModel::new([
        ModelStep::Tools(vec![ToolCall {
            name: "crm_record".into(),
            args: json!({"op": "update", "record_id": card.record_ref, "version": card.version + 1, "stage": first}),
        }]),
        ModelStep::Final(TurnOutput {
            intent: TurnIntent::Responder {},
            narracion: "Listo, la regresé.".into(),
        }),
    ]);
    crate::agent::turn::runner::run_turn(&w.engine, &model, &w.caller, &session, "t2", "regrésala")
        .await
        .unwrap();
    let view = w.engine.sessions.view_of(&session).await.unwrap();
    let token = view
        .chat
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(l) if l.turn_id == "t2" => l.undo_token.clone(),
            _ => None,
        })
        .expect("Luna's write left a deshacer");
    assert_eq!(
        count(&view.board.saved.unwrap(), &first),
        count(&before, &first)
    );

    // "deshacer" from the chat: the line says so in the log, and the counts follow.
    let receipt = undo(&w.engine, &w.caller, Some(&session), &token)
        .await
        .unwrap();
    let view = w.engine.sessions.view_of(&session).await.unwrap();
    let line = view
        .chat
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(l) if l.undo_token.as_deref() == Some(token.as_str()) => Some(l),
            _ => None,
        })
        .unwrap();
    assert_eq!(line.undone.as_deref(), Some(receipt.summary.as_str()));
    assert_eq!(
        count(view.board.saved.as_ref().unwrap(), &second),
        count(&after, &second)
    );

    // Another workspace cannot write into this session's log.
    let other = w
        .other_workspace(Plan::Founder, Role::Member)
        .await
        .unwrap();
    let err = move_record(
        &w.engine,
        &other,
        Some(&session),
        &card.record_ref,
        1,
        &first,
    )
    .await;
    assert!(matches!(err, Err(EngineError::Typed(b)) if b.code == ErrorCode::NotFound));
}

/// A tool output whose field drifted from what the screen reads is an error naming the
/// field, not an empty drawer; an absent field is the type's default.
#[test]
fn a_drifted_field_is_an_error_not_an_empty_drawer() {
    let row = ResultRow::new("company:x", "X")
        .with("awards", "no es una lista")
        .with("awards_count", 3);
    let e = field::<Vec<AwardRow>>(&row, "awards").unwrap_err();
    assert!(format!("{e:?}").contains("awards"), "{e:?}");
    assert_eq!(field::<i64>(&row, "awards_count").unwrap(), 3);
    assert!(field::<Vec<RiskRow>>(&row, "marks").unwrap().is_empty());
}

/// A history row whose stage change drifted from the type the CRM writes (a number
/// where the stage name goes) is an error the drawer shows, never a vague line.
#[test]
fn a_drifted_stage_change_is_not_read_as_a_vague_line() {
    let drifted = json!({"stage": {"from": "Nuevo", "to": 3}});
    assert_eq!(
        what("stage", &drifted).unwrap_err().code(),
        luna_protocol::error::ErrorCode::Internal
    );
    // What every CRM write stores reads back through the same type.
    let written = json!({ "stage": StageChange::json(None, "Nuevo") });
    assert_eq!(what("stage", &written).unwrap(), "Pasó a «Nuevo»");
}
