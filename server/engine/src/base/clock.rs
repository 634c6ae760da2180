//! Time as unix milliseconds, the one representation stored in the database.

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The calendar month (UTC) an instant falls into, `YYYY-MM`: the period of monthly
/// budgets.
pub fn month_period(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m").to_string())
        .unwrap_or_else(|| "0000-00".into())
}
