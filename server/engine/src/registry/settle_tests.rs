//! A call settled inside its caller's transaction (`Unsettled::settle_in`, what a turn
//! step does): the charges and the telemetry row commit or roll back with the
//! caller's writes, and a refused charge undoes only itself, leaving the transaction
//! usable for the step that records the refusal.

use std::sync::Arc;

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;
use luna_protocol::tool::{Envelope, ResultRow};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::pipeline::call_unsettled;
use super::*;
use crate::billing::{ChargeSpec, Ledger};
use crate::testkit::World;
use crate::tools::catalog;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Cost {
    /// Créditos de inteligencia que cobra la llamada.
    amount: i64,
}

/// A search that charges two charges: one credit, then `amount` more.
fn two_charges() -> ToolDef {
    ToolDef::new::<Cost>("market_search", Family::Market)
        .label("Buscando")
        .cost(CostClass::Search)
        .search()
        .handler(|_: ToolCtx, args: Cost| async move {
            let charge = |branch: &str, amount| ChargeSpec {
                action: "market_search".into(),
                branch: branch.into(),
                amount,
                ledger: Ledger::Intelligence,
            };
            Ok(
                ToolOutput::from(Envelope::rows(vec![ResultRow::new("record:1", "uno")]))
                    .with_charge(charge("base", 1))
                    .with_charge(charge("extra", args.amount)),
            )
        })
}

async fn world() -> World {
    let mut w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let mut reg = catalog();
    reg.replace(two_charges());
    w.engine.registry = Arc::new(reg);
    w
}

async fn count(w: &World, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .bind(&w.caller.workspace_id)
        .fetch_one(w.engine.store.pool())
        .await
        .unwrap()
}

async fn receipts(w: &World) -> i64 {
    count(w, "select count(*) from receipts where workspace_id = $1").await
}

async fn telemetry(w: &World) -> i64 {
    count(w, "select count(*) from tool_calls where workspace_id = $1").await
}

/// Intelligence credits left this period.
/// The write batch a turn step settles a call in.
async fn batch(w: &World) -> crate::base::store::WriteBatch {
    let scope = crate::base::store::Scope::Workspace(&w.caller.workspace_id);
    w.engine.store.begin_batch(Some(scope)).await.unwrap()
}

async fn unsettled(w: &World, amount: i64) -> pipeline::Unsettled {
    call_unsettled(
        &w.engine,
        &w.caller,
        ToolRequest::new("market_search", json!({"amount": amount}), Surface::Luna),
    )
    .await
}

#[tokio::test]
async fn the_charges_and_the_row_commit_or_roll_back_with_the_callers_transaction() {
    let w = world().await;
    let left = w.balance(Ledger::Intelligence).await.left();

    // Rolled back: the call ran, but nothing of it was recorded.
    let call = unsettled(&w, 2).await;
    let mut tx = batch(&w).await;
    let response = call.settle_in(&w.engine, &mut tx).await.unwrap();
    assert!(response.is_ok());
    assert_eq!(response.receipts.len(), 2);
    drop(tx);
    assert_eq!((receipts(&w).await, telemetry(&w).await), (0, 0));
    assert_eq!(w.balance(Ledger::Intelligence).await.left(), left);

    // Committed: both charges and the row, with the caller's commit.
    let call = unsettled(&w, 2).await;
    let mut tx = batch(&w).await;
    call.settle_in(&w.engine, &mut tx).await.unwrap();
    assert_eq!(
        receipts(&w).await,
        0,
        "nothing is visible before the commit"
    );
    tx.commit().await.unwrap();
    assert_eq!((receipts(&w).await, telemetry(&w).await), (2, 1));
    assert_eq!(w.balance(Ledger::Intelligence).await.left(), left - 3);
}

#[tokio::test]
async fn a_refused_charge_undoes_only_itself_and_the_step_still_commits() {
    let w = world().await;
    let left = w.balance(Ledger::Intelligence).await.left();
    // The second charge asks for more than is left after the first.
    let call = unsettled(&w, left).await;
    let mut tx = batch(&w).await;
    let response = call.settle_in(&w.engine, &mut tx).await.unwrap();
    let err = response.outcome.as_ref().unwrap_err();
    assert_eq!(err.code, ErrorCode::InsufficientCredits);
    assert_eq!(response.receipts.len(), 1, "the first charge stands");
    // The transaction is still usable: the caller's own write goes through with it.
    sqlx::query(
        "insert into usage_counters (workspace_id, counter, bucket, count) values ($1, 'searches_day', 999, 1)",
    )
    .bind(&w.caller.workspace_id)
    .execute(tx.conn().await.unwrap())
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!((receipts(&w).await, telemetry(&w).await), (1, 1));
    assert_eq!(
        count(
            &w,
            "select count(*) from usage_counters where workspace_id = $1 and bucket = 999"
        )
        .await,
        1
    );
    assert_eq!(w.balance(Ledger::Intelligence).await.left(), left - 1);
    let ok: i64 = count(&w, "select ok from tool_calls where workspace_id = $1").await;
    assert_eq!(ok, 0, "the row records the refusal");
}

#[tokio::test]
async fn a_charge_over_the_keys_budget_gives_back_what_it_spent() {
    let w = world().await;
    let mut spec = crate::accounts::KeySpec::read_only("tope de dos");
    spec.credit_budget = Some(2);
    let owner = World {
        engine: w.engine.clone(),
        caller: w.teammate(Role::Owner, "Dueña").await.unwrap(),
    };
    let (key_id, agent) = owner.with_key(&spec).await.unwrap();
    let left = w.balance(Ledger::Intelligence).await.left();
    // One credit, then two more: the ledger has room for both, the key only for one.
    let call = call_unsettled(
        &w.engine,
        &agent.caller,
        ToolRequest::new("market_search", json!({"amount": 2}), Surface::Mcp),
    )
    .await;
    let mut tx = batch(&w).await;
    let response = call.settle_in(&w.engine, &mut tx).await.unwrap();
    let err = response.outcome.as_ref().unwrap_err();
    assert_eq!(err.code, ErrorCode::InsufficientCredits);
    assert!(err.message.contains("llave"), "{}", err.message);
    assert_eq!(response.receipts.len(), 1, "the first charge stands");
    tx.commit().await.unwrap();
    assert_eq!((receipts(&w).await, telemetry(&w).await), (1, 1));
    assert_eq!(
        w.balance(Ledger::Intelligence).await.left(),
        left - 1,
        "the refused charge's credits went back to the ledger"
    );
    let key_spent: i64 = sqlx::query_scalar("select spent from api_key_spend where key_id = $1")
        .bind(&key_id)
        .fetch_one(w.engine.store.pool())
        .await
        .unwrap();
    assert_eq!(key_spent, 1);
}

/// The `ok` values recorded on `tool` spans.
#[derive(Clone, Default)]
struct ToolSpanOk(Arc<std::sync::Mutex<Vec<bool>>>);

impl<S> tracing_subscriber::Layer<S> for ToolSpanOk
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Ok<'a>(&'a std::sync::Mutex<Vec<bool>>);
        impl tracing::field::Visit for Ok<'_> {
            fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
                if field.name() == "ok" {
                    self.0.lock().unwrap().push(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        if ctx.span(id).is_some_and(|span| span.name() == "tool") {
            values.record(&mut Ok(&self.0));
        }
    }
}

#[tokio::test]
async fn the_tool_span_reports_a_call_its_charge_refused_as_failed() {
    use tracing_subscriber::layer::SubscriberExt;
    let seen = ToolSpanOk::default();
    let _trace =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(seen.clone()));
    // With one dispatcher alive, tracing asks only the registering thread's subscriber
    // whether a new callsite is wanted, and a test on another thread (none) would
    // switch `tool` off for good. A second live dispatcher makes it ask them all.
    let _all = tracing::Dispatch::new(tracing_subscriber::registry());
    let w = world().await;
    let left = w.balance(Ledger::Intelligence).await.left();
    // The handler succeeds; its second charge does not fit.
    let call = unsettled(&w, left).await;
    let mut tx = batch(&w).await;
    let response = call.settle_in(&w.engine, &mut tx).await.unwrap();
    tx.commit().await.unwrap();
    assert!(!response.is_ok());
    assert_eq!(*seen.0.lock().unwrap(), vec![false]);
}
