//! The error type of every server function: the typed error body of the engine, or a
//! transport failure. It crosses the wire as JSON and shows Spanish text to the person.

use luna_protocol::error::{ErrorBody, ErrorCode};
use luna_protocol::json::{payload, variant, FromJson, ReadError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
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

/// Written by hand because `ServerFnErrorErr` is server_fn's; the JSON is serde's
/// externally tagged form of both enums (`{"Api":{…}}`, `{"Transport":{"Request":"…"}}`).
impl FromJson for AppError {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        use ServerFnErrorErr as E;
        const VARIANTS: &[&str] = &["Api", "Transport"];
        const TRANSPORT: &[&str] = &[
            "Registration",
            "UnsupportedRequestMethod",
            "Request",
            "ServerError",
            "MiddlewareError",
            "Deserialization",
            "Serialization",
            "Args",
            "MissingArg",
            "Response",
        ];
        let (name, data) = variant(value)?;
        match name.as_str() {
            "Api" => Ok(AppError::Api(ErrorBody::from_json(payload(data)?)?)),
            "Transport" => {
                let (kind, text) = variant(payload(data)?)?;
                let text = String::from_json(payload(text)?)?;
                Ok(AppError::Transport(match kind.as_str() {
                    "Registration" => E::Registration(text),
                    "UnsupportedRequestMethod" => E::UnsupportedRequestMethod(text),
                    "Request" => E::Request(text),
                    "ServerError" => E::ServerError(text),
                    "MiddlewareError" => E::MiddlewareError(text),
                    "Deserialization" => E::Deserialization(text),
                    "Serialization" => E::Serialization(text),
                    "Args" => E::Args(text),
                    "MissingArg" => E::MissingArg(text),
                    "Response" => E::Response(text),
                    other => return Err(ReadError::unknown_variant(other, TRANSPORT)),
                }))
            }
            other => Err(ReadError::unknown_variant(other, VARIANTS)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The browser reads every error the server sends as serde would.
    #[test]
    fn errors_read_in_the_browser_as_serde_reads_them() {
        let mut sent: Vec<AppError> = vec![
            AppError::unauthorized(),
            AppError::Api(
                ErrorBody::new(ErrorCode::InvalidArgument, "m", "h")
                    .with_allowed_values(["a", "b"])
                    .with_retry_after(3),
            ),
        ];
        for make in [
            ServerFnErrorErr::Registration,
            ServerFnErrorErr::UnsupportedRequestMethod,
            ServerFnErrorErr::Request,
            ServerFnErrorErr::ServerError,
            ServerFnErrorErr::MiddlewareError,
            ServerFnErrorErr::Deserialization,
            ServerFnErrorErr::Serialization,
            ServerFnErrorErr::Args,
            ServerFnErrorErr::MissingArg,
            ServerFnErrorErr::Response,
        ] {
            sent.push(AppError::Transport(make("x".into())));
        }
        for error in sent {
            let wire = serde_json::to_value(&error).unwrap();
            assert_eq!(AppError::from_json(wire.clone()), Ok(error), "{wire}");
        }
        for bad in [
            json!({"Transport": {"Teleport": "x"}}),
            json!({"Transport": "Request"}),
            json!({"Transport": {"Request": 3}}),
            json!({"Api": {"code": "NOPE", "message": "m", "hint": "h"}}),
            json!("Api"),
            json!({"Other": 1}),
        ] {
            assert!(
                serde_json::from_value::<AppError>(bad.clone()).is_err(),
                "{bad}"
            );
            assert!(AppError::from_json(bad.clone()).is_err(), "{bad}");
        }
    }
}
