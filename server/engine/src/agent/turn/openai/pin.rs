//! The pin gate's data: an operator may pin a workspace to one model route
//! (`workspaces.model_pin`). Read once per model step; set from the operator CLI.

use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pin {
    /// The primary answers; escalation as the gates allow.
    #[default]
    None,
    /// Never escalate: what the primary cannot answer is refused.
    Primary,
    /// Every step goes to the fallback, unless the workspace is at its spend cap.
    Fallback,
}

impl Pin {
    pub const ALL: [Pin; 3] = [Pin::None, Pin::Primary, Pin::Fallback];

    pub fn as_str(self) -> &'static str {
        match self {
            Pin::None => "none",
            Pin::Primary => "primary",
            Pin::Fallback => "fallback",
        }
    }

    pub fn parse(text: &str) -> Option<Pin> {
        Pin::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// The workspace's pin; an unknown workspace is not pinned.
pub async fn read(store: &Store, workspace_id: &str) -> EngineResult<Pin> {
    let pin: Option<String> = sqlx::query_scalar("select model_pin from workspaces where id = $1")
        .bind(workspace_id)
        .fetch_optional(store.pool())
        .await?;
    Ok(pin.as_deref().and_then(Pin::parse).unwrap_or_default())
}

/// Pins (or unpins, with `Pin::None`) a workspace.
pub async fn set(store: &Store, workspace_id: &str, pin: Pin) -> EngineResult<()> {
    let done = sqlx::query("update workspaces set model_pin = $1 where id = $2")
        .bind(pin.as_str())
        .bind(workspace_id)
        .execute(store.pool())
        .await?;
    if done.rows_affected() == 0 {
        return Err(EngineError::internal(format!(
            "no workspace {workspace_id} to pin"
        )));
    }
    Ok(())
}
