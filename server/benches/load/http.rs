//! The HTTP calls the browser makes, as the load generator makes them: server
//! functions under `/api/` with form bodies and the session cookie. Every call that
//! does not answer 200 is an error with its status and body.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use luna_protocol::session::TurnAck;

/// One signed-in person: a cookie on a shared connection pool.
#[derive(Clone)]
pub struct Api {
    client: reqwest::Client,
    base: String,
    cookie: String,
}

/// A client for `base` with no cookie yet (log in first).
pub fn client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(64)
        .build()
        .context("an HTTP client")
}

impl Api {
    /// `POST /api/login`; keeps the `luna_session` cookie.
    pub async fn login(
        client: &reqwest::Client,
        base: &str,
        email: &str,
        password: &str,
    ) -> Result<Api> {
        let response = client
            .post(format!("{base}/api/login"))
            .form(&[("email", email), ("password", password)])
            .send()
            .await
            .with_context(|| format!("login of {email}"))?;
        let status = response.status();
        let cookie = response
            .headers()
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.starts_with("luna_session="))
            .and_then(|v| v.split(';').next())
            .map(str::to_owned);
        let body = response.text().await.unwrap_or_default();
        match cookie {
            Some(cookie) if status.is_success() => Ok(Api {
                client: client.clone(),
                base: base.to_owned(),
                cookie,
            }),
            _ => bail!("login of {email} answered {status}: {body}"),
        }
    }

    /// The cookie header value (`luna_session=…`), for the websocket handshake.
    pub fn cookie(&self) -> &str {
        &self.cookie
    }

    async fn call(&self, endpoint: &str, form: &[(&str, &str)]) -> Result<String> {
        let response = self
            .client
            .post(format!("{}/api/{endpoint}", self.base))
            .header(reqwest::header::COOKIE, &self.cookie)
            .form(form)
            .send()
            .await
            .with_context(|| format!("POST /api/{endpoint}"))?;
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        if !status.is_success() {
            bail!("POST /api/{endpoint} answered {status}: {body}");
        }
        Ok(body)
    }

    /// `create_session`: a new work session's id.
    pub async fn create_session(&self) -> Result<String> {
        let body = self.call("create_session", &[]).await?;
        serde_json::from_str(&body).with_context(|| format!("create_session body {body}"))
    }

    /// `send_message` with an idempotency key: the turn it started.
    pub async fn send_message(&self, session: &str, text: &str, key: &str) -> Result<TurnAck> {
        let form = [
            ("session_id", session),
            ("text", text),
            ("idempotency_key", key),
        ];
        let body = self.call("send_message", &form).await?;
        serde_json::from_str(&body).with_context(|| format!("send_message body {body}"))
    }

    /// `session_snapshot`: the session's newest seq as the server reports it.
    pub async fn last_seq(&self, session: &str) -> Result<u64> {
        let body = self
            .call("session_snapshot", &[("session_id", session)])
            .await?;
        let value: serde_json::Value =
            serde_json::from_str(&body).with_context(|| format!("snapshot body {body}"))?;
        value["seq"]
            .as_u64()
            .with_context(|| format!("a seq in the snapshot {body}"))
    }
}
