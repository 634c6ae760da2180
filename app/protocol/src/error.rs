//! The uniform error shape `{error:{code,message,hint,allowed_values?}}` (CONTRACT §5 rule 8).
//! `message` and `hint` are Spanish text for the person; `code` is stable for programs.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

/// Stable error codes. New codes may be added; existing ones never change meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidArgument,
    UnknownTool,
    NotFound,
    Unauthorized,
    Forbidden,
    InvalidCredentials,
    TooManyAttempts,
    RateLimited,
    PlanLimit,
    CursorQueryMismatch,
    CursorInvalid,
    ProtectedResource,
    VersionConflict,
    QuoteExpired,
    /// A decision card that can no longer be accepted (its quote or proposal expired).
    DecisionExpired,
    InsufficientCredits,
    /// The price of an action exceeds the `max_credits` the caller allowed.
    MaxCreditsExceeded,
    /// The person's contact is not revealed in this workspace (reveal it first).
    NotRevealed,
    Conflict,
    /// An idempotency key reused with another request (other tool, arguments or caller).
    IdempotencyConflict,
    /// A request body over the route's limit.
    PayloadTooLarge,
    Internal,
}

impl ErrorCode {
    /// The HTTP status a code maps to when it crosses an HTTP boundary.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidArgument
            | ErrorCode::UnknownTool
            | ErrorCode::CursorQueryMismatch
            | ErrorCode::CursorInvalid => 422,
            ErrorCode::NotFound => 404,
            ErrorCode::Unauthorized | ErrorCode::InvalidCredentials => 401,
            ErrorCode::Forbidden | ErrorCode::ProtectedResource => 403,
            ErrorCode::TooManyAttempts | ErrorCode::RateLimited => 429,
            ErrorCode::PlanLimit | ErrorCode::InsufficientCredits => 402,
            ErrorCode::VersionConflict
            | ErrorCode::Conflict
            | ErrorCode::MaxCreditsExceeded
            | ErrorCode::NotRevealed
            | ErrorCode::IdempotencyConflict => 409,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::QuoteExpired | ErrorCode::DecisionExpired => 410,
            ErrorCode::Internal => 500,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_values: Option<Vec<String>>,
    /// Seconds to wait before retrying (rate limits and throttling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>, hint: impl Into<String>) -> Self {
        ErrorBody {
            code,
            message: message.into(),
            hint: hint.into(),
            allowed_values: None,
            retry_after: None,
        }
    }

    pub fn with_allowed_values<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_values = Some(values.into_iter().map(Into::into).collect());
        self
    }

    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }
}

/// `{ "error": { … } }`, the shape every boundary returns on failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelope_has_the_documented_shape() {
        let env = ErrorEnvelope {
            error: ErrorBody::new(ErrorCode::InvalidArgument, "m", "h")
                .with_allowed_values(["a", "b"]),
        };
        let json = serde_json::to_value(&env).unwrap();
        assert_eq!(json["error"]["code"], "INVALID_ARGUMENT");
        assert_eq!(json["error"]["allowed_values"][1], "b");
        assert!(json["error"].get("retry_after").is_none());
    }
}
