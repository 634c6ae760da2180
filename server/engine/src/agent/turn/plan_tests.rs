//! Chained requests end to end on the engine: one message that asks for three things
//! runs to the sequence card with the person only resolving cards; a declined card
//! ends the plan with a note and starts nothing.

use std::sync::Arc;
use std::time::Duration;

use luna_protocol::account::{Plan, Role};
use luna_protocol::chat::ChatMessage;
use luna_protocol::decision::{DecisionKind, Resolution};
use luna_protocol::view::SessionView;

use super::service::{continue_after, submit};
use crate::accounts::Caller;
use crate::agent::director::planner::LocalDirector;
use crate::testkit::World;
use crate::Engine;

const SCENE: &str = "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos, consígueme el correo de los 10 mejores y ármame una secuencia de tres correos.";

async fn setup() -> (World, String) {
    let w = World::new(Plan::Founder, Role::Member).await.unwrap();
    w.engine.market.ensure_demo().await.unwrap();
    crate::crm::demo::seed_workspace(&w.engine.store, &w.caller.workspace_id)
        .await
        .unwrap();
    let session = w.engine.sessions.create(&w.caller).await.unwrap();
    (w, session.id)
}

async fn view(engine: &Engine, caller: &Caller, session: &str) -> SessionView {
    engine
        .sessions
        .snapshot_at_latest(caller, session)
        .await
        .unwrap()
        .view
}

/// Waits until no turn runs and the board offers a card of `kind` (or, with `None`,
/// until no turn runs and no card is pending).
async fn settle(
    engine: &Engine,
    caller: &Caller,
    session: &str,
    kind: Option<DecisionKind>,
) -> SessionView {
    for _ in 0..400 {
        let v = view(engine, caller, session).await;
        let pending: Vec<DecisionKind> = v.board.pending.iter().map(|c| c.kind).collect();
        let ready = match kind {
            Some(k) => pending.contains(&k),
            None => pending.is_empty(),
        };
        if v.active_turn.is_none() && ready {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the session never settled on {kind:?}: {:?}",
        view(engine, caller, session).await.board.pending
    );
}

/// The kind of the next card the session offers once no turn runs and the card the
/// person just resolved is gone (`None` if none comes).
async fn next_card(engine: &Engine, caller: &Caller, session: &str) -> Option<DecisionKind> {
    for _ in 0..400 {
        let v = view(engine, caller, session).await;
        if v.active_turn.is_none() && !v.board.pending.is_empty() {
            return v.board.pending.first().map(|c| c.kind);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

fn count(v: &SessionView, person: bool) -> usize {
    v.chat
        .messages
        .iter()
        .filter(|m| match m {
            ChatMessage::Person { .. } => person,
            ChatMessage::Luna { .. } => !person,
            _ => false,
        })
        .count()
}

async fn accept(engine: &Engine, caller: &Caller, session: &str, v: &SessionView) {
    let card = &v.board.pending[0];
    crate::agent::decisions::resolve(engine, caller, session, &card.id, Resolution::Accept, None)
        .await
        .unwrap();
    continue_after(engine, caller, session);
}

#[tokio::test]
async fn one_message_runs_to_the_sequence_card_with_the_person_only_accepting_cards() {
    let (w, session) = setup().await;
    submit(
        &w.engine,
        Arc::new(LocalDirector),
        &w.caller,
        &session,
        SCENE,
        "k-1",
    )
    .await
    .unwrap();
    let v = settle(
        &w.engine,
        &w.caller,
        &session,
        Some(DecisionKind::GuardarEnCrm),
    )
    .await;
    assert_eq!(v.board.selection.len(), 40);

    accept(&w.engine, &w.caller, &session, &v).await;
    let v = settle(
        &w.engine,
        &w.caller,
        &session,
        Some(DecisionKind::RevelarContactos),
    )
    .await;
    assert!(v.board.saved.is_some(), "the list was saved");

    accept(&w.engine, &w.caller, &session, &v).await;
    let v = settle(
        &w.engine,
        &w.caller,
        &session,
        Some(DecisionKind::RevisarSecuencia),
    )
    .await;
    assert_eq!(count(&v, true), 1, "the person wrote one message");
    assert_eq!(
        count(&v, false),
        3,
        "Luna answered three times, each a visible turn"
    );
    assert!(
        super::plan::pending(&w.engine, &session)
            .await
            .unwrap()
            .is_none(),
        "the sequence card was the last part: no plan is left"
    );
}

#[tokio::test]
async fn declining_a_card_ends_the_plan_with_a_note_and_starts_nothing() {
    let (w, session) = setup().await;
    submit(
        &w.engine,
        Arc::new(LocalDirector),
        &w.caller,
        &session,
        SCENE,
        "k-1",
    )
    .await
    .unwrap();
    let v = settle(
        &w.engine,
        &w.caller,
        &session,
        Some(DecisionKind::GuardarEnCrm),
    )
    .await;
    let card = v.board.pending[0].id.clone();
    crate::agent::decisions::resolve(
        &w.engine,
        &w.caller,
        &session,
        &card,
        Resolution::Decline,
        None,
    )
    .await
    .unwrap();
    continue_after(&w.engine, &w.caller, &session);
    for _ in 0..100 {
        let v = view(&w.engine, &w.caller, &session).await;
        if count(&v, false) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let v = settle(&w.engine, &w.caller, &session, None).await;
    let last = v.chat.messages.iter().rev().find_map(|m| match m {
        ChatMessage::Luna { text, .. } => Some(text.clone()),
        _ => None,
    });
    assert_eq!(
        last.as_deref(),
        Some("Dejé ahí lo demás de tu pedido. Si quieres retomarlo, dímelo.")
    );
    assert!(v.board.saved.is_none(), "nothing was saved");
    let turns: i64 = sqlx::query_scalar("select count(*) from turns where session_id = $1")
        .bind(&session)
        .fetch_one(w.engine.store.pool())
        .await
        .unwrap();
    assert_eq!(turns, 1, "no turn continued the plan");
}

/// The scene asked again in the same workspace: the ten contacts were revealed the
/// first time, so no card for them (it would cost nothing and buy nothing); Luna says
/// they are on file and goes straight on to the sequence card.
#[tokio::test]
async fn contacts_revealed_before_are_skipped_and_the_plan_goes_on_to_the_sequence() {
    let (w, first) = setup().await;
    crate::crm::directory::ensure_demo(w.engine.crm.store())
        .await
        .unwrap();
    for session in [first, w.engine.sessions.create(&w.caller).await.unwrap().id] {
        submit(
            &w.engine,
            Arc::new(LocalDirector),
            &w.caller,
            &session,
            SCENE,
            "k-1",
        )
        .await
        .unwrap();
        let v = settle(
            &w.engine,
            &w.caller,
            &session,
            Some(DecisionKind::GuardarEnCrm),
        )
        .await;
        accept(&w.engine, &w.caller, &session, &v).await;
        let v = next_card(&w.engine, &w.caller, &session).await;
        if v == Some(DecisionKind::RevelarContactos) {
            // The first run: the person reveals them.
            let v = view(&w.engine, &w.caller, &session).await;
            accept(&w.engine, &w.caller, &session, &v).await;
            settle(
                &w.engine,
                &w.caller,
                &session,
                Some(DecisionKind::RevisarSecuencia),
            )
            .await;
            continue;
        }
        assert_eq!(
            v,
            Some(DecisionKind::RevisarSecuencia),
            "the second run goes from the save card to the sequence card"
        );
        let v = view(&w.engine, &w.caller, &session).await;
        let last = v.chat.messages.iter().rev().find_map(|m| match m {
            ChatMessage::Luna { text, .. } => Some(text.clone()),
            _ => None,
        });
        assert!(
            last.as_deref()
                .is_some_and(|t| t.starts_with("Esos contactos ya los revelaste")),
            "{last:?}"
        );
        let reveal_cards: i64 = sqlx::query_scalar(
            "select count(*) from decisions where session_id = $1 and kind = 'revelar_contactos'",
        )
        .bind(&session)
        .fetch_one(w.engine.store.pool())
        .await
        .unwrap();
        assert_eq!(reveal_cards, 0, "no card offered the contacts again");
        return;
    }
    panic!("the second run never happened");
}
