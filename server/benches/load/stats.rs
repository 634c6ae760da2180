//! Percentiles and the printed report's number formats.

/// p50, p99 and max of `values` (sorted here), or `None` when empty.
pub fn summary(values: &mut [f64]) -> Option<(f64, f64, f64)> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some((
        percentile(values, 50.0),
        percentile(values, 99.0),
        values[values.len() - 1],
    ))
}

/// Nearest-rank percentile of sorted `values`.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// "p50 / p99 / max (n)" in milliseconds.
pub fn line_ms(values: &mut [f64]) -> String {
    match summary(values) {
        Some((p50, p99, max)) => format!(
            "p50 {p50:.2} ms / p99 {p99:.2} ms / max {max:.2} ms (n = {})",
            values.len()
        ),
        None => "no samples".into(),
    }
}
