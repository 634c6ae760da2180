//! Saving companies into a named stage: the stage is checked against the collection
//! at preview time (typed error with the allowed stages) and the new records start
//! there when the person confirms.

use luna_protocol::error::ErrorCode;
use serde_json::json;

use super::directory;
use super::tests::{call, ok, setup};
use crate::registry::Surface;

#[tokio::test]
async fn a_save_into_a_named_stage_creates_the_records_there() {
    let (engine, caller, col) = setup().await;
    directory::ensure_demo(engine.crm.store()).await.unwrap();
    let e = call(
        &engine,
        &caller,
        "crm_save_companies",
        json!({"collection_id": col, "source": ["company:emp-0001"], "conflict_policy": "skip", "stage": "Cerrado"}),
        Surface::Ui,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.allowed_values.unwrap().contains(&"Propuesta".to_owned()));
    let preview = engine
        .call_tool(
            &caller,
            crate::registry::ToolRequest::new(
                "crm_save_companies",
                json!({"collection_id": col, "source": ["company:emp-0001", "company:emp-0002"], "conflict_policy": "skip", "stage": "Propuesta"}),
                Surface::Luna,
            ),
        )
        .await
        .outcome
        .unwrap();
    let row = &preview.results[0];
    assert_eq!(row.fields["stage"], json!("Propuesta"));
    let proposal = row.fields["proposal_id"].as_str().unwrap().to_owned();
    crate::tools::crm::execute_save_proposal(&engine, &caller, &proposal)
        .await
        .unwrap();
    let page = ok(
        &engine,
        &caller,
        "collection_query",
        json!({"collection_id": col, "op": "query", "filter": {"stage": ["Propuesta"]}}),
    )
    .await;
    assert_eq!(page.results.len(), 2, "{page:?}");
    // Without a stage, new records start in the first one.
    let env = call(
        &engine,
        &caller,
        "crm_save_companies",
        json!({"collection_id": col, "source": ["company:emp-0003"], "conflict_policy": "skip"}),
        Surface::Ui,
    )
    .await
    .unwrap();
    assert_eq!(env.results[0].fields["created"], json!(1));
    let page = ok(
        &engine,
        &caller,
        "collection_query",
        json!({"collection_id": col, "op": "query", "filter": {"stage": ["Nuevo"]}}),
    )
    .await;
    assert_eq!(page.results.len(), 1, "{page:?}");
}
