//! Market domain behaviour on generated and real data: correct results, every bad
//! input as a typed error, importers idempotent on the real Mexican samples.

use std::sync::OnceLock;

use luna_engine::catalog::scian::Giro;
use luna_engine::market::import::{ocds, sat69b};
use luna_engine::market::*;
use luna_engine::Store;
use luna_protocol::error::ErrorCode;
use serde_json::json;
use sqlx::Row;

const SECRET: &[u8] = b"test-cursor-secret";

async fn demo_market() -> Market {
    // Each test gets its own database; the demo build takes about a second.
    let store = Store::open_temp().await.unwrap();
    let market = Market::new(store, SECRET.to_vec());
    assert!(market.ensure_demo().await.unwrap());
    market
}

fn code(err: luna_engine::EngineError) -> ErrorCode {
    err.code()
}

fn search(kind: MarketKind, filters: serde_json::Value) -> SearchArgs {
    parse_args(json!({"kind": kind, "filters": filters})).unwrap()
}

static FIXTURES: OnceLock<std::path::PathBuf> = OnceLock::new();
fn fixture(rel: &str) -> Vec<u8> {
    let base = FIXTURES
        .get_or_init(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"));
    std::fs::read(base.join(rel)).unwrap()
}

#[tokio::test]
async fn generator_is_deterministic_and_builds_the_demo_scene() {
    let a = demo_market().await;
    let b = demo_market().await;
    let sig = |m: &Market| {
        let pool = m.store().pool().clone();
        async move {
            sqlx::query("select count(*), sum(amount), min(supplier_id), max(date) from mk_awards")
                .fetch_one(&pool)
                .await
                .map(|r| {
                    (
                        r.get::<i64, _>(0),
                        r.get::<f64, _>(1),
                        r.get::<String, _>(2),
                        r.get::<String, _>(3),
                    )
                })
                .unwrap()
        }
    };
    assert_eq!(sig(&a).await, sig(&b).await);
    let n = sig(&a).await.0;
    assert_eq!(n, 15_000);

    // "40 fabricantes de empaque en Jalisco que ya le vendieron a gobierno".
    let count = a
        .count(
            &parse_args(
                json!({"filters": {"state": "Jalisco", "giro": "empaque", "has_awards": true}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    assert!(count.total.unwrap() >= 40, "{count:?}");
    let page = a
        .search(
            &search(
                MarketKind::Suppliers,
                json!({"state": "Jal.", "giro": "empaque", "has_awards": true}),
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(page.shown, 20);
    assert!(page.has_more && page.cursor.is_some());
    for row in &page.results {
        let MarketRow::Supplier(s) = row else {
            panic!("kind")
        };
        assert!(s.r#ref.starts_with("company:"));
        assert_eq!(s.state.as_deref(), Some("Jalisco"));
        assert!(
            Giro::Empaque.codes().contains(&s.scian.as_deref().unwrap()),
            "{s:?}"
        );
        assert!(s.awards_count > 0);
        assert!(
            s.evidence.iter().any(|e| e.kind == "adjudicacion"),
            "evidence"
        );
        assert!(luna_engine::catalog::rfc::check(s.rfc.as_deref().unwrap()).check_digit_ok);
    }
    // Sorted by amount sold to government.
    let totals: Vec<f64> = page
        .results
        .iter()
        .map(|r| match r {
            MarketRow::Supplier(s) => s.awards_total_mxn,
            _ => 0.0,
        })
        .collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]));
}

#[tokio::test]
async fn counts_match_brute_force_and_pages_walk_everything() {
    let m = demo_market().await;
    let pool = m.store().pool();
    // Brute force: awards to IMSS from Jalisco in 2021 by direct award.
    let expected: i64 = sqlx::query_scalar(
        "select count(*) from mk_awards where buyer = 'IMSS' and state_code = 14 and date between '2021-01-01' and '2021-12-31' and procedure = 'direct'",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    assert!(expected > 0);
    let filters = json!({"buyer": "imss", "state": "Jalisco", "date_from": "2021", "date_to": "2021", "procedure": "direct"});
    let c = m
        .count(&parse_args(json!({"kind": "awards", "filters": filters})).unwrap())
        .await
        .unwrap();
    assert_eq!(c.total, Some(expected as u64));

    // Walking every page with the sealed cursor returns exactly `expected` distinct rows.
    let mut args = search(MarketKind::Awards, filters.clone());
    args.limit = Some(50);
    let mut seen = std::collections::HashSet::new();
    loop {
        let page = m.search(&args, Some(17)).await.unwrap();
        assert!(page.shown <= 17, "page cap pushed down");
        for r in &page.results {
            assert!(seen.insert(r.ref_str().to_string()));
        }
        match page.cursor {
            Some(c) => args.cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(seen.len() as i64, expected);

    // Per-state counts are independent and sum to the total.
    let per = m
        .count(&parse_args(json!({"filters": {"giro": "empaque"}, "states": ["Jalisco", "CDMX", "Edomex", "Nuevo León"]})).unwrap())
        .await
        .unwrap();
    let sum: u64 = per.states.iter().map(|s| s.count.unwrap()).sum();
    assert_eq!(per.total, Some(sum));
    let codes = Giro::Empaque
        .codes()
        .iter()
        .map(|c| format!("'{c}'"))
        .collect::<Vec<_>>()
        .join(",");
    let jal: i64 = sqlx::query_scalar(&format!(
        "select count(*) from mk_suppliers where state_code = 14 and scian in ({codes})"
    ))
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(per.states[0].count, Some(jal as u64));

    // One bad state: that entry fails, the others still count, total is null.
    let mixed = m
        .count(&parse_args(json!({"states": ["Jalisco", "México"]})).unwrap())
        .await
        .unwrap();
    assert!(mixed.states[0].count.is_some());
    assert_eq!(
        mixed.states[1].error.as_ref().unwrap().code,
        ErrorCode::InvalidArgument
    );
    assert_eq!(mixed.total, None);
}

#[tokio::test]
async fn full_text_folds_accents_and_case() {
    let m = demo_market().await;
    let a = m
        .search(
            &parse_args(json!({"kind": "suppliers", "query": "ENVASES", "filters": {}})).unwrap(),
            None,
        )
        .await
        .unwrap();
    let b = m
        .search(
            &parse_args(json!({"kind": "suppliers", "query": "envases", "filters": {}})).unwrap(),
            None,
        )
        .await
        .unwrap();
    assert!(a.shown > 0);
    let refs = |p: &SearchPage| {
        p.results
            .iter()
            .map(|r| r.ref_str().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(refs(&a), refs(&b));
    // "plasticos" without accent finds "Plásticos"; "tecnologicas" finds "Tecnológicas".
    for q in ["plasticos", "TECNOLOGICAS", "Nunez"] {
        let p = m
            .search(
                &parse_args(json!({"kind": "suppliers", "query": q, "filters": {}})).unwrap(),
                None,
            )
            .await
            .unwrap();
        assert!(p.shown > 0, "{q}");
    }
    let p = m
        .search(&parse_args(json!({"kind": "awards", "query": "cartón corrugado", "filters": {"buyer": "IMSS"}})).unwrap(), None)
        .await
        .unwrap();
    assert!(p.shown > 0);
    for r in &p.results {
        let MarketRow::Award(a) = r else { panic!() };
        assert_eq!(a.buyer, "IMSS");
        assert!(a.title.to_lowercase().contains("cartón corrugado"));
    }
}

/// Awards found by text come newest first (date, then id), and walking the pages
/// returns exactly the awards whose title or supplier has the words, once each, in
/// that order: brute force over every award of the state.
#[tokio::test]
async fn awards_by_text_come_newest_first_and_pages_walk_every_match() {
    let m = demo_market().await;
    let rows =
        sqlx::query("select id, title, supplier_name, date from mk_awards where state_code = 14")
            .fetch_all(m.store().pool())
            .await
            .unwrap();
    let terms = luna_engine::catalog::text::terms("cartón", 8);
    let matches = |text: &str| {
        let folded = luna_engine::catalog::text::fold(text);
        let words: Vec<&str> = folded
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        terms
            .iter()
            .all(|t| words.iter().any(|w| w.starts_with(t.as_str())))
    };
    let mut expected: Vec<(String, i64)> = rows
        .iter()
        .filter(|r| {
            matches(&r.get::<String, _>("title")) || matches(&r.get::<String, _>("supplier_name"))
        })
        .map(|r| {
            (
                r.get::<Option<String>, _>("date").unwrap_or_default(),
                r.get::<i64, _>("id"),
            )
        })
        .collect();
    expected.sort_by(|a, b| b.cmp(a));
    assert!(
        expected.len() > 60,
        "more than one page: {}",
        expected.len()
    );

    let mut args: SearchArgs = parse_args(
        json!({"kind": "awards", "query": "cartón", "filters": {"state": "Jalisco"}, "limit": 50}),
    )
    .unwrap();
    let mut walked = Vec::new();
    loop {
        let page = m.search(&args, None).await.unwrap();
        for r in &page.results {
            let MarketRow::Award(a) = r else { panic!() };
            walked.push((a.date.clone().unwrap_or_default(), a.id));
        }
        match page.cursor {
            Some(c) => args.cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(walked, expected);
}

#[tokio::test]
async fn every_bad_input_is_a_typed_error() {
    let m = demo_market().await;
    // Unknown filter key for that kind (mark_kind is a risks filter).
    let err = parse_args::<SearchArgs>(
        json!({"kind": "suppliers", "filters": {"mark_kind": "sat_69b_definitivo"}}),
    )
    .unwrap_err();
    let body = err.body();
    assert_eq!(body.code, ErrorCode::InvalidArgument);
    assert!(body.allowed_values.unwrap().contains(&"giro".to_string()));
    // Totally unknown key.
    let body = parse_args::<SearchArgs>(json!({"kind": "awards", "filters": {"color": "rojo"}}))
        .unwrap_err()
        .body();
    assert!(body.allowed_values.unwrap().contains(&"buyer".to_string()));
    // Same check in the typed API (a caller that built the struct directly).
    let args = SearchArgs {
        kind: MarketKind::Opportunities,
        query: None,
        filters: MarketFilters {
            has_awards: Some(true),
            ..Default::default()
        },
        states: vec![],
        limit: None,
        cursor: None,
    };
    assert_eq!(
        code(m.search(&args, None).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );

    // "México" as a state: rejected with a hint; two states in one field.
    let body = m
        .search(
            &search(MarketKind::Suppliers, json!({"state": "México"})),
            None,
        )
        .await
        .unwrap_err()
        .body();
    assert_eq!(body.code, ErrorCode::InvalidArgument);
    assert!(body.hint.contains("Estado de México"));
    let body = m
        .search(
            &search(MarketKind::Suppliers, json!({"state": "Jalisco y Colima"})),
            None,
        )
        .await
        .unwrap_err()
        .body();
    assert_eq!(body.allowed_values.unwrap().len(), 32);

    // limit 51 and 0.
    for limit in [0, 51] {
        let mut args = search(MarketKind::Suppliers, json!({}));
        args.limit = Some(limit);
        assert_eq!(
            code(m.search(&args, None).await.unwrap_err()),
            ErrorCode::InvalidArgument
        );
    }

    // Cursor reused with another filter → CURSOR_QUERY_MISMATCH; forged → CURSOR_INVALID.
    let first = m
        .search(
            &search(MarketKind::Suppliers, json!({"state": "Jalisco"})),
            None,
        )
        .await
        .unwrap();
    let cursor = first.cursor.unwrap();
    let mut other = search(MarketKind::Suppliers, json!({"state": "Colima"}));
    other.cursor = Some(cursor.clone());
    assert_eq!(
        code(m.search(&other, None).await.unwrap_err()),
        ErrorCode::CursorQueryMismatch
    );
    let mut other_kind = search(MarketKind::Awards, json!({"state": "Jalisco"}));
    other_kind.cursor = Some(cursor.clone());
    assert_eq!(
        code(m.search(&other_kind, None).await.unwrap_err()),
        ErrorCode::CursorQueryMismatch
    );
    let mut forged = search(MarketKind::Suppliers, json!({"state": "Jalisco"}));
    let (body, tag) = cursor.split_once('.').unwrap();
    let mut tampered = body.to_string();
    tampered.replace_range(0..1, if body.starts_with('e') { "f" } else { "e" });
    forged.cursor = Some(format!("{tampered}.{tag}"));
    assert_eq!(
        code(m.search(&forged, None).await.unwrap_err()),
        ErrorCode::CursorInvalid
    );
    forged.cursor = Some("not-a-cursor".into());
    assert_eq!(
        code(m.search(&forged, None).await.unwrap_err()),
        ErrorCode::CursorInvalid
    );
    // A cursor sealed with another secret is invalid too.
    let stranger = Market::new(m.store().clone(), b"another".to_vec());
    let mut same = search(MarketKind::Suppliers, json!({"state": "Jalisco"}));
    same.cursor = Some(cursor.clone());
    assert_eq!(
        code(stranger.search(&same, None).await.unwrap_err()),
        ErrorCode::CursorInvalid
    );
    // Expired.
    assert_eq!(
        code(m.search_at(&same, None, i64::MAX / 2).await.unwrap_err()),
        ErrorCode::CursorInvalid
    );

    // 51 RFCs, 0 RFCs.
    let rfcs: Vec<String> = (0..51).map(|_| "XAXX010101000".to_string()).collect();
    assert_eq!(
        code(m.screen(&ScreenArgs { rfcs }).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(m.screen(&ScreenArgs { rfcs: vec![] }).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );

    // Six states in a count; state in both places; states on risks.
    let six = parse_args::<CountArgs>(
        json!({"states": ["Jalisco", "Colima", "Sonora", "Puebla", "Yucatán", "Oaxaca"]}),
    )
    .unwrap();
    assert_eq!(
        code(m.count(&six).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );
    let both =
        parse_args::<CountArgs>(json!({"filters": {"state": "Jalisco"}, "states": ["Colima"]}))
            .unwrap();
    assert_eq!(
        code(m.count(&both).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );
    let risks = parse_args::<CountArgs>(json!({"kind": "risks", "states": ["Colima"]})).unwrap();
    assert_eq!(
        code(m.count(&risks).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );

    // Unknown kind, group_by, bad refs, bad dates, unknown giro, compare sizes.
    assert_eq!(
        code(parse_args::<SearchArgs>(json!({"kind": "companies"})).unwrap_err()),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(parse_args::<AggregateArgs>(json!({"group_by": "color"})).unwrap_err()),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(parse_args::<SearchArgs>(json!({"kind": "awards", "extra": 1})).unwrap_err()),
        ErrorCode::InvalidArgument
    );
    for r in ["foo", "record:award:abc", "record:tender:1"] {
        let args = GetArgs {
            record_ref: r.into(),
            include_awards: false,
        };
        assert_eq!(
            code(m.get(&args).await.unwrap_err()),
            ErrorCode::InvalidArgument,
            "{r}"
        );
    }
    let missing = GetArgs {
        record_ref: "company:NOPE".into(),
        include_awards: false,
    };
    assert_eq!(
        code(m.get(&missing).await.unwrap_err()),
        ErrorCode::NotFound
    );
    let bad_date = search(MarketKind::Awards, json!({"date_from": "31/12/2020"}));
    assert_eq!(
        code(m.search(&bad_date, None).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );
    let bad_month = search(MarketKind::Awards, json!({"date_from": "2024-13"}));
    assert_eq!(
        code(m.search(&bad_month, None).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );
    // A month is a period: «entre enero y junio del 2024», «este mes».
    let months = search(
        MarketKind::Awards,
        json!({"date_from": "2024-01", "date_to": "2024-02"}),
    );
    let page = m.search(&months, None).await.unwrap();
    assert!(page.shown > 0);
    for r in &page.results {
        let MarketRow::Award(a) = r else { panic!() };
        let d = a.date.clone().unwrap_or_default();
        assert!(("2024-01-01"..="2024-02-29").contains(&d.as_str()), "{d}");
    }
    let bad_giro = search(MarketKind::Suppliers, json!({"giro": "astronautas"}));
    assert_eq!(
        code(m.search(&bad_giro, None).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );
    let one = CompareArgs {
        segments: vec![Segment {
            label: "a".into(),
            filters: Default::default(),
        }],
    };
    assert_eq!(
        code(m.compare(&one).await.unwrap_err()),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(
            m.history(&HistoryArgs {
                rfc: "P00268".into()
            })
            .await
            .unwrap_err()
        ),
        ErrorCode::InvalidArgument
    );
}

#[tokio::test]
async fn get_aggregate_history_compare_and_screen() {
    let m = demo_market().await;
    let pool = m.store().pool();
    let page = m
        .search(
            &search(MarketKind::Suppliers, json!({"has_awards": true})),
            None,
        )
        .await
        .unwrap();
    let MarketRow::Supplier(top) = &page.results[0] else {
        panic!()
    };
    let got = m
        .get(&GetArgs {
            record_ref: top.r#ref.clone(),
            include_awards: true,
        })
        .await
        .unwrap();
    assert_eq!(got.branch, GetBranch::Supplier);
    let MarketRecord::Supplier(detail) = &got.record else {
        panic!()
    };
    assert_eq!(
        detail.awards.as_ref().unwrap().len() as i64,
        top.awards_count.min(50)
    );

    let awards = m
        .search(&search(MarketKind::Awards, json!({})), None)
        .await
        .unwrap();
    let got = m
        .get(&GetArgs {
            record_ref: awards.results[0].ref_str().into(),
            include_awards: false,
        })
        .await
        .unwrap();
    assert_eq!(got.branch, GetBranch::Award);
    let opps = m
        .search(
            &search(MarketKind::Opportunities, json!({"status": "active"})),
            None,
        )
        .await
        .unwrap();
    assert!(opps.shown > 0);
    let got = m
        .get(&GetArgs {
            record_ref: opps.results[0].ref_str().into(),
            include_awards: false,
        })
        .await
        .unwrap();
    assert_eq!(got.branch, GetBranch::Opportunity);

    // Aggregate by buyer equals brute force.
    let agg = m
        .aggregate(
            &parse_args(json!({"filters": {"state": "Jalisco"}, "group_by": "buyer", "limit": 50}))
                .unwrap(),
        )
        .await
        .unwrap();
    let rows = sqlx::query(
        "select buyer, count(*), sum(amount) from mk_awards where state_code = 14 group by buyer",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(agg.groups.len(), rows.len());
    for row in rows {
        let buyer: String = row.get(0);
        let g = agg.groups.iter().find(|g| g.key == buyer).unwrap();
        assert_eq!(g.awards as i64, row.get::<i64, _>(1));
        assert!((g.amount_mxn - row.get::<f64, _>(2)).abs() < 0.01);
    }
    let total: u64 = agg.groups.iter().map(|g| g.awards).sum();
    assert_eq!(total, agg.total_awards);
    let by_year = m
        .aggregate(&parse_args(json!({"group_by": "year"})).unwrap())
        .await
        .unwrap();
    assert_eq!(by_year.groups.len(), 7);
    let by_state = m
        .aggregate(&parse_args(json!({"group_by": "state", "limit": 5})).unwrap())
        .await
        .unwrap();
    assert_eq!(by_state.shown, 5);
    assert!(by_state.has_more);

    // History of the top supplier.
    let rfc = top.rfc.clone().unwrap();
    let h = m
        .history(&HistoryArgs {
            rfc: rfc.to_lowercase(),
        })
        .await
        .unwrap();
    assert_eq!(
        h.by_year.iter().map(|y| y.awards).sum::<u64>() as i64,
        top.awards_count
    );
    assert!(h.warnings.is_empty());

    // Compare two segments.
    let cmp = m
        .compare(
            &parse_args(json!({"segments": [
                {"label": "Jalisco", "filters": {"state": "Jalisco"}},
                {"label": "Nuevo León", "filters": {"state": "NL"}}
            ]}))
            .unwrap(),
        )
        .await
        .unwrap();
    let jal: i64 = sqlx::query_scalar("select count(*) from mk_awards where state_code = 14")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(cmp.segments[0].awards as i64, jal);
    assert!(cmp.segments[1].top_buyers.len() <= 3);

    // Screen: a marked RFC, a clean one, a bad check digit (warning) and garbage.
    let marked: String = sqlx::query_scalar(
        "select rfc from mk_risks where mark_kind = 'sat_69b_definitivo' limit 1",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    let s = m
        .screen(&ScreenArgs {
            rfcs: vec![
                marked.clone(),
                rfc.clone(),
                "AAC0903183F6".into(),
                "hola".into(),
            ],
        })
        .await
        .unwrap();
    assert_eq!(s.results[0].risk_level, "con_marcas");
    assert!(!s.results[0].marks.is_empty());
    assert!(s.results[1].known_supplier);
    assert!(!s.results[2].check_digit_ok && s.results[2].format_ok);
    assert_eq!(s.results[2].warnings.len(), 1);
    assert_eq!(s.results[3].risk_level, "no_verificable");

    let cov = m.coverage().await.unwrap();
    assert_eq!(cov.kinds[2].rows, 15_000);
    assert!(cov.states.iter().any(|s| s.state == "Jalisco"));
    assert!(cov.summary.contains("Proveedores"));
}

#[tokio::test]
async fn real_ocds_samples_import_become_searchable_and_reimport_is_a_noop() {
    let store = Store::open_temp().await.unwrap();
    let m = Market::new(store.clone(), SECRET.to_vec());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ocds");
    let mut files: Vec<_> = ["inai", "jalisco", "fictional"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(dir.join(d))
                .unwrap()
                .map(|e| e.unwrap().path())
        })
        .collect();
    files.sort();
    let mut first = 0;
    let mut skipped_reasons = Vec::new();
    for f in &files {
        let r = ocds::import_ocds(&store, &std::fs::read(f).unwrap())
            .await
            .unwrap();
        first += r.inserted.total();
        skipped_reasons.extend(r.skipped.iter().map(|s| s.reason.clone()));
    }
    assert!(first > 0);
    // Unsuccessful INAI awards are skipped with a reason, not silently dropped.
    assert!(skipped_reasons.iter().any(|r| r.contains("unsuccessful")));
    for f in &files {
        let r = ocds::import_ocds(&store, &std::fs::read(f).unwrap())
            .await
            .unwrap();
        assert_eq!(r.inserted.total(), 0, "{f:?} {r:?}");
        assert_eq!(r.updated, 0, "{f:?} {r:?}");
    }
    // Searchable by folded name; Spanish roles recognised; RFC parties keyed by RFC.
    let p = m
        .search(
            &parse_args(json!({"kind": "suppliers", "query": "hectarea", "filters": {}})).unwrap(),
            None,
        )
        .await
        .unwrap();
    let MarketRow::Supplier(s) = &p.results[0] else {
        panic!()
    };
    assert_eq!(s.rfc.as_deref(), Some("HPR060210B71"));
    assert_eq!(s.state.as_deref(), Some("Ciudad de México"));
    // Jalisco state-registry supplier, no RFC; award with amount.
    let p = m
        .search(
            &parse_args(json!({"kind": "awards", "query": "formas impresas", "filters": {}}))
                .unwrap(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        p.shown, 1,
        "one award despite four releases of the same process"
    );
    let MarketRow::Award(a) = &p.results[0] else {
        panic!()
    };
    assert_eq!(a.supplier_id, "PROV-GOB-JAL:P00268");
    assert_eq!(a.amount, Some(9_396_000.0));
    // "procurementMethod: open" but "Adjudicación directa" in the details → direct.
    let p = m
        .search(
            &parse_args(json!({"kind": "awards", "filters": {"rfc": "ATR020709BP7"}})).unwrap(),
            None,
        )
        .await
        .unwrap();
    let MarketRow::Award(a) = &p.results[0] else {
        panic!()
    };
    assert_eq!(a.procedure.as_deref(), Some("direct"));
    assert_eq!(a.currency, "USD");
    // Tenders with no award still become Licitaciones.
    let c = m
        .count(&parse_args(json!({"kind": "opportunities"})).unwrap())
        .await
        .unwrap();
    assert!(c.total.unwrap() >= 11);
    let cov = m.coverage().await.unwrap();
    assert!(cov.sources.iter().any(|s| s.kind == "ocds"));
}

#[tokio::test]
async fn real_sat69b_sample_imports_with_quirks_and_reimport_is_a_noop() {
    let store = Store::open_temp().await.unwrap();
    let m = Market::new(store.clone(), SECRET.to_vec());
    let bytes = fixture("sat69b/Listado_Completo_69-B.sample.cp1252.csv");
    let r = sat69b::import_sat69b(&store, &bytes).await.unwrap();
    let suppressed = r
        .skipped
        .iter()
        .filter(|s| s.reason.contains("suprimido"))
        .count();
    assert_eq!(suppressed, 3);
    assert_eq!(
        r.inserted.risks as usize + r.unchanged as usize + r.skipped.len(),
        272
    );
    assert!(r.warnings.iter().any(|w| w.contains("dígito verificador")));
    let again = sat69b::import_sat69b(&store, &bytes).await.unwrap();
    assert_eq!(again.inserted.total(), 0);
    // Same RFC twice (different notices) → two marks; court note split from the name.
    let s = m
        .screen(&ScreenArgs {
            rfcs: vec!["AAS110331G59".into(), "AAA140116926".into()],
        })
        .await
        .unwrap();
    assert_eq!(s.results[0].marks.len(), 2);
    assert!(s.results[0]
        .marks
        .iter()
        .any(|x| x.note.as_deref().is_some_and(|n| n.contains("sentencia"))));
    assert!(!s.results[0].marks.iter().any(|x| x.name.contains("//")));
    // Two dates in one cell: the latest.
    let mark = &s.results[1].marks[0];
    assert_eq!(mark.mark_kind, "sat_69b_definitivo");
    assert_eq!(mark.date.as_deref(), Some("2022-05-25"));
    // Encoding: names with accents decoded from Windows-1252 and searchable folded.
    let p = m
        .search(&parse_args(json!({"kind": "risks", "query": "consultoria", "filters": {"mark_kind": "sat_69b_definitivo"}})).unwrap(), None)
        .await
        .unwrap();
    assert!(p.shown > 0);
    let h = m
        .history(&HistoryArgs {
            rfc: "AAA140116926".into(),
        })
        .await
        .unwrap();
    assert_eq!(h.marks.len(), 1);
}

/// Free text + state is answered inside the full-text index (the `st` token of
/// migration 0014): the same rows as testing each text match's state, a state token
/// never matches as text, and a supplier whose state an import fills in moves with it.
#[tokio::test]
async fn text_and_state_intersect_inside_the_index_with_the_same_rows() {
    let m = demo_market().await;
    let pool = m.store().pool();
    for (kind, table, text, state, code) in [
        (MarketKind::Awards, "mk_awards", "cartón", "Jalisco", 14),
        (
            MarketKind::Suppliers,
            "mk_suppliers",
            "empaques",
            "Nuevo León",
            19,
        ),
    ] {
        // Every row of the state whose folded text has a word starting with the term,
        // counted here without any index: the same on both engines.
        let columns = match kind {
            MarketKind::Awards => "title || ' ' || supplier_name",
            _ => "name",
        };
        let texts: Vec<String> = sqlx::query_scalar(&format!(
            "select {columns} from {table} where state_code = {code}"
        ))
        .fetch_all(pool)
        .await
        .unwrap();
        let term = luna_engine::catalog::text::fold(text);
        let expected = texts
            .iter()
            .filter(|t| {
                luna_engine::catalog::text::fold(t)
                    .split(|c: char| !c.is_alphanumeric())
                    .any(|w| w.starts_with(&term))
            })
            .count() as i64;
        assert!(expected > 0, "{table}");
        let mut args = search(kind, json!({"state": state}));
        args.query = Some(text.to_owned());
        args.limit = Some(50);
        let mut seen = std::collections::HashSet::new();
        loop {
            let page = m.search(&args, None).await.unwrap();
            for r in &page.results {
                assert!(seen.insert(r.ref_str().to_string()));
            }
            match page.cursor {
                Some(c) => args.cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen.len() as i64, expected, "{table}");
    }

    // "e14" is Jalisco's token in the index, not a word anyone wrote.
    let mut args = search(MarketKind::Awards, json!({}));
    args.query = Some("e14".into());
    assert_eq!(m.search(&args, None).await.unwrap().shown, 0);

    // An import that fills in a supplier's state moves it in the index too.
    let id: String =
        sqlx::query_scalar("select id from mk_suppliers where state_code = 14 limit 1")
            .fetch_one(pool)
            .await
            .unwrap();
    let name: String = sqlx::query_scalar("select name from mk_suppliers where id = $1")
        .bind(&id)
        .fetch_one(pool)
        .await
        .unwrap();
    sqlx::query("update mk_suppliers set state_code = 19 where id = $1")
        .bind(&id)
        .execute(pool)
        .await
        .unwrap();
    let word = name.split_whitespace().next().unwrap().to_owned();
    let found = |state: &'static str| {
        let mut args = search(MarketKind::Suppliers, json!({"state": state}));
        args.query = Some(word.clone());
        args.limit = Some(50);
        let m = &m;
        async move {
            let mut all = Vec::new();
            loop {
                let page = m.search(&args, None).await.unwrap();
                all.extend(page.results.iter().map(|r| r.ref_str().to_string()));
                match page.cursor {
                    Some(c) => args.cursor = Some(c),
                    None => return all,
                }
            }
        }
    };
    assert!(found("Nuevo León").await.iter().any(|r| r.ends_with(&id)));
    assert!(!found("Jalisco").await.iter().any(|r| r.ends_with(&id)));
}

/// Awards of the market tables as `(supplier_id, amount, date, buyer)`, sorted.
async fn award_rows(store: &Store) -> Vec<(String, Option<f64>, Option<String>, String)> {
    sqlx::query("select supplier_id, amount, date, buyer from mk_awards order by supplier_id")
        .fetch_all(store.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect()
}

#[tokio::test]
async fn federal_contracts_without_awards_become_adjudicaciones_with_supplier_and_amount() {
    let store = Store::open_temp().await.unwrap();
    let r = ocds::import_ocds(&store, &fixture("ocds/apf/record-package-apf.json"))
        .await
        .unwrap();
    assert_eq!(r.inserted.awards, 4, "{r:?}");
    assert_eq!(r.inserted.suppliers, 4, "{r:?}");
    let rows = award_rows(&store).await;
    let by = |id: &str| rows.iter().find(|a| a.0 == id).cloned().unwrap();
    // The contract's own supplier; the amount with tax wins over the base value.
    let a = by("SLM1503129G0");
    assert_eq!(a.1, Some(116_000.0));
    assert_eq!(a.2.as_deref(), Some("2024-03-20"));
    assert_eq!(a.3, "Unidad de Abasto Regional Norte (ficticia)");
    // An individual's hashed RFC: kept without RFC under its hash; only `value`.
    let h = by("rfc-hash:7f3c9a1be4d2086f5a1c3e9b7d20f4a6");
    assert_eq!(h.1, Some(48_500.5));
    // No suppliers in the contract: the party with role supplier; the amount from the
    // budget breakdown; the date from the contract period.
    let t = by("TLO180725P57");
    assert_eq!(t.1, Some(300_000.0));
    assert_eq!(t.2.as_deref(), Some("2024-05-02"));
    // A record with only releases.
    assert_eq!(by("CIN0911203K2").1, Some(1_200_000.0));
    // Suppliers carry their state and award totals.
    let (state, count, total): (Option<i64>, i64, f64) = sqlx::query_as(
        "select state_code, awards_count, awards_total from mk_suppliers where id = 'SLM1503129G0'",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!((state, count, total), (Some(14), 1, 116_000.0));
    let again = ocds::import_ocds(&store, &fixture("ocds/apf/record-package-apf.json"))
        .await
        .unwrap();
    assert_eq!(again.inserted.total(), 0, "{again:?}");
    assert_eq!(award_rows(&store).await.len(), 4);
}

/// The APF fixture as other shapes: bare compiled releases as JSON Lines, record
/// packages one per line, and the package gzipped.
fn apf_variants() -> Vec<(&'static str, Vec<u8>)> {
    use std::io::Write;
    let bytes = fixture("ocds/apf/record-package-apf.json");
    let pkg: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let records = pkg["records"].as_array().unwrap();
    let mut release_lines = String::new();
    let mut package_lines = String::new();
    for rec in records {
        let release = rec
            .get("compiledRelease")
            .cloned()
            .unwrap_or_else(|| rec["releases"][0].clone());
        release_lines.push_str(&serde_json::to_string(&release).unwrap());
        release_lines.push('\n');
        let mut one = pkg.clone();
        one["records"] = json!([rec]);
        package_lines.push_str(&serde_json::to_string(&one).unwrap());
        package_lines.push_str("\r\n");
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    let mut gz_lines = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz_lines.write_all(release_lines.as_bytes()).unwrap();
    vec![
        ("releases.jsonl", release_lines.into_bytes()),
        ("packages.jsonl", package_lines.into_bytes()),
        ("package.json.gz", gz.finish().unwrap()),
        ("releases.jsonl.gz", gz_lines.finish().unwrap()),
    ]
}

#[tokio::test]
async fn json_lines_and_gzip_of_every_shape_import_the_same_adjudicaciones() {
    let plain = Store::open_temp().await.unwrap();
    ocds::import_ocds(&plain, &fixture("ocds/apf/record-package-apf.json"))
        .await
        .unwrap();
    let expected = award_rows(&plain).await;
    assert_eq!(expected.len(), 4);
    let dir = std::env::temp_dir().join(format!("luna-ocds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in apf_variants() {
        let store = Store::open_temp().await.unwrap();
        // Through a file, as the CLI reads it.
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let r = ocds::import_ocds_from(&store, ocds::Input::File(path), ocds::Options::default())
            .await
            .unwrap();
        assert_eq!(r.inserted.awards, 4, "{name}: {r:?}");
        assert_eq!(award_rows(&store).await, expected, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One release of process `ocid-upd-1`: a tender and one award of `amount`.
fn release_of(date: &str, amount: f64, status: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "publisher": {"name": "Portal de prueba"},
        "releases": [{
            "ocid": "ocds-test-upd-1", "id": format!("upd-{date}"), "date": date, "tag": ["award"],
            "parties": [
                {"id": "B", "name": "Comprador de prueba", "roles": ["buyer"]},
                {"id": "S", "name": "Talleres Loma", "identifier": {"scheme": "MX-RFC", "id": "TLO180725P57"}, "roles": ["supplier"]}
            ],
            "buyer": {"id": "B", "name": "Comprador de prueba"},
            "tender": {"id": "T", "title": "Servicio de prueba", "status": status, "value": {"amount": amount, "currency": "MXN"}},
            "awards": [{"id": "A1", "status": "active", "date": "2024-01-10", "suppliers": [{"id": "S"}], "value": {"amount": amount, "currency": "MXN"}}]
        }]
    }))
    .unwrap()
}

#[tokio::test]
async fn a_newer_release_updates_figures_and_keeps_history_an_older_one_never_overwrites() {
    let store = Store::open_temp().await.unwrap();
    let figures = |store: Store| async move {
        let a: (Option<f64>,) = sqlx::query_as("select amount from mk_awards")
            .fetch_one(store.pool())
            .await
            .unwrap();
        let o: (Option<f64>, Option<String>) =
            sqlx::query_as("select amount, status from mk_opportunities")
                .fetch_one(store.pool())
                .await
                .unwrap();
        let s: (f64,) = sqlx::query_as("select awards_total from mk_suppliers")
            .fetch_one(store.pool())
            .await
            .unwrap();
        (a.0, o.0, o.1, s.0)
    };
    let v1 = release_of("2024-01-15T10:00:00Z", 100.0, "active");
    ocds::import_ocds(&store, &v1).await.unwrap();
    let v2 = release_of("2024-02-20T10:00:00-06:00", 150.0, "complete");
    let r = ocds::import_ocds(&store, &v2).await.unwrap();
    assert_eq!(r.inserted.total(), 0, "{r:?}");
    assert_eq!(r.updated, 2, "the Licitación and the Adjudicación: {r:?}");
    assert_eq!(
        figures(store.clone()).await,
        (Some(150.0), Some(150.0), Some("complete".into()), 150.0)
    );
    let history: Vec<(String, Option<f64>, Option<String>)> =
        sqlx::query_as("select kind, amount, status from mk_history order by kind")
            .fetch_all(store.pool())
            .await
            .unwrap();
    assert_eq!(
        history,
        [
            ("award".into(), Some(100.0), None),
            ("opportunity".into(), Some(100.0), Some("active".into()))
        ]
    );
    // An older release, imported late, changes nothing.
    let v0 = release_of("2023-12-01T00:00:00Z", 80.0, "planning");
    let r = ocds::import_ocds(&store, &v0).await.unwrap();
    assert_eq!((r.inserted.total(), r.updated), (0, 0), "{r:?}");
    assert_eq!(
        figures(store.clone()).await,
        (Some(150.0), Some(150.0), Some("complete".into()), 150.0)
    );
    // The same file again: recognised, nothing touched.
    let r = ocds::import_ocds(&store, &v2).await.unwrap();
    assert!(r.notes.iter().any(|n| n.contains("ya se importó")), "{r:?}");
    let n: (i64,) = sqlx::query_as("select count(*) from mk_history")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(n.0, 2);
}

/// A batch writes its Licitaciones and Adjudicaciones together; releases of one
/// process inside the same batch still land as if written one by one: the first is
/// inserted, a newer one replaces its figures (with history), an older one changes
/// nothing.
#[tokio::test]
async fn releases_of_one_process_in_one_batch_apply_in_order() {
    let store = Store::open_temp().await.unwrap();
    let release = |bytes: Vec<u8>| {
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        v["releases"][0].clone()
    };
    let package = json!({
        "publisher": {"name": "Portal de prueba"},
        "releases": [
            release(release_of("2024-01-15T10:00:00Z", 100.0, "active")),
            release(release_of("2024-02-20T10:00:00-06:00", 150.0, "complete")),
            release(release_of("2023-12-01T00:00:00Z", 80.0, "planning")),
        ]
    });
    let r = ocds::import_ocds(&store, &serde_json::to_vec(&package).unwrap())
        .await
        .unwrap();
    assert_eq!(
        (r.inserted.opportunities, r.inserted.awards, r.updated),
        (1, 1, 2),
        "{r:?}"
    );
    let award: (Option<f64>, Option<String>) =
        sqlx::query_as("select amount, release_id from mk_awards")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(
        award,
        (Some(150.0), Some("upd-2024-02-20T10:00:00-06:00".into()))
    );
    let opportunity: (Option<f64>, Option<String>) =
        sqlx::query_as("select amount, status from mk_opportunities")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(opportunity, (Some(150.0), Some("complete".into())));
    let supplier: (i64, f64) =
        sqlx::query_as("select awards_count, awards_total from mk_suppliers")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(supplier, (1, 150.0));
    let history: Vec<(String, Option<f64>)> =
        sqlx::query_as("select kind, amount from mk_history order by kind")
            .fetch_all(store.pool())
            .await
            .unwrap();
    assert_eq!(
        history,
        [
            ("award".into(), Some(100.0)),
            ("opportunity".into(), Some(100.0))
        ]
    );
}

/// Supplier totals are added batch by batch during an import (not recomputed from
/// every award of the supplier): after a multi-batch import, and after a newer
/// release changes figures, they still equal what the awards say.
#[tokio::test]
async fn supplier_totals_added_per_batch_equal_a_recount_of_their_awards() {
    let store = Store::open_temp().await.unwrap();
    let mut bytes = Vec::new();
    ocds::sample::write_record_package(&mut bytes, 1_500, 7).unwrap();
    let opts = ocds::Options {
        batch: 64,
        ..Default::default()
    };
    ocds::import_ocds_from(&store, ocds::Input::Bytes(bytes), opts)
        .await
        .unwrap();
    let recount = "select count(*) from mk_suppliers s where s.awards_count <> (select count(*) from mk_awards a where a.supplier_id = s.id) \
         or abs(s.awards_total - (select coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0) from mk_awards a where a.supplier_id = s.id)) > 0.01 \
         or coalesce(s.last_award, '') <> coalesce((select max(a.date) from mk_awards a where a.supplier_id = s.id), '')";
    let (wrong,): (i64,) = sqlx::query_as(recount)
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(wrong, 0);
    let (many,): (i64,) =
        sqlx::query_as("select count(*) from mk_suppliers where awards_count > 1")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert!(many > 10, "suppliers recur across batches: {many}");
}
