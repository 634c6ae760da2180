//! The session's auto budget holds under concurrency and across mode changes, and a
//! member's budget stays inside the workspace's ceilings.

use super::*;

/// Two reveals offered at once in auto mode, with room in the budget for one: one
/// runs, the other stays a card for the person, and nothing is charged beyond the cap.
#[tokio::test]
async fn two_auto_reveals_at_once_never_cross_the_cap() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let a = reveal_card(&fx, &handles(&fx, &SUPPLIERS[..1]).await).await;
    let b = reveal_card(&fx, &handles(&fx, &SUPPLIERS[1..2]).await).await;
    let cap = a.credits.max(b.credits);
    assert!(a.credits + b.credits > cap, "room for one reveal only");
    auto_on(&fx, cap, 50).await;
    offer_in(&fx, "t0", save_card(&fx).await)
        .await
        .auto
        .expect("saving runs alone");
    let (oa, ob) = tokio::join!(offer_in(&fx, "t1", a), offer_in(&fx, "t2", b));
    let ran = [&oa, &ob].iter().filter(|o| o.auto.is_some()).count();
    assert_eq!(ran, 1, "{:?} / {:?}", oa.held, ob.held);
    let held = if oa.auto.is_some() { &ob } else { &oa };
    assert_eq!(held.held, Some(Held::OverBudget));
    let counter = auto::counter(&fx.engine, &fx.caller, &fx.session)
        .await
        .unwrap()
        .unwrap();
    assert!(counter.credits_spent <= cap, "{counter:?}");
    assert_eq!(
        fx.balance(Ledger::Contact).await.left(),
        100 - i64::from(counter.credits_spent),
        "charged exactly what the counter shows"
    );
    assert_eq!(
        board(&fx).await.auto.unwrap().credits_spent,
        counter.credits_spent
    );
    assert_eq!(
        board(&fx).await.pending.len(),
        1,
        "the other card waits for the person"
    );
}

async fn mode(fx: &Fx, mode: SessionMode, credit_cap: Option<u32>) -> EngineResult<()> {
    auto::set_mode(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &ModeRequest {
            mode,
            credit_cap,
            contact_cap: Some(50),
            classes: None,
        },
    )
    .await
    .map(|_| ())
}

/// Preguntar → Automático → Automático again with a new budget: what auto already
/// spent in the session stays spent, and the new budget caps the session's total.
#[tokio::test]
async fn changing_the_mode_never_resets_what_the_session_spent() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let first = reveal_card(&fx, &handles(&fx, &SUPPLIERS[..1]).await).await;
    let price = first.credits;
    auto_on(&fx, price, 50).await;
    offer_in(&fx, "t0", save_card(&fx).await)
        .await
        .auto
        .unwrap();
    offer_in(&fx, "t1", first)
        .await
        .auto
        .expect("inside the budget");
    let spent = |fx: &Fx| {
        let (engine, caller, session) = (fx.engine.clone(), fx.caller.clone(), fx.session.clone());
        async move {
            auto::counter(&engine, &caller, &session)
                .await
                .unwrap()
                .map(|c| c.credits_spent)
        }
    };
    assert_eq!(spent(&fx).await, Some(price));
    mode(&fx, SessionMode::Preguntar, None).await.unwrap();
    mode(&fx, SessionMode::Automatico, Some(price + 1))
        .await
        .unwrap();
    assert_eq!(
        spent(&fx).await,
        Some(price),
        "switching back keeps the spend"
    );
    assert_eq!(board(&fx).await.auto.unwrap().credits_spent, price);
    mode(&fx, SessionMode::Automatico, Some(price + 1))
        .await
        .unwrap();
    assert_eq!(
        spent(&fx).await,
        Some(price),
        "a new budget keeps the spend"
    );
    // The new budget has room for one more credit, not for another reveal.
    let next = reveal_card(&fx, &handles(&fx, &SUPPLIERS[1..2]).await).await;
    let o = offer_in(&fx, "t2", next).await;
    assert_eq!(o.held, Some(Held::OverBudget));
    assert_eq!(
        fx.balance(Ledger::Contact).await.left(),
        100 - i64::from(price)
    );
}

/// An admin sets ceilings, not only defaults: a member asking for more than the
/// ceiling is refused with a message naming it; at the ceiling it works. An admin
/// cannot set defaults above the ceilings either.
#[tokio::test]
async fn a_member_cannot_set_a_budget_above_the_workspace_ceiling() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let admin = fx.teammate(Role::Admin, "Beto Admin").await.unwrap();
    let policy = luna_protocol::session::AutoPolicy {
        default_credit_cap: 20,
        default_contact_cap: 5,
        max_credit_cap: 80,
        max_contact_cap: 15,
        ..Default::default()
    };
    let saved = auto::set_policy(&fx.engine, &admin, &policy).await.unwrap();
    assert_eq!(auto::policy(&fx.engine, &fx.caller).await.unwrap(), saved);

    let e = mode(&fx, SessionMode::Automatico, Some(81))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.to_string().contains("80"), "{e}");
    assert_eq!(
        auto::counter(&fx.engine, &fx.caller, &fx.session)
            .await
            .unwrap(),
        None
    );
    let e = auto::set_mode(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &ModeRequest {
            mode: SessionMode::Automatico,
            credit_cap: Some(10),
            contact_cap: Some(16),
            classes: None,
        },
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.to_string().contains("15"), "{e}");

    auto::set_mode(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &ModeRequest {
            mode: SessionMode::Automatico,
            credit_cap: Some(80),
            contact_cap: Some(15),
            classes: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(board(&fx).await.auto.unwrap().credit_cap, 80);

    let e = auto::set_policy(
        &fx.engine,
        &admin,
        &luna_protocol::session::AutoPolicy {
            default_credit_cap: 100,
            ..policy
        },
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}
