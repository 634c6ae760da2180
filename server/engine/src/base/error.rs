//! The engine's typed error. Every failure a caller can cause maps to a stable `code`
//! and a Spanish message for the person; internal failures keep their detail in the
//! logs and show only a generic message.

use luna_protocol::error::{ErrorBody, ErrorCode};

pub type EngineResult<T> = Result<T, EngineError>;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A typed, user-facing failure (bad input, permission, not found, limits…).
    #[error("{0:?}")]
    Typed(ErrorBody),
    /// The database failed. Detail is logged, never shown.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// Anything else that is our fault.
    #[error("internal: {0}")]
    Internal(String),
}

impl EngineError {
    /// An internal failure (bad stored JSON, a broken invariant): logged, never shown.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        EngineError::Internal(e.to_string())
    }

    pub fn typed(code: ErrorCode, message: impl Into<String>, hint: impl Into<String>) -> Self {
        EngineError::Typed(ErrorBody::new(code, message, hint))
    }

    pub fn not_found(what: &str) -> Self {
        Self::typed(
            ErrorCode::NotFound,
            format!("No encontramos {what} en este espacio de trabajo."),
            "Revisa la referencia; solo se pueden leer datos de tu propio espacio de trabajo.",
        )
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::typed(
            ErrorCode::Forbidden,
            message,
            "Pide a un administrador o al dueño del espacio de trabajo que lo haga.",
        )
    }

    /// The body shown to a caller. Internal errors become a generic message.
    pub fn body(&self) -> ErrorBody {
        match self {
            EngineError::Typed(body) => body.clone(),
            other => {
                tracing::error!(error = %other, "internal error");
                ErrorBody::new(
                    ErrorCode::Internal,
                    "Algo falló de nuestro lado. Intenta de nuevo en un momento.",
                    "Si se repite, avisa al equipo de soporte.",
                )
            }
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::Typed(body) => body.code,
            _ => ErrorCode::Internal,
        }
    }
}
