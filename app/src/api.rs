//! Server functions for accounts and settings. Each takes the engine and the caller
//! from context, calls the engine, and maps the error.

use leptos::prelude::*;
use luna_protocol::account::{Me, Role};
use serde::{Deserialize, Serialize};

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// The signed-in person. 401 without a session.
#[server(prefix = "/api", endpoint = "whoami", output = crate::codec::Answer)]
pub async fn whoami() -> Result<Me, AppError> {
    Ok(caller()?.me())
}

/// Checks the credentials, opens a fresh session (new cookie) and goes to the chat.
#[server(prefix = "/api", endpoint = "login", output = crate::codec::Answer)]
pub async fn login(email: String, password: String) -> Result<(), AppError> {
    use crate::server::{client_ip, session_cookie, CookiePolicy};
    use axum::http::{header::SET_COOKIE, HeaderValue};

    let engine = engine()?;
    let (token, caller) = engine
        .accounts
        .login(&email, &password, client_ip())
        .await
        .map_err(fail)?;
    let policy = use_context::<CookiePolicy>().unwrap_or_default();
    if let (Some(options), Ok(value)) = (
        use_context::<leptos_axum::ResponseOptions>(),
        HeaderValue::from_str(&session_cookie(Some(&token), policy)),
    ) {
        options.append_header(SET_COOKIE, value);
    }
    tracing::info!(user = %caller.user_id, workspace = %caller.workspace_id, "login");
    leptos_axum::redirect("/");
    Ok(())
}

/// Ends the session and clears the cookie.
#[server(prefix = "/api", endpoint = "logout", output = crate::codec::Answer)]
pub async fn logout() -> Result<(), AppError> {
    use crate::server::{session_cookie, session_token, CookiePolicy};
    use axum::http::{header::SET_COOKIE, HeaderValue};

    let engine = engine()?;
    if let Some(token) = session_token() {
        engine.accounts.logout(&token).await.map_err(fail)?;
    }
    let policy = use_context::<CookiePolicy>().unwrap_or_default();
    if let (Some(options), Ok(value)) = (
        use_context::<leptos_axum::ResponseOptions>(),
        HeaderValue::from_str(&session_cookie(None, policy)),
    ) {
        options.append_header(SET_COOKIE, value);
    }
    leptos_axum::redirect("/login");
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct MemberView {
    pub user_id: String,
    /// The signed-in person (their own role is not editable).
    pub you: bool,
    pub display_name: String,
    pub email: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct ApiKeyView {
    pub id: String,
    pub name: String,
    pub prefix: String,
    pub revoked: bool,
    /// What the key may do beyond reading, as Spanish labels; empty: read-only.
    pub scopes: Vec<String>,
    /// Credits per calendar month; `None`: no cap.
    pub credit_budget: Option<i64>,
    /// Credits the key spent this month.
    pub spent: i64,
    /// Unix ms the key stops working; `None`: never.
    pub expires_at: Option<i64>,
    pub expired: bool,
    pub last_used_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct SettingsView {
    pub workspace_name: String,
    pub members: Vec<MemberView>,
    pub api_keys: Vec<ApiKeyView>,
}

/// Everything the settings page shows. Owners and admins only (403 otherwise).
#[server(prefix = "/api", endpoint = "settings", output = crate::codec::Answer)]
pub async fn settings() -> Result<SettingsView, AppError> {
    let caller = caller()?;
    let engine = engine()?;
    caller.require_admin().map_err(fail)?;
    let members = engine.accounts.members(&caller).await.map_err(fail)?;
    let keys = engine.accounts.list_api_keys(&caller).await.map_err(fail)?;
    let now = luna_engine::clock::now_ms();
    Ok(SettingsView {
        workspace_name: caller.workspace_name.clone(),
        members: members
            .into_iter()
            .map(|m| MemberView {
                you: m.user_id == caller.user_id,
                user_id: m.user_id,
                display_name: m.display_name,
                email: m.email,
                role: m.role,
            })
            .collect(),
        api_keys: keys
            .into_iter()
            .map(|k| ApiKeyView {
                id: k.id,
                name: k.name,
                prefix: k.prefix,
                revoked: k.revoked_at.is_some(),
                scopes: k
                    .scopes
                    .iter()
                    .map(|s| format!("{} ({})", s.label(), s.as_str()))
                    .collect(),
                credit_budget: k.credit_budget,
                spent: k.spent_this_month,
                expired: k.expires_at.is_some_and(|at| at <= now),
                expires_at: k.expires_at,
                last_used_at: k.last_used_at,
            })
            .collect(),
    })
}

/// Makes a member an admin or an admin a member (owners and admins; audited).
#[server(prefix = "/api", endpoint = "set_member_role", output = crate::codec::Answer)]
pub async fn set_member_role(user_id: String, role: Role) -> Result<(), AppError> {
    let caller = caller()?;
    engine()?
        .accounts
        .set_role(&caller, &user_id, role)
        .await
        .map_err(fail)
}

/// Creates an MCP API key and returns its secret, shown once. Read-only unless a
/// scope's checkbox is sent (any value); `budget` (credits per month) and `expires`
/// (`YYYY-MM-DD`) are optional.
#[allow(clippy::too_many_arguments)]
#[server(prefix = "/api", endpoint = "create_api_key", output = crate::codec::Answer)]
pub async fn create_api_key(
    name: String,
    contacts_reveal: Option<String>,
    crm_write: Option<String>,
    knowledge_write: Option<String>,
    knowledge_delete: Option<String>,
    budget: Option<String>,
    expires: Option<String>,
) -> Result<String, AppError> {
    use luna_engine::accounts::KeySpec;
    use luna_protocol::account::ApiScope;

    let caller = caller()?;
    let scopes = [
        (contacts_reveal, ApiScope::ContactsReveal),
        (crm_write, ApiScope::CrmWrite),
        (knowledge_write, ApiScope::KnowledgeWrite),
        (knowledge_delete, ApiScope::KnowledgeDelete),
    ]
    .into_iter()
    .filter_map(|(sent, scope)| sent.map(|_| scope))
    .collect();
    let spec =
        KeySpec::from_text(&name, scopes, budget.as_deref(), expires.as_deref()).map_err(fail)?;
    let key = engine()?
        .accounts
        .create_api_key(&caller, &spec)
        .await
        .map_err(fail)?;
    Ok(key.secret)
}

#[server(prefix = "/api", endpoint = "revoke_api_key", output = crate::codec::Answer)]
pub async fn revoke_api_key(id: String) -> Result<(), AppError> {
    let caller = caller()?;
    engine()?
        .accounts
        .revoke_api_key(&caller, &id)
        .await
        .map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_protocol::json::conformance::check;
    use serde_json::json;

    /// The settings page reads its answer in the browser with `FromJson`: it must read
    /// what serde reads.
    #[test]
    fn settings_read_in_the_browser_as_serde_reads_them() {
        let compared = check::<SettingsView>(&json!({
            "workspace_name": "Empaques",
            "members": [{"user_id": "u", "you": true, "display_name": "Ana",
                         "email": "a@b.mx", "role": "admin"}],
            "api_keys": [{"id": "k", "name": "MCP", "prefix": "luna_ab", "revoked": false,
                          "scopes": ["revelar contactos (contacts:reveal)"], "credit_budget": 100,
                          "spent": 3, "expires_at": 1_798_783_200_000_i64, "expired": false,
                          "last_used_at": null}]
        }));
        assert!(compared > 50);
        check::<Result<SettingsView, crate::error::AppError>>(&json!({"Err": {"Api": {
            "code": "FORBIDDEN", "message": "m", "hint": "h"}}}));
    }
}
