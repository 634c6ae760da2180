//! Saving companies into a named stage: the stage is checked against the collection
//! at preview time (typed error with the allowed stages) and the new records start
//! there when the person confirms.

use luna_protocol::error::ErrorCode;
use serde_json::json;

use super::directory;
use super::tests::setup;
use crate::registry::Surface;

#[tokio::test]
async fn a_save_into_a_named_stage_creates_the_records_there() {
    let (w, col) = setup().await;
    directory::ensure_demo(w.engine.crm.store()).await.unwrap();
    let e = w
        .ui(
            "crm_save_companies",
            json!({"collection_id": col, "source": ["company:emp-0001"], "conflict_policy": "skip", "stage": "Cerrado"}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.allowed_values.unwrap().contains(&"Propuesta".to_owned()));
    let preview = w
        .call(
            "crm_save_companies",
            json!({"collection_id": col, "source": ["company:emp-0001", "company:emp-0002"], "conflict_policy": "skip", "stage": "Propuesta"}),
            Surface::Luna,
        )
        .await
        .unwrap();
    let row = &preview.results[0];
    assert_eq!(row.fields["stage"], json!("Propuesta"));
    let proposal = row.fields["proposal_id"].as_str().unwrap().to_owned();
    crate::tools::crm::execute_save_proposal(&w.engine, &w.caller, &proposal)
        .await
        .unwrap();
    let in_stage = |stage: &'static str| {
        let (w, col) = (&w, col.clone());
        async move {
            w.ok(
                "collection_query",
                json!({"collection_id": col, "op": "query", "filter": {"stage": [stage]}}),
            )
            .await
            .results
            .len()
        }
    };
    assert_eq!(in_stage("Propuesta").await, 2);
    // Without a stage, new records start in the first one.
    let env = w
        .ui(
            "crm_save_companies",
            json!({"collection_id": col, "source": ["company:emp-0003"], "conflict_policy": "skip"}),
        )
        .await
        .unwrap();
    assert_eq!(env.results[0].fields["created"], json!(1));
    assert_eq!(in_stage("Nuevo").await, 1);
}
