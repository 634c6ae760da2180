//! The demo workspace seeded on first start, so a newcomer can log in at once.

use luna_protocol::account::{Plan, Role};

use crate::accounts::Accounts;
use crate::error::EngineResult;

/// Password shared by every demo login. Printed at start-up; demo data only.
pub const DEMO_PASSWORD: &str = "luna-demo-2026";

/// (email, display name, workspace index, role)
pub const DEMO_USERS: &[(&str, &str, usize, Role)] = &[
    ("duena@demo.luna.mx", "Mariana Robles", 0, Role::Owner),
    ("admin@demo.luna.mx", "Jorge Castañeda", 0, Role::Admin),
    ("ventas@demo.luna.mx", "Lucía Hernández", 0, Role::Member),
    ("explorer@demo.luna.mx", "Tomás Ibarra", 1, Role::Owner),
];

pub const DEMO_WORKSPACES: &[(&str, Plan)] = &[
    ("Empaques del Bajío", Plan::Founder),
    ("Consultoría Ibarra", Plan::Explorer),
];

/// Seeds the demo accounts when the database has no users. Returns true if it seeded.
pub async fn seed_if_empty(accounts: &Accounts) -> EngineResult<bool> {
    if accounts.user_count().await? > 0 {
        return Ok(false);
    }
    let mut workspace_ids = Vec::new();
    for (name, plan) in DEMO_WORKSPACES {
        workspace_ids.push(accounts.create_workspace(name, *plan).await?);
    }
    for (email, name, ws, role) in DEMO_USERS {
        let user = accounts.create_user(email, name, DEMO_PASSWORD).await?;
        accounts
            .add_member(&workspace_ids[*ws], &user, *role)
            .await?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[tokio::test]
    async fn seeding_twice_creates_the_demo_logins_once() {
        let accounts = Accounts::new(Store::open_temp().await.unwrap());
        assert!(seed_if_empty(&accounts).await.unwrap());
        assert!(!seed_if_empty(&accounts).await.unwrap());
        assert_eq!(
            accounts.user_count().await.unwrap(),
            DEMO_USERS.len() as i64
        );
        let (_, member) = accounts
            .login("ventas@demo.luna.mx", DEMO_PASSWORD)
            .await
            .unwrap();
        assert_eq!(member.role, Role::Member);
        assert_eq!(member.plan, Plan::Founder);
        let (_, explorer) = accounts
            .login("explorer@demo.luna.mx", DEMO_PASSWORD)
            .await
            .unwrap();
        assert_eq!(explorer.plan, Plan::Explorer);
    }
}
