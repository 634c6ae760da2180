//! The OpenAI-compatible model gateway (CONTRACT §7.5): any chat-completions endpoint with
//! tools (DeepSeek, OpenAI, Ollama, vLLM, llama.cpp server, LiteLLM) plays Luna
//! through the same `ModelGateway` trait as the local director.
//!
//! Every step passes the gates in a fixed order: **spend cap → pin → primary →
//! requested escalation → technical escalation → typed refusal**.
//! - The primary (cheap, `json_object`) answers first. A provider error or timeout is
//!   retried at most `attempts_per_route` times in all; an answer that is not a valid
//!   step gets exactly **one** repair on the same model.
//! - Only then does the step escalate to the fallback (`json_schema`), with the typed
//!   reason `capability` (invalid after the repair) or `technical` (provider failure).
//! - A workspace whose measured model spend this month reached its cap stays on the
//!   primary: a step that would need the fallback is refused with `cap` (429).
//! - With no fallback, or when the fallback fails as well, the step is refused with
//!   `no_capable_model` (422); the runner ends the turn with `turn.refused`.
//!
//! - An operator may pin a workspace (`pin`): to the primary (never escalate) or to
//!   the fallback (every step there, reason `pin`, except at the spend cap).
//! - With `stream` (the default) answers arrive as server-sent events and are folded
//!   by `stream::Assembler`; live reasoning goes to the step's `LiveSink` only.
//!
//! Usage is recorded per attempt (`usage`); the API key is held in
//! `ApiKey`, which never prints, and neither it nor provider bodies are logged.

mod config;
mod partial;
pub mod pin;
pub mod prompt;
pub mod stream;
pub mod usage;
pub mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use luna_protocol::event::RefusalCode;
use sha2::{Digest, Sha256};

use crate::agent::contract::gateway::{
    GatewayError, LiveSink, ModelGateway, ModelInput, ModelStep, Route, StepContext, StepFuture,
};
use crate::agent::contract::intent::TurnOutput;
use crate::base::store::Store;

pub use self::config::{ApiKey, GatewayConfig, Price, Profile, MAX_RETRY_AFTER};
use self::usage::Attempt;
use self::wire::{
    ChatRequest, ChatResponse, JsonSchemaFormat, Message, ResponseFormat, StreamOptions,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    Primary,
    Fallback,
}

impl Tier {
    fn name(self) -> &'static str {
        match self {
            Tier::Primary => "primary",
            Tier::Fallback => "fallback",
        }
    }
}

/// Why a route gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// Still not a valid step after the one repair: escalate with `capability`.
    Capability,
    /// Provider errors or timeouts after the bounded retries: escalate with `technical`.
    Technical,
}

impl Failure {
    fn reason(self) -> &'static str {
        match self {
            Failure::Capability => "capability",
            Failure::Technical => "technical",
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("no se pudo preparar el cliente HTTP del modelo: {0}")]
pub struct BuildError(String);

/// The gateway. Cheap to share behind an `Arc`; one per server.
pub struct OpenAiGateway {
    config: GatewayConfig,
    url: String,
    http: reqwest::Client,
    store: Store,
    /// Turns that escalated, until the runner reads `route_taken`.
    escalated: Mutex<HashMap<String, Route>>,
    /// Set once the server refused `response_format` together with `tools` (llama.cpp
    /// server, some proxies): from then on requests carry tools only and the JSON
    /// intent is asked for by the prompt (`prompt::SYSTEM_PROMPT`).
    tools_only: AtomicBool,
}

impl OpenAiGateway {
    pub fn new(config: GatewayConfig, store: Store) -> Result<Self, BuildError> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| BuildError(e.to_string()))?;
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        Ok(OpenAiGateway {
            config,
            url,
            http,
            store,
            escalated: Mutex::new(HashMap::new()),
            tools_only: AtomicBool::new(false),
        })
    }

    async fn gated_step(&self, input: &ModelInput) -> Result<ModelStep, GatewayError> {
        let ctx = &input.context;
        // Gate 1: the spend cap (decides whether leaving the primary is allowed at all).
        let at_cap = self.at_cap(&ctx.workspace_id).await;
        // Gate 2: the pin. Pinned to the fallback, the step goes there first — unless
        // the workspace is at its cap, which the pin cannot override.
        let pin = match pin::read(&self.store, &ctx.workspace_id).await {
            Ok(pin) => pin,
            Err(e) => {
                tracing::error!(error = %e, "could not read the workspace's pin; not pinned for this step");
                pin::Pin::None
            }
        };
        if pin == pin::Pin::Fallback && !at_cap && self.config.fallback.is_some() {
            return match self.run_route(Tier::Fallback, Some("pin"), input).await {
                Ok(step) => {
                    self.note_escalation(ctx);
                    Ok(step)
                }
                Err(_) => Err(GatewayError::Refused(RefusalCode::NoCapableModel)),
            };
        }
        // Gate 3: the primary.
        let failure = match self.run_route(Tier::Primary, None, input).await {
            Ok(step) => return Ok(step),
            Err(f) => f,
        };
        // Gates 4 and 5: requested (capability) or technical escalation.
        if self.config.fallback.is_none() || pin == pin::Pin::Primary {
            return Err(GatewayError::Refused(RefusalCode::NoCapableModel));
        }
        if at_cap {
            tracing::warn!(
                reason = failure.reason(),
                "escalation blocked: the workspace is at its model spend cap"
            );
            return Err(GatewayError::Refused(RefusalCode::Cap));
        }
        tracing::info!(
            reason = failure.reason(),
            "escalating to the fallback model"
        );
        match self
            .run_route(Tier::Fallback, Some(failure.reason()), input)
            .await
        {
            Ok(step) => {
                self.note_escalation(ctx);
                Ok(step)
            }
            // Gate 6: typed refusal.
            Err(_) => Err(GatewayError::Refused(RefusalCode::NoCapableModel)),
        }
    }

    /// True when the workspace's measured spend this month reached the cap. If the
    /// spend cannot be read, the workspace is treated as capped (no escalation).
    async fn at_cap(&self, workspace_id: &str) -> bool {
        let Some(cap) = self.config.monthly_spend_cap_micro_usd else {
            return false;
        };
        match usage::month_spend(&self.store, workspace_id).await {
            Ok(spent) => spent >= cap,
            Err(e) => {
                tracing::error!(error = %e, "could not read the model spend; escalation disabled for this step");
                true
            }
        }
    }

    fn note_escalation(&self, ctx: &StepContext) {
        if let Ok(mut map) = self.escalated.lock() {
            if map.len() > 10_000 {
                map.clear();
            }
            map.insert(ctx.turn_id.clone(), Route::Fallback);
        }
    }

    fn profile(&self, tier: Tier) -> Option<&Profile> {
        match tier {
            Tier::Primary => Some(&self.config.primary),
            Tier::Fallback => self.config.fallback.as_ref(),
        }
    }

    /// One route: an answer, one repair if it is not a valid step, bounded retries
    /// for provider failures.
    async fn run_route(
        &self,
        tier: Tier,
        reason: Option<&'static str>,
        input: &ModelInput,
    ) -> Result<ModelStep, Failure> {
        let profile = self.profile(tier).ok_or(Failure::Technical)?;
        let mut messages = prompt::messages(input);
        let mut repaired = false;
        loop {
            let request = self.request(tier, profile, &input.context, messages.clone(), input);
            let (message, mut attempt) = self
                .send(tier, reason, profile, &input.context, &request)
                .await?;
            match prompt::parse_step(&message) {
                Ok(step) => {
                    self.record(&attempt).await;
                    return Ok(step);
                }
                Err(problem) => {
                    attempt.outcome = "invalid";
                    self.record(&attempt).await;
                    tracing::warn!(route = tier.name(), model = %profile.model, repaired, "the model answered an invalid step");
                    if repaired {
                        return Err(Failure::Capability);
                    }
                    repaired = true;
                    messages.push(Message::Assistant {
                        content: message.content.clone(),
                        tool_calls: message.tool_calls.clone(),
                    });
                    messages.push(Message::User {
                        content: format!(
                            "Tu respuesta no es válida: {problem}. Responde de nuevo: llama una herramienta disponible o devuelve solo el objeto JSON final."
                        ),
                    });
                }
            }
        }
    }

    fn request(
        &self,
        tier: Tier,
        profile: &Profile,
        ctx: &StepContext,
        messages: Vec<Message>,
        input: &ModelInput,
    ) -> ChatRequest {
        let tools = prompt::tools(input);
        let constrained = tools.is_empty() || !self.tools_only.load(Ordering::Relaxed);
        ChatRequest {
            model: profile.model.clone(),
            messages,
            tool_choice: (!tools.is_empty()).then(|| "auto".to_owned()),
            tools,
            response_format: constrained.then(|| match tier {
                Tier::Primary => ResponseFormat::JsonObject,
                Tier::Fallback => ResponseFormat::JsonSchema {
                    json_schema: JsonSchemaFormat {
                        name: "turn_output".to_owned(),
                        schema: turn_output_schema(),
                        strict: false,
                    },
                },
            }),
            prompt_cache_key: Some(cache_salt(&ctx.workspace_id)),
            temperature: 0.0,
            stream: self.config.stream,
            stream_options: self.config.stream.then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }

    /// Sends `request`, retrying provider errors and timeouts up to the bound. Every
    /// failed attempt is recorded here; the successful one is returned for the caller
    /// to record once it knows whether the answer was valid.
    async fn send(
        &self,
        tier: Tier,
        reason: Option<&'static str>,
        profile: &Profile,
        ctx: &StepContext,
        request: &ChatRequest,
    ) -> Result<(wire::ResponseMessage, Attempt), Failure> {
        let attempts = self.config.attempts_per_route.max(1);
        let mut request = std::borrow::Cow::Borrowed(request);
        let mut n = 0;
        while n < attempts {
            n += 1;
            let started = Instant::now();
            let mut http = self
                .http
                .post(&self.url)
                .timeout(self.config.timeout)
                .json(&*request);
            if let Some(key) = &self.config.api_key {
                http = http.bearer_auth(key.expose());
            }
            let mut attempt = Attempt {
                workspace_id: ctx.workspace_id.clone(),
                turn_id: (!ctx.turn_id.is_empty()).then(|| ctx.turn_id.clone()),
                route: tier.name(),
                reason,
                model: profile.model.clone(),
                outcome: "error",
                http_status: None,
                tokens_in: None,
                tokens_out: None,
                cached_tokens: None,
                cost_micro_usd: None,
                duration_ms: 0,
            };
            let mut wait = self.config.retry_backoff * n;
            let retryable = match http.send().await {
                Err(e) => {
                    attempt.outcome = if e.is_timeout() { "timeout" } else { "error" };
                    true
                }
                Ok(response) => {
                    let status = response.status();
                    attempt.http_status = Some(status.as_u16());
                    if status.is_success() {
                        match read_answer(response, ctx).await {
                            Ok((message, usage)) => {
                                attempt.duration_ms = started.elapsed().as_millis() as i64;
                                attempt.outcome = "ok";
                                if let Some(u) = &usage {
                                    attempt.tokens_in = u.prompt_tokens;
                                    attempt.tokens_out = u.completion_tokens;
                                    attempt.cached_tokens = u.cached_tokens();
                                    attempt.cost_micro_usd = cost(u, profile.price);
                                }
                                return Ok((message, attempt));
                            }
                            Err(timeout) => {
                                attempt.outcome = if timeout { "timeout" } else { "error" };
                                true
                            }
                        }
                    } else {
                        // A provider asking to wait longer than we are willing to
                        // holds the turn up: escalate instead of retrying.
                        let too_long = retry_after(response.headers()).is_some_and(|after| {
                            wait = wait.max(after);
                            after > MAX_RETRY_AFTER
                        });
                        if status.as_u16() == 400
                            && request.response_format.is_some()
                            && !request.tools.is_empty()
                            && refuses_format(response).await
                        {
                            // A server that cannot constrain the output while tools
                            // are offered: once, the same request with tools only
                            // (this attempt does not count); later requests skip it.
                            attempt.duration_ms = started.elapsed().as_millis() as i64;
                            self.record(&attempt).await;
                            tracing::warn!(route = tier.name(), model = %profile.model, "the server refused response_format with tools; sending tools only");
                            self.tools_only.store(true, Ordering::Relaxed);
                            request.to_mut().response_format = None;
                            n -= 1;
                            continue;
                        }
                        (status.as_u16() == 429 || status.is_server_error()) && !too_long
                    }
                }
            };
            attempt.duration_ms = started.elapsed().as_millis() as i64;
            tracing::warn!(
                route = tier.name(),
                model = %profile.model,
                attempt = n,
                status = attempt.http_status,
                outcome = attempt.outcome,
                "model attempt failed"
            );
            self.record(&attempt).await;
            if !retryable || n == attempts {
                break;
            }
            tokio::time::sleep(wait).await;
        }
        Err(Failure::Technical)
    }

    async fn record(&self, attempt: &Attempt) {
        if let Err(e) = usage::record(&self.store, attempt).await {
            tracing::error!(error = %e, "could not record a model attempt");
        }
    }
}

impl ModelGateway for OpenAiGateway {
    fn route(&self) -> Route {
        Route::Primary
    }

    fn step<'a>(&'a self, input: &'a ModelInput) -> StepFuture<'a> {
        Box::pin(async move {
            let span = tracing::info_span!("model.step", turn = %input.context.turn_id);
            tracing::Instrument::instrument(self.gated_step(input), span).await
        })
    }

    fn route_taken(&self, turn_id: &str) -> Route {
        self.escalated
            .lock()
            .ok()
            .and_then(|mut map| map.remove(turn_id))
            .unwrap_or(Route::Primary)
    }
}

/// The prompt-prefix cache key: stable per workspace (never per conversation), and
/// not the workspace id itself.
pub fn cache_salt(workspace_id: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"luna/prompt-cache/v1\0");
    h.update(workspace_id.as_bytes());
    hex::encode(&h.finalize()[..12])
}

/// The JSON Schema of the final answer, sent with `json_schema` to the fallback.
pub fn turn_output_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(TurnOutput)).unwrap_or_default()
}

fn cost(usage: &wire::Usage, price: Option<Price>) -> Option<i64> {
    if let Some(dollars) = usage.cost.filter(|c| c.is_finite() && *c >= 0.0) {
        return Some((dollars * 1_000_000.0).round() as i64);
    }
    match (price, usage.prompt_tokens, usage.completion_tokens) {
        (Some(p), Some(i), Some(o)) => Some(p.cost_micro_usd(i, o)),
        _ => None,
    }
}

/// Reads a successful answer: server-sent events when the provider streams, one JSON
/// body otherwise. `Err(true)` is a timeout, `Err(false)` any other failure (a cut
/// stream, a broken chunk or body); both are retried like provider errors.
async fn read_answer(
    mut response: reqwest::Response,
    ctx: &StepContext,
) -> Result<(wire::ResponseMessage, Option<wire::Usage>), bool> {
    let streamed = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !streamed {
        let body = response
            .json::<ChatResponse>()
            .await
            .map_err(|e| e.is_timeout())?;
        let message = body
            .choices
            .into_iter()
            .next()
            .map(|c| c.message)
            .unwrap_or_default();
        return Ok((message, body.usage));
    }
    let mut assembler = stream::Assembler::new(ctx.thinking.as_ref().map(LiveSink::as_fn))
        .narrating(ctx.narration.as_ref().map(LiveSink::as_fn));
    while let Some(bytes) = response.chunk().await.map_err(|e| e.is_timeout())? {
        assembler.feed(&bytes).map_err(|e| {
            tracing::warn!(error = %e, "the model stream could not be read");
            false
        })?;
    }
    assembler.finish().map_err(|e| {
        tracing::warn!(error = %e, "the model stream could not be read");
        false
    })
}

/// True when a 400 says the output constraint cannot go with tools: llama.cpp server
/// ("Cannot use custom grammar constraints with tools."), proxies that name
/// `response_format` or `json_schema`. Other client errors (a bad key) are not.
async fn refuses_format(response: reqwest::Response) -> bool {
    let Ok(body) = response.text().await else {
        return false;
    };
    let body = body.to_lowercase();
    [
        "response_format",
        "response format",
        "json_schema",
        "json_object",
        "grammar",
    ]
    .iter()
    .any(|needle| body.contains(needle))
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

#[cfg(test)]
mod replay_tests;
#[cfg(test)]
mod tests;
