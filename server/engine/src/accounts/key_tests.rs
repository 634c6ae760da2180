//! API keys through the one tool pipeline: scopes, the monthly credit budget, expiry,
//! last use, and merges that no key can make.

use luna_protocol::account::{ApiScope, Plan, Role};
use luna_protocol::error::{ErrorBody, ErrorCode};
use luna_protocol::tool::Envelope;
use serde_json::{json, Value};

use crate::accounts::KeySpec;
use crate::base::clock::now_ms;
use crate::billing::Ledger;
use crate::registry::Surface;
use crate::testkit::World;
use crate::{testkit, Engine};

/// A Founder workspace with one Proveedor (with people) and its owner.
async fn setup() -> World {
    let engine = testkit::engine().await.unwrap();
    sqlx::query(
        "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, website, source, created_at)
         values ('EBA010101AB1', 'EBA010101AB1', 1, 'Empaques del Bajío SA de CV', 14,
                 'https://empaquesbajio.mx', 'test', 0)",
    )
    .execute(engine.store.pool())
    .await
    .unwrap();
    let owner = testkit::caller(&engine, Plan::Founder, Role::Owner)
        .await
        .unwrap();
    World {
        engine,
        caller: owner,
    }
}

/// Creates a key and returns the world as the key sees it (same engine and workspace).
async fn key(w: &World, spec: KeySpec) -> World {
    w.with_key(&spec).await.unwrap().1
}

fn assert_missing(outcome: Result<Envelope, ErrorBody>, scope: &str) {
    let e = outcome.expect_err("a key without the scope is refused");
    assert_eq!(e.code, ErrorCode::Forbidden, "{e:?}");
    assert!(e.message.contains(scope), "names the scope: {}", e.message);
}

/// A quote for the Proveedor's first person (2 créditos de contacto).
async fn quote(w: &World) -> String {
    let people = w
        .engine
        .people
        .search(&w.caller, "company:EBA010101AB1")
        .await
        .unwrap();
    let handle = people[0].card.handle.clone();
    w.engine
        .people
        .quote(&w.caller, &[handle])
        .await
        .unwrap()
        .id
}

fn reveal_args(quote_id: &str, key: &str) -> Value {
    json!({"quote_id": quote_id, "confirm": true, "max_credits": 2, "idempotency_key": key})
}

async fn count(engine: &Engine, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(engine.store.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_default_key_reads_but_cannot_reveal_delete_or_write_the_crm() {
    let w = setup().await;
    let agent = key(&w, KeySpec::read_only("agente")).await;
    assert!(agent.caller.api_key.as_ref().unwrap().scopes.is_empty());

    agent
        .call(
            "market_search",
            json!({"kind": "suppliers", "query": "empaques"}),
            Surface::Mcp,
        )
        .await
        .expect("a read-only key searches");
    agent
        .call(
            "context_retrieve",
            json!({"query": "gobierno"}),
            Surface::Mcp,
        )
        .await
        .expect("a read-only key reads Cerebro");

    let q = quote(&w).await;
    assert_missing(
        agent
            .call("people_reveal", reveal_args(&q, "k-1"), Surface::Mcp)
            .await,
        "contacts:reveal",
    );
    assert_missing(
        agent
            .call(
                "context_delete",
                json!({"topic": "topic:icp"}),
                Surface::Mcp,
            )
            .await,
        "knowledge:delete",
    );
    assert_missing(
        agent
            .call(
                "context_create",
                json!({"title": "Nuevo", "area": "ventas", "body": "Texto"}),
                Surface::Mcp,
            )
            .await,
        "knowledge:write",
    );
    assert_missing(
        agent
            .call(
                "company_save",
                json!({"collection_id": "collection:x", "company_ref": "company:EBA010101AB1"}),
                Surface::Mcp,
            )
            .await,
        "crm:write",
    );
    assert_missing(
        agent
            .call(
                "crm_record",
                json!({"op": "history", "record_id": "record:x"}),
                Surface::Mcp,
            )
            .await,
        "crm:write",
    );
    assert_eq!(
        count(
            &w.engine,
            "select count(*) from receipts where ledger = 'contact'"
        )
        .await,
        0
    );
}

#[tokio::test]
async fn a_key_with_contacts_reveal_reveals() {
    let w = setup().await;
    let agent = key(
        &w,
        KeySpec::read_only("revelador").with_scopes(&[ApiScope::ContactsReveal]),
    )
    .await;
    let q = quote(&w).await;
    let env = agent
        .call("people_reveal", reveal_args(&q, "k-2"), Surface::Mcp)
        .await
        .expect("the scope lets the key reveal");
    assert_eq!(env.results[0].fields["charged"], json!(2));
    // The scope does not stretch to other writes.
    assert_missing(
        agent
            .call(
                "context_delete",
                json!({"topic": "topic:icp"}),
                Surface::Mcp,
            )
            .await,
        "knowledge:delete",
    );
}

#[tokio::test]
async fn context_delete_needs_its_own_scope_even_with_knowledge_write() {
    let w = setup().await;
    let writer = key(
        &w,
        KeySpec::read_only("escritor").with_scopes(&[ApiScope::KnowledgeWrite]),
    )
    .await;
    let created = writer
        .call(
            "context_create",
            json!({"title": "Licitaciones IMSS", "area": "gobierno", "body": "Cómo cotizamos."}),
            Surface::Mcp,
        )
        .await
        .expect("knowledge:write creates");
    let topic = created.results[0].ref_.clone();
    assert_missing(
        writer
            .call("context_delete", json!({"topic": topic}), Surface::Mcp)
            .await,
        "knowledge:delete",
    );
    let deleter = key(
        &w,
        KeySpec::read_only("borrador").with_scopes(&[ApiScope::KnowledgeDelete]),
    )
    .await;
    deleter
        .call("context_delete", json!({"topic": topic}), Surface::Mcp)
        .await
        .expect("knowledge:delete deletes");
}

#[tokio::test]
async fn no_key_merges_knowledge_whatever_its_scopes() {
    let w = setup().await;
    let all = key(&w, KeySpec::read_only("todo").with_scopes(&ApiScope::ALL)).await;
    let e = w
        .engine
        .knowledge
        .merge(&all.caller, "prop_x")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);
    // The owner in the app gets as far as looking the proposal up.
    let e = w
        .engine
        .knowledge
        .merge(&w.caller, "prop_x")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn an_expired_key_authenticates_as_nothing() {
    let w = setup().await;
    let k = w
        .engine
        .accounts
        .create_api_key(&w.caller, &KeySpec::read_only("temporal"))
        .await
        .unwrap();
    assert!(w
        .engine
        .accounts
        .api_key_caller(&k.secret)
        .await
        .unwrap()
        .is_some());
    sqlx::query("update api_keys set expires_at = $1 where id = $2")
        .bind(now_ms() - 1)
        .bind(&k.id)
        .execute(w.engine.store.pool())
        .await
        .unwrap();
    assert!(w
        .engine
        .accounts
        .api_key_caller(&k.secret)
        .await
        .unwrap()
        .is_none());
    // An expiry in the past is refused at creation.
    let mut spec = KeySpec::read_only("vencida");
    spec.expires_at = Some(now_ms() - 1);
    let e = w
        .engine
        .accounts
        .create_api_key(&w.caller, &spec)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn a_key_over_its_budget_is_refused_and_nothing_is_charged() {
    let w = setup().await;
    let mut spec = KeySpec::read_only("con tope").with_scopes(&[ApiScope::ContactsReveal]);
    spec.credit_budget = Some(1);
    let agent = key(&w, spec).await;
    let search = json!({"kind": "suppliers", "query": "empaques"});
    agent
        .call("market_search", search.clone(), Surface::Mcp)
        .await
        .expect("the first credit fits");
    let intelligence = || async { w.balance(Ledger::Intelligence).await.used };
    assert_eq!(intelligence().await, 1);

    let e = agent
        .call("market_search", search, Surface::Mcp)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InsufficientCredits, "{e:?}");
    assert!(e.message.contains("llave"), "{}", e.message);
    let e = agent
        .call(
            "market_get",
            json!({"record_ref": "company:EBA010101AB1"}),
            Surface::Mcp,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InsufficientCredits, "{e:?}");
    // A reveal of 2 créditos de contacto does not fit the 0 left: nothing revealed.
    let q = quote(&w).await;
    let e = agent
        .call("people_reveal", reveal_args(&q, "k-3"), Surface::Mcp)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InsufficientCredits, "{e:?}");
    assert_eq!(intelligence().await, 1, "nothing more was charged");
    assert_eq!(count(&w.engine, "select count(*) from receipts").await, 1);
    assert_eq!(
        count(&w.engine, "select count(*) from people_reveal_runs").await,
        0
    );
    // The owner in the app is not held to the key's budget.
    w.call(
        "market_get",
        json!({"record_ref": "company:EBA010101AB1"}),
        Surface::Mcp,
    )
    .await
    .expect("a person's call is not the key's");

    let listed = w.engine.accounts.list_api_keys(&w.caller).await.unwrap();
    assert_eq!(listed[0].credit_budget, Some(1));
    assert_eq!(listed[0].spent_this_month, 1);
}

#[tokio::test]
async fn the_budget_is_checked_again_when_the_charge_commits() {
    let w = setup().await;
    let mut spec = KeySpec::read_only("justo");
    spec.credit_budget = Some(1);
    let agent = key(&w, spec).await;
    // Another call spent the credit after this one was admitted.
    let how = crate::billing::ChargeContext {
        surface: "mcp",
        idempotency_key: "a",
        auto_policy: None,
        call_ref: None,
    };
    let spec = crate::billing::ChargeSpec {
        action: "market_get".into(),
        branch: "supplier".into(),
        amount: 1,
        ledger: Ledger::Intelligence,
    };
    w.engine
        .billing
        .charge(&agent.caller, &spec, &how)
        .await
        .unwrap();
    let again = crate::billing::ChargeContext {
        idempotency_key: "b",
        ..how
    };
    let e = w
        .engine
        .billing
        .charge(&agent.caller, &spec, &again)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InsufficientCredits);
    assert_eq!(count(&w.engine, "select count(*) from receipts").await, 1);
}

#[tokio::test]
async fn last_used_is_set_when_the_key_is_used() {
    let w = setup().await;
    let k = w
        .engine
        .accounts
        .create_api_key(&w.caller, &KeySpec::read_only("uso"))
        .await
        .unwrap();
    let listed = w.engine.accounts.list_api_keys(&w.caller).await.unwrap();
    assert_eq!(listed[0].last_used_at, None);
    let before = now_ms();
    let agent = w
        .engine
        .accounts
        .api_key_caller(&k.secret)
        .await
        .unwrap()
        .unwrap();
    testkit::call(&w.engine, &agent, "usage", json!({}), Surface::Mcp)
        .await
        .unwrap();
    let listed = w.engine.accounts.list_api_keys(&w.caller).await.unwrap();
    let used = listed[0].last_used_at.expect("set after use");
    assert!(used >= before, "{used} < {before}");
}
