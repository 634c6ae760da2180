//! Importers for real public data: OCDS packages ([`ocds`]) and the SAT 69-B list
//! ([`sat69b`]). Pure engine functions (the CLI wraps them). Every import is
//! idempotent — natural keys plus insert-or-ignore, fills only of empty fields — and
//! returns a report of what was inserted, what was already there and what was
//! skipped and why.

pub mod ocds;
pub mod sat69b;

use serde::Serialize;

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

/// What an import did. A second run of the same input reports `inserted` all zero.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    pub source: String,
    pub inserted: ImportCounts,
    /// Rows already present (same natural key) — left untouched.
    pub unchanged: u64,
    /// Existing rows whose empty fields were filled.
    pub updated: u64,
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
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
