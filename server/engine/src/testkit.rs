//! Helpers for tests in this crate and in the server: a fresh engine on a temporary
//! database and a caller in a new workspace. Not used by production code.

use luna_protocol::account::{Plan, Role};

use crate::accounts::Caller;
use crate::base::error::EngineResult;
use crate::base::store::Store;
use crate::Engine;

/// A fresh engine on a temporary database. Its sequences send at any hour
/// (`Window::always`), so tests pass whenever they run;
/// the sending-window tests set a workspace's window themselves.
pub async fn engine() -> EngineResult<Engine> {
    let mut engine = Engine::from_store(Store::open_temp().await?);
    engine.sequences.default_window = crate::sequences::window::Window::always();
    Ok(engine)
}

/// Creates a workspace with one member and returns that member as a caller.
pub async fn caller(engine: &Engine, plan: Plan, role: Role) -> EngineResult<Caller> {
    let ws_name = "Empaques del Bajío";
    let ws = engine.accounts.create_workspace(ws_name, plan).await?;
    let email = format!("{}@example.mx", uuid::Uuid::new_v4().simple());
    let user = engine
        .accounts
        .create_user(&email, "Ana Prueba", "secreto-123")
        .await?;
    engine.accounts.add_member(&ws, &user, role).await?;
    Ok(Caller {
        user_id: user,
        email,
        display_name: "Ana Prueba".into(),
        workspace_id: ws,
        workspace_name: ws_name.into(),
        role,
        plan,
        api_key: None,
    })
}

/// An API key grant with these scopes and no budget, for policy tests that do not
/// need a stored key (use `Accounts::create_api_key` when the key must exist).
pub fn grant(scopes: &[luna_protocol::account::ApiScope]) -> crate::accounts::ApiKeyGrant {
    crate::accounts::ApiKeyGrant {
        id: "key_prueba".into(),
        scopes: scopes.to_vec(),
        credit_budget: None,
    }
}

/// A Proveedor in Jalisco whose id is its RFC, for tests that need people or records.
pub async fn insert_supplier(engine: &Engine, rfc: &str, name: &str) -> EngineResult<()> {
    sqlx::query(
        "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, source, created_at)
         values ($1, $2, 1, $3, 14, 'test', 0)",
    )
    .bind(rfc)
    .bind(rfc)
    .bind(name)
    .execute(engine.store.pool())
    .await?;
    Ok(())
}

/// Calls a tool through the one pipeline as `caller` on `surface`.
pub async fn call(
    engine: &Engine,
    caller: &Caller,
    name: &str,
    args: serde_json::Value,
    surface: crate::base::surface::Surface,
) -> Result<luna_protocol::tool::Envelope, luna_protocol::error::ErrorBody> {
    engine
        .call_tool(
            caller,
            crate::registry::ToolRequest::new(name, args, surface),
        )
        .await
        .outcome
}

/// Calls a tool over MCP and expects it to succeed (the panic names the call).
pub async fn ok(
    engine: &Engine,
    caller: &Caller,
    name: &str,
    args: serde_json::Value,
) -> luna_protocol::tool::Envelope {
    let surface = crate::base::surface::Surface::Mcp;
    match call(engine, caller, name, args.clone(), surface).await {
        Ok(env) => env,
        Err(e) => panic!("{name}({args}) failed: {e:?}"),
    }
}

/// Calls a tool over MCP and expects its typed error (the panic names the call).
pub async fn err(
    engine: &Engine,
    caller: &Caller,
    name: &str,
    args: serde_json::Value,
) -> luna_protocol::error::ErrorBody {
    let surface = crate::base::surface::Surface::Mcp;
    match call(engine, caller, name, args.clone(), surface).await {
        Ok(env) => panic!("{name}({args}) should fail, got {env:?}"),
        Err(e) => e,
    }
}

/// An engine on a fresh database and one caller in a new workspace: the start of most
/// tests. `call`, `ok` and `err` run tools as that caller.
#[derive(Clone)]
pub struct World {
    pub engine: Engine,
    pub caller: Caller,
}

impl World {
    pub async fn new(plan: Plan, role: Role) -> EngineResult<World> {
        let engine = engine().await?;
        let caller = caller(&engine, plan, role).await?;
        Ok(World { engine, caller })
    }

    pub async fn call(
        &self,
        name: &str,
        args: serde_json::Value,
        surface: crate::base::surface::Surface,
    ) -> Result<luna_protocol::tool::Envelope, luna_protocol::error::ErrorBody> {
        call(&self.engine, &self.caller, name, args, surface).await
    }

    pub async fn ok(&self, name: &str, args: serde_json::Value) -> luna_protocol::tool::Envelope {
        ok(&self.engine, &self.caller, name, args).await
    }

    pub async fn err(
        &self,
        name: &str,
        args: serde_json::Value,
    ) -> luna_protocol::error::ErrorBody {
        err(&self.engine, &self.caller, name, args).await
    }

    /// The caller's balance on `ledger` now. Panics when it cannot be read (tests only).
    pub async fn balance(&self, ledger: crate::billing::Ledger) -> crate::billing::Balance {
        self.engine
            .billing
            .balance(&self.caller, ledger)
            .await
            .expect("balance")
    }

    /// Calls a tool from the app (`Surface::Ui`), where proposals run at once.
    pub async fn ui(
        &self,
        name: &str,
        args: serde_json::Value,
    ) -> Result<luna_protocol::tool::Envelope, luna_protocol::error::ErrorBody> {
        self.call(name, args, crate::base::surface::Surface::Ui)
            .await
    }

    /// Another member of this world's workspace, named `name`, with `role`.
    pub async fn teammate(&self, role: Role, name: &str) -> EngineResult<Caller> {
        let email = format!("{}@example.mx", uuid::Uuid::new_v4().simple());
        let user = self
            .engine
            .accounts
            .create_user(&email, name, "secreto-123")
            .await?;
        self.engine
            .accounts
            .add_member(&self.caller.workspace_id, &user, role)
            .await?;
        Ok(Caller {
            user_id: user,
            email,
            display_name: name.into(),
            role,
            api_key: None,
            ..self.caller.clone()
        })
    }

    /// Creates an API key as this world's caller (an owner or an admin) and returns its
    /// id and the world as the key sees it (same engine and workspace).
    pub async fn with_key(&self, spec: &crate::accounts::KeySpec) -> EngineResult<(String, World)> {
        let key = self
            .engine
            .accounts
            .create_api_key(&self.caller, spec)
            .await?;
        let caller = self
            .engine
            .accounts
            .api_key_caller(&key.secret)
            .await?
            .ok_or_else(|| {
                crate::base::error::EngineError::internal("a new key did not authenticate")
            })?;
        Ok((
            key.id,
            World {
                engine: self.engine.clone(),
                caller,
            },
        ))
    }

    /// The only member of a new workspace on the same engine: a stranger to this one.
    pub async fn other_workspace(&self, plan: Plan, role: Role) -> EngineResult<Caller> {
        caller(&self.engine, plan, role).await
    }
}

/// A sequence audience of `caller`'s workspace: the suppliers `rfcs` (inserted here)
/// saved in a new collection, the first person of each revealed. Returns the audience
/// and the revealed addresses. Panics with the failing step (tests only).
pub async fn revealed_audience(
    engine: &Engine,
    caller: &Caller,
    rfcs: &[&str],
) -> (crate::sequences::Audience, Vec<String>) {
    for (i, rfc) in rfcs.iter().enumerate() {
        insert_supplier(engine, rfc, &format!("Empaques {i} SA de CV"))
            .await
            .expect("supplier");
    }
    let c = crate::crm::collections::create(
        engine.crm.store(),
        &caller.workspace_id,
        crate::crm::demo::prospeccion(),
    )
    .await
    .expect("collection");
    let col = format!("collection:{}", c.id);
    let refs: Vec<String> = rfcs.iter().map(|r| format!("company:{r}")).collect();
    call(
        engine,
        caller,
        "crm_save_companies",
        serde_json::json!({"collection_id": col, "source": refs, "conflict_policy": "skip"}),
        crate::base::surface::Surface::Ui,
    )
    .await
    .expect("saved");
    let mut handles = Vec::new();
    for r in rfcs {
        let people = engine
            .people
            .search(caller, &format!("company:{r}"))
            .await
            .expect("people");
        handles.push(people[0].card.handle.clone());
    }
    let q = engine.people.quote(caller, &handles).await.expect("quote");
    let revealed = engine
        .people
        .reveal(
            caller,
            &crate::people::RevealRequest {
                quote_id: q.id,
                confirm: true,
                max_credits: q.price,
                idempotency_key: crate::ids::random_token(8),
            },
            crate::people::RevealVia {
                surface: "ui",
                auto_policy: None,
                call_ref: None,
            },
        )
        .await
        .expect("reveal");
    let audience = crate::sequences::Audience {
        collection_id: col,
        record_ids: None,
        stage: None,
    };
    let emails = revealed
        .people
        .iter()
        .map(|p| p.email.to_lowercase())
        .collect();
    (audience, emails)
}

/// Drafts `steps` for `audience` and authorizes every step as `caller`.
pub async fn authorize_all(
    engine: &Engine,
    caller: &Caller,
    audience: &crate::sequences::Audience,
    steps: &[crate::sequences::Step],
) -> crate::sequences::Sequence {
    let s = crate::sequences::draft(engine, caller, None, "Prueba", audience, steps)
        .await
        .expect("draft");
    let all: Vec<usize> = (0..steps.len()).collect();
    crate::sequences::authorize(engine, caller, &s.id, s.version, &all)
        .await
        .expect("authorize");
    s
}

/// [`revealed_audience`] then [`authorize_all`].
pub async fn authorized_sequence(
    engine: &Engine,
    caller: &Caller,
    rfcs: &[&str],
    steps: &[crate::sequences::Step],
) -> (crate::sequences::Sequence, Vec<String>) {
    let (audience, emails) = revealed_audience(engine, caller, rfcs).await;
    (
        authorize_all(engine, caller, &audience, steps).await,
        emails,
    )
}
