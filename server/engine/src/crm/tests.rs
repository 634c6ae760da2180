//! CRM and Empresas tool tests, driven through the registry pipeline so every call is
//! validated, authorised and recorded like a real one.

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;
use luna_protocol::tool::ResultStatus;
use serde_json::{json, Value};

use crate::registry::Surface;
use crate::testkit::World;
use crate::{testkit, Engine};

use super::{collections, demo, directory, records, CollectionStatus};
pub(super) use crate::testkit::{call, err};

pub(super) async fn setup() -> (World, String) {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let c = collections::create(
        w.engine.crm.store(),
        &w.caller.workspace_id,
        demo::prospeccion(),
    )
    .await
    .unwrap();
    (w, format!("collection:{}", c.id))
}

pub(super) async fn add(w: &World, col: &str, name: &str, entity: &str) -> (String, Value) {
    let env = w.ok("crm_record",
        json!({"op": "add", "collection_id": col, "entity_id": entity, "fields": {"empresa": name, "estado": "Jalisco"}}),
    )
    .await;
    let row = &env.results[0];
    (row.ref_.clone(), serde_json::to_value(row).unwrap())
}

async fn insert_supplier(engine: &Engine, id: &str, name: &str) {
    sqlx::query(
        "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, municipality, scian, size_band, website, source, created_at)
         values ($1, $2, 1, $3, 14, 'Guadalajara', '484', 'mediana', 'https://www.ejemplo.mx', 'generator', 0)",
    )
    .bind(id)
    .bind(id)
    .bind(name)
    .execute(engine.store.pool())
    .await
    .unwrap();
}

#[tokio::test]
async fn add_returns_undo_token_and_drops_locked_fields() {
    let (w, col) = setup().await;
    let env = w.ok("crm_record",
        json!({"op": "add", "collection_id": col, "entity_id": "AAA010101AAA",
               "fields": {"empresa": "Alfa", "rfc": "XXX", "fuente": "yo", "monto_estimado": 1200}}),
    )
    .await;
    let row = &env.results[0];
    assert!(row.ref_.starts_with("record:rec_"));
    assert_eq!(row.fields["stage"], json!("Nuevo"));
    assert_eq!(row.fields["entity_id"], json!("AAA010101AAA"));
    assert_eq!(row.fields["dropped_fields"], json!(["fuente", "rfc"]));
    assert!(row.fields["fields"].get("rfc").is_none());
    assert_eq!(row.fields["fields"]["monto_estimado"], json!(1200));
    assert!(row.fields["undo_token"]
        .as_str()
        .unwrap()
        .starts_with("undo_"));
    // entity_id inside fields, a wrong type and an unknown field are typed errors.
    let e = w.err("crm_record",
        json!({"op": "add", "collection_id": col, "fields": {"empresa": "B", "entity_id": "X"}}),
    )
    .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.message.contains("nivel superior"));
    let e = w.err("crm_record",
        json!({"op": "add", "collection_id": col, "fields": {"empresa": "B", "monto_estimado": "mucho"}})).await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = w
        .err(
            "crm_record",
            json!({"op": "add", "collection_id": col, "fields": {"empresa": "B", "color": "azul"}}),
        )
        .await;
    assert!(e.allowed_values.unwrap().contains(&"giro".to_owned()));
    // The same entity twice in one collection is a conflict.
    let e = w.err("crm_record",
        json!({"op": "add", "collection_id": col, "entity_id": "AAA010101AAA", "fields": {"empresa": "Alfa"}})).await;
    assert_eq!(e.code, ErrorCode::Conflict);
}

#[tokio::test]
async fn stages_are_validated_by_membership_and_versions_guard_concurrent_edits() {
    let (w, col) = setup().await;
    let (rec, _) = add(&w, &col, "Alfa", "E1").await;
    // Nuevo → Ganado directly: membership, not transition.
    let env = w
        .ok(
            "crm_record",
            json!({"op": "update", "record_id": rec, "version": 1, "stage": "Ganado"}),
        )
        .await;
    assert_eq!(env.results[0].fields["version"], json!(2));
    let e = w
        .err(
            "crm_record",
            json!({"op": "update", "record_id": rec, "version": 2, "stage": "Cerrado"}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(e.allowed_values.unwrap().len(), 6);
    // A stale version is VERSION_CONFLICT and changes nothing.
    let e = w
        .err(
            "crm_record",
            json!({"op": "update", "record_id": rec, "version": 1, "stage": "Perdido"}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::VersionConflict);
    // update without version is rejected.
    let e = w
        .err(
            "crm_record",
            json!({"op": "update", "record_id": rec, "stage": "Perdido"}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    // Writing only a locked field drops it and changes nothing.
    let env = w
        .ok(
            "crm_record",
            json!({"op": "update", "record_id": rec, "version": 2, "fields": {"rfc": "ZZZ"}}),
        )
        .await;
    let row = &env.results[0];
    assert_eq!(row.fields["dropped_fields"], json!(["rfc"]));
    assert_eq!(row.fields["version"], json!(2));
    assert_eq!(row.fields["undo_token"], Value::Null);
}

#[tokio::test]
async fn undo_restores_exactly_and_fails_cleanly_after_a_later_change() {
    let (w, col) = setup().await;
    let (rec, _) = add(&w, &col, "Alfa", "E1").await;
    let before = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "query"}),
        )
        .await
        .results[0]
        .clone();
    let env = w.ok("crm_record",
        json!({"op": "update", "record_id": rec, "version": 1, "stage": "Propuesta", "fields": {"giro": "Empaques", "estado": null}})).await;
    let token = env.results[0].fields["undo_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = crate::tools::crm::undo(&w.engine, &w.caller, &token)
        .await
        .unwrap();
    assert_eq!(out.restored.len(), 1);
    let after = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "query"}),
        )
        .await
        .results[0]
        .clone();
    assert_eq!(after.fields["stage"], before.fields["stage"]);
    assert_eq!(after.fields["fields"], before.fields["fields"]);
    assert_eq!(after.fields["version"], json!(3));
    // A token is used once.
    assert_eq!(
        crate::tools::crm::undo(&w.engine, &w.caller, &token)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::Conflict
    );

    // Undo after a later change: VERSION_CONFLICT, nothing restored.
    let env = w
        .ok(
            "crm_record",
            json!({"op": "update", "record_id": rec, "version": 3, "stage": "Contactado"}),
        )
        .await;
    let token = env.results[0].fields["undo_token"]
        .as_str()
        .unwrap()
        .to_owned();
    w.ok(
        "crm_record",
        json!({"op": "update", "record_id": rec, "version": 4, "stage": "Ganado"}),
    )
    .await;
    let e = crate::tools::crm::undo(&w.engine, &w.caller, &token)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::VersionConflict);
    let now = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "query"}),
        )
        .await;
    assert_eq!(now.results[0].fields["stage"], json!("Ganado"));

    // Undoing an add removes the record.
    let env = w
        .ok(
            "crm_record",
            json!({"op": "add", "collection_id": col, "fields": {"empresa": "Beta"}}),
        )
        .await;
    let token = env.results[0].fields["undo_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = w
        .engine
        .crm
        .undo(&w.caller, Surface::Luna, &token)
        .await
        .unwrap();
    assert_eq!(out.removed.len(), 1);
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate"}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(1));
}

#[tokio::test]
async fn history_says_who_and_from_which_surface_and_activities_undo() {
    let (w, col) = setup().await;
    let (rec, _) = add(&w, &col, "Alfa", "E1").await;
    w.call(
        "crm_record",
        json!({"op": "update", "record_id": rec, "version": 1, "stage": "Contactado"}),
        Surface::Luna,
    )
    .await
    .unwrap();
    let env = w.ok("crm_record",
        json!({"op": "schedule_activity", "record_id": rec, "due_at": "2026-10-05", "reason": "Llamar para agendar demo"})).await;
    let token = env.results[0].fields["undo_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let e = w
        .err(
            "crm_record",
            json!({"op": "schedule_activity", "record_id": rec, "due_at": "mañana", "reason": "x"}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let h = w
        .ok("crm_record", json!({"op": "history", "record_id": rec}))
        .await;
    assert_eq!(
        h.results[0].fields["open_activities"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let entries: Vec<_> = h.results[1..]
        .iter()
        .map(|r| (r.fields["action"].clone(), r.fields["surface"].clone()))
        .collect();
    assert_eq!(
        entries,
        vec![
            (json!("activity"), json!("mcp")),
            (json!("stage"), json!("luna")),
            (json!("add"), json!("mcp")),
        ]
    );
    assert_eq!(h.results[1].fields["by"], json!("Ana Prueba"));
    crate::tools::crm::undo(&w.engine, &w.caller, &token)
        .await
        .unwrap();
    let h = w
        .ok("crm_record", json!({"op": "history", "record_id": rec}))
        .await;
    assert!(h.results[0].fields["open_activities"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn an_archived_collection_is_read_only() {
    let (w, col) = setup().await;
    let (rec, _) = add(&w, &col, "Alfa", "E1").await;
    collections::set_status(
        w.engine.crm.store(),
        &w.caller.workspace_id,
        &col,
        CollectionStatus::Archived,
    )
    .await
    .unwrap();
    for args in [
        json!({"op": "add", "collection_id": col, "fields": {"empresa": "B"}}),
        json!({"op": "update", "record_id": rec, "version": 1, "stage": "Ganado"}),
        json!({"op": "schedule_activity", "record_id": rec, "due_at": "2026-10-05", "reason": "x"}),
    ] {
        assert_eq!(
            w.err("crm_record", args).await.code,
            ErrorCode::ProtectedResource
        );
    }
    let r = w
        .ui(
            "crm_bulk_update",
            json!({"collection_id": col, "changes": [{"record_id": rec, "stage": "Ganado"}]}),
        )
        .await;
    assert_eq!(r.unwrap_err().code, ErrorCode::ProtectedResource);
    // Luna-only tools are not reachable over MCP.
    let e = w
        .err(
            "crm_bulk_update",
            json!({"collection_id": col, "changes": [{"record_id": rec, "stage": "Ganado"}]}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::UnknownTool);
    // Reading still works.
    let env = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate"}),
        )
        .await;
    assert_eq!(env.results[0].fields["total"], json!(1));
    // crm_collections lists active ones only.
    let env = w
        .call("crm_collections", json!({}), Surface::Luna)
        .await
        .unwrap();
    assert!(env.results.is_empty());
}

#[tokio::test]
async fn another_workspace_sees_not_found() {
    let (w, col) = setup().await;
    let (rec, _) = add(&w, &col, "Alfa", "E1").await;
    let env = w
        .ok(
            "crm_record",
            json!({"op": "update", "record_id": rec, "version": 1, "stage": "Ganado"}),
        )
        .await;
    let token = env.results[0].fields["undo_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    for (tool, args) in [
        (
            "collection_query",
            json!({"collection_id": col, "op": "query"}),
        ),
        (
            "crm_record",
            json!({"op": "update", "record_id": rec, "version": 2, "stage": "Perdido"}),
        ),
        ("crm_record", json!({"op": "history", "record_id": rec})),
        (
            "crm_record",
            json!({"op": "add", "collection_id": col, "fields": {"empresa": "X"}}),
        ),
        (
            "company_save",
            json!({"collection_id": col, "company_ref": "company:emp-0001"}),
        ),
    ] {
        assert_eq!(
            err(&w.engine, &other, tool, args).await.code,
            ErrorCode::NotFound,
            "{tool}"
        );
    }
    assert_eq!(
        crate::tools::crm::undo(&w.engine, &other, &token)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
    let env = call(
        &w.engine,
        &other,
        "crm_collections",
        json!({}),
        Surface::Luna,
    )
    .await
    .unwrap();
    assert!(env.results.is_empty());
}

/// A selection saved at once writes its records in one millisecond; they keep the order
/// they were saved in (best first) in the saved list, the audience list and the
/// `created_*` sorts, instead of the order of their random ids.
#[tokio::test]
async fn records_saved_in_one_millisecond_keep_their_order() {
    let (w, col) = setup().await;
    let names = ["Zeta", "Alfa", "Media", "Beta", "Omega", "Delta", "Kappa"];
    for (i, name) in names.iter().enumerate() {
        add(&w, &col, name, &format!("E{i}")).await;
    }
    sqlx::query("update crm_records set created_at = 1")
        .execute(w.engine.store.pool())
        .await
        .unwrap();
    let id = col.trim_start_matches("collection:");
    let titles =
        |rs: Vec<super::model::Record>| rs.into_iter().map(|r| r.title).collect::<Vec<_>>();
    let listed = records::list(&w.engine.store, &w.caller.workspace_id, id, None)
        .await
        .unwrap();
    assert_eq!(titles(listed), names);
    let (shown, more) = records::in_collection(&w.engine.store, &w.caller.workspace_id, id, 50)
        .await
        .unwrap();
    assert!(!more);
    assert_eq!(titles(shown), names);
    for (sort, expected) in [
        ("created_asc", names.to_vec()),
        ("created_desc", names.iter().rev().copied().collect()),
    ] {
        let page = w
            .ok(
                "collection_query",
                json!({"collection_id": col, "op": "query", "limit": 50, "sort": sort}),
            )
            .await;
        let labels: Vec<_> = page.results.iter().map(|r| r.ref_label.clone()).collect();
        assert_eq!(labels, expected, "{sort}");
    }
}

#[tokio::test]
async fn query_pages_with_continue_and_aggregate_counts_exactly() {
    let (w, col) = setup().await;
    for i in 0..5 {
        let (rec, _) = add(&w, &col, &format!("Empresa {i}"), &format!("E{i}")).await;
        if i < 2 {
            w.ok(
                "crm_record",
                json!({"op": "update", "record_id": rec, "version": 1, "stage": "Contactado"}),
            )
            .await;
        }
    }
    let p1 = w.ok("collection_query",
        json!({"collection_id": col, "op": "query", "limit": 2, "sort": "name_asc", "projection": ["empresa"]})).await;
    assert_eq!(p1.status, ResultStatus::Continue);
    assert!(p1.has_more && p1.next_action.is_some());
    assert_eq!(p1.results.len(), 2);
    assert!(p1.results[0].fields["fields"].get("estado").is_none());
    let cursor = p1.cursor.clone().unwrap();
    let p2 = w.ok("collection_query",
        json!({"collection_id": col, "op": "query", "limit": 2, "sort": "name_asc", "cursor": cursor})).await;
    assert_eq!(p2.status, ResultStatus::Continue);
    let p3 = w.ok("collection_query",
        json!({"collection_id": col, "op": "query", "limit": 2, "sort": "name_asc", "cursor": p2.cursor.unwrap()})).await;
    assert_eq!(p3.status, ResultStatus::Ok);
    assert_eq!(p3.results.len(), 1);
    let labels: Vec<_> = [&p1, &p3]
        .iter()
        .flat_map(|p| p.results.iter().map(|r| r.ref_label.clone()))
        .collect();
    assert_eq!(labels.first().unwrap(), "Empresa 0");
    assert_eq!(labels.last().unwrap(), "Empresa 4");
    // The cursor is bound to the filter.
    let e = w.err("collection_query",
        json!({"collection_id": col, "op": "query", "limit": 2, "sort": "updated_desc", "cursor": cursor})).await;
    assert_eq!(e.code, ErrorCode::CursorQueryMismatch);
    // Counting uses aggregate.
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate"}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(5));
    assert_eq!(
        agg.results[0].fields["by_stage"][0],
        json!({"stage": "Nuevo", "count": 3})
    );
    assert_eq!(
        agg.results[0].fields["by_stage"][1],
        json!({"stage": "Contactado", "count": 2})
    );
    let agg = w.ok("collection_query",
        json!({"collection_id": col, "op": "aggregate", "filter": {"stage": ["Contactado"], "fields": {"estado": "Jalisco"}}})).await;
    assert_eq!(agg.results[0].fields["total"], json!(2));
    let q = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "query", "filter": {"query": "empresa 3"}}),
        )
        .await;
    assert_eq!(q.results.len(), 1);
    let e = w
        .err(
            "collection_query",
            json!({"collection_id": col, "op": "query", "limit": 101}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    // A Luna-sized budget never cuts a sealed page: the rows left out come next.
    let big = w
        .call(
            "collection_query",
            json!({"collection_id": col, "op": "query", "limit": 100}),
            Surface::Luna,
        )
        .await
        .unwrap();
    assert!(big.status == ResultStatus::Ok || big.cursor.is_some());
}

#[tokio::test]
async fn level_zero_bulk_is_all_or_nothing() {
    let (w, col) = setup().await;
    let (a, _) = add(&w, &col, "Alfa", "E1").await;
    let (b, _) = add(&w, &col, "Beta", "E2").await;
    let e = w
        .err(
            "crm_record",
            json!({"op": "bulk", "collection_id": col, "changes": [
                {"record_id": a, "version": 1, "stage": "Ganado"},
                {"record_id": b, "version": 7, "stage": "Ganado"}
            ]}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::VersionConflict);
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate", "filter": {"stage": ["Ganado"]}}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(0));
    let env = w
        .ok(
            "crm_record",
            json!({"op": "bulk", "collection_id": col, "changes": [
                {"record_id": a, "version": 1, "stage": "Ganado"},
                {"record_id": b, "version": 1, "stage": "Ganado", "fields": {"fuente": "x"}}
            ]}),
        )
        .await;
    assert_eq!(env.results[1].fields["dropped_fields"], json!(["fuente"]));
    let token = env.results[0].fields["undo_token"]
        .as_str()
        .unwrap()
        .to_owned();
    crate::tools::crm::undo(&w.engine, &w.caller, &token)
        .await
        .unwrap();
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate", "filter": {"stage": ["Nuevo"]}}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(2));
}

#[tokio::test]
async fn company_search_is_the_empresas_directory_linked_to_suppliers() {
    let (w, _) = setup().await;
    insert_supplier(
        &w.engine,
        "GAL190301AB1",
        "Grupo Altamira Logística SA de CV",
    )
    .await;
    insert_supplier(&w.engine, "BET190301AB2", "Beta Servicios SA de CV").await;
    assert!(directory::ensure_demo(w.engine.crm.store()).await.unwrap() > 100);
    assert_eq!(
        directory::ensure_demo(w.engine.crm.store()).await.unwrap(),
        0
    );
    // Half of the suppliers (ordered by id) enter the demo directory, linked by RFC.
    let env = w.ok("company_search", json!({"rfc": "bet190301ab2"})).await;
    assert_eq!(env.results.len(), 1);
    let row = &env.results[0];
    assert_eq!(row.ref_, "company:BET190301AB2");
    assert_eq!(row.fields["supplier_ref"], json!("company:BET190301AB2"));
    assert_eq!(row.fields["is_supplier"], json!(true));
    assert!(row.fields["claim_token"]
        .as_str()
        .unwrap()
        .starts_with("clm_"));
    // Generated companies are not suppliers; the state guard normalises.
    let env = w
        .ok(
            "company_search",
            json!({"query": "grupo", "state": "CDMX", "limit": 5}),
        )
        .await;
    assert!(env
        .results
        .iter()
        .all(|r| r.fields["state"] == json!("Ciudad de México")));
    let e = w.err("company_search", json!({"state": "México"})).await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let p1 = w
        .ok("company_search", json!({"query": "grupo", "limit": 3}))
        .await;
    assert_eq!(p1.status, ResultStatus::Continue);
    let p2 = w
        .ok(
            "company_search",
            json!({"query": "grupo", "limit": 3, "cursor": p1.cursor.unwrap()}),
        )
        .await;
    assert_ne!(p1.results[0].ref_, p2.results[0].ref_);
    // A name match (accents, case and punctuation aside) links a company without RFC.
    let env = w.ok("company_search", json!({"rfc": "GAL190301AB1"})).await;
    assert!(env.results.is_empty());
    sqlx::query("insert into co_companies (id, name, name_folded, source, created_at) values ('emp-x', 'Grupo Altamira Logistica S.A. de C.V.', 'grupo altamira logistica s a de c v', 't', 0)")
        .execute(w.engine.store.pool()).await.unwrap();
    assert_eq!(
        directory::link_suppliers(w.engine.crm.store())
            .await
            .unwrap(),
        1
    );
    let env = w
        .ok("company_search", json!({"query": "altamira logistica"}))
        .await;
    let linked = env
        .results
        .iter()
        .find(|r| r.ref_ == "company:emp-x")
        .unwrap();
    assert_eq!(linked.fields["supplier_ref"], json!("company:GAL190301AB1"));
}

#[tokio::test]
async fn company_save_never_duplicates() {
    let (w, col) = setup().await;
    insert_supplier(
        &w.engine,
        "GAL190301AB1",
        "Grupo Altamira Logística SA de CV",
    )
    .await;
    directory::ensure_demo(w.engine.crm.store()).await.unwrap();
    let found = w.ok("company_search", json!({"rfc": "GAL190301AB1"})).await;
    let token = found.results[0].fields["claim_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let args =
        json!({"collection_id": col, "company_ref": "company:GAL190301AB1", "claim_token": token});
    let first = w.ok("company_save", args.clone()).await;
    let r1 = &first.results[0];
    assert_eq!(r1.fields["already_saved"], json!(false));
    assert_eq!(r1.fields["entity_id"], json!("GAL190301AB1"));
    assert_eq!(r1.fields["fields"]["rfc"], json!("GAL190301AB1"));
    assert_eq!(r1.fields["fields"]["fuente"], json!("Proveedores"));
    assert!(r1.fields["undo_token"].is_string());
    let second = w.ok("company_save", args).await;
    assert_eq!(second.results[0].ref_, r1.ref_);
    assert_eq!(second.results[0].fields["already_saved"], json!(true));
    // Concurrent saves of another company create exactly one record.
    let a = json!({"collection_id": col, "company_ref": "company:emp-0001"});
    let (x, y) = tokio::join!(w.ok("company_save", a.clone()), w.ok("company_save", a));
    assert_eq!(x.results[0].ref_, y.results[0].ref_);
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate"}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(2));
    // A claim token of another company is rejected; an unknown company is NOT_FOUND.
    let e = w
        .err(
            "company_save",
            json!({"collection_id": col, "company_ref": "company:emp-0002", "claim_token": token}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = w
        .err(
            "company_save",
            json!({"collection_id": col, "company_ref": "company:nada"}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn save_companies_previews_from_luna_and_executes_once() {
    let (w, col) = setup().await;
    directory::ensure_demo(w.engine.crm.store()).await.unwrap();
    w.ok(
        "company_save",
        json!({"collection_id": col, "company_ref": "company:emp-0001"}),
    )
    .await;
    let args = json!({"collection_id": col, "source": ["company:emp-0001", "company:emp-0002", "company:emp-0003", "company:nada"], "conflict_policy": "skip"});
    let r = w
        .call("crm_save_companies", args.clone(), Surface::Luna)
        .await;
    let env = r.unwrap();
    let row = &env.results[0];
    assert_eq!(row.fields["to_create"], json!(2));
    assert_eq!(row.fields["already_there"], json!(1));
    assert_eq!(row.fields["not_found"], json!(["company:nada"]));
    let proposal = row.fields["proposal_id"].as_str().unwrap().to_owned();
    // Nothing written before the tap.
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate"}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(1));
    let done = crate::tools::crm::execute_save_proposal(&w.engine, &w.caller, &proposal)
        .await
        .unwrap();
    assert_eq!(done.created.len(), 2);
    assert_eq!(done.already_there.len(), 1);
    let again = crate::tools::crm::execute_save_proposal(&w.engine, &w.caller, &proposal)
        .await
        .unwrap();
    assert!(again.already_executed);
    assert_eq!(again.created, done.created);
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate"}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(3));
    // The history says Luna proposed it.
    let h = w
        .ok(
            "crm_record",
            json!({"op": "history", "record_id": format!("record:{}", done.created[0].record_id)}),
        )
        .await;
    assert_eq!(h.results[1].fields["surface"], json!("luna"));
    // Another workspace cannot execute it; "selection" without a board is a typed error.
    let other = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    assert_eq!(
        crate::tools::crm::execute_save_proposal(&w.engine, &other, &proposal)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
    let r = w
        .call(
            "crm_save_companies",
            json!({"collection_id": col, "source": "selection", "conflict_policy": "skip"}),
            Surface::Luna,
        )
        .await;
    assert_eq!(r.unwrap_err().code, ErrorCode::InvalidArgument);
    // From the app it runs at once, still without duplicates.
    let r = w.ui("crm_save_companies", args).await;
    let env = r.unwrap();
    assert_eq!(env.results[0].fields["created"], json!(0));
    assert_eq!(env.results[0].fields["already_there"], json!(3));
}

#[tokio::test]
async fn bulk_update_is_a_dry_run_from_luna_and_skips_records_changed_since() {
    let (w, col) = setup().await;
    let (a, _) = add(&w, &col, "Alfa", "E1").await;
    let (b, _) = add(&w, &col, "Beta", "E2").await;
    let args = json!({"collection_id": col, "changes": [
        {"record_id": a, "stage": "Perdido"},
        {"record_id": b, "stage": "Perdido", "fields": {"rfc": "x"}},
        {"record_id": "record:rec_nada", "stage": "Perdido"},
        {"record_id": a, "stage": "Ganado"}
    ]});
    let r = w.call("crm_bulk_update", args, Surface::Luna).await;
    let env = r.unwrap();
    let row = &env.results[0];
    assert_eq!(row.fields["will_change"], json!(2));
    assert_eq!(row.fields["rejected"].as_array().unwrap().len(), 2);
    assert_eq!(row.fields["dropped_fields"][0][1], json!(["rfc"]));
    let proposal = row.fields["proposal_id"].as_str().unwrap().to_owned();
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate", "filter": {"stage": ["Perdido"]}}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(0));
    // b changes after the preview: execution leaves it alone and says so.
    w.ok(
        "crm_record",
        json!({"op": "update", "record_id": b, "version": 1, "stage": "Propuesta"}),
    )
    .await;
    let done = crate::tools::crm::execute_bulk_proposal(&w.engine, &w.caller, &proposal)
        .await
        .unwrap();
    assert_eq!(done.updated.len(), 1);
    assert_eq!(done.conflicts.len(), 1);
    assert!(done.undo_token.is_some());
    let again = crate::tools::crm::execute_bulk_proposal(&w.engine, &w.caller, &proposal)
        .await
        .unwrap();
    assert!(again.already_executed);
    let agg = w
        .ok(
            "collection_query",
            json!({"collection_id": col, "op": "aggregate", "filter": {"stage": ["Perdido"]}}),
        )
        .await;
    assert_eq!(agg.results[0].fields["total"], json!(1));
}

#[tokio::test]
async fn crm_tools_for_luna_are_not_public_and_demo_seed_is_idempotent() {
    let engine = testkit::engine().await.unwrap();
    let public: Vec<_> = engine
        .registry
        .list(Surface::Mcp)
        .iter()
        .map(|d| d.name)
        .collect();
    for t in [
        "collection_query",
        "crm_record",
        "company_search",
        "company_save",
    ] {
        assert!(public.contains(&t), "{t}");
    }
    for t in ["crm_collections", "crm_save_companies", "crm_bulk_update"] {
        assert!(!public.contains(&t), "{t}");
    }
    crate::demo::seed_if_empty(&engine.accounts).await.unwrap();
    assert!(demo::seed(engine.crm.store()).await.unwrap());
    assert!(!demo::seed(engine.crm.store()).await.unwrap());
    let (_, caller) = engine
        .accounts
        .login(
            "ventas@demo.luna.mx",
            crate::demo::DEMO_PASSWORD,
            crate::accounts::ClientIp::LOCAL,
        )
        .await
        .unwrap();
    let env = call(
        &engine,
        &caller,
        "crm_collections",
        json!({"query": "prospeccion"}),
        Surface::Luna,
    )
    .await
    .unwrap();
    assert_eq!(env.results.len(), 1);
    assert_eq!(env.results[0].ref_label, "Prospección");
    assert_eq!(env.results[0].fields["stages"], json!(demo::DEMO_STAGES));
}
