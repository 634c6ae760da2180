//! Sequences end to end on the engine: drafts are inert, authorization is per step and
//! fingerprinted, the dispatcher sends each step once (two dispatchers, crashes),
//! honours suppressions and edits, and retries only what is safe to retry.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use luna_protocol::account::{Plan, Role};
use luna_protocol::error::ErrorCode;
use serde_json::json;

use super::transport::{KnownFuture, Mailer, Outgoing, SendError, SendFuture};
use super::*;
use crate::accounts::Caller;
use crate::people::{RevealRequest, RevealVia};
use crate::registry::{Surface, ToolRequest};
use crate::testkit;
use crate::testkit::World;

const SUPPLIERS: [&str; 2] = ["EBA010101AB1", "CJA050505XY2"];

/// Records every message; can fail the first `fail_first` sends transiently.
#[derive(Debug, Default)]
pub(super) struct TestMailer {
    pub(super) sent: Mutex<Vec<Outgoing>>,
    pub(super) fail_first: AtomicUsize,
    pub(super) permanent: bool,
}

impl Mailer for TestMailer {
    fn send<'a>(&'a self, msg: &'a Outgoing) -> SendFuture<'a> {
        Box::pin(async move {
            if self
                .fail_first
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return Err(if self.permanent {
                    SendError::Permanent("550 buzón inexistente".into())
                } else {
                    SendError::Transient("421 intenta más tarde".into())
                });
            }
            // Yield so that concurrent dispatchers interleave.
            tokio::task::yield_now().await;
            self.sent.lock().unwrap().push(msg.clone());
            Ok(msg.message_id())
        })
    }

    fn was_sent<'a>(&'a self, _send_id: &'a str) -> KnownFuture<'a> {
        Box::pin(async { None })
    }

    fn name(&self) -> &'static str {
        "test"
    }
}

impl TestMailer {
    fn count(&self) -> usize {
        self.sent.lock().unwrap().len()
    }
}

/// The world (`fx.engine`, `fx.caller`, `fx.ok(..)` through `Deref`) plus what these
/// tests share: a session and a collection.
pub(super) struct Fx {
    pub(super) w: World,
    pub(super) session: String,
    pub(super) col: String,
    pub(super) mailer: Arc<TestMailer>,
}

impl std::ops::Deref for Fx {
    type Target = World;
    fn deref(&self) -> &World {
        &self.w
    }
}

pub(super) async fn fx() -> Fx {
    fx_with(Arc::new(TestMailer::default())).await
}

/// A workspace with two suppliers saved in a collection and their contacts revealed.
pub(super) async fn fx_with(mailer: Arc<TestMailer>) -> Fx {
    let engine = testkit::engine().await.unwrap().with_mailer(mailer.clone());
    for (i, id) in SUPPLIERS.iter().enumerate() {
        testkit::insert_supplier(&engine, id, &format!("Empaques {i} SA de CV"))
            .await
            .unwrap();
    }
    let caller = testkit::caller(&engine, Plan::Founder, Role::Member)
        .await
        .unwrap();
    let c = crate::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        crate::crm::demo::prospeccion(),
    )
    .await
    .unwrap();
    let col = format!("collection:{}", c.id);
    let refs: Vec<String> = SUPPLIERS.iter().map(|s| format!("company:{s}")).collect();
    let saved = engine
        .call_tool(
            &caller,
            ToolRequest::new(
                "crm_save_companies",
                json!({"collection_id": col, "source": refs, "conflict_policy": "skip"}),
                Surface::Ui,
            ),
        )
        .await;
    assert!(saved.outcome.is_ok(), "{:?}", saved.outcome);
    // The first person of each company, revealed.
    let mut handles = Vec::new();
    for s in SUPPLIERS {
        let people = engine
            .people
            .search(&caller, &format!("company:{s}"))
            .await
            .unwrap();
        handles.push(people[0].card.handle.clone());
    }
    let q = engine.people.quote(&caller, &handles).await.unwrap();
    engine
        .people
        .reveal(
            &caller,
            &RevealRequest {
                quote_id: q.id,
                confirm: true,
                max_credits: q.price,
                idempotency_key: "k-1".into(),
            },
            RevealVia {
                surface: "ui",
                auto_policy: None,
                call_ref: None,
            },
        )
        .await
        .unwrap();
    let session = engine.sessions.create(&caller).await.unwrap().id;
    Fx {
        w: World { engine, caller },
        session,
        col,
        mailer,
    }
}

pub(super) fn steps() -> Vec<Step> {
    vec![
        Step {
            delay_days: 0,
            subject: "{{empresa}} y sus ventas a gobierno".into(),
            body: "Hola {{nombre}}, vi que {{empresa}} vende a gobierno.".into(),
        },
        Step {
            delay_days: 3,
            subject: "Seguimiento para {{nombre}}".into(),
            body: "¿Te interesa platicar? Saludos, {{remitente}}".into(),
        },
        Step {
            delay_days: 7,
            subject: "Último correo".into(),
            body: "Cierro el tema, {{nombre}}.".into(),
        },
    ]
}

pub(super) async fn drafted(fx: &Fx) -> Sequence {
    draft(
        &fx.engine,
        &fx.caller,
        Some(&fx.session),
        "Empaque Jalisco",
        &Audience {
            collection_id: fx.col.clone(),
            record_ids: None,
            stage: None,
        },
        &steps(),
    )
    .await
    .unwrap()
}

pub(super) async fn scalar(fx: &Fx, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(fx.engine.store.pool())
        .await
        .unwrap()
}

const DAY: i64 = 86_400_000;

#[tokio::test]
async fn a_draft_is_inert_and_its_preview_warns_and_states_the_gaps() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    assert_eq!(s.status, Status::Borrador);
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 30 * DAY)
        .await
        .unwrap();
    assert_eq!(r, dispatch::Report::default());
    assert_eq!(fx.mailer.count(), 0);

    let p = preview(&fx.engine, &fx.caller, &s.id, None).await.unwrap();
    assert_eq!(p.recipients.len(), 2);
    let first = &p.recipients[0].steps[0];
    assert!(first.subject.ends_with("y sus ventas a gobierno") && !first.subject.contains("{{"));
    assert!(first.body.starts_with("Hola ") && first.body.contains("Empaques"));
    // A typo in a variable is reported, not sent as is.
    let mut bad = steps();
    bad[0].body = "Hola {{nombr}}".into();
    update(
        &fx.engine,
        &fx.caller,
        &s.id,
        &Edit {
            steps: Some(bad),
            ..Edit::default()
        },
    )
    .await
    .unwrap();
    let p = preview(&fx.engine, &fx.caller, &s.id, None).await.unwrap();
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("{{nombr}} no es una variable")),
        "{:?}",
        p.warnings
    );
    // Bad input is a typed error.
    let e = draft(
        &fx.engine,
        &fx.caller,
        None,
        "x",
        &Audience {
            collection_id: fx.col.clone(),
            record_ids: None,
            stage: None,
        },
        &[
            Step {
                delay_days: 3,
                subject: "a".into(),
                body: "b".into(),
            },
            Step {
                delay_days: 1,
                subject: "a".into(),
                body: "b".into(),
            },
        ],
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn authorized_steps_go_out_on_their_day_once_each() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    let a = authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0, 2])
        .await
        .unwrap();
    assert_eq!(
        (a.recipients, a.scheduled),
        (2, 4),
        "step 2 (day 3) not authorized"
    );
    let now = now_ms();
    let r = dispatch::run_once(&fx.engine, "w1", now + 1000)
        .await
        .unwrap();
    assert_eq!(r.sent, 2);
    assert_eq!(
        dispatch::run_once(&fx.engine, "w1", now + 4 * DAY)
            .await
            .unwrap()
            .sent,
        0
    );
    assert_eq!(
        dispatch::run_once(&fx.engine, "w1", now + 8 * DAY)
            .await
            .unwrap()
            .sent,
        2
    );
    assert_eq!(
        dispatch::run_once(&fx.engine, "w1", now + 30 * DAY)
            .await
            .unwrap()
            .sent,
        0
    );
    let sent = fx.mailer.sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 4);
    assert!(sent.iter().all(|m| !m.body.contains("{{")));
    assert!(sent[0].from.contains(&fx.caller.email));
    // The board of the session shows per-recipient progress.
    let board = fx.engine.sessions.view_of(&fx.session).await.unwrap().board;
    let card = &board.sequences[0];
    assert_eq!(card.progress.len(), 2);
    assert!(card.progress.iter().all(|p| p.sent == 2 && p.pending == 0));
}

#[tokio::test]
async fn an_edit_after_authorization_blocks_sending_until_reauthorized() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0, 1, 2])
        .await
        .unwrap();
    let mut changed = steps();
    changed[1].body = "Otro texto, {{nombre}}.".into();
    let e = update(
        &fx.engine,
        &fx.caller,
        &s.id,
        &Edit {
            steps: Some(changed),
            ..Edit::default()
        },
    )
    .await
    .unwrap();
    assert!(e.was_active);
    assert_eq!(e.invalidated_sends, 6);
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 30 * DAY)
        .await
        .unwrap();
    assert_eq!(fx.mailer.count(), 0, "{r:?}");
    // The old card's version no longer authorizes anything.
    let err = authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::VersionConflict);
    // Re-authorizing the new version sends the new content (once per step and person).
    authorize(&fx.engine, &fx.caller, &s.id, e.sequence.version, &[1])
        .await
        .unwrap();
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 4 * DAY)
        .await
        .unwrap();
    assert_eq!(r.sent, 2);
    assert!(fx.mailer.sent.lock().unwrap()[0]
        .body
        .starts_with("Otro texto"));
}

#[tokio::test]
async fn a_tampered_stored_step_fails_the_fingerprint_and_is_not_sent() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let mut tampered = steps();
    tampered[0].body = "Transfiere a esta cuenta…".into();
    sqlx::query("update sequences set steps = $1 where id = $2")
        .bind(serde_json::to_string(&tampered).unwrap())
        .bind(&s.id)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 1000)
        .await
        .unwrap();
    assert_eq!((r.sent, r.blocked), (0, 2));
    assert_eq!(fx.mailer.count(), 0);
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from sequence_sends where status = 'blocked'"
        )
        .await,
        2
    );
}

#[tokio::test]
async fn suppressed_recipients_receive_nothing() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let p = preview(&fx.engine, &fx.caller, &s.id, None).await.unwrap();
    let gone = p.recipients[0].email.clone();
    suppress(&fx.engine, &fx.caller, &gone, "baja")
        .await
        .unwrap();
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 1000)
        .await
        .unwrap();
    // Suppressing cancelled the pending step at once: the dispatcher never sees it.
    assert_eq!((r.sent, r.suppressed), (1, 0));
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from sequence_sends where status = 'cancelled'"
        )
        .await,
        1
    );
    assert!(fx.mailer.sent.lock().unwrap().iter().all(|m| m.to != gone));
    let p = preview(&fx.engine, &fx.caller, &s.id, None).await.unwrap();
    assert!(p.warnings.iter().any(|w| w.contains(&gone)));
}

#[tokio::test]
async fn two_dispatchers_never_send_a_step_twice() {
    let fx = fx().await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0, 1, 2])
        .await
        .unwrap();
    let at = now_ms() + 30 * DAY;
    let (a, b) = tokio::join!(
        dispatch::run_once(&fx.engine, "w1", at),
        dispatch::run_once(&fx.engine, "w2", at)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.sent + b.sent, 6);
    assert_eq!(fx.mailer.count(), 6);
    let mut ids: Vec<String> = fx
        .mailer
        .sent
        .lock()
        .unwrap()
        .iter()
        .map(|m| m.send_id.clone())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6);
}

#[tokio::test]
async fn a_crash_between_claim_and_send_never_duplicates() {
    // With SMTP nobody knows whether it left: never retried.
    let fx = self::fx().await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    sqlx::query(
        "update sequence_sends set status = 'sending', claimed_by = 'muerto', claimed_at = 1",
    )
    .execute(fx.engine.store.pool())
    .await
    .unwrap();
    assert_eq!(dispatch::recover(&fx.engine, now_ms()).await.unwrap(), 2);
    dispatch::run_once(&fx.engine, "w1", now_ms() + 1000)
        .await
        .unwrap();
    assert_eq!(fx.mailer.count(), 0);
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from sequence_sends where status = 'unknown'"
        )
        .await,
        2
    );

    // With the outbox, the file is the record: what was written counts as sent, the
    // rest is sent once.
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "luna-outbox-test-{}",
        crate::base::ids::random_token(6)
    ));
    let outbox = Outbox::new(&dir);
    let fx2 = self::fx().await;
    let engine = fx2.engine.clone().with_mailer(Arc::new(outbox.clone()));
    let s = drafted(&fx2).await;
    authorize(&engine, &fx2.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let ids: Vec<String> = sqlx::query_scalar("select id from sequence_sends order by id")
        .fetch_all(engine.store.pool())
        .await
        .unwrap();
    // The first one was written to the outbox just before the crash.
    let one = Outgoing {
        send_id: ids[0].clone(),
        from: "A <a@x.mx>".into(),
        to: "b@x.mx".into(),
        subject: "s".into(),
        body: "b".into(),
        unsubscribe: None,
    };
    outbox.send(&one).await.unwrap();
    sqlx::query("update sequence_sends set status = 'sending', claimed_at = 1")
        .execute(engine.store.pool())
        .await
        .unwrap();
    dispatch::recover(&engine, now_ms()).await.unwrap();
    let r = dispatch::run_once(&engine, "w1", now_ms() + 1000)
        .await
        .unwrap();
    assert_eq!(r.sent, 1, "only the one that never left");
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|f| {
            f.as_ref()
                .is_ok_and(|f| f.path().extension().is_some_and(|e| e == "eml"))
        })
        .count();
    assert_eq!(files, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn transient_failures_retry_with_backoff_and_permanent_ones_fail() {
    let flaky = Arc::new(TestMailer {
        fail_first: AtomicUsize::new(1),
        ..TestMailer::default()
    });
    let fx = fx_with(flaky).await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let now = now_ms() + 1000;
    let r = dispatch::run_once(&fx.engine, "w1", now).await.unwrap();
    assert_eq!((r.sent, r.retried), (1, 1));
    // Not before its backoff…
    assert_eq!(
        dispatch::run_once(&fx.engine, "w1", now + 1000)
            .await
            .unwrap()
            .sent,
        0
    );
    // …then once.
    assert_eq!(
        dispatch::run_once(&fx.engine, "w1", now_ms() + 10 * 60_000)
            .await
            .unwrap()
            .sent,
        1
    );

    let bounced = Arc::new(TestMailer {
        fail_first: AtomicUsize::new(1),
        permanent: true,
        ..TestMailer::default()
    });
    let fx = fx_with(bounced).await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let r = dispatch::run_once(&fx.engine, "w1", now_ms() + 1000)
        .await
        .unwrap();
    assert_eq!((r.sent, r.failed), (1, 1));
    assert_eq!(
        dispatch::run_once(&fx.engine, "w1", now_ms() + 60 * 60_000)
            .await
            .unwrap()
            .sent,
        0
    );
}

#[tokio::test]
async fn the_workspace_sending_rate_holds_messages_for_the_next_pass() {
    let fx = fx().await;
    let mut engine = fx.engine.clone();
    engine.sequences.rate_per_minute = 1;
    let s = drafted(&fx).await;
    authorize(&engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let r = dispatch::run_once(&engine, "w1", now_ms() + 1000)
        .await
        .unwrap();
    assert_eq!((r.sent, r.rate_limited), (1, 1));
}

#[tokio::test]
async fn the_review_card_authorizes_only_the_ticked_steps_and_never_in_auto() {
    use crate::agent::contract::intent::DecisionDraft;
    use crate::agent::decisions::{self, Held};
    let fx = fx().await;
    let s = drafted(&fx).await;
    decisions::auto::set_mode(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &luna_protocol::session::ModeRequest {
            mode: luna_protocol::session::SessionMode::Automatico,
            credit_cap: Some(100),
            contact_cap: Some(10),
            classes: None,
        },
    )
    .await
    .unwrap();
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
    assert_eq!(p.card.steps.len(), 3);
    assert!(p.card.steps[0]
        .detail
        .as_deref()
        .is_some_and(|d| !d.contains("{{")));
    assert!(p
        .card
        .preview
        .iter()
        .any(|l| l.label.contains("No hay envío de prueba")));
    let o = decisions::offer(&fx.engine, &fx.caller, &fx.session, Some("t1"), p)
        .await
        .unwrap();
    assert_eq!(
        o.held,
        Some(Held::NeverInAuto),
        "sending is never automatic"
    );
    assert_eq!(scalar(&fx, "select count(*) from sequence_sends").await, 0);

    // An outside agent with an API key cannot authorize it either.
    let agent = Caller {
        api_key: Some(crate::testkit::grant(&[])),
        ..fx.caller.clone()
    };
    let e = decisions::authorize_steps(&fx.engine, &agent, &fx.session, &o.card.id, &[0], None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);

    let r = decisions::authorize_steps(
        &fx.engine,
        &fx.caller,
        &fx.session,
        &o.card.id,
        &[0, 2],
        None,
    )
    .await
    .unwrap();
    assert!(r.result.unwrap().summary.contains("Autoricé 2 pasos"));
    assert_eq!(scalar(&fx, "select count(*) from sequence_sends").await, 4);
    assert_eq!(
        scalar(
            &fx,
            "select count(distinct step) from sequence_authorizations"
        )
        .await,
        2
    );
}
