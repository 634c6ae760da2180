//! Sending windows with a fixed clock across Mexico's time zones: a step due outside
//! the window in the recipient's zone waits for the next local opening, the daily cap
//! per mailbox moves the overflow to the next sending day, and the board says when
//! each recipient's next step goes out.

use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use luna_protocol::account::Role;
use luna_protocol::error::ErrorCode;

use super::tests::{drafted, fx, scalar, Fx};
use super::window::Window;
use super::*;

const QROO: &str = "EBA010101AB1";
const BC: &str = "CJA050505XY2";

fn at(tz: Tz, y: i32, m: u32, d: u32, h: u32, min: u32) -> i64 {
    tz.with_ymd_and_hms(y, m, d, h, min, 0)
        .unwrap()
        .timestamp_millis()
}

/// Puts a supplier's company in the state with INEGI `code`.
async fn move_company(fx: &Fx, rfc: &str, code: i64) {
    sqlx::query("update mk_suppliers set state_code = $1 where id = $2")
        .bind(code)
        .bind(rfc)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    let name = crate::base::catalog::states::State::from_code(code as u8)
        .unwrap()
        .name();
    sqlx::query("update co_companies set state = $1 where rfc = $2")
        .bind(name)
        .bind(rfc)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
}

/// The revealed contact of the supplier `rfc`.
async fn email_of(fx: &Fx, rfc: &str) -> String {
    sqlx::query_scalar::<_, String>("select email from people_reveals where company_ref = $1")
        .bind(format!("company:{rfc}"))
        .fetch_one(fx.engine.store.pool())
        .await
        .unwrap()
        .to_lowercase()
}

async fn set_window(fx: &Fx, w: &Window) {
    let mut conn = fx.engine.store.pool().acquire().await.unwrap();
    window::store(&mut conn, &fx.caller.workspace_id, w, None)
        .await
        .unwrap();
}

/// Authorizes `steps` and makes every pending send due just before `now`.
async fn authorized_due(fx: &Fx, steps: &[usize], now: i64) -> Sequence {
    let s = drafted(fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, steps)
        .await
        .unwrap();
    sqlx::query("update sequence_sends set due_at = $1, next_attempt_at = $2")
        .bind(now - 60_000)
        .bind(now - 60_000)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    s
}

async fn next_attempt(fx: &Fx, email: &str, step: i64) -> (String, i64) {
    sqlx::query_as(
        "select status, next_attempt_at from sequence_sends where email = $1 and step = $2",
    )
    .bind(email)
    .bind(step)
    .fetch_one(fx.engine.store.pool())
    .await
    .unwrap()
}

/// Quintana Roo (Zona Sureste) and Baja California (Zona Noroeste) recipients.
async fn two_zones() -> (Fx, String, String) {
    let fx = fx().await;
    move_company(&fx, QROO, 23).await;
    move_company(&fx, BC, 2).await;
    set_window(&fx, &Window::business()).await;
    let (q, b) = (email_of(&fx, QROO).await, email_of(&fx, BC).await);
    (fx, q, b)
}

#[tokio::test]
async fn at_0830_in_mexico_city_quintana_roo_gets_its_step_and_baja_california_waits() {
    let (fx, qroo, bc) = two_zones().await;
    let cdmx = Tz::America__Mexico_City;
    // Monday 7 Dec 2026, 08:30 in Mexico City: 09:30 in Cancún, 06:30 in Tijuana.
    let now = at(cdmx, 2026, 12, 7, 8, 30);
    let s = authorized_due(&fx, &[0], now).await;
    let r = dispatch::run_once(&fx.engine, "w1", now).await.unwrap();
    assert_eq!((r.sent, r.deferred), (1, 1), "{r:?}");
    assert_eq!(fx.mailer.sent.lock().unwrap()[0].to, qroo);
    let tijuana_opening = at(Tz::America__Tijuana, 2026, 12, 7, 9, 0);
    assert_eq!(
        next_attempt(&fx, &bc, 0).await,
        ("pending".to_owned(), tijuana_opening)
    );
    assert_eq!(tijuana_opening, at(cdmx, 2026, 12, 7, 11, 0));
    // A second pass before Tijuana's opening sends nothing.
    let r = dispatch::run_once(&fx.engine, "w1", at(cdmx, 2026, 12, 7, 10, 59))
        .await
        .unwrap();
    assert_eq!(r.sent, 0, "{r:?}");
    // The board says when the Baja California recipient's step goes out, in their time.
    let card = card_at(
        &fx.engine,
        &get(&fx.engine, &fx.caller, &s.id).await.unwrap(),
        now,
    )
    .await
    .unwrap();
    let p = |e: &str| card.progress.iter().find(|p| p.email == e).unwrap().clone();
    assert_eq!(
        p(&bc).next_send.as_deref(),
        Some("lun 7 dic, 09:00 (hora del Noroeste)")
    );
    assert_eq!(p(&bc).next_send_at, Some(tijuana_opening));
    assert_eq!(p(&qroo).next_send, None);
    // At 09:00 in Tijuana it goes.
    let r = dispatch::run_once(&fx.engine, "w1", tijuana_opening)
        .await
        .unwrap();
    assert_eq!(r.sent, 1, "{r:?}");
}

#[tokio::test]
async fn a_saturday_step_waits_until_monday_0900_in_each_recipients_zone() {
    let (fx, qroo, bc) = two_zones().await;
    let now = at(Tz::America__Mexico_City, 2026, 12, 5, 12, 0);
    authorized_due(&fx, &[0], now).await;
    let r = dispatch::run_once(&fx.engine, "w1", now).await.unwrap();
    assert_eq!((r.sent, r.deferred), (0, 2), "{r:?}");
    let cancun_monday = at(Tz::America__Cancun, 2026, 12, 7, 9, 0);
    assert_eq!(next_attempt(&fx, &qroo, 0).await.1, cancun_monday);
    assert_eq!(
        next_attempt(&fx, &bc, 0).await.1,
        at(Tz::America__Tijuana, 2026, 12, 7, 9, 0)
    );
    // Sunday passes send nothing; Monday 09:00 in Cancún only the Quintana Roo step.
    let sunday = at(Tz::America__Mexico_City, 2026, 12, 6, 12, 0);
    assert_eq!(
        dispatch::run_once(&fx.engine, "w1", sunday)
            .await
            .unwrap()
            .sent,
        0
    );
    let r = dispatch::run_once(&fx.engine, "w1", cancun_monday)
        .await
        .unwrap();
    assert_eq!(r.sent, 1, "{r:?}");
    assert_eq!(fx.mailer.sent.lock().unwrap()[0].to, qroo);
}

#[tokio::test]
async fn the_daily_cap_sends_two_and_moves_the_third_to_the_next_window() {
    let fx = fx().await;
    set_window(
        &fx,
        &Window {
            daily_cap: 2,
            ..Window::business()
        },
    )
    .await;
    let cdmx = Tz::America__Mexico_City;
    // Tuesday 8 Dec 2026, 10:00: three steps due from one mailbox.
    let now = at(cdmx, 2026, 12, 8, 10, 0);
    authorized_due(&fx, &[0, 1], now).await;
    let last = email_of(&fx, BC).await;
    sqlx::query("delete from sequence_sends where email = $1 and step = 1")
        .bind(&last)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    let r = dispatch::run_once(&fx.engine, "w1", now).await.unwrap();
    assert_eq!((r.sent, r.deferred), (2, 1), "{r:?}");
    let wednesday = at(cdmx, 2026, 12, 9, 9, 0);
    assert_eq!(
        scalar(
            &fx,
            &format!(
                "select count(*) from sequence_sends where status = 'pending' and next_attempt_at = {wednesday}"
            )
        )
        .await,
        1
    );
    // Later the same day the cap still holds; the next morning it goes.
    let r = dispatch::run_once(&fx.engine, "w1", at(cdmx, 2026, 12, 8, 17, 0))
        .await
        .unwrap();
    assert_eq!(r.sent, 0, "{r:?}");
    let r = dispatch::run_once(&fx.engine, "w1", wednesday)
        .await
        .unwrap();
    assert_eq!(r.sent, 1, "{r:?}");
}

#[tokio::test]
async fn authorizing_outside_the_window_schedules_the_first_step_at_the_next_opening() {
    let fx = fx().await;
    // A window closed today (in Mexico City, where these recipients are).
    let today = Utc::now().with_timezone(&Tz::America__Mexico_City);
    let weekday = chrono::Datelike::weekday(&today).number_from_monday() as u8;
    let days: Vec<u8> = (1..=7).filter(|d| *d != weekday).collect();
    let w = Window::new(&days, 9, 18, 200, "America/Mexico_City").unwrap();
    set_window(&fx, &w).await;
    let s = drafted(&fx).await;
    let before = now_ms();
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    let email = email_of(&fx, QROO).await;
    let (_, next) = next_attempt(&fx, &email, 0).await;
    assert!(next > before);
    assert_eq!(next, w.send_time(before, Tz::America__Mexico_City));
}

#[tokio::test]
async fn admins_set_the_window_members_are_refused_and_bad_input_is_typed() {
    let fx = fx().await;
    assert_eq!(
        window::get(&fx.engine, &fx.caller).await.unwrap(),
        Window::always(),
        "the test engine's default"
    );
    let w = Window::new(&[1, 2, 3], 8, 14, 50, "America/Tijuana").unwrap();
    let refused = window::set(&fx.engine, &fx.caller, &w).await.unwrap_err();
    assert_eq!(refused.body().code, ErrorCode::Forbidden);
    let mut admin = fx.caller.clone();
    admin.role = Role::Admin;
    window::set(&fx.engine, &admin, &w).await.unwrap();
    assert_eq!(window::get(&fx.engine, &fx.caller).await.unwrap(), w);
    assert_eq!(
        scalar(
            &fx,
            "select count(*) from audit_log where action = 'send_window.set'"
        )
        .await,
        1
    );
    let bad = Window::new(&[1], 18, 9, 50, "America/Tijuana").unwrap_err();
    assert_eq!(bad.body().code, ErrorCode::InvalidArgument);
}

#[tokio::test]
async fn widening_the_window_sends_a_held_step_at_once_in_each_zone() {
    let (fx, qroo, bc) = two_zones().await;
    let cdmx = Tz::America__Mexico_City;
    // Saturday 5 Dec 2026, 12:00 in Mexico City: authorized now, held until Monday.
    let saturday = at(cdmx, 2026, 12, 5, 12, 0);
    let s = authorized_due(&fx, &[0, 1], saturday).await;
    sqlx::query("update sequences set activated_at = $1 where id = $2")
        .bind(saturday)
        .bind(&s.id)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    sqlx::query("update sequence_sends set next_attempt_at = $1 where step = 1")
        .bind(saturday + 3 * DAY_MS)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    let r = dispatch::run_once(&fx.engine, "w1", saturday)
        .await
        .unwrap();
    assert_eq!((r.sent, r.deferred), (0, 2), "{r:?}");
    assert_eq!(
        next_attempt(&fx, &qroo, 0).await.1,
        at(Tz::America__Cancun, 2026, 12, 7, 9, 0)
    );

    // Five minutes later the admin opens the weekend too.
    let later = saturday + 5 * 60_000;
    let every_day = Window::new(&[1, 2, 3, 4, 5, 6, 7], 9, 18, 200, "America/Mexico_City").unwrap();
    set_window(&fx, &every_day).await;
    let mut conn = fx.engine.store.pool().acquire().await.unwrap();
    let moved = window::reschedule(&mut conn, &fx.caller.workspace_id, &every_day, later)
        .await
        .unwrap();
    drop(conn);
    assert_eq!(moved, 2, "only the two held first steps move");
    for email in [&qroo, &bc] {
        assert_eq!(next_attempt(&fx, email, 0).await, ("pending".into(), later));
        // The second step keeps its own day (Tuesday, inside both windows).
        assert_eq!(next_attempt(&fx, email, 1).await.1, saturday + 3 * DAY_MS);
    }
    let r = dispatch::run_once(&fx.engine, "w1", later).await.unwrap();
    assert_eq!(r.sent, 2, "{r:?}");
}

#[tokio::test]
async fn saving_a_wider_window_in_ajustes_reschedules_held_steps() {
    let fx = fx().await;
    set_window(&fx, &Window::business()).await;
    let s = drafted(&fx).await;
    authorize(&fx.engine, &fx.caller, &s.id, s.version, &[0])
        .await
        .unwrap();
    // Held five days, as a closed window would hold it.
    let held = now_ms() + 5 * DAY_MS;
    sqlx::query("update sequence_sends set next_attempt_at = $1")
        .bind(held)
        .execute(fx.engine.store.pool())
        .await
        .unwrap();
    let mut admin = fx.caller.clone();
    admin.role = Role::Admin;
    window::set(&fx.engine, &admin, &Window::always())
        .await
        .unwrap();
    let waiting = scalar(
        &fx,
        &format!("select count(*) from sequence_sends where next_attempt_at >= {held}"),
    )
    .await;
    assert_eq!(waiting, 0, "the wider window releases them now");
    let r = dispatch::run_once(&fx.engine, "w1", now_ms())
        .await
        .unwrap();
    assert_eq!(r.sent, 2, "{r:?}");
}
