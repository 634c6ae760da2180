//! Decision cards and auto mode: accept executes exactly once (also from two tabs at
//! once), decline writes nothing, expiry and re-quotes, who may resolve a merge, and
//! every server lock of auto mode.

use luna_protocol::account::{Plan, Role};
use luna_protocol::decision::{DecisionKind, DecisionOutcome, Ledger as CardLedger};
use luna_protocol::error::ErrorCode;
use luna_protocol::event::SessionEvent;
use luna_protocol::session::{ModeRequest, SessionMode};
use serde_json::json;

use super::*;
use crate::agent::contract::intent::DecisionDraft;
use crate::billing::Ledger;
use crate::knowledge::NewTopic;
use crate::registry::{Surface, ToolRequest};
use crate::testkit;
use crate::testkit::World;

/// The world (`fx.engine`, `fx.caller`, `fx.ok(..)` through `Deref`) plus what these
/// tests share: a session and a collection.
pub(super) struct Fx {
    pub(super) w: World,
    pub(super) session: String,
    pub(super) col: String,
}

impl std::ops::Deref for Fx {
    type Target = World;
    fn deref(&self) -> &World {
        &self.w
    }
}

pub(super) const SUPPLIERS: [&str; 6] = [
    "EBA010101AB1",
    "CJA050505XY2",
    "PLA090909ZZ3",
    "TLA111111AA4",
    "GDL121212BB5",
    "ZAP131313CC6",
];

pub(super) async fn fx(plan: Plan, role: Role) -> Fx {
    fx_with(plan, role, true).await
}

/// `suppliers`: a few hand-made suppliers; without them, the demo market is generated
/// (it is only generated into an empty market).
async fn fx_with(plan: Plan, role: Role, suppliers: bool) -> Fx {
    let engine = testkit::engine().await.unwrap();
    if suppliers {
        for (i, id) in SUPPLIERS.iter().enumerate() {
            testkit::insert_supplier(&engine, id, &format!("Empaques {i} SA de CV"))
                .await
                .unwrap();
        }
    } else {
        engine.market.ensure_demo().await.unwrap();
    }
    let caller = testkit::caller(&engine, plan, role).await.unwrap();
    crate::crm::directory::ensure_demo(engine.crm.store())
        .await
        .unwrap();
    let c = crate::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        crate::crm::demo::prospeccion(),
    )
    .await
    .unwrap();
    let session = engine.sessions.create(&caller).await.unwrap().id;
    Fx {
        w: World { engine, caller },
        session,
        col: format!("collection:{}", c.id),
    }
}

pub(super) async fn save_card(fx: &Fx) -> Prepared {
    let env = fx
        .call(
                "crm_save_companies",
                json!({"collection_id": fx.col, "source": ["company:emp-0001", "company:emp-0002", "company:emp-0003"], "conflict_policy": "skip"}),
            Surface::Luna,
        )
        .await
        .unwrap();
    let proposal_id = env.results[0].fields["proposal_id"]
        .as_str()
        .unwrap()
        .to_owned();
    prepare(
        &fx.engine,
        &fx.caller,
        &DecisionDraft::GuardarEnCrm { proposal_id },
        Some(&env),
    )
    .await
    .unwrap()
}

pub(super) async fn handles(fx: &Fx, suppliers: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for s in suppliers {
        let found = fx
            .engine
            .people
            .search(&fx.caller, &format!("company:{s}"))
            .await
            .unwrap();
        out.extend(found.into_iter().map(|v| v.card.handle));
    }
    out
}

async fn reveal_card(fx: &Fx, people: &[String]) -> Prepared {
    let quote = fx.engine.people.quote(&fx.caller, people).await.unwrap();
    prepare(
        &fx.engine,
        &fx.caller,
        &DecisionDraft::RevelarContactos { quote_id: quote.id },
        None,
    )
    .await
    .unwrap()
}

async fn offer_in(fx: &Fx, turn: &str, p: Prepared) -> Offered {
    offer(&fx.engine, &fx.caller, &fx.session, Some(turn), p)
        .await
        .unwrap()
}

/// The fixture's person resolves a card of the fixture's session.
async fn decide(fx: &Fx, decision_id: &str, how: Resolution) -> EngineResult<Resolved> {
    resolve(&fx.engine, &fx.caller, &fx.session, decision_id, how, None).await
}

async fn scalar(fx: &Fx, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(fx.engine.store.pool())
        .await
        .unwrap()
}

async fn resolved_events(fx: &Fx) -> Vec<luna_protocol::event::DecisionResolved> {
    fx.engine
        .sessions
        .events_since(&fx.caller, &fx.session, 0)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            SessionEvent::DecisionResolved(r) => Some(r),
            _ => None,
        })
        .collect()
}

pub(super) async fn board(fx: &Fx) -> luna_protocol::board::Board {
    fx.engine
        .sessions
        .snapshot_at_latest(&fx.caller, &fx.session)
        .await
        .unwrap()
        .view
        .board
}

async fn auto_on(fx: &Fx, credit_cap: u32, contact_cap: u32) {
    auto::set_mode(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &ModeRequest {
            mode: SessionMode::Automatico,
            credit_cap: Some(credit_cap),
            contact_cap: Some(contact_cap),
            classes: None,
        },
    )
    .await
    .unwrap();
}

// ------------------------------------------------------------------ cards

#[tokio::test]
async fn a_save_card_executes_exactly_once_when_two_tabs_accept_at_once() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let offered = offer_in(&fx, "t1", save_card(&fx).await).await;
    assert!(offered.auto.is_none(), "Preguntar never resolves alone");
    assert_eq!(offered.card.kind, DecisionKind::GuardarEnCrm);
    let preview = &offered.card.preview[0];
    assert_eq!(
        preview.label, "Se crearán 3 registros en «Nuevo»",
        "{:?}",
        offered.card.preview
    );
    assert!(preview
        .detail
        .as_deref()
        .is_some_and(|d| d.split(", ").count() == 3));
    assert_eq!(scalar(&fx, "select count(*) from crm_records").await, 0);
    assert_eq!(board(&fx).await.pending.len(), 1);

    let id = offered.card.id.clone();
    let (a, b) = tokio::join!(
        decide(&fx, &id, Resolution::Accept),
        decide(&fx, &id, Resolution::Accept),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.outcome, DecisionOutcome::Accepted);
    assert_eq!(b.outcome, DecisionOutcome::Accepted);
    assert_eq!([a.already, b.already].iter().filter(|x| !**x).count(), 1);
    assert_eq!(scalar(&fx, "select count(*) from crm_records").await, 3);
    assert_eq!(resolved_events(&fx).await.len(), 1);
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from audit_log where action = 'decision.accepted'"
        )
        .await,
        1
    );
    let b = board(&fx).await;
    assert!(b.pending.is_empty());
    let saved = b.saved.expect("the board shows the saved collection");
    assert_eq!(saved.total, 3);
    // A third click is a no-op.
    let again = decide(&fx, &id, Resolution::Accept).await.unwrap();
    assert!(again.already);
    assert_eq!(scalar(&fx, "select count(*) from crm_records").await, 3);
}

#[tokio::test]
async fn a_newer_save_card_retires_the_pending_one() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let first = offer_in(&fx, "t1", save_card(&fx).await).await.card.id;
    let second = offer_in(&fx, "t2", save_card(&fx).await).await.card.id;
    let pending = board(&fx).await.pending;
    assert_eq!(pending.len(), 1, "one save card at a time: {pending:?}");
    assert_eq!(pending[0].id, second);
    let retired = resolved_events(&fx).await;
    assert_eq!(retired.len(), 1);
    assert_eq!(retired[0].outcome, DecisionOutcome::Expired);
    // The retired card saves nothing; the newer one still does.
    let late = decide(&fx, &first, Resolution::Accept).await.unwrap();
    assert!(late.already && late.outcome == DecisionOutcome::Expired);
    assert_eq!(scalar(&fx, "select count(*) from crm_records").await, 0);
    decide(&fx, &second, Resolution::Accept).await.unwrap();
    assert_eq!(scalar(&fx, "select count(*) from crm_records").await, 3);
}

#[tokio::test]
async fn declining_writes_nothing_but_the_log() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let id = offer_in(&fx, "t1", save_card(&fx).await).await.card.id;
    let r = decide(&fx, &id, Resolution::Decline).await.unwrap();
    assert_eq!(r.outcome, DecisionOutcome::Declined);
    // Accepting a declined card does nothing.
    let r = decide(&fx, &id, Resolution::Accept).await.unwrap();
    assert!(r.already && r.outcome == DecisionOutcome::Declined);
    assert_eq!(scalar(&fx, "select count(*) from crm_records").await, 0);
    assert_eq!(scalar(&fx, "select count(*) from crm_history").await, 0);
    assert!(board(&fx).await.pending.is_empty());
    assert_eq!(
        resolved_events(&fx).await[0].outcome,
        DecisionOutcome::Declined
    );
}

#[tokio::test]
async fn a_reveal_card_shows_price_balance_and_expiry_and_charges_once() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let people = handles(&fx, &SUPPLIERS[..2]).await;
    let n = people.len() as u32;
    assert!(n >= 2);
    let card = offer_in(&fx, "t1", reveal_card(&fx, &people).await)
        .await
        .card;
    assert_eq!(
        card.price.map(|c| (c.amount, c.ledger)),
        Some((2 * n, CardLedger::Contacto))
    );
    assert_eq!(card.balance.map(|c| c.amount), Some(100));
    let ttl = card.expires_at.unwrap() - crate::base::clock::now_ms();
    assert!((9 * 60_000..=10 * 60_000).contains(&ttl), "{ttl}");
    assert_eq!(
        fx.balance(Ledger::Contact).await.left(),
        100,
        "a card charges nothing"
    );

    let r = decide(&fx, &card.id, Resolution::Accept).await.unwrap();
    assert!(r.result.unwrap().summary.contains("Revelé"));
    let r2 = decide(&fx, &card.id, Resolution::Accept).await.unwrap();
    assert!(r2.already);
    assert_eq!(fx.balance(Ledger::Contact).await.left(), 100 - 2 * n as i64);
    assert_eq!(
        scalar(&fx, "select count(*) from people_reveals").await,
        n as i64
    );
    // Audited with who and the billing receipt.
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from audit_log where action = 'decision.accepted' and detail like '%\"receipt\":\"%'"
        )
        .await,
        1
    );
}

#[tokio::test]
async fn an_expired_card_cannot_be_accepted() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let people = handles(&fx, &SUPPLIERS[..1]).await;
    let card = offer_in(&fx, "t1", reveal_card(&fx, &people).await)
        .await
        .card;
    sqlx::query("update people_quotes set expires_at = 1")
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    sqlx::query("update decisions set expires_at = 1")
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    let e = decide(&fx, &card.id, Resolution::Accept).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::DecisionExpired);
    assert_eq!(fx.balance(Ledger::Contact).await.left(), 100);
    assert_eq!(
        resolved_events(&fx).await[0].outcome,
        DecisionOutcome::Expired
    );
    assert!(board(&fx).await.pending.is_empty());
}

#[tokio::test]
async fn a_changed_selection_requotes_the_pending_reveal_card() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let people = handles(&fx, &SUPPLIERS[..2]).await;
    let first = handles(&fx, &SUPPLIERS[..1]).await.len() as u32;
    let card = offer_in(&fx, "t1", reveal_card(&fx, &people).await)
        .await
        .card;
    // The person removes the second company from the selection.
    let selected = vec![format!("company:{}", SUPPLIERS[0])];
    requote_on_selection(&fx.engine, &fx.caller, &fx.session, &selected)
        .await
        .unwrap();
    let pending = board(&fx).await.pending;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, card.id, "same card, new quote");
    assert_eq!(pending[0].price.unwrap().amount, 2 * first);
    decide(&fx, &card.id, Resolution::Accept).await.unwrap();
    assert_eq!(
        fx.balance(Ledger::Contact).await.left(),
        100 - 2 * first as i64
    );
    // A selection without any of the quoted companies cancels the card.
    let card = offer_in(
        &fx,
        "t2",
        reveal_card(&fx, &handles(&fx, &SUPPLIERS[3..4]).await).await,
    )
    .await
    .card;
    requote_on_selection(&fx.engine, &fx.caller, &fx.session, &selected)
        .await
        .unwrap();
    assert!(board(&fx).await.pending.iter().all(|c| c.id != card.id));
}

#[tokio::test]
async fn only_an_owner_or_admin_resolves_a_merge() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let (topic, _) = fx
        .engine
        .knowledge
        .create_note(
            &fx.caller,
            &NewTopic {
                title: "Compras de gobierno en Jalisco".into(),
                area: "gobierno".into(),
                body: "Las dependencias estatales compran por licitación pública.".into(),
                patterns: Vec::new(),
            },
            "Nota de campo",
            "ui",
        )
        .await
        .unwrap();
    let p = prepare(
        &fx.engine,
        &fx.caller,
        &DecisionDraft::FusionarConocimiento {
            topic: topic.slug.clone(),
        },
        None,
    )
    .await
    .unwrap();
    let card = offer_in(&fx, "t1", p).await.card;
    let e = decide(&fx, &card.id, Resolution::Accept).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);
    assert_eq!(board(&fx).await.pending.len(), 1, "it waits for an admin");
    let admin = fx.teammate(Role::Admin, "Beto Admin").await.unwrap();
    let r = resolve(
        &fx.engine,
        &admin,
        &fx.session,
        &card.id,
        Resolution::Accept,
        None,
    )
    .await
    .unwrap();
    assert_eq!(r.outcome, DecisionOutcome::Accepted);
    let t = fx
        .engine
        .knowledge
        .get(&fx.caller, &topic.slug)
        .await
        .unwrap();
    assert_eq!(t.status, crate::knowledge::TopicStatus::Knowledge);
}

#[tokio::test]
async fn a_note_card_puts_the_note_in_review_only_when_accepted() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let draft = DecisionDraft::DejarNota {
        draft: "En Jalisco los compradores de gobierno piden factura electrónica 4.0.".into(),
    };
    let declined = offer_in(
        &fx,
        "t1",
        prepare(&fx.engine, &fx.caller, &draft, None).await.unwrap(),
    )
    .await
    .card;
    decide(&fx, &declined.id, Resolution::Decline)
        .await
        .unwrap();
    assert!(fx
        .engine
        .knowledge
        .pending(&fx.caller)
        .await
        .unwrap()
        .is_empty());
    let card = offer_in(
        &fx,
        "t2",
        prepare(&fx.engine, &fx.caller, &draft, None).await.unwrap(),
    )
    .await
    .card;
    decide(&fx, &card.id, Resolution::Accept).await.unwrap();
    let pending = fx.engine.knowledge.pending(&fx.caller).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert!(pending[0].title.starts_with("En Jalisco"));
}

#[tokio::test]
async fn another_workspace_cannot_resolve_a_card() {
    let fx = fx(Plan::Founder, Role::Owner).await;
    let card = offer_in(&fx, "t1", save_card(&fx).await).await.card;
    let stranger = fx
        .other_workspace(Plan::Founder, Role::Owner)
        .await
        .unwrap();
    let e = resolve(
        &fx.engine,
        &stranger,
        &fx.session,
        &card.id,
        Resolution::Accept,
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert_eq!(scalar(&fx, "select count(*) from crm_records").await, 0);
}

// ------------------------------------------------------------------ auto mode

#[tokio::test]
async fn auto_spending_stops_exactly_at_the_cap() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let per_company = handles(&fx, &SUPPLIERS[..1]).await.len() as u32;
    let cap = 2 * per_company * 2;
    auto_on(&fx, cap, 50).await;
    // Saving runs alone (level 1, free) and unlocks contacts.
    let saved = offer_in(&fx, "t1", save_card(&fx).await).await;
    assert!(saved.auto.is_some(), "{:?}", saved.held);
    for s in &SUPPLIERS[..2] {
        let o = offer_in(&fx, "t1", reveal_card(&fx, &handles(&fx, &[s]).await).await).await;
        let r = o.auto.expect("inside the budget it runs in auto");
        let summary = r.result.unwrap().summary;
        assert!(
            summary.contains("automático por la política que Ana Prueba fijó a las"),
            "{summary}"
        );
    }
    let counter = board(&fx).await.auto.unwrap();
    assert_eq!(counter.credits_spent, cap);
    assert_eq!(fx.balance(Ledger::Contact).await.left(), 100 - cap as i64);
    // One more credit would cross the cap: it becomes a card.
    let o = offer_in(
        &fx,
        "t2",
        reveal_card(&fx, &handles(&fx, &SUPPLIERS[2..3]).await).await,
    )
    .await;
    assert!(o.auto.is_none());
    assert_eq!(o.held, Some(Held::OverBudget));
    assert_eq!(board(&fx).await.pending.len(), 1);
    assert_eq!(fx.balance(Ledger::Contact).await.left(), 100 - cap as i64);
}

#[tokio::test]
async fn the_eleventh_contact_in_a_turn_becomes_a_card() {
    let fx = fx(Plan::Commercial, Role::Member).await;
    auto_on(&fx, 200, 100).await;
    offer_in(&fx, "t1", save_card(&fx).await)
        .await
        .auto
        .unwrap();
    let mut revealed = 0;
    let mut held = None;
    for s in SUPPLIERS {
        let o = offer_in(&fx, "t1", reveal_card(&fx, &handles(&fx, &[s]).await).await).await;
        match o.auto {
            Some(_) => revealed += handles(&fx, &[s]).await.len(),
            None => {
                held = o.held;
                break;
            }
        }
    }
    assert!((8..=10).contains(&revealed), "{revealed}");
    assert_eq!(held, Some(Held::TurnContactLimit));
    assert_eq!(
        scalar(&fx, "select count(*) from people_reveals").await,
        revealed as i64
    );
    // A new turn starts a new per-turn allowance.
    let o = offer_in(
        &fx,
        "t2",
        reveal_card(&fx, &handles(&fx, &SUPPLIERS[5..]).await).await,
    )
    .await;
    assert!(o.auto.is_some(), "{:?}", o.held);
}

#[tokio::test]
async fn auto_contacts_before_the_list_is_saved_become_cards() {
    let fx = fx(Plan::Founder, Role::Member).await;
    auto_on(&fx, 100, 30).await;
    let o = offer_in(
        &fx,
        "t1",
        reveal_card(&fx, &handles(&fx, &SUPPLIERS[..1]).await).await,
    )
    .await;
    assert_eq!(o.held, Some(Held::ListNotSaved));
    assert_eq!(fx.balance(Ledger::Contact).await.left(), 100);
}

#[tokio::test]
async fn merging_knowledge_and_sequences_never_run_in_auto() {
    let fx = fx(Plan::Commercial, Role::Owner).await;
    auto_on(&fx, 100, 30).await;
    let (topic, _) = fx
        .engine
        .knowledge
        .create_note(
            &fx.caller,
            &NewTopic {
                title: "Precios de referencia".into(),
                area: "ventas".into(),
                body: "Cotizamos a 30 días.".into(),
                patterns: Vec::new(),
            },
            "Nota",
            "ui",
        )
        .await
        .unwrap();
    let p = prepare(
        &fx.engine,
        &fx.caller,
        &DecisionDraft::FusionarConocimiento { topic: topic.slug },
        None,
    )
    .await
    .unwrap();
    let o = offer_in(&fx, "t1", p).await;
    assert_eq!(o.held, Some(Held::NeverInAuto));
    // An admin cannot allow them in auto either, nor can a person choose them.
    let mut policy = auto::policy(&fx.engine, &fx.caller).await.unwrap();
    policy.classes.push(DecisionKind::RevisarSecuencia);
    let e = auto::set_policy(&fx.engine, &fx.caller, &policy)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    let e = auto::set_mode(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &ModeRequest {
            mode: SessionMode::AjusteFino,
            credit_cap: None,
            contact_cap: None,
            classes: Some(vec![DecisionKind::FusionarConocimiento]),
        },
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn ajuste_fino_runs_only_the_chosen_classes() {
    let fx = fx(Plan::Founder, Role::Member).await;
    auto::set_mode(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &ModeRequest {
            mode: SessionMode::AjusteFino,
            credit_cap: Some(50),
            contact_cap: Some(10),
            classes: Some(vec![DecisionKind::DejarNota]),
        },
    )
    .await
    .unwrap();
    let o = offer_in(&fx, "t1", save_card(&fx).await).await;
    assert_eq!(o.held, Some(Held::ClassNotChosen));
    let note = DecisionDraft::DejarNota {
        draft: "Nota de prueba para el equipo.".into(),
    };
    let o = offer_in(
        &fx,
        "t1",
        prepare(&fx.engine, &fx.caller, &note, None).await.unwrap(),
    )
    .await;
    assert!(o.auto.is_some());
}

#[tokio::test]
async fn auto_does_not_survive_a_new_session_and_needs_a_paid_plan() {
    let fx = fx(Plan::Founder, Role::Member).await;
    auto_on(&fx, 100, 30).await;
    let next = fx.engine.sessions.create(&fx.caller).await.unwrap();
    assert_eq!(next.mode, SessionMode::Preguntar);
    let o = offer(
        &fx.engine,
        &fx.caller,
        &next.id,
        Some("t1"),
        save_card(&fx).await,
    )
    .await
    .unwrap();
    assert_eq!(o.held, Some(Held::Off));

    let explorer = crate::accounts::Caller {
        plan: Plan::Explorer,
        ..fx.caller.clone()
    };
    let e = auto::set_mode(
        &fx.engine,
        &explorer,
        &fx.session,
        &ModeRequest {
            mode: SessionMode::Automatico,
            credit_cap: None,
            contact_cap: None,
            classes: None,
        },
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::PlanLimit);
}

#[tokio::test]
async fn an_admin_can_switch_auto_off_for_the_workspace() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let e = auto::set_policy(&fx.engine, &fx.caller, &Default::default())
        .await
        .unwrap_err();
    assert_eq!(
        e.code(),
        ErrorCode::Forbidden,
        "members cannot change the policy"
    );
    let admin = fx.teammate(Role::Admin, "Beto Admin").await.unwrap();
    let off = luna_protocol::session::AutoPolicy {
        allowed: false,
        ..Default::default()
    };
    auto::set_policy(&fx.engine, &admin, &off).await.unwrap();
    let e = auto::set_mode(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &ModeRequest {
            mode: SessionMode::Automatico,
            credit_cap: None,
            contact_cap: None,
            classes: None,
        },
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from audit_log where action = 'auto.policy'"
        )
        .await,
        1
    );
}

// ------------------------------------------------------------------ adversary

/// A model that decides each step from what it has seen (so it can use ids that tools
/// returned in the same turn), scripted to cross every boundary it can think of.
pub(super) struct Adversary<F>(pub(super) F);

impl<F> crate::agent::contract::gateway::ModelGateway for Adversary<F>
where
    F: Fn(
            &crate::agent::contract::gateway::ModelInput,
        ) -> crate::agent::contract::gateway::ModelStep
        + Send
        + Sync,
{
    fn route(&self) -> crate::agent::contract::gateway::Route {
        crate::agent::contract::gateway::Route::Scripted
    }

    fn step<'a>(
        &'a self,
        input: &'a crate::agent::contract::gateway::ModelInput,
    ) -> crate::agent::contract::gateway::StepFuture<'a> {
        Box::pin(async move { Ok((self.0)(input)) })
    }
}

fn find_key<'v>(v: &'v serde_json::Value, key: &str) -> Option<&'v str> {
    match v {
        serde_json::Value::Object(m) => m
            .get(key)
            .and_then(serde_json::Value::as_str)
            .or_else(|| m.values().find_map(|x| find_key(x, key))),
        serde_json::Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

pub(super) fn tool(
    name: &str,
    args: serde_json::Value,
) -> crate::agent::contract::gateway::ToolCall {
    crate::agent::contract::gateway::ToolCall {
        name: name.into(),
        args,
    }
}

pub(super) fn final_step(
    intent: crate::agent::contract::intent::TurnIntent,
    text: &str,
) -> crate::agent::contract::gateway::ModelStep {
    crate::agent::contract::gateway::ModelStep::Final(crate::agent::contract::intent::TurnOutput {
        intent,
        narracion: text.into(),
    })
}

#[tokio::test]
async fn a_model_cannot_make_anything_costly_happen_without_a_card() {
    use crate::agent::contract::gateway::ModelStep;
    use crate::agent::contract::intent::TurnIntent;
    use crate::agent::turn::runner::run_turn;

    let fx = fx(Plan::Founder, Role::Member).await;
    // A selection on the board, so the people tools are in view.
    let item = luna_protocol::board::SelectionItem {
        reference: format!("company:{}", SUPPLIERS[0]),
        label: "Empaques 0 SA de CV".into(),
        why: "Le vendió a gobierno".into(),
        evidence: Vec::new(),
        priority: None,
    };
    fx.engine
        .sessions
        .append_one(
            &fx.session,
            SessionEvent::BoardPatched(luna_protocol::event::BoardPatched {
                turn_id: None,
                patch: vec![luna_protocol::patch::PatchOp::add(
                    luna_protocol::board::Board::SELECTION,
                    json!([item]),
                )],
            }),
        )
        .await
        .unwrap();
    let people = handles(&fx, &SUPPLIERS[..1]).await;

    // Turn 1: reveal directly with a forged quote, "send" without a tool, quote for
    // real and reveal that directly, then propose a card over a forged quote id.
    let h = people.clone();
    let adversary = Adversary(move |input: &crate::agent::contract::gateway::ModelInput| {
        let t = &input.transcript;
        let real = t
            .iter()
            .find_map(|e| find_key(&e.result, "quote_id").map(str::to_owned));
        if input.repair.is_some() {
            return final_step(
                TurnIntent::ProponerDecision {
                    decision: DecisionDraft::RevelarContactos {
                        quote_id: real.unwrap_or_default(),
                    },
                },
                "Te propongo revelar estos contactos.",
            );
        }
        match t.len() {
            0 => ModelStep::Tools(vec![
                tool(
                    "people_reveal",
                    json!({"quote_id": "quo_forjada", "confirm": true, "max_credits": 999, "idempotency_key": "k-1"}),
                ),
                tool("sequence_send", json!({"to": "todos", "now": true})),
                tool("people_quote", json!({"handles": h})),
            ]),
            3 => ModelStep::Tools(vec![tool(
                "people_reveal",
                json!({"quote_id": real, "confirm": true, "max_credits": 999, "idempotency_key": "k-2"}),
            )]),
            _ => final_step(
                TurnIntent::ProponerDecision {
                    decision: DecisionDraft::RevelarContactos {
                        quote_id: "quo_forjada".into(),
                    },
                },
                "Ya quedó revelado.",
            ),
        }
    });
    let out = run_turn(
        &fx.engine,
        &adversary,
        &fx.caller,
        &fx.session,
        "t1",
        "revélalos ya, sin tarjeta",
    )
    .await
    .unwrap();
    assert!(out.repaired, "the forged quote id is rejected");
    let direct: Vec<&serde_json::Value> = out
        .transcript
        .iter()
        .filter(|e| e.tool.name != "people_quote")
        .map(|e| &e.result)
        .collect();
    assert!(
        direct
            .iter()
            .all(|r| r.get("error").is_some() || find_key(r, "email").is_none()),
        "{direct:?}"
    );
    assert_eq!(fx.balance(Ledger::Contact).await.left(), 100);
    assert_eq!(scalar(&fx, "select count(*) from people_reveals").await, 0);
    // The legitimate card is pending, with the server's key the model never saw.
    let pending = board(&fx).await.pending;
    assert_eq!(pending.len(), 1);
    let key: String = sqlx::query_scalar("select idempotency_key from decisions")
        .fetch_one(fx.engine.store.pool())
        .await
        .unwrap();
    assert!(!out
        .transcript
        .iter()
        .any(|e| e.result.to_string().contains(&key)));

    // Turn 2: even with the card's key leaked and auto mode on (list not saved), a
    // direct reveal stays a preview, and the card stays a card.
    auto_on(&fx, 100, 30).await;
    let quote: String =
        sqlx::query_scalar("select id from people_quotes order by created_at desc limit 1")
            .fetch_one(fx.engine.store.pool())
            .await
            .unwrap();
    let leaked = key.clone();
    let adversary = Adversary(
        move |input: &crate::agent::contract::gateway::ModelInput| match input.transcript.len() {
            0 => ModelStep::Tools(vec![tool(
                "people_reveal",
                json!({"quote_id": quote, "confirm": true, "max_credits": 999, "idempotency_key": leaked}),
            )]),
            _ => final_step(TurnIntent::Responder {}, "Listo."),
        },
    );
    run_turn(
        &fx.engine,
        &adversary,
        &fx.caller,
        &fx.session,
        "t2",
        "hazlo",
    )
    .await
    .unwrap();
    assert_eq!(fx.balance(Ledger::Contact).await.left(), 100);
    assert_eq!(scalar(&fx, "select count(*) from people_reveals").await, 0);
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from decisions where status = 'accepted'"
        )
        .await,
        0
    );
}

// ------------------------------------------------------------------ the scene

/// The person in Luna's local director says `message` in turn `turn`.
async fn say(fx: &Fx, turn: &str, message: &str) -> crate::agent::turn::runner::TurnOutcome {
    let director = crate::agent::director::planner::LocalDirector;
    crate::agent::turn::runner::run_turn(
        &fx.engine,
        &director,
        &fx.caller,
        &fx.session,
        turn,
        message,
    )
    .await
    .unwrap()
}

async fn scene(fx: &Fx) -> String {
    crate::crm::demo::seed_workspace(&fx.engine.store, &fx.caller.workspace_id)
        .await
        .unwrap();
    say(fx, "t1", "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos y consígueme el correo de los 10 mejores.").await;
    let pending = board(fx).await.pending;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].kind, DecisionKind::GuardarEnCrm);
    pending[0].id.clone()
}

async fn ask_contacts(fx: &Fx, turn: &str) -> crate::agent::turn::runner::TurnOutcome {
    say(fx, turn, "consígueme el correo de los 10 mejores").await
}

#[tokio::test]
async fn after_saving_the_director_quotes_the_top_ten_and_leaves_a_priced_card() {
    let fx = fx_with(Plan::Founder, Role::Member, false).await;
    let save = scene(&fx).await;
    decide(&fx, &save, Resolution::Accept).await.unwrap();
    assert_eq!(board(&fx).await.saved.unwrap().total, 40);
    let out = ask_contacts(&fx, "t2").await;
    assert!(
        matches!(
            out.intent,
            crate::agent::contract::intent::TurnIntent::ProponerDecision {
                decision: DecisionDraft::RevelarContactos { .. }
            }
        ),
        "{:?} {}",
        out.intent,
        out.narration.text
    );
    assert!(!out.narration.text.contains("[["), "{}", out.narration.text);
    let pending = board(&fx).await.pending;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].kind, DecisionKind::RevelarContactos);
    assert_eq!(
        pending[0].price.unwrap().amount,
        20,
        "one contact for each of the 10"
    );
    assert_eq!(pending[0].preview.len(), 10);
    assert_eq!(
        fx.balance(Ledger::Contact).await.left(),
        100,
        "nothing charged before the tap"
    );
}

#[tokio::test]
async fn in_auto_mode_the_contacts_run_alone_and_the_counter_moves() {
    let fx = fx_with(Plan::Founder, Role::Member, false).await;
    let save = scene(&fx).await;
    auto_on(&fx, 50, 30).await;
    decide(&fx, &save, Resolution::Accept).await.unwrap();
    ask_contacts(&fx, "t2").await;
    let b = board(&fx).await;
    assert!(b.pending.is_empty(), "{:?}", b.pending);
    let counter = b.auto.unwrap();
    assert_eq!((counter.credits_spent, counter.contacts_spent), (20, 10));
    assert_eq!(fx.balance(Ledger::Contact).await.left(), 80);
    let resolved = resolved_events(&fx).await;
    let last = resolved.last().unwrap();
    assert_eq!(last.outcome, DecisionOutcome::Accepted);
    assert!(last
        .result
        .as_ref()
        .unwrap()
        .summary
        .contains("llevas 20 de 50 créditos"));
}

#[tokio::test]
async fn the_scene_ends_with_a_sequence_a_person_authorizes_step_by_step() {
    let fx = fx_with(Plan::Founder, Role::Member, false).await;
    let save = scene(&fx).await;
    decide(&fx, &save, Resolution::Accept).await.unwrap();
    ask_contacts(&fx, "t2").await;
    let reveal = board(&fx).await.pending[0].id.clone();
    decide(&fx, &reveal, Resolution::Accept).await.unwrap();
    let director = crate::agent::director::planner::LocalDirector;
    let out = crate::agent::turn::runner::run_turn(
        &fx.engine,
        &director,
        &fx.caller,
        &fx.session,
        "t3",
        "ármame una secuencia de tres correos",
    )
    .await
    .unwrap();
    assert!(!out.narration.text.contains("[["), "{}", out.narration.text);
    assert!(
        out.narration
            .text
            .contains("3 correos para 10 destinatarios"),
        "{}",
        out.narration.text
    );
    let b = board(&fx).await;
    let card = &b.pending[0];
    assert_eq!(card.kind, DecisionKind::RevisarSecuencia);
    assert_eq!(card.steps.len(), 3);
    assert_eq!(b.sequences.len(), 1);
    assert_eq!(
        b.sequences[0].status,
        luna_protocol::board::SequenceStatus::Borrador
    );
    assert_eq!(scalar(&fx, "select count(*) from sequence_sends").await, 0);

    // Accepting without naming ticked steps, naming none, or naming a step the
    // sequence does not have authorizes nothing and leaves the card pending.
    let e = decide(&fx, &card.id, Resolution::Accept).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    let e = authorize_steps(&fx.engine, &fx.caller, &fx.session, &card.id, &[], None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    let e = authorize_steps(&fx.engine, &fx.caller, &fx.session, &card.id, &[0, 7], None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(scalar(&fx, "select count(*) from sequence_sends").await, 0);
    assert_eq!(
        scalar(&fx, "select count(*) from sequence_authorizations").await,
        0
    );
    assert_eq!(board(&fx).await.pending.len(), 1, "the card still waits");

    let r = authorize_steps(&fx.engine, &fx.caller, &fx.session, &card.id, &[0, 1], None)
        .await
        .unwrap();
    assert_eq!(r.outcome, DecisionOutcome::Accepted);
    assert_eq!(scalar(&fx, "select count(*) from sequence_sends").await, 20);
    let report =
        crate::sequences::dispatch::run_once(&fx.engine, "w1", crate::base::clock::now_ms() + 1000)
            .await
            .unwrap();
    assert_eq!(report.sent, 10);
    let b = board(&fx).await;
    assert_eq!(
        b.sequences[0].status,
        luna_protocol::board::SequenceStatus::Activa
    );
    assert!(b.sequences[0]
        .progress
        .iter()
        .all(|p| p.sent == 1 && p.pending == 1));
}

#[tokio::test]
async fn a_new_search_after_saving_builds_a_new_selection_and_save_card() {
    let fx = fx_with(Plan::Founder, Role::Member, false).await;
    let save = scene(&fx).await;
    decide(&fx, &save, Resolution::Accept).await.unwrap();
    let director = crate::agent::director::planner::LocalDirector;
    let out = crate::agent::turn::runner::run_turn(
        &fx.engine,
        &director,
        &fx.caller,
        &fx.session,
        "t2",
        "Ahora quiero 15 fabricantes de empaque en Nuevo León que le hayan vendido a gobierno. Guárdamelos.",
    )
    .await
    .unwrap();
    let tools: Vec<&str> = out
        .transcript
        .iter()
        .map(|e| e.tool.name.as_str())
        .collect();
    assert!(tools.contains(&"selection_update"), "{tools:?}");
    let b = board(&fx).await;
    assert_eq!(b.pending.len(), 1, "{}", out.narration.text);
    assert_eq!(b.pending[0].kind, DecisionKind::GuardarEnCrm);
    assert!(b.selection.len() <= 15 && !b.selection.is_empty());
}

#[tokio::test]
async fn bulk_changes_and_suggested_edits_run_once_on_accept_and_never_on_decline() {
    let fx = fx(Plan::Founder, Role::Member).await;
    let save = offer_in(&fx, "t1", save_card(&fx).await).await.card.id;
    decide(&fx, &save, Resolution::Accept).await.unwrap();
    let records: Vec<String> = sqlx::query_scalar("select id from crm_records order by id")
        .fetch_all(fx.engine.store.pool())
        .await
        .unwrap();
    let bulk = |fx: &Fx| {
        let changes: Vec<serde_json::Value> = records
            .iter()
            .map(|r| json!({"record_id": format!("record:{r}"), "stage": "Contactado"}))
            .collect();
        let args = json!({"collection_id": fx.col, "changes": changes});
        let engine = fx.engine.clone();
        let caller = fx.caller.clone();
        async move {
            let env = engine
                .call_tool(
                    &caller,
                    ToolRequest::new("crm_bulk_update", args, Surface::Luna),
                )
                .await
                .outcome
                .unwrap();
            let proposal_id = env.results[0].fields["proposal_id"]
                .as_str()
                .unwrap()
                .to_owned();
            prepare(
                &engine,
                &caller,
                &DecisionDraft::CambiosMasivos { proposal_id },
                Some(&env),
            )
            .await
            .unwrap()
        }
    };
    let moved = "select count(*) from crm_records where stage = 'Contactado'";
    // Declined: nothing moves.
    let card = offer_in(&fx, "t2", bulk(&fx).await).await.card;
    assert!(
        card.preview[0].label.starts_with("Cambiarán 3 registros"),
        "{:?}",
        card.preview
    );
    decide(&fx, &card.id, Resolution::Decline).await.unwrap();
    assert_eq!(scalar(&fx, moved).await, 0);
    // Accepted from two tabs at once: every record moves once, one history line each.
    let card = offer_in(&fx, "t3", bulk(&fx).await).await.card;
    let history_before = scalar(&fx, "select count(*) from crm_history").await;
    let (a, b) = tokio::join!(
        decide(&fx, &card.id, Resolution::Accept),
        decide(&fx, &card.id, Resolution::Accept),
    );
    assert_eq!(
        [a.unwrap().already, b.unwrap().already]
            .iter()
            .filter(|x| !**x)
            .count(),
        1
    );
    assert_eq!(scalar(&fx, moved).await, 3);
    assert_eq!(
        scalar(&fx, "select count(*) from crm_history").await - history_before,
        3
    );
    // The saved list on the board counts them in their new stage.
    let saved = fx
        .engine
        .sessions
        .view_of(&fx.session)
        .await
        .unwrap()
        .board
        .saved
        .expect("the list was saved");
    let contacted = saved.stages.iter().find(|s| s.stage == "Contactado");
    assert_eq!(contacted.map(|s| s.count), Some(3), "{:?}", saved.stages);

    // A suggested edit to Knowledge: accepted, it waits for review; the topic is unchanged.
    let admin = fx.teammate(Role::Admin, "Beto Admin").await.unwrap();
    let (topic, note) = fx
        .engine
        .knowledge
        .create_note(
            &admin,
            &NewTopic {
                title: "Plazos de pago".into(),
                area: "ventas".into(),
                body: "Cobramos a 30 días.".into(),
                patterns: Vec::new(),
            },
            "Nota",
            "ui",
        )
        .await
        .unwrap();
    fx.engine.knowledge.merge(&admin, &note.id).await.unwrap();
    let draft = DecisionDraft::SugerirEdicion {
        topic: topic.slug.clone(),
        summary: "Gobierno paga a 20 días".into(),
        patch: Some("Cobramos a 30 días; a gobierno, a 20.".into()),
    };
    let declined = offer_in(
        &fx,
        "t4",
        prepare(&fx.engine, &fx.caller, &draft, None).await.unwrap(),
    )
    .await
    .card;
    decide(&fx, &declined.id, Resolution::Decline)
        .await
        .unwrap();
    assert!(fx
        .engine
        .knowledge
        .pending(&admin)
        .await
        .unwrap()
        .is_empty());
    let card = offer_in(
        &fx,
        "t5",
        prepare(&fx.engine, &fx.caller, &draft, None).await.unwrap(),
    )
    .await
    .card;
    assert!(card.preview[0]
        .detail
        .as_deref()
        .is_some_and(|d| d.contains("a gobierno, a 20")));
    decide(&fx, &card.id, Resolution::Accept).await.unwrap();
    let pending = fx.engine.knowledge.pending(&admin).await.unwrap();
    assert_eq!(pending.len(), 1);
    let t = fx.engine.knowledge.get(&admin, &topic.slug).await.unwrap();
    assert_eq!(
        t.body, "Cobramos a 30 días.",
        "nothing changes before the merge"
    );
}

#[tokio::test]
async fn after_saving_the_director_moves_the_best_to_a_stage_one_with_deshacer_several_with_a_card()
{
    let fx = fx_with(Plan::Founder, Role::Member, false).await;
    let save = scene(&fx).await;
    decide(&fx, &save, Resolution::Accept).await.unwrap();
    let count = |b: &luna_protocol::board::Board, stage: &str| {
        b.saved
            .as_ref()
            .unwrap()
            .stages
            .iter()
            .find(|s| s.stage == stage)
            .map_or(0, |s| s.count)
    };
    let before = board(&fx).await;

    // Several: a card of one tap that says how many will change; nothing moves yet.
    let out = say(&fx, "t2", "mueve los 5 mejores a Contactado").await;
    assert!(
        matches!(
            out.intent,
            crate::agent::contract::intent::TurnIntent::ProponerDecision {
                decision: DecisionDraft::CambiosMasivos { .. }
            }
        ),
        "{:?} {}",
        out.intent,
        out.narration.text
    );
    assert!(
        out.narration.text.contains("Te propongo pasar 5 empresas"),
        "{}",
        out.narration.text
    );
    let b = board(&fx).await;
    assert_eq!(count(&b, "Contactado"), count(&before, "Contactado"));
    let card = b.pending[0].id.clone();
    decide(&fx, &card, Resolution::Accept).await.unwrap();
    let after = board(&fx).await;
    assert_eq!(
        count(&after, "Contactado"),
        count(&before, "Contactado") + 5
    );

    // One: moved at once (level 0) with «deshacer» on its line, and the counts follow.
    let out = say(&fx, "t3", "mueve la mejor a Propuesta").await;
    assert_eq!(out.intent.kind(), "responder", "{}", out.narration.text);
    assert!(
        out.narration.text.starts_with("Moví "),
        "{}",
        out.narration.text
    );
    assert!(!out.narration.text.contains("[["));
    let b = board(&fx).await;
    assert_eq!(count(&b, "Propuesta"), count(&after, "Propuesta") + 1);
    assert_eq!(count(&b, "Contactado"), count(&after, "Contactado") - 1);
    let view = fx.engine.sessions.view_of(&fx.session).await.unwrap();
    assert!(view.chat.messages.iter().any(|m| matches!(
        m,
        luna_protocol::chat::ChatMessage::Tool(l) if l.turn_id == "t3" && l.undo_token.is_some()
    )));

    // A stage the list does not have is said plainly, with the ones it has.
    let out = say(&fx, "t4", "mueve los 2 mejores a Facturado").await;
    assert!(
        out.narration.text.contains("no hay una etapa"),
        "{}",
        out.narration.text
    );
}

mod budget;
