//! Password hashing and verification (argon2id) on the blocking pool, behind a gate:
//! at most one hash per core runs at a time, and a caller that cannot get a turn
//! within a short wait is refused with `RATE_LIMITED` instead of queueing, so a flood
//! of logins or sign-ups cannot pile up unbounded argon2 work.

use std::sync::OnceLock;
use std::time::Duration;

use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use luna_protocol::error::{ErrorBody, ErrorCode};
use tokio::sync::Semaphore;

use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::random_token;

/// How long a hash waits for a free core before it is refused.
pub const GATE_WAIT: Duration = Duration::from_secs(5);

/// A bounded number of concurrent argon2 computations with a bounded wait.
#[derive(Debug)]
pub struct HashGate {
    permits: Semaphore,
    wait: Duration,
}

impl HashGate {
    pub fn new(permits: usize, wait: Duration) -> Self {
        HashGate {
            permits: Semaphore::new(permits.max(1)),
            wait,
        }
    }

    /// Runs `work` on the blocking pool once a permit is free; `RATE_LIMITED` if none
    /// frees up within the gate's wait.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> EngineResult<T> + Send + 'static,
    ) -> EngineResult<T> {
        let permit = match tokio::time::timeout(self.wait, self.permits.acquire()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(closed)) => return Err(EngineError::internal(closed)),
            Err(_) => return Err(busy()),
        };
        let done = tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| EngineError::Internal(format!("join: {e}")))?;
        drop(permit);
        done
    }
}

/// The refusal when every core is busy hashing.
fn busy() -> EngineError {
    EngineError::Typed(
        ErrorBody::new(
            ErrorCode::RateLimited,
            "El servidor está ocupado verificando contraseñas. Intenta de nuevo en unos segundos.",
            "Espera unos segundos y vuelve a intentarlo.",
        )
        .with_retry_after(2),
    )
}

/// The process-wide gate: one permit per core.
fn gate() -> &'static HashGate {
    static GATE: OnceLock<HashGate> = OnceLock::new();
    GATE.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        HashGate::new(cores, GATE_WAIT)
    })
}

/// Hashes a password with argon2id (deliberately slow), through the gate.
pub async fn hash(password: String) -> EngineResult<String> {
    gate()
        .run(move || {
            let salt = SaltString::generate(&mut OsRng);
            Argon2::default()
                .hash_password(password.as_bytes(), &salt)
                .map(|h| h.to_string())
                .map_err(|e| EngineError::Internal(format!("argon2: {e}")))
        })
        .await
}

/// Verifies through the gate. With no stored hash (unknown email) it verifies against
/// a throwaway hash so both failures cost the same time.
pub async fn verify(password: String, hash: Option<String>) -> EngineResult<bool> {
    gate()
        .run(move || {
            let known = hash.is_some();
            let hash = match hash {
                Some(h) => h,
                None => DUMMY_HASH
                    .get_or_init(|| {
                        let salt = SaltString::generate(&mut OsRng);
                        Argon2::default()
                            .hash_password(random_token(16).as_bytes(), &salt)
                            .map(|h| h.to_string())
                            .unwrap_or_default()
                    })
                    .clone(),
            };
            let parsed = PasswordHash::new(&hash)
                .map_err(|e| EngineError::Internal(format!("argon2: {e}")))?;
            Ok(Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
                && known)
        })
        .await
}

/// argon2id hash of a random string nobody knows; verified against when the email is unknown.
static DUMMY_HASH: OnceLock<String> = OnceLock::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_saturated_gate_refuses_after_its_wait_instead_of_queueing() {
        let gate = std::sync::Arc::new(HashGate::new(1, Duration::from_millis(100)));
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let holder = {
            let gate = gate.clone();
            tokio::spawn(async move {
                gate.run(move || {
                    let _ = started_tx.send(());
                    let _ = release_rx.recv();
                    Ok(())
                })
                .await
            })
        };
        started_rx.await.unwrap();
        let refused = tokio::time::timeout(Duration::from_secs(5), gate.run(|| Ok(())))
            .await
            .expect("the gate answers within its wait, it does not queue");
        let body = refused.unwrap_err().body();
        assert_eq!(body.code, ErrorCode::RateLimited);
        assert!(body.retry_after.is_some());
        // Once the permit is free the next hash runs.
        release_tx.send(()).unwrap();
        holder.await.unwrap().unwrap();
        assert_eq!(gate.run(|| Ok(7)).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let h = hash("secreto-123".into()).await.unwrap();
        assert!(verify("secreto-123".into(), Some(h.clone())).await.unwrap());
        assert!(!verify("otra".into(), Some(h)).await.unwrap());
        assert!(!verify("secreto-123".into(), None).await.unwrap());
    }
}
