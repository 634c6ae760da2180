//! Workspace API keys (MCP): created by an owner or admin with scopes (read-only by
//! default), an optional monthly credit budget and an optional expiry; stored only as
//! a SHA-256 hash. A bearer secret resolves to a `Caller` carrying an `ApiKeyGrant`,
//! which the tool pipeline checks (`registry::policy`, `billing::key_budget`). An
//! expired or revoked key resolves to nothing. `last_used_at` is written at most once a
//! minute per key.

use luna_protocol::account::ApiScope;
use sqlx::Row;

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::{new_id, random_token, sha256_hex};

use super::{caller_from_row, invalid, Accounts, Caller};

/// How often `last_used_at` is written for one key, at most.
const LAST_USED_EVERY_MS: i64 = 60_000;

/// What an API key may do, carried by the caller it authenticates as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyGrant {
    pub id: String,
    /// Beyond reading; empty for a read-only key.
    pub scopes: Vec<ApiScope>,
    /// Credits (of either ledger) the key may spend per calendar month (UTC).
    pub credit_budget: Option<i64>,
}

impl ApiKeyGrant {
    pub fn allows(&self, scope: ApiScope) -> bool {
        self.scopes.contains(&scope)
    }
}

/// What a new key may do. `KeySpec::read_only(name)` is the safe default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    pub name: String,
    pub scopes: Vec<ApiScope>,
    pub credit_budget: Option<i64>,
    /// Unix ms after which the key authenticates as nothing.
    pub expires_at: Option<i64>,
}

impl KeySpec {
    pub fn read_only(name: impl Into<String>) -> Self {
        KeySpec {
            name: name.into(),
            scopes: Vec::new(),
            credit_budget: None,
            expires_at: None,
        }
    }

    pub fn with_scopes(mut self, scopes: &[ApiScope]) -> Self {
        self.scopes = scopes.to_vec();
        self
    }

    /// A key from text as a form or the CLI sends it: an empty budget or date means
    /// none; the budget is whole credits per month, the date `YYYY-MM-DD` (the key
    /// works through that day).
    pub fn from_text(
        name: &str,
        scopes: Vec<ApiScope>,
        budget: Option<&str>,
        expires: Option<&str>,
    ) -> EngineResult<Self> {
        let budget = match budget.map(str::trim).filter(|b| !b.is_empty()) {
            None => None,
            Some(b) => Some(b.parse::<i64>().map_err(|_| {
                invalid(
                    "El tope de créditos debe ser un número entero.",
                    "Escribe cuántos créditos al mes puede gastar la llave, o déjalo vacío.",
                )
            })?),
        };
        let expires_at = match expires.map(str::trim).filter(|d| !d.is_empty()) {
            None => None,
            Some(d) => Some(expiry_end_of_day(d)?),
        };
        Ok(KeySpec {
            name: name.to_owned(),
            scopes,
            credit_budget: budget,
            expires_at,
        })
    }
}

/// A freshly created API key. `secret` is shown once and never stored.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub id: String,
    pub prefix: String,
    pub secret: String,
}

/// A key as Ajustes lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeySummary {
    pub id: String,
    pub name: String,
    pub prefix: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub scopes: Vec<ApiScope>,
    pub credit_budget: Option<i64>,
    /// Credits spent by the key in the current calendar month.
    pub spent_this_month: i64,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
}

/// The first instant after the given day (`YYYY-MM-DD`) ends in central Mexico
/// (UTC−6, no daylight saving since 2022): a key that "vence el 31 dic" works all that day.
pub fn expiry_end_of_day(date: &str) -> EngineResult<i64> {
    let bad = || {
        invalid(
            "La fecha de vencimiento no es válida.",
            "Usa el formato AAAA-MM-DD, por ejemplo 2026-12-31.",
        )
    };
    let day = chrono::NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d").map_err(|_| bad())?;
    let next = day.succ_opt().ok_or_else(bad)?;
    let at = next.and_hms_opt(6, 0, 0).ok_or_else(bad)?;
    Ok(at.and_utc().timestamp_millis())
}

fn scopes_text(scopes: &[ApiScope]) -> String {
    let mut names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(" ")
}

/// Stored names back to scopes; an unknown name (never written) grants nothing.
fn parse_scopes(text: &str) -> Vec<ApiScope> {
    text.split_whitespace()
        .filter_map(ApiScope::parse)
        .collect()
}

impl Accounts {
    /// Creates an API key for the caller's workspace (owner/admin only, never through
    /// another key). Read-only unless `spec.scopes` says otherwise.
    pub async fn create_api_key(&self, caller: &Caller, spec: &KeySpec) -> EngineResult<NewApiKey> {
        caller.require_admin()?;
        if caller.api_key.is_some() {
            return Err(EngineError::forbidden(
                "Una llave de API no puede crear otras llaves.",
            ));
        }
        let name = spec.name.trim();
        if name.is_empty() || name.chars().count() > 80 {
            return Err(invalid(
                "El nombre de la llave no es válido.",
                "Usa un nombre de 1 a 80 caracteres que diga quién la usará.",
            ));
        }
        if spec.credit_budget.is_some_and(|b| b < 0) {
            return Err(invalid(
                "El tope de créditos no puede ser negativo.",
                "Deja el tope vacío para no limitar la llave, o usa 0 o más créditos al mes.",
            ));
        }
        let now = now_ms();
        if spec.expires_at.is_some_and(|at| at <= now) {
            return Err(invalid(
                "La fecha de vencimiento ya pasó.",
                "Elige una fecha futura o deja la llave sin vencimiento.",
            ));
        }
        let id = new_id("key");
        let secret = format!("luna_{}", random_token(24));
        let prefix: String = secret.chars().take(10).collect();
        let scopes = scopes_text(&spec.scopes);
        sqlx::query(
            "insert into api_keys (id, workspace_id, name, prefix, key_hash, created_by, created_at,
                                   scopes, credit_budget, expires_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(&id)
        .bind(&caller.workspace_id)
        .bind(name)
        .bind(&prefix)
        .bind(sha256_hex(&secret))
        .bind(&caller.user_id)
        .bind(now)
        .bind(&scopes)
        .bind(spec.credit_budget)
        .bind(spec.expires_at)
        .execute(self.store.pool())
        .await?;
        self.audit(
            caller,
            "api_key.created",
            serde_json::json!({"key_id": id, "name": name, "scopes": scopes,
                               "credit_budget": spec.credit_budget, "expires_at": spec.expires_at}),
        )
        .await?;
        Ok(NewApiKey { id, prefix, secret })
    }

    pub async fn list_api_keys(&self, caller: &Caller) -> EngineResult<Vec<ApiKeySummary>> {
        caller.require_admin()?;
        let rows = sqlx::query(
            "select k.id, k.name, k.prefix, k.created_at, k.revoked_at, k.scopes, k.credit_budget,
                    k.expires_at, k.last_used_at, coalesce(s.spent, 0) as spent
               from api_keys k
               left join api_key_spend s on s.key_id = k.id and s.period = $2
              where k.workspace_id = $1 order by k.created_at desc",
        )
        .bind(&caller.workspace_id)
        .bind(crate::base::clock::month_period(now_ms()))
        .fetch_all(self.store.pool())
        .await?;
        Ok(rows
            .iter()
            .map(|r| ApiKeySummary {
                id: r.get("id"),
                name: r.get("name"),
                prefix: r.get("prefix"),
                created_at: r.get("created_at"),
                revoked_at: r.get("revoked_at"),
                scopes: parse_scopes(r.get::<&str, _>("scopes")),
                credit_budget: r.get("credit_budget"),
                spent_this_month: r.get("spent"),
                expires_at: r.get("expires_at"),
                last_used_at: r.get("last_used_at"),
            })
            .collect())
    }

    /// Revokes a key of the caller's workspace. A key of another workspace is `NOT_FOUND`.
    pub async fn revoke_api_key(&self, caller: &Caller, key_id: &str) -> EngineResult<()> {
        caller.require_admin()?;
        let done = sqlx::query(
            "update api_keys set revoked_at = coalesce(revoked_at, $1) where id = $2 and workspace_id = $3",
        )
        .bind(now_ms())
        .bind(key_id)
        .bind(&caller.workspace_id)
        .execute(self.store.pool())
        .await?;
        if done.rows_affected() == 0 {
            return Err(EngineError::not_found("esa llave"));
        }
        self.audit(
            caller,
            "api_key.revoked",
            serde_json::json!({"key_id": key_id}),
        )
        .await
    }

    /// Resolves a bearer API key to a caller acting as the key's creator in its
    /// workspace, limited by the key's grant. Unknown, revoked or expired: `None`.
    pub async fn api_key_caller(&self, secret: &str) -> EngineResult<Option<Caller>> {
        let now = now_ms();
        let row = sqlx::query(
            "select u.id, u.email, u.display_name, w.id as ws_id, w.name as ws_name, w.plan, m.role,
                    k.id as key_id, k.scopes, k.credit_budget, k.last_used_at
               from api_keys k
               join workspaces w on w.id = k.workspace_id
               join users u on u.id = k.created_by
               join memberships m on m.user_id = u.id and m.workspace_id = w.id
              where k.key_hash = $1 and k.revoked_at is null
                and (k.expires_at is null or k.expires_at > $2)",
        )
        .bind(sha256_hex(secret))
        .bind(now)
        .fetch_optional(self.store.pool())
        .await?;
        let Some(r) = row else {
            return Ok(None);
        };
        let grant = ApiKeyGrant {
            id: r.get("key_id"),
            scopes: parse_scopes(r.get::<&str, _>("scopes")),
            credit_budget: r.get("credit_budget"),
        };
        let last_used: Option<i64> = r.get("last_used_at");
        if last_used.is_none_or(|at| now - at >= LAST_USED_EVERY_MS) {
            // Guarded, so instances racing on one key write it once a minute at most.
            sqlx::query(
                "update api_keys set last_used_at = $1
                  where id = $2 and (last_used_at is null or last_used_at <= $3)",
            )
            .bind(now)
            .bind(&grant.id)
            .bind(now - LAST_USED_EVERY_MS)
            .execute(self.store.pool())
            .await?;
        }
        caller_from_row(&r, Some(grant)).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_protocol::error::ErrorCode;

    #[test]
    fn a_key_expiring_on_a_day_works_through_that_day_in_mexico() {
        // 2026-12-31 ends at 2027-01-01T06:00:00Z (00:00 in central Mexico).
        assert_eq!(expiry_end_of_day("2026-12-31").unwrap(), 1_798_783_200_000);
        assert_eq!(
            expiry_end_of_day("31/12/2026").unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn scopes_are_stored_sorted_once_and_unknown_names_grant_nothing() {
        let text = scopes_text(&[
            ApiScope::KnowledgeWrite,
            ApiScope::ContactsReveal,
            ApiScope::KnowledgeWrite,
        ]);
        assert_eq!(text, "contacts:reveal knowledge:write");
        assert_eq!(
            parse_scopes("contacts:reveal knowledge:merge"),
            vec![ApiScope::ContactsReveal]
        );
    }
}
