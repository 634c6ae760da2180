//! `people_file` tests: filing a revealed person onto a CRM record through the
//! registry, its history and undo, and each typed failure.

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;
use serde_json::{json, Value};

use crate::accounts::Caller;
use crate::crm::{collections, demo, CollectionStatus};
use crate::registry::Surface;
use crate::Engine;

use super::tests::{call, handles, req, setup, VIA};
use crate::testkit::World;

/// A "Prospección" collection with one record in the caller's workspace: (collection
/// id, record ref).
async fn record(engine: &Engine, caller: &Caller, empresa: &str) -> (String, String) {
    let c = collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        demo::prospeccion(),
    )
    .await
    .unwrap();
    let env = call(
        engine,
        caller,
        "crm_record",
        json!({"op": "add", "collection_id": format!("collection:{}", c.id), "fields": {"empresa": empresa}}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    (c.id, env.results[0].ref_.clone())
}

/// Reveals the first person of Empaques del Bajío; returns (revealed, not revealed).
async fn reveal_one(w: &World) -> (String, String) {
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let q = w.engine.people.quote(&w.caller, &hs[..1]).await.unwrap();
    w.engine
        .people
        .reveal(&w.caller, &req(&q.id, 2, "file-1"), VIA)
        .await
        .unwrap();
    (hs[0].clone(), hs[1].clone())
}

async fn file(w: &World, person: &str, record: &str) -> Value {
    let env = w
        .call(
            "people_file",
            json!({"person_ref": person, "record_id": record}),
            Surface::Mcp,
        )
        .await
        .unwrap_or_else(|e| panic!("people_file failed: {e:?}"));
    serde_json::to_value(&env.results[0]).unwrap()
}

async fn file_err(engine: &Engine, caller: &Caller, person: &str, record: &str) -> ErrorCode {
    call(
        engine,
        caller,
        "people_file",
        json!({"person_ref": person, "record_id": record}),
        Surface::Mcp,
    )
    .await
    .expect_err("people_file should fail")
    .code
}

#[tokio::test]
async fn filing_a_revealed_person_adds_the_contact_with_history_once_and_undoes_exactly() {
    let w = setup(Plan::Founder).await;
    let (_, rec) = record(&w.engine, &w.caller, "Empaques del Bajío").await;
    let (person, _) = reveal_one(&w).await;
    let revealed = w
        .engine
        .people
        .search(&w.caller, "company:EBA010101AB1")
        .await
        .unwrap();
    let email = revealed[0].revealed.as_ref().unwrap().email.clone();

    let row = file(&w, &person, &rec).await;
    assert_eq!(row["ref"], json!(rec));
    assert_eq!(row["person_ref"], json!(person));
    assert_eq!(row["already_filed"], json!(false));
    assert_eq!(row["version"], json!(2));
    assert_eq!(row["fields"]["personas"][0]["ref"], json!(person));
    assert_eq!(row["fields"]["personas"][0]["correo"], json!(email));
    let token = row["undo_token"].as_str().unwrap().to_owned();

    // The record's history says who filed it and from where.
    let env = w
        .call(
            "crm_record",
            json!({"op": "history", "record_id": rec}),
            Surface::Mcp,
        )
        .await
        .unwrap();
    let last = &env.results[1].fields;
    assert_eq!(last["action"], json!("persona"));
    assert_eq!(last["surface"], json!("mcp"));
    assert_eq!(last["by"], json!("Ana Prueba"));

    // Filing the same person again changes nothing and offers no undo.
    let again = file(&w, &person, &rec).await;
    assert_eq!(again["already_filed"], json!(true));
    assert_eq!(again["undo_token"], Value::Null);
    assert_eq!(again["version"], json!(2));
    assert_eq!(again["fields"]["personas"].as_array().unwrap().len(), 1);

    // Undo restores the record as it was: no people on it.
    w.engine
        .crm
        .undo(&w.caller, Surface::Mcp, &token)
        .await
        .unwrap();
    let env = w
        .call(
            "crm_record",
            json!({"op": "history", "record_id": rec}),
            Surface::Mcp,
        )
        .await
        .unwrap();
    assert!(env.results[0].fields["fields"].get("personas").is_none());
    assert_eq!(env.results[0].fields["version"], json!(3));
}

#[tokio::test]
async fn filing_after_a_later_change_cannot_be_undone_silently() {
    let w = setup(Plan::Founder).await;
    let (_, rec) = record(&w.engine, &w.caller, "Empaques del Bajío").await;
    let (person, _) = reveal_one(&w).await;
    let row = file(&w, &person, &rec).await;
    let token = row["undo_token"].as_str().unwrap().to_owned();
    w.call(
        "crm_record",
        json!({"op": "update", "record_id": rec, "version": 2, "stage": "Contactado"}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    let e = w
        .engine
        .crm
        .undo(&w.caller, Surface::Mcp, &token)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::VersionConflict);
}

#[tokio::test]
async fn filing_needs_a_person_revealed_here_and_a_live_record_of_this_workspace() {
    let w = setup(Plan::Founder).await;
    let (col, rec) = record(&w.engine, &w.caller, "Empaques del Bajío").await;
    let (person, masked) = reveal_one(&w).await;

    // A person only quoted, never revealed here.
    assert_eq!(
        file_err(&w.engine, &w.caller, &masked, &rec).await,
        ErrorCode::NotRevealed
    );
    // An unknown person.
    assert_eq!(
        file_err(&w.engine, &w.caller, "person:nadie.9", &rec).await,
        ErrorCode::NotFound
    );
    // A record that does not exist.
    assert_eq!(
        file_err(&w.engine, &w.caller, &person, "record:rec_nope").await,
        ErrorCode::NotFound
    );

    // Another workspace: its record is NOT_FOUND for us, and our reveal does not
    // count there.
    let stranger = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    let (_, foreign) = record(&w.engine, &stranger, "Cartonera Jalisco").await;
    assert_eq!(
        file_err(&w.engine, &w.caller, &person, &foreign).await,
        ErrorCode::NotFound
    );
    assert_eq!(
        file_err(&w.engine, &stranger, &person, &foreign).await,
        ErrorCode::NotRevealed
    );

    // An archived collection is read-only.
    collections::set_status(
        w.engine.crm.store(),
        &w.caller.workspace_id,
        &col,
        CollectionStatus::Archived,
    )
    .await
    .unwrap();
    assert_eq!(
        file_err(&w.engine, &w.caller, &person, &rec).await,
        ErrorCode::ProtectedResource
    );
}

#[tokio::test]
async fn no_collection_may_define_the_people_field() {
    let w = setup(Plan::Founder).await;
    let mut def = demo::prospeccion();
    def.fields.push(crate::crm::FieldDef::new(
        crate::crm::model::PEOPLE_FIELD,
        "Personas",
        crate::crm::FieldType::Text,
        false,
    ));
    let e = collections::create(w.engine.crm.store(), &w.caller.workspace_id, def)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}
