//! Server functions for the workspace's suppression list (owners and admins): who
//! never gets a sequence email again and why — unsubscribed, bounced, complained or
//! excluded by an admin. Thin wrappers over `luna_engine::sequences::suppressions`.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// One suppressed address as Ajustes shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct SuppressionView {
    pub email: String,
    /// `unsubscribed`, `bounced`, `complained` or `manual`.
    pub reason: String,
    /// Why, in Spanish («se dio de baja», «su correo rebotó»…).
    pub label: String,
    /// The SMTP answer of a bounce, or the admin's note.
    pub detail: Option<String>,
    /// Unix ms.
    pub created_at: i64,
    /// Whether the team may take it off the list (a manual exclusion or a bounce); an
    /// unsubscribe or a complaint is the recipient's.
    pub removable: bool,
}

/// What a CSV import did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct ImportReport {
    pub added: u32,
    pub already: u32,
    /// The first rejected lines, with why.
    pub rejected: Vec<String>,
    pub rejected_count: u32,
}

/// The workspace's suppressed addresses, newest first.
#[server(prefix = "/api", endpoint = "list_suppressions", output = crate::codec::Answer)]
pub async fn list_suppressions() -> Result<Vec<SuppressionView>, AppError> {
    let caller = caller()?;
    let rows = luna_engine::sequences::suppressions::list(&engine()?, &caller)
        .await
        .map_err(fail)?;
    Ok(rows
        .into_iter()
        .map(|s| SuppressionView {
            email: s.email,
            reason: s.reason.as_str().to_owned(),
            label: s.reason.label().to_owned(),
            detail: s.detail,
            created_at: s.created_at,
            removable: !s.reason.by_recipient(),
        })
        .collect())
}

/// Suppresses one address by hand (reason `manual` or `complained`).
#[server(prefix = "/api", endpoint = "add_suppression", output = crate::codec::Answer)]
pub async fn add_suppression(
    email: String,
    reason: String,
    note: Option<String>,
) -> Result<bool, AppError> {
    use luna_engine::sequences::suppressions::{self, Reason};
    let caller = caller()?;
    let reason = Reason::parse(&reason).ok_or_else(|| {
        fail(luna_engine::EngineError::typed(
            luna_protocol::error::ErrorCode::InvalidArgument,
            "Motivo de supresión desconocido.",
            "Usa unsubscribed, bounced, complained o manual.",
        ))
    })?;
    let note = note.filter(|n| !n.trim().is_empty());
    suppressions::add(&engine()?, &caller, &email, reason, note.as_deref())
        .await
        .map_err(fail)
}

/// Takes an address off the list (audited).
#[server(prefix = "/api", endpoint = "remove_suppression", output = crate::codec::Answer)]
pub async fn remove_suppression(email: String) -> Result<(), AppError> {
    let caller = caller()?;
    luna_engine::sequences::suppressions::remove(&engine()?, &caller, &email)
        .await
        .map_err(fail)
}

/// Imports a CSV (`correo[,motivo[,nota]]` per line; at most 200 KiB).
#[server(prefix = "/api", endpoint = "import_suppressions", output = crate::codec::Answer)]
pub async fn import_suppressions(csv: String) -> Result<ImportReport, AppError> {
    let caller = caller()?;
    let r = luna_engine::sequences::suppressions::import_csv(&engine()?, &caller, &csv)
        .await
        .map_err(fail)?;
    Ok(ImportReport {
        added: r.added as u32,
        already: r.already as u32,
        rejected: r.rejected,
        rejected_count: r.rejected_count as u32,
    })
}
