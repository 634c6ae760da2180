//! Provenance in the market tools' results: every imported Licitación and
//! Adjudicación a result shows carries `provenance` — publisher, file, ocid, release
//! id and release date (`market::provenance`) — so a person can open the original
//! record. Luna's own search rows leave it out (her results are capped tight; the
//! record is one `market_get` away, which carries it).

use std::collections::HashMap;

use luna_protocol::tool::ResultRow;
use serde_json::json;

use crate::base::error::EngineResult;
use crate::base::store::Store;
use crate::market::provenance::{self, Of, Provenance};
use crate::market::{MarketRecord, MarketRow};

/// The provenance of a page's rows, by ref.
pub(super) async fn of_rows(
    store: &Store,
    rows: &[MarketRow],
) -> EngineResult<HashMap<String, Provenance>> {
    let mut awards = Vec::new();
    let mut opportunities = Vec::new();
    for r in rows {
        match r {
            MarketRow::Award(a) => awards.push(a.id),
            MarketRow::Opportunity(o) => opportunities.push(o.id),
            _ => {}
        }
    }
    let mut out = HashMap::new();
    if !awards.is_empty() {
        for (id, p) in provenance::of(store, Of::Award, &awards).await? {
            out.insert(format!("record:award:{id}"), p);
        }
    }
    if !opportunities.is_empty() {
        for (id, p) in provenance::of(store, Of::Opportunity, &opportunities).await? {
            out.insert(format!("record:opportunity:{id}"), p);
        }
    }
    Ok(out)
}

/// Adds each row's provenance, matched by its ref.
pub(super) fn attach(rows: &mut [ResultRow], found: &HashMap<String, Provenance>) {
    for row in rows {
        if let Some(p) = found.get(&row.ref_) {
            row.fields.insert("provenance".into(), json!(p));
        }
    }
}

/// The provenance of one `market_get` record, when it is an imported Licitación or
/// Adjudicación.
pub(super) async fn of_record(
    store: &Store,
    record: &MarketRecord,
) -> EngineResult<Option<Provenance>> {
    let (kind, id) = match record {
        MarketRecord::Award(a) => (Of::Award, a.id),
        MarketRecord::Opportunity(o) => (Of::Opportunity, o.id),
        _ => return Ok(None),
    };
    Ok(provenance::of(store, kind, &[id]).await?.remove(&id))
}

#[cfg(test)]
mod tests {
    use luna_protocol::account::{Plan, Role};
    use serde_json::{json, Value};

    use crate::market::import::ocds;
    use crate::registry::Surface;
    use crate::testkit::World;

    #[tokio::test]
    async fn imported_awards_and_tenders_say_where_they_come_from() {
        let w = World::new(Plan::Founder, Role::Member).await.unwrap();
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/ocds/apf/record-package-apf.json");
        ocds::import_ocds_from(
            w.engine.market.store(),
            ocds::Input::File(file.clone()),
            ocds::Options::default(),
        )
        .await
        .unwrap();
        let call = |name: &'static str, args: Value, surface| {
            let w = w.clone();
            async move { w.call(name, args, surface).await.unwrap() }
        };
        let expect = |p: &Value| {
            assert_eq!(p["file"], json!(file.display().to_string()), "{p}");
            assert_eq!(
                p["publisher"],
                json!("Administración Pública Federal (ficticio)"),
                "{p}"
            );
            let ocid = p["ocid"].as_str().unwrap();
            assert!(ocid.starts_with("ocds-zz9apf-"), "{p}");
            let release = p["release_id"].as_str().unwrap_or_default();
            assert!(release.starts_with(ocid), "{p}");
            assert!(
                p["release_date"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("20")),
                "{p}"
            );
        };
        for kind in ["awards", "opportunities"] {
            let env = call(
                "market_search",
                json!({"kind": kind, "limit": 5}),
                Surface::Mcp,
            )
            .await;
            assert!(!env.results.is_empty(), "{kind}");
            for row in &env.results {
                expect(&row.fields["provenance"]);
            }
            let got = call(
                "market_get",
                json!({"record_ref": env.results[0].ref_}),
                Surface::Luna,
            )
            .await;
            expect(&got.results[0].fields["provenance"]);
        }
    }
}
