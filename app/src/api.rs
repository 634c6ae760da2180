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

/// Creates an MCP API key and returns its secret, shown once.
#[server(prefix = "/api", endpoint = "create_api_key", output = crate::codec::Answer)]
pub async fn create_api_key(name: String) -> Result<String, AppError> {
    let caller = caller()?;
    let key = engine()?
        .accounts
        .create_api_key(&caller, &name)
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
            "api_keys": [{"id": "k", "name": "MCP", "prefix": "luna_ab", "revoked": false}]
        }));
        assert!(compared > 50);
        check::<Result<SettingsView, crate::error::AppError>>(&json!({"Err": {"Api": {
            "code": "FORBIDDEN", "message": "m", "hint": "h"}}}));
    }
}
