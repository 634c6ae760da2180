//! Entity resolution on OCDS packages built here: links by RFC and by folded name,
//! ambiguity, never two RFCs, idempotence, and the company file (`market_get`).

use luna_protocol::account::{Plan, Role};
use serde_json::{json, Value};

use super::*;
use crate::market::import::ocds::import_ocds;
use crate::testkit::World;

const HASH: &str = "7f3c9a1be4d2086f5a1c3e9b7d20f4a6";

/// A party with role supplier: `identifier` as given.
fn party(id: &str, name: &str, identifier: Value) -> Value {
    json!({"id": id, "name": name, "identifier": identifier, "roles": ["supplier"]})
}

/// A release package with one award per supplier party.
fn package(tag: &str, suppliers: Vec<Value>) -> Vec<u8> {
    let releases: Vec<Value> = suppliers
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            json!({
                "ocid": format!("ocds-ent-{tag}-{i}"), "id": format!("{tag}-{i}"), "date": "2024-03-01T00:00:00Z",
                "parties": [{"id": "B", "name": "Comprador de prueba", "roles": ["buyer"]}, p.clone()],
                "buyer": {"id": "B", "name": "Comprador de prueba"},
                "awards": [{"id": "A", "status": "active", "date": "2024-03-01",
                            "suppliers": [{"id": p["id"]}], "value": {"amount": 1000.0, "currency": "MXN"}}]
            })
        })
        .collect();
    serde_json::to_vec(&json!({"publisher": {"name": "Portal de prueba"}, "releases": releases}))
        .unwrap()
}

fn rfc(id: &str) -> Value {
    json!({"scheme": "MX-RFC", "id": id})
}

async fn links(store: &Store) -> Vec<(String, String, String, f64)> {
    sqlx::query_as(
        "select alias_id, canonical_id, method, confidence from mk_supplier_links order by alias_id",
    )
    .fetch_all(store.pool())
    .await
    .unwrap()
}

#[test]
fn names_fold_case_accents_punctuation_and_company_suffixes() {
    let k = name_key("Talleres Loma, S.A. de C.V.");
    assert_eq!(k, "talleres loma");
    assert_eq!(name_key("TALLERES LÓMA SA DE CV"), k);
    assert_eq!(name_key("Talleres Loma S. de R.L. de C.V."), k);
    assert_eq!(
        name_key("Financiera Sur, S.A.P.I. de C.V., SOFOM, E.N.R."),
        "financiera sur"
    );
    assert_eq!(name_key("Fundación Ríos, A.C."), "fundacion rios");
    // Never folded to nothing, and a suffix inside a name stays.
    assert_eq!(name_key("S.A."), "s a");
    assert_eq!(name_key("SA Mexicana de Motores"), "sa mexicana de motores");
    assert_eq!(identity_kind(&format!("rfc-hash:{HASH}")), "RFC cifrado");
    assert_eq!(identity_kind("PROV-GOB-JAL:123"), "registro estatal");
    assert_eq!(identity_kind("ID:p7"), "solo nombre");
}

#[tokio::test]
async fn aliases_link_by_published_rfc_then_by_folded_name_with_confidence() {
    let store = Store::open_temp().await.unwrap();
    let report = import_ocds(
        &store,
        &package(
            "a",
            vec![
                // The hashed RFC comes first: resolution runs at the end of the run.
                party(
                    "H",
                    "x",
                    json!({"scheme": "MX-RFC", "id": HASH, "legalName": "TALLERES LÓMA SA DE CV"}),
                ),
                party("R", "Talleres Loma, S.A. de C.V.", rfc("TLO180725P57")),
                party(
                    "J",
                    "Talleres Loma, S.A. de C.V.",
                    json!({"scheme": "PROV-GOB-JAL", "id": "123"}),
                ),
                json!({"id": "K", "name": "TL Servicios Integrales", "roles": ["supplier"],
                       "identifier": {"scheme": "PROV-GOB-JAL", "id": "456"},
                       "additionalIdentifiers": [{"scheme": "MX-RFC", "id": "SLM1503129G0"}]}),
                party("S", "Servicios Lomas del Mar", rfc("SLM1503129G0")),
            ],
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        report.resolution,
        Resolution {
            linked_by_rfc: 1,
            linked_by_name: 2,
            ambiguous_names: 0
        },
        "{report:?}"
    );
    assert_eq!(
        links(&store).await,
        [
            (
                "PROV-GOB-JAL:123".into(),
                "TLO180725P57".into(),
                "nombre".into(),
                NAME_EXACT
            ),
            (
                "PROV-GOB-JAL:456".into(),
                "SLM1503129G0".into(),
                "rfc".into(),
                RFC_CONFIDENCE
            ),
            (
                format!("rfc-hash:{HASH}"),
                "TLO180725P57".into(),
                "nombre".into(),
                NAME_FOLDED
            ),
        ]
    );
}

#[tokio::test]
async fn a_name_shared_by_two_rfcs_links_nothing_and_is_counted_ambiguous() {
    let store = Store::open_temp().await.unwrap();
    let hashed = party(
        "H",
        "Grupo Delta SA",
        json!({"scheme": "MX-RFC", "id": HASH}),
    );
    let first = import_ocds(
        &store,
        &package(
            "a",
            vec![
                hashed.clone(),
                party("R1", "Grupo Delta, S.A. de C.V.", rfc("TLO180725P57")),
            ],
        ),
    )
    .await
    .unwrap();
    assert_eq!(first.resolution.linked_by_name, 1, "{first:?}");
    // A second taxpayer with the same folded name: the name no longer says which.
    let second = import_ocds(
        &store,
        &package(
            "b",
            vec![party(
                "R2",
                "GRUPO DELTA, S.A.P.I. DE C.V.",
                rfc("SLM1503129G0"),
            )],
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        second.resolution,
        Resolution {
            linked_by_rfc: 0,
            linked_by_name: 0,
            ambiguous_names: 1
        },
        "{second:?}"
    );
    assert!(links(&store).await.is_empty());
    assert_eq!(resolve_all(&store).await.unwrap().ambiguous_names, 1);
    assert!(links(&store).await.is_empty());
}

#[tokio::test]
async fn two_different_rfcs_are_never_linked_even_under_one_name() {
    let store = Store::open_temp().await.unwrap();
    let r = import_ocds(
        &store,
        &package(
            "a",
            vec![
                party(
                    "R1",
                    "Comercializadora Norte, S.A. de C.V.",
                    rfc("TLO180725P57"),
                ),
                party(
                    "R2",
                    "Comercializadora Norte, S.A. de C.V.",
                    rfc("SLM1503129G0"),
                ),
                // An RFC'd party that also lists another RFC is still not an alias.
                json!({"id": "R3", "name": "Comercializadora Norte SA", "roles": ["supplier"],
                       "identifier": {"scheme": "MX-RFC", "id": "CIN0911203K2"},
                       "additionalIdentifiers": [{"scheme": "MX-RFC", "id": "TLO180725P57"}]}),
            ],
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        r.resolution.linked_by_rfc + r.resolution.linked_by_name,
        0,
        "{r:?}"
    );
    assert_eq!(resolve_all(&store).await.unwrap(), Resolution::default());
    assert!(links(&store).await.is_empty());
}

#[tokio::test]
async fn resolving_again_changes_and_counts_nothing() {
    let store = Store::open_temp().await.unwrap();
    let bytes = package(
        "a",
        vec![
            party(
                "H",
                "Talleres Loma SA de CV",
                json!({"scheme": "MX-RFC", "id": HASH}),
            ),
            party("R", "Talleres Loma, S.A. de C.V.", rfc("TLO180725P57")),
        ],
    );
    import_ocds(&store, &bytes).await.unwrap();
    let before = links(&store).await;
    assert_eq!(before.len(), 1);
    assert_eq!(resolve_all(&store).await.unwrap(), Resolution::default());
    // The same suppliers in another file: nothing new to link.
    let again = import_ocds(
        &store,
        &package(
            "b",
            vec![party(
                "H",
                "Talleres Loma SA de CV",
                json!({"scheme": "MX-RFC", "id": HASH}),
            )],
        ),
    )
    .await
    .unwrap();
    assert_eq!(again.resolution, Resolution::default(), "{again:?}");
    assert_eq!(links(&store).await, before);

    // Suppliers written by another path (no name key yet) are resolved by the full run.
    sqlx::query(
        "insert into mk_suppliers (id, rfc, rfc_valid, name, source, created_at) values ('ID:p9', null, 0, 'Talleres Loma', 'prueba', 0)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    let all = resolve_all(&store).await.unwrap();
    assert_eq!(all.linked_by_name, 1);
    assert_eq!(resolve_all(&store).await.unwrap(), Resolution::default());
}

#[tokio::test]
async fn the_company_file_lists_its_other_identities_and_an_alias_says_whose_it_is() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let store = w.engine.market.store().clone();
    import_ocds(
        &store,
        &package(
            "a",
            vec![
                party(
                    "H",
                    "x",
                    json!({"scheme": "MX-RFC", "id": HASH, "legalName": "Talleres Lóma SA de CV"}),
                ),
                party("R", "Talleres Loma, S.A. de C.V.", rfc("TLO180725P57")),
                party(
                    "J",
                    "Talleres Loma, S.A. de C.V.",
                    json!({"scheme": "PROV-GOB-JAL", "id": "123"}),
                ),
            ],
        ),
    )
    .await
    .unwrap();
    let env = w
        .ok("market_get", json!({"record_ref": "company:TLO180725P57"}))
        .await;
    let ids = &env.results[0].fields["identities"];
    assert_eq!(
        ids,
        &json!([
            {"ref": "company:PROV-GOB-JAL:123", "id": "PROV-GOB-JAL:123", "name": "Talleres Loma, S.A. de C.V.",
             "kind": "registro estatal", "method": "nombre", "confidence": NAME_EXACT},
            {"ref": format!("company:rfc-hash:{HASH}"), "id": format!("rfc-hash:{HASH}"), "name": "Talleres Lóma SA de CV",
             "kind": "RFC cifrado", "method": "nombre", "confidence": NAME_FOLDED},
        ])
    );
    let alias = w
        .ok(
            "market_get",
            json!({"record_ref": format!("company:rfc-hash:{HASH}")}),
        )
        .await;
    let owner = &alias.results[0].fields["belongs_to"];
    assert_eq!(owner["id"], "TLO180725P57");
    assert_eq!(owner["kind"], "RFC");
    assert_eq!(owner["confidence"], json!(NAME_FOLDED));
    assert!(alias.results[0].fields.get("identities").is_none());
}
