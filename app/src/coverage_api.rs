//! Server function for Ajustes › «Cobertura de datos» (owners and admins): the market
//! data's coverage, the same `luna_engine::market::Market::coverage` figures the
//! `market_capabilities` tool gives Luna. Thin wrapper; the wire type is
//! `luna_protocol::coverage::Coverage`.

use leptos::prelude::*;
use luna_protocol::coverage::Coverage;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// The coverage map: per kind, per state, per year and each source's freshness.
#[server(prefix = "/api", endpoint = "market_coverage", output = crate::codec::Answer)]
pub async fn market_coverage() -> Result<Coverage, AppError> {
    caller()?.require_admin().map_err(fail)?;
    engine()?.market.coverage().await.map_err(fail)
}
