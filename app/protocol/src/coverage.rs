//! The market data's coverage (cobertura): per kind, per state, per year and how fresh
//! each source is. Built once by the engine (`luna_engine::market::Market::coverage`),
//! narrated by the `market_capabilities` tool and shown in Ajustes › «Cobertura de
//! datos», so Luna and the page show the same figures. Client-safe: labels, counts and
//! dates only, no internal ids.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct Coverage {
    /// Batch imports (`mk_imports`: the demo generator, SAT lists, small files).
    pub sources: Vec<SourceCoverage>,
    pub kinds: Vec<KindCoverage>,
    /// States with at least one Proveedor or Adjudicación, most Proveedores first.
    pub states: Vec<StateCoverage>,
    /// States with no data at all (so the narration can say so).
    pub states_without_data: Vec<String>,
    /// Unix ms of the newest import of any kind.
    pub last_import_at: Option<i64>,
    /// Licitaciones and Adjudicaciones per year, oldest first.
    #[serde(default)]
    pub years: Vec<YearCoverage>,
    /// Streaming-imported OCDS sources: files, last import, newest release.
    #[serde(default)]
    pub imports: Vec<ImportFreshness>,
    /// The last scheduled sync (`luna-server sync`), if one ran.
    #[serde(default)]
    pub last_sync: Option<SyncFreshness>,
    /// Human summary in Spanish.
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct SourceCoverage {
    pub source: String,
    pub label: String,
    pub kind: String,
    pub imports: u64,
    /// Unix ms.
    pub last_import_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct KindCoverage {
    /// `suppliers`, `opportunities`, `awards`, `permits` or `risks`.
    pub kind: String,
    pub label: String,
    pub rows: u64,
    pub date_from: Option<String>,
    pub date_to: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct StateCoverage {
    pub state: String,
    pub suppliers: u64,
    pub awards: u64,
}

/// One calendar year of market rows (by the Licitación's publication date and the
/// Adjudicación's date).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct YearCoverage {
    pub year: String,
    pub opportunities: u64,
    pub awards: u64,
    /// Sum of the year's Adjudicaciones in MXN (other currencies left out).
    pub awards_amount_mxn: f64,
}

/// One streaming-imported OCDS source (finished runs of `mk_import_runs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct ImportFreshness {
    /// `ocds:<publisher>`.
    pub source: String,
    pub publisher: Option<String>,
    /// Files imported completely.
    pub files: u64,
    /// Unix ms of the last finished import.
    pub last_import_at: Option<i64>,
    /// The newest release date among the rows this source wrote.
    pub newest_release: Option<String>,
}

/// The last `luna-server sync` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct SyncFreshness {
    /// `running`, `done` or `failed`.
    pub status: String,
    /// Unix ms.
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub files: u64,
    pub imported: u64,
    pub already: u64,
    pub failed: u64,
}

/// «hace 3 días», «hace 2 horas», «hace un momento»: how long ago `at` was, from `now`
/// (both Unix ms).
pub fn ago_es(at: i64, now: i64) -> String {
    let mins = (now - at).max(0) / 60_000;
    let (n, one, many) = if mins < 1 {
        return "hace un momento".to_owned();
    } else if mins < 60 {
        (mins, "minuto", "minutos")
    } else if mins < 60 * 24 {
        (mins / 60, "hora", "horas")
    } else {
        (mins / (60 * 24), "día", "días")
    };
    if n == 1 {
        format!("hace 1 {one}")
    } else {
        format!("hace {n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::ago_es;

    #[test]
    fn freshness_reads_as_spanish_time_ago() {
        let day = 86_400_000;
        assert_eq!(ago_es(0, 3 * day + 5), "hace 3 días");
        assert_eq!(ago_es(0, day), "hace 1 día");
        assert_eq!(ago_es(0, 2 * 3_600_000), "hace 2 horas");
        assert_eq!(ago_es(0, 10_000), "hace un momento");
    }
}
