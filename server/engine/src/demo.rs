//! The demo workspace seeded on first start, so a newcomer can log in at once, and
//! its team knowledge (Cerebro topics plus a review queue for the owner).

use luna_protocol::account::Role;

use crate::accounts::Accounts;
use crate::base::error::EngineResult;
use crate::knowledge::Knowledge;

/// Password shared by every demo login. Printed at start-up; demo data only.
pub const DEMO_PASSWORD: &str = "luna-demo-2026";

/// (email, display name, workspace index, role)
pub const DEMO_USERS: &[(&str, &str, usize, Role)] = &[
    ("duena@demo.luna.mx", "Mariana Robles", 0, Role::Owner),
    ("admin@demo.luna.mx", "Jorge Castañeda", 0, Role::Admin),
    ("ventas@demo.luna.mx", "Lucía Hernández", 0, Role::Member),
    ("explorer@demo.luna.mx", "Tomás Ibarra", 1, Role::Owner),
];

pub use crate::accounts::demo::DEMO_WORKSPACES;

/// What [`seed_all`] created on this start.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Seeded {
    /// The demo logins were created (print them).
    pub logins: bool,
    /// The demo Proveedores and Adjudicaciones were generated.
    pub market: bool,
}

/// Everything the embedded demo needs, idempotent: logins, market data, the team's
/// CRM pipeline and Cerebro. Runs under the store's start-up lock, so instances
/// started at the same moment on one database seed it once.
pub async fn seed_all(engine: &crate::Engine) -> EngineResult<Seeded> {
    let lock = engine.store.startup_lock().await?;
    let seeded = async {
        let logins = seed_if_empty(&engine.accounts).await?;
        if logins {
            open_demo_windows(&engine.store).await?;
        }
        let market = engine.market.ensure_demo().await?;
        crate::crm::demo::seed(&engine.store).await?;
        seed_knowledge(&engine.accounts, &engine.knowledge).await?;
        EngineResult::Ok(Seeded { logins, market })
    }
    .await;
    lock.release().await?;
    seeded
}

/// The demo workspaces send at any hour (`Window::always`), so the demo's sequence
/// goes out whenever someone tries it; an admin sees and changes it in Ajustes.
async fn open_demo_windows(store: &crate::Store) -> EngineResult<()> {
    use crate::sequences::window::{self, Window};
    let mut conn = store.pool().acquire().await?;
    for (name, _) in DEMO_WORKSPACES {
        let ids: Vec<String> = sqlx::query_scalar("select id from workspaces where name = $1")
            .bind(*name)
            .fetch_all(&mut *conn)
            .await?;
        for id in ids {
            window::store(&mut conn, &id, &Window::always(), None).await?;
        }
    }
    Ok(())
}

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

/// The demo logins that still accept [`DEMO_PASSWORD`] (their emails). The server
/// refuses to serve beyond loopback while any does (unless the demo is asked for).
pub async fn published_logins(store: &crate::Store) -> EngineResult<Vec<&'static str>> {
    let mut open = Vec::new();
    for (email, _, _, _) in DEMO_USERS {
        let hash: Option<String> =
            sqlx::query_scalar("select password_hash from users where email = $1")
                .bind(*email)
                .fetch_optional(store.pool())
                .await?;
        if hash.is_some() && crate::base::password::verify(DEMO_PASSWORD.to_owned(), hash).await? {
            open.push(*email);
        }
    }
    Ok(open)
}

/// The demo member whose note and suggested edit wait for the owner's review.
pub const DEMO_REVIEW_AUTHOR: &str = "ventas@demo.luna.mx";

/// Seeds Cerebro for the demo: the demo topics in every demo owner's workspace
/// (authored by the owner) and the review queue proposed by [`DEMO_REVIEW_AUTHOR`].
/// Idempotent (a second start adds nothing); demo logins that do not exist are
/// skipped. Returns how many topics and proposals it created.
pub async fn seed_knowledge(accounts: &Accounts, knowledge: &Knowledge) -> EngineResult<usize> {
    let mut created = 0;
    for (email, _, _, role) in DEMO_USERS {
        if *role != Role::Owner {
            continue;
        }
        if let Some(owner) = accounts.caller_for_email(email).await? {
            created += crate::knowledge::demo::seed(knowledge, &owner.workspace_id, &owner.user_id)
                .await?;
        }
    }
    if let Some(author) = accounts.caller_for_email(DEMO_REVIEW_AUTHOR).await? {
        created += crate::knowledge::demo::seed_review(knowledge, &author).await?;
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::store::Store;
    use crate::knowledge::{ProposalKind, TopicStatus};
    use luna_protocol::account::Plan;

    /// Two instances started at the same moment on one database (a deployment's
    /// rollout): both start, and the demo exists once.
    #[tokio::test]
    async fn instances_started_together_seed_the_demo_once() {
        let a = crate::Engine::from_store(Store::open_temp().await.unwrap());
        let b = crate::Engine::from_store(Store::open(a.store.url()).await.unwrap());
        let (sa, sb) = tokio::join!(seed_all(&a), seed_all(&b));
        let (sa, sb) = (sa.unwrap(), sb.unwrap());
        assert!(sa.logins != sb.logins, "one instance creates the logins");
        assert!(
            sa.market != sb.market,
            "one instance builds the market data"
        );
        assert_eq!(
            a.accounts.user_count().await.unwrap(),
            DEMO_USERS.len() as i64
        );
        let one: i64 = sqlx::query_scalar("select count(*) from mk_suppliers")
            .fetch_one(a.store.pool())
            .await
            .unwrap();
        // A third start adds nothing.
        assert_eq!(seed_all(&b).await.unwrap(), Seeded::default());
        let again: i64 = sqlx::query_scalar("select count(*) from mk_suppliers")
            .fetch_one(a.store.pool())
            .await
            .unwrap();
        assert!(one > 0 && one == again);
        // The demo workspaces send at any hour (the demo scene sends at once).
        let open: i64 = sqlx::query_scalar(
            "select count(*) from workspace_send_window where days = 127 and start_hour = 0 and end_hour = 24",
        )
        .fetch_one(a.store.pool())
        .await
        .unwrap();
        assert_eq!(open, DEMO_WORKSPACES.len() as i64);
    }

    #[tokio::test]
    async fn demo_knowledge_seeds_topics_and_a_review_queue_once() {
        let store = Store::open_temp().await.unwrap();
        let accounts = Accounts::new(store.clone());
        let knowledge = Knowledge::new(store);
        seed_if_empty(&accounts).await.unwrap();
        assert!(seed_knowledge(&accounts, &knowledge).await.unwrap() > 0);
        // A second start (the server run twice) duplicates nothing.
        assert_eq!(seed_knowledge(&accounts, &knowledge).await.unwrap(), 0);

        let owner = accounts
            .caller_for_email("duena@demo.luna.mx")
            .await
            .unwrap()
            .unwrap();
        let queue = knowledge.review_board(&owner).await.unwrap();
        let kinds: Vec<ProposalKind> = knowledge
            .pending(&owner)
            .await
            .unwrap()
            .iter()
            .map(|p| p.kind)
            .collect();
        assert_eq!(kinds, vec![ProposalKind::Note, ProposalKind::Edit]);
        let edit = &queue.pending[1];
        assert!(edit
            .diff
            .as_deref()
            .unwrap()
            .contains("+Tabla de precios de referencia 2026"));
        assert_eq!(edit.proposed_by, "Lucía Hernández");
        assert!(queue.recent.len() >= 4);

        // Once the owner resolves the note, restarting does not bring it back.
        knowledge.merge(&owner, &queue.pending[0].id).await.unwrap();
        assert_eq!(seed_knowledge(&accounts, &knowledge).await.unwrap(), 0);
        assert_eq!(knowledge.pending(&owner).await.unwrap().len(), 1);
        let merged = queue.pending[0].topic_ref.as_deref().unwrap();
        assert_eq!(
            knowledge.get(&owner, merged).await.unwrap().status,
            TopicStatus::Knowledge
        );
    }

    #[tokio::test]
    async fn published_logins_are_the_demo_users_with_the_published_password() {
        let store = crate::Store::open_temp().await.unwrap();
        assert!(published_logins(&store).await.unwrap().is_empty());
        seed_if_empty(&Accounts::new(store.clone())).await.unwrap();
        let hash = crate::base::password::hash("otra-contraseña".into())
            .await
            .unwrap();
        sqlx::query("update users set password_hash = $1 where email = 'admin@demo.luna.mx'")
            .bind(hash)
            .execute(store.pool())
            .await
            .unwrap();
        assert_eq!(
            published_logins(&store).await.unwrap(),
            [
                "duena@demo.luna.mx",
                "ventas@demo.luna.mx",
                "explorer@demo.luna.mx"
            ]
        );
    }

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
            .login(
                "ventas@demo.luna.mx",
                DEMO_PASSWORD,
                crate::accounts::ClientIp::LOCAL,
            )
            .await
            .unwrap();
        assert_eq!(member.role, Role::Member);
        assert_eq!(member.plan, Plan::Founder);
        let (_, explorer) = accounts
            .login(
                "explorer@demo.luna.mx",
                DEMO_PASSWORD,
                crate::accounts::ClientIp::LOCAL,
            )
            .await
            .unwrap();
        assert_eq!(explorer.plan, Plan::Explorer);
    }
}
