//! A workspace's sending window: the days and hours (in the recipient's local time)
//! when sequence steps may go out, and the most steps one sender mailbox sends a day.
//! The dispatcher moves a step due outside the window to the window's next opening in
//! the recipient's zone (`zones`), and a step over the day's cap to the next day's
//! opening. Admins edit it in Ajustes; a workspace without one has
//! [`Window::business`] (Monday to Friday, 9:00–18:00, 200 a day, Zona Centro).

use chrono::{Datelike, Duration, LocalResult, NaiveDate, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

use luna_protocol::error::ErrorCode;

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{Conn, Scope};

use super::{zones, Deps};

/// The most steps a mailbox may be allowed to send a day.
pub const MAX_DAILY_CAP: u32 = 5_000;

/// When steps go out. `days` is a set of weekdays, bit 0 = Monday … bit 6 = Sunday.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub days: u8,
    /// First hour a step may go out, 0–23, local time.
    pub start_hour: u32,
    /// The hour sending stops, 1–24 (exclusive), local time.
    pub end_hour: u32,
    /// Most steps one sender mailbox sends per day (the workspace zone's day).
    pub daily_cap: u32,
    /// The workspace's zone: for recipients whose state is unknown, and the cap's day.
    pub time_zone: Tz,
}

impl Default for Window {
    fn default() -> Self {
        Window::business()
    }
}

impl Window {
    /// Monday to Friday, 9:00–18:00, 200 a day, Zona Centro.
    pub const fn business() -> Window {
        Window {
            days: 0b001_1111,
            start_hour: 9,
            end_hour: 18,
            daily_cap: 200,
            time_zone: zones::DEFAULT_ZONE,
        }
    }

    /// Every day at every hour, with the largest cap: for tests and the demo workspace,
    /// whose scenes must send at whatever hour they run.
    pub const fn always() -> Window {
        Window {
            days: 0b111_1111,
            start_hour: 0,
            end_hour: 24,
            daily_cap: MAX_DAILY_CAP,
            time_zone: zones::DEFAULT_ZONE,
        }
    }

    /// The sending days as ISO weekday numbers (1 = Monday … 7 = Sunday).
    pub fn weekdays(&self) -> Vec<u8> {
        (0..7u8)
            .filter(|d| self.days & (1 << d) != 0)
            .map(|d| d + 1)
            .collect()
    }

    /// Builds a window from ISO weekday numbers and checks it; every refusal is typed
    /// and in Spanish.
    pub fn new(
        weekdays: &[u8],
        start_hour: u32,
        end_hour: u32,
        daily_cap: u32,
        time_zone: &str,
    ) -> EngineResult<Window> {
        let mut days = 0u8;
        for d in weekdays {
            if !(1..=7).contains(d) {
                return Err(invalid(
                    format!("{d} no es un día de la semana."),
                    "Usa 1 (lunes) a 7 (domingo).",
                ));
            }
            days |= 1 << (d - 1);
        }
        if days == 0 {
            return Err(invalid(
                "Elige al menos un día de envío.",
                "Marca los días en que pueden salir correos, por ejemplo de lunes a viernes.",
            ));
        }
        if start_hour > 23 || end_hour > 24 {
            return Err(invalid(
                "Las horas de envío van de 0 a 24.",
                "Por ejemplo, de 9 a 18.",
            ));
        }
        if start_hour >= end_hour {
            return Err(invalid(
                "La hora de inicio debe ser antes que la de fin.",
                "Por ejemplo, de 9 a 18.",
            ));
        }
        if !(1..=MAX_DAILY_CAP).contains(&daily_cap) {
            return Err(invalid(
                format!("El tope diario por buzón va de 1 a {MAX_DAILY_CAP} correos."),
                "Un buzón nuevo suele empezar con 50 a 200 al día.",
            ));
        }
        let Some(time_zone) = zones::parse(time_zone) else {
            return Err(invalid(
                "Zona horaria desconocida.",
                format!(
                    "Usa una de: {}.",
                    zones::CHOICES
                        .iter()
                        .map(|(tz, _)| tz.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        Ok(Window {
            days,
            start_hour,
            end_hour,
            daily_cap,
            time_zone,
        })
    }

    fn day_allowed(&self, date: NaiveDate) -> bool {
        self.days & (1 << date.weekday().num_days_from_monday()) != 0
    }

    /// Whether a step may go out at `at` (Unix ms) for a recipient in `tz`.
    pub fn allows(&self, at: i64, tz: Tz) -> bool {
        let Some(t) = Utc.timestamp_millis_opt(at).single() else {
            return false;
        };
        let l = t.with_timezone(&tz);
        self.day_allowed(l.date_naive()) && (self.start_hour..self.end_hour).contains(&l.hour())
    }

    /// The instant the window opens on `date` in `tz` (the hour after, when a
    /// daylight-saving jump skips the opening).
    fn opening_on(&self, date: NaiveDate, tz: Tz) -> Option<i64> {
        let naive = date.and_hms_opt(self.start_hour, 0, 0)?;
        let t = match tz.from_local_datetime(&naive) {
            LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t,
            LocalResult::None => tz
                .from_local_datetime(&(naive + Duration::hours(1)))
                .earliest()?,
        };
        Some(t.timestamp_millis())
    }

    /// The first opening in `tz` strictly after `at`, starting on the local date of
    /// `at` plus `from_day` days.
    fn opening_after(&self, at: i64, tz: Tz, from_day: i64) -> i64 {
        let Some(t) = Utc.timestamp_millis_opt(at).single() else {
            return at;
        };
        let today = t.with_timezone(&tz).date_naive();
        for d in from_day..from_day + 8 {
            let date = today + Duration::days(d);
            if !self.day_allowed(date) {
                continue;
            }
            if let Some(open) = self.opening_on(date, tz).filter(|o| *o > at) {
                return open;
            }
        }
        // Unreachable with at least one day allowed; never sooner than a week.
        at + 7 * super::DAY_MS
    }

    /// When a step due at `at` for a recipient in `tz` may go out: `at` itself inside
    /// the window, else the window's next opening.
    pub fn send_time(&self, at: i64, tz: Tz) -> i64 {
        if self.allows(at, tz) {
            at
        } else {
            self.opening_after(at, tz, 0)
        }
    }

    /// The opening of the next sending day after the local date of `at` in `tz`: where
    /// a step over the day's cap goes.
    pub fn next_day_opening(&self, at: i64, tz: Tz) -> i64 {
        self.opening_after(at, tz, 1)
    }

    /// The start (Unix ms) of the workspace zone's day that contains `at`: the cap
    /// counts from there.
    pub fn day_start(&self, at: i64) -> i64 {
        let Some(t) = Utc.timestamp_millis_opt(at).single() else {
            return at;
        };
        let l = t.with_timezone(&self.time_zone);
        l.date_naive()
            .and_hms_opt(0, 0, 0)
            .and_then(|n| self.time_zone.from_local_datetime(&n).earliest())
            .map_or(at - i64::from(l.num_seconds_from_midnight()) * 1000, |d| {
                d.timestamp_millis()
            })
    }
}

fn invalid(message: impl Into<String>, hint: impl Into<String>) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

/// The workspace's window; `default` when it has not set one.
pub async fn load(conn: &mut Conn, workspace_id: &str, default: Window) -> EngineResult<Window> {
    let row: Option<(i64, i64, i64, i64, String)> = sqlx::query_as(
        "select days, start_hour, end_hour, daily_cap, time_zone from workspace_send_window
          where workspace_id = $1",
    )
    .bind(workspace_id)
    .fetch_optional(conn)
    .await?;
    let Some((days, start_hour, end_hour, daily_cap, zone)) = row else {
        return Ok(default);
    };
    let num = |v: i64| u32::try_from(v).map_err(EngineError::internal);
    Ok(Window {
        days: u8::try_from(days).map_err(EngineError::internal)?,
        start_hour: num(start_hour)?,
        end_hour: num(end_hour)?,
        daily_cap: num(daily_cap)?,
        time_zone: zones::parse(&zone).unwrap_or(zones::DEFAULT_ZONE),
    })
}

/// Stores a checked window (insert or replace).
pub async fn store(
    conn: &mut Conn,
    workspace_id: &str,
    w: &Window,
    by: Option<&str>,
) -> EngineResult<()> {
    sqlx::query(
        "insert into workspace_send_window (workspace_id, days, start_hour, end_hour, daily_cap,
                                            time_zone, updated_by, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8)
         on conflict (workspace_id) do update set days = excluded.days,
             start_hour = excluded.start_hour, end_hour = excluded.end_hour,
             daily_cap = excluded.daily_cap, time_zone = excluded.time_zone,
             updated_by = excluded.updated_by, updated_at = excluded.updated_at",
    )
    .bind(workspace_id)
    .bind(i64::from(w.days))
    .bind(i64::from(w.start_hour))
    .bind(i64::from(w.end_hour))
    .bind(i64::from(w.daily_cap))
    .bind(w.time_zone.name())
    .bind(by)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

/// The caller's workspace window (any member may read it: the board shows its effect).
pub async fn get(engine: &impl Deps, caller: &Caller) -> EngineResult<Window> {
    let mut conn = engine.store().pool().acquire().await?;
    load(
        &mut conn,
        &caller.workspace_id,
        engine.sequences().default_window,
    )
    .await
}

/// Admins: replaces the workspace's window (audited) and reschedules the steps waiting
/// for their first attempt under it (`reschedule`): widening the window sends a step
/// that was held for the old opening as soon as the new window allows.
pub async fn set(engine: &impl Deps, caller: &Caller, w: &Window) -> EngineResult<()> {
    caller.require_admin()?;
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    store(&mut tx, &caller.workspace_id, w, Some(&caller.user_id)).await?;
    reschedule(&mut tx, &caller.workspace_id, w, now_ms()).await?;
    crate::accounts::audit_in(
        &mut tx,
        caller,
        "send_window.set",
        &serde_json::json!({
            "days": w.weekdays(), "start_hour": w.start_hour, "end_hour": w.end_hour,
            "daily_cap": w.daily_cap, "time_zone": w.time_zone.name(),
        }),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Moves every pending step of the workspace that has not been attempted yet to the
/// time `w` gives it as of `now`: its own day (activation + the step's delay) inside
/// the window in the recipient's zone. Retries keep their backoff. Returns how many
/// steps moved.
pub async fn reschedule(
    conn: &mut Conn,
    workspace_id: &str,
    w: &Window,
    now: i64,
) -> EngineResult<u64> {
    #[derive(sqlx::FromRow)]
    struct Pending {
        id: String,
        step: i64,
        next_attempt_at: i64,
        activated_at: i64,
        steps: String,
        time_zone: Option<String>,
    }
    let rows: Vec<Pending> = sqlx::query_as(
        "select s.id, s.step, s.next_attempt_at, q.activated_at, q.steps, a.time_zone
           from sequence_sends s
           join sequences q on q.id = s.sequence_id and q.version = s.version
           left join sequence_audience a
             on a.sequence_id = s.sequence_id and a.version = s.version and a.email = s.email
          where s.workspace_id = $1 and s.status = 'pending' and s.attempts = 0
            and q.activated_at is not null",
    )
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut moved = 0;
    for r in rows {
        let steps: Vec<super::Step> = crate::base::stored::json("sequences.steps", &r.steps)?;
        let Some(delay) = usize::try_from(r.step).ok().and_then(|i| steps.get(i)) else {
            continue;
        };
        let day = r.activated_at + i64::from(delay.delay_days) * 86_400_000;
        let tz = r
            .time_zone
            .as_deref()
            .and_then(zones::parse)
            .unwrap_or(w.time_zone);
        let at = w.send_time(day.max(now), tz);
        if at != r.next_attempt_at {
            super::rows::defer(&mut *conn, &r.id, at).await?;
            moved += 1;
        }
    }
    Ok(moved)
}

/// The mailbox of a sender «Nombre <correo>», lower case: the cap counts per mailbox.
pub fn mailbox(sender: &str) -> String {
    let addr = match (sender.rfind('<'), sender.rfind('>')) {
        (Some(a), Some(b)) if a < b => &sender[a + 1..b],
        _ => sender,
    };
    addr.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(tz: Tz, y: i32, m: u32, d: u32, h: u32, min: u32) -> i64 {
        tz.with_ymd_and_hms(y, m, d, h, min, 0)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn bad_windows_are_refused_with_a_typed_error() {
        let code = |r: EngineResult<Window>| r.unwrap_err().body().code;
        let zone = "America/Mexico_City";
        assert_eq!(
            code(Window::new(&[1], 18, 9, 200, zone)),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(Window::new(&[1], 9, 9, 200, zone)),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(Window::new(&[], 9, 18, 200, zone)),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(Window::new(&[8], 9, 18, 200, zone)),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(Window::new(&[1], 9, 18, 0, zone)),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(Window::new(&[1], 9, 18, MAX_DAILY_CAP + 1, zone)),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(Window::new(&[1], 9, 18, 200, "Europe/Madrid")),
            ErrorCode::InvalidArgument
        );
        let w = Window::new(&[1, 2, 3, 4, 5], 9, 18, 200, zone).unwrap();
        assert_eq!(w, Window::business());
        assert_eq!(w.weekdays(), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_step_outside_the_window_waits_for_the_next_local_opening() {
        let w = Window::business();
        let cdmx = Tz::America__Mexico_City;
        // Friday 2026-12-04 18:30 in Mexico City: after hours → Monday 09:00.
        let fri = at(cdmx, 2026, 12, 4, 18, 30);
        assert!(!w.allows(fri, cdmx));
        assert_eq!(w.send_time(fri, cdmx), at(cdmx, 2026, 12, 7, 9, 0));
        // Inside the window it goes as due.
        let mon = at(cdmx, 2026, 12, 7, 10, 15);
        assert_eq!(w.send_time(mon, cdmx), mon);
        // Before the opening on a weekday: the same day's opening.
        let early = at(cdmx, 2026, 12, 7, 7, 0);
        assert_eq!(w.send_time(early, cdmx), at(cdmx, 2026, 12, 7, 9, 0));
        // Over the cap on Monday: Tuesday's opening.
        assert_eq!(w.next_day_opening(mon, cdmx), at(cdmx, 2026, 12, 8, 9, 0));
        // Friday's overflow goes to Monday.
        let fri_noon = at(cdmx, 2026, 12, 4, 12, 0);
        assert_eq!(
            w.next_day_opening(fri_noon, cdmx),
            at(cdmx, 2026, 12, 7, 9, 0)
        );
        assert_eq!(w.day_start(mon), at(cdmx, 2026, 12, 7, 0, 0));
    }

    #[test]
    fn the_mailbox_is_the_address_of_the_sender() {
        assert_eq!(
            mailbox("Ana López <Ventas@Empresa.mx>"),
            "ventas@empresa.mx"
        );
        assert_eq!(mailbox(" ventas@empresa.mx "), "ventas@empresa.mx");
    }
}
