//! Direct database access around the server's run: extra Founder teams created before
//! it starts (one demo workspace has one hourly read ceiling), and the append time of
//! every event (`session_events.created_at`, ms) read afterwards to compute delivery
//! latency.

use std::collections::HashMap;

use anyhow::{Context, Result};
use luna_engine::accounts::Accounts;
use luna_engine::demo::{seed_if_empty, DEMO_PASSWORD};
use luna_engine::Store;
use luna_protocol::account::{Plan, Role};
use sqlx::Row;

/// The demo member who runs the seed scene in the demo workspace.
pub const DEMO_MEMBER: &str = "ventas@demo.luna.mx";

/// Seeds the demo and `teams` more Founder workspaces through the engine's account
/// service (the server has no sign-up route), with `people` logins in every workspace
/// (the server caps the websockets one person holds, so many sockets need many
/// people). Returns the logins: the demo member first, then `carga-N@load.luna.test`
/// (a team's owner) and `carga-N-K@load.luna.test` (its extra members; N = 0 is the
/// demo workspace).
pub async fn seed_teams(url: &str, teams: usize, people: usize) -> Result<Vec<String>> {
    let store = Store::open(url).await.context("opening the database")?;
    let accounts = Accounts::new(store);
    seed_if_empty(&accounts).await.context("seeding the demo")?;
    let mut logins = vec![DEMO_MEMBER.to_owned()];
    let demo_workspace = accounts
        .caller_for_email(DEMO_MEMBER)
        .await?
        .context("the demo member has a workspace")?
        .workspace_id;
    add_members(&accounts, &demo_workspace, 0, people, &mut logins).await?;
    for n in 1..=teams {
        let email = format!("carga-{n}@load.luna.test");
        let workspace = accounts
            .create_workspace(&format!("Equipo de carga {n}"), Plan::Founder)
            .await?;
        let user = accounts
            .create_user(&email, &format!("Carga {n}"), DEMO_PASSWORD)
            .await?;
        accounts.add_member(&workspace, &user, Role::Owner).await?;
        logins.push(email);
        add_members(&accounts, &workspace, n, people, &mut logins).await?;
    }
    Ok(logins)
}

/// Adds members `carga-N-2…people` to a workspace that has one login already.
async fn add_members(
    accounts: &Accounts,
    workspace: &str,
    n: usize,
    people: usize,
    logins: &mut Vec<String>,
) -> Result<()> {
    for k in 2..=people {
        let email = format!("carga-{n}-{k}@load.luna.test");
        let user = accounts
            .create_user(&email, &format!("Carga {n}-{k}"), DEMO_PASSWORD)
            .await?;
        accounts.add_member(workspace, &user, Role::Member).await?;
        logins.push(email);
    }
    Ok(())
}

/// (session, seq) → the ms timestamp the server gave the event when it appended it.
pub async fn append_times(url: &str) -> Result<HashMap<(String, u64), i64>> {
    let store = Store::open(url).await.context("reopening the database")?;
    let rows = sqlx::query("select session_id, seq, created_at from session_events")
        .fetch_all(store.pool())
        .await
        .context("reading session_events")?;
    let mut out = HashMap::with_capacity(rows.len());
    for row in rows {
        let session: String = row.try_get("session_id")?;
        let seq: i64 = row.try_get("seq")?;
        let at: i64 = row.try_get("created_at")?;
        out.insert((session, seq as u64), at);
    }
    Ok(out)
}
