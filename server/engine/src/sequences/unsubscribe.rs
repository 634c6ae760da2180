//! Signed unsubscribe links: `{public_url}/baja/{TOKEN}`, in every sequence message
//! (a visible line and the RFC 8058 `List-Unsubscribe` headers).
//!
//! TOKEN is `{send_id}.{mac}`: the send's random id and an HMAC-SHA256 (base64url) over
//! it, its workspace and its recipient, keyed by a per-install secret created once in
//! `email_settings`. Nothing in it can be changed without the secret, and no address or
//! workspace travels in clear. An unknown or tampered token is a typed `NOT_FOUND`.
//! Confirming suppresses the address for the workspace (`unsubscribed`) and cancels its
//! pending steps in the same transaction; doing it again changes nothing.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use luna_protocol::error::ErrorCode;
use sha2::Sha256;

use super::suppressions::{self, Reason};
use super::Deps;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Scope;

type HmacSha256 = Hmac<Sha256>;

/// The path prefix of the unsubscribe page (the server routes it).
pub const PATH: &str = "/baja/";
/// Longest token accepted before any lookup.
pub const TOKEN_MAX: usize = 200;

/// The per-install signing key, created once per database (shared by every instance).
pub(crate) async fn key(engine: &impl Deps) -> EngineResult<Vec<u8>> {
    let cell = engine.sequences().unsubscribe_key.clone();
    let store = engine.store().clone();
    let key = cell
        .get_or_try_init(|| async move {
            let fresh = crate::base::ids::random_token(32);
            sqlx::query(
                "insert into email_settings (key, value) values ('unsubscribe_secret', $1)
                 on conflict do nothing",
            )
            .bind(&fresh)
            .execute(store.pool())
            .await?;
            let value: String = sqlx::query_scalar(
                "select value from email_settings where key = 'unsubscribe_secret'",
            )
            .fetch_one(store.pool())
            .await?;
            Ok::<_, EngineError>(value.into_bytes())
        })
        .await?;
    Ok(key.clone())
}

fn mac(key: &[u8], send_id: &str, workspace_id: &str, email: &str) -> EngineResult<HmacSha256> {
    let mut m = HmacSha256::new_from_slice(key)
        .map_err(|e| EngineError::Internal(format!("unsubscribe key: {e}")))?;
    for part in ["luna/baja/v1", send_id, workspace_id, email] {
        m.update(part.as_bytes());
        m.update(b"\0");
    }
    Ok(m)
}

/// The token of one send.
pub fn sign(key: &[u8], send_id: &str, workspace_id: &str, email: &str) -> EngineResult<String> {
    let tag = mac(key, send_id, workspace_id, &email.to_lowercase())?
        .finalize()
        .into_bytes();
    Ok(format!("{send_id}.{}", URL_SAFE_NO_PAD.encode(tag)))
}

/// The full link of one send.
pub async fn link(
    engine: &impl Deps,
    send_id: &str,
    workspace_id: &str,
    email: &str,
) -> EngineResult<String> {
    let key = key(engine).await?;
    Ok(format!(
        "{}{}{}",
        engine.sequences().public_url.trim_end_matches('/'),
        PATH,
        sign(&key, send_id, workspace_id, email)?
    ))
}

fn invalid_link() -> EngineError {
    EngineError::typed(
        ErrorCode::NotFound,
        "Este enlace para darte de baja no es válido.",
        "Usa el enlace completo del último correo que recibiste; si lo copiaste, revisa que esté entero.",
    )
}

/// Who a valid token names.
#[derive(sqlx::FromRow)]
struct Named {
    workspace_id: String,
    email: String,
    sender: String,
}

async fn resolve(engine: &impl Deps, token: &str) -> EngineResult<Named> {
    let token = token.trim();
    let Some((send_id, tag)) = token.split_once('.').filter(|_| token.len() <= TOKEN_MAX) else {
        return Err(invalid_link());
    };
    if send_id.is_empty()
        || !send_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(invalid_link());
    }
    let Ok(tag) = URL_SAFE_NO_PAD.decode(tag) else {
        return Err(invalid_link());
    };
    let row = {
        let mut conn = engine.store().pool().acquire().await?;
        sqlx::query_as::<_, Named>(
            "select s.workspace_id, s.email, q.sender from sequence_sends s
               join sequences q on q.id = s.sequence_id where s.id = $1",
        )
        .bind(send_id)
        .fetch_optional(&mut *conn)
        .await?
    };
    let Some(named) = row else {
        return Err(invalid_link());
    };
    let key = key(engine).await?;
    mac(
        &key,
        send_id,
        &named.workspace_id,
        &named.email.to_lowercase(),
    )?
    .verify_slice(&tag)
    .map_err(|_| invalid_link())?;
    Ok(named)
}

/// What the unsubscribe page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The address, partly hidden (`an***@empresa.mx`).
    pub email_masked: String,
    /// Who sends (the sequence's sender name).
    pub sender_name: String,
    /// Whether the address is already off the list of this workspace.
    pub done: bool,
}

fn mask(email: &str) -> String {
    match email.split_once('@') {
        Some((local, domain)) => {
            let keep: String = local.chars().take(2).collect();
            format!("{keep}***@{domain}")
        }
        None => "***".into(),
    }
}

fn page_of(n: &Named, done: bool) -> Page {
    Page {
        email_masked: mask(&n.email),
        sender_name: n
            .sender
            .split('<')
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned(),
        done,
    }
}

/// `GET /baja/{token}`: what the confirmation page says. Changes nothing.
pub async fn page(engine: &impl Deps, token: &str) -> EngineResult<Page> {
    let n = resolve(engine, token).await?;
    let mut conn = engine.store().pool().acquire().await?;
    let done = suppressions::find(&mut conn, &n.workspace_id, &n.email)
        .await?
        .is_some();
    Ok(page_of(&n, done))
}

/// `POST /baja/{token}` (the page's button or the one-click header): suppresses the
/// address for the workspace and cancels its pending steps, at once and idempotently.
pub async fn confirm(engine: &impl Deps, token: &str) -> EngineResult<Page> {
    let n = resolve(engine, token).await?;
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&n.workspace_id))
        .await?;
    let (added, cancelled) = suppressions::suppress_in(
        &mut tx,
        &n.workspace_id,
        &n.email,
        Reason::Unsubscribed,
        Some("enlace de baja"),
        None,
    )
    .await?;
    let touched = suppressions::sequences_of(&mut tx, &n.workspace_id, &n.email).await?;
    tx.commit().await?;
    if added || cancelled > 0 {
        tracing::info!(workspace = %n.workspace_id, cancelled, "recipient unsubscribed");
        suppressions::republish(engine, &n.workspace_id, &touched).await;
    }
    Ok(page_of(&n, true))
}
