//! Progress of a long import on standard error: on a terminal, one line redrawn in
//! place (bytes read, releases per second, ETA); otherwise (a log, CI) a plain line
//! every few seconds.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use luna_engine::market::import::ocds::{OnProgress, Progress};

/// How often the plain lines come.
const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// A progress callback for [`luna_engine::market::import::ocds::Options`].
pub fn reporter(file: String) -> OnProgress {
    if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {bytes}/{total_bytes} · {msg} · faltan {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(file);
        Box::new(move |p: &Progress| {
            if let Some(total) = p.total_bytes {
                bar.set_length(total);
            }
            bar.set_position(p.bytes);
            bar.set_message(format!("{} entregas ({}/s)", p.releases, rate(p)));
            if p.total_bytes.is_some_and(|t| p.bytes >= t) {
                bar.finish_and_clear();
            }
        })
    } else {
        let mut last = Instant::now();
        Box::new(move |p: &Progress| {
            if last.elapsed() < PLAIN_EVERY {
                return;
            }
            last = Instant::now();
            eprintln!("{}", plain_line(&file, p));
        })
    }
}

fn rate(p: &Progress) -> u64 {
    let secs = p.elapsed.as_secs_f64();
    if secs > 0.0 {
        (p.releases as f64 / secs) as u64
    } else {
        0
    }
}

/// `archivo: 120000 entregas · 240 MB de 1024 MB · 2400/s · faltan ~5 min`.
pub fn plain_line(file: &str, p: &Progress) -> String {
    let mb = |b: u64| b / (1024 * 1024);
    let mut line = format!("{file}: {} entregas · {} MB", p.releases, mb(p.bytes));
    if let Some(total) = p.total_bytes {
        line.push_str(&format!(" de {} MB", mb(total)));
    }
    line.push_str(&format!(" · {}/s", rate(p)));
    if let Some(total) = p.total_bytes.filter(|t| *t > 0 && p.bytes > 0) {
        let left =
            p.elapsed.as_secs_f64() * (total.saturating_sub(p.bytes) as f64) / p.bytes as f64;
        line.push_str(&format!(" · faltan ~{}", human(left)));
    }
    line
}

fn human(secs: f64) -> String {
    if secs < 90.0 {
        format!("{} s", secs.round() as u64)
    } else {
        format!("{} min", (secs / 60.0).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_tell_releases_size_rate_and_time_left() {
        let p = Progress {
            bytes: 256 * 1024 * 1024,
            total_bytes: Some(1024 * 1024 * 1024),
            releases: 120_000,
            elapsed: Duration::from_secs(60),
        };
        assert_eq!(
            plain_line("a.json", &p),
            "a.json: 120000 entregas · 256 MB de 1024 MB · 2000/s · faltan ~3 min"
        );
    }
}
