//! The MCP endpoint at `/mcp` (CONTRACT §6): the official Rust SDK (`rmcp`) over
//! Streamable HTTP, stateless, JSON responses. Authentication is a workspace API key
//! in `Authorization: Bearer` (bad or revoked → 401); a foreign `Origin` was already
//! refused by [`crate::guard`] (403), on every method. `tools/list` and `tools/call` derive entirely
//! from the engine's registry; calls run through the same pipeline as every surface.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use luna_engine::accounts::Caller;
use luna_engine::registry::{Surface, ToolDef, ToolRequest};
use luna_engine::Engine;
use luna_protocol::error::ErrorCode;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

/// The `_meta` key of a tool call's idempotency key.
pub const IDEMPOTENCY_META: &str = "luna/idempotency_key";

/// The caller an API key resolved to, for this MCP request only.
#[derive(Clone, Debug)]
pub struct McpCaller(pub Caller);

/// The MCP descriptor of one tool: name, description with embedded examples, input
/// schema and annotations derived from the metadata.
pub fn descriptor(def: &ToolDef) -> Tool {
    let schema = def.input_schema.as_object().cloned().unwrap_or_default();
    let a = def.annotations();
    Tool::new(def.name, def.full_description(), Arc::new(schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(a.read_only)
            .destructive(a.destructive)
            .idempotent(a.idempotent)
            .open_world(a.open_world),
    )
}

/// The public catalog a caller may call, in the registry's stable order: a read-only
/// key lists no tool that writes, reveals or deletes.
pub fn tools(engine: &Engine, caller: &Caller) -> Vec<Tool> {
    engine
        .registry
        .callable(Surface::Mcp, caller)
        .into_iter()
        .map(descriptor)
        .collect()
}

/// The caller the auth layer resolved for this MCP request.
fn caller_of(context: &RequestContext<RoleServer>) -> Result<Caller, ErrorData> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<McpCaller>().cloned())
        .map(|McpCaller(caller)| caller)
        // The auth layer always sets it; without it the request never reached here.
        .ok_or_else(|| ErrorData::internal_error("missing caller", None))
}

#[derive(Clone)]
pub struct LunaMcp {
    engine: Engine,
}

impl ServerHandler for LunaMcp {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("luna", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Herramientas de Luna para ventas B2B en México: Proveedores, Licitaciones, \
                 Adjudicaciones, Registros, marcas de riesgo, CRM, Cerebro y créditos. Cada \
                 resultado trae ref por fila; los errores vienen como datos con code, message y hint.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = caller_of(&context)?;
        Ok(ListToolsResult::with_all_items(tools(
            &self.engine,
            &caller,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = caller_of(&context)?;
        // A retry-safe call names its key in `_meta` (`luna/idempotency_key`); the
        // pipeline binds it to this exact request.
        // rmcp hands the request's `_meta` over in the context.
        let key = context
            .meta
            .get(IDEMPOTENCY_META)
            .or_else(|| request.meta.as_ref().and_then(|m| m.get(IDEMPOTENCY_META)))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let mut req = ToolRequest::new(request.name.to_string(), args, Surface::Mcp);
        req.idempotency_key = key;
        let response = self.engine.call_tool(&caller, req).await;
        Ok(to_result(response.is_ok(), response.to_json()).into())
    }
}

/// `structuredContent` plus the same JSON as text; errors carry `isError: true`.
pub fn to_result(ok: bool, json: Value) -> CallToolResult {
    let text = serde_json::to_string(&json).unwrap_or_default();
    let mut result = if ok {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(json);
    result
}

fn error_response(status: StatusCode, code: ErrorCode, message: &str, hint: &str) -> Response {
    let mut resp = crate::guard::typed(status, code, message, hint);
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer realm=\"luna-mcp\""),
        );
    }
    resp
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Resolves the API key (the `Origin` was checked by [`crate::guard`]) to a caller (never a cookie session).
pub async fn authenticate(State(engine): State<Engine>, mut req: Request, next: Next) -> Response {
    let unauthorized = || {
        error_response(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "Falta una llave de API válida.",
            "Envía Authorization: Bearer <llave> con una llave vigente; un administrador la crea en Ajustes.",
        )
    };
    let Some(secret) = bearer(req.headers()).map(str::to_owned) else {
        return unauthorized();
    };
    match engine.accounts.api_key_caller(&secret).await {
        Ok(Some(caller)) => {
            tracing::Span::current().record("workspace", caller.workspace_id.as_str());
            req.extensions_mut().insert(McpCaller(caller));
            next.run(req).await
        }
        Ok(None) => unauthorized(),
        Err(e) => {
            tracing::error!(error = %e, "api key lookup failed");
            error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                "Algo falló de nuestro lado. Intenta de nuevo en un momento.",
                "Si se repite, avisa al equipo de soporte.",
            )
        }
    }
}

/// The `/mcp` service: stateless Streamable HTTP with JSON responses, behind auth.
pub fn router(engine: Engine) -> Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        // Host checks are replaced by the Origin check above plus the API key.
        .disable_allowed_hosts();
    config.legacy_session_mode = false;
    config.sse_keep_alive = None;
    let handler = LunaMcp {
        engine: engine.clone(),
    };
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .fallback_service(service)
        .layer(axum::middleware::from_fn_with_state(engine, authenticate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn bearer_is_parsed_case_insensitively() {
        assert_eq!(
            bearer(&headers(&[("authorization", "Bearer abc")])),
            Some("abc")
        );
        assert_eq!(
            bearer(&headers(&[("authorization", "bearer  abc ")])),
            Some("abc")
        );
        assert_eq!(bearer(&headers(&[("authorization", "Basic abc")])), None);
        assert_eq!(bearer(&headers(&[("authorization", "Bearer ")])), None);
    }
}
