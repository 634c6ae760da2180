//! The workspace's commercial profile (CONTRACT §7.1): what the team sells, the giros
//! it sells to, its territory, the government buyers it targets, a typical deal and
//! whom not to look for. Owners and admins edit it in Ajustes; every turn reads it
//! (`TurnInput.profile`) and lays it under the session's fact ledger as `perfil` facts
//! (`agent::turn::memory::apply_profile`), so Luna never asks what the profile says.

use luna_protocol::error::{ErrorBody, ErrorCode};
use luna_protocol::session::CommercialProfile;

use crate::accounts::{audit_in, Caller};
use crate::base::catalog::states::{State, StateContext};
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{Conn, Scope, Store};

/// Longest free text (offer, exclusions), in characters.
pub const MAX_TEXT: usize = 300;
/// Most items in a list (giros, buyers) and longest item.
pub const MAX_ITEMS: usize = 8;
pub const MAX_ITEM: usize = 80;
/// Highest typical deal, in pesos (ten thousand million).
pub const MAX_TICKET: u64 = 10_000_000_000;

fn invalid(message: String, hint: &str) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

fn text(value: &str, label: &str) -> EngineResult<String> {
    let t = value.trim();
    if t.chars().count() > MAX_TEXT {
        return Err(invalid(
            format!("«{label}» admite hasta {MAX_TEXT} caracteres."),
            "Resúmelo en una o dos frases.",
        ));
    }
    Ok(t.to_owned())
}

fn items(values: &[String], label: &str) -> EngineResult<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        if v.chars().count() > MAX_ITEM {
            return Err(invalid(
                format!("Cada elemento de «{label}» admite hasta {MAX_ITEM} caracteres."),
                "Usa nombres cortos, uno por elemento.",
            ));
        }
        if !out.iter().any(|o| o.eq_ignore_ascii_case(v)) {
            out.push(v.to_owned());
        }
    }
    if out.len() > MAX_ITEMS {
        return Err(invalid(
            format!("«{label}» admite hasta {MAX_ITEMS} elementos."),
            "Deja los más importantes.",
        ));
    }
    Ok(out)
}

/// The profile cleaned (trimmed, deduplicated, states in the catalogue's spelling) or
/// a typed error naming the field; an unknown state lists the valid ones.
pub fn validate(p: &CommercialProfile) -> EngineResult<CommercialProfile> {
    let mut estados: Vec<String> = Vec::new();
    for raw in p.estados.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let state = State::normalize(raw, StateContext::StateField).map_err(|_| {
            EngineError::Typed(
                ErrorBody::new(
                    ErrorCode::InvalidArgument,
                    format!("«{raw}» no es una entidad federativa."),
                    "Elige los estados de tu territorio de la lista.",
                )
                .with_allowed_values(
                    State::ALL
                        .iter()
                        .map(|s| s.name().to_owned())
                        .collect::<Vec<_>>(),
                ),
            )
        })?;
        if !estados.iter().any(|e| e == state.name()) {
            estados.push(state.name().to_owned());
        }
    }
    if let Some(t) = p.ticket_mxn.filter(|t| *t == 0 || *t > MAX_TICKET) {
        return Err(invalid(
            format!("El ticket típico debe estar entre 1 y {MAX_TICKET} pesos; recibió {t}."),
            "Escribe el monto de una venta típica, en pesos, o déjalo vacío.",
        ));
    }
    Ok(CommercialProfile {
        oferta: text(&p.oferta, "Qué vende tu equipo")?,
        giros: items(&p.giros, "Giros de tus clientes")?,
        estados,
        compradores: items(&p.compradores, "Compradores de gobierno")?,
        ticket_mxn: p.ticket_mxn,
        exclusiones: text(&p.exclusiones, "A quién no buscar")?,
    })
}

/// The workspace's profile (empty when nobody set one).
pub async fn get_in(conn: &mut Conn, workspace_id: &str) -> EngineResult<CommercialProfile> {
    let body: Option<String> =
        sqlx::query_scalar("select body from workspace_profiles where workspace_id = $1")
            .bind(workspace_id)
            .fetch_optional(conn)
            .await?;
    match body {
        None => Ok(CommercialProfile::default()),
        Some(body) => crate::base::stored::json("workspace_profiles.body", &body),
    }
}

/// The caller's workspace profile (any member may read it: it frames their turns).
pub async fn get(store: &Store, caller: &Caller) -> EngineResult<CommercialProfile> {
    let mut conn = store.pool().acquire().await?;
    get_in(&mut conn, &caller.workspace_id).await
}

/// Replaces the profile. Owner/admin only; validated, stored and audited in one
/// transaction. Returns what was stored.
pub async fn set(
    store: &Store,
    caller: &Caller,
    profile: &CommercialProfile,
) -> EngineResult<CommercialProfile> {
    caller.require_admin()?;
    let clean = validate(profile)?;
    let body = serde_json::to_string(&clean).map_err(EngineError::internal)?;
    let mut tx = store
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    sqlx::query(
        "insert into workspace_profiles (workspace_id, body, updated_by, updated_at)
         values ($1, $2, $3, $4)
         on conflict (workspace_id) do update set body = excluded.body,
             updated_by = excluded.updated_by, updated_at = excluded.updated_at",
    )
    .bind(&caller.workspace_id)
    .bind(&body)
    .bind(&caller.user_id)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    audit_in(
        &mut tx,
        caller,
        "profile.set",
        &serde_json::to_value(&clean).map_err(EngineError::internal)?,
    )
    .await?;
    tx.commit().await?;
    Ok(clean)
}

/// True when the profile says nothing.
pub fn is_empty(p: &CommercialProfile) -> bool {
    p.oferta.is_empty()
        && p.giros.is_empty()
        && p.estados.is_empty()
        && p.compradores.is_empty()
        && p.ticket_mxn.is_none()
        && p.exclusiones.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> CommercialProfile {
        CommercialProfile {
            oferta: "  Empaque corrugado y etiquetas ".into(),
            giros: vec!["alimentos".into(), "Alimentos".into(), " ".into()],
            estados: vec!["jalisco".into(), "Edomex".into(), "Jalisco".into()],
            compradores: vec!["IMSS".into()],
            ticket_mxn: Some(250_000),
            exclusiones: "distribuidores".into(),
        }
    }

    #[test]
    fn a_profile_is_cleaned_to_the_catalogue() {
        let p = validate(&profile()).unwrap();
        assert_eq!(p.oferta, "Empaque corrugado y etiquetas");
        assert_eq!(p.giros, vec!["alimentos".to_owned()]);
        assert_eq!(
            p.estados,
            vec!["Jalisco".to_owned(), "Estado de México".to_owned()]
        );
    }

    #[test]
    fn bad_fields_are_typed_errors_that_name_them() {
        let mut p = profile();
        p.estados = vec!["Narnia".into()];
        let body = validate(&p).unwrap_err().body();
        assert_eq!(body.code, ErrorCode::InvalidArgument);
        assert!(body.message.contains("Narnia"), "{}", body.message);
        assert!(body
            .allowed_values
            .unwrap_or_default()
            .contains(&"Jalisco".to_owned()));

        let mut p = profile();
        p.oferta = "x".repeat(MAX_TEXT + 1);
        assert!(validate(&p)
            .unwrap_err()
            .body()
            .message
            .contains("Qué vende"));
        let mut p = profile();
        p.compradores = (0..=MAX_ITEMS)
            .map(|i| format!("Dependencia {i}"))
            .collect();
        assert!(validate(&p)
            .unwrap_err()
            .body()
            .message
            .contains("Compradores"));
        let mut p = profile();
        p.ticket_mxn = Some(0);
        assert!(validate(&p).is_err());
    }
}
