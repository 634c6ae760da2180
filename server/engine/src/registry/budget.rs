//! Output budgets (CONTRACT §5 rule 10): a result is cut to `min(output_budget, cap)`
//! characters by dropping whole rows from the end and setting `has_more: true`.
//! Market pages should not rely on this (it would break a sealed cursor): they push
//! the budget down to the page size with `page_size_hint` before querying.

use luna_protocol::tool::{Envelope, ResultStatus};

/// Characters of the serialized envelope (what the model or client receives).
pub fn size_chars(env: &Envelope) -> usize {
    serde_json::to_string(env)
        .map(|s| s.chars().count())
        .unwrap_or(usize::MAX)
}

/// The effective budget for a tool on a surface.
pub fn effective_budget(output_budget: usize, surface_cap: usize) -> usize {
    output_budget.min(surface_cap)
}

/// Rows that fit a budget when each row takes about `row_chars`; at least 1, at most
/// `max_rows`. Market tools use it as their page size.
pub fn page_size_hint(budget: usize, row_chars: usize, max_rows: usize) -> usize {
    // Reserve room for the envelope's own fields (ref, shown, status, cursor…).
    const OVERHEAD: usize = 400;
    let usable = budget.saturating_sub(OVERHEAD);
    (usable / row_chars.max(1)).clamp(1, max_rows.max(1))
}

/// Drops whole rows until the envelope fits. Returns true if it cut anything. A cut
/// result is no longer complete: `has_more` becomes true and an `ok` status becomes
/// `incomplete` (the missing rows are not reachable by a cursor).
pub fn apply(env: &mut Envelope, budget: usize) -> bool {
    let mut cut = false;
    while !env.results.is_empty() && size_chars(env) > budget {
        env.results.pop();
        env.shown = env.results.len();
        // Mark the cut before measuring again: the marks take characters too.
        env.has_more = true;
        if env.status == ResultStatus::Ok {
            env.status = ResultStatus::Incomplete;
        }
        cut = true;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_protocol::tool::ResultRow;

    fn env(rows: usize) -> Envelope {
        Envelope::rows(
            (0..rows)
                .map(|i| ResultRow::new(format!("company:{i}"), "x".repeat(90)))
                .collect(),
        )
    }

    #[test]
    fn a_result_over_budget_loses_whole_rows_and_says_so() {
        let mut e = env(100);
        assert!(apply(&mut e, 4500));
        assert!(size_chars(&e) <= 4500);
        assert!(e.results.len() < 100 && !e.results.is_empty());
        assert_eq!(e.shown, e.results.len());
        assert!(e.has_more);
        assert_eq!(e.status, ResultStatus::Incomplete);
        // Every remaining row is intact.
        assert!(e.results.iter().all(|r| r.ref_label.len() == 90));
    }

    #[test]
    fn a_result_within_budget_is_untouched() {
        let mut e = env(3);
        let before = e.clone();
        assert!(!apply(&mut e, 4500));
        assert_eq!(e, before);
    }

    #[test]
    fn budget_is_the_smaller_of_tool_budget_and_surface_cap() {
        assert_eq!(effective_budget(1200, 4500), 1200);
        assert_eq!(effective_budget(20_000, 4500), 4500);
        assert_eq!(page_size_hint(4500, 200, 50), 20);
        assert_eq!(page_size_hint(100, 200, 50), 1);
        assert_eq!(page_size_hint(100_000, 200, 50), 50);
    }
}
