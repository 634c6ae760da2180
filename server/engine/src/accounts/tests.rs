//! Logins, sessions, throttling, roles and API keys of the accounts service.

use super::*;

async fn accounts_with_user() -> (Accounts, String) {
    let store = Store::open_temp().await.unwrap();
    let acc = Accounts::new(store);
    let ws = acc.create_workspace("Prueba", Plan::Founder).await.unwrap();
    let user = acc
        .create_user("Ana@Example.mx", "Ana", "secreto-123")
        .await
        .unwrap();
    acc.add_member(&ws, &user, Role::Member).await.unwrap();
    (acc, ws)
}

#[tokio::test]
async fn login_opens_a_session_that_resolves_to_the_caller() {
    let (acc, ws) = accounts_with_user().await;
    let (token, caller) = acc
        .login(" ana@example.mx ", "secreto-123", ClientIp::LOCAL)
        .await
        .unwrap();
    assert_eq!(caller.workspace_id, ws);
    assert_eq!(caller.role, Role::Member);
    let again = acc.session_caller(&token).await.unwrap().unwrap();
    assert_eq!(again, caller);
    acc.logout(&token).await.unwrap();
    assert!(acc.session_caller(&token).await.unwrap().is_none());
}

#[tokio::test]
async fn each_login_rotates_the_session_token() {
    let (acc, _) = accounts_with_user().await;
    let (a, _) = acc
        .login("ana@example.mx", "secreto-123", ClientIp::LOCAL)
        .await
        .unwrap();
    let (b, _) = acc
        .login("ana@example.mx", "secreto-123", ClientIp::LOCAL)
        .await
        .unwrap();
    assert_ne!(a, b);
}

#[tokio::test]
async fn wrong_password_and_unknown_email_fail_the_same_way() {
    let (acc, _) = accounts_with_user().await;
    let a = acc
        .login("ana@example.mx", "otra-cosa", ClientIp::LOCAL)
        .await
        .unwrap_err()
        .body();
    let b = acc
        .login("nadie@example.mx", "otra-cosa", ClientIp::LOCAL)
        .await
        .unwrap_err()
        .body();
    assert_eq!(a, b);
    assert_eq!(a.code, ErrorCode::InvalidCredentials);
    assert_eq!(a.message, BAD_CREDENTIALS_MESSAGE);
}

#[tokio::test]
async fn repeated_failures_throttle_even_the_right_password() {
    let (acc, _) = accounts_with_user().await;
    for _ in 0..MAX_FAILURES {
        let _ = acc.login("ana@example.mx", "mal", ClientIp::LOCAL).await;
    }
    let err = acc
        .login("ana@example.mx", "secreto-123", ClientIp::LOCAL)
        .await
        .unwrap_err()
        .body();
    assert_eq!(err.code, ErrorCode::TooManyAttempts);
    assert!(err.retry_after.unwrap() > 0);
}

#[tokio::test]
async fn admins_switch_members_roles_and_every_change_is_audited() {
    let (acc, ws) = accounts_with_user().await;
    let (_, member) = acc
        .login("ana@example.mx", "secreto-123", ClientIp::LOCAL)
        .await
        .unwrap();
    let owner_id = acc
        .create_user("duena@example.mx", "Dueña", "secreto-456")
        .await
        .unwrap();
    acc.add_member(&ws, &owner_id, Role::Owner).await.unwrap();
    let (_, owner) = acc
        .login("duena@example.mx", "secreto-456", ClientIp::LOCAL)
        .await
        .unwrap();
    // A member cannot change roles; an owner can, but not their own nor to owner.
    let e = acc
        .set_role(&member, &owner.user_id, Role::Member)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);
    let e = acc
        .set_role(&owner, &owner.user_id, Role::Admin)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);
    let e = acc
        .set_role(&owner, &member.user_id, Role::Owner)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    acc.set_role(&owner, &member.user_id, Role::Admin)
        .await
        .unwrap();
    let (_, promoted) = acc
        .login("ana@example.mx", "secreto-123", ClientIp::LOCAL)
        .await
        .unwrap();
    assert_eq!(promoted.role, Role::Admin);
    // The new admin cannot demote the owner.
    let e = acc
        .set_role(&promoted, &owner.user_id, Role::Member)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Forbidden);
    let e = acc
        .set_role(&owner, "usr_otro", Role::Admin)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    let audited: i64 =
        sqlx::query_scalar("select count(*) from audit_log where action = 'member.role'")
            .fetch_one(acc.store.pool())
            .await
            .unwrap();
    assert_eq!(audited, 1);
    let roles: Vec<Role> = acc
        .members(&owner)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.role)
        .collect();
    assert_eq!(roles, [Role::Owner, Role::Admin]);
}

#[tokio::test]
async fn api_keys_are_admin_only_scoped_and_revocable() {
    let (acc, ws) = accounts_with_user().await;
    let (_, member) = acc
        .login("ana@example.mx", "secreto-123", ClientIp::LOCAL)
        .await
        .unwrap();
    assert_eq!(
        acc.create_api_key(&member, &KeySpec::read_only("bot"))
            .await
            .unwrap_err()
            .code(),
        ErrorCode::Forbidden
    );

    let admin_id = acc
        .create_user("jefa@example.mx", "Jefa", "secreto-456")
        .await
        .unwrap();
    acc.add_member(&ws, &admin_id, Role::Admin).await.unwrap();
    let (_, admin) = acc
        .login("jefa@example.mx", "secreto-456", ClientIp::LOCAL)
        .await
        .unwrap();
    let key = acc
        .create_api_key(&admin, &KeySpec::read_only("agente"))
        .await
        .unwrap();
    let via_key = acc.api_key_caller(&key.secret).await.unwrap().unwrap();
    assert_eq!(via_key.workspace_id, ws);
    assert_eq!(via_key.api_key_id(), Some(key.id.as_str()));

    // Another workspace cannot revoke it: NOT_FOUND, not data.
    let other_ws = acc.create_workspace("Otra", Plan::Founder).await.unwrap();
    let other_id = acc
        .create_user("otro@example.mx", "Otro", "secreto-789")
        .await
        .unwrap();
    acc.add_member(&other_ws, &other_id, Role::Owner)
        .await
        .unwrap();
    let (_, other) = acc
        .login("otro@example.mx", "secreto-789", ClientIp::LOCAL)
        .await
        .unwrap();
    assert_eq!(
        acc.revoke_api_key(&other, &key.id)
            .await
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );

    acc.revoke_api_key(&admin, &key.id).await.unwrap();
    assert!(acc.api_key_caller(&key.secret).await.unwrap().is_none());
}
