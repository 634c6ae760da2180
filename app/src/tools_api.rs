//! Server functions that expose the tool registry to the interface: the tools the
//! signed-in person may use (with their Spanish labels), a call as the `ui` surface
//! through the same pipeline as MCP and Luna (the board uses it for direct actions),
//! and the generated tool reference.

use leptos::prelude::*;
use luna_protocol::tool::{ToolOutcome, ToolSummary};
use serde_json::Value;

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine};

/// Tools the current person may call from the interface, in catalog order.
#[server(prefix = "/api", endpoint = "tools", output = crate::codec::Answer)]
pub async fn list_tools() -> Result<Vec<ToolSummary>, AppError> {
    use luna_engine::registry::policy::{authorize, Decision};
    use luna_engine::registry::Surface;

    let caller = caller()?;
    let engine = engine()?;
    Ok(engine
        .registry
        .list(Surface::Ui)
        .into_iter()
        .filter(|d| !matches!(authorize(d, &caller, Surface::Ui), Decision::Refuse(_)))
        .map(|d| ToolSummary {
            name: d.name.to_owned(),
            family: d.family.label().to_owned(),
            label: d.label.to_owned(),
            level: d.level.as_str().to_owned(),
            read_only: d.read_only(),
        })
        .collect())
}

/// Calls a tool as the `ui` surface. A tool failure is data (`ToolOutcome::Err`) with
/// HTTP 200, like MCP's `isError`; only a missing session fails the request (401).
#[server(prefix = "/api", endpoint = "call_tool", input = server_fn::codec::Json, output = crate::codec::Answer)]
pub async fn call_tool(
    name: String,
    args: Value,
    idempotency_key: Option<String>,
) -> Result<ToolOutcome, AppError> {
    use luna_engine::registry::{Surface, ToolRequest};

    let caller = caller()?;
    let engine = engine()?;
    let mut request = ToolRequest::new(name, args, Surface::Ui);
    request.idempotency_key = idempotency_key.filter(|k| !k.trim().is_empty());
    Ok(engine.call_tool(&caller, request).await.to_outcome())
}

/// The tool reference (the same markdown as docs/TOOLS.md), for a help page.
#[server(prefix = "/api", endpoint = "tool_reference", output = crate::codec::Answer)]
pub async fn tool_reference() -> Result<String, AppError> {
    caller()?;
    Ok(luna_engine::registry::docs::markdown(&engine()?.registry))
}
