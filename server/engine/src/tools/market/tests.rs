//! The eight Mercado tools through the real pipeline (`Engine::call_tool`) on the
//! generated demo data: results, typed errors, cursors under budgets, billing.

use std::collections::HashSet;

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::{ErrorBody, ErrorCode};
use luna_protocol::tool::ResultStatus;
use serde_json::{json, Value};

use crate::registry::{budget, Stage, Surface, ToolRequest, TOOL_RESULT_CAP};
use crate::testkit::ok;
use crate::testkit::World;
use crate::{testkit, Engine};

async fn demo() -> World {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    assert!(w.engine.market.ensure_demo().await.unwrap());
    w
}

async fn receipts(w: &World) -> Vec<(String, String, i64)> {
    w.engine
        .billing
        .receipts(&w.caller, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.action, r.branch, r.amount))
        .collect()
}

async fn reads_used(w: &World) -> i64 {
    600 - w
        .engine
        .billing
        .reads_left(&w.caller.workspace_id, crate::base::clock::now_ms())
        .await
        .unwrap()
}

#[tokio::test]
async fn search_returns_rows_with_ref_label_and_evidence() {
    let w = demo().await;
    let env = w.ok("market_search",
        json!({"kind": "suppliers", "filters": {"state": "Jalisco", "giro": "empaque", "has_awards": true}}),
    )
    .await;
    assert_eq!(env.shown, 20);
    assert!(env.has_more && env.cursor.is_some());
    assert_eq!(env.status, ResultStatus::Continue);
    assert!(env.ref_.starts_with("call:"));
    for row in &env.results {
        assert!(row.ref_.starts_with("company:"), "{}", row.ref_);
        assert!(!row.ref_label.is_empty());
        assert_eq!(row.fields["state"], json!("Jalisco"));
        let ev = row.fields["evidence"].as_array().unwrap();
        assert!(ev.iter().any(|e| e["kind"] == "adjudicacion"), "{row:?}");
    }
    // Free text folds accents and case; other kinds carry their own refs.
    let env = w
        .ok(
            "market_search",
            json!({"kind": "awards", "query": "MEDICO", "filters": {"buyer": "IMSS"}, "limit": 5}),
        )
        .await;
    assert!(env.shown > 0);
    assert!(env
        .results
        .iter()
        .all(|r| r.ref_.starts_with("record:award:") && r.fields["buyer"] == "IMSS"));
    for kind in ["opportunities", "permits", "risks"] {
        let env = w
            .ok("market_search", json!({"kind": kind, "limit": 3}))
            .await;
        assert!(env.shown > 0, "{kind}");
        assert!(env.results.iter().all(|r| r.ref_.starts_with("record:")));
    }
}

#[tokio::test]
async fn every_bad_input_is_a_typed_error_with_a_hint() {
    let w = demo().await;
    // A filter of another kind: allowed values are this kind's keys.
    let e = w
        .err(
            "market_search",
            json!({"kind": "suppliers", "filters": {"mark_kind": "sat_69b_definitivo"}}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let allowed = e.allowed_values.unwrap();
    assert!(allowed.contains(&"giro".to_string()) && !allowed.contains(&"mark_kind".to_string()));
    assert!(!e.hint.is_empty());
    // A key no kind has: rejected by the schema, with the filter keys listed.
    let e = w
        .err(
            "market_search",
            json!({"kind": "risks", "filters": {"color": "rojo"}}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.allowed_values.unwrap().contains(&"mark_kind".to_string()));
    // "México" as a state.
    let e = w
        .err(
            "market_search",
            json!({"kind": "suppliers", "filters": {"state": "México"}}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.hint.contains("Estado de México"), "{}", e.hint);
    // Two states in one field.
    let e = w
        .err(
            "market_search",
            json!({"kind": "awards", "filters": {"state": "Jalisco, Colima"}}),
        )
        .await;
    assert_eq!(e.allowed_values.unwrap().len(), 32);
    // limit 51.
    let e = w
        .err("market_search", json!({"kind": "suppliers", "limit": 51}))
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.hint.contains("market_count"), "{}", e.hint);
    // A cursor reused with another filter, and a forged one.
    let first = w
        .ok(
            "market_search",
            json!({"kind": "suppliers", "filters": {"state": "Jalisco"}}),
        )
        .await;
    let cursor = first.cursor.unwrap();
    let e = w
        .err(
            "market_search",
            json!({"kind": "suppliers", "filters": {"state": "Colima"}, "cursor": cursor}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::CursorQueryMismatch);
    assert!(!e.hint.is_empty());
    let first_char = if cursor.starts_with('A') { 'B' } else { 'A' };
    let forged = format!("{first_char}{}", &cursor[1..]);
    let e = w
        .err(
            "market_search",
            json!({"kind": "suppliers", "filters": {"state": "Jalisco"}, "cursor": forged}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::CursorInvalid);
    // A cursor sealed by another server secret is forged too.
    let other = Engine::from_store_with_secret(w.engine.store.clone(), "otro-secreto");
    let e = testkit::call(
        &other,
        &w.caller,
        "market_search",
        json!({"kind": "suppliers", "filters": {"state": "Jalisco"}, "cursor": cursor}),
        Surface::Mcp,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::CursorInvalid);
    // 51 RFCs, and none.
    let rfcs: Vec<String> = (0..51).map(|i| format!("AAA0101{i:02}AB1")).collect();
    let e = w.err("market_screen", json!({ "rfcs": rfcs })).await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.hint.contains("50"), "{}", e.hint);
    let e = w.err("market_screen", json!({"rfcs": []})).await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    // Count: six states, a state both in filters and states, an unknown kind.
    let e = w
        .err(
            "market_count",
            json!({"states": ["Jalisco", "Colima", "Sonora", "Puebla", "Yucatán", "Oaxaca"]}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = w
        .err(
            "market_count",
            json!({"filters": {"state": "Colima"}, "states": ["Jalisco"]}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = w.err("market_search", json!({"kind": "companies"})).await;
    assert!(e
        .allowed_values
        .unwrap()
        .contains(&"opportunities".to_string()));
    // Bad refs and RFCs.
    let e = w
        .err("market_get", json!({"record_ref": "topic:abc"}))
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.allowed_values.is_some());
    let e = w
        .err("market_get", json!({"record_ref": "company:NOEXISTE"}))
        .await;
    assert_eq!(e.code, ErrorCode::NotFound);
    let e = w.err("market_history", json!({"rfc": "hola"})).await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = w
        .err(
            "market_compare",
            json!({"segments": [{"label": "solo", "filters": {}}]}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = w
        .err(
            "market_compare",
            json!({"segments": [{"label": "a", "filters": {"has_awards": true}}, {"label": "b"}]}),
        )
        .await;
    assert!(e.allowed_values.unwrap().contains(&"buyer".to_string()));
    let e = w
        .err(
            "market_aggregate",
            json!({"group_by": "buyer", "limit": 51}),
        )
        .await;
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    // No error reached a charge.
    assert_eq!(
        receipts(&w).await.len(),
        1,
        "only the one successful search charged"
    );
}

/// Walks every page of one query on a surface; returns the refs in order.
async fn walk(w: &World, mut args: Value, surface: Surface) -> (Vec<String>, usize) {
    let mut refs = Vec::new();
    let mut pages = 0;
    loop {
        let env = w
            .call("market_search", args.clone(), surface)
            .await
            .unwrap();
        pages += 1;
        assert!(
            budget::size_chars(&env) <= crate::registry::def::result_cap(surface),
            "page over the surface cap"
        );
        assert_ne!(
            env.status,
            ResultStatus::Incomplete,
            "a page was cut after the query"
        );
        refs.extend(env.results.iter().map(|r| r.ref_.clone()));
        match env.cursor {
            Some(c) => args["cursor"] = json!(c),
            None => {
                assert!(!env.has_more);
                break;
            }
        }
    }
    (refs, pages)
}

#[tokio::test]
async fn budget_trimming_never_breaks_a_cursor() {
    let w = demo().await;
    let args = json!({"kind": "suppliers", "filters": {"state": "Jalisco", "giro": "empaque"}, "limit": 50});
    let (luna, luna_pages) = walk(&w, args.clone(), Surface::Luna).await;
    let (mcp, mcp_pages) = walk(&w, args, Surface::Mcp).await;
    // Luna's 4,500-character cap makes smaller pages, never a gap or a repeat.
    assert!(luna_pages > mcp_pages, "{luna_pages} vs {mcp_pages}");
    assert_eq!(luna, mcp);
    assert_eq!(luna.iter().collect::<HashSet<_>>().len(), luna.len());
    let count = w
        .ok(
            "market_count",
            json!({"filters": {"state": "Jalisco", "giro": "empaque"}}),
        )
        .await;
    assert_eq!(count.results[0].fields["total"], json!(luna.len()));
    assert!(TOOL_RESULT_CAP < crate::registry::def::result_cap(Surface::Mcp));
}

#[tokio::test]
async fn market_get_charges_the_branch_that_ran_and_counts_one_read() {
    let w = demo().await;
    let supplier = w
        .ok(
            "market_search",
            json!({"kind": "suppliers", "filters": {"has_awards": true}, "limit": 1}),
        )
        .await
        .results[0]
        .ref_
        .clone();
    let opportunity = w
        .ok(
            "market_search",
            json!({"kind": "opportunities", "limit": 1}),
        )
        .await
        .results[0]
        .ref_
        .clone();
    let reads_before = reads_used(&w).await;
    let env = w
        .ok(
            "market_get",
            json!({"record_ref": supplier, "include_awards": true}),
        )
        .await;
    let row = &env.results[0];
    assert_eq!(row.ref_, supplier);
    assert_eq!(row.fields["record_kind"], "supplier");
    assert!(!row.fields["awards"].as_array().unwrap().is_empty());
    assert!(row.fields["evidence"].as_array().is_some());
    let env = w.ok("market_get", json!({"record_ref": opportunity})).await;
    assert_eq!(env.results[0].fields["record_kind"], "opportunity");
    assert_eq!(reads_used(&w).await - reads_before, 2);
    let r = receipts(&w).await;
    let gets: Vec<_> = r.iter().filter(|(a, _, _)| a == "market_get").collect();
    assert_eq!(gets.len(), 2);
    assert!(gets.iter().any(|(_, b, n)| b == "supplier" && *n == 1));
    assert!(gets.iter().any(|(_, b, n)| b == "opportunity" && *n == 1));
    // On Luna's budget a supplier with many awards keeps its row and shortens the list.
    let env = w
        .call(
            "market_get",
            json!({"record_ref": supplier, "include_awards": true}),
            Surface::Luna,
        )
        .await
        .unwrap();
    assert_eq!(env.shown, 1);
    assert!(budget::size_chars(&env) <= TOOL_RESULT_CAP);
}

#[tokio::test]
async fn market_count_admits_and_charges_each_state_on_its_own() {
    let w = demo().await;
    let before = reads_used(&w).await;
    let env = w
        .ok(
            "market_count",
            json!({"filters": {"giro": "empaque"}, "states": ["Jalisco", "CDMX"]}),
        )
        .await;
    let total = env.results[0].fields["total"].as_u64().unwrap();
    let per: Vec<u64> = env.results[1..]
        .iter()
        .map(|r| r.fields["count"].as_u64().unwrap())
        .collect();
    assert_eq!(per.iter().sum::<u64>(), total);
    assert_eq!(env.results[2].fields["state"], "Ciudad de México");
    assert_eq!(reads_used(&w).await - before, 2);
    let charged: Vec<_> = receipts(&w)
        .await
        .into_iter()
        .filter(|(a, _, _)| a == "market_count")
        .map(|(_, b, _)| b)
        .collect();
    assert_eq!(charged.len(), 2);
    assert!(charged.contains(&"state:14".to_string()) && charged.contains(&"state:09".to_string()));

    // One bad state: it is neither admitted nor charged; total is null.
    let before = reads_used(&w).await;
    let env = w
        .ok(
            "market_count",
            json!({"states": ["Jalisco", "México", "Jalisco y Colima"]}),
        )
        .await;
    assert_eq!(env.results[0].fields["total"], Value::Null);
    assert_eq!(env.status, ResultStatus::Incomplete);
    assert!(env.results[1].fields["count"].as_u64().is_some());
    let e2: ErrorBody = serde_json::from_value(env.results[2].fields["error"].clone()).unwrap();
    assert_eq!(e2.code, ErrorCode::InvalidArgument);
    assert!(e2.hint.contains("Estado de México"));
    let e3: ErrorBody = serde_json::from_value(env.results[3].fields["error"].clone()).unwrap();
    assert_eq!(e3.allowed_values.unwrap().len(), 32);
    assert_eq!(reads_used(&w).await - before, 1);
    let n = receipts(&w)
        .await
        .iter()
        .filter(|(a, _, _)| a == "market_count")
        .count();
    assert_eq!(n, 3);

    // No states: one count, one charge.
    let env = w.ok("market_count", json!({"kind": "risks"})).await;
    assert!(env.results[0].fields["total"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn count_runs_out_of_credits_state_by_state() {
    let engine = testkit::engine().await.unwrap();
    engine.market.ensure_demo().await.unwrap();
    // Explorer: 30 créditos de inteligencia a month. Spend 29 of them.
    let caller = testkit::caller(&engine, Plan::Explorer, Role::Member)
        .await
        .unwrap();
    for i in 0..29 {
        engine
            .billing
            .charge(
                &caller,
                &crate::billing::ChargeSpec {
                    action: "test".into(),
                    branch: "test".into(),
                    amount: 1,
                    ledger: crate::billing::Ledger::Intelligence,
                },
                &crate::billing::ChargeContext {
                    surface: "mcp",
                    idempotency_key: &format!("k{i}"),
                    auto_policy: None,
                    call_ref: None,
                },
            )
            .await
            .unwrap();
    }
    let env = ok(
        &engine,
        &caller,
        "market_count",
        json!({"states": ["Jalisco", "Colima"]}),
    )
    .await;
    assert!(env.results[1].fields["count"].as_u64().is_some());
    let e: ErrorBody = serde_json::from_value(env.results[2].fields["error"].clone()).unwrap();
    assert_eq!(e.code, ErrorCode::InsufficientCredits);
    assert_eq!(env.results[0].fields["total"], Value::Null);
}

#[tokio::test]
async fn aggregate_history_compare_screen_and_capabilities_answer_from_the_data() {
    let w = demo().await;
    // Aggregate by buyer in Jalisco: groups sorted by amount, totals cover everything.
    let env = w
        .ok(
            "market_aggregate",
            json!({"filters": {"state": "Jalisco"}, "group_by": "buyer", "limit": 5}),
        )
        .await;
    assert_eq!(env.shown, 5);
    let amounts: Vec<f64> = env
        .results
        .iter()
        .map(|r| r.fields["amount_mxn"].as_f64().unwrap())
        .collect();
    assert!(amounts.windows(2).all(|w| w[0] >= w[1]));
    let total_awards = env.coverage.as_ref().unwrap()["total_awards"]
        .as_u64()
        .unwrap();
    let count = w
        .ok(
            "market_count",
            json!({"kind": "awards", "filters": {"state": "Jalisco"}}),
        )
        .await;
    assert_eq!(count.results[0].fields["total"], json!(total_awards));

    // History of the RFC of a supplier with awards.
    let s = w
        .ok(
            "market_search",
            json!({"kind": "suppliers", "filters": {"has_awards": true}, "limit": 1}),
        )
        .await;
    let rfc = s.results[0].fields["rfc"].as_str().unwrap().to_owned();
    let awards = s.results[0].fields["awards_count"].as_u64().unwrap();
    let env = w.ok("market_history", json!({ "rfc": rfc })).await;
    let by_year: u64 = env.results[0].fields["by_year"]
        .as_array()
        .unwrap()
        .iter()
        .map(|y| y["awards"].as_u64().unwrap())
        .sum();
    assert_eq!(by_year, awards);
    assert!(env
        .results
        .iter()
        .any(|r| r.fields.get("section") == Some(&json!("adjudicacion"))));

    // Compare two segments: each matches its own count.
    let env = w
        .ok(
            "market_compare",
            json!({"segments": [
                {"label": "Jalisco", "filters": {"state": "Jalisco"}},
                {"label": "Colima", "filters": {"state": "Colima"}}
            ]}),
        )
        .await;
    assert_eq!(env.shown, 2);
    assert_eq!(env.results[0].fields["awards"], json!(total_awards));

    // Screen: a marked RFC comes first with its evidence; a clean one says so.
    let risks = w
        .ok(
            "market_search",
            json!({"kind": "risks", "filters": {"mark_kind": "sat_69b_definitivo"}, "limit": 1}),
        )
        .await;
    let marked = risks.results[0].fields["rfc"].as_str().unwrap().to_owned();
    let env = w
        .ok("market_screen", json!({"rfcs": [rfc, marked, "XYZ"]}))
        .await;
    assert_eq!(env.results[0].fields["risk_level"], "con_marcas");
    assert!(!env.results[0].fields["evidence"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(env
        .results
        .iter()
        .any(|r| r.fields["risk_level"] == "no_verificable"));

    // Capabilities: coverage of every kind, client-safe dates, no internal ids.
    let env = w.ok("market_capabilities", json!({})).await;
    assert!(env.results[0].ref_label.contains("Proveedores"));
    assert!(env
        .results
        .iter()
        .any(|r| r.ref_ == "record:coverage:awards"
            && r.fields["date_from"].is_string()
            && r.fields["rows"].as_u64().unwrap() > 0));
    assert!(env.results[0].fields["last_import"].is_string());
    let text = serde_json::to_string(&env).unwrap();
    assert!(
        crate::registry::lexicon::violations(&text).is_empty(),
        "{text}"
    );
    assert!(!text.contains("mk_"), "no table names");
    let states = env.coverage.unwrap()["states"].as_array().unwrap().len();
    assert!(states > 0 && states <= 32);
}

#[tokio::test]
async fn legacy_market_names_resolve_to_the_new_tools() {
    let w = demo().await;
    let r = w
        .engine
        .call_tool(
            &w.caller,
            ToolRequest::new(
                "driftless_market_search_suppliers",
                json!({"query": "empaque", "state": "Jalisco", "limit": 5}),
                Surface::Mcp,
            ),
        )
        .await;
    assert_eq!(r.tool, "market_search");
    let env = r.outcome.unwrap();
    assert_eq!(env.shown, 5);
    assert!(env
        .results
        .iter()
        .all(|r| r.fields["state"] == "Jalisco" && r.ref_.starts_with("company:")));
    let note = env.next_action.unwrap();
    assert!(
        note.contains("market_search") && note.contains("suppliers"),
        "{note}"
    );
    // The count alias turns one state into `states`.
    let r = w
        .engine
        .call_tool(
            &w.caller,
            ToolRequest::new(
                "market_count_suppliers",
                json!({"state": "Jalisco", "giro": "empaque"}),
                Surface::Mcp,
            ),
        )
        .await;
    assert_eq!(r.tool, "market_count");
    let env = r.outcome.unwrap();
    assert_eq!(env.results[1].fields["state"], "Jalisco");
    // Every old name resolves to a registered tool.
    for name in crate::registry::alias::OLD_MARKET_NAMES {
        let target = crate::registry::alias::legacy(name)
            .map(|l| l.target)
            .unwrap_or(name);
        assert!(w.engine.registry.get(target).is_some(), "{name} → {target}");
        assert!(super::TOOL_NAMES.contains(&target));
    }
    let listed: Vec<_> = w
        .engine
        .registry
        .list(Surface::Mcp)
        .iter()
        .map(|d| d.name)
        .collect();
    for name in super::TOOL_NAMES {
        assert!(listed.contains(&name), "{name}");
    }
}

#[tokio::test]
async fn the_worked_examples_run() {
    let w = demo().await;
    for name in [
        "market_capabilities",
        "market_search",
        "market_count",
        "market_aggregate",
        "market_compare",
        "market_screen",
    ] {
        let def = &w.engine.registry.get(name).unwrap().def;
        for ex in &def.examples {
            let env = w.ok(name, ex.args.clone()).await;
            assert!(env.shown > 0, "{name} {}", ex.args);
        }
    }
}

#[test]
fn stages_follow_the_projection() {
    let reg = crate::tools::catalog();
    let names = |s: Stage| -> Vec<&str> { reg.for_stage(s).iter().map(|d| d.name).collect() };
    let buscando = names(Stage::Buscando);
    // `sin_criterio` is no longer derived (a first message can always search); old
    // logs that name it see what `buscando` sees.
    assert_eq!(names(Stage::SinCriterio), buscando);
    for t in [
        "market_search",
        "market_get",
        "market_count",
        "market_aggregate",
        "market_history",
        "market_compare",
        "market_screen",
    ] {
        assert!(buscando.contains(&t), "{t}");
    }
    // Coverage is a question people ask in words: it is in view when they do.
    let def = &reg.get("market_capabilities").unwrap().def;
    assert!(def.stages.is_empty());
    for s in Stage::ALL {
        assert!(!names(s).contains(&"market_capabilities"));
        assert!(reg
            .for_turn(s, "¿qué cobertura tienes de Jalisco?")
            .iter()
            .any(|d| d.name == "market_capabilities"));
    }
}
