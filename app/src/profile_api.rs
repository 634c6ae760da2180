//! Server functions for the workspace's commercial profile (Ajustes): what the team
//! sells and to whom. Thin wrappers over `luna_engine::accounts::profile`.

use leptos::prelude::*;
use luna_protocol::session::CommercialProfile;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// The workspace's commercial profile (empty when nobody set one).
#[server(prefix = "/api", endpoint = "get_commercial_profile", output = crate::codec::Answer)]
pub async fn get_commercial_profile() -> Result<CommercialProfile, AppError> {
    let caller = caller()?;
    luna_engine::accounts::profile::get(&engine()?.store, &caller)
        .await
        .map_err(fail)
}

/// Replaces the profile (owners and admins; validated and audited); returns what was
/// stored, cleaned.
#[server(prefix = "/api", endpoint = "set_commercial_profile", output = crate::codec::Answer)]
pub async fn set_commercial_profile(
    profile: CommercialProfile,
) -> Result<CommercialProfile, AppError> {
    let caller = caller()?;
    luna_engine::accounts::profile::set(&engine()?.store, &caller, &profile)
        .await
        .map_err(fail)
}
