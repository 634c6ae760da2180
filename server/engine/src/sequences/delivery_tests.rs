//! What a real mailbox needs (issue 23): every message carries a signed unsubscribe
//! link and the RFC 8058 headers; unsubscribing, a bounce or a reply stops the
//! recipient's remaining steps with a reason the board shows; the suppression list is
//! the admins' (add, remove audited, CSV import) and is checked at authorization.

use std::sync::Arc;

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;

use super::suppressions::{self, Reason};
use super::tests::{drafted, fx, fx_with, scalar, Fx, TestMailer};
use super::transport::Outgoing;
use super::*;
use crate::testkit;

const DAY: i64 = 86_400_000;

fn sent(fx: &Fx) -> Vec<Outgoing> {
    fx.mailer.sent.lock().unwrap().clone()
}

fn token_of(msg: &Outgoing) -> String {
    let url = msg.unsubscribe.clone().expect("an unsubscribe link");
    url.rsplit_once("/baja/")
        .expect("a /baja/ link")
        .1
        .to_owned()
}

async fn status_of(fx: &Fx, email: &str, step: i64) -> (String, Option<String>) {
    sqlx::query_as("select status, error from sequence_sends where email = $1 and step = $2")
        .bind(email)
        .bind(step)
        .fetch_one(fx.engine.store.pool())
        .await
        .unwrap()
}

/// Authorizes all three steps and sends step 1 to both recipients.
async fn first_step_sent(fx: &Fx) -> Sequence {
    let s = drafted(fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0, 1, 2])
        .await
        .unwrap();
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 1000)
        .await
        .unwrap();
    assert_eq!(r.sent, 2, "{r:?}");
    s
}

#[tokio::test]
async fn every_message_carries_a_signed_unsubscribe_link_and_the_one_click_headers() {
    let fx = fx().await;
    first_step_sent(&fx).await;
    for m in sent(&fx) {
        let url = m.unsubscribe.clone().unwrap();
        assert!(url.starts_with("http://127.0.0.1:3000/baja/"), "{url}");
        assert!(!url.contains(&m.to), "no address in clear: {url}");
        let wire = String::from_utf8(m.formatted().unwrap()).unwrap();
        assert!(
            wire.contains(&format!("List-Unsubscribe: <{url}>\r\n")),
            "{wire}"
        );
        assert!(
            wire.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"),
            "{wire}"
        );
        assert!(
            m.text()
                .ends_with(&format!("date de baja con un clic: {url}")),
            "{}",
            m.text()
        );
    }
}

#[tokio::test]
async fn unsubscribing_suppresses_at_once_cancels_pending_steps_and_is_idempotent() {
    let fx = fx().await;
    let s = first_step_sent(&fx).await;
    let first = sent(&fx)[0].clone();
    let token = token_of(&first);
    let page = unsubscribe::page(&fx.engine, &token).await.unwrap();
    assert!(!page.done);
    assert!(!page.email_masked.contains(&first.to), "{page:?}");
    let page = unsubscribe::confirm(&fx.engine, &token).await.unwrap();
    assert!(page.done);
    // Again: the same answer, nothing new.
    assert!(unsubscribe::confirm(&fx.engine, &token).await.unwrap().done);
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from email_suppressions where reason = 'unsubscribed'"
        )
        .await,
        1
    );
    for step in [1, 2] {
        assert_eq!(
            status_of(&fx, &first.to, step).await,
            ("cancelled".into(), Some("se dio de baja".into()))
        );
    }
    let card = card(
        &fx.engine,
        &get(&fx.engine, &fx.caller, &s.id).await.unwrap(),
    )
    .await
    .unwrap();
    let mine = card.progress.iter().find(|p| p.email == first.to).unwrap();
    assert_eq!(
        (mine.sent, mine.pending, mine.stopped.as_deref()),
        (1, 0, Some("se dio de baja"))
    );
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 30 * DAY)
        .await
        .unwrap();
    assert_eq!(r.sent, 2, "only the other recipient's two steps: {r:?}");
    assert!(sent(&fx).iter().skip(2).all(|m| m.to != first.to));
}

#[tokio::test]
async fn a_tampered_or_unknown_unsubscribe_token_is_refused_and_changes_nothing() {
    let fx = fx().await;
    first_step_sent(&fx).await;
    let msgs = sent(&fx);
    let token = token_of(&msgs[0]);
    let other = token_of(&msgs[1]);
    let (id, mac) = token.split_once('.').unwrap();
    let (other_id, _) = other.split_once('.').unwrap();
    let mut flipped = mac.to_owned().into_bytes();
    flipped[3] = if flipped[3] == b'A' { b'B' } else { b'A' };
    let bad = [
        format!("{id}.{}", String::from_utf8(flipped).unwrap()),
        format!("{other_id}.{mac}"),
        format!("snd_noexiste.{mac}"),
        id.to_owned(),
        "".to_owned(),
        "../../etc".to_owned(),
        format!("{id}.{}", "A".repeat(300)),
        format!("{id}.%%%"),
    ];
    for t in &bad {
        let e = unsubscribe::confirm(&fx.engine, t).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{t}");
        assert_eq!(
            unsubscribe::page(&fx.engine, t).await.unwrap_err().code(),
            ErrorCode::NotFound
        );
    }
    assert_eq!(
        scalar(&fx, "select count(*) from email_suppressions").await,
        0
    );
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from sequence_sends where status = 'cancelled'"
        )
        .await,
        0
    );
}

#[tokio::test]
async fn a_bounce_suppresses_the_address_and_cancels_its_later_steps() {
    // The local outbox bounces recipients at rebote.invalid.
    let dir = std::env::temp_dir().join(format!("luna-bounce-{}", crate::ids::random_token(6)));
    let fx = fx().await;
    let engine = fx.engine.clone().with_mailer(Arc::new(Outbox::new(&dir)));
    let s = drafted(&fx).await;
    let gone: String =
        sqlx::query_scalar("select email from people_reveals order by email limit 1")
            .fetch_one(engine.store.pool())
            .await
            .unwrap();
    let bouncing = format!(
        "{}@{}",
        gone.split('@').next().unwrap(),
        transport::SIMULATED_BOUNCE_DOMAIN
    );
    sqlx::query("update people_reveals set email = $1 where email = $2")
        .bind(&bouncing)
        .bind(&gone)
        .execute(engine.store.pool())
        .await
        .unwrap();
    authorize(&engine, &fx.caller, &s.id, s.version, &[0, 1, 2])
        .await
        .unwrap();
    let r = dispatch::run_once(&engine, "w1", now_ms() + 1000)
        .await
        .unwrap();
    assert_eq!((r.sent, r.bounced), (1, 1), "{r:?}");
    let (status, error) = status_of(&fx, &bouncing, 0).await;
    assert_eq!(status, "failed");
    assert!(error.unwrap().starts_with("rebotó: 550"));
    for step in [1, 2] {
        assert_eq!(
            status_of(&fx, &bouncing, step).await,
            ("cancelled".into(), Some("su correo rebotó".into()))
        );
    }
    let mut conn = engine.store.pool().acquire().await.unwrap();
    let sup = suppressions::find(&mut conn, &fx.caller.workspace_id, &bouncing)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sup.reason, Reason::Bounced);
    assert!(sup.detail.unwrap().contains("550"));
    drop(conn);
    let r = dispatch::run_once(&engine, "w1", now_ms() + 30 * DAY)
        .await
        .unwrap();
    assert_eq!((r.sent, r.bounced), (2, 0), "{r:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_deferred_address_retries_then_gives_up_with_a_clear_state() {
    let mailer = Arc::new(TestMailer::default());
    mailer
        .fail_first
        .store(usize::MAX, std::sync::atomic::Ordering::SeqCst);
    let fx = fx_with(mailer).await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let mut at = now_ms() + 1000;
    let mut retried = 0;
    for _ in 0..dispatch::MAX_ATTEMPTS {
        let r = dispatch::run_once(&fx.engine, "w1", at).await.unwrap();
        retried += r.retried;
        at += 365 * DAY;
    }
    assert_eq!(retried as i64, 2 * (dispatch::MAX_ATTEMPTS - 1));
    let errors: Vec<(String, String)> =
        sqlx::query_as("select status, error from sequence_sends order by email")
            .fetch_all(fx.engine.store.pool())
            .await
            .unwrap();
    for (status, error) in errors {
        assert_eq!(status, "failed");
        assert!(
            error.starts_with("sin entregar tras 5 intentos: "),
            "{error}"
        );
    }
    // Deferred is not bounced: nobody is suppressed.
    assert_eq!(
        scalar(&fx, "select count(*) from email_suppressions").await,
        0
    );
}

#[tokio::test]
async fn a_recipient_who_replied_gets_no_more_steps() {
    let fx = fx().await;
    let s = first_step_sent(&fx).await;
    let who = sent(&fx)[0].to.clone();
    let m = replies::mark(&fx.engine, &fx.caller, &s.id, &who.to_uppercase())
        .await
        .unwrap();
    assert_eq!((m.new, m.cancelled), (true, 2));
    let again = replies::mark(&fx.engine, &fx.caller, &s.id, &who)
        .await
        .unwrap();
    assert_eq!((again.new, again.cancelled), (false, 0));
    assert_eq!(
        status_of(&fx, &who, 2).await,
        ("cancelled".into(), Some("respondió".into()))
    );
    // Even a step put back to pending is skipped at dispatch.
    sqlx::query("update sequence_sends set status = 'pending' where email = $1 and step = 2")
        .bind(&who)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 30 * DAY)
        .await
        .unwrap();
    assert_eq!((r.sent, r.cancelled), (2, 1), "{r:?}");
    assert!(sent(&fx).iter().skip(2).all(|m| m.to != who));
    // Someone who does not receive it, or another workspace's sequence: NOT_FOUND.
    let e = replies::mark(&fx.engine, &fx.caller, &s.id, "otro@empresa.mx")
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    let stranger = testkit::caller(&fx.engine, Plan::Founder, Role::Admin)
        .await
        .unwrap();
    let e = replies::mark(&fx.engine, &stranger, &s.id, &who)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn the_review_names_who_is_skipped_and_why_and_authorizing_schedules_nothing_for_them() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    let p = preview(&fx.engine, &fx.caller, &s.id, None).await.unwrap();
    let gone = p.recipients[0].email.clone();
    suppress(&fx.engine, &fx.caller, &gone, "bounced")
        .await
        .unwrap();
    let p = preview(&fx.engine, &fx.caller, &s.id, None).await.unwrap();
    let r = p.recipients.iter().find(|r| r.email == gone).unwrap();
    assert_eq!(r.skip_reason.as_deref(), Some("su correo rebotó"));
    assert!(p
        .warnings
        .iter()
        .any(|w| w == &format!("{gone} se omitirá: su correo rebotó.")));
    let a = authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0, 1])
        .await
        .unwrap();
    assert_eq!((a.recipients, a.scheduled, a.skipped), (2, 2, 1));
    assert_eq!(
        scalar(
            &fx,
            &format!("select count(*) from sequence_sends where email = '{gone}'")
        )
        .await,
        0
    );
}

async fn admin(fx: &Fx) -> crate::accounts::Caller {
    let mut a = fx.caller.clone();
    a.role = Role::Admin;
    a
}

#[tokio::test]
async fn admins_keep_the_list_removing_is_audited_and_members_are_refused() {
    let fx = fx().await;
    let s = first_step_sent(&fx).await;
    let who = sent(&fx)[0].to.clone();
    let e = suppressions::add(&fx.engine, &fx.caller, &who, Reason::Manual, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden, "a member");
    let adm = admin(&fx).await;
    assert!(suppressions::add(
        &fx.engine,
        &adm,
        &who,
        Reason::Bounced,
        Some("550 buzón inexistente")
    )
    .await
    .unwrap());
    assert!(
        !suppressions::add(&fx.engine, &adm, &who, Reason::Manual, None)
            .await
            .unwrap()
    );
    assert_eq!(
        status_of(&fx, &who, 1).await,
        ("cancelled".into(), Some("su correo rebotó".into()))
    );
    let list = suppressions::list(&fx.engine, &adm).await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].reason, Reason::Bounced);
    assert_eq!(
        suppressions::add(&fx.engine, &adm, "no es correo", Reason::Manual, None)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    suppressions::remove(&fx.engine, &adm, &who).await.unwrap();
    assert!(suppressions::list(&fx.engine, &adm)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from audit_log where action = 'suppression.remove'"
        )
        .await,
        1
    );
    assert_eq!(
        suppressions::remove(&fx.engine, &adm, &who)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
    let _ = s;
}

#[tokio::test]
async fn a_csv_import_adds_good_rows_reports_bad_ones_and_is_bounded() {
    let fx = fx().await;
    let adm = admin(&fx).await;
    let csv = "correo,motivo,nota\nuno@empresa.mx,baja,\n\"dos@empresa.mx\",rebote,\"550, buzón lleno\"\nno-es-correo,manual\ntres@empresa.mx,inventado\nCUATRO@Empresa.mx\nuno@empresa.mx,manual\n";
    let r = suppressions::import_csv(&fx.engine, &adm, csv)
        .await
        .unwrap();
    assert_eq!((r.added, r.already, r.rejected_count), (3, 1, 2), "{r:?}");
    assert!(r.rejected[0].starts_with("Línea 4:"), "{r:?}");
    let list = suppressions::list(&fx.engine, &adm).await.unwrap();
    let reason = |e: &str| list.iter().find(|s| s.email == e).map(|s| s.reason);
    assert_eq!(reason("uno@empresa.mx"), Some(Reason::Unsubscribed));
    assert_eq!(reason("dos@empresa.mx"), Some(Reason::Bounced));
    assert_eq!(reason("cuatro@empresa.mx"), Some(Reason::Manual));
    let huge = "a@b.mx\n".repeat(suppressions::IMPORT_MAX_BYTES / 7 + 1);
    assert_eq!(
        suppressions::import_csv(&fx.engine, &adm, &huge)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    let many: String = (0..=suppressions::IMPORT_MAX_ROWS)
        .map(|i| format!("p{i}@x.mx\n"))
        .collect();
    assert_eq!(
        suppressions::import_csv(&fx.engine, &adm, &many)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        suppressions::import_csv(&fx.engine, &fx.caller, "a@b.mx")
            .await
            .unwrap_err()
            .code(),
        ErrorCode::Forbidden
    );
}

/// An unsubscribe belongs to the recipient (issue 43, bug 6): an admin may take a
/// manual exclusion or a bounce off the list, never an unsubscribe or a spam
/// complaint — not even one that arrived after the admin had excluded the address by
/// hand, which must not leave the admin's removable reason in its place.
#[tokio::test]
async fn an_unsubscribe_belongs_to_the_recipient_and_no_admin_removes_it() {
    let fx = fx().await;
    first_step_sent(&fx).await;
    let adm = admin(&fx).await;
    let [first, second] = [sent(&fx)[0].clone(), sent(&fx)[1].clone()];
    // The admin excluded the first recipient by hand; then the recipient unsubscribed.
    suppressions::add(
        &fx.engine,
        &adm,
        &first.to,
        Reason::Manual,
        Some("pidió llamada"),
    )
    .await
    .unwrap();
    unsubscribe::confirm(&fx.engine, &token_of(&first))
        .await
        .unwrap();
    // The second marked the emails as spam.
    suppressions::add(&fx.engine, &adm, &second.to, Reason::Complained, None)
        .await
        .unwrap();
    for who in [&first.to, &second.to] {
        let e = suppressions::remove(&fx.engine, &adm, who)
            .await
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden, "{who}: {e:?}");
        assert!(e.body().message.contains("destinatario"), "{e:?}");
    }
    let list = suppressions::list(&fx.engine, &adm).await.unwrap();
    let reason_of = |who: &str| list.iter().find(|s| s.email == who).map(|s| s.reason);
    assert_eq!(reason_of(&first.to), Some(Reason::Unsubscribed));
    assert_eq!(reason_of(&second.to), Some(Reason::Complained));
    // A bounce and a manual exclusion stay the admins' to remove.
    for (who, why) in [
        ("rebote@ejemplo.mx", Reason::Bounced),
        ("nota@ejemplo.mx", Reason::Manual),
    ] {
        suppressions::add(&fx.engine, &adm, who, why, None)
            .await
            .unwrap();
        suppressions::remove(&fx.engine, &adm, who).await.unwrap();
    }
    assert_eq!(suppressions::list(&fx.engine, &adm).await.unwrap().len(), 2);
}
