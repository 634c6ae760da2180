//! Accounts: users, workspaces, memberships, browser sessions, login throttling and
//! workspace API keys (`keys`). Every other module receives a `Caller` from here and
//! scopes its reads and writes to `caller.workspace_id`.

pub mod demo;
#[cfg(test)]
mod key_tests;
mod keys;
pub mod profile;
pub mod throttle;

#[cfg(test)]
mod tests;

pub use keys::{expiry_end_of_day, ApiKeyGrant, ApiKeySummary, KeySpec, NewApiKey};

use luna_protocol::account::{Me, Plan, Role};
use luna_protocol::error::ErrorCode;
use sqlx::Row;

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::{new_id, random_token, sha256_hex};
use crate::base::store::{Scope, Store};

/// How long a browser session lives without a new login.
pub const SESSION_TTL_MS: i64 = 14 * 24 * 3600 * 1000;
pub use crate::accounts::throttle::{ClientIp, MAX_FAILURES, MAX_IP_FAILURES, THROTTLE_WINDOW_MS};

/// The message for any failed login. It never says whether the email exists.
pub const BAD_CREDENTIALS_MESSAGE: &str = "El correo o la contraseña no son correctos.";

/// An authenticated caller, resolved from a session cookie or an API key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user_id: String,
    pub email: String,
    pub display_name: String,
    pub workspace_id: String,
    pub workspace_name: String,
    pub role: Role,
    pub plan: Plan,
    /// Set when the caller authenticated with an API key (MCP): what the key may do.
    pub api_key: Option<ApiKeyGrant>,
}

impl Caller {
    /// The id of the API key the caller authenticated with, if any.
    pub fn api_key_id(&self) -> Option<&str> {
        self.api_key.as_ref().map(|k| k.id.as_str())
    }

    pub fn me(&self) -> Me {
        Me {
            user_id: self.user_id.clone(),
            email: self.email.clone(),
            display_name: self.display_name.clone(),
            workspace_id: self.workspace_id.clone(),
            workspace_name: self.workspace_name.clone(),
            role: self.role,
            plan: self.plan,
        }
    }

    /// Fails with `FORBIDDEN` unless the caller is an owner or admin.
    pub fn require_admin(&self) -> EngineResult<()> {
        if self.role.can_administer() {
            Ok(())
        } else {
            Err(EngineError::forbidden(
                "Solo el dueño o un administrador del espacio de trabajo puede hacer esto.",
            ))
        }
    }
}

/// Hashes a password with argon2id (through the hashing gate, see `password`).
pub async fn hash_password(password: String) -> EngineResult<String> {
    crate::base::password::hash(password).await
}

fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

fn invalid(message: &str, hint: &str) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

/// Account operations over the store.
#[derive(Clone, Debug)]
pub struct Accounts {
    store: Store,
}

impl Accounts {
    pub fn new(store: Store) -> Self {
        Accounts { store }
    }

    pub async fn create_user(
        &self,
        email: &str,
        display_name: &str,
        password: &str,
    ) -> EngineResult<String> {
        let email = normalize_email(email);
        if !email.contains('@') || email.len() > 254 {
            return Err(invalid(
                "El correo no es válido.",
                "Escribe un correo como nombre@empresa.mx.",
            ));
        }
        if password.chars().count() < 8 {
            return Err(invalid(
                "La contraseña es demasiado corta.",
                "Usa al menos 8 caracteres.",
            ));
        }
        let id = new_id("usr");
        let hash = hash_password(password.to_owned()).await?;
        let res = sqlx::query(
            "insert into users (id, email, display_name, password_hash, created_at) values ($1, $2, $3, $4, $5)",
        )
        .bind(&id)
        .bind(&email)
        .bind(display_name.trim())
        .bind(hash)
        .bind(now_ms())
        .execute(self.store.pool())
        .await;
        match res {
            Ok(_) => Ok(id),
            Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Err(EngineError::typed(
                ErrorCode::Conflict,
                "Ya existe una cuenta con ese correo.",
                "Inicia sesión con ese correo o usa otro.",
            )),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn create_workspace(&self, name: &str, plan: Plan) -> EngineResult<String> {
        let id = new_id("ws");
        sqlx::query("insert into workspaces (id, name, plan, created_at) values ($1, $2, $3, $4)")
            .bind(&id)
            .bind(name.trim())
            .bind(plan.as_str())
            .bind(now_ms())
            .execute(self.store.pool())
            .await?;
        Ok(id)
    }

    pub async fn add_member(
        &self,
        workspace_id: &str,
        user_id: &str,
        role: Role,
    ) -> EngineResult<()> {
        sqlx::query(
            "insert into memberships (workspace_id, user_id, role, created_at) values ($1, $2, $3, $4)
             on conflict (workspace_id, user_id) do update set role = excluded.role",
        )
        .bind(workspace_id)
        .bind(user_id)
        .bind(role.as_str())
        .bind(now_ms())
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// Checks the credentials of a login from `client` and opens a new session (a fresh
    /// token on every login). Returns the cookie token and the caller. Wrong email and
    /// wrong password fail identically. The attempt is counted per (client, email) and
    /// per client before the password is checked (`login_throttle`): past the limits it
    /// is `TOO_MANY_ATTEMPTS` with a retry-after, whatever the password.
    pub async fn login(
        &self,
        email: &str,
        password: &str,
        client: ClientIp,
    ) -> EngineResult<(String, Caller)> {
        let email = normalize_email(email);
        let now = now_ms();
        let pool = self.store.pool();

        let claim = crate::accounts::throttle::claim(&self.store, client, &email, now).await?;
        let checked = async {
            let row = sqlx::query("select id, password_hash from users where email = $1")
                .bind(&email)
                .fetch_optional(pool)
                .await?;
            let (user_id, hash) = match row {
                Some(r) => (
                    Some(r.get::<String, _>("id")),
                    Some(r.get::<String, _>("password_hash")),
                ),
                None => (None, None),
            };
            let ok = crate::base::password::verify(password.to_owned(), hash).await?;
            EngineResult::Ok(user_id.filter(|_| ok))
        }
        .await;
        let user_id = match checked {
            Ok(Some(id)) => id,
            // A failed password keeps its claimed slot.
            Ok(None) => {
                return Err(EngineError::typed(
                    ErrorCode::InvalidCredentials,
                    BAD_CREDENTIALS_MESSAGE,
                    "Revisa el correo y la contraseña e intenta de nuevo.",
                ))
            }
            // Not checked (the hashing gate was busy, or a failure of ours): not a failure.
            Err(e) => {
                claim.released(&self.store).await?;
                return Err(e);
            }
        };
        claim.succeeded(&self.store).await?;

        let workspace_id: Option<String> = sqlx::query_scalar(
            "select workspace_id from memberships where user_id = $1 order by created_at, workspace_id limit 1",
        )
        .bind(&user_id)
        .fetch_optional(pool)
        .await?;
        let Some(workspace_id) = workspace_id else {
            return Err(EngineError::forbidden(
                "Tu cuenta no pertenece a ningún espacio de trabajo.",
            ));
        };

        let token = random_token(32);
        let mut tx = pool.begin().await?;
        sqlx::query("delete from auth_sessions where expires_at < $1")
            .bind(now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "insert into auth_sessions (token_hash, user_id, workspace_id, created_at, expires_at) values ($1, $2, $3, $4, $5)",
        )
        .bind(sha256_hex(&token))
        .bind(&user_id)
        .bind(&workspace_id)
        .bind(now)
        .bind(now + SESSION_TTL_MS)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;

        let caller = self
            .caller_for(&user_id, &workspace_id)
            .await?
            .ok_or_else(|| EngineError::Internal("membership vanished during login".into()))?;
        Ok((token, caller))
    }

    /// Resolves a session cookie token to its caller, or `None` if unknown or expired.
    pub async fn session_caller(&self, token: &str) -> EngineResult<Option<Caller>> {
        let row = sqlx::query("select user_id, workspace_id from auth_sessions where token_hash = $1 and expires_at > $2")
            .bind(sha256_hex(token))
            .bind(now_ms())
            .fetch_optional(self.store.pool())
            .await?;
        match row {
            Some(r) => {
                self.caller_for(
                    &r.get::<String, _>("user_id"),
                    &r.get::<String, _>("workspace_id"),
                )
                .await
            }
            None => Ok(None),
        }
    }

    pub async fn logout(&self, token: &str) -> EngineResult<()> {
        sqlx::query("delete from auth_sessions where token_hash = $1")
            .bind(sha256_hex(token))
            .execute(self.store.pool())
            .await?;
        Ok(())
    }

    /// The caller for a member of a workspace (background work acting for a person).
    pub async fn caller_for(
        &self,
        user_id: &str,
        workspace_id: &str,
    ) -> EngineResult<Option<Caller>> {
        let row = sqlx::query(
            "select u.id, u.email, u.display_name, w.id as ws_id, w.name as ws_name, w.plan, m.role
               from memberships m
               join users u on u.id = m.user_id
               join workspaces w on w.id = m.workspace_id
              where m.user_id = $1 and m.workspace_id = $2",
        )
        .bind(user_id)
        .bind(workspace_id)
        .fetch_optional(self.store.pool())
        .await?;
        row.map(|r| caller_from_row(&r, None)).transpose()
    }

    /// The caller for a user's first workspace, looked up by email (operator CLI).
    pub async fn caller_for_email(&self, email: &str) -> EngineResult<Option<Caller>> {
        let user_id: Option<String> = sqlx::query_scalar("select id from users where email = $1")
            .bind(normalize_email(email))
            .fetch_optional(self.store.pool())
            .await?;
        let Some(user_id) = user_id else {
            return Ok(None);
        };
        let workspace_id: Option<String> = sqlx::query_scalar(
            "select workspace_id from memberships where user_id = $1 order by created_at, workspace_id limit 1",
        )
        .bind(&user_id)
        .fetch_optional(self.store.pool())
        .await?;
        match workspace_id {
            Some(ws) => self.caller_for(&user_id, &ws).await,
            None => Ok(None),
        }
    }

    /// Workspaces the user belongs to, as (id, name, plan, role).
    pub async fn workspaces_of(
        &self,
        user_id: &str,
    ) -> EngineResult<Vec<(String, String, Plan, Role)>> {
        let rows = sqlx::query(
            "select w.id, w.name, w.plan, m.role from memberships m join workspaces w on w.id = m.workspace_id
              where m.user_id = $1 order by m.created_at, w.id",
        )
        .bind(user_id)
        .fetch_all(self.store.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let plan = Plan::parse(r.get::<&str, _>("plan"))
                    .ok_or_else(|| EngineError::Internal("bad plan".into()))?;
                let role = Role::parse(r.get::<&str, _>("role"))
                    .ok_or_else(|| EngineError::Internal("bad role".into()))?;
                Ok((r.get("id"), r.get("name"), plan, role))
            })
            .collect()
    }

    /// Members of the caller's workspace, owners first.
    pub async fn members(&self, caller: &Caller) -> EngineResult<Vec<Member>> {
        let rows = sqlx::query(
            "select u.id, u.display_name, u.email, m.role from memberships m join users u on u.id = m.user_id
              where m.workspace_id = $1
              order by case m.role when 'owner' then 0 when 'admin' then 1 else 2 end, u.display_name",
        )
        .bind(&caller.workspace_id)
        .fetch_all(self.store.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let role = Role::parse(r.get::<&str, _>("role"))
                    .ok_or_else(|| EngineError::Internal("bad role".into()))?;
                Ok(Member {
                    user_id: r.get("id"),
                    display_name: r.get("display_name"),
                    email: r.get("email"),
                    role,
                })
            })
            .collect()
    }

    /// Makes a member an admin or an admin a member. Owners and admins only; the owner's
    /// role and one's own role do not change here; audited in the same transaction.
    pub async fn set_role(&self, caller: &Caller, user_id: &str, role: Role) -> EngineResult<()> {
        caller.require_admin()?;
        if role == Role::Owner {
            return Err(EngineError::typed(
                ErrorCode::InvalidArgument,
                "La propiedad del espacio de trabajo no se transfiere desde aquí.",
                "Elige miembro o administrador.",
            ));
        }
        if user_id == caller.user_id {
            return Err(EngineError::forbidden("No puedes cambiar tu propio rol."));
        }
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let current: Option<String> = sqlx::query_scalar(
            "select role from memberships where workspace_id = $1 and user_id = $2",
        )
        .bind(&caller.workspace_id)
        .bind(user_id)
        .fetch_optional(&mut *tx)
        .await?;
        match current.as_deref() {
            None => return Err(EngineError::not_found("a esa persona")),
            Some("owner") => {
                return Err(EngineError::forbidden(
                    "El rol del dueño no se puede cambiar.",
                ))
            }
            Some(r) if r == role.as_str() => return Ok(()),
            Some(_) => {}
        }
        sqlx::query("update memberships set role = $1 where workspace_id = $2 and user_id = $3")
            .bind(role.as_str())
            .bind(&caller.workspace_id)
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        audit_in(
            &mut tx,
            caller,
            "member.role",
            &serde_json::json!({"user": user_id, "from": current, "to": role.as_str()}),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Appends an audit entry for the caller's workspace.
    pub async fn audit(
        &self,
        caller: &Caller,
        action: &str,
        detail: serde_json::Value,
    ) -> EngineResult<()> {
        let mut conn = self.store.pool().acquire().await?;
        audit_in(&mut conn, caller, action, &detail).await
    }

    pub async fn user_count(&self) -> EngineResult<i64> {
        Ok(sqlx::query_scalar("select count(*) from users")
            .fetch_one(self.store.pool())
            .await?)
    }
}

/// Appends an audit entry inside the caller's transaction, so a change and its audit
/// line commit together. The one `audit_log` insert.
pub async fn audit_in(
    conn: &mut crate::base::store::Conn,
    caller: &Caller,
    action: &str,
    detail: &serde_json::Value,
) -> EngineResult<()> {
    sqlx::query(
        "insert into audit_log (workspace_id, actor_id, action, detail, created_at) values ($1, $2, $3, $4, $5)",
    )
    .bind(&caller.workspace_id)
    .bind(&caller.user_id)
    .bind(action)
    .bind(detail.to_string())
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

/// A member of a workspace as the settings page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub user_id: String,
    pub display_name: String,
    pub email: String,
    pub role: Role,
}

fn caller_from_row(
    r: &crate::base::store::DbRow,
    api_key: Option<ApiKeyGrant>,
) -> EngineResult<Caller> {
    Ok(Caller {
        user_id: r.get("id"),
        email: r.get("email"),
        display_name: r.get("display_name"),
        workspace_id: r.get("ws_id"),
        workspace_name: r.get("ws_name"),
        role: Role::parse(r.get::<&str, _>("role"))
            .ok_or_else(|| EngineError::Internal("bad role".into()))?,
        plan: Plan::parse(r.get::<&str, _>("plan"))
            .ok_or_else(|| EngineError::Internal("bad plan".into()))?,
        api_key,
    })
}
