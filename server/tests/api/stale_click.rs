//! Authorization binds to what the person saw (issue 43, bug 2): a click carries the
//! fingerprint of the card as it was shown; when a teammate's edit issued the card
//! again meanwhile, the click is `VERSION_CONFLICT` and nothing is authorized — the
//! teammate's text never goes out on a click given to the text before it.

use luna_protocol::decision::DecisionOutcome;
use luna_protocol::event::SessionEvent;

use crate::draft_stage::{board, scene_to_sequence_card};
use crate::helpers::spawn_app;
use crate::scene::{resolve_over_socket, server_fn};

#[tokio::test]
async fn a_click_on_the_card_as_it_was_before_a_teammates_edit_authorizes_nothing() {
    let app = spawn_app().await;
    let (token, session, mut socket, seen) = scene_to_sequence_card(&app).await;
    let caller = app.login("ventas@demo.luna.mx").await.1;
    let sequence = board(&app, &caller, &session).await.sequences[0].clone();

    // A teammate rewrites step 2 while the seller still looks at version 1.
    let (mate, _) = app.login("admin@demo.luna.mx").await;
    let version = sequence.version.to_string();
    let (code, body) = server_fn(
        &app,
        &mate,
        "edit_sequence_step",
        &[
            ("sequence_id", sequence.sequence_id.as_str()),
            ("version", version.as_str()),
            ("index", "1"),
            ("delay_days", "3"),
            ("subject", "Última oportunidad, {{nombre}}"),
            ("body", "Texto de la compañera que la vendedora nunca leyó."),
        ],
    )
    .await;
    assert_eq!(code, 200, "{body}");

    // The seller's click on version 1 (all three steps ticked) is refused.
    let (code, body) = server_fn(
        &app,
        &token,
        "authorize_sequence_steps",
        &[
            ("session_id", session.as_str()),
            ("decision_id", seen.id.as_str()),
            ("fingerprint", seen.fingerprint.as_str()),
            ("steps[0]", "0"),
            ("steps[1]", "1"),
            ("steps[2]", "2"),
        ],
    )
    .await;
    assert_eq!(code, 409, "{body}");
    assert!(body.contains("VERSION_CONFLICT"), "{body}");
    let sends: i64 = sqlx::query_scalar("select count(*) from sequence_sends")
        .fetch_one(app.engine.store.pool())
        .await
        .unwrap();
    assert_eq!(sends, 0, "nothing was scheduled");
    // A decline of the stale card is refused the same way: the teammate's version waits.
    let (code, body) = server_fn(
        &app,
        &token,
        "resolve_decision",
        &[
            ("session_id", session.as_str()),
            ("decision_id", seen.id.as_str()),
            ("resolution", "decline"),
            ("fingerprint", seen.fingerprint.as_str()),
        ],
    )
    .await;
    assert_eq!(code, 409, "{body}");

    // The card issued again shows the teammate's text; a click on it authorizes it.
    let now = board(&app, &caller, &session)
        .await
        .pending
        .into_iter()
        .find(|c| c.id == seen.id)
        .expect("the card waits again over the edit");
    assert_ne!(now.fingerprint, seen.fingerprint);
    assert!(
        now.steps
            .iter()
            .any(|s| format!("{} {:?}", s.label, s.detail).contains("Última oportunidad")),
        "{:?}",
        now.steps
    );
    let done = resolve_over_socket(
        &app,
        &token,
        &mut socket,
        &session,
        &now,
        "authorize_sequence_steps",
        &[("steps[0]", "0")],
    )
    .await;
    assert!(
        matches!(done.last(), Some(SessionEvent::DecisionResolved(r)) if r.outcome == DecisionOutcome::Accepted)
    );
}
