//! `crm_record` writes a handful of records at level 0; anything bigger is a bulk
//! change a person confirms (`crm_bulk_update`, the «cambios masivos» card).

use luna_protocol::error::ErrorCode;
use serde_json::{json, Value};

use super::tests::{add, setup};
use crate::testkit::World;
use crate::tools::crm::RECORD_BULK_MAX;

/// Records of the collection in the stage «Ganado».
async fn won(w: &World, col: &str) -> Value {
    w.ok(
        "collection_query",
        json!({"collection_id": col, "op": "aggregate", "filter": {"stage": ["Ganado"]}}),
    )
    .await
    .results[0]
        .fields["total"]
        .clone()
}

#[tokio::test]
async fn a_level_zero_bulk_beyond_the_handful_is_refused_and_writes_nothing() {
    let (w, col) = setup().await;
    let mut ids = Vec::new();
    for i in 0..=RECORD_BULK_MAX {
        let (id, _) = add(&w, &col, &format!("Empresa {i}"), &format!("E{i}")).await;
        ids.push(id);
    }
    let changes = |n: usize| -> Value {
        ids.iter()
            .take(n)
            .map(|id| json!({"record_id": id, "version": 1, "stage": "Ganado"}))
            .collect()
    };
    // One more than the handful: refused, pointing to the bulk change card.
    let e = w
        .err(
            "crm_record",
            json!({"op": "bulk", "collection_id": col, "changes": changes(RECORD_BULK_MAX + 1)}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.hint.contains("crm_bulk_update"), "{}", e.hint);
    assert!(e.hint.contains("cambio masivo"), "{}", e.hint);
    assert_eq!(won(&w, &col).await, json!(0));
    // The handful itself still writes at level 0.
    let env = w
        .ok(
            "crm_record",
            json!({"op": "bulk", "collection_id": col, "changes": changes(RECORD_BULK_MAX)}),
        )
        .await;
    assert_eq!(env.results.len(), RECORD_BULK_MAX);
    assert_eq!(won(&w, &col).await, json!(RECORD_BULK_MAX));
}
