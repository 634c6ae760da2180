//! Server functions for decision cards and auto mode: resolve a card (the server
//! executes with the key it minted), set the session's mode and budget, and read or
//! change the workspace's auto policy (owners/admins).

use leptos::prelude::*;
use luna_protocol::board::AutoCounter;
use luna_protocol::decision::{DecisionResolution, Resolution};
use luna_protocol::session::{AutoPolicy, ModeRequest};

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// Accepts or declines a decision card of a session. Resolving twice is a no-op.
#[server(prefix = "/api", endpoint = "resolve_decision", output = crate::codec::Answer)]
pub async fn resolve_decision(
    session_id: String,
    decision_id: String,
    resolution: Resolution,
    fingerprint: String,
) -> Result<DecisionResolution, AppError> {
    let caller = caller()?;
    let engine = engine()?;
    let resolved = luna_engine::decisions::resolve(
        &engine,
        &caller,
        &session_id,
        &decision_id,
        resolution,
        Some(&fingerprint),
    )
    .await
    .map_err(fail)?;
    // A chained request goes on with its next part (or ends, if declined).
    luna_engine::turn::service::continue_after(&engine, &caller, &session_id);
    Ok(resolved)
}

/// Authorizes the ticked steps of a `revisar_secuencia` card (a person only).
#[server(prefix = "/api", endpoint = "authorize_sequence_steps", output = crate::codec::Answer)]
pub async fn authorize_sequence_steps(
    session_id: String,
    decision_id: String,
    steps: Vec<u32>,
    fingerprint: String,
) -> Result<DecisionResolution, AppError> {
    let caller = caller()?;
    let steps: Vec<usize> = steps.into_iter().map(|s| s as usize).collect();
    let engine = engine()?;
    let resolved = luna_engine::decisions::authorize_steps(
        &engine,
        &caller,
        &session_id,
        &decision_id,
        &steps,
        Some(&fingerprint),
    )
    .await
    .map_err(fail)?;
    luna_engine::turn::service::continue_after(&engine, &caller, &session_id);
    Ok(resolved)
}

/// Sets the session's mode (Preguntar / Automático con presupuesto / Ajuste fino).
#[server(prefix = "/api", endpoint = "set_session_mode", output = crate::codec::Answer)]
pub async fn set_session_mode(
    session_id: String,
    request: ModeRequest,
) -> Result<Option<AutoCounter>, AppError> {
    let caller = caller()?;
    luna_engine::decisions::auto::set_mode(&engine()?, &caller, &session_id, &request)
        .await
        .map_err(fail)
}

/// The workspace's auto policy (defaults for the mode selector).
#[server(prefix = "/api", endpoint = "workspace_auto_policy", output = crate::codec::Answer)]
pub async fn workspace_auto_policy() -> Result<AutoPolicy, AppError> {
    let caller = caller()?;
    luna_engine::decisions::auto::policy(&engine()?, &caller)
        .await
        .map_err(fail)
}

/// Changes the workspace's auto policy. Owners and admins only; audited.
#[server(prefix = "/api", endpoint = "set_auto_policy", output = crate::codec::Answer)]
pub async fn set_auto_policy(policy: AutoPolicy) -> Result<AutoPolicy, AppError> {
    let caller = caller()?;
    luna_engine::decisions::auto::set_policy(&engine()?, &caller, &policy)
        .await
        .map_err(fail)
}
