use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;

use super::*;
use crate::testkit::World;

fn spec(amount: i64, ledger: Ledger) -> ChargeSpec {
    ChargeSpec {
        action: "market_get".into(),
        branch: "supplier".into(),
        amount,
        ledger,
    }
}

fn how(key: &str) -> ChargeContext<'_> {
    ChargeContext {
        surface: "mcp",
        idempotency_key: key,
        auto_policy: None,
        call_ref: None,
    }
}

#[tokio::test]
async fn the_same_key_charges_once_and_returns_the_original_receipt() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let first = w
        .engine
        .billing
        .charge(&w.caller, &spec(3, Ledger::Intelligence), &how("k1"))
        .await
        .unwrap();
    let again = w
        .engine
        .billing
        .charge(&w.caller, &spec(3, Ledger::Intelligence), &how("k1"))
        .await
        .unwrap();
    assert!(!first.replayed);
    assert!(again.replayed);
    assert_eq!(first.id, again.id);
    let bal = w.balance(Ledger::Intelligence).await;
    assert_eq!(bal.used, 3);
    assert_eq!(bal.allowance, 2_000);
    assert_eq!(
        w.engine
            .billing
            .receipts(&w.caller, 10)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_refused_first_charge_of_a_period_spends_nothing_and_the_next_one_pays() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let err = w
        .engine
        .billing
        .charge(&w.caller, &spec(2_001, Ledger::Intelligence), &how("big"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InsufficientCredits);
    assert_eq!(w.balance(Ledger::Intelligence).await.left(), 2_000);
    assert!(w
        .engine
        .billing
        .receipts(&w.caller, 10)
        .await
        .unwrap()
        .is_empty());
    // The key was not spent by the refusal: the same key pays once there is room.
    let paid = w
        .engine
        .billing
        .charge(&w.caller, &spec(2_000, Ledger::Intelligence), &how("big"))
        .await
        .unwrap();
    assert!(!paid.replayed);
    assert_eq!(w.balance(Ledger::Intelligence).await.left(), 0);
}

#[tokio::test]
async fn simultaneous_charges_never_overdraw_the_ledger() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    // Founder starts with 100 créditos de contacto: 80 charges of 2 can only pay 50.
    let mut tasks = Vec::new();
    for i in 0..80 {
        let w = w.clone();
        tasks.push(tokio::spawn(async move {
            let key = format!("reveal-{i}");
            w.engine
                .billing
                .charge(
                    &w.caller,
                    &spec(CONTACT_REVEAL_COST, Ledger::Contact),
                    &how(&key),
                )
                .await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(e) => assert_eq!(e.code(), ErrorCode::InsufficientCredits, "{e:?}"),
        }
    }
    assert_eq!(ok, 50);
    let bal = w.balance(Ledger::Contact).await;
    assert_eq!(bal.used, 100);
    assert_eq!(bal.left(), 0);
    assert_eq!(
        w.engine
            .billing
            .receipts(&w.caller, 1000)
            .await
            .unwrap()
            .len(),
        50
    );
}

#[tokio::test]
async fn simultaneous_retries_of_one_key_charge_exactly_once() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let w = w.clone();
        tasks.push(tokio::spawn(async move {
            w.engine
                .billing
                .charge(&w.caller, &spec(5, Ledger::Intelligence), &how("same"))
                .await
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        ids.insert(t.await.unwrap().unwrap().id);
    }
    assert_eq!(ids.len(), 1);
    assert_eq!(w.balance(Ledger::Intelligence).await.used, 5);
}

/// A charge in a turn step's batch, committed.
async fn charge_batched(w: &World, amount: i64, key: &str) -> Receipt {
    let mut batch = w.engine.store.begin_batch(None).await.unwrap();
    let receipt = w
        .engine
        .billing
        .charge_batched(
            &mut batch,
            &w.caller,
            &spec(amount, Ledger::Intelligence),
            &how(key),
            now_ms(),
        )
        .await
        .unwrap();
    batch.commit().await.unwrap();
    receipt
}

#[tokio::test]
async fn a_batched_charge_spends_once_per_key_though_its_spend_travels_with_its_claim() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    // The period's first charge finds no ledger row, makes it and pays.
    let first = charge_batched(&w, 3, "kb").await;
    // The next pays in the statement sent with its claim.
    charge_batched(&w, 4, "kb2").await;
    assert_eq!(w.balance(Ledger::Intelligence).await.used, 7);
    // A key that already charged: the spend sent with the claim finds no receipt of
    // its own and changes nothing.
    let again = charge_batched(&w, 3, "kb").await;
    assert!(again.replayed);
    assert_eq!(again.id, first.id);
    assert_eq!(w.balance(Ledger::Intelligence).await.used, 7);

    let mut tasks = Vec::new();
    for _ in 0..8 {
        let w = w.clone();
        tasks.push(tokio::spawn(async move {
            charge_batched(&w, 5, "same").await.id
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        ids.insert(t.await.unwrap());
    }
    assert_eq!(ids.len(), 1);
    assert_eq!(w.balance(Ledger::Intelligence).await.used, 12);
}

#[tokio::test]
async fn explorer_has_no_contact_credits_and_a_daily_search_quota() {
    let w = World::new(Plan::Explorer, Role::Owner).await.unwrap();
    let err = w
        .engine
        .billing
        .charge(&w.caller, &spec(2, Ledger::Contact), &how("x"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InsufficientCredits);
    // A failed charge leaves no receipt, so the key can be used again later.
    assert!(w
        .engine
        .billing
        .receipt_by_key(&w.caller.workspace_id, "x")
        .await
        .unwrap()
        .is_none());
    let now = 1_800_000_000_000;
    for _ in 0..5 {
        w.engine.billing.admit_search(&w.caller, now).await.unwrap();
    }
    let err = w
        .engine
        .billing
        .admit_search(&w.caller, now)
        .await
        .unwrap_err()
        .body();
    assert_eq!(err.code, ErrorCode::PlanLimit);
    assert!(err.retry_after.unwrap() > 0);
    assert_eq!(
        w.engine
            .billing
            .searches_left_today(&w.caller, now)
            .await
            .unwrap(),
        Some(0)
    );
    // The next day the quota is back.
    w.engine
        .billing
        .admit_search(&w.caller, now + 86_400_000)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_read_ceiling_is_600_per_hour_per_workspace() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let b = w
        .other_workspace(Plan::Founder, Role::Member)
        .await
        .unwrap();
    let now = 1_800_000_000_000 + 1_000; // one second into an hour
    w.engine
        .billing
        .admit_reads(&w.caller.workspace_id, 599, now)
        .await
        .unwrap();
    w.engine
        .billing
        .admit_reads(&w.caller.workspace_id, 1, now)
        .await
        .unwrap();
    let err = w
        .engine
        .billing
        .admit_reads(&w.caller.workspace_id, 1, now)
        .await
        .unwrap_err()
        .body();
    assert_eq!(err.code, ErrorCode::RateLimited);
    assert_eq!(err.retry_after, Some(3_599));
    assert_eq!(
        w.engine
            .billing
            .reads_left(&w.caller.workspace_id, now)
            .await
            .unwrap(),
        0
    );
    // Another workspace is not affected, and the next hour starts over.
    w.engine
        .billing
        .admit_reads(&b.workspace_id, 1, now)
        .await
        .unwrap();
    w.engine
        .billing
        .admit_reads(&w.caller.workspace_id, 1, now + 3_600_000)
        .await
        .unwrap();
}

#[tokio::test]
async fn receipts_record_surface_branch_and_auto_policy() {
    let w = World::new(Plan::Commercial, Role::Admin).await.unwrap();
    let ctx = ChargeContext {
        surface: "luna",
        idempotency_key: "auto-1",
        auto_policy: Some("automático por la política que Mariana fijó a las 10:42"),
        call_ref: Some("call:abc"),
    };
    let spec = ChargeSpec {
        action: "market_get".into(),
        branch: "opportunity".into(),
        amount: 1,
        ledger: Ledger::Intelligence,
    };
    w.engine
        .billing
        .charge(&w.caller, &spec, &ctx)
        .await
        .unwrap();
    let r = w
        .engine
        .billing
        .receipt_by_key(&w.caller.workspace_id, "auto-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.branch, "opportunity");
    assert_eq!(r.surface, "luna");
    assert_eq!(r.call_ref.as_deref(), Some("call:abc"));
    assert!(r.auto_policy.unwrap().contains("Mariana"));
}

#[tokio::test]
async fn a_search_is_admitted_while_a_read_and_a_credit_are_left() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let (billing, ws) = (&w.engine.billing, &w.caller.workspace_id);
    let now = 1_800_000_000_000 + 1_000; // one second into an hour
    let reads_left = || billing.reads_left(ws, now);
    // A new period has no ledger row yet: the whole allowance is left.
    billing.admit_search_call(&w.caller, 1, now).await.unwrap();
    assert_eq!(
        reads_left().await.unwrap(),
        599,
        "the search counted its read"
    );
    // One credit left is enough.
    let allowance = w.balance(Ledger::Intelligence).await.allowance;
    billing
        .charge_at(
            &w.caller,
            &spec(allowance - 1, Ledger::Intelligence),
            &how("a"),
            now,
        )
        .await
        .unwrap();
    billing.admit_search_call(&w.caller, 1, now).await.unwrap();
    // None left: refused, and the read it asked for still counts.
    billing
        .charge_at(&w.caller, &spec(1, Ledger::Intelligence), &how("b"), now)
        .await
        .unwrap();
    let err = billing
        .admit_search_call(&w.caller, 1, now)
        .await
        .unwrap_err()
        .body();
    assert_eq!(err.code, ErrorCode::InsufficientCredits);
    assert_eq!(reads_left().await.unwrap(), 597);
    // The read ceiling is checked first.
    billing.admit_reads(ws, 597, now).await.unwrap();
    let err = billing
        .admit_search_call(&w.caller, 1, now)
        .await
        .unwrap_err()
        .body();
    assert_eq!(err.code, ErrorCode::RateLimited);
}

#[tokio::test]
async fn a_count_reads_the_balance_a_charge_left_in_the_statement_that_admits_it() {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    let billing = &w.engine.billing;
    let now = 1_800_000_000_000 + 1_000;
    let reads_left = || billing.reads_left(&w.caller.workspace_id, now);
    // A new period has no ledger row: the plan's allowance, nothing used.
    let fresh = billing
        .admit_reads_and_balance(&w.caller, 1, now)
        .await
        .unwrap();
    assert_eq!(fresh.used, 0);
    assert_eq!(
        fresh.allowance,
        Ledger::Intelligence.allowance(Plan::Founder)
    );
    billing
        .charge_at(&w.caller, &spec(3, Ledger::Intelligence), &how("c"), now)
        .await
        .unwrap();
    let after = billing
        .admit_reads_and_balance(&w.caller, 1, now)
        .await
        .unwrap();
    assert_eq!(after.used, 3);
    assert_eq!(after.left(), fresh.left() - 3);
    assert_eq!(reads_left().await.unwrap(), 598);
    // Over the hour's ceiling: refused with the ceiling's error, nothing counted.
    let err = billing
        .admit_reads_and_balance(&w.caller, 599, now)
        .await
        .unwrap_err()
        .body();
    assert_eq!(err.code, ErrorCode::RateLimited);
    assert_eq!(reads_left().await.unwrap(), 598);
}
