//! Windowed usage counters: the hourly read ceiling (600 reads per workspace per
//! clock hour) and the Explorer plan's daily search quota. Admission is one
//! conditional upsert, so two concurrent calls can never both pass the last slot.

use luna_protocol::error::{ErrorBody, ErrorCode};

use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    ReadsHour,
    SearchesDay,
}

impl Counter {
    fn as_str(self) -> &'static str {
        match self {
            Counter::ReadsHour => "reads_hour",
            Counter::SearchesDay => "searches_day",
        }
    }
    fn window_ms(self) -> i64 {
        match self {
            Counter::ReadsHour => HOUR_MS,
            Counter::SearchesDay => DAY_MS,
        }
    }
    fn bucket(self, now_ms: i64) -> i64 {
        now_ms.div_euclid(self.window_ms())
    }
    /// Seconds until the current window closes.
    pub fn retry_after(self, now_ms: i64) -> u64 {
        let end = (self.bucket(now_ms) + 1) * self.window_ms();
        ((end - now_ms + 999) / 1000).max(1) as u64
    }
}

/// Adds `$4` to the window's counter (`$1` workspace, `$2` counter, `$3` bucket) when
/// the result stays within `$5`; affects no row when it would not.
macro_rules! admit_sql {
    () => {
        "insert into usage_counters (workspace_id, counter, bucket, count) values ($1, $2, $3, $4)
         on conflict (workspace_id, counter, bucket)
         do update set count = usage_counters.count + excluded.count
         where usage_counters.count + excluded.count <= $5"
    };
}
const ADMIT: &str = admit_sql!();
/// [`ADMIT`], returning the ledger `$6`'s period `$7` row (`allowance`, `used`; nulls
/// when the period has no row yet) when it counted.
const ADMIT_AND_LEDGER: &str = concat!(
    admit_sql!(),
    " returning (select allowance from credit_ledgers
                  where workspace_id = $1 and ledger = $6 and period = $7),
                (select used from credit_ledgers
                  where workspace_id = $1 and ledger = $6 and period = $7)"
);

/// Adds `n` to the window's counter if the result stays within `limit`.
pub async fn admit(
    store: &Store,
    workspace_id: &str,
    counter: Counter,
    n: i64,
    limit: i64,
    now_ms: i64,
) -> EngineResult<bool> {
    if n <= 0 {
        return Ok(true);
    }
    if n > limit {
        return Ok(false);
    }
    let done = sqlx::query(ADMIT)
        .bind(workspace_id)
        .bind(counter.as_str())
        .bind(counter.bucket(now_ms))
        .bind(n)
        .bind(limit)
        .execute(store.pool())
        .await?;
    Ok(done.rows_affected() > 0)
}

/// As [`admit`], and in the same statement a ledger's period row (`ledger`, `period`):
/// `None` when the counter refused, `Some(None)` when the period has no ledger row
/// yet, else `Some(Some((allowance, used)))`. A search's admission needs both, in one
/// round trip.
#[allow(clippy::too_many_arguments)]
pub async fn admit_and_ledger(
    store: &Store,
    workspace_id: &str,
    counter: Counter,
    n: i64,
    limit: i64,
    ledger: &str,
    period: &str,
    now_ms: i64,
) -> EngineResult<Option<Option<(i64, i64)>>> {
    if n > limit {
        return Ok(None);
    }
    let row: Option<(Option<i64>, Option<i64>)> = sqlx::query_as(ADMIT_AND_LEDGER)
        .bind(workspace_id)
        .bind(counter.as_str())
        .bind(counter.bucket(now_ms))
        // Nothing to count still reads the ledger (and counts nothing).
        .bind(n.max(0))
        .bind(limit)
        .bind(ledger)
        .bind(period)
        .fetch_optional(store.pool())
        .await?;
    Ok(row.map(|row| match row {
        (Some(allowance), Some(used)) => Some((allowance, used)),
        _ => None,
    }))
}

/// The count used in the current window.
pub async fn used(
    store: &Store,
    workspace_id: &str,
    counter: Counter,
    now_ms: i64,
) -> EngineResult<i64> {
    let n: Option<i64> = sqlx::query_scalar(
        "select count from usage_counters where workspace_id = $1 and counter = $2 and bucket = $3",
    )
    .bind(workspace_id)
    .bind(counter.as_str())
    .bind(counter.bucket(now_ms))
    .fetch_optional(store.pool())
    .await?;
    Ok(n.unwrap_or(0))
}

pub fn read_ceiling_error(limit: i64, retry_after: u64) -> EngineError {
    let minutes = retry_after.div_ceil(60);
    EngineError::Typed(
        ErrorBody::new(
            ErrorCode::RateLimited,
            format!("Tu espacio de trabajo llegó al tope de {limit} lecturas por hora."),
            format!(
                "Espera {minutes} min; mientras tanto trabaja con lo que ya tienes en el tablero."
            ),
        )
        .with_retry_after(retry_after),
    )
}

pub fn daily_search_error(limit: i64, retry_after: u64) -> EngineError {
    EngineError::Typed(
        ErrorBody::new(
            ErrorCode::PlanLimit,
            format!("El plan Explorer incluye {limit} búsquedas al día y ya las usaste."),
            "Vuelve mañana o cambia al plan Founder para buscar sin tope diario.",
        )
        .with_retry_after(retry_after),
    )
}
