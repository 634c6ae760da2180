//! Market data (CONTRACT §4): Proveedores, Licitaciones, Adjudicaciones, Registros and
//! marcas de riesgo. A typed Rust API that the eight `market_*` tools wrap thinly:
//! [`Market::search`], [`Market::get`], [`Market::count`], [`Market::aggregate`],
//! [`Market::history`], [`Market::compare`], [`Market::screen`] and
//! [`Market::coverage`] (for `market_capabilities`). Data comes from the seeded
//! [`generator`] and the [`import`] functions (OCDS, SAT 69-B).

pub mod coverage;
mod coverage_detail;
pub mod cursor;
pub mod entities;
pub mod filters;
pub mod fulltext;
pub mod generator;
pub mod import;
pub mod ops;
pub mod provenance;
pub mod rows;
pub mod types;

use std::sync::Arc;

use luna_protocol::error::ErrorCode;
use serde::de::DeserializeOwned;

use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;
pub use filters::MarketFilters;
pub use types::*;

/// Maximum page size of `market_search` and groups of `market_aggregate`.
pub const MAX_LIMIT: u32 = 50;
/// Default page size.
pub const DEFAULT_LIMIT: u32 = 20;
/// Maximum states in one `market_count`.
pub const MAX_COUNT_STATES: usize = 5;
/// Maximum RFCs in one `market_screen`.
pub const MAX_SCREEN_RFCS: usize = 50;

/// The market service. Cheap to clone.
#[derive(Clone)]
pub struct Market {
    store: Store,
    cursor_secret: Arc<[u8]>,
    /// The coverage map a turn's input reuses (see [`Market::coverage_recent`]).
    coverage_cache: coverage::Cache,
}

impl std::fmt::Debug for Market {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Market").finish_non_exhaustive()
    }
}

impl Market {
    /// `cursor_secret` seals pagination cursors (HMAC-SHA256); keep it server-side.
    pub fn new(store: Store, cursor_secret: impl Into<Vec<u8>>) -> Market {
        Market {
            store,
            cursor_secret: Arc::from(cursor_secret.into()),
            coverage_cache: coverage::Cache::default(),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Builds the demo data when the market tables are empty. Returns true if it built.
    pub async fn ensure_demo(&self) -> EngineResult<bool> {
        let n: i64 = sqlx::query_scalar("select count(*) from mk_suppliers")
            .fetch_one(self.store.pool())
            .await?;
        if n > 0 {
            return Ok(false);
        }
        self.generate(&generator::GeneratorConfig::demo()).await?;
        Ok(true)
    }

    /// Runs the seeded generator and records it in the coverage log.
    pub async fn generate(
        &self,
        cfg: &generator::GeneratorConfig,
    ) -> EngineResult<generator::GenerateReport> {
        let report = generator::generate(&self.store, cfg).await?;
        let inserted =
            report.suppliers + report.awards + report.opportunities + report.permits + report.risks;
        import::log_import(
            &self.store,
            generator::GENERATOR_SOURCE,
            "Datos de demostración generados",
            "generator",
            inserted,
            0,
        )
        .await?;
        Ok(report)
    }
}

/// Recomputes the denormalised award totals on suppliers (after bulk loads/imports).
pub async fn refresh_supplier_stats(store: &Store) -> EngineResult<()> {
    sqlx::query(
        "update mk_suppliers set (awards_count, awards_total, last_award) = \
         (select count(*), coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0), max(a.date) \
          from mk_awards a where a.supplier_id = mk_suppliers.id)",
    )
    .execute(store.pool())
    .await?;
    Ok(())
}

fn bad_args(detail: impl std::fmt::Display) -> EngineError {
    EngineError::typed(
        ErrorCode::InvalidArgument,
        format!("Los argumentos no son válidos: {detail}."),
        "Revisa los nombres y tipos de los campos según el esquema de la herramienta.",
    )
}

fn check_filters_value(value: &serde_json::Value, kind: MarketKind) -> EngineResult<()> {
    match value.get("filters") {
        None | Some(serde_json::Value::Null) => Ok(()),
        Some(serde_json::Value::Object(map)) => filters::check_raw_keys(kind, map),
        Some(_) => Err(bad_args("`filters` debe ser un objeto")),
    }
}

/// Parses tool arguments with typed errors. Checks `filters` keys against the kind's
/// closed set first (so an unknown key yields `allowed_values`, not a serde message).
/// `T` is one of the `*Args` structs; the kind defaults per tool (`kind` field when
/// present, Adjudicaciones for aggregate/compare, Proveedores for count).
pub fn parse_args<T: DeserializeOwned>(value: serde_json::Value) -> EngineResult<T> {
    if !value.is_object() {
        return Err(bad_args("se esperaba un objeto"));
    }
    let kind = match value.get("kind").and_then(|k| k.as_str()) {
        Some(k) => MarketKind::ALL
            .into_iter()
            .find(|x| x.key() == k)
            .ok_or_else(|| {
                EngineError::Typed(
                    luna_protocol::error::ErrorBody::new(
                        ErrorCode::InvalidArgument,
                        format!("Tipo de registro desconocido: «{k}»."),
                        "Usa uno de los tipos permitidos.",
                    )
                    .with_allowed_values(MarketKind::ALL.iter().map(|k| k.key().to_string())),
                )
            })?,
        None if value.get("group_by").is_some() => MarketKind::Awards,
        None => MarketKind::Suppliers,
    };
    check_filters_value(&value, kind)?;
    if let Some(serde_json::Value::Array(segments)) = value.get("segments") {
        for s in segments {
            check_filters_value(s, MarketKind::Awards)?;
        }
    }
    serde_json::from_value(value).map_err(bad_args)
}
