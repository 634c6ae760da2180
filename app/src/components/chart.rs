//! A small inline SVG bar chart (no chart library: it would weigh more than the
//! whole board). Columns for years, rows for buyers; each chart carries an
//! accessible summary, and the figures are also listed as text next to it.

use leptos::prelude::*;
use luna_protocol::evidence::{mxn, mxn_short, AmountBucket};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Orientation {
    /// Vertical bars along x (years).
    Columns,
    /// Horizontal bars, one labelled row each (buyers).
    Rows,
}

/// The view box's width. Coordinates are whole units (the SVG scales to its box), so the
/// float printer stays out of the browser's wasm.
const WIDTH: i32 = 320;

#[component]
pub fn BarChart(
    title: &'static str,
    buckets: Vec<AmountBucket>,
    orientation: Orientation,
) -> impl IntoView {
    let max = buckets
        .iter()
        .map(|b| b.amount_mxn)
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let summary = format!(
        "{title}: {}",
        buckets
            .iter()
            .map(|b| format!("{} {}", b.label, mxn(b.amount_mxn)))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let n = buckets.len().max(1) as f64;
    let width = f64::from(WIDTH);
    let px = |v: f64| v.round() as i32;
    let (height, bars) = match orientation {
        Orientation::Columns => {
            let h = 150;
            let plot = f64::from(h - 36);
            let slot = width / n;
            let bar = (slot * 0.6).min(48.0);
            let bars = buckets
                .into_iter()
                .enumerate()
                .map(|(i, b)| {
                    let bh = (b.amount_mxn / max * plot).max(1.0);
                    let x = i as f64 * slot + (slot - bar) / 2.0;
                    let y = 18.0 + plot - bh;
                    let (cx, x, y, bar, bh) = (px(x + bar / 2.0), px(x), px(y), px(bar), px(bh));
                    view! {
                        <g>
                            <rect x=x y=y width=bar height=bh rx="3" class="fill-indigo-500" />
                            <text x=cx y={y - 4} text-anchor="middle" class="fill-current text-[10px]">{mxn_short(b.amount_mxn)}</text>
                            <text x=cx y={h - 4} text-anchor="middle" class="fill-current text-[10px]">{b.label}</text>
                        </g>
                    }
                })
                .collect_view();
            (h, bars.into_any())
        }
        Orientation::Rows => {
            let row = 26;
            let h = row * buckets.len().max(1) as i32 + 4;
            let label_w = 130;
            let plot = f64::from(WIDTH - label_w - 64);
            let bars = buckets
                .into_iter()
                .enumerate()
                .map(|(i, b)| {
                    let y = i as i32 * row + 4;
                    let bw = px((b.amount_mxn / max * plot).max(1.0));
                    let label = shorten(&b.label, 22);
                    view! {
                        <g>
                            <text x="0" y={y + 15} class="fill-current text-[10px]">{label}</text>
                            <rect x=label_w y={y + 4} width=bw height="14" rx="3" class="fill-emerald-500" />
                            <text x={label_w + bw + 4} y={y + 15} class="fill-current text-[10px]">{mxn_short(b.amount_mxn)}</text>
                        </g>
                    }
                })
                .collect_view();
            (h, bars.into_any())
        }
    };
    view! {
        <figure class="space-y-1">
            <figcaption class="text-xs font-medium text-slate-600 dark:text-slate-400">{title}</figcaption>
            <svg
                role="img"
                aria-label=summary
                viewBox=format!("0 0 {WIDTH} {height}")
                class="w-full text-slate-700 dark:text-slate-300"
                data-testid="bar-chart"
            >
                {bars}
            </svg>
        </figure>
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}
