//! Limits on the events websockets (`events_ws`): how often a live socket re-checks
//! that its caller's browser session and membership still stand, how many sockets
//! one person may hold open at once on this instance, and how large a frame a client
//! may send.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use luna_engine::EngineError;
use luna_protocol::error::ErrorCode;

/// How often a live socket re-checks its caller's session token and membership. A
/// logout, an expired or revoked session, or a removal from the workspace closes the
/// socket at the latest this long after it happened.
pub const RECHECK_EVERY: Duration = Duration::from_secs(30);

/// Events sockets one person may hold open at once on one instance (a few tabs and
/// devices); the next upgrade is refused with `RATE_LIMITED`.
pub const MAX_SOCKETS_PER_USER: usize = 8;

/// The largest frame or message a client may send. Browsers send nothing on this
/// socket but close and pong frames (control frames carry at most 125 bytes), so a
/// larger one is abuse and closes the connection.
pub const MAX_INCOMING: usize = 4 * 1024;

/// The events sockets open on this instance, per user, and their limits. Cheap to
/// clone; clones share the counts.
#[derive(Clone, Debug)]
pub struct Sockets {
    /// How often a live socket re-checks its caller (tests shorten it).
    pub recheck_every: Duration,
    /// Sockets one user may hold open at once.
    pub max_per_user: usize,
    open: Arc<Mutex<HashMap<String, usize>>>,
}

impl Default for Sockets {
    fn default() -> Self {
        Sockets::new(RECHECK_EVERY)
    }
}

impl Sockets {
    /// The default limits, re-checking every `recheck_every`.
    pub fn new(recheck_every: Duration) -> Self {
        Sockets {
            recheck_every,
            max_per_user: MAX_SOCKETS_PER_USER,
            open: Arc::default(),
        }
    }

    /// Takes one of the user's socket slots, or fails with `RATE_LIMITED` when they
    /// all are in use. The slot is given back when the returned guard drops.
    pub fn acquire(&self, user_id: &str) -> Result<SocketSlot, EngineError> {
        let mut open = lock(&self.open);
        let count = open.entry(user_id.to_owned()).or_default();
        if *count >= self.max_per_user {
            return Err(EngineError::typed(
                ErrorCode::RateLimited,
                format!(
                    "Tienes demasiadas pestañas siguiendo sesiones en vivo (máximo {}).",
                    self.max_per_user
                ),
                "Cierra alguna pestaña o ventana de Luna y vuelve a intentar.",
            ));
        }
        *count += 1;
        Ok(SocketSlot {
            open: self.open.clone(),
            user_id: user_id.to_owned(),
        })
    }

    /// Sockets the user holds open now.
    pub fn open_for(&self, user_id: &str) -> usize {
        lock(&self.open).get(user_id).copied().unwrap_or(0)
    }
}

/// One open socket of a user; dropping it frees the slot.
#[derive(Debug)]
pub struct SocketSlot {
    open: Arc<Mutex<HashMap<String, usize>>>,
    user_id: String,
}

impl Drop for SocketSlot {
    fn drop(&mut self) {
        let mut open = lock(&self.open);
        if let Some(count) = open.get_mut(&self.user_id) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.user_id);
            }
        }
    }
}

/// The counts stay consistent under a poisoned lock (every update is one statement).
fn lock(open: &Mutex<HashMap<String, usize>>) -> MutexGuard<'_, HashMap<String, usize>> {
    open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_per_user_and_freed_on_drop() {
        let sockets = Sockets::default();
        let mut held: Vec<_> = (0..MAX_SOCKETS_PER_USER)
            .map(|_| sockets.acquire("usr_a").unwrap())
            .collect();
        let refused = sockets.acquire("usr_a").unwrap_err();
        assert_eq!(refused.code(), ErrorCode::RateLimited);
        // Another user is not affected.
        let _other = sockets.acquire("usr_b").unwrap();
        held.pop();
        assert_eq!(sockets.open_for("usr_a"), MAX_SOCKETS_PER_USER - 1);
        let _again = sockets.acquire("usr_a").unwrap();
        assert_eq!(sockets.open_for("usr_a"), MAX_SOCKETS_PER_USER);
    }
}
