//! API keys through the one tool pipeline: scopes, the monthly credit budget, expiry,
//! last use, and merges that no key can make.

use luna_protocol::account::{ApiScope, Plan, Role};
use luna_protocol::error::{ErrorBody, ErrorCode};
use luna_protocol::tool::Envelope;
use serde_json::{json, Value};

use crate::accounts::{Caller, KeySpec};
use crate::base::clock::now_ms;
use crate::billing::Ledger;
use crate::registry::{Surface, ToolRequest};
use crate::{testkit, Engine};

/// A Founder workspace with one Proveedor (with people) and its owner.
async fn setup() -> (Engine, Caller) {
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
    (engine, owner)
}

/// Creates a key and returns the caller it authenticates as.
async fn key(engine: &Engine, owner: &Caller, spec: KeySpec) -> Caller {
    let k = engine.accounts.create_api_key(owner, &spec).await.unwrap();
    engine
        .accounts
        .api_key_caller(&k.secret)
        .await
        .unwrap()
        .unwrap()
}

async fn call(
    engine: &Engine,
    caller: &Caller,
    name: &str,
    args: Value,
) -> Result<Envelope, ErrorBody> {
    engine
        .call_tool(caller, ToolRequest::new(name, args, Surface::Mcp))
        .await
        .outcome
}

fn assert_missing(outcome: Result<Envelope, ErrorBody>, scope: &str) {
    let e = outcome.expect_err("a key without the scope is refused");
    assert_eq!(e.code, ErrorCode::Forbidden, "{e:?}");
    assert!(e.message.contains(scope), "names the scope: {}", e.message);
}

/// A quote for the Proveedor's first person (2 créditos de contacto).
async fn quote(engine: &Engine, owner: &Caller) -> String {
    let people = engine
        .people
        .search(owner, "company:EBA010101AB1")
        .await
        .unwrap();
    let handle = people[0].card.handle.clone();
    engine.people.quote(owner, &[handle]).await.unwrap().id
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
    let (engine, owner) = setup().await;
    let agent = key(&engine, &owner, KeySpec::read_only("agente")).await;
    assert!(agent.api_key.as_ref().unwrap().scopes.is_empty());

    call(
        &engine,
        &agent,
        "market_search",
        json!({"kind": "suppliers", "query": "empaques"}),
    )
    .await
    .expect("a read-only key searches");
    call(
        &engine,
        &agent,
        "context_retrieve",
        json!({"query": "gobierno"}),
    )
    .await
    .expect("a read-only key reads Cerebro");

    let q = quote(&engine, &owner).await;
    assert_missing(
        call(&engine, &agent, "people_reveal", reveal_args(&q, "k-1")).await,
        "contacts:reveal",
    );
    assert_missing(
        call(
            &engine,
            &agent,
            "context_delete",
            json!({"topic": "topic:icp"}),
        )
        .await,
        "knowledge:delete",
    );
    assert_missing(
        call(
            &engine,
            &agent,
            "context_create",
            json!({"title": "Nuevo", "area": "ventas", "body": "Texto"}),
        )
        .await,
        "knowledge:write",
    );
    assert_missing(
        call(
            &engine,
            &agent,
            "company_save",
            json!({"collection_id": "collection:x", "company_ref": "company:EBA010101AB1"}),
        )
        .await,
        "crm:write",
    );
    assert_missing(
        call(
            &engine,
            &agent,
            "crm_record",
            json!({"op": "history", "record_id": "record:x"}),
        )
        .await,
        "crm:write",
    );
    assert_eq!(
        count(
            &engine,
            "select count(*) from receipts where ledger = 'contact'"
        )
        .await,
        0
    );
}

#[tokio::test]
async fn a_key_with_contacts_reveal_reveals() {
    let (engine, owner) = setup().await;
    let agent = key(
        &engine,
        &owner,
        KeySpec::read_only("revelador").with_scopes(&[ApiScope::ContactsReveal]),
    )
    .await;
    let q = quote(&engine, &owner).await;
    let env = call(&engine, &agent, "people_reveal", reveal_args(&q, "k-2"))
        .await
        .expect("the scope lets the key reveal");
    assert_eq!(env.results[0].fields["charged"], json!(2));
    // The scope does not stretch to other writes.
    assert_missing(
        call(
            &engine,
            &agent,
            "context_delete",
            json!({"topic": "topic:icp"}),
        )
        .await,
        "knowledge:delete",
    );
}

#[tokio::test]
async fn context_delete_needs_its_own_scope_even_with_knowledge_write() {
    let (engine, owner) = setup().await;
    let writer = key(
        &engine,
        &owner,
        KeySpec::read_only("escritor").with_scopes(&[ApiScope::KnowledgeWrite]),
    )
    .await;
    let created = call(
        &engine,
        &writer,
        "context_create",
        json!({"title": "Licitaciones IMSS", "area": "gobierno", "body": "Cómo cotizamos."}),
    )
    .await
    .expect("knowledge:write creates");
    let topic = created.results[0].ref_.clone();
    assert_missing(
        call(&engine, &writer, "context_delete", json!({"topic": topic})).await,
        "knowledge:delete",
    );
    let deleter = key(
        &engine,
        &owner,
        KeySpec::read_only("borrador").with_scopes(&[ApiScope::KnowledgeDelete]),
    )
    .await;
    call(&engine, &deleter, "context_delete", json!({"topic": topic}))
        .await
        .expect("knowledge:delete deletes");
}

#[tokio::test]
async fn no_key_merges_knowledge_whatever_its_scopes() {
    let (engine, owner) = setup().await;
    let all = key(
        &engine,
        &owner,
        KeySpec::read_only("todo").with_scopes(&ApiScope::ALL),
    )
    .await;
    let e = engine.knowledge.merge(&all, "prop_x").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);
    // The owner in the app gets as far as looking the proposal up.
    let e = engine.knowledge.merge(&owner, "prop_x").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn an_expired_key_authenticates_as_nothing() {
    let (engine, owner) = setup().await;
    let k = engine
        .accounts
        .create_api_key(&owner, &KeySpec::read_only("temporal"))
        .await
        .unwrap();
    assert!(engine
        .accounts
        .api_key_caller(&k.secret)
        .await
        .unwrap()
        .is_some());
    sqlx::query("update api_keys set expires_at = $1 where id = $2")
        .bind(now_ms() - 1)
        .bind(&k.id)
        .execute(engine.store.pool())
        .await
        .unwrap();
    assert!(engine
        .accounts
        .api_key_caller(&k.secret)
        .await
        .unwrap()
        .is_none());
    // An expiry in the past is refused at creation.
    let mut spec = KeySpec::read_only("vencida");
    spec.expires_at = Some(now_ms() - 1);
    let e = engine
        .accounts
        .create_api_key(&owner, &spec)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn a_key_over_its_budget_is_refused_and_nothing_is_charged() {
    let (engine, owner) = setup().await;
    let mut spec = KeySpec::read_only("con tope").with_scopes(&[ApiScope::ContactsReveal]);
    spec.credit_budget = Some(1);
    let agent = key(&engine, &owner, spec).await;
    let search = json!({"kind": "suppliers", "query": "empaques"});
    call(&engine, &agent, "market_search", search.clone())
        .await
        .expect("the first credit fits");
    let intelligence = || async {
        engine
            .billing
            .balance(&owner, Ledger::Intelligence)
            .await
            .unwrap()
            .used
    };
    assert_eq!(intelligence().await, 1);

    let e = call(&engine, &agent, "market_search", search)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InsufficientCredits, "{e:?}");
    assert!(e.message.contains("llave"), "{}", e.message);
    let e = call(
        &engine,
        &agent,
        "market_get",
        json!({"record_ref": "company:EBA010101AB1"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InsufficientCredits, "{e:?}");
    // A reveal of 2 créditos de contacto does not fit the 0 left: nothing revealed.
    let q = quote(&engine, &owner).await;
    let e = call(&engine, &agent, "people_reveal", reveal_args(&q, "k-3"))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InsufficientCredits, "{e:?}");
    assert_eq!(intelligence().await, 1, "nothing more was charged");
    assert_eq!(count(&engine, "select count(*) from receipts").await, 1);
    assert_eq!(
        count(&engine, "select count(*) from people_reveal_runs").await,
        0
    );
    // The owner in the app is not held to the key's budget.
    call(
        &engine,
        &owner,
        "market_get",
        json!({"record_ref": "company:EBA010101AB1"}),
    )
    .await
    .expect("a person's call is not the key's");

    let listed = engine.accounts.list_api_keys(&owner).await.unwrap();
    assert_eq!(listed[0].credit_budget, Some(1));
    assert_eq!(listed[0].spent_this_month, 1);
}

#[tokio::test]
async fn the_budget_is_checked_again_when_the_charge_commits() {
    let (engine, owner) = setup().await;
    let mut spec = KeySpec::read_only("justo");
    spec.credit_budget = Some(1);
    let agent = key(&engine, &owner, spec).await;
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
    engine.billing.charge(&agent, &spec, &how).await.unwrap();
    let again = crate::billing::ChargeContext {
        idempotency_key: "b",
        ..how
    };
    let e = engine
        .billing
        .charge(&agent, &spec, &again)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InsufficientCredits);
    assert_eq!(count(&engine, "select count(*) from receipts").await, 1);
}

#[tokio::test]
async fn last_used_is_set_when_the_key_is_used() {
    let (engine, owner) = setup().await;
    let k = engine
        .accounts
        .create_api_key(&owner, &KeySpec::read_only("uso"))
        .await
        .unwrap();
    let listed = engine.accounts.list_api_keys(&owner).await.unwrap();
    assert_eq!(listed[0].last_used_at, None);
    let before = now_ms();
    let agent = engine
        .accounts
        .api_key_caller(&k.secret)
        .await
        .unwrap()
        .unwrap();
    call(&engine, &agent, "usage", json!({})).await.unwrap();
    let listed = engine.accounts.list_api_keys(&owner).await.unwrap();
    let used = listed[0].last_used_at.expect("set after use");
    assert!(used >= before, "{used} < {before}");
}
