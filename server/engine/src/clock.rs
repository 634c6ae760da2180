//! Time as unix milliseconds, the one representation stored in the database.

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
