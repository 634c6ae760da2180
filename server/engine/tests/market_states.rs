//! `states[]` in market_search and market_aggregate: several states in one request
//! (at most five), each validated; typed `INVALID_ARGUMENT` otherwise.

use luna_engine::market::*;
use luna_engine::Store;
use luna_protocol::error::ErrorCode;
use serde_json::{json, Value};

async fn demo_market() -> Market {
    let store = Store::open_temp().await.unwrap();
    let market = Market::new(store, b"test-cursor-secret".to_vec());
    assert!(market.ensure_demo().await.unwrap());
    market
}

#[tokio::test]
async fn a_search_over_two_states_returns_rows_of_both_and_only_them() {
    let m = demo_market().await;
    let args: SearchArgs = parse_args(json!({
        "kind": "suppliers",
        "filters": {"giro": "empaque"},
        "states": ["Jalisco", "NL"],
        "limit": 50
    }))
    .unwrap();
    let page = m.search(&args, None).await.unwrap();
    let states: Vec<String> = page
        .results
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .filter_map(|v| v.get("state").and_then(Value::as_str).map(str::to_owned))
        .collect();
    assert!(!states.is_empty());
    assert!(
        states.iter().all(|s| s == "Jalisco" || s == "Nuevo León"),
        "{states:?}"
    );
    assert!(states.iter().any(|s| s == "Jalisco"));

    let agg: AggregateArgs = parse_args(json!({
        "filters": {"giro": "empaque"},
        "states": ["Jalisco", "Nuevo León"],
        "group_by": "state"
    }))
    .unwrap();
    let r = serde_json::to_value(m.aggregate(&agg).await.unwrap()).unwrap();
    let groups = r["groups"].as_array().unwrap();
    assert!(!groups.is_empty() && groups.len() <= 2, "{groups:?}");
}

#[tokio::test]
async fn bad_state_lists_are_typed_errors() {
    let m = demo_market().await;
    let bad = |states: Value, filters: Value| {
        parse_args::<SearchArgs>(json!({"kind": "suppliers", "filters": filters, "states": states}))
    };
    for (states, filters) in [
        (json!(["Jalisco", "Narnia"]), json!({})),
        (json!(["Jalisco", "Jalisco"]), json!({})),
        (json!(["Jalisco", "Nuevo León"]), json!({"state": "Puebla"})),
        (
            json!(["Jalisco", "Puebla", "Sonora", "Yucatán", "Colima", "Durango"]),
            json!({}),
        ),
    ] {
        let err = match bad(states.clone(), filters) {
            Ok(args) => m.search(&args, None).await.unwrap_err(),
            Err(e) => e,
        };
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{states}");
    }
}
