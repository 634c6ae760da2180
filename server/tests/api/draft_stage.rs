//! A session whose sequence draft waits for its review (stage `con_borrador`) keeps
//! working (issue 43, bug 1): declining the review card, or editing a drafted step on
//! the board, must leave a chat that answers its next message and a draft that can
//! still be authorized. Both paths once stored a stage the `work_sessions` CHECK did not
//! allow, and every later message answered «Algo falló de nuestro lado».

use luna_protocol::decision::{DecisionCard, DecisionKind, DecisionOutcome};
use luna_protocol::event::SessionEvent;

use crate::helpers::{spawn_app, Socket, TestApp};
use crate::scene::{
    next_turn, pending_card, resolve_over_socket, server_fn, turn_over_socket, SCENE,
};

/// The scene up to its sequence review card, tapping «aceptar» on the save and reveal
/// cards: (token, session, socket, the review card).
pub(crate) async fn scene_to_sequence_card(
    app: &TestApp,
) -> (String, String, Socket, DecisionCard) {
    app.engine.market.ensure_demo().await.unwrap();
    luna_engine::crm::demo::seed(&app.engine.store)
        .await
        .unwrap();
    let (token, _) = app.login("ventas@demo.luna.mx").await;
    let (_, body) = server_fn(app, &token, "create_session", &[]).await;
    let session: String = serde_json::from_str(&body).unwrap();
    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();
    let first = turn_over_socket(app, &token, &mut socket, &session, SCENE, "d-1").await;
    let save = pending_card(&first).clone();
    let accept = [("resolution", "accept")];
    resolve_over_socket(
        app,
        &token,
        &mut socket,
        &session,
        &save,
        "resolve_decision",
        &accept,
    )
    .await;
    let reveal = pending_card(&next_turn(&mut socket).await).clone();
    resolve_over_socket(
        app,
        &token,
        &mut socket,
        &session,
        &reveal,
        "resolve_decision",
        &accept,
    )
    .await;
    let card = pending_card(&next_turn(&mut socket).await).clone();
    assert_eq!(card.kind, DecisionKind::RevisarSecuencia);
    (token, session, socket, card)
}

/// Sends a message and asserts Luna answered it without failing.
async fn answers(app: &TestApp, token: &str, socket: &mut Socket, session: &str, key: &str) {
    let events = turn_over_socket(
        app,
        token,
        socket,
        session,
        "¿cuántos créditos me quedan?",
        key,
    )
    .await;
    let said: String = events
        .iter()
        .filter_map(|e| match e {
            SessionEvent::NarrationDelta(n) => Some(n.text.as_str()),
            _ => None,
        })
        .collect();
    assert!(!said.is_empty(), "Luna answered: {events:?}");
    assert!(
        !said.contains("Algo falló"),
        "the session still works: {said}"
    );
}

#[tokio::test]
async fn declining_the_sequence_card_leaves_a_session_that_answers() {
    let app = spawn_app().await;
    let (token, session, mut socket, card) = scene_to_sequence_card(&app).await;
    let declined = resolve_over_socket(
        &app,
        &token,
        &mut socket,
        &session,
        &card,
        "resolve_decision",
        &[("resolution", "decline")],
    )
    .await;
    assert!(
        matches!(declined.last(), Some(SessionEvent::DecisionResolved(r)) if r.outcome == DecisionOutcome::Declined)
    );
    answers(&app, &token, &mut socket, &session, "d-2").await;
    answers(&app, &token, &mut socket, &session, "d-3").await;
}

#[tokio::test]
async fn editing_a_drafted_step_leaves_a_session_that_answers_and_a_draft_that_can_be_authorized() {
    let app = spawn_app().await;
    let (token, session, mut socket, card) = scene_to_sequence_card(&app).await;
    let caller = app.login("ventas@demo.luna.mx").await.1;
    let before = board(&app, &caller, &session).await;
    let sequence = &before.sequences[0];
    let version = sequence.version.to_string();
    let (code, body) = server_fn(
        &app,
        &token,
        "edit_sequence_step",
        &[
            ("sequence_id", sequence.sequence_id.as_str()),
            ("version", version.as_str()),
            ("index", "1"),
            ("delay_days", "3"),
            ("subject", "Seguimiento, {{nombre}}"),
            ("body", "¿Le parece si platicamos el jueves?"),
        ],
    )
    .await;
    assert_eq!(code, 200, "{body}");
    answers(&app, &token, &mut socket, &session, "d-2").await;

    // The card issued again over the edit authorizes the new version.
    let after = board(&app, &caller, &session).await;
    let again = after
        .pending
        .iter()
        .find(|c| c.id == card.id)
        .expect("the review card waits again over the edit");
    assert_eq!(again.kind, DecisionKind::RevisarSecuencia);
    let form = [("steps[0]", "0")];
    let done = resolve_over_socket(
        &app,
        &token,
        &mut socket,
        &session,
        again,
        "authorize_sequence_steps",
        &form,
    )
    .await;
    assert!(
        matches!(done.last(), Some(SessionEvent::DecisionResolved(r)) if r.outcome == DecisionOutcome::Accepted)
    );
    answers(&app, &token, &mut socket, &session, "d-3").await;
}

/// The session's board as its log folds it now.
pub(crate) async fn board(
    app: &crate::helpers::TestApp,
    caller: &luna_engine::accounts::Caller,
    session: &str,
) -> luna_protocol::board::Board {
    app.engine
        .sessions
        .snapshot_at_latest(caller, session)
        .await
        .unwrap()
        .view
        .board
}
