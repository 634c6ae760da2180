use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;
use serde_json::json;

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::billing::{ChargeContext, ChargeSpec, Ledger};
use crate::registry::{Surface, ToolRequest};
use crate::{testkit, Engine};

use super::*;
pub(super) use crate::testkit::call;
use crate::testkit::World;

pub(super) async fn setup(plan: Plan) -> World {
    let engine = testkit::engine().await.unwrap();
    for (id, name, site) in [
        (
            "EBA010101AB1",
            "Empaques del Bajío SA de CV",
            Some("https://empaquesbajio.mx"),
        ),
        ("CJA050505XY2", "Cartonera Jalisco", None),
        (
            "PLA090909ZZ3",
            "Plásticos de Occidente",
            Some("plasticosoccidente.com.mx"),
        ),
    ] {
        sqlx::query(
            "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, website, source, created_at)
             values ($1, $2, 1, $3, 14, $4, 'test', 0)",
        )
        .bind(id)
        .bind(id)
        .bind(name)
        .bind(site)
        .execute(engine.store.pool())
        .await
        .unwrap();
    }
    let caller = testkit::caller(&engine, plan, Role::Member).await.unwrap();
    World { engine, caller }
}

pub(super) async fn handles(engine: &Engine, caller: &Caller, company: &str) -> Vec<String> {
    engine
        .people
        .search(caller, &format!("company:{company}"))
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.card.handle)
        .collect()
}

pub(super) fn req(quote_id: &str, max: i64, key: &str) -> RevealRequest {
    RevealRequest {
        quote_id: quote_id.into(),
        confirm: true,
        max_credits: max,
        idempotency_key: key.into(),
    }
}

pub(super) const VIA: RevealVia<'static> = RevealVia {
    surface: "mcp",
    auto_policy: None,
    call_ref: None,
};

#[tokio::test]
async fn search_returns_at_most_three_masked_people_until_revealed_here() {
    let w = setup(Plan::Founder).await;
    let env = w
        .call(
            "people_search",
            json!({"company_ref": "company:EBA010101AB1"}),
            Surface::Mcp,
        )
        .await
        .unwrap();
    assert!((1..=3).contains(&env.results.len()));
    let text = serde_json::to_string(&env).unwrap();
    for row in &env.results {
        assert!(row.ref_.starts_with("person:"));
        assert_eq!(row.fields["revealed"], json!(false));
        assert!(row.fields["name_masked"].as_str().unwrap().contains("***"));
        assert!(
            row.fields["email_masked"]
                .as_str()
                .unwrap()
                .ends_with("****@empaquesbajio.mx")
                || row.fields["email_masked"]
                    .as_str()
                    .unwrap()
                    .contains("****@empaquesbajio.mx")
        );
        assert!(row.fields.get("email").is_none() && row.fields.get("full_name").is_none());
    }
    // No full email anywhere: every '@' is preceded by the mask.
    assert_eq!(text.matches('@').count(), text.matches("****@").count());

    // Reveal one person in another workspace: still masked here.
    let other = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    let hs = handles(&w.engine, &other, "EBA010101AB1").await;
    let q = w.engine.people.quote(&other, &hs[..1]).await.unwrap();
    w.engine
        .people
        .reveal(&other, &req(&q.id, 2, "k-other"), VIA)
        .await
        .unwrap();
    let env = w
        .call(
            "people_search",
            json!({"company_ref": "company:EBA010101AB1"}),
            Surface::Luna,
        )
        .await
        .unwrap();
    assert!(env
        .results
        .iter()
        .all(|r| r.fields["revealed"] == json!(false)));
    // ... and unmasked in the workspace that paid.
    let env = call(
        &w.engine,
        &other,
        "people_search",
        json!({"company_ref": "company:EBA010101AB1"}),
        Surface::Mcp,
    )
    .await
    .unwrap();
    let revealed: Vec<_> = env
        .results
        .iter()
        .filter(|r| r.fields["revealed"] == json!(true))
        .collect();
    assert_eq!(revealed.len(), 1);
    assert!(revealed[0].fields["email"]
        .as_str()
        .unwrap()
        .ends_with("@empaquesbajio.mx"));

    let e = w
        .call(
            "people_search",
            json!({"company_ref": "company:NOPE"}),
            Surface::Mcp,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    let e = w
        .call(
            "people_search",
            json!({"company_ref": "EBA010101AB1"}),
            Surface::Mcp,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn quote_prices_only_people_not_yet_revealed_and_keeps_the_token_server_side() {
    let w = setup(Plan::Founder).await;
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let env = w
        .call("people_quote", json!({"handles": &hs[..2]}), Surface::Mcp)
        .await
        .unwrap();
    let row = &env.results[0];
    assert_eq!(row.fields["price"], json!(4));
    assert_eq!(row.fields["already_revealed"], json!(0));
    assert_eq!(row.fields["contact_credits_balance"], json!(100));
    assert!(row.fields["expires_in_seconds"].as_i64().unwrap() > 590);
    let quote_id = row.fields["quote_id"].as_str().unwrap().to_owned();
    let token: String = sqlx::query_scalar("select token from people_quotes where id = $1")
        .bind(&quote_id)
        .fetch_one(w.engine.store.pool())
        .await
        .unwrap();
    assert!(!serde_json::to_string(&env).unwrap().contains(&token));

    w.engine
        .people
        .reveal(&w.caller, &req(&quote_id, 4, "k1"), VIA)
        .await
        .unwrap();
    let mut more = hs.clone();
    more.extend(
        handles(&w.engine, &w.caller, "CJA050505XY2")
            .await
            .into_iter()
            .take(1),
    );
    let q = w.engine.people.quote(&w.caller, &more).await.unwrap();
    assert_eq!(q.already_revealed, 2);
    assert_eq!(q.price, 2 * (more.len() as i64 - 2));
    assert_eq!(q.balance, 96);

    let e = w
        .call(
            "people_quote",
            json!({"handles": ["person:bogus.1"]}),
            Surface::Mcp,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    let e = w
        .call("people_quote", json!({"handles": []}), Surface::Mcp)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn the_same_idempotency_key_charges_once_and_returns_the_same_outcome() {
    let w = setup(Plan::Founder).await;
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let q = w.engine.people.quote(&w.caller, &hs[..2]).await.unwrap();
    let args =
        json!({"quote_id": q.id, "confirm": true, "max_credits": 4, "idempotency_key": "rev-1"});
    let a = w
        .call("people_reveal", args.clone(), Surface::Mcp)
        .await
        .unwrap();
    let b = w.call("people_reveal", args, Surface::Mcp).await.unwrap();
    assert_eq!(a.results[0].fields["charged"], json!(4));
    assert_eq!(b.results[0].fields["replayed"], json!(true));
    assert_eq!(
        a.results[0].fields["receipt_id"],
        b.results[0].fields["receipt_id"]
    );
    assert_eq!(a.results.len(), 3);
    assert!(a.results[1].fields["email"].as_str().unwrap().contains('@'));
    assert_eq!(w.balance(Ledger::Contact).await.used, 4);
    let receipts = w.engine.billing.receipts(&w.caller, 10).await.unwrap();
    assert_eq!(receipts.len(), 1);
    assert_eq!(receipts[0].ledger, Ledger::Contact);
    assert_eq!(receipts[0].surface, "mcp");

    // A new key over the same quote charges nothing more: the people are revealed.
    let c = w
        .engine
        .people
        .reveal(&w.caller, &req(&q.id, 0, "rev-2"), VIA)
        .await
        .unwrap();
    assert_eq!(c.charged, 0);
    assert_eq!(c.already_revealed, 2);
    assert_eq!(w.balance(Ledger::Contact).await.used, 4);

    // The decision card path: a server-minted key, twice, one charge.
    let hs2 = handles(&w.engine, &w.caller, "CJA050505XY2").await;
    let q2 = w.engine.people.quote(&w.caller, &hs2[..1]).await.unwrap();
    let d1 = w
        .engine
        .people
        .execute_reveal(&w.caller, &q2.id, "dec_1:srv", VIA)
        .await
        .unwrap();
    let d2 = w
        .engine
        .people
        .execute_reveal(&w.caller, &q2.id, "dec_1:srv", VIA)
        .await
        .unwrap();
    assert_eq!((d1.charged, d2.replayed), (2, true));
    assert_eq!(w.balance(Ledger::Contact).await.used, 6);

    // The first key over another quote: a typed conflict, no one revealed, no charge.
    let hs3 = handles(&w.engine, &w.caller, "CJA050505XY2").await;
    let q3 = w.engine.people.quote(&w.caller, &hs3[1..2]).await.unwrap();
    let other =
        json!({"quote_id": q3.id, "confirm": true, "max_credits": 4, "idempotency_key": "rev-1"});
    let e = w
        .call("people_reveal", other, Surface::Mcp)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::IdempotencyConflict);
    assert_eq!(w.balance(Ledger::Contact).await.used, 6);
}

#[tokio::test]
async fn an_expired_quote_fails_with_quote_expired_and_charges_nothing() {
    let w = setup(Plan::Founder).await;
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let now = now_ms();
    let q = w
        .engine
        .people
        .quote_at(&w.caller, &hs[..1], now)
        .await
        .unwrap();
    let e = w
        .engine
        .people
        .reveal_at(
            &w.caller,
            &req(&q.id, 2, "late"),
            VIA,
            now + QUOTE_TTL_MS + 1,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::QuoteExpired);
    // Through the tool, with the quote aged in the database.
    sqlx::query("update people_quotes set expires_at = $1 where id = $2")
        .bind(now - 1)
        .bind(&q.id)
        .execute(w.engine.store.pool())
        .await
        .unwrap();
    let e = w.call("people_reveal",
        json!({"quote_id": q.id, "confirm": true, "max_credits": 2, "idempotency_key": "late-2"}),
        Surface::Mcp,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::QuoteExpired);
    let st = w
        .call("people_status", json!({"quote_id": q.id}), Surface::Mcp)
        .await
        .unwrap();
    assert_eq!(st.results[0].fields["status"], json!("vencida"));
    assert_eq!(w.balance(Ledger::Contact).await.used, 0);
}

#[tokio::test]
async fn insufficient_credits_fail_typed_and_reveal_no_one() {
    let w = setup(Plan::Founder).await;
    // Spend 98 of the 100 créditos de contacto.
    w.engine
        .billing
        .charge(
            &w.caller,
            &ChargeSpec {
                action: "x".into(),
                branch: "x".into(),
                amount: 98,
                ledger: Ledger::Contact,
            },
            &ChargeContext {
                surface: "ui",
                idempotency_key: "spend",
                auto_policy: None,
                call_ref: None,
            },
        )
        .await
        .unwrap();
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let q = w.engine.people.quote(&w.caller, &hs[..2]).await.unwrap();
    let e = w.call("people_reveal",
        json!({"quote_id": q.id, "confirm": true, "max_credits": 10, "idempotency_key": "poor"}),
        Surface::Mcp,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InsufficientCredits);
    assert!(w
        .engine
        .people
        .acquired(&w.caller, None, 10)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(w.balance(Ledger::Contact).await.used, 98);
}

#[tokio::test]
async fn a_price_over_max_credits_fails_and_a_dry_run_charges_nothing() {
    let w = setup(Plan::Founder).await;
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let q = w.engine.people.quote(&w.caller, &hs[..2]).await.unwrap();
    let e = w
        .call(
            "people_reveal",
            json!({"quote_id": q.id, "confirm": true, "max_credits": 3, "idempotency_key": "cap"}),
            Surface::Mcp,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::MaxCreditsExceeded);
    let dry = w
        .call(
            "people_reveal",
            json!({"quote_id": q.id, "confirm": false, "max_credits": 0, "idempotency_key": "dry"}),
            Surface::Mcp,
        )
        .await
        .unwrap();
    assert_eq!(dry.results[0].fields["preview"], json!(true));
    assert_eq!(dry.results[0].fields["price"], json!(4));
    assert_eq!(w.balance(Ledger::Contact).await.used, 0);
}

#[tokio::test]
async fn luna_cannot_reveal_and_explorer_cannot_quote() {
    let w = setup(Plan::Founder).await;
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let q = w.engine.people.quote(&w.caller, &hs[..1]).await.unwrap();
    // A reveal crosses the money boundary: Luna does not even have the tool (the
    // person's card runs it).
    let r = w.engine
        .call_tool(&w.caller, ToolRequest::new("people_reveal", json!({"quote_id": q.id, "confirm": true, "max_credits": 2, "idempotency_key": "luna"}), Surface::Luna))
        .await;
    assert_eq!(r.outcome.unwrap_err().code, ErrorCode::UnknownTool);
    assert!(r.receipts.is_empty());
    assert_eq!(w.balance(Ledger::Contact).await.used, 0);
    assert!(w
        .engine
        .people
        .acquired(&w.caller, None, 10)
        .await
        .unwrap()
        .is_empty());

    let w = setup(Plan::Explorer).await;
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let e = w
        .call("people_quote", json!({"handles": hs}), Surface::Mcp)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PlanLimit);
}

#[tokio::test]
async fn a_quote_of_another_workspace_is_not_found() {
    let w = setup(Plan::Founder).await;
    let other = w.other_workspace(Plan::Founder, Role::Owner).await.unwrap();
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let q = w.engine.people.quote(&other, &hs[..1]).await.unwrap();
    for (tool, args) in [
        ("people_status", json!({"quote_id": q.id})),
        (
            "people_reveal",
            json!({"quote_id": q.id, "confirm": true, "max_credits": 2, "idempotency_key": "steal"}),
        ),
    ] {
        let e = w.call(tool, args, Surface::Mcp).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound, "{tool}");
    }
    assert_eq!(w.balance(Ledger::Contact).await.used, 0);
    let theirs = World {
        engine: w.engine.clone(),
        caller: other,
    };
    assert_eq!(theirs.balance(Ledger::Contact).await.used, 0);
}

#[tokio::test]
async fn acquired_lists_metadata_only_with_who_and_when() {
    let w = setup(Plan::Founder).await;
    let hs = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    let q = w.engine.people.quote(&w.caller, &hs[..2]).await.unwrap();
    w.engine
        .people
        .reveal(&w.caller, &req(&q.id, 4, "acq"), VIA)
        .await
        .unwrap();
    let env = w
        .call(
            "people_acquired",
            json!({"company_ref": "company:EBA010101AB1"}),
            Surface::Mcp,
        )
        .await
        .unwrap();
    assert_eq!(env.results.len(), 2);
    let text = serde_json::to_string(&env).unwrap();
    assert!(!text.contains('@'), "no email in {text}");
    assert_eq!(env.results[0].fields["revealed_by"], json!("Ana Prueba"));
    assert!(env.results[0].fields["revealed_at"].is_string());
    let env = w
        .call(
            "people_acquired",
            json!({"company_ref": "company:CJA050505XY2"}),
            Surface::Mcp,
        )
        .await
        .unwrap();
    assert!(env.results.is_empty());
}

#[tokio::test]
async fn overlapping_reveals_at_once_never_charge_a_person_twice() {
    let w = setup(Plan::Commercial).await;
    let mut people = handles(&w.engine, &w.caller, "EBA010101AB1").await;
    people.extend(handles(&w.engine, &w.caller, "CJA050505XY2").await);
    people.extend(handles(&w.engine, &w.caller, "PLA090909ZZ3").await);
    assert!(people.len() >= 6);
    // Eight reveals over overlapping windows of three people, all at once.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let window: Vec<String> = (0..3)
            .map(|k| people[(i + k) % people.len()].clone())
            .collect();
        let q = w.engine.people.quote(&w.caller, &window).await.unwrap();
        let w = w.clone();
        tasks.push(tokio::spawn(async move {
            w.engine
                .people
                .reveal(&w.caller, &req(&q.id, 6, &format!("conc-{i}")), VIA)
                .await
        }));
    }
    let mut charged_people = Vec::new();
    let mut total = 0;
    for t in tasks {
        let out = t.await.unwrap().unwrap();
        total += out.charged;
        charged_people.extend(
            out.people
                .iter()
                .filter(|p| p.charged)
                .map(|p| p.card.handle.clone()),
        );
    }
    let distinct: std::collections::HashSet<_> = charged_people.iter().collect();
    assert_eq!(
        distinct.len(),
        charged_people.len(),
        "a person was charged twice"
    );
    let revealed = w
        .engine
        .people
        .acquired(&w.caller, None, 100)
        .await
        .unwrap()
        .len();
    assert_eq!(total, 2 * revealed as i64);
    assert_eq!(w.balance(Ledger::Contact).await.used, total);
    let sum: i64 = w
        .engine
        .billing
        .receipts(&w.caller, 100)
        .await
        .unwrap()
        .iter()
        .map(|r| r.amount)
        .sum();
    assert_eq!(sum, total);
}
