//! The CRM's typed failures, with Spanish messages in the product lexicon.

use luna_protocol::error::{ErrorBody, ErrorCode};

use crate::base::error::EngineError;

pub fn invalid(message: impl Into<String>, hint: impl Into<String>) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

pub fn invalid_with(
    message: impl Into<String>,
    hint: impl Into<String>,
    allowed: impl IntoIterator<Item = String>,
) -> EngineError {
    EngineError::Typed(
        ErrorBody::new(ErrorCode::InvalidArgument, message, hint).with_allowed_values(allowed),
    )
}

/// Writing to an archived collection.
pub fn archived(name: &str) -> EngineError {
    EngineError::typed(
        ErrorCode::ProtectedResource,
        format!("La colección «{name}» está archivada y es de solo lectura."),
        "Elige una colección activa (crm_collections) o pide a un administrador que la reactive.",
    )
}

/// The record changed since the caller read it.
pub fn version_conflict(expected: i64, current: i64) -> EngineError {
    EngineError::typed(
        ErrorCode::VersionConflict,
        format!(
            "El registro cambió mientras tanto: esperabas la versión {expected} y ahora va en la {current}."
        ),
        "Vuelve a leer el registro (collection_query) y aplica el cambio sobre la versión actual.",
    )
}

/// An undo whose record changed after the write it would undo.
pub fn undo_conflict() -> EngineError {
    EngineError::typed(
        ErrorCode::VersionConflict,
        "No se puede deshacer: el registro cambió después de ese cambio.",
        "Revisa el historial del registro (crm_record con op history) y corrige a mano.",
    )
}

pub fn record_not_found() -> EngineError {
    EngineError::not_found("ese registro del CRM")
}

pub fn collection_not_found() -> EngineError {
    EngineError::not_found("esa colección del CRM")
}
