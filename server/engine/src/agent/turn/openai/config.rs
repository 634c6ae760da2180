//! What an operator configures for the OpenAI-compatible gateway: the endpoint, the
//! key (which never prints), the primary and fallback models with their prices, time
//! limits, retries and the monthly spend cap.

use std::time::Duration;

/// A provider key. Its `Debug` never shows the value; only the request header does.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    pub(super) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Price of a model in US dollars per million tokens (= millionths of a dollar per token).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Price {
    /// Parses `"0.14/0.28"` (input/output, dollars per million tokens).
    pub fn parse(text: &str) -> Option<Price> {
        let (i, o) = text.trim().split_once('/')?;
        let (input, output) = (i.trim().parse::<f64>().ok()?, o.trim().parse::<f64>().ok()?);
        (input.is_finite() && output.is_finite() && input >= 0.0 && output >= 0.0)
            .then_some(Price { input, output })
    }

    /// Cost in millionths of a dollar. Cached tokens are billed as regular input
    /// (an upper bound: providers charge them less).
    pub fn cost_micro_usd(&self, tokens_in: i64, tokens_out: i64) -> i64 {
        (tokens_in as f64 * self.input + tokens_out as f64 * self.output).round() as i64
    }
}

/// One model profile: its id at the provider and, optionally, its price.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub model: String,
    pub price: Option<Price>,
}

#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The OpenAI-compatible base URL, e.g. `https://api.deepseek.com/v1`;
    /// requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub primary: Profile,
    pub fallback: Option<Profile>,
    /// Longest wait for one HTTP attempt.
    pub timeout: Duration,
    /// HTTP attempts per route for provider errors and timeouts (first try included).
    pub attempts_per_route: u32,
    /// Wait before a retry (times the attempt number; a `Retry-After` up to
    /// `MAX_RETRY_AFTER` wins).
    pub retry_backoff: Duration,
    /// Monthly model spend per workspace, in millionths of a dollar; `None`: no cap.
    pub monthly_spend_cap_micro_usd: Option<i64>,
    /// Ask for server-sent events (`stream: true`); a provider that answers with one
    /// JSON body anyway is read as such.
    pub stream: bool,
}

impl GatewayConfig {
    /// Defaults for everything but the endpoint and the models.
    pub fn new(base_url: impl Into<String>, primary: impl Into<String>) -> Self {
        GatewayConfig {
            base_url: base_url.into(),
            api_key: None,
            primary: Profile {
                model: primary.into(),
                price: None,
            },
            fallback: None,
            timeout: Duration::from_secs(60),
            attempts_per_route: 2,
            retry_backoff: Duration::from_millis(500),
            monthly_spend_cap_micro_usd: None,
            stream: true,
        }
    }
}

/// Longest `Retry-After` honoured between two attempts; longer waits escalate instead.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(2);
