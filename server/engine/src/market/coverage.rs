//! Coverage (cobertura): which sources and states are loaded, date ranges and
//! freshness. Client-safe: labels and counts only, no internal ids or paths. Used by
//! `market_capabilities` and compiled into the turn input.

pub use luna_protocol::coverage::{
    Coverage, ImportFreshness, KindCoverage, SourceCoverage, StateCoverage, SyncFreshness,
    YearCoverage,
};

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::types::MarketKind;
use super::Market;
use crate::base::catalog::states::State;
use crate::base::error::EngineResult;

/// One source's imports (`mk_imports`, grouped).
#[derive(sqlx::FromRow)]
struct SourceStats {
    source: String,
    label: String,
    kind: String,
    n: i64,
    last_at: i64,
}

/// One kind's row count and date range.
#[derive(sqlx::FromRow)]
struct KindStats {
    n: i64,
    date_from: Option<String>,
    date_to: Option<String>,
}

/// Rows per state code.
#[derive(sqlx::FromRow)]
struct StateStats {
    state_code: i64,
    n: i64,
}

/// A stored count as a row count (never negative).
pub(super) fn rows_count(n: i64) -> u64 {
    n.max(0) as u64
}

/// How long a coverage map is reused when no import finished meanwhile.
const REUSE_FOR: Duration = Duration::from_secs(60);

/// The coverage map last read, with the import stamp it was read at. Every turn's
/// input carries the coverage, and on national data reading it costs several scans:
/// it is read again when an import finished since (`mk_imports`, `mk_import_runs`) or
/// after [`REUSE_FOR`], whichever comes first (another instance's imports included).
#[derive(Debug, Clone, Default)]
pub struct Cache(Arc<Mutex<Option<Cached>>>);

#[derive(Debug)]
struct Cached {
    stamp: (i64, i64),
    at: Instant,
    coverage: Arc<Coverage>,
}

impl Market {
    /// The coverage map, reused while no import finished and it is under a minute old.
    pub async fn coverage_recent(&self) -> EngineResult<Arc<Coverage>> {
        let stamp: (i64, i64) = sqlx::query_as(
            "select cast((select coalesce(max(id), 0) from mk_imports) as bigint),
                    cast((select count(*) from mk_import_runs where status = 'done') as bigint)",
        )
        .fetch_one(self.store.pool())
        .await?;
        {
            let cached = self
                .coverage_cache
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(c) = cached.as_ref() {
                if c.stamp == stamp && c.at.elapsed() < REUSE_FOR {
                    return Ok(c.coverage.clone());
                }
            }
        }
        let coverage = Arc::new(self.coverage().await?);
        *self
            .coverage_cache
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(Cached {
            stamp,
            at: Instant::now(),
            coverage: coverage.clone(),
        });
        Ok(coverage)
    }
}

impl Market {
    /// The coverage map.
    pub async fn coverage(&self) -> EngineResult<Coverage> {
        let pool = self.store.pool();
        let mut sources = Vec::new();
        for row in sqlx::query_as::<_, SourceStats>(
            "select source, max(label) as label, max(kind) as kind, count(*) as n,
                    max(finished_at) as last_at
               from mk_imports group by source order by 5 desc",
        )
        .fetch_all(pool)
        .await?
        {
            sources.push(SourceCoverage {
                source: row.source,
                label: row.label,
                kind: row.kind,
                imports: rows_count(row.n),
                last_import_at: row.last_at,
            });
        }
        let specs = [
            (
                MarketKind::Suppliers,
                "select count(*) as n, null as date_from, null as date_to from mk_suppliers",
            ),
            (
                MarketKind::Opportunities,
                "select count(*) as n, min(published) as date_from, max(published) as date_to from mk_opportunities",
            ),
            (
                MarketKind::Awards,
                "select count(*) as n, min(date) as date_from, max(date) as date_to from mk_awards",
            ),
            (
                MarketKind::Permits,
                "select count(*) as n, min(date) as date_from, max(date) as date_to from mk_permits",
            ),
            (
                MarketKind::Risks,
                "select count(*) as n, min(date) as date_from, max(date) as date_to from mk_risks",
            ),
        ];
        let mut kinds = Vec::new();
        for (kind, sql) in specs {
            let row = sqlx::query_as::<_, KindStats>(sql).fetch_one(pool).await?;
            kinds.push(KindCoverage {
                kind: kind.key().to_owned(),
                label: kind.label().to_string(),
                rows: rows_count(row.n),
                date_from: row.date_from,
                date_to: row.date_to,
            });
        }
        let mut by_state = std::collections::HashMap::<i64, (u64, u64)>::new();
        for row in sqlx::query_as::<_, StateStats>(
            "select state_code, count(*) as n from mk_suppliers where state_code is not null group by state_code",
        )
        .fetch_all(pool)
        .await?
        {
            by_state.entry(row.state_code).or_default().0 = rows_count(row.n);
        }
        for row in sqlx::query_as::<_, StateStats>(
            "select state_code, count(*) as n from mk_awards where state_code is not null group by state_code",
        )
        .fetch_all(pool)
        .await?
        {
            by_state.entry(row.state_code).or_default().1 = rows_count(row.n);
        }
        let mut states: Vec<StateCoverage> = Vec::new();
        let mut states_without_data = Vec::new();
        for s in State::ALL {
            match by_state.get(&i64::from(s.code())) {
                Some((sup, aw)) if *sup > 0 || *aw > 0 => states.push(StateCoverage {
                    state: s.name().into(),
                    suppliers: *sup,
                    awards: *aw,
                }),
                _ => states_without_data.push(s.name().to_string()),
            }
        }
        states.sort_by_key(|s| std::cmp::Reverse(s.suppliers));
        let years = super::coverage_detail::years(&self.store).await?;
        let imports = super::coverage_detail::imports(&self.store).await?;
        let last_sync = super::coverage_detail::last_sync(&self.store).await?;
        let last_import_at = sources
            .iter()
            .map(|s| s.last_import_at)
            .chain(imports.iter().filter_map(|i| i.last_import_at))
            .max();
        let awards = &kinds[2];
        let summary = format!(
            "{} Proveedores, {} Adjudicaciones ({} a {}), {} Licitaciones, {} Registros y {} marcas de riesgo; {} de 32 estados con datos; fuentes: {}.",
            kinds[0].rows,
            awards.rows,
            awards.date_from.as_deref().unwrap_or("—"),
            awards.date_to.as_deref().unwrap_or("—"),
            kinds[1].rows,
            kinds[3].rows,
            kinds[4].rows,
            states.len(),
            if sources.is_empty() && imports.is_empty() {
                "ninguna".to_string()
            } else {
                sources
                    .iter()
                    .map(|s| s.label.clone())
                    .chain(imports.iter().map(|i| match &i.newest_release {
                        Some(d) => format!("{} (publicado hasta {})", i.publisher.as_deref().unwrap_or(&i.source), d.get(..10).unwrap_or(d)),
                        None => i.publisher.clone().unwrap_or_else(|| i.source.clone()),
                    }))
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        );
        Ok(Coverage {
            sources,
            kinds,
            states,
            states_without_data,
            last_import_at,
            years,
            imports,
            last_sync,
            summary,
        })
    }
}
