//! Coverage (cobertura): which sources and states are loaded, date ranges and
//! freshness. Client-safe: labels and counts only, no internal ids or paths. Used by
//! `market_capabilities` and compiled into the turn input.

use serde::Serialize;
use sqlx::Row;

use super::types::MarketKind;
use super::Market;
use crate::base::catalog::states::State;
use crate::base::error::EngineResult;

#[derive(Debug, Clone, Serialize)]
pub struct SourceCoverage {
    pub source: String,
    pub label: String,
    pub kind: String,
    pub imports: u64,
    pub last_import_at: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct KindCoverage {
    pub kind: MarketKind,
    pub label: String,
    pub rows: u64,
    pub date_from: Option<String>,
    pub date_to: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StateCoverage {
    pub state: String,
    pub suppliers: u64,
    pub awards: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    pub sources: Vec<SourceCoverage>,
    pub kinds: Vec<KindCoverage>,
    /// States with at least one Proveedor, largest first.
    pub states: Vec<StateCoverage>,
    /// States with no data at all (so the narration can say so).
    pub states_without_data: Vec<String>,
    pub last_import_at: Option<i64>,
    /// Human summary in Spanish.
    pub summary: String,
}

impl Market {
    /// The coverage map.
    pub async fn coverage(&self) -> EngineResult<Coverage> {
        let pool = self.store.pool();
        let mut sources = Vec::new();
        for row in sqlx::query(
            "select source, max(label), max(kind), count(*), max(finished_at) from mk_imports group by source order by 5 desc",
        )
        .fetch_all(pool)
        .await?
        {
            let n: i64 = row.try_get(3)?;
            sources.push(SourceCoverage {
                source: row.try_get(0)?,
                label: row.try_get(1)?,
                kind: row.try_get(2)?,
                imports: n.max(0) as u64,
                last_import_at: row.try_get(4)?,
            });
        }
        let specs = [
            (
                MarketKind::Suppliers,
                "select count(*), null, null from mk_suppliers",
            ),
            (
                MarketKind::Opportunities,
                "select count(*), min(published), max(published) from mk_opportunities",
            ),
            (
                MarketKind::Awards,
                "select count(*), min(date), max(date) from mk_awards",
            ),
            (
                MarketKind::Permits,
                "select count(*), min(date), max(date) from mk_permits",
            ),
            (
                MarketKind::Risks,
                "select count(*), min(date), max(date) from mk_risks",
            ),
        ];
        let mut kinds = Vec::new();
        for (kind, sql) in specs {
            let row = sqlx::query(sql).fetch_one(pool).await?;
            let n: i64 = row.try_get(0)?;
            kinds.push(KindCoverage {
                kind,
                label: kind.label().to_string(),
                rows: n.max(0) as u64,
                date_from: row.try_get(1)?,
                date_to: row.try_get(2)?,
            });
        }
        let mut by_state = std::collections::HashMap::<i64, (u64, u64)>::new();
        for row in sqlx::query(
            "select state_code, count(*) from mk_suppliers where state_code is not null group by state_code",
        )
        .fetch_all(pool)
        .await?
        {
            let n: i64 = row.try_get(1)?;
            by_state.entry(row.try_get(0)?).or_default().0 = n.max(0) as u64;
        }
        for row in sqlx::query(
            "select state_code, count(*) from mk_awards where state_code is not null group by state_code",
        )
        .fetch_all(pool)
        .await?
        {
            let n: i64 = row.try_get(1)?;
            by_state.entry(row.try_get(0)?).or_default().1 = n.max(0) as u64;
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
        let last_import_at = sources.iter().map(|s| s.last_import_at).max();
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
            if sources.is_empty() {
                "ninguna".to_string()
            } else {
                sources.iter().map(|s| s.label.as_str()).collect::<Vec<_>>().join("; ")
            }
        );
        Ok(Coverage {
            sources,
            kinds,
            states,
            states_without_data,
            last_import_at,
            summary,
        })
    }
}
