//! The gateway's configuration and request helpers.

use super::*;

#[test]
fn prices_parse_and_cost_in_micro_dollars() {
    let p = Price::parse("0.14/0.28").unwrap();
    assert_eq!(p.cost_micro_usd(1_000_000, 0), 140_000);
    assert_eq!(p.cost_micro_usd(1_000, 500), 280);
    assert!(Price::parse("barato").is_none());
    assert!(Price::parse("-1/2").is_none());
}

#[test]
fn the_api_key_never_prints() {
    let mut config = GatewayConfig::new("http://127.0.0.1:1/v1", "primario");
    config.api_key = Some(ApiKey::new("sk-muy-secreta"));
    assert!(!format!("{config:?}").contains("sk-muy-secreta"));
}

#[test]
fn the_cache_salt_is_stable_per_workspace_and_hides_the_id() {
    assert_eq!(cache_salt("ws_1"), cache_salt("ws_1"));
    assert_ne!(cache_salt("ws_1"), cache_salt("ws_2"));
    assert!(!cache_salt("ws_1").contains("ws_1"));
}

#[test]
fn the_fallback_schema_describes_the_turn_output() {
    let schema = turn_output_schema().to_string();
    assert!(schema.contains("narracion") && schema.contains("proponer_decision"));
}
