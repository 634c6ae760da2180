//! The error type of every server function: the typed error body of the engine, or a
//! transport failure. It crosses the wire as JSON and shows Spanish text to the person.

use luna_protocol::error::{ErrorBody, ErrorCode};
use serde::{Deserialize, Serialize};
use server_fn::error::{FromServerFnError, ServerFnErrorErr};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    #[error("{}", .0.message)]
    Api(ErrorBody),
    #[error("{0}")]
    Transport(ServerFnErrorErr),
}

impl FromServerFnError for AppError {
    type Encoder = crate::codec::WireJson;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        AppError::Transport(value)
    }
}

impl AppError {
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            AppError::Api(body) => Some(body.code),
            AppError::Transport(_) => None,
        }
    }

    /// The sentence shown to the person.
    pub fn message(&self) -> String {
        match self {
            AppError::Api(body) => body.message.clone(),
            AppError::Transport(_) => {
                "No pudimos comunicarnos con el servidor. Revisa tu conexión e intenta de nuevo."
                    .into()
            }
        }
    }

    pub fn unauthorized() -> Self {
        AppError::Api(ErrorBody::new(
            ErrorCode::Unauthorized,
            "Tu sesión terminó. Vuelve a iniciar sesión.",
            "Entra de nuevo con tu correo y contraseña.",
        ))
    }
}
