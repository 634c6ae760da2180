//! Free text reaches the market's SQL literally and bounded: a `buyer` is matched as
//! the text it is (LIKE wildcards escaped), and an oversized value is refused by the
//! schema as `INVALID_ARGUMENT` before any SQL runs.

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;
use serde_json::{json, Value};

use crate::registry::Surface;
use crate::testkit::World;

async fn count(w: &World, args: Value) -> u64 {
    let env = w
        .call("market_count", args.clone(), Surface::Mcp)
        .await
        .unwrap_or_else(|e| panic!("market_count({args}) failed: {e:?}"));
    env.results[0].fields["total"].as_u64().unwrap()
}

#[tokio::test]
async fn a_buyer_filter_matches_wildcards_literally() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    assert!(w.engine.market.ensure_demo().await.unwrap());
    // Part of a buyer's name still finds its Adjudicaciones.
    let part = count(
        &w,
        json!({"kind": "awards", "filters": {"buyer": "Seguro Social"}}),
    )
    .await;
    assert!(part > 0);
    // No demo buyer has a literal «%» or «_» in its name or code: nothing matches
    // (unescaped, «%» matched every Adjudicación).
    for wildcard in ["%", "_", "%Seguro%", "\\"] {
        let n = count(
            &w,
            json!({"kind": "awards", "filters": {"buyer": wildcard}}),
        )
        .await;
        assert_eq!(n, 0, "buyer {wildcard:?}");
    }
}

#[tokio::test]
async fn an_oversized_buyer_is_an_invalid_argument_not_an_internal_error() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    assert!(w.engine.market.ensure_demo().await.unwrap());
    let huge = "a".repeat(60 * 1024);
    for tool in ["market_search", "market_count"] {
        let e = w
            .call(
                tool,
                json!({"kind": "awards", "filters": {"buyer": huge}}),
                Surface::Mcp,
            )
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{tool}: {e:?}");
        assert!(e.message.contains("«filters.buyer»"), "{}", e.message);
    }
}
