//! Login throttling per client IP and per (client IP, email), claimed atomically in
//! the database before a password is verified.
//!
//! Every login attempt first claims one slot in two counters: the (IP, email) pair
//! (`MAX_FAILURES` in `THROTTLE_WINDOW_MS`) and the IP across every email
//! (`MAX_IP_FAILURES`). The claim is one `insert … on conflict do update … returning`,
//! so N parallel attempts get N distinct counts and at most the allowed number goes
//! on to argon2. A failed password keeps its slot; a successful login frees its slots
//! (the pair's counter starts over). Counters are per IP, so a stranger elsewhere
//! cannot lock a person out by knowing their email. Rows older than the window are
//! deleted by the next attempt.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use luna_protocol::error::{ErrorBody, ErrorCode};

use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;

/// Failed logins allowed per (client IP, email) inside `THROTTLE_WINDOW_MS`.
pub const MAX_FAILURES: i64 = 5;
/// Failed logins allowed per client IP across every email inside the window.
pub const MAX_IP_FAILURES: i64 = 50;
pub const THROTTLE_WINDOW_MS: i64 = 15 * 60 * 1000;

/// The address a login comes from, as throttling counts it: an IPv4 address, or the
/// /64 network of an IPv6 one (one host usually holds a whole /64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientIp(IpAddr);

impl ClientIp {
    /// This machine: in-process callers (tests, the demo, tools) that have no peer.
    pub const LOCAL: ClientIp = ClientIp(IpAddr::V4(Ipv4Addr::LOCALHOST));
    /// No address is known (a request without a peer address). All such share a bucket.
    pub const UNKNOWN: ClientIp = ClientIp(IpAddr::V4(Ipv4Addr::UNSPECIFIED));

    pub fn new(ip: IpAddr) -> ClientIp {
        match ip {
            IpAddr::V4(v4) => ClientIp(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientIp(IpAddr::V4(v4)),
                None => {
                    let s = v6.segments();
                    ClientIp(IpAddr::V6(Ipv6Addr::new(
                        s[0], s[1], s[2], s[3], 0, 0, 0, 0,
                    )))
                }
            },
        }
    }

    pub fn ip(&self) -> IpAddr {
        self.0
    }

    /// The text stored in `login_throttle.ip`.
    fn key(&self) -> String {
        match self.0 {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("{v6}/64"),
        }
    }
}

impl From<IpAddr> for ClientIp {
    fn from(ip: IpAddr) -> Self {
        ClientIp::new(ip)
    }
}

/// One attempt's claimed slots. Settle it with [`Claim::succeeded`] or
/// [`Claim::released`]; a failed password simply drops it (the slots stay counted).
#[derive(Debug)]
#[must_use = "a claim is settled on success or when the password was not checked"]
pub struct Claim {
    ip: String,
    email: String,
}

/// The per-IP counter's row has an empty email.
const ANY_EMAIL: &str = "";

/// Claims one attempt for `email` from `client`, or refuses with `TOO_MANY_ATTEMPTS`
/// (and a retry-after) when either counter is spent. Also deletes expired rows.
pub async fn claim(store: &Store, client: ClientIp, email: &str, now: i64) -> EngineResult<Claim> {
    let pool = store.pool();
    let expired = now - THROTTLE_WINDOW_MS;
    sqlx::query("delete from login_throttle where window_start <= $1")
        .bind(expired)
        .execute(pool)
        .await?;
    let ip = client.key();
    let (count, since) = bump(store, &ip, email, now, MAX_FAILURES).await?;
    if count > MAX_FAILURES {
        return Err(too_many(since, now));
    }
    let (count, since) = bump(store, &ip, ANY_EMAIL, now, MAX_IP_FAILURES).await?;
    if count > MAX_IP_FAILURES {
        // The pair's slot was not used: the password is never checked.
        unbump(store, &ip, email).await?;
        return Err(too_many(since, now));
    }
    Ok(Claim {
        ip,
        email: email.to_owned(),
    })
}

impl Claim {
    /// The password was right: the pair's counter starts over and the IP's slot is freed.
    pub async fn succeeded(self, store: &Store) -> EngineResult<()> {
        sqlx::query("delete from login_throttle where ip = $1 and email = $2")
            .bind(&self.ip)
            .bind(&self.email)
            .execute(store.pool())
            .await?;
        unbump(store, &self.ip, ANY_EMAIL).await
    }

    /// The password was not checked (the hash gate was busy, an internal error): both
    /// slots are given back.
    pub async fn released(self, store: &Store) -> EngineResult<()> {
        unbump(store, &self.ip, &self.email).await?;
        unbump(store, &self.ip, ANY_EMAIL).await
    }
}

/// Counts one attempt atomically; a window that ended starts over. A counter past
/// `limit` stays at `limit + 1`. Returns the count including this attempt and the
/// window's start.
async fn bump(
    store: &Store,
    ip: &str,
    email: &str,
    now: i64,
    limit: i64,
) -> EngineResult<(i64, i64)> {
    let row: (i64, i64) = sqlx::query_as(
        "insert into login_throttle (ip, email, window_start, attempts) values ($1, $2, $3, 1)
         on conflict (ip, email) do update set
           attempts = case
             when login_throttle.window_start <= $4 then 1
             when login_throttle.attempts > $5 then login_throttle.attempts
             else login_throttle.attempts + 1 end,
           window_start = case
             when login_throttle.window_start <= $4 then $3
             else login_throttle.window_start end
         returning attempts, window_start",
    )
    .bind(ip)
    .bind(email)
    .bind(now)
    .bind(now - THROTTLE_WINDOW_MS)
    .bind(limit)
    .fetch_one(store.pool())
    .await?;
    Ok(row)
}

/// Gives one slot back.
async fn unbump(store: &Store, ip: &str, email: &str) -> EngineResult<()> {
    sqlx::query(
        "update login_throttle set attempts = attempts - 1 where ip = $1 and email = $2 and attempts > 0",
    )
    .bind(ip)
    .bind(email)
    .execute(store.pool())
    .await?;
    Ok(())
}

fn too_many(since: i64, now: i64) -> EngineError {
    let retry_after_ms = (since + THROTTLE_WINDOW_MS - now).max(1000);
    let minutes = (retry_after_ms + 59_999) / 60_000;
    EngineError::Typed(
        ErrorBody::new(
            ErrorCode::TooManyAttempts,
            format!(
                "Demasiados intentos fallidos. Espera {minutes} min antes de volver a intentar."
            ),
            "Si olvidaste tu contraseña, pide a un administrador que la restablezca.",
        )
        .with_retry_after((retry_after_ms / 1000) as u64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::Accounts;
    use luna_protocol::account::{Plan, Role};

    const IP_A: ClientIp = ClientIp(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 5)));
    const IP_B: ClientIp = ClientIp(IpAddr::V4(Ipv4Addr::new(198, 51, 100, 7)));

    async fn accounts_with_user() -> (Accounts, Store) {
        let store = Store::open_temp().await.unwrap();
        let acc = Accounts::new(store.clone());
        let ws = acc.create_workspace("Prueba", Plan::Founder).await.unwrap();
        let user = acc
            .create_user("ana@example.mx", "Ana", "secreto-123")
            .await
            .unwrap();
        acc.add_member(&ws, &user, Role::Owner).await.unwrap();
        (acc, store)
    }

    async fn code(acc: &Accounts, password: &str, from: ClientIp) -> Option<ErrorCode> {
        acc.login("ana@example.mx", password, from)
            .await
            .err()
            .map(|e| e.code())
    }

    async fn counters(store: &Store) -> Vec<(String, String, i64)> {
        sqlx::query_as("select ip, email, attempts from login_throttle order by ip, email")
            .fetch_all(store.pool())
            .await
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn parallel_wrong_passwords_are_evaluated_at_most_max_failures_times() {
        let (acc, store) = accounts_with_user().await;
        let attempts: Vec<_> = (0..20)
            .map(|_| {
                let acc = acc.clone();
                tokio::spawn(async move { acc.login("ana@example.mx", "mal", IP_A).await })
            })
            .collect();
        let mut evaluated = 0;
        let mut throttled = 0;
        for attempt in attempts {
            match attempt.await.unwrap().unwrap_err().body() {
                b if b.code == ErrorCode::InvalidCredentials => evaluated += 1,
                b if b.code == ErrorCode::TooManyAttempts => {
                    assert!(b.retry_after.unwrap() > 0);
                    throttled += 1
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!((evaluated, throttled), (MAX_FAILURES, 20 - MAX_FAILURES));
        // Only the evaluated attempts count against the IP across emails.
        let ip_count = counters(&store)
            .await
            .into_iter()
            .find(|(_, email, _)| email.is_empty())
            .map(|(_, _, n)| n);
        assert_eq!(ip_count, Some(MAX_FAILURES));
    }

    #[tokio::test]
    async fn a_stranger_elsewhere_cannot_lock_the_owner_out() {
        let (acc, _) = accounts_with_user().await;
        for _ in 0..MAX_FAILURES {
            assert_eq!(
                code(&acc, "mal", IP_A).await,
                Some(ErrorCode::InvalidCredentials)
            );
        }
        // IP A is throttled for this email, even with the right password…
        assert_eq!(
            code(&acc, "secreto-123", IP_A).await,
            Some(ErrorCode::TooManyAttempts)
        );
        // …while the owner, from another address, logs in.
        assert_eq!(code(&acc, "secreto-123", IP_B).await, None);
        assert_eq!(
            code(&acc, "secreto-123", IP_A).await,
            Some(ErrorCode::TooManyAttempts)
        );
    }

    #[tokio::test]
    async fn one_address_trying_many_emails_is_capped_and_a_success_resets_its_pair() {
        let (acc, _) = accounts_with_user().await;
        // A success frees its slot: failures then a right password start the pair over.
        for _ in 0..MAX_FAILURES - 1 {
            code(&acc, "mal", IP_A).await;
        }
        assert_eq!(code(&acc, "secreto-123", IP_A).await, None);
        assert_eq!(
            code(&acc, "mal", IP_A).await,
            Some(ErrorCode::InvalidCredentials)
        );
        // Spraying other emails from IP B stops at the per-IP cap.
        let mut refused = 0;
        for i in 0..MAX_IP_FAILURES + 3 {
            let e = acc
                .login(&format!("nadie{i}@example.mx"), "mal", IP_B)
                .await
                .unwrap_err();
            if e.code() == ErrorCode::TooManyAttempts {
                refused += 1;
            }
        }
        assert_eq!(refused, 3);
        assert_eq!(
            code(&acc, "secreto-123", IP_B).await,
            Some(ErrorCode::TooManyAttempts)
        );
        assert_eq!(code(&acc, "secreto-123", IP_A).await, None);
    }

    #[tokio::test]
    async fn counters_older_than_the_window_are_deleted_and_forgiven() {
        let (acc, store) = accounts_with_user().await;
        for _ in 0..MAX_FAILURES {
            code(&acc, "mal", IP_A).await;
        }
        assert_eq!(
            code(&acc, "secreto-123", IP_A).await,
            Some(ErrorCode::TooManyAttempts)
        );
        // The window ends: move every counter back past it, plus a stray old pair.
        sqlx::query("update login_throttle set window_start = window_start - $1")
            .bind(THROTTLE_WINDOW_MS)
            .execute(store.pool())
            .await
            .unwrap();
        sqlx::query("insert into login_throttle (ip, email, window_start, attempts) values ('192.0.2.1', 'x@example.mx', 0, 3)")
            .execute(store.pool())
            .await
            .unwrap();
        assert_eq!(
            code(&acc, "mal", IP_B).await,
            Some(ErrorCode::InvalidCredentials)
        );
        let left = counters(&store).await;
        assert!(
            left.iter().all(|(ip, _, _)| ip == &IP_B.key()),
            "expired rows are gone: {left:?}"
        );
        assert_eq!(code(&acc, "secreto-123", IP_A).await, None);
    }

    #[test]
    fn ipv6_counts_by_its_64_network_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(ClientIp::new(a), ClientIp::new(b));
        assert_eq!(ClientIp::new(a).key(), "2001:db8:1:2::/64");
        let mapped: IpAddr = "::ffff:203.0.113.7".parse().unwrap();
        assert_eq!(ClientIp::new(mapped).key(), "203.0.113.7");
    }
}
