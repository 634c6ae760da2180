//! Editing a draft's step from the board and paging the review card through every
//! recipient's rendered email.

use luna_protocol::account::Role;
use luna_protocol::error::ErrorCode;

use super::drafts::{edit_step, recipient_email, StepEdit};
use super::tests::{drafted, fx, scalar};
use super::*;

fn edit(index: usize, delay_days: i64, subject: &str, body: &str) -> StepEdit {
    StepEdit {
        index,
        delay_days,
        subject: subject.into(),
        body: body.into(),
    }
}

#[tokio::test]
async fn a_step_edited_on_the_board_is_the_new_version_and_the_board_shows_it() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    let out = edit_step(
        &fx.engine,
        &fx.caller,
        &s.id,
        s.version,
        &edit(1, 4, "Otra vez, {{nombre}}", "¿Platicamos el jueves?"),
    )
    .await
    .unwrap();
    assert_eq!(out.sequence.version, s.version + 1);
    assert_eq!(out.sequence.steps[1].subject, "Otra vez, {{nombre}}");
    assert_eq!(out.sequence.steps[1].delay_days, 4);
    assert_eq!(out.sequence.steps[0], s.steps[0], "other steps stay");
    let c = card(&fx.engine, &out.sequence).await.unwrap();
    assert_eq!(c.version, out.sequence.version);
    assert_eq!(c.drafts[1].body, "¿Platicamos el jueves?");
    assert_eq!(
        c.notice, None,
        "a draft never authorized has nothing voided"
    );

    // A board showing the old version cannot overwrite the new one.
    let e = edit_step(
        &fx.engine,
        &fx.caller,
        &s.id,
        s.version,
        &edit(0, 0, "Viejo", "Viejo"),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::VersionConflict);
}

#[tokio::test]
async fn bad_edits_are_typed_spanish_refusals_and_change_nothing() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    let long = "x".repeat(model::MAX_BODY + 1);
    for (e, says) in [
        (edit(0, 0, "  ", "Hola"), "asunto del paso 1"),
        (edit(0, 0, "Hola", &long), "cuerpo del paso 1"),
        (edit(1, -2, "Hola", "Hola"), "no pueden ser negativos"),
        (edit(2, 91, "Hola", "Hola"), "a más tardar el día 90"),
        (edit(1, 9, "Hola", "Hola"), "después del anterior"),
        (edit(6, 0, "Hola", "Hola"), "no tiene un paso 7"),
    ] {
        let err = edit_step(&fx.engine, &fx.caller, &s.id, s.version, &e)
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err:?}");
        let body = err.body();
        assert!(body.message.contains(says), "{}", body.message);
    }
    assert_eq!(get(&fx.engine, &fx.caller, &s.id).await.unwrap(), s);
}

#[tokio::test]
async fn editing_an_authorized_step_voids_its_authorization_and_the_board_says_so() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0, 1])
        .await
        .unwrap();
    let pending = "select count(*) from sequence_sends where status = 'pending'";
    assert_eq!(scalar(&fx, pending).await, 4);
    // Saving a step unchanged keeps the authorization.
    let same = &s.steps[1];
    let kept = edit_step(
        &fx.engine,
        &fx.caller,
        &s.id,
        s.version,
        &edit(1, same.delay_days.into(), &same.subject, &same.body),
    )
    .await
    .unwrap();
    assert_eq!(kept.sequence.status, Status::Activa);
    assert_eq!(scalar(&fx, pending).await, 4);

    let out = edit_step(
        &fx.engine,
        &fx.caller,
        &s.id,
        s.version,
        &edit(1, 3, "Nuevo asunto", "Nuevo cuerpo"),
    )
    .await
    .unwrap();
    assert!(out.was_active);
    assert_eq!(out.invalidated_sends, 4);
    assert_eq!(out.sequence.status, Status::Borrador);
    assert_eq!(scalar(&fx, pending).await, 0);
    let c = card(&fx.engine, &out.sequence).await.unwrap();
    assert_eq!(c.notice.as_deref(), Some(board::VOIDED));
    let shown = fx.engine.sessions.view_of(&fx.session).await.unwrap();
    assert_eq!(
        shown.board.sequences[0].notice.as_deref(),
        Some(board::VOIDED),
        "the session's board says it"
    );
    // Once authorized again, the notice goes.
    authorize(&fx.engine, &fx.caller, &s.id, out.sequence.version, &[0])
        .await
        .unwrap();
    let again = get(&fx.engine, &fx.caller, &s.id).await.unwrap();
    assert_eq!(card(&fx.engine, &again).await.unwrap().notice, None);
}

#[tokio::test]
async fn the_review_card_pages_through_every_recipients_rendered_email() {
    use crate::agent::contract::intent::DecisionDraft;
    use crate::agent::decisions;
    let fx = fx().await;
    let s = drafted(&fx).await;
    let p = decisions::prepare(
        &fx.engine,
        &fx.caller,
        &DecisionDraft::RevisarSecuencia {
            sequence_id: s.id.clone(),
        },
        None,
    )
    .await
    .unwrap();
    assert_eq!(p.card.recipients, Some(2));
    let o = decisions::offer(&fx.engine, &fx.caller, &fx.session, Some("t1"), p)
        .await
        .unwrap();
    let mut seen = Vec::new();
    for n in 1..=2 {
        let r = decisions::sequence_recipient(&fx.engine, &fx.caller, &fx.session, &o.card.id, n)
            .await
            .unwrap();
        assert_eq!((r.position, r.total), (n, 2));
        assert_eq!(r.steps.len(), 3);
        assert!(r.steps.iter().all(|st| !st.body.contains("{{")));
        assert!(r.steps[0].subject.contains("Empaques"), "{:?}", r.steps[0]);
        seen.push((r.email, r.steps[0].subject.clone()));
    }
    assert_ne!(seen[0], seen[1], "each recipient gets their own rendering");
    for n in [0, 3] {
        let e = decisions::sequence_recipient(&fx.engine, &fx.caller, &fx.session, &o.card.id, n)
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
    }
    // A card prepared for an older version never shows the newer content.
    update(
        &fx.engine,
        &fx.caller,
        &s.id,
        &Edit {
            name: Some("Otra".into()),
            ..Edit::default()
        },
    )
    .await
    .unwrap();
    let e = recipient_email(&fx.engine, &fx.caller, &s.id, s.version, 1)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::VersionConflict);
}

#[tokio::test]
async fn an_edit_issues_the_waiting_review_card_again_over_the_new_version() {
    use crate::agent::decisions;
    let fx = fx().await;
    let s = drafted(&fx).await;
    let offered = offered_review(&fx, &s).await;
    edit_step(
        &fx.engine,
        &fx.caller,
        &s.id,
        s.version,
        &edit(0, 0, "Asunto nuevo para {{empresa}}", "Cuerpo nuevo"),
    )
    .await
    .unwrap();
    let n = decisions::reissue_sequence_cards(&fx.engine, &fx.caller, &fx.session, &s.id)
        .await
        .unwrap();
    assert_eq!(n, 1);
    let view = fx.engine.sessions.view_of(&fx.session).await.unwrap();
    let card = view
        .board
        .pending
        .iter()
        .find(|c| c.id == offered.id)
        .unwrap();
    assert!(
        card.steps[0].label.contains("Asunto nuevo"),
        "{:?}",
        card.steps[0]
    );
    // The pager and the authorization follow the new version.
    let r = decisions::sequence_recipient(&fx.engine, &fx.caller, &fx.session, &offered.id, 2)
        .await
        .unwrap();
    assert!(
        r.steps[0].subject.starts_with("Asunto nuevo para Empaques"),
        "{:?}",
        r.steps[0]
    );
    let done =
        decisions::authorize_steps(&fx.engine, &fx.caller, &fx.session, &offered.id, &[0], None)
            .await
            .unwrap();
    assert!(done.result.unwrap().summary.contains("Autoricé 1 paso"));
}

/// A review card offered in the fixture's session over the drafted sequence.
async fn offered_review(
    fx: &super::tests::Fx,
    s: &Sequence,
) -> luna_protocol::decision::DecisionCard {
    use crate::agent::contract::intent::DecisionDraft;
    use crate::agent::decisions;
    let p = decisions::prepare(
        &fx.engine,
        &fx.caller,
        &DecisionDraft::RevisarSecuencia {
            sequence_id: s.id.clone(),
        },
        None,
    )
    .await
    .unwrap();
    decisions::offer(&fx.engine, &fx.caller, &fx.session, Some("t1"), p)
        .await
        .unwrap()
        .card
}

/// Two people authorizing one card at once (issue 43, bug 3): each request authorizes
/// exactly its own ticks in its own name, or loses; never the other's ticks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_authorizing_one_card_at_once_never_run_each_others_ticks() {
    use crate::agent::decisions;
    for round in 0..12 {
        let fx = fx().await;
        let s = drafted(&fx).await;
        let card = offered_review(&fx, &s).await;
        let mate = fx.teammate(Role::Member, "Compañera").await.unwrap();
        let (mine, theirs) = tokio::join!(
            decisions::authorize_steps(&fx.engine, &fx.caller, &fx.session, &card.id, &[0], None),
            decisions::authorize_steps(&fx.engine, &mate, &fx.session, &card.id, &[0, 1, 2], None),
        );
        let winners: Vec<(&crate::accounts::Caller, &[usize])> = [
            (&mine, &fx.caller, &[0usize][..]),
            (&theirs, &mate, &[0, 1, 2][..]),
        ]
        .into_iter()
        .filter(|(r, _, _)| matches!(r, Ok(d) if !d.already))
        .map(|(_, who, steps)| (who, steps))
        .collect();
        assert_eq!(winners.len(), 1, "round {round}: {mine:?} / {theirs:?}");
        let (who, steps) = winners[0];
        let resolved_by: String =
            sqlx::query_scalar("select resolved_by from decisions where id = $1")
                .bind(&card.id)
                .fetch_one(fx.engine.store.pool())
                .await
                .unwrap();
        assert_eq!(resolved_by, who.user_id, "round {round}");
        let authorized =
            super::tests::scalar(&fx, "select count(distinct step) from sequence_sends").await;
        assert_eq!(
            authorized as usize,
            steps.len(),
            "round {round}: the winner's own ticks"
        );
    }
}
