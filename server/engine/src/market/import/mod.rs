//! Importers for real public data: OCDS packages ([`ocds`]) and the SAT 69-B list
//! ([`sat69b`]), both streaming from a file, standard input or bytes ([`Input`]). Pure engine functions (the CLI wraps them). Every import is
//! idempotent — natural keys plus insert-or-ignore, fills only of empty fields — and
//! returns a report of what was inserted, what was already there and what was
//! skipped and why.

mod input;
pub mod ocds;
pub mod sat69b;
pub mod sync;

use std::collections::BTreeMap;

use serde::Serialize;

pub use input::Input;

use crate::base::error::EngineResult;
use crate::base::store::Store;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportCounts {
    pub suppliers: u64,
    pub opportunities: u64,
    pub awards: u64,
    pub risks: u64,
}

impl ImportCounts {
    pub fn total(&self) -> u64 {
        self.suppliers + self.opportunities + self.awards + self.risks
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// What was skipped (ocid/award id, or CSV line and RFC).
    pub item: String,
    /// Why, in Spanish.
    pub reason: String,
}

/// How many skipped items and warnings a report keeps word for word; the rest are
/// only counted (a national file skips hundreds of thousands of releases).
pub const REPORT_SAMPLES: usize = 200;

/// What an import did. A second run of the same input reports `inserted` all zero.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    pub source: String,
    pub inserted: ImportCounts,
    /// Rows already present (same natural key) — left untouched.
    pub unchanged: u64,
    /// Existing rows whose empty fields were filled or whose figures a newer release
    /// replaced.
    pub updated: u64,
    /// The first [`REPORT_SAMPLES`] skipped items; `skipped_total` counts them all.
    pub skipped: Vec<Skipped>,
    pub skipped_total: u64,
    /// Every skip, counted by reason.
    pub skipped_by_reason: BTreeMap<String, u64>,
    /// The first [`REPORT_SAMPLES`] distinct warnings.
    pub warnings: Vec<String>,
    /// Facts about the run itself (resumed, already imported), in Spanish.
    pub notes: Vec<String>,
    /// The same bytes had already been imported completely: nothing was read.
    pub already_imported: bool,
    /// What entity resolution linked among the suppliers the import wrote
    /// (`market::entities`).
    pub resolution: crate::market::entities::Resolution,
}

impl ImportReport {
    /// Records a skipped item and why.
    pub fn skip(&mut self, item: &str, reason: &str) {
        self.skipped_total += 1;
        *self
            .skipped_by_reason
            .entry(reason.to_string())
            .or_default() += 1;
        if self.skipped.len() < REPORT_SAMPLES {
            self.skipped.push(Skipped {
                item: item.to_string(),
                reason: reason.to_string(),
            });
        }
    }

    /// Records a warning once.
    pub fn warn(&mut self, warning: String) {
        if self.warnings.len() < REPORT_SAMPLES && !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    /// Adds what another writer of the same run counted (an import writing with two
    /// connections at once).
    pub fn absorb(&mut self, other: ImportReport) {
        let (mine, theirs) = (&mut self.inserted, other.inserted);
        mine.suppliers += theirs.suppliers;
        mine.opportunities += theirs.opportunities;
        mine.awards += theirs.awards;
        mine.risks += theirs.risks;
        self.unchanged += other.unchanged;
        self.updated += other.updated;
        self.skipped_total += other.skipped_total;
        for (reason, n) in other.skipped_by_reason {
            *self.skipped_by_reason.entry(reason).or_default() += n;
        }
        let room = REPORT_SAMPLES.saturating_sub(self.skipped.len());
        self.skipped.extend(other.skipped.into_iter().take(room));
        for w in other.warnings {
            self.warn(w);
        }
        self.notes.extend(other.notes);
    }
}

/// Appends a run to the coverage log.
pub async fn log_import(
    store: &Store,
    source: &str,
    label: &str,
    kind: &str,
    inserted: u64,
    skipped: u64,
) -> EngineResult<()> {
    sqlx::query(
        "insert into mk_imports (source, label, kind, inserted, skipped, finished_at) values ($1, $2, $3, $4, $5, $6)",
    )
    .bind(source)
    .bind(label)
    .bind(kind)
    .bind(inserted as i64)
    .bind(skipped as i64)
    .bind(crate::base::clock::now_ms())
    .execute(store.pool())
    .await?;
    Ok(())
}
